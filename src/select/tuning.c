/*
 * The tuning file: load, check, match (tuning.h; the format is
 * docs/TUNING.md). A file looks like
 *
 *   {"version": 1,
 *    "rules": [
 *      {"collective": "allgather", "P": [2, 8], "nodes": 1, "bytes": [0, 4095],
 *       "algorithm": "bruck:k=1", "comment": "small blocks"},
 *      {"collective": "allgather", "nodes": [2, null], "ppn": [2, 64],
 *       "algorithm": "smp_direct:k=2,transport=rma"}]}
 *
 * Every refusal names the file, the line and the field:
 *   "t.json, line 9: rule 2: \"bytes\": min 64 is above max 8"
 *   "t.json, line 4: rule 1: \"algorithm\": unknown algorithm \"brook\"; known: ring ..."
 *   "t.json, line 3, column 14: expected ',' or '}' after an object member"
 * A bad file is reported once (rank 0 of MPI_COMM_WORLD) and ignored: the
 * built-in rules stay in force and no kport call fails because of it.
 *
 * Selection (kp_tuning_select, called by select.c after the forced
 * algorithm and before the automatic choice): the rules are tried in file
 * order; the first that matches (collective, P, the layout's node count
 * and ranks per node, bytes) and whose builder accepts the call at this P
 * (after kport's usual clamping of k and n, kp_algo_effective) runs. A rule
 * refused there falls through to the next one. Every value a rule looks at
 * is the same on every rank of a communicator, so every rank picks the same
 * rule, provided every rank read the same file.
 */
#include "select/tuning.h"

#include "select/select.h"
#include "util/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a tuning file is a few KB; refuse anything absurd */
#define KP_TUNING_MAX_FILE (16 * 1024 * 1024)


typedef struct ctx {
    const char *name;
    char *err;
    int errlen;
} ctx;

/* "name, line L: rule R: "field": why" (rule 0: a top-level field) */
#define KNOWN_COLLS                                                                                              \
    "allgather, barrier, gather, alltoall, bcast, scatter, reduce, allreduce, reduce_scatter_block or "          \
    "reduce_scatter"

