/*
 * kport-bench strided: strided one-sided put / get / accumulate, every kport
 * method beside ARMCI-MPI in one run.
 *
 *   mpirun -np P kport-bench strided [--ops put,get,acc] [--pattern one,pairs]
 *                                    [--shapes square,tall,wide] [-i N] [-x N] [-c]
 *                                    [--order blocks|interleave|seq|rev]
 *                                    [--state asleft|own|touched] [--format json]
 *   mpirun -np 2 kport-bench strided --calibrate [-o FILE]
 *
 * Sections are 2-D blocks of a row-major matrix (count = {chunk bytes,
 * rows}, strides = chunk + 64 bytes on both sides, the target block at
 * displacement 0 of a window of 8 MiB per rank):
 *   square  n x n doubles, n = 2, 8, 32, 128, 512 (8 B to 4 KiB chunks)
 *   tall    1024 rows of 8, 64, 512 bytes (many small chunks: packing's case)
 *   wide    4 rows of 64 KiB and 1 MiB (few long chunks)
 * Patterns: "one" (the paper's): rank 0 operates on every other rank in
 * turn, the others wait in kp_win_barrier / ARMCI_Barrier; "pairs": every
 * rank operates on every other rank (peer rank+d, d = 1..P-1) at once.
 * One measured interval: after a barrier of the window (untimed), the
 * operations of one rank to all its peers, each followed by its fence
 * (kp_win_fence / ARMCI_Fence: the data are at the target), divided by the
 * number of peers; the reported time is the median over iterations of the
 * maximum over ranks (rank 0's alone for "one").
 * Variants: kport's direct, datatype, pack (forced with
 * kp_strided_set_method) and auto, and "armci": ARMCI_PutS / ARMCI_GetS /
 * ARMCI_AccS on ARMCI_Malloc'd memory, when kport-bench was built with
 * ARMCI-MPI of the same MPI (libarmci-mpi-dev; else the column is absent
 * and the header says why).
 * Order (--order): blocks (default): rounds of up to 10 timed repetitions;
 * in each round every variant runs its -x warm-up repetitions then its
 * timed ones (direct, datatype, pack, armci, auto), so every variant is
 * timed in the state its own operations leave its buffers (as in a
 * program calling one library), drift of the machine hits all variants
 * alike, and auto and armci both follow the other library's window. The
 * default of 20 warm-ups is what that takes under MPICH 4.0: after
 * ARMCI-MPI's 4 MiB sections (4-5 ms each there) auto, running direct, was
 * 1.05-1.17x the direct column with 5 and 0.99-1.05x with 20
 * (docs/PERFORMANCE.md). interleave: each repetition runs every variant once;
 * seq / rev: all repetitions of one variant, then the next (direct first /
 * armci first; seq was the order before blocks). --state (untimed, before
 * each repetition): asleft (default), own (one more operation of the same
 * variant), touched (every rank reads its origin buffer and its memory of
 * the variant's window). interleave, seq, rev and --state are there to
 * show how much the order moves the 1 MiB rows (docs/PERFORMANCE.md).
 * Accumulate: doubles, scale 2.0.
 *
 * -c: after each variant's timed calls, a fresh check: put: the target
 * region zeroed, one put of the origin's pattern, every target byte (gaps
 * included) compared; get: the origin buffer poisoned, one get of the
 * target's pattern, every byte compared; acc: zeroed, one accumulate,
 * every element equal to 2 * source.
 *
 * Output: a table per (op, pattern): shape, chunk bytes, chunks, bytes, the
 * median microseconds of each variant, the method auto ran, auto / best
 * fixed method and armci / auto. --format json: one object per (op,
 * pattern, shape, variant): "coll": "strided", "op", "pattern", "shape",
 * "chunk_bytes", "chunks", "bytes", "variant", "ran" (auto: the method it
 * chose), "median_us", "min_us", "bandwidth_MBps", "P", "mpi", "validated",
 * "order", "errors", "status" ("ok" or "failed"), "rc" (the first failing KP_* code).
 *
 * --calibrate: at P = 2, measures the cost model's parameters between ranks
 * 0 and 1 (docs/PARAMETERS.md, "rma"): t0, tn, ts (direct puts of 1 x 8 B,
 * 1 x 1 MiB, 64 x 8 B), tm, tc (local packing), tp (pack of 8 bytes),
 * td0, td1, tdn (datatype puts of 2 and 4096 chunks of 8 B, 256 x 1 KiB),
 * and for accumulate ta0, tna, tsa (direct: 1 x 8 B, 4 x 256 KiB, 64 x 8 B),
 * tda0, tda1, tdna (datatype: 2 and 4096 x 8 B, 512 x 256 B) and tdnb
 * (256 x 8 KiB, beyond KP_SD_KNEE), then tpg (pack get of 8 bytes), tpn,
 * tpgn, tpc (pack put and get of 256 x 1 KiB, pack put of 4096 x 8 B),
 * after one untimed pass of the same, each timing the median of five timed
 * passes; each method's three timings fitted exactly; -o FILE merges them as the
 * "rma" object into FILE (kept otherwise as it is; created if absent),
 * which KPORT_PARAMS=FILE then makes auto use.
 */
#include "fit.h"
#include "harness.h"

#include "util/json.h"
#include "strided/strided.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef KPORT_HAVE_ARMCI
#include <armci.h>
#endif

#define WIN_BYTES ((MPI_Aint)8 << 20)
#define PAD 64
#define MAXV 5

enum { OP_PUT, OP_GET, OP_ACC, NOPS };
static const char *const op_names[NOPS] = {"put", "get", "acc"};
enum { PAT_ONE, PAT_PAIRS };
static const char *const var_names[MAXV] = {"direct", "datatype", "pack", "auto", "armci"};

typedef struct shape {
    const char *kind;
    MPI_Aint chunk, rows;
} shape;

