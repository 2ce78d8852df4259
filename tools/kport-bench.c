/*
 * kport-bench: native MPI collectives and every kport algorithm side by
 * side, measured in the same run.
 *
 *   mpirun -np P kport-bench allgather|barrier|gather|alltoall
 *                            [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c] [-r ROOT]
 *                            [-a native,bruck:k=3,...] [--format json]
 *
 * Sizes: allgather and gather, bytes per rank (P*size received); alltoall,
 * bytes per rank pair (P*size sent and received per rank); barrier has no
 * size: one row of size 0 (-m ignored). -r: the root of gather (default 0).
 *
 * Options and text output follow the OSU Micro-Benchmarks (-m, -i, -x, -f,
 * -c; "# Size  Avg Latency(us) ..."); --format json prints one JSON object
 * per line per (algorithm, size) for scripts/bench_report.py.
 *
 * Timing (ReproMPI's lesson: averages over ranks hide stragglers): every
 * iteration is MPI_Barrier on a private communicator, t0, one call, t1.
 * The per-iteration local times are reduced with MPI_MAX over ranks after
 * the loop (one MPI_Reduce per algorithm and size), so each iteration's
 * latency is that of the slowest rank; the report is the median over
 * iterations (-f adds min / avg / max over iterations). For fairness the
 * algorithms are interleaved: for each size, each algorithm runs its
 * warmup and iterations in turn.
 *
 * kport algorithms are forced with kp_set_algorithm (no fallback); one
 * that refuses this P or size (KP_ERR_UNSUPPORTED) is reported as
 * "n/a: <reason>" and skipped; it is not a failure.
 *
 * Validation (-c): allgather, gather and alltoall check every byte of the
 * receive buffer (at the gather root; the other ranks' receive buffers
 * must stay untouched), the unchanged send buffer and a guard after the
 * receive buffer, against a pattern of (origin, byte, iteration); barrier
 * has no data, so -c adds an untimed semantic test (see barrier_selftest).
 *
 * Adding a collective: write its bench_coll entry (buffer sizes, one call,
 * fill, check or selftest) and add it to the colls[] table.
 */
#include "kport.h"

#include <mpi.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB_NAME_LEN 160
#define KB_ERR_LEN 512
#define KB_LARGE_MSG 65536 /* above this: fewer iterations (OSU's "large") */
#define KB_DEF_ITERS 1000
#define KB_DEF_ITERS_LARGE 100
#define KB_DEF_WARMUP 100
#define KB_DEF_WARMUP_LARGE 10
#define KB_DEF_MIN 1
#define KB_DEF_MAX 1048576
#define KB_GUARD 64       /* bytes after the used part of the receive buffer */
#define KB_MAX_REPORTS 5  /* mismatches printed per rank, algorithm and size */

/* ------------------------------------------------------------------------- */
/* Benchmark context and the table of collectives                            */
/* ------------------------------------------------------------------------- */

typedef struct bench_ctx {
    MPI_Comm comm;        /* the measured calls run here (a dup of WORLD) */
    int rank, P;
    size_t size;          /* message size in bytes (see bench_coll.size_desc) */
    int root;             /* root of rooted collectives (gather; -r) */
    unsigned char *sbuf;  /* send buffer, sbuf_len bytes */
    unsigned char *rbuf;  /* receive buffer, rbuf_len bytes (+ KB_GUARD) */
    size_t sbuf_len, rbuf_len;
    int native;           /* 1: native MPI call, 0: kport */
    const char *label;    /* algorithm being measured (for messages) */
    int reported;         /* mismatches printed so far for this (algorithm, size) */
} bench_ctx;

/* bench_coll.sizes */
enum { KB_SIZED = 0, KB_SIZELESS = 1 };

typedef struct bench_coll {
    const char *name;        /* first positional argument */
    int kcoll;               /* enum kp_coll, or -1 if kport lacks it (native only) */
    const char *native_call; /* for the header */
    int sizes;               /* KB_SIZED, or KB_SIZELESS: one row of size 0, -m ignored */
    int rooted;              /* accepts -r ROOT */
    const char *size_desc;   /* what "size" means, for the header */
    const char *bad_unit;    /* what check/selftest count ("wrong bytes") */
    /* Send / receive bytes for a message size; nonzero on overflow. */
    int (*buffers)(size_t size, int P, size_t *sbytes, size_t *rbytes);
    /* One call of the collective; returns a KP_* code. */
    int (*run)(bench_ctx *cx);
    /* Before iteration iter (with -c): fill the send buffer with the
     * pattern, poison the receive buffer (and its guard). May be NULL. */
    void (*fill)(bench_ctx *cx, int iter);
    /* After iteration iter (with -c): number of wrong bytes. May be NULL. */
    long long (*check)(bench_ctx *cx, int iter);
    /* With -c, after the timed iterations of an (algorithm, size): an
     * untimed test of the collective's semantics (for a collective without
     * data to compare); returns the violations on this rank, and the first
     * failing return code in *rc. Collective over sync. May be NULL. */
    long long (*selftest)(bench_ctx *cx, MPI_Comm sync, int *rc);
} bench_coll;

/* The pattern: byte j of the data identified by `id` (a rank for
 * allgather and gather, a (source, destination) pair for alltoall) in
 * iteration it. One 64-bit mix per 8 bytes, so a misplaced block, a stale
 * iteration, a block from the wrong rank or a shifted offset all show. */
static uint64_t kb_word_id(uint64_t id, uint64_t w, int iter)
{
    uint64_t x = id * 0x9E3779B97F4A7C15ull;
    x ^= (w + 1) * 0xBF58476D1CE4E5B9ull;
    x ^= (uint64_t)(unsigned)(iter + 1) * 0x94D049BB133111EBull;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

/* id of rank r's data (allgather, gather) */
static uint64_t kb_rank_id(int rank) { return (uint64_t)(unsigned)rank; }

/* id of the block rank src sends to rank dst (alltoall); never a rank id */
static uint64_t kb_pair_id(int src, int dst)
{
    return ((uint64_t)(unsigned)src + 1) << 32 | (uint64_t)(unsigned)dst;
}

/* dst[0..n) = pattern bytes of id, or their complement (poison). */
static void kb_fill_pattern(unsigned char *dst, size_t n, uint64_t id, int iter, int complement)
{
    unsigned char inv = complement ? 0xFF : 0x00;
    size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        uint64_t x = kb_word_id(id, (uint64_t)(j >> 3), iter);
        for (int b = 0; b < 8; b++)
            dst[j + (size_t)b] = (unsigned char)((x >> (8 * b)) ^ inv);
    }
    if (j < n) {
        uint64_t x = kb_word_id(id, (uint64_t)(j >> 3), iter);
        for (int b = 0; j < n; j++, b++)
            dst[j] = (unsigned char)((x >> (8 * b)) ^ inv);
    }
}