static int refuse(const ctx *c, int line, int rule, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int refuse(const ctx *c, int line, int rule, const char *field, const char *fmt, ...)
{
    if (!c->err || c->errlen <= 0)
        return KP_ERR_PARAM;
    int n = 0;
    kp_err_append(c->err, c->errlen, &n, "%s", c->name);
    if (line > 0)
        kp_err_append(c->err, c->errlen, &n, ", line %d", line);
    kp_err_append(c->err, c->errlen, &n, ": ");
    if (rule > 0)
        kp_err_append(c->err, c->errlen, &n, "rule %d: ", rule);
    if (field)
        kp_err_append(c->err, c->errlen, &n, "\"%s\": ", field);
    va_list ap;
    va_start(ap, fmt);
    kp_err_vappend(c->err, c->errlen, &n, fmt, ap);
    va_end(ap);
    return KP_ERR_PARAM;
}

/* a whole number in [min, 2^53] */
static int whole(const kp_json *v, int64_t min, int64_t *out)
{
    if (v->type != KP_JSON_NUMBER || !v->integral || v->number < (double)min || v->number > 9007199254740992.0)
        return -1;
    *out = (int64_t)v->number;
    return 0;
}

/* "any" | N | [lo, hi] (hi null: unbounded); values >= min */
static int get_range(const ctx *c, const kp_json *rule, int ri, const char *field, int64_t min, kp_tuning_range *r)
{
    r->lo = 0;
    r->hi = KP_TUNING_UNBOUNDED;
    const kp_json *v = kp_json_get(rule, field);
    if (!v)
        return KP_SUCCESS;
    int64_t x;
    if (v->type == KP_JSON_STRING) {
        if (strcmp(v->string, "any") != 0)
            return refuse(c, v->line, ri, field, "\"%s\": expected \"any\", a whole number or [min, max]", v->string);
        return KP_SUCCESS;
    }
    if (v->type == KP_JSON_NUMBER) {
        if (whole(v, min, &x))
            return refuse(c, v->line, ri, field, "%g: expected a whole number >= %lld", v->number, (long long)min);
        r->lo = r->hi = x;
        return KP_SUCCESS;
    }
    if (v->type != KP_JSON_ARRAY)
        return refuse(c, v->line, ri, field, "%s: expected \"any\", a whole number or [min, max]",
                      kp_json_type_name(v->type));
    if (v->n != 2)
        return refuse(c, v->line, ri, field, "%d element%s: expected [min, max] (max null: no upper end)", v->n,
                      v->n == 1 ? "" : "s");
    if (whole(v->item[0], min, &x))
        return refuse(c, v->item[0]->line, ri, field, "min: expected a whole number >= %lld, got %s",
                      (long long)min, kp_json_type_name(v->item[0]->type));
    r->lo = x;
    if (v->item[1]->type != KP_JSON_NULL) {
        if (whole(v->item[1], min, &x))
            return refuse(c, v->item[1]->line, ri, field, "max: expected a whole number >= %lld or null, got %s",
                          (long long)min, kp_json_type_name(v->item[1]->type));
        if (x < r->lo)
            return refuse(c, v->line, ri, field, "min %lld is above max %lld: the range is empty", (long long)r->lo,
                          (long long)x);
        r->hi = x;
    }
    return KP_SUCCESS;
}

static int load_rule(const ctx *c, const kp_json *v, int ri, kp_tuning_rule *r)
{
    static const char *known[] = {"collective", "P", "nodes", "ppn", "bytes", "algorithm", "comment"};
    if (v->type != KP_JSON_OBJECT)
        return refuse(c, v->line, ri, NULL, "%s: expected an object", kp_json_type_name(v->type));
    for (int i = 0; i < v->n; i++) {
        size_t k = 0;
        while (k < sizeof known / sizeof *known && strcmp(v->key[i], known[k]) != 0)
            k++;
        if (k == sizeof known / sizeof *known)
            return refuse(c, v->item[i]->line, ri, v->key[i],
                          "unknown field (known: collective, P, nodes, ppn, bytes, algorithm, comment)");
    }
    memset(r, 0, sizeof(*r));
    r->line = v->line;
    const kp_json *cm = kp_json_get(v, "comment");
    if (cm && cm->type != KP_JSON_STRING)
        return refuse(c, cm->line, ri, "comment", "%s: expected a string", kp_json_type_name(cm->type));
    const kp_json *co = kp_json_get(v, "collective");
    if (!co)
        return refuse(c, v->line, ri, "collective", "missing (%s)", KNOWN_COLLS);
    if (co->type != KP_JSON_STRING)
        return refuse(c, co->line, ri, "collective", "%s: expected a string", kp_json_type_name(co->type));
    r->coll = -1;
    for (int k = 0; k < KP_COLL_COUNT; k++)
        if (strcmp(co->string, kp_coll_name(k)) == 0)
            r->coll = k;
    if (r->coll < 0)
        return refuse(c, co->line, ri, "collective", "unknown collective \"%s\" (%s)",
                      co->string, KNOWN_COLLS);
    int rc;
    if ((rc = get_range(c, v, ri, "P", 1, &r->P)) || (rc = get_range(c, v, ri, "nodes", 1, &r->nodes)) ||
        (rc = get_range(c, v, ri, "ppn", 1, &r->ppn)) || (rc = get_range(c, v, ri, "bytes", 0, &r->bytes)))
        return rc;
    const kp_json *al = kp_json_get(v, "algorithm");
    if (!al)
        return refuse(c, v->line, ri, "algorithm", "missing (a specification such as \"bruck:k=2\", or \"auto\")");
    if (al->type != KP_JSON_STRING)
        return refuse(c, al->line, ri, "algorithm", "%s: expected a string", kp_json_type_name(al->type));
    if (strlen(al->string) >= sizeof(r->spec))
        return refuse(c, al->line, ri, "algorithm", "longer than %d characters", (int)sizeof(r->spec) - 1);
    char aerr[512];
    if (kp_algo_parse(r->coll, al->string, &r->algo, &r->prm, aerr, sizeof aerr))
        return refuse(c, al->line, ri, "algorithm", "%s", aerr);
    snprintf(r->spec, sizeof r->spec, "%s", al->string);
    return KP_SUCCESS;
}

int kp_tuning_parse(const char *text, size_t len, const char *name, kp_tuning *t, char *err, int errlen)
{
    ctx c = {name ? name : "(tuning file)", err, errlen};
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof t->name, "%s", c.name);
    if (err && errlen > 0)
        err[0] = '\0';
    char jerr[256];
    kp_json *root = kp_json_parse(text, len, jerr, sizeof jerr);
    if (!root) {
        if (err && errlen > 0)
            snprintf(err, (size_t)errlen, "%s, %s", c.name, jerr);
        return strstr(jerr, "out of memory") ? KP_ERR_NOMEM : KP_ERR_PARAM;
    }
    int rc = KP_SUCCESS;
    const kp_json *ver, *rules;
    if (root->type != KP_JSON_OBJECT) {
        rc = refuse(&c, root->line, 0, NULL, "%s: expected an object {\"version\": 1, \"rules\": [...]}",
                    kp_json_type_name(root->type));
        goto fn_exit;
    }
    for (int i = 0; i < root->n; i++)
        if (strcmp(root->key[i], "version") != 0 && strcmp(root->key[i], "rules") != 0 &&
            strcmp(root->key[i], "comment") != 0) {
            rc = refuse(&c, root->item[i]->line, 0, root->key[i], "unknown field (known: version, rules, comment)");
            goto fn_exit;
        }
    const kp_json *cm = kp_json_get(root, "comment");
    if (cm && cm->type != KP_JSON_STRING) {
        rc = refuse(&c, cm->line, 0, "comment", "%s: expected a string", kp_json_type_name(cm->type));
        goto fn_exit;
    }
    if (!(ver = kp_json_get(root, "version"))) {
        rc = refuse(&c, root->line, 0, "version", "missing (this kport reads version %d)", KP_TUNING_VERSION);
        goto fn_exit;
    }
    if (ver->type != KP_JSON_NUMBER || !ver->integral || ver->number != KP_TUNING_VERSION) {
        rc = ver->type == KP_JSON_NUMBER
                 ? refuse(&c, ver->line, 0, "version", "%g: this kport reads version %d", ver->number,
                          KP_TUNING_VERSION)
                 : refuse(&c, ver->line, 0, "version", "%s: expected the number %d", kp_json_type_name(ver->type),
                          KP_TUNING_VERSION);
        goto fn_exit;
    }
    if (!(rules = kp_json_get(root, "rules"))) {
        rc = refuse(&c, root->line, 0, "rules", "missing (an array of rules, first match wins)");
        goto fn_exit;
    }
    if (rules->type != KP_JSON_ARRAY) {
        rc = refuse(&c, rules->line, 0, "rules", "%s: expected an array", kp_json_type_name(rules->type));
        goto fn_exit;
    }
    if (rules->n > 0 && !(t->rule = calloc((size_t)rules->n, sizeof(*t->rule)))) {
        rc = KP_ERR_NOMEM;
        if (err && errlen > 0)
            snprintf(err, (size_t)errlen, "%s: out of memory for %d rules", c.name, rules->n);
        goto fn_exit;
    }
    for (int i = 0; i < rules->n; i++) {
        if ((rc = load_rule(&c, rules->item[i], i + 1, &t->rule[i])))
            goto fn_exit;
        t->n = i + 1;
    }
fn_exit:
    kp_json_free(root);
    if (rc) {
        free(t->rule);
        t->rule = NULL;
        t->n = 0;
    }
    return rc;
}

