/*
 * kport-bench's harness: main(), the table of subcommands and the helpers
 * they share. The manual of the harness, and how to add a subcommand, is
 * the header of harness.h.
 */
#include "harness.h"
#include "fit.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Every subcommand, in the order kport-bench -h lists them. */
const kb_command *const kb_commands[] = {
    &kb_cmd_allgather, &kb_cmd_barrier, &kb_cmd_gather, &kb_cmd_alltoall, &kb_cmd_bcast, &kb_cmd_scatter,
    &kb_cmd_reduce, &kb_cmd_allreduce, &kb_cmd_reduce_scatter_block, &kb_cmd_reduce_scatter, &kb_cmd_churn,
    &kb_cmd_loggp, &kb_cmd_fanout, &kb_cmd_concurrency, &kb_cmd_strided, &kb_cmd_rma,
};
const int kb_ncommands = (int)(sizeof(kb_commands) / sizeof(kb_commands[0]));

int kb_rank = 0;

/* ------------------------------------------------------------------------- */
/* main                                                                       */
/* ------------------------------------------------------------------------- */

static void usage(FILE *f, const void *arg)
{
    (void)arg;
    if (kb_rank != 0)
        return;
    fprintf(f, "Usage: kport-bench SUBCOMMAND [options]    (kport-bench SUBCOMMAND -h: its options)\n"
               "Measures native MPI beside kport in the same run.\n\nSubcommands:\n");
    for (int i = 0; i < kb_ncommands; i++)
        fprintf(f, "  %-12s %s\n", kb_commands[i]->name, kb_commands[i]->summary);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &kb_rank);
    const kb_command *cmd = NULL;
    if (argc >= 2)
        for (int i = 0; i < kb_ncommands; i++)
            if (strcmp(argv[1], kb_commands[i]->name) == 0)
                cmd = kb_commands[i];
    if (!cmd) {
        if (argc < 2)
            kb_bad_usage(usage, NULL, "the first argument must be a subcommand%s", "");
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
            usage(stdout, NULL);
            MPI_Finalize();
            return 0;
        }
        kb_bad_usage(usage, NULL,
                     argv[1][0] == '-' ? "the first argument must be a subcommand, not \"%s\""
                                       : "unknown subcommand \"%s\"",
                     argv[1]);
    }
    int rc = cmd->main(argc, argv);
    MPI_Finalize();
    return rc;
}

/* ------------------------------------------------------------------------- */
/* Options                                                                    */
/* ------------------------------------------------------------------------- */

_Noreturn void kb_bad_usage(void (*usage_fn)(FILE *f, const void *arg), const void *usage_arg, const char *fmt,
                  const char *arg)
{
    if (kb_rank == 0) {
        fprintf(stderr, "kport-bench: ");
        fprintf(stderr, fmt, arg ? arg : "");
        fprintf(stderr, "\n\n");
        if (usage_fn)
            usage_fn(stderr, usage_arg);
    }
    MPI_Finalize();
    exit(2);
}

int kb_parse_size(const char *s, size_t *out) { return kb_parse_bytes(s, s ? strlen(s) : 0, SIZE_MAX, out); }

int kb_parse_int(const char *s, int minv, int *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < minv || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

const char *kb_long_option(int argc, char **argv, int *i, const char *name,
                           void (*usage_fn)(FILE *f, const void *arg), const void *usage_arg)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != '\0')
        return NULL;
    if (*i + 1 >= argc)
        kb_bad_usage(usage_fn, usage_arg, "%s needs a value", name);
    return argv[++*i];
}

int kb_size_option(const char *m, size_t *sizes, int max, void (*usage_fn)(FILE *f, const void *arg),
                   const void *usage_arg)
{
    const char *why = "";
    const int n = kb_size_list(m, 0, sizes, max, &why);
    if (n < 1) {
        char msg[256];
        snprintf(msg, sizeof(msg), "bad -m \"%s\": %s", m, why);
        kb_bad_usage(usage_fn, usage_arg, "%s", msg);
    }
    return n;
}