static void kb_mismatch(bench_ctx *cx, int iter, const char *what, unsigned expected, unsigned got)
{
    if (cx->reported++ >= KB_MAX_REPORTS)
        return;
    fprintf(stderr, "kport-bench: rank %d: %s, size %zu, iteration %d: %s: expected 0x%02x, got 0x%02x%s\n",
            cx->rank, cx->label, cx->size, iter, what, expected, got,
            cx->reported == KB_MAX_REPORTS ? " (further mismatches not shown)" : "");
}

/* Number of bytes of src[0..n) that differ from id's pattern (complemented
 * if `complement`: a poisoned buffer that must stay untouched). `origin`
 * names the data in messages ("rank 3's", "rank 3's block for rank 1,"). */
static long long kb_check_id(bench_ctx *cx, const unsigned char *src, size_t n, uint64_t id, int iter,
                             int complement, const char *where, size_t base, const char *origin)
{
    unsigned char inv = complement ? 0xFF : 0x00;
    long long bad = 0;
    for (size_t j = 0; j < n; j += 8) {
        uint64_t x = kb_word_id(id, (uint64_t)(j >> 3), iter);
        size_t m = n - j < 8 ? n - j : 8;
        for (size_t b = 0; b < m; b++) {
            unsigned char e = (unsigned char)((x >> (8 * b)) ^ inv);
            if (src[j + b] != e) {
                char what[224];
                snprintf(what, sizeof(what), "%s byte %zu (%s byte %zu)", where, base + j + b, origin, j + b);
                kb_mismatch(cx, iter, what, e, src[j + b]);
                bad++;
            }
        }
    }
    return bad;
}

/* Number of bytes of src[0..n) that differ from rank's pattern. */
static long long kb_check_pattern(bench_ctx *cx, const unsigned char *src, size_t n, int rank, int iter,
                                  const char *where, size_t base)
{
    char origin[32];
    snprintf(origin, sizeof(origin), "rank %d's", rank);
    return kb_check_id(cx, src, n, kb_rank_id(rank), iter, 0, where, base, origin);
}

static unsigned char kb_guard_byte(size_t i) { return (unsigned char)(0x5A ^ (i * 37)); }

static void kb_guard_fill(bench_ctx *cx, size_t used)
{
    for (size_t i = 0; i < KB_GUARD; i++)
        cx->rbuf[used + i] = kb_guard_byte(i);
}

static long long kb_guard_check(bench_ctx *cx, size_t used, int iter)
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

/* --- allgather ------------------------------------------------------------ */

static int allgather_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    if (size > (size_t)INT_MAX || (P > 0 && size > (SIZE_MAX - KB_GUARD) / (size_t)P))
        return 1;
    *sbytes = size;
    *rbytes = size * (size_t)P;
    return 0;
}

static int allgather_run(bench_ctx *cx)
{
    if (cx->native)
        return MPI_Allgather(cx->sbuf, (int)cx->size, MPI_BYTE, cx->rbuf, (int)cx->size, MPI_BYTE, cx->comm) ==
                       MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_allgather(cx->sbuf, (MPI_Count)cx->size, MPI_BYTE, cx->rbuf, (MPI_Count)cx->size, MPI_BYTE, cx->comm);
}

static void allgather_fill(bench_ctx *cx, int iter)
{
    kb_fill_pattern(cx->sbuf, cx->size, kb_rank_id(cx->rank), iter, 0);
    for (int r = 0; r < cx->P; r++)
        kb_fill_pattern(cx->rbuf + (size_t)r * cx->size, cx->size, kb_rank_id(r), iter, 1);
    kb_guard_fill(cx, cx->size * (size_t)cx->P);
}

static long long allgather_check(bench_ctx *cx, int iter)
{
    long long bad = 0;
    for (int r = 0; r < cx->P; r++)
        bad += kb_check_pattern(cx, cx->rbuf + (size_t)r * cx->size, cx->size, r, iter, "recvbuf",
                                (size_t)r * cx->size);
    bad += kb_check_pattern(cx, cx->sbuf, cx->size, cx->rank, iter, "sendbuf modified:", 0);
    bad += kb_guard_check(cx, cx->size * (size_t)cx->P, iter);
    return bad;
}

/* --- barrier -------------------------------------------------------------- */

/* -c for barrier: there is no data to compare, so after the timed
 * iterations of each algorithm an untimed test checks the semantics (no
 * rank leaves the barrier before every rank has entered it). In round v one
 * rank is held back: it polls for KB_BARRIER_DELAY seconds before entering,
 * every other rank sends it a notice as soon as it leaves the barrier, and a
 * notice that arrives while the held-back rank has not yet entered is an
 * early exit. Each rank is held back once (at most KB_BARRIER_ROUNDS rounds,
 * spread over the ranks). A correct barrier never reports one; a broken one
 * is caught when a rank leaves within the delay. */
#define KB_BARRIER_TAG 7301
#define KB_BARRIER_DELAY 0.002
#define KB_BARRIER_ROUNDS 64

static int barrier_run(bench_ctx *cx)
{
    if (cx->native)
        return MPI_Barrier(cx->comm) == MPI_SUCCESS ? KP_SUCCESS : KP_ERR_MPI;
    return kp_barrier(cx->comm);
}

static long long barrier_selftest(bench_ctx *cx, MPI_Comm sync, int *rc)
{
    const int P = cx->P, me = cx->rank;
    const int rounds = P < KB_BARRIER_ROUNDS ? P : KB_BARRIER_ROUNDS;
    long long bad = 0;
    *rc = KP_SUCCESS;
    for (int v = 0; v < rounds; v++) {
        const int late = (int)((long long)v * P / rounds);
        int got = 0, tok;
        MPI_Barrier(sync);
        if (me == late) {
            double t0 = MPI_Wtime();
            do {
                int flag = 0;
                MPI_Status st;
                MPI_Iprobe(MPI_ANY_SOURCE, KB_BARRIER_TAG, sync, &flag, &st);
                if (flag) {
                    MPI_Recv(&tok, 1, MPI_INT, st.MPI_SOURCE, KB_BARRIER_TAG, sync, MPI_STATUS_IGNORE);
                    got++;
                    bad++;
                    if (cx->reported++ < KB_MAX_REPORTS)
                        fprintf(stderr,
                                "kport-bench: rank %d: %s, barrier test round %d: rank %d left the barrier before "
                                "rank %d (held back) entered it%s\n",
                                me, cx->label, v, st.MPI_SOURCE, me,
                                cx->reported == KB_MAX_REPORTS ? " (further violations not shown)" : "");
                }
            } while (MPI_Wtime() - t0 < KB_BARRIER_DELAY);
        }
        int r = barrier_run(cx);
        if (r != KP_SUCCESS && *rc == KP_SUCCESS)
            *rc = r;
        if (me == late) {
            for (; got < P - 1; got++)
                MPI_Recv(&tok, 1, MPI_INT, MPI_ANY_SOURCE, KB_BARRIER_TAG, sync, MPI_STATUS_IGNORE);
        } else {
            tok = v;
            MPI_Send(&tok, 1, MPI_INT, late, KB_BARRIER_TAG, sync);
        }
    }
    return bad;
}