int kp_tuning_read(const char *path, kp_tuning *t, char *err, int errlen)
{
    memset(t, 0, sizeof(*t));
    ctx c = {path ? path : "(null)", err, errlen};
    if (!path || !*path)
        return refuse(&c, 0, 0, NULL, "no file named");
    char *text;
    size_t n;
    switch (kp_json_read_file(path, KP_TUNING_MAX_FILE, &text, &n)) {
    case KP_READ_OPEN:
        return refuse(&c, 0, 0, NULL, "cannot open: %s", strerror(errno));
    case KP_READ_IO:
        return refuse(&c, 0, 0, NULL, "cannot read: %s", strerror(errno));
    case KP_READ_NOMEM:
        return refuse(&c, 0, 0, NULL, "out of memory reading the file");
    case KP_READ_BIG:
        return refuse(&c, 0, 0, NULL, "larger than %d bytes: not a tuning file", KP_TUNING_MAX_FILE);
    }
    int rc = kp_tuning_parse(text, n, path, t, err, errlen);
    free(text);
    return rc;
}

void kp_tuning_free(kp_tuning *t)
{
    if (!t)
        return;
    free(t->rule);
    t->rule = NULL;
    t->n = 0;
}

static int in(const kp_tuning_range *r, int64_t x)
{
    return x >= r->lo && x <= r->hi;
}