int kb_common_option(int argc, char **argv, int *i, void (*usage_fn)(FILE *f, const void *arg),
                     const void *usage_arg, int *json, int *check)
{
    const char *a = argv[*i], *val;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
        usage_fn(stdout, usage_arg);
        MPI_Finalize();
        exit(0);
    }
    if ((val = kb_long_option(argc, argv, i, "--format", usage_fn, usage_arg))) {
        if (strcmp(val, "json") != 0 && strcmp(val, "text") != 0)
            kb_bad_usage(usage_fn, usage_arg, "unknown --format \"%s\" (text or json)", val);
        *json = strcmp(val, "json") == 0;
        return 1;
    }
    if (strcmp(a, "-c") == 0) {
        *check = 1;
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------- */
/* The measured environment                                                   */
/* ------------------------------------------------------------------------- */

void kb_mpi_library_name(char *out, size_t outlen)
{
    char buf[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0;
    MPI_Get_library_version(buf, &len);
    buf[len < 0 ? 0 : len > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_LIBRARY_VERSION_STRING : len] = '\0';
    char *s = buf;
    while (isspace((unsigned char)*s))
        s++;
    char *nl = strchr(s, '\n');
    if (nl)
        *nl = '\0';
    for (char *e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);)
        *--e = '\0';
    if (strncmp(s, "Open MPI v", 10) == 0) {
        const char *v = s + 10;
        size_t n = strcspn(v, ", \t");
        snprintf(out, outlen, "Open MPI %.*s", (int)n, v);
    } else if (strncmp(s, "MPICH Version:", 14) == 0) {
        const char *v = s + 14;
        while (isspace((unsigned char)*v))
            v++;
        snprintf(out, outlen, "MPICH %s", v);
    } else if (outlen > 0) {
        size_t n = strlen(s) < outlen - 1 ? strlen(s) : outlen - 1;
        memcpy(out, s, n);
        out[n] = '\0';
    }
}

static int cmp_names(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

void kb_node_layout(MPI_Comm comm, int *hosts, int *rmin, int *rmax)
{
    int rank, P, len = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    char name[MPI_MAX_PROCESSOR_NAME];
    memset(name, 0, sizeof(name));
    MPI_Get_processor_name(name, &len);
    char *all = NULL;
    if (rank == 0) {
        all = calloc((size_t)P, MPI_MAX_PROCESSOR_NAME);
        if (!all)
            MPI_Abort(comm, 1);
    }
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);
    int v[3] = {1, P, P};
    if (rank == 0) {
        qsort(all, (size_t)P, MPI_MAX_PROCESSOR_NAME, cmp_names);
        int h = 0, run = 0;
        v[1] = INT_MAX;
        v[2] = 0;
        for (int i = 0; i < P; i++) {
            run++;
            if (i == P - 1 || strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME,
                                     all + (size_t)(i + 1) * MPI_MAX_PROCESSOR_NAME) != 0) {
                h++;
                if (run < v[1])
                    v[1] = run;
                if (run > v[2])
                    v[2] = run;
                run = 0;
            }
        }
        v[0] = h;
        free(all);
    }
    MPI_Bcast(v, 3, MPI_INT, 0, comm);
    *hosts = v[0];
    *rmin = v[1];
    *rmax = v[2];
}

void kb_kport_layout(MPI_Comm comm, char *out, size_t len)
{
    int nnodes = 0, local = 0, nsize = 0, P;
    MPI_Comm_size(comm, &P);
    if (kp_node_info(comm, &nnodes, NULL, &local, &nsize) != KP_SUCCESS) {
        snprintf(out, len, "unavailable (%s)", kp_last_error());
        return;
    }
    int mine = local == 0 ? nsize : 0, *all = malloc((size_t)P * sizeof(int));
    if (!all) {
        snprintf(out, len, "%d node%s", nnodes, nnodes == 1 ? "" : "s");
        return;
    }
    MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, comm);
    int n = snprintf(out, len, "%d node%s of", nnodes, nnodes == 1 ? "" : "s");
    for (int r = 0, first = 1; r < P && n < (int)len; r++)
        if (all[r]) {
            n += snprintf(out + n, len - (size_t)n, "%s%d", first ? " " : ",", all[r]);
            first = 0;
        }
    if (n < (int)len)
        n += snprintf(out + n, len - (size_t)n, " ranks");
    const char *sz = getenv("KPORT_NODE_SIZE"), *map = getenv("KPORT_NODE_MAP");
    if ((sz || map) && n < (int)len)
        snprintf(out + n, len - (size_t)n, " (emulated: KPORT_NODE_SIZE=%s KPORT_NODE_MAP=%s)", sz ? sz : "-",
                 map ? map : "-");
    free(all);
}

/* ------------------------------------------------------------------------- */
/* Validation pattern                                                         */
/* ------------------------------------------------------------------------- */

#define KB_STEP 0x9E3779B97F4A7C15ull /* odd: consecutive words never repeat */