/* --- gather --------------------------------------------------------------- */

/* Every rank has a P*size receive buffer: the root's must hold every
 * rank's block, the others' must stay untouched (poisoned). */
static int gather_run(bench_ctx *cx)
{
    if (cx->native)
        return MPI_Gather(cx->sbuf, (int)cx->size, MPI_BYTE, cx->rbuf, (int)cx->size, MPI_BYTE, cx->root,
                          cx->comm) == MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_gather(cx->sbuf, (MPI_Count)cx->size, MPI_BYTE, cx->rbuf, (MPI_Count)cx->size, MPI_BYTE, cx->root,
                     cx->comm);
}

static long long gather_check(bench_ctx *cx, int iter)
{
    long long bad = 0;
    const int at_root = cx->rank == cx->root;
    for (int r = 0; r < cx->P; r++) {
        char origin[48];
        snprintf(origin, sizeof(origin), at_root ? "rank %d's" : "poison in block %d,", r);
        bad += kb_check_id(cx, cx->rbuf + (size_t)r * cx->size, cx->size, kb_rank_id(r), iter, !at_root,
                           at_root ? "recvbuf" : "recvbuf of a non-root rank modified:", (size_t)r * cx->size,
                           origin);
    }
    bad += kb_check_pattern(cx, cx->sbuf, cx->size, cx->rank, iter, "sendbuf modified:", 0);
    bad += kb_guard_check(cx, cx->size * (size_t)cx->P, iter);
    return bad;
}

/* --- alltoall ------------------------------------------------------------- */

/* size: bytes per (source, destination) pair; each rank sends and
 * receives P*size. Block d of rank s's send buffer is the pattern of
 * kb_pair_id(s, d): a function of source, destination, byte and iteration. */
static int alltoall_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    if (size > (size_t)INT_MAX || (P > 0 && size > (SIZE_MAX - KB_GUARD) / (size_t)P))
        return 1;
    *sbytes = size * (size_t)P;
    *rbytes = size * (size_t)P;
    return 0;
}

static int alltoall_run(bench_ctx *cx)
{
    if (cx->native)
        return MPI_Alltoall(cx->sbuf, (int)cx->size, MPI_BYTE, cx->rbuf, (int)cx->size, MPI_BYTE, cx->comm) ==
                       MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_alltoall(cx->sbuf, (MPI_Count)cx->size, MPI_BYTE, cx->rbuf, (MPI_Count)cx->size, MPI_BYTE, cx->comm);
}

static void alltoall_fill(bench_ctx *cx, int iter)
{
    for (int r = 0; r < cx->P; r++) {
        kb_fill_pattern(cx->sbuf + (size_t)r * cx->size, cx->size, kb_pair_id(cx->rank, r), iter, 0);
        kb_fill_pattern(cx->rbuf + (size_t)r * cx->size, cx->size, kb_pair_id(r, cx->rank), iter, 1);
    }
    kb_guard_fill(cx, cx->size * (size_t)cx->P);
}

static long long alltoall_check(bench_ctx *cx, int iter)
{
    long long bad = 0;
    for (int r = 0; r < cx->P; r++) {
        char origin[64];
        snprintf(origin, sizeof(origin), "rank %d's block for rank %d,", r, cx->rank);
        bad += kb_check_id(cx, cx->rbuf + (size_t)r * cx->size, cx->size, kb_pair_id(r, cx->rank), iter, 0,
                           "recvbuf", (size_t)r * cx->size, origin);
        snprintf(origin, sizeof(origin), "rank %d's block for rank %d,", cx->rank, r);
        bad += kb_check_id(cx, cx->sbuf + (size_t)r * cx->size, cx->size, kb_pair_id(cx->rank, r), iter, 0,
                           "sendbuf modified:", (size_t)r * cx->size, origin);
    }
    bad += kb_guard_check(cx, cx->size * (size_t)cx->P, iter);
    return bad;
}

#define KB_BYTES_BAD "wrong bytes (summed over ranks and iterations)"

static const bench_coll colls[] = {
    {.name = "allgather", .kcoll = KP_COLL_ALLGATHER, .native_call = "MPI_Allgather", .sizes = KB_SIZED,
     .size_desc = "bytes per rank (each rank receives P*size)", .bad_unit = KB_BYTES_BAD,
     .buffers = allgather_buffers, .run = allgather_run, .fill = allgather_fill, .check = allgather_check},
    {.name = "barrier", .kcoll = KP_COLL_BARRIER, .native_call = "MPI_Barrier", .sizes = KB_SIZELESS,
     .size_desc = "none (one row, size 0; -m is ignored)",
     .bad_unit = "early exits (a rank left the barrier before the held-back rank entered it; summed over test "
                 "rounds)",
     .buffers = NULL, .run = barrier_run, .selftest = barrier_selftest},
    {.name = "gather", .kcoll = KP_COLL_GATHER, .native_call = "MPI_Gather", .sizes = KB_SIZED, .rooted = 1,
     .size_desc = "bytes per rank (the root receives P*size)", .bad_unit = KB_BYTES_BAD,
     .buffers = allgather_buffers, .run = gather_run, .fill = allgather_fill, .check = gather_check},
    {.name = "alltoall", .kcoll = KP_COLL_ALLTOALL, .native_call = "MPI_Alltoall", .sizes = KB_SIZED,
     .size_desc = "bytes per rank pair (each rank sends and receives P*size)", .bad_unit = KB_BYTES_BAD,
     .buffers = alltoall_buffers, .run = alltoall_run, .fill = alltoall_fill, .check = alltoall_check},
};
#define NCOLLS ((int)(sizeof(colls) / sizeof(colls[0])))

/* ------------------------------------------------------------------------- */
/* Options                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct alg_entry {
    char spec[KB_NAME_LEN];   /* as given to -a (or the registry name) */
    char label[KB_NAME_LEN];  /* column header: what ran (kp_last_algorithm) */
    int native;
    int is_auto;
    int is_memcpy;            /* reference: one memcpy of the receive buffer's bytes */
    char na_msg[KB_ERR_LEN];  /* first refusal */
    int na_noted;             /* refusal printed in the header */
} alg_entry;

