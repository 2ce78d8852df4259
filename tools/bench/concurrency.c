/*
 * kport-bench concurrency: can the machine move several messages at once,
 * what do pending messages cost, and how do shared-memory copies compare
 * with MPI inside a node.
 *
 *   mpirun -np P kport-bench concurrency [-m SIZES] [-i N] [-x N] [-c] [--format json]
 *
 * Network concurrency and overhead (Mamidala et al., concurrent exchange
 * all-gather, section 4.1), rank 0 against peers 1..k, k = 1..P-1:
 *   all    rank 0 posts receives for k empty acknowledgements, starts k
 *          sends of `size` bytes (MPI_Isend, one to each of peers 1..k) and
 *          waits for all of them and every acknowledgement (a peer
 *          acknowledges after its MPI_Recv): T_all(k). "ratio" is
 *          T_all(k) / T_all(1): 1 when the k transfers overlap completely,
 *          k when they are serialised.
 *   first  the same k sends started, but rank 0 waits only for peer 1's
 *          send and acknowledgement (the rest completes untimed):
 *          T_first(k); "overhead" is T_first(k) - T_all(1), what the extra
 *          pending transfers cost the first.
 * Rank 0's own clock, after an MPI_Barrier on a communicator of the bench;
 * the two tests alternate run by run.
 *
 * Shared memory versus MPI inside a node (Qian and Afsahi, section 5.1),
 * on the ranks of rank 0's host (n of them, n >= 2):
 *   shm_p2p  half the round trip of a message through a shared segment:
 *            the sender copies into the segment and posts a flag (kport's
 *            protocol, tools/bench/probe.h), the receiver waits and copies
 *            out, and answers the same way
 *   mpi_p2p  half the round trip of MPI_Send / MPI_Recv between the same
 *            two ranks
 *   memcpy   k = 1..n ranks at once each copy `size` bytes from a private
 *            buffer into their own part of a shared segment (k-memcpy):
 *            the maximum over the k ranks of their copy time (the clock's
 *            own cost subtracted; copies of a few bytes are below its
 *            resolution of 10-20 ns); compare with
 *            k = 1 to see whether the copies share the memory bandwidth
 * Times are medians over -i runs (default 50, after -x warm-up runs,
 * default 5); -m: sizes, a list or MIN:MAX in powers of two (default
 * 8,1K,8K,64K,512K). More ranks than cores on a host: marked
 * "oversubscribed" (waiting ranks yield the CPU; times include it).
 *
 * -c: the messages of all/first carry the validation pattern of their
 * (sender, receiver) pair and run, checked by every peer; the last message
 * of shm_p2p and mpi_p2p and the last copy of memcpy are compared byte by
 * byte.
 *
 * --format json: one object per (test, k, size): "coll": "concurrency",
 * "test" (all, first, shm_p2p, mpi_p2p, memcpy), "k", "size", "median_us",
 * "min_us"; all: "ratio"; first: "overhead_us"; each with "mpi", "P",
 * "oversubscribed", "iterations", "validated", "status", "errors".
 */
#include "fit.h"
#include "harness.h"
#include "probe.h"

#include <stdlib.h>
#include <string.h>

#define CC_MAX_SIZES 32
#define TAG 79

typedef struct cc_opts {
    size_t sizes[CC_MAX_SIZES];
    int nsizes, iters, warmup, check, json;
} cc_opts;

typedef struct cc_stat {
    double median, min; /* ns */
} cc_stat;

static void usage(FILE *f, const void *arg)
{
    (void)arg;
    if (kb_rank != 0)
        return;
    fprintf(f, "Usage: kport-bench concurrency [-m SIZES] [-i N] [-x N] [-c] [--format json]\n"
               "Time to complete 1 versus k concurrent transfers to k peers, and the cost of pending\n"
               "transfers for the first; inside rank 0's host: a shared-memory copy (flag protocol)\n"
               "versus MPI versus k concurrent memcpy. -m: sizes, MIN:MAX or a list (default\n"
               "8,1K,8K,64K,512K); -i / -x: timed / warm-up runs (default 50 / 5); -c: validate.\n");
}

