/*
 * kport-bench rma: the one-sided transport's own costs (transport=rma,
 * src/exec/onesided.c), measured with the same MPI calls, between ranks 0 and 1.
 *
 *   mpirun -np P kport-bench rma [-m [MIN:]MAX] [-i N] [-x N] [-R RAILS,...]
 *                                [--flavour auto|shared|allocate] [--notify V,...] [-c] [--format json]
 *
 * Ranks 0 and 1 form a communicator (any other rank waits at the end);
 * windows are made as the transport makes them: one per rail, each with
 * two 64-byte counters (arrived, consumed) and MAX bytes of staging,
 * under Open MPI MPI_Win_allocate_shared when both ranks share a node,
 * else MPI_Win_allocate (--flavour auto: as kport does, src/exec/onesided.c;
 * shared / allocate force one), locked with
 * MPI_Win_lock_all for the run. Every measured interval starts after an
 * MPI_Barrier on another communicator; each row is the median (and the
 * minimum) over -i intervals (default 200; 50 above 64 KiB) after -x
 * warm-up ones (default 20; 5 above 64 KiB), the maximum over the two
 * ranks per interval. Sizes: -m MIN, 2*MIN, ... MAX (default 8:1M).
 *
 * Rows (JSON "what"):
 *   put      rank 0: MPI_Put of size bytes into rank 1's window, then
 *            MPI_Win_flush (data complete at the target): the origin's cost
 *            of one put, what a sender pays per piece before notifying.
 *   notify   the notification alone, one way: half the round trip of
 *            rank 0 writing a counter at rank 1 (MPI_Accumulate MPI_REPLACE
 *            + MPI_Win_flush), rank 1 seeing it (MPI_Fetch_and_op MPI_NO_OP
 *            + MPI_Win_flush on its own window, polled) and answering the
 *            same way. Size independent: one row, size 0.
 *   message  one message of size bytes as the transport moves it, one way
 *            (half a round trip, the answer the same message back): the
 *            sender puts the data (over R rails: R stripes through R
 *            windows, all in flight), flushes each rail, notifies; the
 *            receiver polls its counter, MPI_Win_sync, copies the data out
 *            of staging into its buffer and returns the credit. One row per
 *            rails count of -R (default 1,2,4); "gain" = the one-rail time
 *            / this one (the striping gain).
 *   p2p      the same message as kport's point-to-point executor moves it
 *            (MPI_Irecv posted first, MPI_Isend, MPI_Waitall), half a round
 *            trip: the reference the transport competes with.
 *
 * Notification variants (--notify, default acc; the notify and message
 * rows are measured once per variant, JSON "notify"): how a counter
 * (arrived, and the credit the same way) is written and seen:
 *   acc  MPI_Accumulate MPI_REPLACE + MPI_Win_flush; seen by polling
 *        MPI_Fetch_and_op MPI_NO_OP + MPI_Win_flush on the own window
 *        (kport's transport; accumulates on one location are atomic and,
 *        with the default accumulate_ordering, ordered)
 *   put  MPI_Put of the flag + MPI_Win_flush (after the data's flush); seen
 *        by polling MPI_Win_sync + a load of the own window's memory
 *        (unified model: a completed put is visible after MPI_Win_sync;
 *        an aligned 8-byte store lands whole on the hardware here, which
 *        MPI does not promise for a put read concurrently)
 *   fao  MPI_Fetch_and_op MPI_SUM +1 + MPI_Win_flush on a counter; seen by
 *        polling MPI_Fetch_and_op MPI_NO_OP (atomic read-modify-write)
 *   accl MPI_Accumulate MPI_REPLACE + flush; seen by MPI_Win_sync + a load
 *        (acc's cheap writer with put's cheap reader; the same caveat)
 * put and accl need Open MPI's shared windows (refused otherwise): MPICH
 * 4.0's windows, shared ones too, move a put only when the target calls
 * MPI, so a target polling its memory waits for ever. kport's transport uses put
 * with shared windows and acc elsewhere (src/exec/onesided.c, read_ctrl).
 *
 * Unlike kport, the transport here needs no ring: one message is in flight
 * at a time, so staging is never overwritten (the credit is still
 * returned, as its cost is part of a message).
 *
 * -c: every message carries the validation pattern of its sender and
 * interval (written before the interval) and every byte copied out or
 * received is compared after it; exit 1 on a mismatch.
 *
 * Output: a table (size; put; message over each rails count with its
 * gain; p2p; message / p2p) with the notification latency in the header,
 * or with --format json one object per row: "coll": "rma", "what",
 * "size", "rails" (message; 1 for put and notify, null for p2p),
 * "flavour", "mpi", "P", "median_us", "min_us", "iterations", "gain"
 * (message), "validated", "status", "errors".
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define RM_MAX_SIZES 40
#define RM_MAX_RAILS 8
#define RM_CTRL 128 /* arrived at 0, consumed at 64 */
#define RM_TAG 79