typedef struct options {
    const bench_coll *coll;
    size_t min_size, max_size;
    int iters, iters_large, warmup, warmup_large;
    int full, check, json;
    int root, root_set;  /* -r (gather) */
    int nalgs, cap;
    alg_entry *algs;
} options;

static int g_rank = 0;

static void usage(FILE *f, const bench_coll *coll)
{
    if (g_rank != 0)
        return;
    fprintf(f,
            "Usage: kport-bench COLLECTIVE [options]\n"
            "Measures the native MPI collective and every kport algorithm side by side.\n"
            "\n"
            "Collectives:");
    for (int i = 0; i < NCOLLS; i++)
        fprintf(f, " %s", colls[i].name);
    fprintf(f,
            "\n\nOptions (OSU-compatible where OSU has them):\n"
            "  -m [MIN:]MAX  message sizes in bytes, MIN, 2*MIN, ... up to MAX (default %d:%d;\n"
            "                MIN may be 0; K, M, G suffixes are binary multiples). Per rank for\n"
            "                allgather and gather, per rank pair for alltoall; barrier ignores -m\n"
            "  -i N          timed iterations per size (default %d, %d above %d bytes)\n"
            "  -x N          warmup iterations per size (default %d, %d above %d bytes)\n"
            "  -f            full statistics: per-algorithm blocks with median, avg, min, max\n"
            "  -c            validate every byte of every iteration's result; exit 1 on a mismatch\n"
            "                (barrier: an untimed test that no rank leaves before all entered)\n"
            "  -r ROOT       root rank of gather (default 0)\n"
            "  -a LIST       algorithms, comma-separated: native, auto, NAME[:k=K,C=C] ...\n"
            "                (default: native and every registered kport algorithm)\n"
            "  --format F    text (default) or json (one JSON object per line per algorithm and size)\n"
            "  -h, --help    this help\n"
            "\n"
            "Latency of one iteration is the maximum over ranks; the table shows the median\n"
            "over iterations, in microseconds.\n",
            KB_DEF_MIN, KB_DEF_MAX, KB_DEF_ITERS, KB_DEF_ITERS_LARGE, KB_LARGE_MSG, KB_DEF_WARMUP,
            KB_DEF_WARMUP_LARGE, KB_LARGE_MSG);
    for (int c = 0; c < NCOLLS; c++) {
        const bench_coll *bc = coll ? coll : &colls[c];
        if (bc->kcoll >= 0) {
            int n = kp_algorithm_count((enum kp_coll)bc->kcoll);
            fprintf(f, "kport algorithms for %s:", bc->name);
            for (int i = 0; i < n; i++) {
                const char *nm = kp_algorithm_name((enum kp_coll)bc->kcoll, i);
                fprintf(f, " %s", nm ? nm : "?");
            }
            fprintf(f, "\n");
        }
        if (coll)
            break;
    }
}

/* Print an error and the usage on rank 0, leave MPI, exit 2. */
static void bad_usage(const options *o, const char *fmt, const char *arg)
{
    if (g_rank == 0) {
        fprintf(stderr, "kport-bench: ");
        fprintf(stderr, fmt, arg ? arg : "");
        fprintf(stderr, "\n\n");
        usage(stderr, o ? o->coll : NULL);
    }
    MPI_Finalize();
    exit(2);
}

