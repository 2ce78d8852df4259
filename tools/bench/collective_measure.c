/*
 * kport-bench's collective runner: the measurement of one (algorithm,
 * size) over the rounds. The timed loops (isolated calls; back-to-back
 * batches and the rewrite they subtract), the reference columns memcpy,
 * sendrecv and bw_limit, the first call that decides n/a or failure, and after the last
 * round the -c self-test and the statistics over the ranks' times. The
 * timing rules are the manual at the top of collective.c.
 */
#include "collective.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The reference column "memcpy": every rank copies as many bytes as its
 * receive buffer holds (all-gather and all-to-all: P*size; gather: P*size
 * at the root), from a buffer of its own into its receive buffer, timed
 * like the collectives (barrier before, maximum over ranks, median). */
static size_t memcpy_bytes(const options *o, const kb_ctx *cx)
{
    if (o->coll->copy_bytes)
        return o->coll->copy_bytes(cx->size, cx->P);
    size_t sb = 0, rb = 0;
    if (o->coll->buffers)
        o->coll->buffers(cx->size, cx->P, &sb, &rb);
    if (o->coll->rooted)
        rb = (size_t)cx->P * cx->size; /* what the root receives */
    return rb;
}

/* the start line of every timed call or batch (probe.h: kb_sync) */
kb_sync kbc_start;

/* memcpy's source: rb bytes of its own, or NULL on every rank (r says
 * why) when any rank cannot have them. Collective over sync. */
static unsigned char *memcpy_source(size_t rb, result *r, MPI_Comm sync)
{
    unsigned char *src = malloc(rb ? rb : 1);
    int ok = src != NULL, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, sync);
    if (!gok) {
        free(src);
        r->status = RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "out of memory for %zu bytes", rb);
        return NULL;
    }
    memset(src, 0x5a, rb);
    return src;
}

/* The iterations of one round of a local reference (memcpy, or the
 * collective's bw_limit): warm untimed, then iters timed into times. */
static int run_local(const options *o, kb_ctx *cx, const alg_entry *a, int warm, int iters, double *times, result *r,
                     MPI_Comm sync)
{
    size_t rb = a->is_memcpy ? memcpy_bytes(o, cx) : 0;
    unsigned char *src = a->is_memcpy ? memcpy_source(rb, r, sync) : NULL;
    if (a->is_memcpy && !src)
        return 1;
    for (int it = 0; it < warm + iters; it++) {
        kb_sync_barrier(&kbc_start);
        double t0 = MPI_Wtime();
        if (src)
            memcpy(cx->rbuf, src, rb);
        else
            o->coll->limit(cx);
        double t1 = MPI_Wtime();
        if (it >= warm)
            times[it - warm] = t1 - t0;
    }
    free(src);
    return 0;
}

/* The data of the j-th call of batch b (the probe call is 0). */
static int b2b_iter(const options *o, int b, int j) { return 1 + b * o->b2b + j; }

/* The reference column "sendrecv": every rank exchanges size bytes with
 * rank ^ 1 (from its send buffer into its receive buffer) as kport's
 * executor and loggp's exchange make one (MPI_Irecv, MPI_Isend,
 * MPI_Waitall), timed like the collectives; with --b2b, o->b2b of them per
 * batch. A rank whose partner would be P (the last of an odd P) only takes
 * part in the start line. n/a where the size exceeds either buffer or an
 * int count. */
static int run_sendrecv(const options *o, kb_ctx *cx, int warm, int iters, double *times, result *r, MPI_Comm sync)
{
    const int peer = cx->rank ^ 1;
    const int fits = cx->size <= cx->sbuf_len && cx->size <= cx->rbuf_len && cx->size <= (size_t)INT_MAX;
    int gfits;
    MPI_Allreduce(&fits, &gfits, 1, MPI_INT, MPI_MIN, sync);
    if (!gfits) {
        r->status = RES_NA;
        snprintf(r->msg, sizeof(r->msg), "sendrecv: %zu bytes do not fit the buffers or an int count", cx->size);
        return 1;
    }
    const int calls = o->b2b ? o->b2b : 1;
    for (int it = 0; it < warm + iters; it++) {
        kb_sync_barrier(&kbc_start);
        double t0 = MPI_Wtime();
        for (int j = 0; j < calls; j++) {
            if (o->b2b && o->coll->write_send) /* as the collectives' batches do (its time subtracted) */
                o->coll->write_send(cx, b2b_iter(o, it, j));
            if (peer < cx->P) {
                MPI_Request rq[2];
                MPI_Irecv(cx->rbuf, (int)cx->size, MPI_BYTE, peer, 77, cx->comm, &rq[0]);
                MPI_Isend(cx->sbuf, (int)cx->size, MPI_BYTE, peer, 77, cx->comm, &rq[1]);
                MPI_Waitall(2, rq, kb_statuses_ignore);
            }
        }
        double t1 = MPI_Wtime();
        if (it >= warm)
            times[it - warm] = t1 - t0;
    }
    return 0;
}