typedef struct rm_opts {
    size_t min, max;
    int iters, iters_large, warmup, warmup_large, check, json;
    int rails[RM_MAX_RAILS], nrails, maxrails;
    int flavour; /* -1 auto, 0 allocate, 1 shared */
    int notify[4], nnotify;
} rm_opts;

enum { N_ACC, N_PUT, N_FAO, N_ACCL };
static const char *nnames[] = {"acc", "put", "fao", "accl"};

typedef struct rm_state {
    MPI_Comm pair, sync;
    int me, peer;
    MPI_Win win[RM_MAX_RAILS];
    char *base[RM_MAX_RAILS];
    unsigned char *sbuf, *rbuf, *expect;
    int64_t sent, recvd, one; /* counters: notifications sent / seen; origin of accumulates */
    int64_t credits;          /* credits returned (fao adds 1, the others write the count) */
    int variant;              /* N_*: how counters are written and read */
    long long bad;
} rm_state;

static void usage(FILE *f, const void *arg)
{
    (void)arg;
    if (kb_rank != 0)
        return;
    fprintf(f, "Usage: kport-bench rma [-m [MIN:]MAX] [-i N] [-x N] [-R RAILS,...] [--flavour auto|shared|allocate]\n"
               "                       [-c] [--format json]\n"
               "The one-sided transport's costs between ranks 0 and 1: put + flush, the notification,\n"
               "one message over 1..R rails (striping gain) beside point-to-point. See tools/bench/rma.c.\n"
               "  -m [MIN:]MAX  message sizes, powers of two from MIN (default 8:1M)\n"
               "  -i N / -x N   timed / warm-up intervals per row (default 200 / 20; 50 / 5 above 64K)\n"
               "  -R LIST       rails counts for the message rows (default 1,2,4; 1..8)\n"
               "  --flavour F   auto (as kport: shared windows on one node under Open MPI), shared, allocate\n"
               "  --notify V,.. notification variants: acc (kport's), put, fao, accl (default acc)\n"
               "  -c            validate every byte moved; --format json: one object per row\n");
}

static _Noreturn void bad(const char *fmt, const char *arg)
{
    kb_bad_usage(usage, NULL, fmt, arg);
}