/* Non-negative decimal integer with an optional K/M/G suffix. */
static int parse_size(const char *s, size_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (*end != '\0')
        return -1;
    if (shift && v > (ULLONG_MAX >> shift))
        return -1;
    v <<= shift;
    if (v > (unsigned long long)SIZE_MAX)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int parse_int(const char *s, int minv, int *out)
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

static void add_alg(options *o, const char *spec)
{
    if (strlen(spec) >= KB_NAME_LEN)
        bad_usage(o, "algorithm specification too long: \"%s\"", spec);
    if (o->nalgs == o->cap) {
        int cap = o->cap ? 2 * o->cap : 16;
        alg_entry *a = realloc(o->algs, (size_t)cap * sizeof(*a));
        if (!a)
            bad_usage(o, "out of memory%s", "");
        o->algs = a;
        o->cap = cap;
    }
    alg_entry *a = &o->algs[o->nalgs++];
    memset(a, 0, sizeof(*a));
    strcpy(a->spec, spec);
    strcpy(a->label, spec);
    a->native = strcmp(spec, "native") == 0;
    a->is_auto = strcmp(spec, "auto") == 0;
    a->is_memcpy = strcmp(spec, "memcpy") == 0;
}

/* "-a native,bruck:k=3,C=2,ring": a token holding '=' but no ':' is one
 * more parameter of the previous algorithm. */
static void parse_alg_list(options *o, const char *list)
{
    char buf[4096], spec[KB_NAME_LEN * 2] = "";
    if (strlen(list) >= sizeof(buf))
        bad_usage(o, "-a list too long%s", "");
    strcpy(buf, list);
    char *p = buf;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (*p == '\0')
            bad_usage(o, "empty algorithm name in -a \"%s\"", list);
        if (strchr(p, '=') && !strchr(p, ':')) {
            if (spec[0] == '\0' || !strchr(spec, ':'))
                bad_usage(o, "parameter \"%s\" in -a does not follow an algorithm name with ':'", p);
            if (strlen(spec) + strlen(p) + 2 > sizeof(spec))
                bad_usage(o, "algorithm specification too long in -a \"%s\"", list);
            strcat(spec, ",");
            strcat(spec, p);
        } else {
            if (spec[0])
                add_alg(o, spec);
            if (strlen(p) >= sizeof(spec))
                bad_usage(o, "algorithm specification too long: \"%s\"", p);
            strcpy(spec, p);
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    if (spec[0])
        add_alg(o, spec);
}

static void parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof(*o));
    o->min_size = KB_DEF_MIN;
    o->max_size = KB_DEF_MAX;
    o->iters = KB_DEF_ITERS;
    o->iters_large = KB_DEF_ITERS_LARGE;
    o->warmup = KB_DEF_WARMUP;
    o->warmup_large = KB_DEF_WARMUP_LARGE;
    const char *alist[64];
    int nalist = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout, o->coll);
            MPI_Finalize();
            exit(0);
        }
    }
    if (argc < 2 || argv[1][0] == '-')
        bad_usage(o, "the first argument must be a collective%s", "");
    for (int c = 0; c < NCOLLS; c++)
        if (strcmp(argv[1], colls[c].name) == 0)
            o->coll = &colls[c];
    if (!o->coll)
        bad_usage(o, "unknown collective \"%s\"", argv[1]);

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        char opt = 0;
        if (strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
            if (a[8] == '=')
                val = a + 9;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                bad_usage(o, "--format needs a value (text or json)%s", "");
            if (strcmp(val, "json") == 0)
                o->json = 1;
            else if (strcmp(val, "text") == 0)
                o->json = 0;
            else
                bad_usage(o, "unknown --format \"%s\" (text or json)", val);
            continue;
        }
        if (a[0] != '-' || a[1] == '\0' || a[1] == '-')
            bad_usage(o, "unexpected argument \"%s\"", a);
        /* getopt-style: flags may be bundled (-fc), a value may be attached (-i100, -fm1:64). */
        const char *p = a + 1;
        while (*p == 'f' || *p == 'c') {
            if (*p == 'f')
                o->full = 1;
            else
                o->check = 1;
            p++;
        }
        if (*p == '\0')
            continue;
        opt = *p;
        if (opt != 'm' && opt != 'i' && opt != 'x' && opt != 'a' && opt != 'r')
            bad_usage(o, "unknown option \"%s\"", a);
        if (p[1] != '\0')
            val = p + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            bad_usage(o, "option \"%s\" needs a value", a);

        switch (opt) {
        case 'm': {
            const char *colon = strchr(val, ':');
            size_t lo = KB_DEF_MIN, hi = KB_DEF_MAX;
            if (colon) {
                char minpart[64];
                size_t ml = (size_t)(colon - val);
                if (ml >= sizeof(minpart))
                    bad_usage(o, "bad -m \"%s\"", val);
                memcpy(minpart, val, ml);
                minpart[ml] = '\0';
                if (ml > 0 && parse_size(minpart, &lo))
                    bad_usage(o, "bad -m minimum in \"%s\"", val);
                if (colon[1] != '\0' && parse_size(colon + 1, &hi))
                    bad_usage(o, "bad -m maximum in \"%s\"", val);
            } else if (parse_size(val, &hi)) {
                bad_usage(o, "bad -m \"%s\" (expected [MIN:]MAX in bytes)", val);
            } else if (hi < lo) {
                lo = hi; /* "-m 0": only size 0 */
            }
            if (lo > hi)
                bad_usage(o, "-m \"%s\": MIN is larger than MAX", val);
            o->min_size = lo;
            o->max_size = hi;
            break;
        }
        case 'r':
            if (!o->coll->rooted)
                bad_usage(o, "-r: %s has no root", o->coll->name);
            if (parse_int(val, 0, &o->root))
                bad_usage(o, "bad -r \"%s\" (a rank >= 0)", val);
            o->root_set = 1;
            break;
        case 'i':
            if (parse_int(val, 1, &o->iters))
                bad_usage(o, "bad -i \"%s\" (an integer >= 1)", val);
            o->iters_large = o->iters;
            break;
        case 'x':
            if (parse_int(val, 0, &o->warmup))
                bad_usage(o, "bad -x \"%s\" (an integer >= 0)", val);
            o->warmup_large = o->warmup;
            break;
        case 'a':
            if (nalist == (int)(sizeof(alist) / sizeof(alist[0])))
                bad_usage(o, "too many -a options%s", "");
            alist[nalist++] = val;
            break;
        }
    }

    if (o->root_set) {
        int P;
        MPI_Comm_size(MPI_COMM_WORLD, &P);
        if (o->root >= P) {
            char v[32];
            snprintf(v, sizeof(v), "%d", o->root);
            bad_usage(o, "-r %s: not a rank (P is smaller)", v);
        }
    }
    if (o->coll->sizes == KB_SIZELESS)
        o->min_size = o->max_size = 0;

    if (nalist > 0) {
        for (int i = 0; i < nalist; i++)
            parse_alg_list(o, alist[i]);
    } else {
        add_alg(o, "native");
        if (o->coll->kcoll >= 0) {
            int n = kp_algorithm_count((enum kp_coll)o->coll->kcoll);
            for (int i = 0; i < n; i++) {
                const char *nm = kp_algorithm_name((enum kp_coll)o->coll->kcoll, i);
                if (nm && *nm)
                    add_alg(o, nm);
            }
            add_alg(o, "auto"); /* kport's default choice */
            if (o->coll->sizes != KB_SIZELESS)
                add_alg(o, "memcpy"); /* the copy the data must at least go through */
        }
    }

    /* Validate every kport specification now (same on every rank). */
    for (int i = 0; i < o->nalgs; i++) {
        alg_entry *a = &o->algs[i];
        if (a->native || a->is_memcpy)
            continue;
        if (o->coll->kcoll < 0)
            bad_usage(o, "kport has no algorithms for this collective; use -a native (got \"%s\")", a->spec);
        int rc = kp_set_algorithm((enum kp_coll)o->coll->kcoll, a->spec);
        if (rc != KP_SUCCESS) {
            char msg[KB_ERR_LEN + KB_NAME_LEN];
            snprintf(msg, sizeof(msg), "-a \"%s\": %s: %s", a->spec, kp_strerror(rc), kp_last_error());
            bad_usage(o, "%s", msg);
        }
    }
    if (o->coll->kcoll >= 0) {
        kp_set_algorithm((enum kp_coll)o->coll->kcoll, NULL);
        /* A forced algorithm that cannot apply must say so, whatever
         * KPORT_FALLBACK says: never measure a silent fallback. */
        kp_set_fallback(KP_FALLBACK_ERROR);
    }
}

/* ------------------------------------------------------------------------- */
/* Environment description                                                    */
/* ------------------------------------------------------------------------- */

/* "Open MPI 4.1.4", "MPICH 4.0.2", else the trimmed first line. */
static void mpi_library_name(char *out, size_t outlen)
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

/* Number of distinct hosts (MPI_Get_processor_name), and ranks per host. */
static void node_layout(MPI_Comm comm, int *hosts, int *rmin, int *rmax)
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

/* ------------------------------------------------------------------------- */
/* Measurement                                                                */
/* ------------------------------------------------------------------------- */

enum { RES_OK = 0, RES_NA, RES_ERR, RES_INVALID };

typedef struct result {
    int status;
    double median, min, avg, max; /* seconds */
    int iters;
    long long bad;                /* wrong bytes, summed over ranks (-c) */
    char ran[KB_NAME_LEN];        /* kp_last_algorithm (or "native") */
    int ran_known;                /* ran is what kport reported (not just the request) */
    char msg[KB_ERR_LEN];         /* why n/a or failed */
} result;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Give every rank the message of the lowest rank with mine != 0. */
static void share_message(char *msg, int mine, MPI_Comm sync)
{
    int rank, P, src;
    MPI_Comm_rank(sync, &rank);
    MPI_Comm_size(sync, &P);
    int cand = mine ? rank : P;
    MPI_Allreduce(&cand, &src, 1, MPI_INT, MPI_MIN, sync);
    if (src < P)
        MPI_Bcast(msg, KB_ERR_LEN, MPI_CHAR, src, sync);
}