/* Remember this rank's first failing return code and its message. */
static void note_failure(const alg_entry *a, int rc, int *failed, char *errmsg)
{
    if (rc == KP_SUCCESS || *failed)
        return;
    const char *why = a->native ? "" : kp_last_error();
    *failed = rc;
    if (rc == KP_ERR_UNSUPPORTED && why && *why)
        snprintf(errmsg, KB_ERR_LEN, "%s", why);
    else
        snprintf(errmsg, KB_ERR_LEN, "%s%s%s", kp_strerror(rc), why && *why ? ": " : "", why ? why : "");
}

/* The first call decides: refused (n/a) or failed on any rank; returns 1
 * with r filled in if so. Otherwise notes what a forced kport algorithm
 * ran as. Collective over sync. */
static int first_call_decides(const kb_coll *bc, const alg_entry *a, int rc, int moves, char *errmsg, result *r,
                              MPI_Comm sync)
{
    int code = rc == KP_SUCCESS ? 0 : rc == KP_ERR_UNSUPPORTED ? 1 : 2, gcode;
    MPI_Allreduce(&code, &gcode, 1, MPI_INT, MPI_MAX, sync);
    if (gcode != 0) {
        kb_share_message(errmsg, code == gcode, sync);
        r->status = gcode == 1 ? RES_NA : RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "%s", errmsg);
        return 1;
    }
    if (!a->native && !a->is_auto && !a->is_ref && moves) {
        const char *ran = kp_last_algorithm((enum kp_coll)bc->kcoll);
        if (ran && *ran) {
            snprintf(r->ran, sizeof(r->ran), "%s", ran);
            r->ran_known = 1;
        }
    }
    return 0;
}

/* KPORT_BENCH_CORRUPT=B (a test of -c itself): after every isolated call
 * rank 0 inverts byte B of its receive buffer (or guard) before the check,
 * which must then fail. -1 when unset or out of range. */
static long corrupt_byte(const kb_ctx *cx)
{
    const char *e = getenv("KPORT_BENCH_CORRUPT");
    if (!e || !*e || cx->rank != 0)
        return -1;
    char *end;
    long b = strtol(e, &end, 10);
    return *end == '\0' && b >= 0 && (size_t)b < cx->rbuf_len + KB_GUARD ? b : -1;
}

/* Isolated calls: per iteration (with -c: write the send buffer, poison
 * the receive buffer), barrier, t0, one call, t1 (with -c: check). */
static int loop_isolated(const options *o, kb_ctx *cx, const alg_entry *a, int warm, int iters, int moves,
                         int first, int base, double *times, long long *bad, int *failed, char *errmsg, result *r,
                         MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    for (int i = 0; i < warm + iters; i++) {
        const int it = base + i; /* the call's number over all rounds: its data pattern (-c) */
        if (o->check && bc->write_send)
            bc->write_send(cx, it);
        if (o->check && bc->poison_recv)
            bc->poison_recv(cx, it);
        kb_sync_barrier(&kbc_start);
        double t0 = MPI_Wtime();
        int rc = bc->run(cx);
        double t1 = MPI_Wtime();
        note_failure(a, rc, failed, errmsg);
        if (first && i == 0 && first_call_decides(bc, a, rc, moves, errmsg, r, sync))
            return 1;
        if (o->check && bc->check) {
            const long flip = corrupt_byte(cx);
            if (flip >= 0)
                cx->rbuf[flip] ^= 0xff;
            *bad += bc->check(cx, it);
        }
        if (i >= warm)
            times[i - warm] = t1 - t0;
    }
    return 0;
}