static void parse(int argc, char **argv, cc_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->iters = 50;
    o->warmup = 5;
    const char *m = "8,1K,8K,64K,512K";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val;
        if (kb_common_option(argc, argv, &i, usage, NULL, &o->json, &o->check))
            continue;
        if (strcmp(a, "-m") == 0 || strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0) {
            if (i + 1 >= argc)
                kb_bad_usage(usage, NULL, "option \"%s\" needs a value", a);
            val = argv[++i];
            if (a[1] == 'm')
                m = val;
            else if (a[1] == 'i' && (kb_parse_int(val, 1, &o->iters) || o->iters > 1000000))
                kb_bad_usage(usage, NULL, "bad -i \"%s\" (an integer 1..1000000)", val);
            else if (a[1] == 'x' && (kb_parse_int(val, 0, &o->warmup) || o->warmup > 1000000))
                kb_bad_usage(usage, NULL, "bad -x \"%s\" (an integer 0..1000000)", val);
        } else {
            kb_bad_usage(usage, NULL, "unknown option \"%s\"", a);
        }
    }
    o->nsizes = kb_size_option(m, o->sizes, CC_MAX_SIZES, usage, NULL);
}

static cc_stat stat_of(double *v, int n)
{
    cc_stat s;
    s.median = kb_median(v, n);
    s.min = v[0];
    return s;
}

static long long count_bad(const unsigned char *buf, size_t n, uint64_t id, int iter, unsigned char *scratch)
{
    kb_fill_pattern(scratch, n, id, iter, 0);
    long long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += buf[i] != scratch[i];
    return bad;
}

typedef struct cc_ctx {
    const cc_opts *o;
    const char *mpi;
    int P, oversub;
    unsigned char *sbuf, *rbuf, *scratch; /* sbuf: P * maxs on rank 0 */
    double *v[2];
    MPI_Request *reqs;
    double tc; /* the clock's own cost (ns), subtracted from memcpy times */
} cc_ctx;

static void record(const cc_ctx *c, const char *test, int k, size_t s, cc_stat st, const char *extra, double xval,
                   long long bad)
{
    if (kb_rank != 0)
        return;
    if (c->o->json) {
        printf("{\"coll\":\"concurrency\",\"test\":\"%s\",\"k\":%d,\"size\":%zu,\"median_us\":%.4f,\"min_us\":%.4f",
               test, k, s, st.median * 1e-3, st.min * 1e-3);
        if (extra)
            printf(",\"%s\":%.4f", extra, xval);
        printf(",\"mpi\":");
        kb_json_string(stdout, c->mpi);
        printf(",\"P\":%d,\"oversubscribed\":%s,\"iterations\":%d,\"validated\":%s,\"status\":\"%s\"", c->P,
               c->oversub ? "true" : "false", c->o->iters, c->o->check && !bad ? "true" : "false",
               bad ? "invalid" : "ok");
        if (c->o->check)
            printf(",\"errors\":%lld", bad);
        printf("}\n");
    }
}

/* ------------------------------------------------------------------------- */
/* all / first: rank 0 against peers 1..k                                    */
/* ------------------------------------------------------------------------- */