static void parse(int argc, char **argv, rm_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->min = 8;
    o->max = 1 << 20;
    o->iters = 200;
    o->iters_large = 50;
    o->warmup = 20;
    o->warmup_large = 5;
    o->flavour = -1;
    o->nnotify = 1;
    o->notify[0] = N_ACC;
    o->nrails = 3;
    o->rails[0] = 1, o->rails[1] = 2, o->rails[2] = 4;
    for (int i = 2; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout, NULL);
            MPI_Finalize();
            exit(0);
        }
        if ((v = kb_long_option(argc, argv, &i, "--format", usage, NULL))) {
            if (strcmp(v, "json") && strcmp(v, "text"))
                bad("unknown --format \"%s\" (text or json)", v);
            o->json = !strcmp(v, "json");
            continue;
        }
        if ((v = kb_long_option(argc, argv, &i, "--notify", usage, NULL))) {
            char buf[64];
            if (strlen(v) >= sizeof buf)
                bad("bad --notify \"%s\"", v);
            strcpy(buf, v);
            o->nnotify = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k = 0;
                while (k < 4 && strcmp(t, nnames[k]))
                    k++;
                if (k == 4 || o->nnotify == 4)
                    bad("bad --notify \"%s\" (acc, put, fao, accl, comma-separated)", v);
                o->notify[o->nnotify++] = k;
            }
            if (!o->nnotify)
                bad("bad --notify \"%s\"", v);
            continue;
        }
        if ((v = kb_long_option(argc, argv, &i, "--flavour", usage, NULL))) {
            if (!strcmp(v, "auto"))
                o->flavour = -1;
            else if (!strcmp(v, "shared"))
                o->flavour = 1;
            else if (!strcmp(v, "allocate"))
                o->flavour = 0;
            else
                bad("unknown --flavour \"%s\" (auto, shared or allocate)", v);
            continue;
        }
        if (!strcmp(argv[i], "-c")) {
            o->check = 1;
            continue;
        }
        if (strcmp(argv[i], "-m") && strcmp(argv[i], "-i") && strcmp(argv[i], "-x") && strcmp(argv[i], "-R"))
            bad("unknown option \"%s\"", argv[i]);
        if (i + 1 >= argc)
            bad("option \"%s\" needs a value", argv[i]);
        const char opt = argv[i][1];
        v = argv[++i];
        if (opt == 'm') {
            char lo[64] = "";
            const char *colon = strchr(v, ':');
            if (colon && (size_t)(colon - v) < sizeof lo)
                memcpy(lo, v, (size_t)(colon - v));
            if ((colon && (colon - v >= (long)sizeof lo || kb_parse_size(lo, &o->min) ||
                           kb_parse_size(colon + 1, &o->max))) ||
                (!colon && kb_parse_size(v, &o->max)) || o->min < 1 || o->min > o->max || o->max > (1u << 30))
                bad("bad -m \"%s\" ([MIN:]MAX, 1 <= MIN <= MAX <= 1G)", v);
        } else if (opt == 'i') {
            if (kb_parse_int(v, 1, &o->iters))
                bad("bad -i \"%s\" (an integer >= 1)", v);
            o->iters_large = o->iters;
        } else if (opt == 'x') {
            if (kb_parse_int(v, 0, &o->warmup))
                bad("bad -x \"%s\" (an integer >= 0)", v);
            o->warmup_large = o->warmup;
        } else {
            char buf[128];
            if (strlen(v) >= sizeof buf)
                bad("bad -R \"%s\"", v);
            strcpy(buf, v);
            o->nrails = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int r;
                if (kb_parse_int(t, 1, &r) || r > RM_MAX_RAILS || o->nrails == RM_MAX_RAILS)
                    bad("bad -R \"%s\" (rails counts 1..8, comma-separated)", v);
                o->rails[o->nrails++] = r;
            }
            if (!o->nrails)
                bad("bad -R \"%s\"", v);
        }
    }
    for (int j = 0; j < o->nrails; j++)
        if (o->rails[j] > o->maxrails)
            o->maxrails = o->rails[j];
}

/* ---- the transport's steps ---------------------------------------------------- */

static int64_t read_ctrl(rm_state *S, MPI_Aint disp)
{
    int64_t v = 0, dummy = 0;
    if (S->variant == N_PUT || S->variant == N_ACCL) {
        MPI_Win_sync(S->win[0]);
        return *(volatile int64_t *)(S->base[0] + disp);
    }
    MPI_Fetch_and_op(&dummy, &v, MPI_INT64_T, S->me, disp, MPI_NO_OP, S->win[0]);
    MPI_Win_flush(S->me, S->win[0]);
    return v;
}