static const shape all_shapes[] = {
    {"square", 16, 2},       {"square", 64, 8},       {"square", 256, 32}, {"square", 1024, 128},
    {"square", 4096, 512},   {"tall", 8, 1024},       {"tall", 64, 1024},  {"tall", 512, 1024},
    {"wide", 65536, 4},      {"wide", 1048576, 4},
};
#define NSHAPES ((int)(sizeof(all_shapes) / sizeof(all_shapes[0])))

enum { ORD_BLOCKS, ORD_INTERLEAVE, ORD_SEQ, ORD_REV };
static const char *const order_names[4] = {"blocks", "interleave", "seq", "rev"};
enum { ST_ASLEFT, ST_OWN, ST_TOUCHED };
static const char *const state_names[3] = {"asleft", "own", "touched"};

typedef struct opts {
    int ops[NOPS], pats[2], kinds[3];
    int iters, warmup, check, json, calibrate, order, state;
    const char *out;
} opts;

static kp_win win;
static char *wbase;
static int P, have_armci;
#ifdef KPORT_HAVE_ARMCI
static void **armci_base;
#endif

static void usage(FILE *f, const void *arg)
{
    (void)arg;
    if (kb_rank != 0)
        return;
    fprintf(f, "Usage: kport-bench strided [--ops put,get,acc] [--pattern one,pairs] [--shapes square,tall,wide]\n"
               "                           [-i N] [-x N] [-c] [--order blocks|interleave|seq|rev]\n"
               "                           [--state asleft|own|touched] [--format json]\n"
               "       kport-bench strided --calibrate [-o FILE]      (2 ranks)\n"
               "Strided put/get/accumulate of 2-D sections: kport's direct, datatype, pack and auto\n"
               "beside ARMCI-MPI's ARMCI_PutS/GetS/AccS; -i / -x timed / warm-up iterations\n"
               "(default 30 / 20; blocks: -x warm-up before every round); -c validates every variant;\n"
               "--order blocks (default): rounds of 10 timed repetitions per variant; --state: what\n"
               "runs before each repetition (untimed).\n");
}

static int parse_list(const char *s, const char *const *names, int n, int *sel)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", s);
    for (int i = 0; i < n; i++)
        sel[i] = 0;
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        int found = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(t, names[i]))
                sel[i] = found = 1;
        if (!found)
            return -1;
    }
    return 0;
}

/* ---- one operation ---------------------------------------------------------- */

typedef struct run {
    int op, var;
    const shape *sh;
    char *lbuf; /* origin buffer: rows * (chunk + PAD) */
} run;

static int do_op(const run *r, int peer)
{
    MPI_Aint count[2] = {r->sh->chunk, r->sh->rows}, st[1] = {r->sh->chunk + PAD};
    double two = 2.0;
    if (r->var < 4) {
        int rc;
        if (r->op == OP_PUT)
            rc = kp_put_strided(r->lbuf, st, 0, st, count, 1, peer, win);
        else if (r->op == OP_GET)
            rc = kp_get_strided(r->lbuf, st, 0, st, count, 1, peer, win);
        else
            rc = kp_acc_strided(KP_ACC_DOUBLE, &two, r->lbuf, st, 0, st, count, 1, peer, win);
        if (rc == KP_SUCCESS && r->op != OP_GET)
            rc = kp_win_fence(win, peer);
        return rc;
    }
#ifdef KPORT_HAVE_ARMCI
    int acount[2] = {(int)count[0], (int)count[1]}, ast[1] = {(int)st[0]};
    void *remote = armci_base[peer];
    if (r->op == OP_PUT)
        ARMCI_PutS(r->lbuf, ast, remote, ast, acount, 1, peer);
    else if (r->op == OP_GET)
        ARMCI_GetS(remote, ast, r->lbuf, ast, acount, 1, peer);
    else
        ARMCI_AccS(ARMCI_ACC_DBL, &two, r->lbuf, ast, remote, ast, acount, 1, peer);
    if (r->op != OP_GET)
        ARMCI_Fence(peer);
#endif
    return KP_SUCCESS;
}

static void var_barrier(int var)
{
#ifdef KPORT_HAVE_ARMCI
    if (var == 4) {
        ARMCI_Barrier();
        return;
    }
#endif
    (void)var;
    kp_win_barrier(win);
}

/* the local memory of the variant's window */
static char *var_base(int var)
{
#ifdef KPORT_HAVE_ARMCI
    if (var == 4)
        return armci_base[kb_rank];
#endif
    (void)var;
    return wbase;
}

static unsigned char pat(int rank, MPI_Aint i)
{
    return (unsigned char)(rank * 37 + (int)(i % 253) + 1);
}