static long long run_k(cc_ctx *c, MPI_Comm comm, MPI_Comm sync, int k, size_t s, cc_stat *all, cc_stat *first)
{
    const cc_opts *o = c->o;
    int me;
    MPI_Comm_rank(comm, &me);
    long long bad = 0;
    for (int r = 0; r < o->warmup + o->iters; r++)
        for (int t = 0; t < 2; t++) {
            int test = (r + t) % 2; /* 0: all, 1: first; alternating order */
            int run = 2 * r + t;
            if (o->check && me == 0)
                for (int p = 1; p <= k; p++)
                    kb_fill_pattern(c->sbuf + (size_t)p * s, s, kb_pair_id(0, p), run, 0);
            MPI_Barrier(sync);
            if (me == 0) {
                MPI_Request *rq = c->reqs; /* [0..k): acks, [k..2k): sends */
                double t0 = kb_now_ns();
                for (int p = 1; p <= k; p++)
                    MPI_Irecv(NULL, 0, MPI_BYTE, p, TAG, comm, &rq[p - 1]);
                for (int p = 1; p <= k; p++)
                    MPI_Isend(c->sbuf + (size_t)p * s, (int)s, MPI_BYTE, p, TAG, comm, &rq[k + p - 1]);
                double t1;
                if (test == 0) {
                    MPI_Waitall(2 * k, rq, kb_statuses_ignore);
                    t1 = kb_now_ns();
                } else {
                    MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
                    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
                    t1 = kb_now_ns();
                    MPI_Waitall(2 * k, rq, kb_statuses_ignore);
                }
                if (r >= o->warmup)
                    c->v[test][r - o->warmup] = t1 - t0;
            } else if (me <= k) {
                MPI_Recv(c->rbuf, (int)s, MPI_BYTE, 0, TAG, comm, MPI_STATUS_IGNORE);
                MPI_Send(NULL, 0, MPI_BYTE, 0, TAG, comm);
                if (o->check)
                    bad += count_bad(c->rbuf, s, kb_pair_id(0, me), run, c->scratch);
            }
        }
    long long gbad;
    MPI_Allreduce(&bad, &gbad, 1, MPI_LONG_LONG, MPI_SUM, comm);
    if (me == 0) {
        *all = stat_of(c->v[0], o->iters);
        *first = stat_of(c->v[1], o->iters);
    }
    return gbad;
}

/* ------------------------------------------------------------------------- */
/* inside rank 0's host                                                       */
/* ------------------------------------------------------------------------- */

/* shm_p2p and mpi_p2p between node ranks 0 and 1; memcpy for k = 1..n */
static long long run_node(cc_ctx *c, MPI_Comm node, kb_seg *seg, size_t s, int si, cc_stat *shm, cc_stat *mp,
                          cc_stat *mc)
{
    const cc_opts *o = c->o;
    int me, n;
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &n);
    long long bad = 0;
    static uint64_t seq;
    unsigned char *priv = c->sbuf, *into = c->rbuf;
    /* shm_p2p: ranks 0 and 1; flags count up */
    MPI_Barrier(node);
    if (me < 2) {
        kb_fill_pattern(priv, s, kb_pair_id(me, 1 - me), si, 0);
        for (int r = 0; r < o->warmup + o->iters; r++) {
            double t0 = kb_now_ns();
            if (me == 0) {
                memcpy(seg->data, priv, s);
                kb_seg_post(seg, ++seq);
                kb_seg_wait(seg, 1, ++seq);
                memcpy(into, seg->data, s);
            } else {
                ++seq;
                kb_seg_wait(seg, 0, seq);
                memcpy(into, seg->data, s);
                memcpy(seg->data, priv, s);
                kb_seg_post(seg, ++seq);
            }
            if (r >= o->warmup)
                c->v[0][r - o->warmup] = (kb_now_ns() - t0) / 2;
        }
        if (o->check)
            bad += count_bad(into, s, kb_pair_id(1 - me, me), si, c->scratch);
        if (me == 0)
            *shm = stat_of(c->v[0], o->iters);
        /* mpi_p2p */
        for (int r = 0; r < o->warmup + o->iters; r++) {
            double t0 = kb_now_ns();
            if (me == 0) {
                MPI_Send(priv, (int)s, MPI_BYTE, 1, TAG, node);
                MPI_Recv(into, (int)s, MPI_BYTE, 1, TAG, node, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(into, (int)s, MPI_BYTE, 0, TAG, node, MPI_STATUS_IGNORE);
                MPI_Send(priv, (int)s, MPI_BYTE, 0, TAG, node);
            }
            if (r >= o->warmup)
                c->v[0][r - o->warmup] = (kb_now_ns() - t0) / 2;
        }
        if (o->check)
            bad += count_bad(into, s, kb_pair_id(1 - me, me), si, c->scratch);
        if (me == 0)
            *mp = stat_of(c->v[0], o->iters);
    }
    /* memcpy: k ranks at once into their own part of the segment */
    double *maxes = c->v[1];
    kb_fill_pattern(priv, s, kb_rank_id(me), si, 0);
    for (int k = 1; k <= n; k++) {
        for (int r = 0; r < o->warmup + o->iters; r++) {
            MPI_Barrier(node);
            double t = 0;
            if (me < k) {
                double t0 = kb_now_ns();
                memcpy(seg->data + (size_t)me * s, priv, s);
                t = kb_now_ns() - t0 - c->tc;
            }
            if (r >= o->warmup)
                c->v[0][r - o->warmup] = t;
        }
        MPI_Reduce(c->v[0], maxes, o->iters, MPI_DOUBLE, MPI_MAX, 0, node);
        if (me == 0)
            mc[k - 1] = stat_of(maxes, o->iters);
        if (o->check && me < k)
            bad += count_bad(seg->data + (size_t)me * s, s, kb_rank_id(me), si, c->scratch);
    }
    long long gbad;
    MPI_Allreduce(&bad, &gbad, 1, MPI_LONG_LONG, MPI_SUM, node);
    return gbad;
}

