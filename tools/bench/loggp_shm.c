/*
 * kport-bench loggp: kport's shared-memory operations between rank 0 and
 * its host peer, with the bench's copy of kport's flag protocol (probe.h):
 * flag, data_line, copy_in / copy_out, memcpy, peer_read / peer_write
 * (cross-memory attach); then kport's own cost per call and the entry
 * skew of the benchmark's start line. How each is timed: the manual at the
 * top of loggp.c and the comments below.
 */
#define _GNU_SOURCE
#include "loggp.h"

#include "exec/reduce.h"
#include "kport.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */
/* Shared memory                                                              */
/* ------------------------------------------------------------------------- */

static int reps_for(size_t s, int iters)
{
    size_t r = ((size_t)8 << 20) / (s ? s : 1);
    if (r > 1000)
        r = 1000;
    if (r < (size_t)iters)
        r = (size_t)iters;
    return (int)r;
}

/* Drops, on both ranks alike, the samples v[0..n) during which the two
 * ranks ran on one core (cpu[] this rank's core per sample, peer[] the
 * other's; < 0: it moved during the sample): copies between them then look
 * local. Returns how many are kept (all of them if none ran apart). */
static int drop_same_cpu(double *v, const int *cpu, const int *peer, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (cpu[i] < 0 || peer[i] < 0 || cpu[i] != peer[i])
            v[k++] = v[i];
    return k ? k : n;
}

