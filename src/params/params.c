/*
 * The machine parameter file: load, check and save (docs/PARAMETERS.md is
 * the contract, params.h the C side). Every refusal names the file and the
 * field, e.g.
 *   "params.json: p2p.intra.pieces[1].max_bytes: 4096 is not above the previous piece's 4096"
 *   "params.json: shm.copy_in.per_byte: missing"
 *   "params.json: malformed JSON: line 12, column 5: expected ',' or '}' after an object member"
 */
#include "params/params.h"

#include "kport.h"
#include "util/error.h"
#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the largest file we read: a parameter file is a few KB */
#define KP_PARAMS_MAX_FILE (16 * 1024 * 1024)

typedef struct ctx {
    const char *file; /* NULL: no file (kp_params_check) */
    char *err;
    int errlen;
} ctx;

static int refuse(const ctx *c, const char *field, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(const ctx *c, const char *field, const char *fmt, ...)
{
    if (!c->err || c->errlen <= 0)
        return KP_ERR_PARAM;
    int n = 0;
    c->err[0] = '\0';
    if (c->file)
        kp_err_append(c->err, c->errlen, &n, "%s: ", c->file);
    if (field)
        kp_err_append(c->err, c->errlen, &n, "%s: ", field);
    va_list ap;
    va_start(ap, fmt);
    kp_err_vappend(c->err, c->errlen, &n, fmt, ap);
    va_end(ap);
    return KP_ERR_PARAM;
}

/* ---- check ------------------------------------------------------------- */

static int check_cost(const ctx *c, const char *field, double v)
{
    if (!isfinite(v))
        return refuse(c, field, "not a finite number");
    if (v < 0)
        return refuse(c, field, "%g is negative", v);
    return KP_SUCCESS;
}

/* a measured exchange's fixed and per-byte parts (X, XG or X2, X2G) of
 * piece i: costs, finite and >= 0 */
static int check_pair(const ctx *c, const char *name, int i, const char *a, double va, const char *b, double vb)
{
    char f[96];
    int rc;
    snprintf(f, sizeof f, "p2p.%s.pieces[%d].%s", name, i, a);
    if ((rc = check_cost(c, f, va)))
        return rc;
    snprintf(f, sizeof f, "p2p.%s.pieces[%d].%s", name, i, b);
    return check_cost(c, f, vb);
}

static int check_channel(const ctx *c, const char *name, const kp_channel *ch)
{
    char f[96];
    if (ch->npieces < 1 || ch->npieces > KP_MAX_PIECES) {
        snprintf(f, sizeof f, "p2p.%s.pieces", name);
        return refuse(c, f, "%d pieces, expected 1 to %d", ch->npieces, KP_MAX_PIECES);
    }
    for (int i = 0; i < ch->npieces; i++) {
        const kp_loggp *p = &ch->piece[i];
        int last = i == ch->npieces - 1;
        snprintf(f, sizeof f, "p2p.%s.pieces[%d].max_bytes", name, i);
        if (last && p->max_bytes != -1)
            return refuse(c, f, "%lld in the last piece, which must be -1 (no limit)", (long long)p->max_bytes);
        if (!last && p->max_bytes == -1)
            return refuse(c, f, "-1 (no limit) before the last piece");
        if (!last && p->max_bytes < 0)
            return refuse(c, f, "%lld is negative", (long long)p->max_bytes);
        if (!last && i > 0 && p->max_bytes <= ch->piece[i - 1].max_bytes)
            return refuse(c, f, "%lld is not above the previous piece's %lld (pieces out of order)",
                          (long long)p->max_bytes, (long long)ch->piece[i - 1].max_bytes);
        const char *names[6] = {"L", "o_s", "o_r", "g", "G", "O"};
        const double vals[6] = {p->L, p->o_s, p->o_r, p->g, p->G, p->O};
        for (int k = 0; k < 6; k++) {
            snprintf(f, sizeof f, "p2p.%s.pieces[%d].%s", name, i, names[k]);
            int rc = k == 0 && isfinite(p->L) && p->L < 0 ? KP_SUCCESS : check_cost(c, f, vals[k]);
            if (rc)
                return rc;
        }
        int rc;
        if (p->has_x && (rc = check_pair(c, name, i, "X", p->X, "XG", p->XG)))
            return rc;
        if (p->has_x2) {
            snprintf(f, sizeof f, "p2p.%s.pieces[%d].X2", name, i);
            if (!p->has_x)
                return refuse(c, f, "needs X and XG (a further exchange is priced only where the first one is)");
            if ((rc = check_pair(c, name, i, "X2", p->X2, "X2G", p->X2G)))
                return rc;
        }
        /* L may be negative (overheads that overlap the transfer), never
         * below -(o_s + o_r): one message's time o_s + L + o_r is >= 0 */
        snprintf(f, sizeof f, "p2p.%s.pieces[%d].L", name, i);
        if (p->L < -(p->o_s + p->o_r))
            return refuse(c, f, "%g is below -(o_s + o_r) = %g (a message would take negative time)", p->L,
                          -(p->o_s + p->o_r));
    }
    return KP_SUCCESS;
}

static int check_eager(const ctx *c, const char *name, const kp_channel *ch)
{
    char f[96];
    snprintf(f, sizeof f, "p2p.%s.eager_max", name);
    if (ch->eager_max < -1 && ch->eager_max != KP_EAGER_FIRST_PIECE)
        return refuse(c, f, "%lld: expected -1 (every message eager) or a size in bytes", (long long)ch->eager_max);
    return KP_SUCCESS;
}

static int check_linear(const ctx *c, const char *group, const char *name, const char *a, const char *b,
                        const kp_linear *l)
{
    char f[96];
    snprintf(f, sizeof f, "%s.%s.%s", group, name, a);
    int rc = check_cost(c, f, l->fixed);
    if (rc)
        return rc;
    snprintf(f, sizeof f, "%s.%s.%s", group, name, b);
    if ((rc = check_cost(c, f, l->per_byte)))
        return rc;
    snprintf(f, sizeof f, "%s.%s.large_from", group, name);
    if (l->large_from < 0)
        return refuse(c, f, "%lld is negative", (long long)l->large_from);
    snprintf(f, sizeof f, "%s.%s.large_per_byte", group, name);
    return check_cost(c, f, l->large_per_byte);
}

double kp_linear_cost(const kp_linear *l, int64_t bytes)
{
    if (l->large_from > 0 && bytes > l->large_from)
        return l->fixed + l->per_byte * (double)l->large_from + l->large_per_byte * (double)(bytes - l->large_from);
    return l->fixed + l->per_byte * (double)bytes;
}

static int check_ctx(const ctx *c, const kp_machine *m)
{
    int rc;
    if (m->version != KP_PARAMS_VERSION)
        return refuse(c, "kport_params", "version %d, this reader knows version %d", m->version, KP_PARAMS_VERSION);
    if (m->cores < 0)
        return refuse(c, "machine.cores", "%d is negative", m->cores);
    if ((rc = check_channel(c, "intra", &m->intra)) || (rc = check_channel(c, "inter", &m->inter)) ||
        (rc = check_eager(c, "intra", &m->intra)) || (rc = check_eager(c, "inter", &m->inter)))
        return rc;
    if ((rc = check_cost(c, "call.fixed", m->call.fixed)) || (rc = check_cost(c, "call.skew", m->call.skew)))
        return rc;
    if ((rc = check_cost(c, "shm.data_line.fixed", m->data_line)))
        return rc;
    if ((rc = check_linear(c, "shm", "flag", "fixed", "per_byte", &m->flag)) ||
        (rc = check_linear(c, "shm", "copy_in", "fixed", "per_byte", &m->copy_in)) ||
        (rc = check_linear(c, "shm", "copy_out", "fixed", "per_byte", &m->copy_out)) ||
        (rc = check_linear(c, "shm", "memcpy", "fixed", "per_byte", &m->memcpy_)) ||
        (rc = check_linear(c, "shm", "peer_read", "fixed", "per_byte", &m->peer_read)) ||
        (rc = check_linear(c, "shm", "peer_write", "fixed", "per_byte", &m->peer_write)) ||
        (rc = check_linear(c, "hockney", "intra", "alpha", "beta", &m->hockney_intra)) ||
        (rc = check_linear(c, "hockney", "inter", "alpha", "beta", &m->hockney_inter)) ||
        (rc = check_linear(c, "compute", "reduce", "fixed", "per_byte", &m->reduce)))
        return rc;
    return KP_SUCCESS;
}

kp_linear kp_params_reduce_default(const kp_machine *m)
{
    kp_linear l = m->memcpy_;
    l.per_byte *= KP_REDUCE_DEFAULT_SCALE;
    l.large_per_byte *= KP_REDUCE_DEFAULT_SCALE;
    return l;
}

int kp_params_check(const kp_machine *m, char *err, int errlen)
{
    ctx c = {NULL, err, errlen};
    if (err && errlen > 0)
        err[0] = '\0';
    if (!m)
        return refuse(&c, NULL, "no machine description (NULL)");
    return check_ctx(&c, m);
}

void kp_params_init(kp_machine *m)
{
    memset(m, 0, sizeof *m);
    m->version = KP_PARAMS_VERSION;
    m->intra.npieces = m->inter.npieces = 1;
    m->intra.piece[0].max_bytes = m->inter.piece[0].max_bytes = -1;
    m->intra.eager_max = m->inter.eager_max = KP_EAGER_FIRST_PIECE;
}

int64_t kp_channel_eager_max(const kp_channel *ch)
{
    if (ch->eager_max != KP_EAGER_FIRST_PIECE)
        return ch->eager_max;
    return ch->npieces > 1 ? ch->piece[0].max_bytes : -1;
}

int kp_params_has_exchange(const kp_machine *m)
{
    for (int i = 0; i < 2; i++) {
        const kp_channel *ch = i ? &m->inter : &m->intra;
        for (int k = 0; k < ch->npieces && k < KP_MAX_PIECES; k++)
            if (ch->piece[k].has_x)
                return 1;
    }
    return 0;
}

const kp_loggp *kp_channel_piece(const kp_channel *ch, int64_t bytes)
{
    if (!ch || ch->npieces < 1)
        return NULL;
    for (int i = 0; i < ch->npieces; i++)
        if (ch->piece[i].max_bytes == -1 || bytes <= ch->piece[i].max_bytes)
            return &ch->piece[i];
    return &ch->piece[ch->npieces - 1];
}

/* ---- load -------------------------------------------------------------- */

static const kp_json *member(const ctx *c, const kp_json *obj, const char *path, const char *key, int type,
                             int required, int *rc)
{
    char f[128];
    snprintf(f, sizeof f, "%s%s%s", path, *path ? "." : "", key);
    const kp_json *v = kp_json_get(obj, key);
    if (!v) {
        if (required)
            *rc = refuse(c, f, "missing");
        return NULL;
    }
    if (v->type != type) {
        *rc = refuse(c, f, "is %s (line %d), expected %s", kp_json_type_name(v->type), v->line,
                     kp_json_type_name(type));
        return NULL;
    }
    return v;
}

static int get_number(const ctx *c, const kp_json *obj, const char *path, const char *key, double *out)
{
    int rc = KP_SUCCESS;
    const kp_json *v = member(c, obj, path, key, KP_JSON_NUMBER, 1, &rc);
    if (v)
        *out = v->number;
    return rc;
}

static int get_string(const ctx *c, const kp_json *obj, const char *path, const char *key, char *out, size_t cap)
{
    int rc = KP_SUCCESS;
    const kp_json *v = member(c, obj, path, key, KP_JSON_STRING, 0, &rc);
    if (!v)
        return rc;
    if (strlen(v->string) >= cap)
        return refuse(c, path, "%s: longer than %zu characters", key, cap - 1);
    strcpy(out, v->string);
    return KP_SUCCESS;
}

static int get_integer(const ctx *c, const kp_json *obj, const char *path, const char *key, int required,
                       int64_t lo, int64_t hi, int64_t *out)
{
    int rc = KP_SUCCESS;
    const kp_json *v = member(c, obj, path, key, KP_JSON_NUMBER, required, &rc);
    if (!v)
        return rc;
    char f[128];
    snprintf(f, sizeof f, "%s%s%s", path, *path ? "." : "", key);
    if (!v->integral || v->number < (double)lo || v->number > (double)hi)
        return refuse(c, f, "%g is not an integer from %lld to %lld", v->number, (long long)lo, (long long)hi);
    *out = (int64_t)v->number;
    return KP_SUCCESS;
}

/* optional fields a and b of the piece pc, both or neither: *has, *va, *vb
 * (0 when absent) */
static int load_pair(const ctx *c, const kp_json *pc, const char *f, const char *a, const char *b, double *va,
                     double *vb, int *has)
{
    int rc;
    *has = 0;
    *va = *vb = 0;
    if (!kp_json_get(pc, a) && !kp_json_get(pc, b))
        return KP_SUCCESS;
    if ((rc = get_number(c, pc, f, a, va)) || (rc = get_number(c, pc, f, b, vb)))
        return rc;
    *has = 1;
    return KP_SUCCESS;
}

static int load_channel(const ctx *c, const kp_json *p2p, const char *name, kp_channel *ch)
{
    int rc = KP_SUCCESS;
    char path[64], f[96];
    const kp_json *o = member(c, p2p, "p2p", name, KP_JSON_OBJECT, 1, &rc);
    if (!o)
        return rc;
    snprintf(path, sizeof path, "p2p.%s", name);
    const kp_json *arr = member(c, o, path, "pieces", KP_JSON_ARRAY, 1, &rc);
    if (!arr)
        return rc;
    snprintf(f, sizeof f, "p2p.%s.pieces", name);
    if (arr->n < 1 || arr->n > KP_MAX_PIECES)
        return refuse(c, f, "%d pieces, expected 1 to %d", arr->n, KP_MAX_PIECES);
    ch->npieces = arr->n;
    ch->eager_max = KP_EAGER_FIRST_PIECE;
    if (kp_json_get(o, "eager_max") &&
        (rc = get_integer(c, o, path, "eager_max", 1, -1, INT64_C(1) << 53, &ch->eager_max)))
        return rc;
    for (int i = 0; i < arr->n; i++) {
        const kp_json *pc = arr->item[i];
        kp_loggp *p = &ch->piece[i];
        snprintf(f, sizeof f, "p2p.%s.pieces[%d]", name, i);
        if (pc->type != KP_JSON_OBJECT)
            return refuse(c, f, "is %s (line %d), expected an object", kp_json_type_name(pc->type), pc->line);
        if ((rc = get_integer(c, pc, f, "max_bytes", 1, -1, INT64_C(1) << 53, &p->max_bytes)) ||
            (rc = get_number(c, pc, f, "L", &p->L)) || (rc = get_number(c, pc, f, "o_s", &p->o_s)) ||
            (rc = get_number(c, pc, f, "o_r", &p->o_r)) || (rc = get_number(c, pc, f, "g", &p->g)) ||
            (rc = get_number(c, pc, f, "G", &p->G)) || (rc = get_number(c, pc, f, "O", &p->O)))
            return rc;
        /* the exchange's time: both fields or neither; a further exchange
         * with the same peer at once likewise, and only with X, XG */
        if ((rc = load_pair(c, pc, f, "X", "XG", &p->X, &p->XG, &p->has_x)) ||
            (rc = load_pair(c, pc, f, "X2", "X2G", &p->X2, &p->X2G, &p->has_x2)))
            return rc;
        if (p->has_x2 && !p->has_x)
            return refuse(c, f, "has X2 and X2G without X and XG (line %d)", pc->line);
    }
    return KP_SUCCESS;
}

static int load_linear(const ctx *c, const kp_json *group, const char *gname, const char *name, const char *a,
                       const char *b, int b_required, kp_linear *l)
{
    int rc = KP_SUCCESS;
    char path[64];
    const kp_json *o = member(c, group, gname, name, KP_JSON_OBJECT, 1, &rc);
    if (!o)
        return rc;
    snprintf(path, sizeof path, "%s.%s", gname, name);
    if ((rc = get_number(c, o, path, a, &l->fixed)))
        return rc;
    l->per_byte = 0;
    if (b_required || kp_json_get(o, b))
        rc = get_number(c, o, path, b, &l->per_byte);
    /* optional second slope: both fields or neither */
    l->large_from = 0;
    l->large_per_byte = 0;
    if (!rc && (kp_json_get(o, "large_from") || kp_json_get(o, "large_per_byte"))) {
        if (!(rc = get_integer(c, o, path, "large_from", 1, 1, INT64_C(1) << 53, &l->large_from)))
            rc = get_number(c, o, path, "large_per_byte", &l->large_per_byte);
    }
    return rc;
}

static int load_tree(const ctx *c, const kp_json *root, kp_machine *m)
{
    int rc = KP_SUCCESS;
    if (root->type != KP_JSON_OBJECT)
        return refuse(c, NULL, "the file holds %s, expected an object {\"kport_params\": 1, ...}",
                      kp_json_type_name(root->type));
    int64_t v = 0;
    if (!kp_json_get(root, "kport_params"))
        return refuse(c, "kport_params", "missing (is this a kport parameter file?)");
    if ((rc = get_integer(c, root, "", "kport_params", 1, INT32_MIN, INT32_MAX, &v)))
        return rc;
    m->version = (int)v;
    if (m->version != KP_PARAMS_VERSION)
        return refuse(c, "kport_params", "version %d, this reader knows version %d", m->version, KP_PARAMS_VERSION);

    const kp_json *mach = member(c, root, "", "machine", KP_JSON_OBJECT, 0, &rc);
    if (rc)
        return rc;
    if (mach) {
        if ((rc = get_string(c, mach, "machine", "host", m->host, sizeof m->host)) ||
            (rc = get_string(c, mach, "machine", "cpu", m->cpu, sizeof m->cpu)) ||
            (rc = get_string(c, mach, "machine", "mpi", m->mpi, sizeof m->mpi)) ||
            (rc = get_string(c, mach, "machine", "date", m->date, sizeof m->date)) ||
            (rc = get_string(c, mach, "machine", "command", m->command, sizeof m->command)))
            return rc;
        if (kp_json_get(mach, "cores")) {
            if ((rc = get_integer(c, mach, "machine", "cores", 1, 0, INT32_MAX, &v)))
                return rc;
            m->cores = (int)v;
        }
    }
    const kp_json *p2p = member(c, root, "", "p2p", KP_JSON_OBJECT, 1, &rc);
    if (!p2p)
        return rc;
    if ((rc = load_channel(c, p2p, "intra", &m->intra)) || (rc = load_channel(c, p2p, "inter", &m->inter)))
        return rc;
    const kp_json *shm = member(c, root, "", "shm", KP_JSON_OBJECT, 1, &rc);
    if (!shm)
        return rc;
    if ((rc = load_linear(c, shm, "shm", "flag", "fixed", "per_byte", 0, &m->flag)) ||
        (rc = load_linear(c, shm, "shm", "copy_in", "fixed", "per_byte", 1, &m->copy_in)) ||
        (rc = load_linear(c, shm, "shm", "copy_out", "fixed", "per_byte", 1, &m->copy_out)) ||
        (rc = load_linear(c, shm, "shm", "memcpy", "fixed", "per_byte", 1, &m->memcpy_)) ||
        (rc = load_linear(c, shm, "shm", "peer_read", "fixed", "per_byte", 1, &m->peer_read)) ||
        (rc = load_linear(c, shm, "shm", "peer_write", "fixed", "per_byte", 1, &m->peer_write)))
        return rc;
    m->data_line = 0;
    if (kp_json_get(shm, "data_line")) {
        kp_linear dl;
        if ((rc = load_linear(c, shm, "shm", "data_line", "fixed", "per_byte", 0, &dl)))
            return rc;
        if (dl.per_byte != 0 || dl.large_from != 0)
            return refuse(c, "shm.data_line", "a fixed cost only (per_byte 0, no second slope)");
        m->data_line = dl.fixed;
    }
    const kp_json *hk = member(c, root, "", "hockney", KP_JSON_OBJECT, 1, &rc);
    if (!hk)
        return rc;
    if ((rc = load_linear(c, hk, "hockney", "intra", "alpha", "beta", 1, &m->hockney_intra)) ||
        (rc = load_linear(c, hk, "hockney", "inter", "alpha", "beta", 1, &m->hockney_inter)))
        return rc;
    const kp_json *call = member(c, root, "", "call", KP_JSON_OBJECT, 0, &rc);
    if (rc)
        return rc;
    const char *cn[2] = {"fixed", "skew"};
    double *cv[2] = {&m->call.fixed, &m->call.skew};
    for (int k = 0; call && k < 2; k++)
        if (kp_json_get(call, cn[k]) && (rc = get_number(c, call, "call", cn[k], cv[k])))
            return rc;
    /* compute (optional): the combine's cost; absent, the documented default */
    const kp_json *comp = member(c, root, "", "compute", KP_JSON_OBJECT, 0, &rc);
    if (rc)
        return rc;
    m->reduce_given = comp && kp_json_get(comp, "reduce");
    if (m->reduce_given && (rc = load_linear(c, comp, "compute", "reduce", "fixed", "per_byte", 1, &m->reduce)))
        return rc;
    if (!m->reduce_given)
        m->reduce = kp_params_reduce_default(m);
    m->reduce_kernel[0] = '\0';
    if (comp && (rc = get_string(c, comp, "compute", "kernel", m->reduce_kernel, sizeof m->reduce_kernel)))
        return rc;
    return check_ctx(c, m);
}

int kp_params_load(const char *path, kp_machine *m, char *err, int errlen)
{
    ctx c = {path ? path : "(null)", err, errlen};
    if (err && errlen > 0)
        err[0] = '\0';
    if (!path || !m)
        return refuse(&c, NULL, "no file or no machine to fill (NULL)");
    char *text;
    size_t n;
    switch (kp_json_read_file(path, KP_PARAMS_MAX_FILE, &text, &n)) {
    case KP_READ_OPEN:
        return refuse(&c, NULL, "cannot open: %s", strerror(errno));
    case KP_READ_IO:
        return refuse(&c, NULL, "cannot read: %s", strerror(errno));
    case KP_READ_NOMEM:
        return refuse(&c, NULL, "out of memory reading it");
    case KP_READ_BIG:
        return refuse(&c, NULL, "larger than %d bytes: not a parameter file", KP_PARAMS_MAX_FILE);
    }
    char jerr[256];
    kp_json *root = kp_json_parse(text, n, jerr, sizeof jerr);
    free(text);
    if (!root)
        return refuse(&c, NULL, "malformed JSON: %s", jerr);
    kp_machine tmp;
    kp_params_init(&tmp);
    int rc = load_tree(&c, root, &tmp);
    kp_json_free(root);
    if (!rc)
        *m = tmp;
    return rc;
}

/* ---- save -------------------------------------------------------------- */

/* the shortest %g form that reads back as exactly x */
static void fmt_num(char *out, size_t cap, double x)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(out, cap, "%.*g", prec, x);
        if (strtod(out, NULL) == x)
            break;
    }
    /* JSON has no "inf"; check refuses non-finite values before we get here */
}

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