/* Back-to-back batches: one untimed probe call decides n/a or failure (as
 * the first iteration does in isolated mode), then per batch (with -c:
 * poison the receive buffer) barrier, t0, b2b x (write the send buffer
 * with the call's pattern, one call), t1 (with -c: check the last call).
 * memcpy: the same with memcpy(rbuf, src, P*size) as the call; bw_limit
 * with the collective's limit(). */
static int loop_b2b(const options *o, kb_ctx *cx, const alg_entry *a, int wbatches, int batches, int moves,
                    int first, int base, double *times, long long *bad, int *failed, char *errmsg, result *r,
                    MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    const int check = o->check && !a->is_memcpy && !a->is_limit;
    size_t rb = a->is_memcpy ? memcpy_bytes(o, cx) : 0;
    unsigned char *src = NULL;
    if (a->is_memcpy) {
        if (!(src = memcpy_source(rb, r, sync)))
            return 1;
    } else if (first && !a->is_limit) {
        if (bc->write_send)
            bc->write_send(cx, 0);
        if (check && bc->poison_recv)
            bc->poison_recv(cx, 0);
        kb_sync_barrier(&kbc_start);
        int rc = bc->run(cx);
        note_failure(a, rc, failed, errmsg);
        if (first_call_decides(bc, a, rc, moves, errmsg, r, sync))
            return 1;
        if (check && bc->check)
            *bad += bc->check(cx, 0);
    }
    for (int bi = 0; bi < wbatches + batches; bi++) {
        const int b = base + bi; /* the batch's number over all rounds: its data pattern */
        const int last = b2b_iter(o, b, o->b2b - 1);
        if (check && bc->poison_recv)
            bc->poison_recv(cx, last);
        kb_sync_barrier(&kbc_start);
        double t0 = MPI_Wtime();
        for (int j = 0; j < o->b2b; j++) {
            if (bc->write_send)
                bc->write_send(cx, b2b_iter(o, b, j));
            if (a->is_memcpy) {
                memcpy(cx->rbuf, src, rb);
            } else if (a->is_limit) {
                o->coll->limit(cx);
            } else {
                int rc = bc->run(cx);
                note_failure(a, rc, failed, errmsg);
            }
        }
        double t1 = MPI_Wtime();
        if (check && bc->check)
            *bad += bc->check(cx, last);
        if (bi >= wbatches)
            times[bi - wbatches] = t1 - t0;
    }
    free(src);
    return 0;
}

/* The rewrite alone, timed like a batch: barrier, t0, b2b x (write the
 * send buffer with the call's pattern), t1; returns (on rank 0) the median
 * over batches of the maximum over ranks, in seconds per batch. */
double kbc_measure_rewrite(const options *o, kb_ctx *cx, int wbatches, int batches, double *times,
                           double *maxes, MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    for (int b = 0; b < wbatches + batches; b++) {
        kb_sync_barrier(&kbc_start);
        double t0 = MPI_Wtime();
        for (int j = 0; j < o->b2b && bc->write_send; j++)
            bc->write_send(cx, b2b_iter(o, b, j));
        double t1 = MPI_Wtime();
        if (b >= wbatches)
            times[b - wbatches] = t1 - t0;
    }
    kb_reduce_max(times, maxes, batches, sync);
    return cx->rank == 0 ? kb_stats(maxes, batches).median : 0.0;
}

/* One (algorithm, size) over the rounds: what is kept between them. */
/* Make a the algorithm of the next calls (a kport algorithm: forced). */
static int select_alg(const options *o, kb_ctx *cx, const alg_entry *a, result *r)
{
    const kb_coll *bc = o->coll;
    cx->native = a->native;
    cx->label = a->label;
    cx->reported = 0;
    if (a->native || a->is_ref)
        return 0;
    int rc = kp_set_algorithm((enum kp_coll)bc->kcoll, a->spec);
    if (rc != KP_SUCCESS) { /* validated at startup; same on every rank */
        r->status = RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "kp_set_algorithm: %s: %s", kp_strerror(rc), kp_last_error());
        return 1;
    }
    return 0;
}

/* Round k of (algorithm, size): warm / iters are iterations (isolated)
 * or batches (--b2b); its times go to times + st->done. The first round
 * starts the result (and its first call decides n/a or failure). */