void lg_measure_shm(MPI_Comm pc, const lg_opts *o, int oversub, shm_result *res, unsigned char *buf,
                    unsigned char *buf2, unsigned char *scratch)
{
    int me;
    MPI_Comm_rank(pc, &me);
    size_t maxs = o->sizes[o->nsizes - 1], stride = (maxs + 127) / 128 * 128;
    memset(res, 0, sizeof(*res));
    kb_seg seg;
    /* two halves of one slot per rank, as kport's segment alternates them by call */
    if (kb_seg_open(pc, 4 * stride, oversub, &seg)) {
        if (me == 0)
            fprintf(stderr, "kport-bench: loggp: cannot allocate a shared segment of %zu bytes\n", 4 * stride);
        res->bad = -1;
        return;
    }
    const double tc = kb_timer_cost_ns();
    uint64_t seq = 0;
    int maxreps = reps_for(1, o->iters);
    /* the receive buffer of a two-rank all-gather (2 blocks), samples and cores */
    unsigned char *rbuf = malloc(2 * maxs);
    double *vv = malloc(2 * (size_t)maxreps * sizeof(double));
    int *cpu = malloc(2 * (size_t)maxreps * sizeof(int));
    if (!rbuf || !vv || !cpu)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(rbuf, 0, 2 * maxs);

    /* flag: half of each round trip, timed one by one (a descheduled rank
     * spoils one sample, dropped, not a batch) */
    if (me == 0)
        lg_show_progress("flag", 8);
    int nflag = (o->warmup + o->iters) * (oversub ? 10 : 100);
    if (nflag > maxreps)
        nflag = maxreps;
    MPI_Barrier(pc);
    for (int k = -100; k < nflag; k++) {
        seq++;
        double t0 = kb_now_ns();
        if (me == 0) {
            kb_seg_post(&seg, seq);
            kb_seg_wait(&seg, 1, seq);
        } else {
            kb_seg_wait(&seg, 0, seq);
            kb_seg_post(&seg, seq);
        }
        if (k >= 0)
            vv[k] = (kb_now_ns() - t0 - tc) / 2.0;
    }
    res->t[OP_FLAG][0] = me == 0 ? lg_robust_median(vv, nflag) : 0;
    MPI_Bcast(&res->t[OP_FLAG][0], 1, MPI_DOUBLE, 0, pc);

    /* data_line: the round a two-rank shared-memory call makes - copy 8 B
     * in, post, wait for the peer's post, copy its 8 B out - with the block
     * in the flag's own line (kport's KP_BUF_LINE: a waiting peer gets flag
     * and block in one transfer) and in a line of its own (KP_BUF_SHM, the
     * segment's halves alternating by call), the two alternating call by
     * call after a barrier; the maximum over the ranks per call, the
     * difference of the medians */
    {
        const int nr = nflag / 2 > 50 ? nflag / 2 : 50;
        double *vr = malloc(2 * (size_t)nr * sizeof(double)), *mr = malloc(2 * (size_t)nr * sizeof(double));
        if (!vr || !mr)
            MPI_Abort(MPI_COMM_WORLD, 1);
        unsigned char in[8] = {1, 2, 3, 4, 5, 6, 7, (unsigned char)me}, out[8];
        kb_sync start; /* the benchmark's start line of a call (probe.h) */
        kb_sync_open(pc, oversub, &start);
        for (int k = -20; k < 2 * nr; k++) {
            const int own = k & 1, h = (k >> 1) & 1;
            unsigned char *mine = own ? seg.data + (2 * (size_t)h + (size_t)me) * stride
                                      : (unsigned char *)kb_seg_flag(&seg, me) + 8,
                          *theirs = own ? seg.data + (2 * (size_t)h + 1 - (size_t)me) * stride
                                        : (unsigned char *)kb_seg_flag(&seg, 1 - me) + 8;
            kb_sync_barrier(&start);
            double t0 = kb_now_ns();
            memcpy(mine, in, sizeof in);
            kb_seg_post(&seg, ++seq);
            kb_seg_wait(&seg, 1 - me, seq);
            memcpy(out, theirs, sizeof out);
            double t1 = kb_now_ns();
            if (k >= 0)
                vr[(size_t)own * nr + (size_t)(k >> 1)] = t1 - t0;
            if (out[7] != (unsigned char)(1 - me))
                res->bad++;
        }
        kb_sync_close(&start);
        kb_reduce_max(vr, mr, 2 * nr, pc);
        if (me == 0) {
            res->round_line = lg_robust_median(mr, nr);
            res->round_own = lg_robust_median(mr + nr, nr);
            res->data_line = lg_clamp0(res->round_own - res->round_line);
        }
        MPI_Bcast(&res->data_line, 1, MPI_DOUBLE, 0, pc);
        free(vr);
        free(mr);
    }

    /* copy_in / copy_out as shm_flat on two ranks does them
     * (src/algo/allgather/shm_flat.c), call by call after a barrier as the
     * benchmark times a call: both ranks copy their block into their slot
     * of this call's half of the segment (lines the peer read two calls
     * ago), post, copy their block into their own receive buffer, wait for
     * the peer's post and copy its block out (lines the peer's core has
     * just written); the next call uses the other half. The mean of the
     * two ranks. */
    for (int i = 0; i < o->nsizes; i++) {
        size_t s = o->sizes[i];
        if (me == 0)
            lg_show_progress("copies", s);
        kb_fill_pattern(buf, s, kb_pair_id(me, 1 - me), i, 0);
        int reps = reps_for(s, o->iters);
        double *vin = vv, *vout = vv + reps;
        int *cpeer = cpu + reps;
        for (int r = -o->warmup; r < reps; r++) {
            MPI_Barrier(pc);
            const size_t h = (size_t)(r & 1);
            unsigned char *mine = seg.data + (2 * h + (size_t)me) * stride,
                          *theirs = seg.data + (2 * h + 1 - (size_t)me) * stride;
            int c = sched_getcpu();
            double t0 = kb_now_ns();
            memcpy(mine, buf, s);
            double t1 = kb_now_ns();
            kb_seg_post(&seg, ++seq);
            memcpy(rbuf + (size_t)me * s, buf, s);
            kb_seg_wait(&seg, 1 - me, seq);
            double t2 = kb_now_ns();
            memcpy(rbuf + (size_t)(1 - me) * s, theirs, s);
            double t3 = kb_now_ns();
            if (r >= 0) {
                vin[r] = t1 - t0 - tc;
                vout[r] = t3 - t2 - tc;
                cpu[r] = c == sched_getcpu() ? c : -1; /* moved during the sample */
            }
        }
        MPI_Sendrecv(cpu, reps, MPI_INT, 1 - me, TAG, cpeer, reps, MPI_INT, 1 - me, TAG, pc, MPI_STATUS_IGNORE);
        int kin = drop_same_cpu(vin, cpu, cpeer, reps), kout = drop_same_cpu(vout, cpu, cpeer, reps);
        if (me == 0)
            lg_n_same_cpu += reps - kin;
        double mine[2] = {lg_robust_mean(vin, kin), lg_robust_mean(vout, kout)}, both[2];
        MPI_Allreduce(mine, both, 2, MPI_DOUBLE, MPI_SUM, pc);
        res->t[OP_COPY_IN][i] = both[0] / 2; /* the mean of the two ranks */
        res->t[OP_COPY_OUT][i] = both[1] / 2;
        if (o->check)
            res->bad += lg_count_bad(rbuf + (size_t)(1 - me) * s, s, kb_pair_id(1 - me, me), i, scratch);
        if (me == 0)
            kb_fill_pattern(buf, s, kb_pair_id(0, 1), i, 0);

        /* memcpy: A alone, batches of copies between two private buffers */
        if (me == 0) {
            int per = reps < 100 ? 10 : 100, nb = reps / 10 > o->iters ? o->iters : reps / 10;
            if (nb < 3)
                nb = 3;
            for (int b = -o->warmup; b < nb; b++) {
                double t0 = kb_now_ns();
                for (int k = 0; k < per; k++)
                    memcpy(k % 2 ? buf : buf2, k % 2 ? buf2 : buf, s);
                double t1 = kb_now_ns();
                if (b >= 0)
                    vv[b] = (t1 - t0 - tc) / per;
            }
            res->t[OP_MEMCPY][i] = lg_robust_median(vv, nb);
        }
        MPI_Barrier(pc);
    }

    /* peer_read as shm_single_copy on two ranks does it: after a barrier
     * both ranks post, copy their own block, wait for the peer's post and
     * read the peer's block from its buffer at the same time (the two
     * system calls contend for the same memory and page tables), then post
     * and wait (done reading); the mean of the two ranks. peer_write as a
     * two-rank gather does it: A alone writes into B's buffer while B waits. */
    unsigned long long where[2] = {(unsigned long long)(uintptr_t)buf, (unsigned long long)getpid()}, peer[2];
    MPI_Sendrecv(where, 2, MPI_UNSIGNED_LONG_LONG, 1 - me, TAG, peer, 2, MPI_UNSIGNED_LONG_LONG, 1 - me, TAG, pc,
                 MPI_STATUS_IGNORE);
    unsigned long long where_b[2] = {(unsigned long long)(uintptr_t)buf2, (unsigned long long)getpid()};
    MPI_Bcast(where_b, 2, MPI_UNSIGNED_LONG_LONG, 1, pc);
    int cma = 1;
    for (int i = 0; i < o->nsizes && cma; i++) {
        size_t s = o->sizes[i];
        kb_fill_pattern(buf, s, kb_pair_id(me, 1 - me), i + 2000, 0);
        if (me == 0)
            lg_show_progress("single copy", s);
        int reps = reps_for(s, o->iters), ok = 1;
        for (int r = -o->warmup; r < reps; r++) {
            MPI_Barrier(pc);
            kb_seg_post(&seg, ++seq);
            memcpy(rbuf + (size_t)me * s, buf, s);
            kb_seg_wait(&seg, 1 - me, seq);
            struct iovec l = {rbuf + (size_t)(1 - me) * s, s}, rr = {(void *)(uintptr_t)peer[0], s};
            double t0 = kb_now_ns();
            ssize_t got = ok ? process_vm_readv((pid_t)peer[1], &l, 1, &rr, 1, 0) : (ssize_t)s;
            double t1 = kb_now_ns();
            if (got != (ssize_t)s)
                ok = 0;
            if (r >= 0)
                vv[r] = t1 - t0 - tc;
            kb_seg_post(&seg, ++seq);
            kb_seg_wait(&seg, 1 - me, seq);
        }
        MPI_Allreduce(&ok, &cma, 1, MPI_INT, MPI_MIN, pc);
        if (!cma)
            break;
        double mine = lg_robust_mean(vv, reps), both;
        MPI_Allreduce(&mine, &both, 1, MPI_DOUBLE, MPI_SUM, pc);
        res->t[OP_PEER_READ][i] = both / 2;
        if (o->check)
            res->bad += lg_count_bad(rbuf + (size_t)(1 - me) * s, s, kb_pair_id(1 - me, me), i + 2000, scratch);

        if (me == 0) {
            kb_fill_pattern(buf, s, kb_pair_id(0, 1), i + 1000, 0);
            for (int r = -o->warmup; r < reps && cma; r++) {
                struct iovec l = {buf, s}, rr = {(void *)(uintptr_t)where_b[0], s};
                double t0 = kb_now_ns();
                ssize_t got = process_vm_writev((pid_t)where_b[1], &l, 1, &rr, 1, 0);
                double t1 = kb_now_ns();
                if (got != (ssize_t)s)
                    cma = 0;
                else if (r >= 0)
                    vv[r] = t1 - t0 - tc;
            }
            if (cma)
                res->t[OP_PEER_WRITE][i] = lg_robust_mean(vv, reps);
        }
        MPI_Bcast(&cma, 1, MPI_INT, 0, pc);
        if (cma && o->check && me == 1)
            res->bad += lg_count_bad(buf2, s, kb_pair_id(0, 1), i + 1000, scratch);
    }
    kb_seg_close(&seg);
    free(rbuf);
    free(vv);
    free(cpu);
    res->cma = cma;
    long long all;
    MPI_Allreduce(&res->bad, &all, 1, MPI_LONG_LONG, MPI_SUM, pc);
    res->bad = all;
    lg_fit_shm(o, res);
}