static void put_linear(FILE *f, const char *name, const char *a, const char *b, const kp_linear *l, int last)
{
    char x[40], y[40];
    fmt_num(x, sizeof x, l->fixed);
    fmt_num(y, sizeof y, l->per_byte);
    fprintf(f, "    \"%s\": {\"%s\": %s, \"%s\": %s", name, a, x, b, y);
    if (l->large_from > 0) {
        char z[40];
        fmt_num(z, sizeof z, l->large_per_byte);
        fprintf(f, ", \"large_from\": %lld, \"large_per_byte\": %s", (long long)l->large_from, z);
    }
    fprintf(f, "}%s\n", last ? "" : ",");
}

/* , "a": va, "b": vb */
static void put_pair(FILE *f, const char *a, double va, const char *b, double vb)
{
    char x[2][40];
    fmt_num(x[0], sizeof x[0], va);
    fmt_num(x[1], sizeof x[1], vb);
    fprintf(f, ", \"%s\": %s, \"%s\": %s", a, x[0], b, x[1]);
}

static void put_channel(FILE *f, const char *name, const kp_channel *ch, int last)
{
    fprintf(f, "    \"%s\": {\n      \"pieces\": [\n", name);
    for (int i = 0; i < ch->npieces; i++) {
        const kp_loggp *p = &ch->piece[i];
        char v[6][40];
        const double vals[6] = {p->L, p->o_s, p->o_r, p->g, p->G, p->O};
        for (int k = 0; k < 6; k++)
            fmt_num(v[k], sizeof v[k], vals[k]);
        fprintf(f, "        {\"max_bytes\": %lld, \"L\": %s, \"o_s\": %s, \"o_r\": %s, \"g\": %s, \"G\": %s, \"O\": %s",
                (long long)p->max_bytes, v[0], v[1], v[2], v[3], v[4], v[5]);
        if (p->has_x)
            put_pair(f, "X", p->X, "XG", p->XG);
        if (p->has_x2)
            put_pair(f, "X2", p->X2, "X2G", p->X2G);
        fprintf(f, "}%s\n", i == ch->npieces - 1 ? "" : ",");
    }
    fprintf(f, "      ]");
    if (ch->eager_max != KP_EAGER_FIRST_PIECE)
        fprintf(f, ",\n      \"eager_max\": %lld", (long long)ch->eager_max);
    fprintf(f, "\n    }%s\n", last ? "" : ",");
}