/* -c: a fresh operation from rank 0 to peer (or from everyone, pairs) and a check */
static long long check_var(const run *r, int pattern)
{
    const shape *sh = r->sh;
    MPI_Aint st = sh->chunk + PAD, ext = st * (sh->rows - 1) + sh->chunk;
    long long bad = 0;
    char *base = var_base(r->var);
    int active = pattern == PAT_PAIRS || kb_rank == 0;
    int peer = (kb_rank + 1) % P;
#ifdef KPORT_HAVE_ARMCI
    if (r->var == 4)
        ARMCI_Access_begin(base);
#endif
    for (MPI_Aint i = 0; i < ext; i++)
        base[i] = r->op == OP_GET ? (char)pat(kb_rank, i) : 0;
#ifdef KPORT_HAVE_ARMCI
    if (r->var == 4)
        ARMCI_Access_end(base);
#endif
    for (MPI_Aint i = 0; i < ext; i++) {
        if (r->op == OP_ACC) {
            double v = (double)(i % 97);
            if (i % 8 == 0)
                memcpy(r->lbuf + i, &v, 8);
        } else {
            r->lbuf[i] = r->op == OP_GET ? (char)0xEE : (char)pat(kb_rank, i);
        }
    }
    var_barrier(r->var);
    if (active && P > 1 && do_op(r, peer) != KP_SUCCESS)
        bad++;
    var_barrier(r->var);
    int origin = (kb_rank - 1 + P) % P;
    int am_target = pattern == PAT_PAIRS || kb_rank == 1;
    if (r->op == OP_GET && active && P > 1) {
        for (MPI_Aint i = 0; i < ext; i++) {
            int in = i % st < sh->chunk;
            unsigned char want = in ? pat(peer, i) : 0xEE;
            bad += (unsigned char)r->lbuf[i] != want;
        }
    } else if (r->op != OP_GET && am_target && P > 1) {
#ifdef KPORT_HAVE_ARMCI
        if (r->var == 4)
            ARMCI_Access_begin(base);
#endif
        for (MPI_Aint i = 0; i < ext; i++) {
            int in = i % st < sh->chunk;
            if (r->op == OP_PUT) {
                unsigned char want = in ? pat(origin, i) : 0;
                bad += (unsigned char)base[i] != want;
            } else if (i % 8 == 0) {
                double got;
                memcpy(&got, base + i, 8);
                double want = in ? 2.0 * (double)(i % 97) : 0.0;
                bad += got != want;
            }
        }
#ifdef KPORT_HAVE_ARMCI
        if (r->var == 4)
            ARMCI_Access_end(base);
#endif
    }
    long long sum = 0;
    MPI_Allreduce(&bad, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

/* --state touched: every rank reads the section's extent of its origin
 * buffer and of its own memory of the variant's window before each
 * repetition (untimed): both in the caches of their owners */
static volatile unsigned char touch_sink;

static void touch(const run *r)
{
    MPI_Aint ext = (r->sh->chunk + PAD) * (r->sh->rows - 1) + r->sh->chunk;
    const unsigned char *a = (const unsigned char *)r->lbuf, *b = (const unsigned char *)var_base(r->var);
    unsigned char acc = 0;
#ifdef KPORT_HAVE_ARMCI
    if (r->var == 4)
        ARMCI_Access_begin(var_base(4));
#endif
    for (MPI_Aint i = 0; i < ext; i += 64)
        acc = (unsigned char)(acc + a[i] + b[i]);
#ifdef KPORT_HAVE_ARMCI
    if (r->var == 4)
        ARMCI_Access_end(var_base(4));
#endif
    touch_sink = acc;
}

/* One repetition of variant v: the state --state asks for (untimed), a
 * barrier, this rank's operations to all its peers with their fences.
 * Returns the time per peer (0 on a rank that only waits). */
static double one_rep(run *r, int v, int pattern, const opts *o, int *rc)
{
    int active = pattern == PAT_PAIRS || kb_rank == 0;
    if (v < 4)
        kp_strided_set_method(var_names[v]);
    if (o->state == ST_TOUCHED)
        touch(&r[v]);
    if (o->state == ST_OWN) {
        var_barrier(v);
        if (active)
            for (int d = 1; d < P && *rc == KP_SUCCESS; d++)
                *rc = do_op(&r[v], (kb_rank + d) % P);
    }
    var_barrier(v);
    double t0 = MPI_Wtime();
    if (active)
        for (int d = 1; d < P && *rc == KP_SUCCESS; d++)
            *rc = do_op(&r[v], (kb_rank + d) % P);
    double dt = (MPI_Wtime() - t0) / (P > 1 ? P - 1 : 1);
    /* untimed: the pack method's target unpacks in kp_win_barrier, which
     * the next variant's barrier may not be */
    if (o->order == ORD_BLOCKS || o->order == ORD_INTERLEAVE)
        var_barrier(v);
    return active ? dt : 0.0;
}

/* The variants' timed repetitions, in the order --order says:
 *   blocks (default): rounds of up to BLOCK timed repetitions; in each
 *     round every variant runs its -x warm-up repetitions, then its timed
 *     ones, in the order direct, datatype, pack, armci, auto: each variant
 *     is timed in the state its own operations leave (what a program
 *     calling one library sees), drift of the machine is spread over all
 *     variants, and auto and armci both follow the other library (a 4 MiB
 *     section on one window slows the next few operations on another);
 *   interleave: each repetition runs every variant once, the first one
 *     rotating (a variant then mostly follows the same other one: the
 *     four kport variants share a window and ARMCI-MPI follows a kport
 *     variant, unfair for sections that fill the caches; kept to show it);
 *   seq / rev: all repetitions of one variant, then the next, direct ..
 *     armci or armci .. direct (seq: the bench's order before blocks).
 * st[v]: median etc. over repetitions of the maximum over ranks; ran[v]:
 * the method auto ran; rcs[v]: the first failing KP_* code on any rank. */
#define BLOCK 10
static void measure(run *r, int nvar, int pattern, const opts *o, kb_stat *st, char ran[][16], int *rcs)
{
    int n = o->iters;
    double *t = malloc(sizeof(double) * (size_t)n * MAXV), *mx = malloc(sizeof(double) * (size_t)n);
    int rc[MAXV] = {0};
    if (o->order == ORD_BLOCKS) {
        /* the same cycle every round: armci after pack, auto after armci
         * (the compared pair both start on the other library's heels) */
        static const int cycle[MAXV] = {0, 1, 2, 4, 3};
        for (int round = 0; round * BLOCK < n; round++)
            for (int k = 0; k < MAXV; k++) {
                int v = cycle[k];
                if (v >= nvar)
                    continue;
                for (int it = round * BLOCK - o->warmup; it < n && it < (round + 1) * BLOCK; it++) {
                    double dt = one_rep(r, v, pattern, o, &rc[v]);
                    if (it >= round * BLOCK)
                        t[(size_t)v * (size_t)n + (size_t)it] = dt;
                }
                if (v == 3)
                    snprintf(ran[3], 16, "%s", kp_strided_last_method());
            }
    } else {
        int inter = o->order == ORD_INTERLEAVE, blocks = inter ? 1 : nvar;
        for (int b = 0; b < blocks; b++) {
            for (int it = -o->warmup; it < n; it++)
                for (int k = 0; k < (inter ? nvar : 1); k++) {
                    int v = inter ? (it + o->warmup + k) % nvar : o->order == ORD_SEQ ? b : nvar - 1 - b;
                    double dt = one_rep(r, v, pattern, o, &rc[v]);
                    if (v == 3)
                        snprintf(ran[3], 16, "%s", kp_strided_last_method());
                    if (it >= 0)
                        t[(size_t)v * (size_t)n + (size_t)it] = dt;
                }
            /* seq / rev: the variant's own barrier before the next one's
             * (auto may have run pack, whose target unpacks in it) */
            if (!inter)
                var_barrier(o->order == ORD_SEQ ? b : nvar - 1 - b);
        }
    }
    for (int v = 0; v < nvar; v++) {
        var_barrier(v);
        if (v != 3)
            snprintf(ran[v], 16, "%s", var_names[v]);
        kb_reduce_max(t + (size_t)v * (size_t)n, mx, n, MPI_COMM_WORLD);
        st[v] = kb_stats(mx, n);
        MPI_Bcast(&st[v], 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&rc[v], &rcs[v], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    }
    free(t);
    free(mx);
}

static void table_head(const opts *o, int op, int pattern, int nvar)
{
    if (kb_rank != 0 || o->json)
        return;
    printf("\n# %s, pattern %s (%s), P = %d; median us per operation incl. its fence\n", op_names[op],
           pattern == PAT_ONE ? "one" : "pairs",
           pattern == PAT_ONE ? "rank 0 to each other rank" : "every rank to every other", P);
    printf("%-7s %9s %6s %9s", "shape", "chunk_B", "chunks", "bytes");
    for (int v = 0; v < nvar; v++)
        printf(" %10s", var_names[v]);
    printf(" %9s %9s %9s\n", "auto_ran", "auto/best", nvar > 4 ? "armci/auto" : "");
}

static int bench_main(const opts *o)
{
    int nvar = have_armci ? 5 : 4;
    size_t lbytes = (size_t)WIN_BYTES;
    char *lbuf = malloc(lbytes);
    memset(lbuf, 1, lbytes);
    int failed = 0;
    char mpi[128];
    kb_mpi_library_name(mpi, sizeof(mpi));
    if (kb_rank == 0 && !o->json) {
        printf("# kport-bench strided: %s, P = %d, window %lld MiB per rank, strides = chunk + %d bytes\n", mpi, P,
               (long long)(WIN_BYTES >> 20), PAD);
#ifdef KPORT_HAVE_ARMCI
        const char *sm = getenv("ARMCI_STRIDED_METHOD");
        printf("# armci: ARMCI-MPI (libarmci-mpi-dev) of the same MPI, ARMCI_STRIDED_METHOD=%s\n", sm ? sm : "(default)");
#else
        printf("# armci: not built (%s)\n", KPORT_ARMCI_WHY);
#endif
        printf("# order: %s, state: %s\n", order_names[o->order], state_names[o->state]);
    }
    for (int op = 0; op < NOPS; op++) {
        if (!o->ops[op])
            continue;
        for (int pattern = 0; pattern < 2; pattern++) {
            if (!o->pats[pattern])
                continue;
            table_head(o, op, pattern, nvar);
            for (int si = 0; si < NSHAPES; si++) {
                const shape *sh = &all_shapes[si];
                int kind = !strcmp(sh->kind, "square") ? 0 : !strcmp(sh->kind, "tall") ? 1 : 2;
                if (!o->kinds[kind])
                    continue;
                kb_stat st[MAXV];
                char ran[MAXV][16];
                long long errs[MAXV] = {0};
                int rcs[MAXV] = {0};
                run r[MAXV];
                for (int v = 0; v < nvar; v++)
                    r[v] = (run){op, v, sh, lbuf};
                measure(r, nvar, pattern, o, st, ran, rcs);
                for (int v = 0; v < nvar; v++) {
                    if (o->check) {
                        if (v < 4)
                            kp_strided_set_method(var_names[v]);
                        errs[v] = check_var(&r[v], pattern);
                    }
                    if (rcs[v] || errs[v])
                        failed = 1;
                }
                kp_strided_set_method(NULL);
                int64_t bytes = (int64_t)sh->chunk * sh->rows;
                double best = st[0].median;
                for (int v = 1; v < 3; v++)
                    if (st[v].median < best)
                        best = st[v].median;
                if (kb_rank != 0)
                    continue;
                if (o->json) {
                    for (int v = 0; v < nvar; v++) {
                        printf("{\"coll\": \"strided\", \"op\": \"%s\", \"pattern\": \"%s\", \"shape\": \"%s\", "
                               "\"chunk_bytes\": %lld, \"chunks\": %lld, \"bytes\": %lld, \"variant\": \"%s\", "
                               "\"ran\": \"%s\", \"median_us\": %.3f, \"min_us\": %.3f, \"bandwidth_MBps\": %.1f, "
                               "\"P\": %d, \"order\": \"%s\", \"mpi\": ",
                               op_names[op], pattern == PAT_ONE ? "one" : "pairs", sh->kind, (long long)sh->chunk,
                               (long long)sh->rows, (long long)bytes, var_names[v], ran[v], st[v].median * 1e6,
                               st[v].min * 1e6, (double)bytes / st[v].median / 1e6, P, order_names[o->order]);
                        kb_json_string(stdout, mpi);
                        printf(", \"validated\": %s, \"errors\": %lld, \"status\": \"%s\", \"rc\": %d}\n",
                               o->check ? "true" : "false", errs[v], (errs[v] || rcs[v]) ? "failed" : "ok", rcs[v]);
                    }
                } else {
                    printf("%-7s %9lld %6lld %9lld", sh->kind, (long long)sh->chunk, (long long)sh->rows,
                           (long long)bytes);
                    for (int v = 0; v < nvar; v++)
                        printf(" %10.2f", st[v].median * 1e6);
                    printf(" %9s %9.2f", ran[3], st[3].median / best);
                    if (nvar > 4)
                        printf(" %9.2f", st[4].median / st[3].median);
                    for (int v = 0; v < nvar; v++)
                        if (errs[v] || rcs[v])
                            printf("  %s: %lld wrong bytes, rc %d", var_names[v], errs[v], rcs[v]);
                    printf("\n");
                }
                fflush(stdout);
            }
        }
    }
    free(lbuf);
    if (kb_rank == 0 && !o->json && o->check)
        printf("# validation: %s\n", failed ? "FAILED" : "every byte correct");
    return failed;
}

/* ---- calibration ------------------------------------------------------------ */

static double time_op(int op, int var, MPI_Aint chunk, MPI_Aint rows, char *lbuf)
{
    shape sh = {"cal", chunk, rows};
    run r = {op, var, &sh, lbuf};
    double v[41];
    kp_strided_set_method(var_names[var]);
    for (int it = -5; it < 41; it++) {
        kp_win_barrier(win);
        double t0 = MPI_Wtime();
        if (kb_rank == 0)
            do_op(&r, 1);
        if (it >= 0)
            v[it] = MPI_Wtime() - t0;
    }
    kp_win_barrier(win);
    kp_strided_set_method(NULL);
    kb_stat s = kb_stats(v, 41);
    return s.median * 1e9; /* ns */
}

static double time_pack_local(MPI_Aint chunk, MPI_Aint rows, char *lbuf, char *stream)
{
    kp_sd sd;
    kp_sd_side side;
    MPI_Aint count[2] = {chunk, rows}, st[1] = {chunk + PAD};
    kp_sd_counts(&sd, count, 1);
    kp_sd_strides(&sd, &side, st, "x");
    double v[41];
    for (int it = 0; it < 41; it++) {
        double t0 = MPI_Wtime();
        kp_sd_pack_range(&sd, &side, lbuf, 0, sd.total, stream);
        v[it] = MPI_Wtime() - t0;
    }
    return kb_stats(v, 41).median * 1e9;
}

static void json_emit(FILE *f, const kp_json *v, int depth)
{
    switch (v->type) {
    case KP_JSON_NULL: fprintf(f, "null"); break;
    case KP_JSON_BOOL: fprintf(f, v->boolean ? "true" : "false"); break;
    case KP_JSON_NUMBER:
        if (v->integral)
            fprintf(f, "%.0f", v->number);
        else
            fprintf(f, "%.17g", v->number);
        break;
    case KP_JSON_STRING: kb_json_string(f, v->string); break;
    case KP_JSON_ARRAY:
        fprintf(f, "[");
        for (int i = 0; i < v->n; i++) {
            fprintf(f, i ? ", " : "");
            json_emit(f, v->item[i], depth + 1);
        }
        fprintf(f, "]");
        break;
    default:
        fprintf(f, "{");
        for (int i = 0; i < v->n; i++) {
            fprintf(f, "%s\n%*s", i ? "," : "", 2 * (depth + 1), "");
            kb_json_string(f, v->key[i]);
            fprintf(f, ": ");
            json_emit(f, v->item[i], depth + 1);
        }
        fprintf(f, "\n%*s}", 2 * depth, "");
    }
}

/* the calibration's timings, in the order they are taken and printed */
enum {
    R_D1, R_D2, R_D3, R_M1, R_M2, R_P1, R_A1, R_A2, R_A3, R_E1, R_E2, R_E3,
    R_F1, R_F2, R_F3, R_F4, R_G1, R_P2, R_G2, R_P3, R_L1, R_L2, R_L3, R_LA1, R_LA2, R_LA3, NRAW
};
static const char *const raw_labels[NRAW] = {
    "put direct 1x8 B", "1x1 MiB", "64x8 B", "local pack 1x1 MiB", "4096x8 B", "pack 1x8 B",
    "datatype 2x8 B", "4096x8 B", "256x1 KiB", "acc direct 1x8 B", "4x256 KiB", "64x8 B",
    "datatype 2x8 B", "4096x8 B", "512x256 B", "256x8 KiB", "pack get 1x8 B", "put 256x1 KiB",
    "get 256x1 KiB", "put 4096x8 B", "put load/store 1x8 B", "1x1 MiB", "4096x8 B",
    "acc load/store 1x8 B", "1x1 MiB", "4096x8 B"};
/* timings taken on a shared window only (the last six) */
#define NRAW_MPI R_L1

/* One pass of the calibration: its timings (raw, ns). Each method's three
 * shapes lie where it competes (docs/PARAMETERS.md, "rma"). */
static void calibrate_measure(char *lbuf, char *stream, double *raw)
{
    /* direct put: 1 x 8 B, 1 x 1 MiB, 64 x 8 B (per operation where direct
     * competes, 2-128 chunks: an epoch of thousands costs MPICH 4.0 1.6x
     * more per operation, 165 against 105 ns) */
    const int ls = win->loadstore; /* a shared window: MPI operations here, load/store below */
    win->loadstore = 0;
    raw[R_D1] = time_op(OP_PUT, 0, 8, 1, lbuf);
    raw[R_D2] = time_op(OP_PUT, 0, 1 << 20, 1, lbuf);
    raw[R_D3] = time_op(OP_PUT, 0, 8, 64, lbuf);
    win->loadstore = ls;
    raw[R_M1] = time_pack_local(1 << 20, 1, lbuf, stream);
    raw[R_M2] = time_pack_local(8, 4096, lbuf, stream);
    raw[R_P1] = time_op(OP_PUT, 2, 8, 1, lbuf);
    /* datatype put: 2 x 8 B (a one-chunk type is contiguous, MPICH's fast
     * path, and auto never runs the datatype method on one chunk), 4096 x
     * 8 B, 256 x 1 KiB (rows where the datatype method competes; MPICH 4.0
     * moves 256 KiB rows at 0.12 ns/B in this process, 1 KiB ones at
     * 0.9-1.0) */
    raw[R_A1] = time_op(OP_PUT, 1, 8, 2, lbuf);
    raw[R_A2] = time_op(OP_PUT, 1, 8, 4096, lbuf);
    raw[R_A3] = time_op(OP_PUT, 1, 1024, 256, lbuf);
    /* accumulate (doubles, scale 2). Direct: 1 x 8 B, 4 x 256 KiB (MPICH 4.0
     * accumulates one 1 MiB operation at 0.63 ns/B, 256 KiB ones at 0.21),
     * 64 x 8 B. Datatype: 2 x 8 B, 4096 x 8 B, 512 x 256 B (MPICH 4.0's
     * datatype accumulate runs at 0.25-0.3 ns/B or at 0.6-0.7 as glibc's
     * mmap threshold stands, which moves with what the process freed
     * before: 512 x 256 B gave 0.29 in the calibrations, 0.53-0.72 in
     * another program; rows of 256 B are its most frequent speed), and
     * 256 x 8 KiB (2 MiB, beyond KP_SD_KNEE) */
    win->loadstore = 0;
    raw[R_E1] = time_op(OP_ACC, 0, 8, 1, lbuf);
    raw[R_E2] = time_op(OP_ACC, 0, 256 << 10, 4, lbuf);
    raw[R_E3] = time_op(OP_ACC, 0, 8, 64, lbuf);
    win->loadstore = ls;
    raw[R_F1] = time_op(OP_ACC, 1, 8, 2, lbuf);
    raw[R_F2] = time_op(OP_ACC, 1, 8, 4096, lbuf);
    raw[R_F3] = time_op(OP_ACC, 1, 256, 512, lbuf);
    raw[R_F4] = time_op(OP_ACC, 1, 8192, 256, lbuf);
    /* pack: a get of 8 B; a put and a get of 256 x 1 KiB (256 KiB in
     * several slots, rows where packing competes) and a put of 4096 x 8 B
     * (one slot), each up to its fence as every timing here: the packing,
     * the slot writes and as much of the far side's copy as does not
     * overlap them (the target unpacks slot i while the origin packs slot
     * i+1) */
    raw[R_G1] = time_op(OP_GET, 2, 8, 1, lbuf);
    raw[R_P2] = time_op(OP_PUT, 2, 1024, 256, lbuf);
    raw[R_G2] = time_op(OP_GET, 2, 1024, 256, lbuf);
    raw[R_P3] = time_op(OP_PUT, 2, 8, 4096, lbuf);
    /* direct by load/store (a shared window): 1 x 8 B, 1 x 1 MiB, 4096 x
     * 8 B (a copy of 8 B costs a few ns: 64 of them would be lost in the
     * fixed cost) */
    raw[R_L1] = raw[R_L2] = raw[R_L3] = raw[R_LA1] = raw[R_LA2] = raw[R_LA3] = 0;
    if (ls) {
        raw[R_L1] = time_op(OP_PUT, 0, 8, 1, lbuf);
        raw[R_L2] = time_op(OP_PUT, 0, 1 << 20, 1, lbuf);
        raw[R_L3] = time_op(OP_PUT, 0, 8, 4096, lbuf);
        /* the accumulate by load/store (doubles, scale 2), the same shapes */
        raw[R_LA1] = time_op(OP_ACC, 0, 8, 1, lbuf);
        raw[R_LA2] = time_op(OP_ACC, 0, 1 << 20, 1, lbuf);
        raw[R_LA3] = time_op(OP_ACC, 0, 8, 4096, lbuf);
    }
}

/* The parameters from the timings: each method's three fitted exactly. */
static void calibrate_fit(const double *raw, double *par)
{
    const double MiB = 1 << 20, K = 4096;
    kb_fit_cost3((const double[]){1, 1, 64}, (const double[]){8, MiB, 512},
                 (const double[]){raw[R_D1], raw[R_D2], raw[R_D3]}, &par[KP_SP_T0], &par[KP_SP_TS], &par[KP_SP_TN]);
    par[KP_SP_TM] = raw[R_M1] / MiB;
    par[KP_SP_TC] = fmax(0, (raw[R_M2] - par[KP_SP_TM] * 8 * K) / K);
    par[KP_SP_TP] = fmax(raw[R_P1], raw[R_D1]);
    kb_fit_cost3((const double[]){2, K, 256}, (const double[]){16, 8 * K, 256 * 1024},
                 (const double[]){raw[R_A1], raw[R_A2], raw[R_A3]}, &par[KP_SP_TD0], &par[KP_SP_TD1],
                 &par[KP_SP_TDN]);
    kb_fit_cost3((const double[]){1, 4, 64}, (const double[]){8, MiB, 512},
                 (const double[]){raw[R_E1], raw[R_E2], raw[R_E3]}, &par[KP_SP_TA0], &par[KP_SP_TSA],
                 &par[KP_SP_TNA]);
    kb_fit_cost3((const double[]){2, K, 512}, (const double[]){16, 8 * K, 128 * 1024},
                 (const double[]){raw[R_F1], raw[R_F2], raw[R_F3]}, &par[KP_SP_TDA0], &par[KP_SP_TDA1],
                 &par[KP_SP_TDNA]);
    /* beyond KP_SD_KNEE: 256 x 8 KiB, 2 MiB, less what the three above
     * predict for it (the model without tdnb; the slot size is the pack
     * method's only) */
    par[KP_SP_TDNB] = 0;
    par[KP_SP_TDNB] =
        fmax(0, (raw[R_F4] - kp_strided_cost_par(par, 1, 0, KP_M_DATATYPE, KP_SD_ACC, 256, 2 * (int64_t)MiB)) /
                    (2 * MiB - (double)KP_SD_KNEE));
    par[KP_SP_TPG] = fmax(raw[R_G1], par[KP_SP_TP]);
    /* per byte and per chunk from the two pack puts (a pack put of 8 B
     * rows costs MPICH 4.0's caller 2.7x tc a chunk, the local packing
     * alone), each less what the model predicts for it without those two
     * terms (its slots), solved together; the get's per byte from 256 x
     * 1 KiB with the same per-chunk cost */
    const int64_t pk = 256, pn = pk * 1024, ck = 4096, cn = ck * 8;
    par[KP_SP_TPN] = par[KP_SP_TPGN] = par[KP_SP_TPC] = 0;
    const double r2 = raw[R_P2] - kp_strided_cost_par(par, win->slot_bytes, 0, KP_M_PACK, KP_SD_PUT, pk, pn),
                 r3 = raw[R_P3] - kp_strided_cost_par(par, win->slot_bytes, 0, KP_M_PACK, KP_SD_PUT, ck, cn);
    /* r2 = tpn * pn + tpc * pk, r3 = tpn * cn + tpc * ck */
    const double det = (double)pn * (double)ck - (double)cn * (double)pk;
    par[KP_SP_TPC] = fmax(0, ((double)pn * r3 - (double)cn * r2) / det);
    par[KP_SP_TPN] = fmax(0, (r2 - par[KP_SP_TPC] * (double)pk) / (double)pn);
    par[KP_SP_TPGN] =
        fmax(0, (raw[R_G2] - kp_strided_cost_par(par, win->slot_bytes, 0, KP_M_PACK, KP_SD_GET, pk, pn)) / (double)pn);
    if (win->loadstore) {
        kb_fit_cost3((const double[]){1, 1, K}, (const double[]){8, MiB, 8 * K},
                     (const double[]){raw[R_L1], raw[R_L2], raw[R_L3]}, &par[KP_SP_TL0], &par[KP_SP_TLS],
                     &par[KP_SP_TLN]);
        kb_fit_cost3((const double[]){1, 1, K}, (const double[]){8, MiB, 8 * K},
                     (const double[]){raw[R_LA1], raw[R_LA2], raw[R_LA3]}, &par[KP_SP_TLA0], &par[KP_SP_TLAS],
                     &par[KP_SP_TLAN]);
    }
}

#define CAL_PASSES 5
static int calibrate(const opts *o)
{
    if (P != 2)
        kb_bad_usage(usage, NULL, "--calibrate needs exactly 2 ranks (got %s)", P > 2 ? "more" : "1");
    char *lbuf = malloc((size_t)WIN_BYTES), *stream = malloc((size_t)WIN_BYTES);
    memset(lbuf, 3, (size_t)WIN_BYTES);
    double par[KP_SP_COUNT] = {0}, raw[NRAW], passes[CAL_PASSES][NRAW];
    /* a whole pass untimed first: a fresh window's first operations are
     * slow (MPICH 4.0: a one-chunk put takes ~4 us for the first 25, ~2.7
     * for the next 25, 1.1 from the 50th on; Open MPI about 25 of 2x), and
     * the first shape's 5 warm-ups did not cover that: MPICH's t0 came out
     * 2.2 us against 0.8-1.1 in the bench, and auto ran datatype where
     * direct was 1.4-2x faster (docs/PERFORMANCE.md). Then CAL_PASSES
     * timed passes, each timing the median of its passes (one pass's
     * outlier moved Open MPI's td0 by 25 %, and auto off the datatype
     * method on put 64 x 8 B, 1.2-1.3x slower there) */
    calibrate_measure(lbuf, stream, raw);
    for (int k = 0; k < CAL_PASSES; k++)
        calibrate_measure(lbuf, stream, passes[k]);
    for (int i = 0; i < NRAW; i++) {
        double v[CAL_PASSES];
        for (int k = 0; k < CAL_PASSES; k++)
            v[k] = passes[k][i];
        raw[i] = kb_stats(v, CAL_PASSES).median;
    }
    calibrate_fit(raw, par);
    int rc = 0;
    if (kb_rank == 0) {
        char rma[1024];
        int len = snprintf(rma, sizeof(rma), "{");
        /* tl0 ... tlan only where they were measured (a shared window) */
        const int npar = win->loadstore ? KP_SP_COUNT : KP_SP_TL0;
        for (int i = 0; i < npar; i++)
            len += snprintf(rma + len, sizeof(rma) - (size_t)len, "%s\"%s\": %.6g", i ? ", " : "",
                            kp_strided_param_names[i], par[i]);
        snprintf(rma + len, sizeof(rma) - (size_t)len, "}");
        printf("# strided calibration (ns, medians of %d passes):", CAL_PASSES);
        for (int i = 0; i < (win->loadstore ? NRAW : NRAW_MPI); i++)
            printf("%s %s %.0f", i ? "," : "", raw_labels[i], raw[i]);
        printf("\n\"rma\": %s\n", rma);
        if (o->out) {
            kp_json *root = NULL;
            char *text;
            size_t got;
            const int rd = kp_json_read_file(o->out, 0, &text, &got);
            if (rd && rd != KP_READ_OPEN) { /* a file that is not there yet is written */
                fprintf(stderr, "kport-bench strided: cannot read %s; not written\n", o->out);
                rc = 1;
            } else if (!rd) {
                char err[256];
                root = kp_json_parse(text, got, err, sizeof(err));
                free(text);
                if (!root || root->type != KP_JSON_OBJECT) {
                    fprintf(stderr, "kport-bench strided: %s: not a JSON object (%s); not written\n", o->out,
                            root ? "another value" : err);
                    rc = 1;
                }
            }
            if (rc == 0) {
                char err[256];
                kp_json *nr = kp_json_parse(rma, strlen(rma), err, sizeof(err));
                FILE *w = fopen(o->out, "w");
                if (!w || !nr) {
                    fprintf(stderr, "kport-bench strided: cannot write %s\n", o->out);
                    rc = 1;
                } else {
                    fprintf(w, "{");
                    int first = 1;
                    if (!root)
                        fprintf(w, "\n  \"kport_params\": 1"), first = 0;
                    for (int i = 0; root && i < root->n; i++) {
                        if (!strcmp(root->key[i], "rma"))
                            continue;
                        fprintf(w, "%s\n  ", first ? "" : ",");
                        kb_json_string(w, root->key[i]);
                        fprintf(w, ": ");
                        json_emit(w, root->item[i], 1);
                        first = 0;
                    }
                    fprintf(w, "%s\n  \"rma\": ", first ? "" : ",");
                    json_emit(w, nr, 1);
                    fprintf(w, "\n}\n");
                    fclose(w);
                    printf("# wrote the \"rma\" object into %s\n", o->out);
                }
                kp_json_free(nr);
            }
            kp_json_free(root);
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(lbuf);
    free(stream);
    return rc;
}

static int strided_main(int argc, char **argv)
{
    opts o;
    memset(&o, 0, sizeof(o));
    o.iters = 30;
    o.warmup = 20;
    parse_list("put,get,acc", op_names, NOPS, o.ops);
    o.pats[0] = o.pats[1] = 1;
    o.kinds[0] = o.kinds[1] = o.kinds[2] = 1;
    static const char *const pat_names[2] = {"one", "pairs"}, *const kind_names[3] = {"square", "tall", "wide"};
    for (int i = 2; i < argc; i++) {
        const char *v;
        if ((v = kb_long_option(argc, argv, &i, "--ops", usage, NULL))) {
            if (parse_list(v, op_names, NOPS, o.ops))
                kb_bad_usage(usage, NULL, "bad --ops \"%s\" (put,get,acc)", v);
        } else if ((v = kb_long_option(argc, argv, &i, "--pattern", usage, NULL))) {
            if (parse_list(v, pat_names, 2, o.pats))
                kb_bad_usage(usage, NULL, "bad --pattern \"%s\" (one,pairs)", v);
        } else if ((v = kb_long_option(argc, argv, &i, "--shapes", usage, NULL))) {
            if (parse_list(v, kind_names, 3, o.kinds))
                kb_bad_usage(usage, NULL, "bad --shapes \"%s\" (square,tall,wide)", v);
        } else if ((v = kb_long_option(argc, argv, &i, "--order", usage, NULL))) {
            int sel[4];
            if (parse_list(v, order_names, 4, sel) || sel[0] + sel[1] + sel[2] + sel[3] != 1)
                kb_bad_usage(usage, NULL, "bad --order \"%s\" (blocks, interleave, seq or rev)", v);
            o.order = sel[1] ? ORD_INTERLEAVE : sel[2] ? ORD_SEQ : sel[3] ? ORD_REV : ORD_BLOCKS;
        } else if ((v = kb_long_option(argc, argv, &i, "--state", usage, NULL))) {
            int sel[3];
            if (parse_list(v, state_names, 3, sel) || sel[0] + sel[1] + sel[2] != 1)
                kb_bad_usage(usage, NULL, "bad --state \"%s\" (asleft, own or touched)", v);
            o.state = sel[1] ? ST_OWN : sel[2] ? ST_TOUCHED : ST_ASLEFT;
        } else if ((v = kb_long_option(argc, argv, &i, "--format", usage, NULL))) {
            if (strcmp(v, "json") && strcmp(v, "text"))
                kb_bad_usage(usage, NULL, "bad --format \"%s\" (json or text)", v);
            o.json = !strcmp(v, "json");
        } else if (!strcmp(argv[i], "-i") && i + 1 < argc) {
            if (kb_parse_int(argv[++i], 1, &o.iters))
                kb_bad_usage(usage, NULL, "bad -i \"%s\" (an integer >= 1)", argv[i]);
        } else if (!strcmp(argv[i], "-x") && i + 1 < argc) {
            if (kb_parse_int(argv[++i], 0, &o.warmup))
                kb_bad_usage(usage, NULL, "bad -x \"%s\" (an integer >= 0)", argv[i]);
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            o.out = argv[++i];
        } else if (!strcmp(argv[i], "-c")) {
            o.check = 1;
        } else if (!strcmp(argv[i], "--calibrate")) {
            o.calibrate = 1;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout, NULL);
            return 0;
        } else {
            kb_bad_usage(usage, NULL, "unknown option \"%s\"", argv[i]);
        }
    }
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    void *b;
    if (kp_win_create(WIN_BYTES, MPI_COMM_WORLD, &b, &win) != KP_SUCCESS) {
        if (kb_rank == 0)
            fprintf(stderr, "kport-bench strided: %s\n", kp_last_error());
        return 1;
    }
    wbase = b;
#ifdef KPORT_HAVE_ARMCI
    ARMCI_Init();
    armci_base = malloc(sizeof(void *) * (size_t)P);
    ARMCI_Malloc(armci_base, (armci_size_t)WIN_BYTES);
    have_armci = 1;
#endif
    int rc = o.calibrate ? calibrate(&o) : bench_main(&o);
#ifdef KPORT_HAVE_ARMCI
    ARMCI_Free(armci_base[kb_rank]);
    free(armci_base);
    ARMCI_Finalize();
#endif
    kp_win_free(&win);
    return rc;
}

const kb_command kb_cmd_strided = {"strided", "strided one-sided put/get/acc: kport's methods beside ARMCI-MPI", NULL,
                                   strided_main};