int kp_tuning_match(const kp_tuning *t, int from, int coll, int P, int nnodes, int ppn_min, int ppn_max,
                    int64_t bytes)
{
    for (int i = from < 0 ? 0 : from; t && i < t->n; i++) {
        const kp_tuning_rule *r = &t->rule[i];
        if (r->coll == coll && in(&r->P, P) && in(&r->nodes, nnodes) && in(&r->ppn, ppn_min) &&
            in(&r->ppn, ppn_max) && in(&r->bytes, bytes))
            return i;
    }
    return -1;
}

/* ---- the process-wide file ---------------------------------------------- */

static struct {
    int loaded, have;
    kp_tuning t;
    char err[600];
} tf;

static int world_rank0(void)
{
    int init = 0, fin = 0, r = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r == 0;
}

void kp_tuning_load(int verbose)
{
    if (tf.loaded)
        return;
    tf.loaded = 1;
    const char *path = getenv("KPORT_TUNING_FILE");
    if (!path || !*path)
        return;
    if (kp_tuning_read(path, &tf.t, tf.err, sizeof tf.err)) {
        kp_tuning_free(&tf.t);
        if (world_rank0()) {
            fprintf(stderr, "kport: KPORT_TUNING_FILE ignored, the built-in rules stay in force: %s\n", tf.err);
            fflush(stderr);
        }
        return;
    }
    tf.have = 1;
    if (verbose && world_rank0()) {
        fprintf(stderr, "kport: tuning file %s: %d rule%s\n", tf.t.name, tf.t.n, tf.t.n == 1 ? "" : "s");
        fflush(stderr);
    }
}

const kp_tuning *kp_tuning_active(void)
{
    return tf.have ? &tf.t : NULL;
}

const char *kp_tuning_error(void)
{
    return tf.err;
}

int kp_tuning_select(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **out, char *why,
                     int whylen)
{
    *out = NULL;
    const kp_tuning *t = kp_tuning_active();
    if (!t)
        return KP_SUCCESS;
    const kp_layout *L = &c->layout;
    int lo = c->size, hi = 0;
    for (int n = 0; n < L->nnodes; n++) {
        const int s = kp_layout_node_size(L, n);
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
    }
    for (int i = kp_tuning_match(t, 0, coll, c->size, L->nnodes, lo, hi, bytes); i >= 0;
         i = kp_tuning_match(t, i + 1, coll, c->size, L->nnodes, lo, hi, bytes)) {
        const kp_tuning_rule *r = &t->rule[i];
        if (!r->algo) /* "auto": the built-in choice */
            return KP_SUCCESS;
        kp_plan *pl;
        int rc = kp_plan_get(c, coll, r->algo, &r->prm, bytes, root, inplace, &pl);
        if (rc)
            return rc;
        if (!pl->refused) {
            if (why && whylen > 0)
                snprintf(why, (size_t)whylen, "tuning file %s rule %d, line %d", t->name, i + 1, r->line);
            *out = pl;
            return KP_SUCCESS;
        }
        if (kp_verbose() && !pl->announced && c->rank == 0) {
            fprintf(stderr, "kport: %s P=%d bytes=%lld: tuning file %s rule %d, line %d: %s cannot apply (%s); next rule\n",
                    kp_coll_name(coll), c->size, (long long)bytes, t->name, i + 1, r->line, pl->name, pl->errmsg);
            fflush(stderr);
        }
        pl->announced = 1;
    }
    return KP_SUCCESS;
}