static void summarize(const bench_ctx *cx, int iters, double *maxes, result *r)
{
    if (cx->rank == 0) {
        double sum = 0;
        for (int i = 0; i < iters; i++)
            sum += maxes[i];
        qsort(maxes, (size_t)iters, sizeof(double), cmp_double);
        r->min = maxes[0];
        r->max = maxes[iters - 1];
        r->avg = sum / iters;
        r->median = iters % 2 ? maxes[iters / 2] : 0.5 * (maxes[iters / 2 - 1] + maxes[iters / 2]);
    }
}

/* The reference column "memcpy": every rank copies as many bytes as its
 * receive buffer holds (all-gather and all-to-all: P*size; gather: P*size
 * at the root), from a buffer of its own into its receive buffer, timed
 * like the collectives (barrier before, maximum over ranks, median). */
static void run_memcpy(const options *o, bench_ctx *cx, int warm, int iters, double *times, double *maxes,
                       result *r, MPI_Comm sync)
{
    size_t sb = 0, rb = 0;
    if (o->coll->buffers)
        o->coll->buffers(cx->size, cx->P, &sb, &rb);
    if (o->coll->rooted)
        rb = (size_t)cx->P * cx->size; /* what the root receives */
    unsigned char *src = malloc(rb ? rb : 1);
    if (!src) {
        r->status = RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "out of memory for %zu bytes", rb);
        return;
    }
    memset(src, 0x5a, rb);
    for (int it = 0; it < warm + iters; it++) {
        MPI_Barrier(sync);
        double t0 = MPI_Wtime();
        memcpy(cx->rbuf, src, rb);
        double t1 = MPI_Wtime();
        if (it >= warm)
            times[it - warm] = t1 - t0;
    }
    free(src);
    snprintf(r->ran, sizeof(r->ran), "memcpy");
    r->ran_known = 1;
    r->iters = iters;
    MPI_Reduce(times, maxes, iters, MPI_DOUBLE, MPI_MAX, 0, sync);
    summarize(cx, iters, maxes, r);
}

static void run_one(const options *o, bench_ctx *cx, alg_entry *a, int warm, int iters, double *times,
                    double *maxes, result *r, MPI_Comm sync)
{
    const bench_coll *bc = o->coll;
    memset(r, 0, sizeof(*r));
    cx->native = a->native;
    cx->label = a->label;
    cx->reported = 0;
    snprintf(r->ran, sizeof(r->ran), "%s", a->native ? "native" : a->spec);
    if (a->is_memcpy) {
        run_memcpy(o, cx, warm, iters, times, maxes, r, sync);
        return;
    }
    if (!a->native) {
        int rc = kp_set_algorithm((enum kp_coll)bc->kcoll, a->spec);
        if (rc != KP_SUCCESS) { /* validated at startup; same on every rank */
            r->status = RES_ERR;
            snprintf(r->msg, sizeof(r->msg), "kp_set_algorithm: %s: %s", kp_strerror(rc), kp_last_error());
            return;
        }
    }

    /* kport records the algorithm only for calls that move data (a 0-byte
     * all-gather returns at once and leaves kp_last_algorithm as it was). */
    size_t sb = 0, rb = 0;
    int moves = !bc->buffers || (bc->buffers(cx->size, cx->P, &sb, &rb) == 0 && (sb > 0 || rb > 0));
    char errmsg[KB_ERR_LEN] = "";
    int failed = 0;
    long long bad = 0;
    int total = warm + iters;
    for (int it = 0; it < total; it++) {
        if (o->check && bc->fill)
            bc->fill(cx, it);
        MPI_Barrier(sync);
        double t0 = MPI_Wtime();
        int rc = bc->run(cx);
        double t1 = MPI_Wtime();
        if (rc != KP_SUCCESS && !failed) {
            const char *why = a->native ? "" : kp_last_error();
            failed = rc;
            if (rc == KP_ERR_UNSUPPORTED && why && *why)
                snprintf(errmsg, sizeof(errmsg), "%s", why);
            else
                snprintf(errmsg, sizeof(errmsg), "%s%s%s", kp_strerror(rc), why && *why ? ": " : "",
                         why ? why : "");
        }
        if (it == 0) {
            /* The first call decides: refused (n/a) or failed on any rank. */
            int code = rc == KP_SUCCESS ? 0 : rc == KP_ERR_UNSUPPORTED ? 1 : 2, gcode;
            MPI_Allreduce(&code, &gcode, 1, MPI_INT, MPI_MAX, sync);
            if (gcode != 0) {
                share_message(errmsg, code == gcode, sync);
                r->status = gcode == 1 ? RES_NA : RES_ERR;
                snprintf(r->msg, sizeof(r->msg), "%s", errmsg);
                return;
            }
            if (!a->native && !a->is_auto && moves) {
                const char *ran = kp_last_algorithm((enum kp_coll)bc->kcoll);
                if (ran && *ran) {
                    snprintf(r->ran, sizeof(r->ran), "%s", ran);
                    r->ran_known = 1;
                }
            }
        }
        if (o->check && bc->check)
            bad += bc->check(cx, it);
        if (it >= warm)
            times[it - warm] = t1 - t0;
    }
    if (o->check && bc->selftest) {
        /* untimed; only where every rank's timed calls succeeded */
        int lf0 = failed != 0, gf0;
        MPI_Allreduce(&lf0, &gf0, 1, MPI_INT, MPI_MAX, sync);
        if (!gf0) {
            int trc = KP_SUCCESS;
            bad += bc->selftest(cx, sync, &trc);
            if (trc != KP_SUCCESS) {
                const char *why = a->native ? "" : kp_last_error();
                failed = trc;
                snprintf(errmsg, sizeof(errmsg), "%s test: %s%s%s", bc->name, kp_strerror(trc),
                         why && *why ? ": " : "", why ? why : "");
            }
        }
    }
    if (a->is_auto && moves) { /* what auto chose at this size */
        const char *ran = kp_last_algorithm((enum kp_coll)bc->kcoll);
        snprintf(r->ran, sizeof(r->ran), "auto(%s)", ran && *ran ? ran : "?");
        r->ran_known = 1;
    }

    MPI_Reduce(times, maxes, iters, MPI_DOUBLE, MPI_MAX, 0, sync);
    int lf = failed != 0, gf;
    long long gbad;
    MPI_Allreduce(&lf, &gf, 1, MPI_INT, MPI_MAX, sync);
    MPI_Allreduce(&bad, &gbad, 1, MPI_LONG_LONG, MPI_SUM, sync);
    r->iters = iters;
    r->bad = gbad;
    if (gf) {
        share_message(errmsg, lf, sync);
        r->status = RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "%s", errmsg);
    } else if (gbad) {
        r->status = RES_INVALID;
        snprintf(r->msg, sizeof(r->msg), "%lld %s", gbad, bc->bad_unit);
    }
    summarize(cx, iters, maxes, r);
}