/* counter at disp in the peer's window = v (fao: += 1, v being the old value + 1) */
static void write_ctrl(rm_state *S, MPI_Aint disp, int64_t v)
{
    int64_t old;
    S->one = S->variant == N_FAO ? 1 : v;
    if (S->variant == N_PUT)
        MPI_Put(&S->one, 1, MPI_INT64_T, S->peer, disp, 1, MPI_INT64_T, S->win[0]);
    else if (S->variant == N_FAO)
        MPI_Fetch_and_op(&S->one, &old, MPI_INT64_T, S->peer, disp, MPI_SUM, S->win[0]);
    else
        MPI_Accumulate(&S->one, 1, MPI_INT64_T, S->peer, disp, 1, MPI_INT64_T, MPI_REPLACE, S->win[0]);
    MPI_Win_flush(S->peer, S->win[0]);
}

/* one message of n bytes to the peer over r rails: put, flush, notify */
static void rma_send(rm_state *S, size_t n, int r)
{
    const size_t w = (n + (size_t)r - 1) / (size_t)r;
    for (int j = 0; j < r; j++) {
        const size_t so = (size_t)j * w, sl = so >= n ? 0 : n - so < w ? n - so : w;
        if (sl)
            MPI_Put(S->sbuf + so, (int)sl, MPI_BYTE, S->peer, RM_CTRL, (int)sl, MPI_BYTE, S->win[j]);
    }
    for (int j = 0; j < r; j++)
        MPI_Win_flush(S->peer, S->win[j]);
    write_ctrl(S, 0, ++S->sent);
}

/* wait for the next message, copy it out, return the credit */
static void rma_recv(rm_state *S, size_t n, int r)
{
    ++S->recvd;
    while (read_ctrl(S, 0) < S->recvd)
        ;
    for (int j = 0; j < r; j++)
        MPI_Win_sync(S->win[j]);
    const size_t w = (n + (size_t)r - 1) / (size_t)r;
    for (int j = 0; j < r; j++) {
        const size_t so = (size_t)j * w, sl = so >= n ? 0 : n - so < w ? n - so : w;
        if (sl)
            memcpy(S->rbuf + so, S->base[j] + RM_CTRL, sl);
    }
    write_ctrl(S, 64, S->recvd);
}

static void p2p_send(rm_state *S, size_t n)
{
    MPI_Send(S->sbuf, (int)n, MPI_BYTE, S->peer, RM_TAG, S->pair);
}

static void check(rm_state *S, const rm_opts *o, size_t n, int it)
{
    if (!o->check)
        return;
    kb_fill_pattern(S->expect, n, kb_rank_id(S->peer), it, 0);
    for (size_t i = 0; i < n; i++)
        S->bad += S->rbuf[i] != S->expect[i];
    memset(S->rbuf, 0, n);
}

enum { W_PUT, W_NOTIFY, W_MSG, W_P2P };

/* one row: returns median / min (seconds) of the max over ranks, on rank 0 */
static void measure(rm_state *S, const rm_opts *o, int what, size_t n, int r, double *times, double *maxes,
                    kb_stat *st, int *iters_out)
{
    const int large = n > 65536;
    const int iters = large ? o->iters_large : o->iters, warm = large ? o->warmup_large : o->warmup;
    for (int it = 0; it < warm + iters; it++) {
        if (o->check)
            kb_fill_pattern(S->sbuf, n, kb_rank_id(S->me), it, 0);
        MPI_Request rq = MPI_REQUEST_NULL;
        if (what == W_P2P)
            MPI_Irecv(S->rbuf, (int)n, MPI_BYTE, S->peer, RM_TAG, S->pair, &rq);
        MPI_Barrier(S->sync);
        double t0 = MPI_Wtime(), t1;
        switch (what) {
        case W_PUT:
            if (S->me == 0) {
                MPI_Put(S->sbuf, (int)n, MPI_BYTE, 1, RM_CTRL, (int)n, MPI_BYTE, S->win[0]);
                MPI_Win_flush(1, S->win[0]);
            }
            break;
        case W_NOTIFY:
            if (S->me == 0) {
                write_ctrl(S, 0, ++S->sent);
                ++S->recvd;
                while (read_ctrl(S, 0) < S->recvd)
                    ;
            } else {
                ++S->recvd;
                while (read_ctrl(S, 0) < S->recvd)
                    ;
                write_ctrl(S, 0, ++S->sent);
            }
            break;
        case W_MSG:
            if (S->me == 0) {
                rma_send(S, n, r);
                rma_recv(S, n, r);
            } else {
                rma_recv(S, n, r);
                rma_send(S, n, r);
            }
            break;
        default:
            if (S->me == 0) {
                p2p_send(S, n);
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
            } else {
                MPI_Wait(&rq, MPI_STATUS_IGNORE);
                p2p_send(S, n);
            }
            break;
        }
        t1 = MPI_Wtime();
        if (what == W_MSG || what == W_P2P) /* untimed: after the interval */
            check(S, o, n, it);
        if (it >= warm)
            times[it - warm] = what == W_PUT ? t1 - t0 : (t1 - t0) / 2; /* one way */
    }
    /* rank 1's interval ends before rank 0's (it answers last), so the
     * maximum is rank 0's round trip */
    kb_reduce_max(times, maxes, iters, S->pair);
    if (S->me == 0)
        *st = kb_stats(maxes, iters);
    *iters_out = iters;
}