int kp_params_save(const char *path, const kp_machine *m)
{
    if (!path || !m) {
        errno = EINVAL;
        return KP_ERR_ARG;
    }
    if (kp_params_check(m, NULL, 0) != KP_SUCCESS)
        return KP_ERR_PARAM;
    int to_stdout = !strcmp(path, "-");
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f)
        return KP_ERR_ARG;
    fprintf(f, "{\n  \"kport_params\": %d,\n  \"machine\": {\n    \"host\": ", m->version);
    put_string(f, m->host);
    fputs(", \"cpu\": ", f);
    put_string(f, m->cpu);
    fprintf(f, ", \"cores\": %d,\n    \"mpi\": ", m->cores);
    put_string(f, m->mpi);
    fputs(", \"date\": ", f);
    put_string(f, m->date);
    fputs(",\n    \"command\": ", f);
    put_string(f, m->command);
    fputs("\n  },\n  \"p2p\": {\n", f);
    put_channel(f, "intra", &m->intra, 0);
    put_channel(f, "inter", &m->inter, 1);
    fputs("  },\n  \"shm\": {\n", f);
    put_linear(f, "flag", "fixed", "per_byte", &m->flag, 0);
    put_linear(f, "copy_in", "fixed", "per_byte", &m->copy_in, 0);
    put_linear(f, "copy_out", "fixed", "per_byte", &m->copy_out, 0);
    put_linear(f, "memcpy", "fixed", "per_byte", &m->memcpy_, 0);
    put_linear(f, "peer_read", "fixed", "per_byte", &m->peer_read, 0);
    put_linear(f, "peer_write", "fixed", "per_byte", &m->peer_write, m->data_line == 0);
    if (m->data_line != 0) {
        const kp_linear dl = {.fixed = m->data_line};
        put_linear(f, "data_line", "fixed", "per_byte", &dl, 1);
    }
    fputs("  },\n  \"hockney\": {\n", f);
    put_linear(f, "intra", "alpha", "beta", &m->hockney_intra, 0);
    put_linear(f, "inter", "alpha", "beta", &m->hockney_inter, 1);
    char cv[2][40];
    fmt_num(cv[0], sizeof cv[0], m->call.fixed);
    fmt_num(cv[1], sizeof cv[1], m->call.skew);
    fprintf(f, "  },\n  \"call\": {\"fixed\": %s, \"skew\": %s}", cv[0], cv[1]);
    const kp_linear dflt = kp_params_reduce_default(m);
    if (m->reduce_given || memcmp(&m->reduce, &dflt, sizeof dflt)) { /* a default is not written back as measured */
        fputs(",\n  \"compute\": {\n", f);
        put_linear(f, "reduce", "fixed", "per_byte", &m->reduce, !m->reduce_kernel[0]);
        if (m->reduce_kernel[0]) {
            fputs("    \"kernel\": ", f);
            put_string(f, m->reduce_kernel);
            fputs("\n", f);
        }
        fputs("  }", f);
    }
    fputs("\n}\n", f);
    int bad = ferror(f);
    if (to_stdout)
        bad |= fflush(f) != 0;
    else
        bad |= fclose(f) != 0;
    return bad ? KP_ERR_ARG : KP_SUCCESS;
}