/* ------------------------------------------------------------------------- */
/* Output                                                                     */
/* ------------------------------------------------------------------------- */

static void json_string(FILE *f, const char *s)
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

static const char *status_name(int s)
{
    return s == RES_OK ? "ok" : s == RES_NA ? "n/a" : s == RES_ERR ? "error" : "invalid";
}

static void json_line(const options *o, const char *mpi, int P, int hosts, size_t size, const alg_entry *a,
                      const result *r)
{
    printf("{\"coll\":");
    json_string(stdout, o->coll->name);
    printf(",\"algorithm\":");
    json_string(stdout, a->is_auto ? "auto" : r->ran_known ? r->ran : a->label);
    printf(",\"requested\":");
    json_string(stdout, a->spec);
    if (a->is_auto) {
        printf(",\"ran\":");
        json_string(stdout, r->ran);
    }
    printf(",\"mpi\":");
    json_string(stdout, mpi);
    printf(",\"P\":%d,\"hosts\":%d,\"size\":%zu", P, hosts, size);
    if (o->coll->rooted)
        printf(",\"root\":%d", o->root);
    if (r->status == RES_OK || r->status == RES_INVALID)
        printf(",\"median_us\":%.3f,\"min_us\":%.3f,\"avg_us\":%.3f,\"max_us\":%.3f,\"iterations\":%d",
               r->median * 1e6, r->min * 1e6, r->avg * 1e6, r->max * 1e6, r->iters);
    else
        printf(",\"median_us\":null,\"min_us\":null,\"avg_us\":null,\"max_us\":null,\"iterations\":0");
    printf(",\"validated\":%s,\"status\":\"%s\"", o->check && r->status == RES_OK ? "true" : "false",
           status_name(r->status));
    if (o->check && r->status != RES_NA && r->status != RES_ERR)
        printf(",\"errors\":%lld", r->bad);
    if (r->status != RES_OK) {
        printf(",\"error\":");
        json_string(stdout, r->msg);
    }
    printf("}\n");
}

static int col_width(const alg_entry *a)
{
    int w = (int)strlen(a->label) + 2;
    return w < 12 ? 12 : w;
}

static void text_cell(const alg_entry *a, const result *r)
{
    char cell[32];
    switch (r->status) {
    case RES_OK: snprintf(cell, sizeof(cell), "%.2f", r->median * 1e6); break;
    case RES_NA: snprintf(cell, sizeof(cell), "n/a"); break;
    case RES_ERR: snprintf(cell, sizeof(cell), "ERROR"); break;
    default: snprintf(cell, sizeof(cell), "INVALID"); break;
    }
    printf("%*s", col_width(a), cell);
}

/* kport's node layout (real nodes split by KPORT_NODE_SIZE / KPORT_NODE_MAP):
 * "2 nodes of 2,2 ranks"; collective */
static void kport_layout(MPI_Comm comm, char *out, size_t len)
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

static char kport_nodes[256];

static void print_header(options *o, const char *mpi, int P, int hosts, int rmin, int rmax)
{
    const bench_coll *bc = o->coll;
    printf("# kport-bench %s\n", bc->name);
    printf("# MPI: %s\n", mpi);
    printf("# kport: %d.%d.%d\n", KPORT_VERSION_MAJOR, KPORT_VERSION_MINOR, KPORT_VERSION_PATCH);
    if (rmin == rmax)
        printf("# P = %d, node layout: %d host%s, %d rank%s per host\n", P, hosts, hosts == 1 ? "" : "s", rmin,
               rmin == 1 ? "" : "s");
    else
        printf("# P = %d, node layout: %d hosts, %d to %d ranks per host\n", P, hosts, rmin, rmax);
    printf("# kport node layout: %s\n", kport_nodes);
    printf("# Iterations: %d (%d above %d bytes), warmup: %d (%d above %d bytes), validation: %s\n", o->iters,
           o->iters_large, KB_LARGE_MSG, o->warmup, o->warmup_large, KB_LARGE_MSG, o->check ? "on" : "off");
    if (bc->rooted)
        printf("# Root: %d\n", o->root);
    printf("# Size: %s\n", bc->size_desc);
    if (o->check && bc->selftest == barrier_selftest)
        printf("# Validation: return codes of every call, and an untimed test per algorithm: each rank in turn\n"
               "#   is held back %g ms before entering; no other rank may leave the barrier before it enters\n",
               KB_BARRIER_DELAY * 1e3);
    printf("# Latency(us): median over iterations of the maximum over ranks\n");
    for (int ai = 0; ai < o->nalgs; ai++) {
        alg_entry *a = &o->algs[ai];
        if (a->native)
            printf("# %-28s %s\n", a->label, bc->native_call);
        else if (a->is_memcpy)
            printf("# %-28s reference: one memcpy of the receive buffer's bytes per rank (P*size)\n", a->label);
        else if (a->is_auto)
            printf("# %-28s kport automatic selection\n", a->label);
        else
            printf("# %-28s kport, forced \"%s\" (name as reported by kp_last_algorithm)\n", a->label, a->spec);
        if (a->na_msg[0]) {
            printf("#   n/a: %s\n", a->na_msg);
            a->na_noted = 1;
        }
    }
    printf("%-10s", "# Size");
    for (int ai = 0; ai < o->nalgs; ai++)
        printf("%*s", col_width(&o->algs[ai]), o->algs[ai].label);
    printf("\n");
}

/* ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    g_rank = rank;

    options o;
    parse_options(argc, argv, &o);
    const bench_coll *bc = o.coll;

    /* Sizes: OSU's MIN, 2*MIN, ... (0 first when MIN is 0). */
    int nsizes = 0;
    size_t sizes[80];
    {
        size_t s = o.min_size;
        if (s == 0) {
            sizes[nsizes++] = 0;
            s = 1;
        }
        while (s <= o.max_size && nsizes < 80) {
            sizes[nsizes++] = s;
            if (s > o.max_size / 2)
                break;
            s *= 2;
        }
    }
    size_t sbytes = 0, rbytes = 0;
    if (bc->buffers && bc->buffers(o.max_size, P, &sbytes, &rbytes))
        bad_usage(&o, "-m: maximum size too large for %s at this P", bc->native_call);

    bench_ctx cx;
    memset(&cx, 0, sizeof(cx));
    MPI_Comm sync;
    MPI_Comm_dup(MPI_COMM_WORLD, &sync);
    MPI_Comm_dup(MPI_COMM_WORLD, &cx.comm);
    cx.rank = rank;
    cx.P = P;
    cx.root = o.root;
    cx.sbuf_len = sbytes;
    cx.rbuf_len = rbytes;
    cx.sbuf = malloc(sbytes ? sbytes : 1);
    cx.rbuf = malloc(rbytes + KB_GUARD);
    int maxit = o.iters > o.iters_large ? o.iters : o.iters_large;
    double *times = malloc((size_t)maxit * sizeof(double));
    double *maxes = malloc((size_t)maxit * sizeof(double));
    result *res = calloc((size_t)o.nalgs * (size_t)nsizes, sizeof(result));
    int ok = cx.sbuf && cx.rbuf && times && maxes && res, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!gok) {
        if (rank == 0)
            fprintf(stderr, "kport-bench: cannot allocate buffers for %zu bytes (P = %d)\n", o.max_size, P);
        MPI_Finalize();
        return 1;
    }
    /* Touch the buffers once so first-touch page faults are not timed. */
    memset(cx.sbuf, 0, sbytes ? sbytes : 1);
    memset(cx.rbuf, 0, rbytes + KB_GUARD);

    char mpi[256];
    mpi_library_name(mpi, sizeof(mpi));
    int hosts, rmin, rmax;
    node_layout(MPI_COMM_WORLD, &hosts, &rmin, &rmax);
    kport_layout(MPI_COMM_WORLD, kport_nodes, sizeof(kport_nodes));

    int failures = 0;
    int labels_ready = 0, emitted = 0; /* sizes printed so far */
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        int large = size > KB_LARGE_MSG;
        int iters = large ? o.iters_large : o.iters;
        int warm = large ? o.warmup_large : o.warmup;
        cx.size = size;
        for (int ai = 0; ai < o.nalgs; ai++)
            run_one(&o, &cx, &o.algs[ai], warm, iters, times, maxes, &res[(size_t)ai * nsizes + si], sync);

        for (int ai = 0; ai < o.nalgs; ai++) {
            alg_entry *a = &o.algs[ai];
            result *r = &res[(size_t)ai * nsizes + si];
            /* Column label: what kport reported at the first size that moved data. */
            if (!labels_ready && r->status == RES_OK && r->ran_known && !a->is_auto)
                snprintf(a->label, sizeof(a->label), "%s", r->ran);
            if (r->status == RES_NA && a->na_msg[0] == '\0')
                snprintf(a->na_msg, sizeof(a->na_msg), "%s", r->msg);
            if (r->status == RES_ERR || r->status == RES_INVALID) {
                failures++;
                if (rank == 0)
                    fprintf(stderr, "kport-bench: %s %s, size %zu: %s: %s\n", bc->name, a->label, size,
                            r->status == RES_ERR ? "FAILED" : "VALIDATION FAILED", r->msg);
            }
        }
        /* Output waits until the labels are known (a 0-byte size reports none). */
        if (!labels_ready && (size > 0 || si == nsizes - 1)) {
            labels_ready = 1;
            if (rank == 0 && !o.json)
                print_header(&o, mpi, P, hosts, rmin, rmax);
        }
        if (!labels_ready || rank != 0)
            continue;
        for (; emitted <= si; emitted++) {
            if (o.json) {
                for (int ai = 0; ai < o.nalgs; ai++)
                    json_line(&o, mpi, P, hosts, sizes[emitted], &o.algs[ai], &res[(size_t)ai * nsizes + emitted]);
            } else {
                printf("%-10zu", sizes[emitted]);
                for (int ai = 0; ai < o.nalgs; ai++)
                    text_cell(&o.algs[ai], &res[(size_t)ai * nsizes + emitted]);
                printf("\n");
            }
        }
        fflush(stdout);
    }

    if (rank == 0 && !o.json) {
        for (int ai = 0; ai < o.nalgs; ai++) {
            alg_entry *a = &o.algs[ai];
            if (a->na_msg[0] && !a->na_noted)
                printf("# %s: n/a at some sizes: %s\n", a->label, a->na_msg);
            for (int si = 0; si < nsizes; si++) {
                const result *r = &res[(size_t)ai * nsizes + si];
                if (r->status == RES_OK && r->ran_known && !a->is_auto && strcmp(r->ran, a->label) != 0)
                    printf("# note: %s ran as %s at size %zu\n", a->label, r->ran, sizes[si]);
                if (r->status == RES_ERR || r->status == RES_INVALID)
                    printf("# %s, size %zu: %s: %s\n", a->label, sizes[si],
                           r->status == RES_ERR ? "FAILED" : "VALIDATION FAILED", r->msg);
            }
        }
        if (o.full) {
            for (int ai = 0; ai < o.nalgs; ai++) {
                alg_entry *a = &o.algs[ai];
                printf("\n# Algorithm: %s", a->label);
                if (a->native)
                    printf(" (%s)\n", bc->native_call);
                else
                    printf(" (kp_last_algorithm; requested \"%s\")\n", a->spec);
                printf("%-10s%20s%18s%18s%18s%12s\n", "# Size", "Median Latency(us)", "Avg Latency(us)",
                       "Min Latency(us)", "Max Latency(us)", "Iterations");
                int shown = 0; /* the refusal message, once per block */
                for (int si = 0; si < nsizes; si++) {
                    const result *r = &res[(size_t)ai * nsizes + si];
                    printf("%-10zu", sizes[si]);
                    if (r->status == RES_OK || r->status == RES_INVALID)
                        printf("%20.2f%18.2f%18.2f%18.2f%12d%s\n", r->median * 1e6, r->avg * 1e6, r->min * 1e6,
                               r->max * 1e6, r->iters, r->status == RES_INVALID ? "  INVALID" : "");
                    else if (r->status == RES_NA && !shown++)
                        printf("%20s  %s\n", "n/a", r->msg);
                    else if (r->status == RES_NA)
                        printf("%20s\n", "n/a");
                    else
                        printf("%20s  %s\n", "ERROR", r->msg);
                }
            }
        }
        if (o.check)
            printf("# Validation: %s\n", failures ? "FAILED" : "passed");
        fflush(stdout);
    }

    if (bc->kcoll >= 0)
        kp_set_algorithm((enum kp_coll)bc->kcoll, NULL);
    free(res);
    free(times);
    free(maxes);
    free(cx.sbuf);
    free(cx.rbuf);
    free(o.algs);
    MPI_Comm_free(&cx.comm);
    MPI_Comm_free(&sync);
    MPI_Finalize();
    return failures ? 1 : 0;
}