static int rm_main(int argc, char **argv)
{
    rm_opts o;
    parse(argc, argv, &o);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P < 2)
        bad("needs at least 2 ranks (ranks 0 and 1 measure)%s", "");
    rm_state S;
    memset(&S, 0, sizeof S);
    const int in = kb_rank < 2;
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, kb_rank, &S.pair);
    int rc = 0;
    if (in) {
        MPI_Comm_dup(S.pair, &S.sync);
        S.me = kb_rank;
        S.peer = 1 - kb_rank;
        /* flavour: shared windows when both ranks share a node (as kport) */
        MPI_Comm node;
        int nsize;
        MPI_Comm_split_type(S.pair, MPI_COMM_TYPE_SHARED, S.me, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &nsize);
        MPI_Comm_free(&node);
#ifdef OPEN_MPI
        const int shared = o.flavour < 0 ? nsize == 2 : o.flavour;
#else
        const int shared = o.flavour < 0 ? 0 : o.flavour;
#endif
        if (shared && nsize != 2)
            bad("--flavour shared: ranks 0 and 1 are not on one node%s", "");
#ifdef OPEN_MPI
        const int polls_memory = shared;
#else
        const int polls_memory = 0;
#endif
        for (int v = 0; v < o.nnotify; v++)
            if (!polls_memory && (o.notify[v] == N_PUT || o.notify[v] == N_ACCL))
                bad("--notify %s polls memory: it needs Open MPI's shared windows (other windows, MPICH's shared "
                    "ones too, move a put in MPI's progress at the target: a target polling memory waits for ever)",
                    nnames[o.notify[v]]);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "accumulate_ops", "same_op_no_op");
        if (shared)
            MPI_Info_set(info, "alloc_shared_noncontig", "true");
        const MPI_Aint bytes = RM_CTRL + (MPI_Aint)o.max;
        for (int j = 0; j < o.maxrails; j++) {
            if (shared)
                MPI_Win_allocate_shared(bytes, 1, info, S.pair, &S.base[j], &S.win[j]);
            else
                MPI_Win_allocate(bytes, 1, info, S.pair, &S.base[j], &S.win[j]);
            memset(S.base[j], 0, RM_CTRL);
            MPI_Win_lock_all(MPI_MODE_NOCHECK, S.win[j]);
        }
        MPI_Info_free(&info);
        MPI_Barrier(S.pair);
        S.sbuf = malloc(o.max);
        S.rbuf = malloc(o.max);
        S.expect = malloc(o.max);
        const int maxit = o.iters > o.iters_large ? o.iters : o.iters_large;
        double *times = malloc((size_t)maxit * sizeof(double)), *maxes = malloc((size_t)maxit * sizeof(double));
        if (!S.sbuf || !S.rbuf || !S.expect || !times || !maxes) {
            fprintf(stderr, "kport-bench rma: out of memory for %zu-byte buffers\n", o.max);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memset(S.sbuf, 1, o.max);
        memset(S.rbuf, 0, o.max);
        char mpi[256];
        kb_mpi_library_name(mpi, sizeof mpi);
        const char *flav = shared ? "shared" : "allocate";
        kb_stat nst[4] = {{0}};
        int iters = 0;
        for (int v = 0; v < o.nnotify; v++) {
            S.variant = o.notify[v];
            measure(&S, &o, W_NOTIFY, 0, 1, times, maxes, &nst[v], &iters);
        }
        if (S.me == 0) {
            if (!o.json) {
                printf("# kport-bench rma\n# MPI: %s\n# P = %d (ranks 0 and 1 measure), windows: %s, rails: %d\n", mpi,
                       P, shared ? "MPI_Win_allocate_shared (one node)" : "MPI_Win_allocate", o.maxrails);
                printf("# Iterations: %d (%d above 65536 bytes), warmup: %d (%d), validation: %s\n", o.iters,
                       o.iters_large, o.warmup, o.warmup_large, o.check ? "on" : "off");
                for (int v = 0; v < o.nnotify; v++)
                    printf("# notify %-4s (%s), one way: median %.2f us, min %.2f us\n", nnames[o.notify[v]],
                           o.notify[v] == N_ACC   ? "MPI_Accumulate REPLACE + flush; polled MPI_Fetch_and_op NO_OP"
                           : o.notify[v] == N_PUT ? "MPI_Put + flush; polled MPI_Win_sync + load"
                           : o.notify[v] == N_FAO ? "MPI_Fetch_and_op SUM + flush; polled MPI_Fetch_and_op NO_OP"
                                                  : "MPI_Accumulate REPLACE + flush; polled MPI_Win_sync + load",
                           nst[v].median * 1e6, nst[v].min * 1e6);
                printf("# put: MPI_Put + MPI_Win_flush at the origin; msg rN: one message over N rails, one way\n"
                       "#   (put stripes, flush each rail, notify; receiver polls, syncs, copies out, returns\n"
                       "#   the credit), gain = msg r1 / msg rN; p2p: MPI_Isend/MPI_Irecv one way; medians, us\n");
                printf("%-10s%10s", "# Size", "put");
                for (int v = 0; v < o.nnotify; v++)
                    for (int j = 0; j < o.nrails; j++) {
                        char h[32];
                        snprintf(h, sizeof h, "%s r%d", o.nnotify > 1 ? nnames[o.notify[v]] : "msg", o.rails[j]);
                        printf("%10s", h);
                        if (o.rails[j] != 1) {
                            snprintf(h, sizeof h, "gain r%d", o.rails[j]);
                            printf("%9s", h);
                        }
                    }
                printf("%10s%10s\n", "p2p", "rma/p2p");
            }
            for (int v = 0; o.json && v < o.nnotify; v++) {
                printf("{\"coll\":\"rma\",\"what\":\"notify\",\"size\":0,\"rails\":1,\"notify\":\"%s\","
                       "\"flavour\":\"%s\",\"mpi\":",
                       nnames[o.notify[v]], flav);
                kb_json_string(stdout, mpi);
                printf(",\"P\":%d,\"median_us\":%.3f,\"min_us\":%.3f,\"iterations\":%d,\"validated\":%s,"
                       "\"status\":\"ok\",\"errors\":0}\n",
                       P, nst[v].median * 1e6, nst[v].min * 1e6, iters, o.check ? "true" : "false");
            }
            fflush(stdout);
        }
        for (size_t n = o.min; n <= o.max; n *= 2) {
            kb_stat put, p2p, msgs[4][RM_MAX_RAILS];
            int it_put, it_p2p, its[4][RM_MAX_RAILS];
            long long bad0 = S.bad, gbad;
            measure(&S, &o, W_PUT, n, 1, times, maxes, &put, &it_put);
            for (int v = 0; v < o.nnotify; v++) {
                S.variant = o.notify[v];
                for (int j = 0; j < o.nrails; j++)
                    measure(&S, &o, W_MSG, n, o.rails[j], times, maxes, &msgs[v][j], &its[v][j]);
            }
            S.variant = o.notify[0];
            measure(&S, &o, W_P2P, n, 1, times, maxes, &p2p, &it_p2p);
            long long mine = S.bad - bad0;
            MPI_Reduce(&mine, &gbad, 1, MPI_LONG_LONG, MPI_SUM, 0, S.pair);
            if (gbad)
                rc = 1;
            if (S.me == 0) {
                const kb_stat *msg = msgs[0]; /* the first variant's one-rail time: the gains' base */
                double one = msg[0].median;
                for (int j = 0; j < o.nrails; j++)
                    if (o.rails[j] == 1)
                        one = msg[j].median;
                if (o.json) {
                    const char *val = o.check && !gbad ? "true" : "false";
                    const char *stat = gbad ? "invalid" : "ok";
                    printf("{\"coll\":\"rma\",\"what\":\"put\",\"size\":%zu,\"rails\":1,\"flavour\":\"%s\",\"mpi\":", n,
                           flav);
                    kb_json_string(stdout, mpi);
                    printf(",\"P\":%d,\"median_us\":%.3f,\"min_us\":%.3f,\"iterations\":%d,\"validated\":%s,"
                           "\"status\":\"ok\",\"errors\":0}\n",
                           P, put.median * 1e6, put.min * 1e6, it_put, o.check ? "true" : "false");
                    for (int v = 0; v < o.nnotify; v++)
                        for (int j = 0; j < o.nrails; j++) {
                            const kb_stat *vm = msgs[v];
                            printf("{\"coll\":\"rma\",\"what\":\"message\",\"size\":%zu,\"rails\":%d,"
                                   "\"notify\":\"%s\",\"flavour\":\"%s\",\"mpi\":",
                                   n, o.rails[j], nnames[o.notify[v]], flav);
                            kb_json_string(stdout, mpi);
                            printf(",\"P\":%d,\"median_us\":%.3f,\"min_us\":%.3f,\"iterations\":%d,\"gain\":%.3f,"
                                   "\"validated\":%s,\"status\":\"%s\",\"errors\":%lld}\n",
                                   P, vm[j].median * 1e6, vm[j].min * 1e6, its[v][j],
                                   vm[j].median > 0 ? one / vm[j].median : 0.0, val, stat, gbad);
                        }
                    printf("{\"coll\":\"rma\",\"what\":\"p2p\",\"size\":%zu,\"rails\":null,\"flavour\":\"%s\",\"mpi\":",
                           n, flav);
                    kb_json_string(stdout, mpi);
                    printf(",\"P\":%d,\"median_us\":%.3f,\"min_us\":%.3f,\"iterations\":%d,\"validated\":%s,"
                           "\"status\":\"%s\",\"errors\":%lld}\n",
                           P, p2p.median * 1e6, p2p.min * 1e6, it_p2p, val, stat, gbad);
                } else {
                    printf("%-10zu%10.2f", n, put.median * 1e6);
                    for (int v = 0; v < o.nnotify; v++)
                        for (int j = 0; j < o.nrails; j++) {
                            const kb_stat *vm = msgs[v];
                            printf("%10.2f", vm[j].median * 1e6);
                            if (o.rails[j] != 1)
                                printf("%9.2f", vm[j].median > 0 ? one / vm[j].median : 0.0);
                        }
                    printf("%10.2f%10.2f\n", p2p.median * 1e6, p2p.median > 0 ? one / p2p.median : 0.0);
                }
                fflush(stdout);
            }
            if (n > o.max / 2)
                break;
        }
        if (S.me == 0 && !o.json && o.check)
            printf("# Validation: %s\n", rc ? "FAILED" : "passed");
        for (int j = 0; j < o.maxrails; j++) {
            MPI_Win_unlock_all(S.win[j]);
            MPI_Win_free(&S.win[j]);
        }
        free(S.sbuf);
        free(S.rbuf);
        free(S.expect);
        free(times);
        free(maxes);
        MPI_Comm_free(&S.sync);
        MPI_Comm_free(&S.pair);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

const kb_command kb_cmd_rma = {"rma", "the one-sided transport's costs: put, notification, striping, beside p2p", NULL,
                               rm_main};