int kp_params_load_costs(const char *path, const char *key, const char *const *names, int n, double *out, char *err,
                         int errlen)
{
    char *text;
    size_t got;
    int k = 0;
    err[0] = '\0';
    switch (kp_json_read_file(path, 0, &text, &got)) {
    case KP_READ_OPEN:
        kp_err_append(err, errlen, &k, "%s: cannot open (KPORT_PARAMS)", path);
        return KP_ERR_PARAM;
    case KP_READ_IO:
        kp_err_append(err, errlen, &k, "%s: cannot read (KPORT_PARAMS): %s", path, strerror(errno));
        return KP_ERR_PARAM;
    case KP_READ_NOMEM:
        kp_err_append(err, errlen, &k, "%s: out of memory", path);
        return KP_ERR_NOMEM;
    }
    char jerr[256];
    kp_json *root = kp_json_parse(text, got, jerr, sizeof(jerr));
    free(text);
    if (!root) {
        kp_err_append(err, errlen, &k, "%s: malformed JSON: %s", path, jerr);
        return KP_ERR_PARAM;
    }
    int rc = KP_SUCCESS;
    const kp_json *obj = kp_json_get(root, key);
    if (obj) { /* optional; every field in it optional */
        if (obj->type != KP_JSON_OBJECT) {
            kp_err_append(err, errlen, &k, "%s: %s: %s, expected an object", path, key, kp_json_type_name(obj->type));
            rc = KP_ERR_PARAM;
        }
        for (int i = 0; rc == KP_SUCCESS && i < n; i++) {
            const kp_json *v = kp_json_get(obj, names[i]);
            if (!v)
                continue;
            if (v->type != KP_JSON_NUMBER || !(v->number >= 0) || v->number > 1e12) {
                kp_err_append(err, errlen, &k, "%s: %s.%s: expected a non-negative number", path, key, names[i]);
                rc = KP_ERR_PARAM;
            } else {
                out[i] = v->number;
            }
        }
    }
    kp_json_free(root);
    return rc;
}