/* ------------------------------------------------------------------------- */
/* kport's own cost per call, and the entry skew of a benchmark's barrier     */
/* ------------------------------------------------------------------------- */

/* call.fixed: kp_allgather of 8 bytes on MPI_COMM_SELF (ring forced: one
 * local copy), per call in batches of 100, minus that copy (memcpy's fit):
 * the argument checks, the plan lookup and the executor's own work, what
 * every kport call pays whatever its schedule. A (rank 0) only; B sleeps.
 * call.skew: the benchmark's way of timing a call (its start line kb_sync:
 * shared-memory flags on one host, else MPI_Barrier; t0, call,
 * t1, the max over ranks per iteration, the median) applied to the
 * smallest dependent call there is, a post and a wait for the peer's post:
 * what that takes beyond shm.flag is how far apart the ranks leave the
 * barrier, at most one flag with the shared-memory start line (below).
 * Both in ns. */
void lg_measure_call(MPI_Comm pc, const lg_opts *o, int oversub, const shm_result *shm, kp_callcost *call,
                     double *gap, double *post_wait)
{
    int me;
    MPI_Comm_rank(pc, &me);
    memset(call, 0, sizeof(*call));
    if (me == 0)
        lg_show_progress("call", 8);
    const int n = 1000;
    double *v = malloc((size_t)(o->iters > n ? o->iters : n) * sizeof(double)), *mx = malloc(n * sizeof(double)),
           *e = malloc(2 * (size_t)n * sizeof(double));
    *gap = *post_wait = -1;
    if (!v || !mx || !e)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (me == 0) {
        unsigned char sb[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rb[8];
        int rc = kp_set_algorithm(KP_COLL_ALLGATHER, "ring");
        const int per = 100;
        for (int b = -o->warmup; b < o->iters && rc == KP_SUCCESS; b++) {
            double t0 = kb_now_ns();
            for (int k = 0; k < per && rc == KP_SUCCESS; k++)
                rc = kp_allgather(sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, MPI_COMM_SELF);
            double t1 = kb_now_ns();
            if (b >= 0)
                v[b] = (t1 - t0) / per;
        }
        kp_set_algorithm(KP_COLL_ALLGATHER, NULL);
        if (rc == KP_SUCCESS)
            call->fixed = lg_clamp0(kb_median(v, o->iters) - kp_linear_cost(&shm->fit[OP_MEMCPY], 8));
        else
            fprintf(stderr, "kport-bench: loggp: call.fixed not measured: %s\n", kp_last_error());
    }
    kb_sleepy_barrier(pc);
    kb_seg seg;
    if (kb_seg_open(pc, 64, oversub, &seg) == 0) {
        uint64_t seq = 0;
        kb_sync start; /* the benchmark's start line of a call (probe.h) */
        kb_sync_open(pc, oversub, &start);
        for (int it = -o->warmup; it < n; it++) {
            kb_sync_barrier(&start);
            double t0 = kb_now_ns();
            kb_seg_post(&seg, ++seq);
            kb_seg_wait(&seg, 1 - me, seq);
            double t1 = kb_now_ns();
            if (it >= 0) {
                v[it] = t1 - t0;
                e[it] = t0;
            }
        }
        kb_reduce_max(v, mx, n, pc);
        if (me == 0) {
            /* the clock's own cost stays in: the bench's times hold it too */
            const double flag = shm->t[OP_FLAG][0];
            *post_wait = lg_clamp0(kb_median(mx, n) - flag);
            /* A start line of flags lets the ranks go at most one flag
             * apart: the last rank in leaves at once, the others when its
             * post reaches them. What a post and wait right after it take
             * beyond that is not an entry delay, and the collectives timed
             * after the same start line do not pay it: in the machine's
             * slow phase (flag 150-180 ns) a post and wait took 226-311 ns
             * beyond a flag, while loggp's own copy-in, post, wait,
             * copy-out round (data_line) took 341-401 ns in all, less than
             * the post and wait alone (401-461). So with that start line
             * skew is at most shm.flag (docs/PARAMETERS.md); post_wait,
             * printed beside it, is the uncapped value. */
            call->skew = start.shm && *post_wait > flag ? flag : *post_wait;
        }
        /* a diagnostic beside it: how far apart the ranks left the start
         * line, read off one clock (CLOCK_MONOTONIC is the host's: only
         * with the shared-memory start line, all ranks on one host) */
        if (start.shm) {
            if (me == 1)
                MPI_Send(e, n, MPI_DOUBLE, 0, 7, pc);
            else if (me == 0) {
                MPI_Recv(e + n, n, MPI_DOUBLE, 1, 7, pc, MPI_STATUS_IGNORE);
                for (int i = 0; i < n; i++)
                    e[i] = fabs(e[i] - e[n + i]);
                *gap = kb_median(e, n);
            }
        }
        kb_sync_close(&start);
        kb_seg_close(&seg);
    }
    free(v);
    free(mx);
    free(e);
}

/* ------------------------------------------------------------------------- */
/* The combine of reductions                                                  */
/* ------------------------------------------------------------------------- */

/* compute.reduce: the executor's own combine (src/exec/reduce.c,
 * kp_reduce_apply with the inline kernel of MPI_SUM on MPI_DOUBLE, the
 * reducer kport picks for that pair) on dst = a, a += b over s bytes: two
 * operands read, one written, the partial result accumulating in its own
 * buffer as the builders' combines mostly do. Rank 0 alone (the others
 * sleep in a barrier), at every size of whole doubles, in batches of
 * combines on the same two buffers (so the data stays in cache while it
 * fits: up to the second level, 2 MiB here, then the third), the clock's
 * cost subtracted, the median of the batches. Both operands hold 1.0 at
 * the start (normal numbers: denormals would take the slow path of the
 * floating-point unit). Fitted as memcpy is (a second slope beyond a knee
 * where that halves the error, kb_fit_knee_floor), by relative errors
 * measured against at least 20 ns (the clock's resolution). */
void lg_measure_reduce(const lg_opts *o, lg_reduce *res, unsigned char *buf, unsigned char *buf2)
{
    memset(res, 0, sizeof(*res));
    kp_reducer rd;
    char why[128];
    if (kp_reducer_builtin(MPI_SUM, MPI_DOUBLE, &rd, why, sizeof(why)) != KP_SUCCESS) {
        fprintf(stderr, "kport-bench: loggp: compute.reduce not measured: %s\n", why);
        return;
    }
    snprintf(res->kernel, sizeof(res->kernel), "MPI_SUM on %s (kp_reduce_apply: %s), dst = a", rd.name,
             rd.fn ? "kport's inline kernel" : "MPI_Reduce_local");
    const size_t maxs = o->sizes[o->nsizes - 1];
    double *a = (double *)(void *)buf, *b = (double *)(void *)buf2;
    for (size_t k = 0; k < maxs / sizeof(double); k++)
        a[k] = b[k] = 1.0;
    const double tc = kb_timer_cost_ns();
    double v[1000], x[LG_MAX_SIZES], y[LG_MAX_SIZES];
    int n = 0, rc = KP_SUCCESS;
    for (int i = 0; i < o->nsizes && rc == KP_SUCCESS; i++) {
        const size_t s = o->sizes[i] / sizeof(double) * sizeof(double);
        res->t[i] = -1;
        if (s == 0 || s != o->sizes[i])
            continue; /* not whole doubles */
        lg_show_progress("reduce", s);
        const int reps = reps_for(s, o->iters), per = reps < 100 ? 10 : 100;
        int nb = reps / 10 > o->iters ? o->iters : reps / 10;
        if (nb < 3)
            nb = 3;
        if (nb > 1000)
            nb = 1000;
        for (int bt = -o->warmup; bt < nb && rc == KP_SUCCESS; bt++) {
            double t0 = kb_now_ns();
            for (int k = 0; k < per && rc == KP_SUCCESS; k++)
                rc = kp_reduce_apply(&rd, a, a, b, (int64_t)s);
            double t1 = kb_now_ns();
            if (bt >= 0)
                v[bt] = (t1 - t0 - tc) / per;
        }
        res->t[i] = lg_robust_median(v, nb);
        x[n] = (double)s;
        y[n++] = res->t[i];
    }
    if (rc != KP_SUCCESS) {
        fprintf(stderr, "kport-bench: loggp: compute.reduce not measured: %s\n", kp_last_error());
        return;
    }
    if (n == 0) {
        fprintf(stderr, "kport-bench: loggp: compute.reduce not measured: no size of whole doubles (-m)\n");
        return;
    }
    kb_knee k;
    kb_fit_knee_floor(x, y, n, 20.0, 3, &k);
    res->fit.fixed = lg_clamp0(k.a);
    res->fit.per_byte = lg_clamp0(k.b);
    if (k.knee > 0) {
        res->fit.large_from = (int64_t)k.knee;
        res->fit.large_per_byte = lg_clamp0(k.c);
    }
    res->ok = 1;
}