static int concurrency_main(int argc, char **argv)
{
    cc_opts o;
    parse(argc, argv, &o);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P < 2)
        kb_bad_usage(usage, NULL, "concurrency needs at least 2 ranks%s", "");
    size_t maxs = o.sizes[o.nsizes - 1];
    if (maxs > ((size_t)1 << 30) / (size_t)P)
        kb_bad_usage(usage, NULL, "-m: sizes times ranks must stay below 1 GiB%s", "");

    cc_ctx c;
    memset(&c, 0, sizeof(c));
    c.o = &o;
    c.P = P;
    char mpi[256];
    kb_mpi_library_name(mpi, sizeof(mpi));
    c.mpi = mpi;
    int cores;
    c.oversub = kb_oversubscribed(MPI_COMM_WORLD, &cores);
    c.tc = kb_timer_cost_ns();
    c.sbuf = malloc(maxs * (size_t)P);
    c.rbuf = malloc(maxs);
    c.scratch = malloc(maxs);
    c.v[0] = malloc((size_t)o.iters * sizeof(double));
    c.v[1] = malloc((size_t)o.iters * sizeof(double));
    c.reqs = malloc(2 * (size_t)P * sizeof(MPI_Request));
    int *host = malloc((size_t)P * sizeof(int));
    cc_stat *mc = malloc((size_t)P * sizeof(cc_stat));
    int ok = c.sbuf && c.rbuf && c.scratch && c.v[0] && c.v[1] && c.reqs && host && mc, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!gok) {
        if (kb_rank == 0)
            fprintf(stderr, "kport-bench: concurrency: cannot allocate buffers of %zu bytes\n", maxs * (size_t)P);
        return 1;
    }
    memset(c.sbuf, 0, maxs * (size_t)P);
    memset(c.rbuf, 0, maxs);
    kb_host_map(MPI_COMM_WORLD, host);

    if (kb_rank == 0 && !o.json) {
        printf("# kport-bench concurrency\n# MPI: %s\n# P = %d, %d cores per host%s; %d timed runs (+%d warm-up); "
               "validation: %s\n",
               mpi, P, cores, c.oversub ? " (OVERSUBSCRIBED: more ranks than cores)" : "", o.iters, o.warmup,
               o.check ? "on" : "off");
        printf("# all(k): rank 0 sends to peers 1..k at once, waits for every send and ack; ratio = all(k)/all(1)\n"
               "# first(k): the same k sends, waiting for peer 1's only; overhead = first(k) - all(1); medians, us\n");
        printf("%-6s%10s%12s%10s%12s%14s\n", "# k", "size(B)", "all(us)", "ratio", "first(us)", "overhead(us)");
        fflush(stdout);
    }
    MPI_Comm sync;
    MPI_Comm_dup(MPI_COMM_WORLD, &sync);
    int failures = 0;
    cc_stat all1[CC_MAX_SIZES];
    for (int k = 1; k < P; k++) /* k = 1 first: the reference of every ratio */
        for (int i = 0; i < o.nsizes; i++) {
            size_t s = o.sizes[i];
            cc_stat all = {0, 0}, first = {0, 0};
            long long bad = run_k(&c, MPI_COMM_WORLD, sync, k, s, &all, &first);
            failures += bad != 0;
            if (kb_rank != 0)
                continue;
            if (k == 1)
                all1[i] = all;
            if (bad)
                fprintf(stderr, "kport-bench: concurrency k = %d, %zu B: %lld wrong bytes\n", k, s, bad);
            double ratio = all1[i].median > 0 ? all.median / all1[i].median : 0;
            double over = (first.median - all1[i].median) * 1e-3;
            record(&c, "all", k, s, all, "ratio", ratio, bad);
            record(&c, "first", k, s, first, "overhead_us", over, bad);
            if (!o.json)
                printf("%-6d%10zu%12.3f%10.2f%12.3f%14.3f%s\n", k, s, all.median * 1e-3, ratio, first.median * 1e-3,
                       over, bad ? "  INVALID" : "");
            fflush(stdout);
        }

    /* inside rank 0's host */
    MPI_Comm node;
    MPI_Comm_split(MPI_COMM_WORLD, host[kb_rank] == host[0] ? 0 : MPI_UNDEFINED, kb_rank, &node);
    if (node != MPI_COMM_NULL) {
        int n;
        MPI_Comm_size(node, &n);
        kb_seg seg;
        if (n < 2) {
            if (kb_rank == 0 && !o.json)
                printf("# node tests: rank 0 is alone on its host, skipped\n");
        } else if (kb_seg_open(node, maxs * (size_t)n, c.oversub, &seg)) {
            if (kb_rank == 0)
                fprintf(stderr, "kport-bench: concurrency: cannot allocate a shared segment of %zu bytes\n",
                        maxs * (size_t)n);
            failures++;
        } else {
            if (kb_rank == 0 && !o.json) {
                printf("# inside rank 0's host (%d ranks): one-way time of a message (half a round trip) through a\n"
                       "#   shared segment (copy in, flag, copy out) and through MPI; k-memcpy: k ranks copy at once\n"
                       "#   into their parts of a shared segment (max over the k); medians, us\n",
                       n);
                printf("%-10s%12s%12s", "# size(B)", "shm_p2p", "mpi_p2p");
                for (int k = 1; k <= n; k++) {
                    char h[32];
                    snprintf(h, sizeof(h), "%d-memcpy", k);
                    printf("%12s", h);
                }
                printf("\n");
            }
            for (int i = 0; i < o.nsizes; i++) {
                size_t s = o.sizes[i];
                cc_stat shm = {0, 0}, mp = {0, 0};
                long long bad = run_node(&c, node, &seg, s, i, &shm, &mp, mc);
                failures += bad != 0;
                if (kb_rank != 0)
                    continue;
                if (bad)
                    fprintf(stderr, "kport-bench: concurrency node tests, %zu B: %lld wrong bytes\n", s, bad);
                record(&c, "shm_p2p", 1, s, shm, NULL, 0, bad);
                record(&c, "mpi_p2p", 1, s, mp, NULL, 0, bad);
                for (int k = 1; k <= n; k++)
                    record(&c, "memcpy", k, s, mc[k - 1], NULL, 0, bad);
                if (!o.json) {
                    printf("%-10zu%12.3f%12.3f", s, shm.median * 1e-3, mp.median * 1e-3);
                    for (int k = 1; k <= n; k++)
                        printf("%12.3f", mc[k - 1].median * 1e-3);
                    printf("%s\n", bad ? "  INVALID" : "");
                }
                fflush(stdout);
            }
            kb_seg_close(&seg);
        }
        MPI_Comm_free(&node);
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (kb_rank == 0 && !o.json && o.check)
        printf("# Validation: %s\n", failures ? "FAILED" : "passed");
    MPI_Comm_free(&sync);
    free(c.sbuf);
    free(c.rbuf);
    free(c.scratch);
    free(c.v[0]);
    free(c.v[1]);
    free(c.reqs);
    free(host);
    free(mc);
    return failures ? 1 : 0;
}

const kb_command kb_cmd_concurrency = {"concurrency",
                                       "1 versus k concurrent transfers, pending-transfer overhead, shm vs MPI vs "
                                       "k-memcpy",
                                       NULL, concurrency_main};