static uint64_t kb_seed(uint64_t id, int iter)
{
    uint64_t x = id * 0xD6E8FEB86659FD93ull ^ (uint64_t)(unsigned)(iter + 1) * 0x94D049BB133111EBull;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

uint64_t kb_rank_id(int rank) { return (uint64_t)(unsigned)rank; }

uint64_t kb_pair_id(int src, int dst) { return ((uint64_t)(unsigned)src + 1) << 32 | (uint64_t)(unsigned)dst; }

void kb_fill_pattern(unsigned char *dst, size_t n, uint64_t id, int iter, int complement)
{
    const uint64_t inv = complement ? ~0ull : 0ull;
    uint64_t x = kb_seed(id, iter);
    size_t nw = n / 8;
    for (size_t w = 0; w < nw; w++) {
        x += KB_STEP;
        uint64_t v = x ^ inv;
        memcpy(dst + 8 * w, &v, 8);
    }
    if (n % 8) {
        x += KB_STEP;
        unsigned char t[8];
        uint64_t v = x ^ inv;
        memcpy(t, &v, 8);
        memcpy(dst + 8 * nw, t, n % 8);
    }
}

void kb_mismatch(kb_ctx *cx, int iter, const char *what, unsigned expected, unsigned got)
{
    if (cx->reported++ >= KB_MAX_REPORTS)
        return;
    fprintf(stderr, "kport-bench: rank %d: %s, size %zu, iteration %d: %s: expected 0x%02x, got 0x%02x%s\n",
            cx->rank, cx->label, cx->size, iter, what, expected, got,
            cx->reported == KB_MAX_REPORTS ? " (further mismatches not shown)" : "");
}

long long kb_check_id(kb_ctx *cx, const unsigned char *src, size_t n, uint64_t id, int iter, int complement,
                      const char *where, size_t base, const char *origin)
{
    const uint64_t inv = complement ? ~0ull : 0ull;
    uint64_t x = kb_seed(id, iter);
    long long bad = 0;
    for (size_t j = 0; j < n; j += 8) {
        x += KB_STEP;
        unsigned char e[8];
        uint64_t v = x ^ inv;
        memcpy(e, &v, 8);
        size_t m = n - j < 8 ? n - j : 8;
        if (memcmp(src + j, e, m) == 0)
            continue;
        for (size_t b = 0; b < m; b++)
            if (src[j + b] != e[b]) {
                char what[224];
                snprintf(what, sizeof(what), "%s byte %zu (%s byte %zu)", where, base + j + b, origin, j + b);
                kb_mismatch(cx, iter, what, e[b], src[j + b]);
                bad++;
            }
    }
    return bad;
}

long long kb_check_pattern(kb_ctx *cx, const unsigned char *src, size_t n, int rank, int iter, const char *where,
                           size_t base)
{
    char origin[32];
    snprintf(origin, sizeof(origin), "rank %d's", rank);
    return kb_check_id(cx, src, n, kb_rank_id(rank), iter, 0, where, base, origin);
}

void kb_rank_block_write(kb_ctx *cx, int iter)
{
    kb_fill_pattern(cx->sbuf, cx->size, kb_rank_id(cx->rank), iter, 0);
}

void kb_rank_blocks_poison(kb_ctx *cx, int iter)
{
    for (int r = 0; r < cx->P; r++)
        kb_fill_pattern(cx->rbuf + (size_t)r * cx->size, cx->size, kb_rank_id(r), iter, 1);
    kb_guard_fill(cx, cx->size * (size_t)cx->P);
}

int kb_block_buffers(size_t size, int P, int sblocks, int rblocks, size_t *sbytes, size_t *rbytes)
{
    int most = sblocks > rblocks ? sblocks : rblocks;
    if (size > (size_t)INT_MAX || (most > 0 && size > (SIZE_MAX - KB_GUARD) / (size_t)most))
        return 1;
    (void)P;
    *sbytes = size * (size_t)sblocks;
    *rbytes = size * (size_t)rblocks;
    return 0;
}

static unsigned char kb_guard_byte(size_t i) { return (unsigned char)(0x5A ^ (i * 37)); }

size_t kb_copy_block(size_t size, int P)
{
    (void)P;
    return size;
}

void kb_guard_fill(kb_ctx *cx, size_t used)
{
    for (size_t i = 0; i < KB_GUARD; i++)
        cx->rbuf[used + i] = kb_guard_byte(i);
}

long long kb_guard_check(kb_ctx *cx, size_t used, int iter)
{
    long long bad = 0;
    for (size_t i = 0; i < KB_GUARD; i++)
        if (cx->rbuf[used + i] != kb_guard_byte(i)) {
            char what[96];
            snprintf(what, sizeof(what), "write past the receive buffer, byte %zu", used + i);
            kb_mismatch(cx, iter, what, kb_guard_byte(i), cx->rbuf[used + i]);
            bad++;
        }
    return bad;
}

/* ------------------------------------------------------------------------- */
/* Statistics and output                                                      */
/* ------------------------------------------------------------------------- */

void kb_reduce_max(const double *times, double *maxes, int n, MPI_Comm comm)
{
    MPI_Reduce(times, maxes, n, MPI_DOUBLE, MPI_MAX, 0, comm);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

kb_stat kb_stats(double *v, int n)
{
    kb_stat s = {0, 0, 0, 0};
    if (n < 1)
        return s;
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.avg = sum / n;
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    return s;
}

void kb_share_message(char *msg, int mine, MPI_Comm comm)
{
    int rank, P, src;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    int cand = mine ? rank : P;
    MPI_Allreduce(&cand, &src, 1, MPI_INT, MPI_MIN, comm);
    if (src < P)
        MPI_Bcast(msg, KB_ERR_LEN, MPI_CHAR, src, comm);
}

void kb_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}
