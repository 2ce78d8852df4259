/*
 * kport-bench loggp: MPI point to point between ranks 0 (A) and 1 (B) of a
 * pair's communicator. PRTT(n, d, s) (Kielmann et al.) with the sizes
 * interleaved run by run, the receive overhead of a message already there,
 * the exchanges of one and of two messages each way, and -c's untimed
 * check: the points of one channel. What each quantity is: the manual at
 * the top of loggp.c.
 */
#include "loggp.h"

#include <string.h>

/* ------------------------------------------------------------------------- */
/* MPI point to point: PRTT(n, d, s) between ranks 0 (A) and 1 (B) of pc     */
/* ------------------------------------------------------------------------- */

/* One message as kport's executor moves it (MPI_Isend / MPI_Irecv and a
 * wait: src/exec/run.c), or with MPI_Send / MPI_Recv (--blocking). */

static void send_msg(const void *buf, size_t s, int to, MPI_Comm pc)
{
    if (lg_blocking) {
        MPI_Send(buf, (int)s, MPI_BYTE, to, TAG, pc);
    } else {
        MPI_Request r;
        MPI_Isend(buf, (int)s, MPI_BYTE, to, TAG, pc, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

static void recv_msg(void *buf, size_t s, int from, MPI_Comm pc)
{
    if (lg_blocking) {
        MPI_Recv(buf, (int)s, MPI_BYTE, from, TAG, pc, MPI_STATUS_IGNORE);
    } else {
        MPI_Request r;
        MPI_Irecv(buf, (int)s, MPI_BYTE, from, TAG, pc, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

/* Untimed messages of s bytes before each timed run of s <= 64 KiB.
 * The collectives' medians are taken in a settled state: kport-bench runs
 * a size's 100 calls per algorithm and round, every algorithm in turn,
 * the sizes ascending, so thousands of calls of smaller sizes stand
 * between a round's 1 MiB calls and the next round's 8 KiB ones. Right
 * after large messages MPICH 4.0's exchanges of 2-16 KiB run 1.3-1.5x
 * slower, for some hundreds of exchanges: with the sizes interleaved (a
 * train of 8 KiB right after those of 16 KiB-1 MiB) loggp's 8 KiB
 * exchange took 1.45-1.55 us where the all-gather's ring took 1.15 whole
 * and loggp over 512 B-16 KiB alone 0.98-1.12; 32 untimed exchanges
 * first gave 1.44-1.61, 128 gave 1.02 and 1.41, 512 gave 0.98-1.03 (two
 * runs each, docs/PERFORMANCE.md, "Session 28"). Its round trips move
 * less and settle sooner: after 1 MiB ones, half a 512 B round trip took
 * 0.39 us in the first 4, 0.34 in the next 60, 0.31-0.32 from the 64th
 * on (8 KiB: 0.95, 0.85, 0.79; "Session 29"); the timed round trips of
 * loggp's descending passes, one warm-up each, came out 1.1-1.4x those
 * of the exchanges in some runs (RTT/2 at 512 B 0.47 us, o_s(128-512 B)
 * 0.30-0.33 against 0.21-0.22) and made the cost model overcharge every
 * send of that piece. So round trips and exchanges alike follow
 * LG_SETTLE untimed ones of their size. Open MPI's do not move. */
#define LG_SETTLE 512
#define LG_SETTLE_MAX 65536

/* Untimed ping-pongs of s bytes (LG_SETTLE for s <= LG_SETTLE_MAX, else
 * one): the buffers and MPI's state are those of this size again, as in a
 * run of one size (an all-gather benchmark's), not those of the size
 * before it. */
static void warm(MPI_Comm pc, int me, size_t s, unsigned char *buf, unsigned char *rbuf)
{
    for (int k = s <= LG_SETTLE_MAX ? LG_SETTLE : 1; k > 0; k--) {
        if (me == 0) {
            send_msg(buf, s, 1, pc);
            recv_msg(rbuf, s, 1, pc);
        } else {
            recv_msg(buf, s, 0, pc);
            send_msg(buf, s, 0, pc);
        }
    }
}

/* PRTT(n, d[i], sizes[i]) for every size, run by run with the sizes
 * interleaved (a burst of load on the shared cores then spoils one run of
 * many sizes, not every run of one); med[i] = the median over runs (on A).
 * v holds nsizes * iters values. */
static void prtt_all(MPI_Comm pc, int me, int n, const double *d, unsigned char *buf, unsigned char *rbuf,
                     const lg_opts *o, double *v, double *med)
{
    for (int r = 0; r < o->warmup + o->iters; r++)
        for (int j = 0; j < o->nsizes; j++) {
            int i = r % 2 ? o->nsizes - 1 - j : j; /* up, then down: each size follows its neighbours */
            size_t s = o->sizes[i];
            double di = d ? d[i] : 0;
            warm(pc, me, s, buf, rbuf);
            if (me == 0) {
                double t0 = kb_now_ns();
                MPI_Request rr = MPI_REQUEST_NULL;
                if (!lg_blocking) /* the answer's receive is posted first, as a collective's is */
                    MPI_Irecv(rbuf, (int)s, MPI_BYTE, 1, TAG, pc, &rr);
                for (int k = 0; k < n; k++) {
                    send_msg(buf, s, 1, pc);
                    if (di > 0 && k + 1 < n) /* between messages, not after the last */
                        kb_spin_until(kb_now_ns(), di);
                }
                if (lg_blocking)
                    recv_msg(rbuf, s, 1, pc);
                else
                    MPI_Wait(&rr, MPI_STATUS_IGNORE);
                if (r >= o->warmup)
                    v[(size_t)i * o->iters + (r - o->warmup)] = kb_now_ns() - t0;
            } else {
                for (int k = 0; k < n; k++)
                    recv_msg(buf, s, 0, pc);
                send_msg(buf, s, 0, pc);
            }
        }
    for (int i = 0; i < o->nsizes && me == 0; i++)
        med[i] = lg_robust_median(v + (size_t)i * o->iters, o->iters);
}

/* The time of the receive at B for a message that has been there a while
 * (B spins wait[i] after its previous acknowledgement), sizes interleaved;
 * med[i] = the median over runs, on both ranks. */
static void recv_overhead_all(MPI_Comm pc, int me, const double *wait, unsigned char *buf, unsigned char *rbuf,
                              const lg_opts *o, double *v, double *med)
{
    double last = 0;
    for (int r = 0; r < o->warmup + o->iters; r++)
        for (int j = 0; j < o->nsizes; j++) {
            int i = r % 2 ? o->nsizes - 1 - j : j;
            size_t s = o->sizes[i];
            warm(pc, me, s, buf, rbuf);
            if (me == 1)
                last = kb_now_ns(); /* B spins wait[i] from here: the message is there by then */
            if (me == 0) {
                send_msg(buf, s, 1, pc);
                MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG, pc, MPI_STATUS_IGNORE);
            } else {
                kb_spin_until(last, wait[i]);
                double t0 = kb_now_ns();
                recv_msg(buf, s, 0, pc);
                double t1 = kb_now_ns();
                if (r >= o->warmup)
                    v[(size_t)i * o->iters + (r - o->warmup)] = t1 - t0;
                MPI_Send(NULL, 0, MPI_BYTE, 0, TAG, pc);
            }
        }
    for (int i = 0; i < o->nsizes && me == 1; i++)
        med[i] = lg_robust_median(v + (size_t)i * o->iters, o->iters);
    MPI_Bcast(med, o->nsizes, MPI_DOUBLE, 1, pc);
}

/* XCH_m(s): both ranks exchange s bytes with each other n times back to
 * back, each exchange as the executor makes one (MPI_Irecv, MPI_Isend,
 * MPI_Waitall; --blocking: MPI_Sendrecv); with m = 2, two messages of s
 * bytes each way at once (MPI_Irecv x 2, MPI_Isend x 2 from buf and buf + s,
 * MPI_Waitall of the four: a round that sends a peer two blocks, as
 * concurrent_exchange_split's halves; --blocking: two MPI_Sendrecv). A's
 * time per exchange over exchanges 2..n (the first absorbs the ranks'
 * different starting times), after LG_SETTLE untimed ones for s up to
 * LG_SETTLE_MAX, sizes interleaved; med[i] = the median over runs (on
 * A). buf and rbuf hold m * the largest size. */
static void xchg_all(MPI_Comm pc, int me, int n, int m, unsigned char *buf, unsigned char *rbuf, const lg_opts *o,
                     double *v, double *med)
{
    const int peer = 1 - me;
    for (int r = 0; r < o->warmup + o->iters; r++)
        for (int j = 0; j < o->nsizes; j++) {
            int i = r % 2 ? o->nsizes - 1 - j : j;
            size_t s = o->sizes[i];
            if (s > LG_SETTLE_MAX) /* else the untimed exchanges below */
                warm(pc, me, s, buf, rbuf);
            double t1 = 0;
            for (int k = s <= LG_SETTLE_MAX ? -LG_SETTLE : 0; k < n; k++) {
                if (lg_blocking) {
                    for (int q = 0; q < m; q++)
                        MPI_Sendrecv(buf + (size_t)q * s, (int)s, MPI_BYTE, peer, TAG, rbuf + (size_t)q * s, (int)s,
                                     MPI_BYTE, peer, TAG, pc, MPI_STATUS_IGNORE);
                } else {
                    MPI_Request rq[4];
                    for (int q = 0; q < m; q++)
                        MPI_Irecv(rbuf + (size_t)q * s, (int)s, MPI_BYTE, peer, TAG, pc, &rq[q]);
                    for (int q = 0; q < m; q++)
                        MPI_Isend(buf + (size_t)q * s, (int)s, MPI_BYTE, peer, TAG, pc, &rq[m + q]);
                    MPI_Waitall(2 * m, rq, kb_statuses_ignore);
                }
                if (k == 0)
                    t1 = kb_now_ns();
            }
            if (me == 0 && r >= o->warmup)
                v[(size_t)i * o->iters + (r - o->warmup)] = (kb_now_ns() - t1) / (n - 1);
        }
    for (int i = 0; i < o->nsizes && me == 0; i++)
        med[i] = lg_robust_median(v + (size_t)i * o->iters, o->iters);
}

/* One untimed exchange each way with the pattern; wrong bytes (on A). */
static long long p2p_check(MPI_Comm pc, int me, size_t s, int iter, unsigned char *buf, unsigned char *scratch)
{
    long long bad = 0;
    if (me == 0) {
        kb_fill_pattern(buf, s, kb_pair_id(0, 1), iter, 0);
        MPI_Send(buf, (int)s, MPI_BYTE, 1, TAG, pc);
        memset(buf, 0, s);
        MPI_Recv(buf, (int)s, MPI_BYTE, 1, TAG, pc, MPI_STATUS_IGNORE);
        bad += lg_count_bad(buf, s, kb_pair_id(1, 0), iter, scratch);
    } else {
        memset(buf, 0, s);
        MPI_Recv(buf, (int)s, MPI_BYTE, 0, TAG, pc, MPI_STATUS_IGNORE);
        bad += lg_count_bad(buf, s, kb_pair_id(0, 1), iter, scratch);
        kb_fill_pattern(buf, s, kb_pair_id(1, 0), iter, 0);
        MPI_Send(buf, (int)s, MPI_BYTE, 0, TAG, pc);
    }
    long long all;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG_LONG, MPI_SUM, pc);
    return all;
}

void lg_measure_p2p(MPI_Comm pc, const lg_opts *o, const char *name, lg_point *pt, long long *bad,
                    unsigned char *buf, unsigned char *rbuf, unsigned char *scratch, double *v)
{
    int me;
    MPI_Comm_rank(pc, &me);
    double rtt[LG_MAX_SIZES], trn[LG_MAX_SIZES], trd[LG_MAX_SIZES], orr[LG_MAX_SIZES], d[LG_MAX_SIZES],
        wait[LG_MAX_SIZES], xch[LG_MAX_SIZES], xch2[LG_MAX_SIZES];
    if (me == 0)
        lg_show_progress(name, o->sizes[0]);
    prtt_all(pc, me, 1, NULL, buf, rbuf, o, v, rtt);
    prtt_all(pc, me, o->n, NULL, buf, rbuf, o, v, trn);
    for (int i = 0; i < o->nsizes; i++) {
        double g = (trn[i] - rtt[i]) / (o->n - 1);
        d[i] = 1.5 * (g > 0 ? g : 0) + 1000.0;
        wait[i] = 1.5 * rtt[i] + 1000.0;
    }
    MPI_Bcast(d, o->nsizes, MPI_DOUBLE, 0, pc);
    MPI_Bcast(wait, o->nsizes, MPI_DOUBLE, 0, pc);
    if (me == 0)
        lg_show_progress(name, o->sizes[o->nsizes - 1]);
    prtt_all(pc, me, o->n, d, buf, rbuf, o, v, trd);
    recv_overhead_all(pc, me, wait, buf, rbuf, o, v, orr);
    xchg_all(pc, me, o->n, 1, buf, rbuf, o, v, xch);
    xchg_all(pc, me, o->n, 2, buf, rbuf, o, v, xch2);
    for (int i = 0; i < o->nsizes; i++) {
        double g = (trn[i] - rtt[i]) / (o->n - 1);
        pt[i].rtt_half = rtt[i] / 2;
        pt[i].gap = g > 0 ? g : 0;
        pt[i].o_s = (trd[i] - rtt[i]) / (o->n - 1) - d[i];
        if (pt[i].o_s < 0)
            pt[i].o_s = 0;
        pt[i].o_r = orr[i];
        pt[i].xchg = xch[i];
        pt[i].xchg2 = xch2[i];
        if (o->check)
            *bad += p2p_check(pc, me, o->sizes[i], i, buf, scratch);
    }
}