void kbc_run_round(const options *o, kb_ctx *cx, alg_entry *a, int k, int warm, int iters, double *times,
                   run_state *st, result *r, MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    if (k == 0) {
        memset(r, 0, sizeof(*r));
        memset(st, 0, sizeof(*st));
        snprintf(r->ran, sizeof(r->ran), "%s", a->native ? "native" : a->spec);
        if (a->is_ref) {
            snprintf(r->ran, sizeof(r->ran), "%s", a->spec);
            r->ran_known = 1;
        }
        /* kport records the algorithm only for calls that move data (a
         * 0-byte all-gather returns at once and leaves kp_last_algorithm
         * as it was). */
        size_t sb = 0, rb = 0;
        st->moves = !bc->buffers || (bc->buffers(cx->size, cx->P, &sb, &rb) == 0 && (sb > 0 || rb > 0));
    }
    if (st->stop)
        return;
    if (select_alg(o, cx, a, r)) {
        st->stop = 1;
        return;
    }
    int stop;
    if ((a->is_memcpy || a->is_limit) && !o->b2b)
        stop = run_local(o, cx, a, warm, iters, times + st->done, r, sync);
    else if (a->is_sendrecv)
        stop = run_sendrecv(o, cx, warm, iters, times + st->done, r, sync);
    else if (o->b2b)
        stop = loop_b2b(o, cx, a, warm, iters, st->moves, k == 0, st->calls, times + st->done, &st->bad, &st->failed,
                        st->errmsg, r, sync);
    else
        stop = loop_isolated(o, cx, a, warm, iters, st->moves, k == 0, st->calls, times + st->done, &st->bad,
                             &st->failed, st->errmsg, r, sync);
    if (stop) {
        st->stop = 1;
        return;
    }
    st->done += iters;
    st->calls += warm + iters;
    if (a->is_auto && st->moves) { /* what auto chose at this size */
        const char *ran = kp_last_algorithm((enum kp_coll)bc->kcoll);
        snprintf(st->ran, sizeof(st->ran), "%s", ran && *ran ? ran : "?");
    }
}

/* After the last round: the untimed self-test (-c), failures, and the
 * statistics over every round's times (rewrite: kbc_measure_rewrite()'s time
 * per batch). */
void kbc_finish_alg(const options *o, kb_ctx *cx, alg_entry *a, double rewrite, double *times, double *maxes,
                    run_state *st, result *r, MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    if (st->stop && r->status != RES_OK)
        return; /* n/a or failed: r says why (the same on every rank) */
    const int iters = st->done;
    if (o->check && bc->selftest && !a->is_ref && !select_alg(o, cx, a, r)) {
        /* untimed; only where every rank's timed calls succeeded */
        int lf0 = st->failed != 0, gf0;
        MPI_Allreduce(&lf0, &gf0, 1, MPI_INT, MPI_MAX, sync);
        if (!gf0) {
            int trc = KP_SUCCESS;
            st->bad += bc->selftest(cx, sync, &trc);
            if (trc != KP_SUCCESS) {
                const char *why = a->native ? "" : kp_last_error();
                st->failed = trc;
                snprintf(st->errmsg, sizeof(st->errmsg), "%s test: %s%s%s", bc->name, kp_strerror(trc),
                         why && *why ? ": " : "", why ? why : "");
            }
        }
    }
    if (a->is_auto && st->moves) {
        snprintf(r->ran, sizeof(r->ran), "auto(%s)", st->ran[0] ? st->ran : "?");
        r->ran_known = 1;
    }

    kb_reduce_max(times, maxes, iters, sync);
    int lf = st->failed != 0, gf;
    long long gbad;
    MPI_Allreduce(&lf, &gf, 1, MPI_INT, MPI_MAX, sync);
    MPI_Allreduce(&st->bad, &gbad, 1, MPI_LONG_LONG, MPI_SUM, sync);
    r->iters = iters;
    r->bad = gbad;
    if (gf) {
        kb_share_message(st->errmsg, lf, sync);
        r->status = RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "%s", st->errmsg);
    } else if (gbad) {
        r->status = RES_INVALID;
        snprintf(r->msg, sizeof(r->msg), "%lld %s", gbad, bc->bad_unit);
    }
    if (cx->rank == 0) {
        r->t = kb_stats(maxes, iters);
        if (o->b2b) { /* per call, the rewrite subtracted */
            r->t.median = (r->t.median - rewrite) / o->b2b;
            r->t.min = (r->t.min - rewrite) / o->b2b;
            r->t.avg = (r->t.avg - rewrite) / o->b2b;
            r->t.max = (r->t.max - rewrite) / o->b2b;
        }
    }
}
