/*
 * k-port Standard Exchange all-gather (k-port recursive doubling).
 *
 * For P = (k+1)^n: in step i (i = 0 .. n-1) the ranks form groups of
 * (k+1)^(i+1) consecutive ranks, each made of k+1 subgroups of (k+1)^i whose
 * blocks their members already hold. Rank p sends everything it holds (one
 * contiguous range of the receive buffer) to the k ranks at distances
 * j*(k+1)^i, j = 1..k, cyclic inside its group, and receives theirs from the
 * ranks at distances -j*(k+1)^i. After step i it holds its whole group.
 *
 * Any other P (the correction steps): let n = floor(log_{k+1} P),
 * Q = (k+1)^n, c = floor(P / Q) (1 <= c <= k) and R = c * Q <= P.
 *  - Mixed radix: R "leaders" run the n steps above and then, if c >= 2, one
 *    last step of radix c (c-1 ports, distances j*Q, j = 1..c-1), which joins
 *    the c groups of Q. So P = c*(k+1)^n needs no folding at all, and
 *    k >= P-1 is a single step in which everyone exchanges with everyone.
 *  - Folding: the e = P - R < Q remaining ranks are folded into leaders. The
 *    ranks are cut into R contiguous segments, segment q being ranks
 *    [floor(q*P/R), floor((q+1)*P/R)), of 1 or 2 ranks (P/R < 2); the first
 *    rank is the leader. Before the exchange a folded rank sends its block
 *    to its leader; after it the leader sends it the whole result. Because
 *    segments are contiguous, what a leader holds is still one contiguous
 *    range of the receive buffer, so every exchange is one message per peer,
 *    and the balanced cut keeps the largest message within one block of the
 *    average.
 * The own block is copied into place in the first round; a leader with no
 * folded rank sends it from the send buffer in step 0, so MPI_IN_PLACE needs
 * no special case.
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007, section 6.1.2
 * (the k-port extension of recursive doubling; for up to medium messages). The
 * paper leaves the correction steps for P != (k+1)^n open; the folding and
 * the radix-c last step above are kport's.
 *
 * Cost (Hockney, k-port; m = bytes per block):
 *   P = (k+1)^n:  T = n * ts + (P-1)/k * m * tau                (eq. 2)
 *   P = c*(k+1)^n, 2 <= c <= k:
 *                 T = (n+1) * ts + ((Q-1)/k + Q) * m * tau
 *   otherwise (e = P - R > 0 folded ranks), two more steps:
 *                 T = (n + [c >= 2] + 2) * ts
 *                   + (1 + sum_{i=0..n-1} B_i + [c >= 2] B_n + P) * m * tau
 *                 where B_i <= ceil((k+1)^i * P / R) <= 2 (k+1)^i is the
 *                 largest range a leader holds before step i (fold: 1 block,
 *                 unfold: P blocks).
 *   Steps: ceil(log_{k+1} P) when P = c*(k+1)^n, else
 *          floor(log_{k+1} P) + [c >= 2] + 2.
 * Memory: no scratch. Restrictions: none (any P >= 1, any k >= 1).
 * Parameters: k (ports, >= 1).
 *
 * Example, P = 9, k = 2 (2 steps):
 *   step 0  groups {0,1,2} {3,4,5} {6,7,8}: 0,1,2:{0..2} 3,4,5:{3..5} 6,7,8:{6..8}
 *   step 1  0 <-> 3, 6; 1 <-> 4, 7; ...: everyone holds {0..8}
 * Example, P = 7, k = 2: n = 1, Q = 3, c = 2, R = 6 leaders; segments
 * {0} {1} {2} {3} {4} {5,6}, so rank 6 is folded into leader 5 (4 steps):
 *   fold    6 -> 5: 5:{5,6}
 *   step 0  radix 3: 0,1,2:{0..2}  3,4,5:{3..6}
 *   step 1  radix 2, distance 3: 0<->3, 1<->4, 2<->5: leaders hold {0..6}
 *   unfold  5 -> 6: everyone holds {0..6}
 *
 * Peer arithmetic: kp_se_* in peers_kport.h, tested exhaustively by
 * tests/unit/test_peers_kport.c.
 */
#include "algo/algo.h"
#include "algo/allgather/peers_kport.h"
#include "kport.h"

/* n = floor(log_{k+1} P), Q = (k+1)^n <= P, c = floor(P / Q) */
static void se_shape(int P, int k, int *n, int *Q, int *c)
{
    *n = kp_ilog(P, (int64_t)k + 1);
    *Q = (int)kp_ipow((int64_t)k + 1, *n);
    *c = P / *Q;
}

int kp_se_nleaders(int P, int k)
{
    int n, Q, c;
    se_shape(P, k, &n, &Q, &c);
    return c * Q;
}

int kp_se_seg_start(int P, int R, int q)
{
    return (int)((int64_t)q * P / R);
}

int kp_se_seg_of(int P, int R, int p)
{
    return (int)(((int64_t)(p + 1) * R - 1) / P);
}

int kp_se_nsteps(int P, int k)
{
    int n, Q, c;
    se_shape(P, k, &n, &Q, &c);
    return n + (c >= 2);
}

int kp_se_radix(int P, int k, int i)
{
    int n, Q, c;
    se_shape(P, k, &n, &Q, &c);
    if (i >= 0 && i < n)
        return k + 1;
    return (i == n && c >= 2) ? c : 0;
}

int kp_se_span(int P, int k, int i)
{
    int n, Q, c;
    se_shape(P, k, &n, &Q, &c);
    if (i <= 0)
        return 1;
    return i <= n ? (int)kp_ipow((int64_t)k + 1, i) : c * Q;
}

/* leader at cyclic digit distance `dig` from q in its step-i group */
static int se_peer(int P, int k, int q, int i, int dig)
{
    const int r = kp_se_radix(P, k, i), d = kp_se_span(P, k, i);
    const int G = r * d, base = q - q % G, a = (q % G) / d, b = q % d;
    return base + kp_mod((int64_t)a + dig, r) * d + b;
}

int kp_se_send_peer(int P, int k, int q, int i, int j)
{
    int r = kp_se_radix(P, k, i);
    return (j >= 1 && j < r) ? se_peer(P, k, q, i, j) : -1;
}

int kp_se_recv_peer(int P, int k, int q, int i, int j)
{
    int r = kp_se_radix(P, k, i);
    return (j >= 1 && j < r) ? se_peer(P, k, q, i, -j) : -1;
}

void kp_se_held(int P, int k, int q, int i, int *lo, int *hi)
{
    const int R = kp_se_nleaders(P, k), d = kp_se_span(P, k, i);
    const int first = q - q % d;
    *lo = kp_se_seg_start(P, R, first);
    *hi = kp_se_seg_start(P, R, first + d);
}

int kp_allgather_standard_exchange_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank, k = prm->k;
    const int64_t m = s->bytes;

    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "standard_exchange: k = %d ports; k must be >= 1", k);

    const int R = kp_se_nleaders(P, k);
    const int q = kp_se_seg_of(P, R, p);
    const int lead = kp_se_seg_start(P, R, q), end = kp_se_seg_start(P, R, q + 1);

    if (p != lead) { /* folded rank: hand over the block, wait for the result */
        kp_sched_send(s, lead, KP_BUF_SEND, 0, m);
        kp_sched_next_round(s);
        kp_sched_recv(s, lead, KP_BUF_RECV, 0, (int64_t)P * m);
        return kp_sched_finish(s);
    }

    const int folded = end - lead > 1;
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
    if (folded) {
        for (int e = lead + 1; e < end; e++)
            kp_sched_recv(s, e, KP_BUF_RECV, (int64_t)e * m, m);
        kp_sched_next_round(s);
    }

    const int nsteps = kp_se_nsteps(P, k);
    for (int i = 0; i < nsteps; i++) {
        int lo, hi;
        kp_se_held(P, k, q, i, &lo, &hi);
        /* step 0 of an unfolded leader sends the own block from the send
         * buffer: the copy into place is still in flight */
        const int sbuf = (i == 0 && !folded) ? KP_BUF_SEND : KP_BUF_RECV;
        const int64_t soff = (i == 0 && !folded) ? 0 : (int64_t)lo * m;
        const int r = kp_se_radix(P, k, i);
        for (int j = 1; j < r; j++) {
            const int to = kp_se_send_peer(P, k, q, i, j);
            const int from = kp_se_recv_peer(P, k, q, i, j);
            int flo, fhi;
            kp_se_held(P, k, from, i, &flo, &fhi);
            kp_sched_send(s, kp_se_seg_start(P, R, to), sbuf, soff, (int64_t)(hi - lo) * m);
            kp_sched_recv(s, kp_se_seg_start(P, R, from), KP_BUF_RECV, (int64_t)flo * m,
                          (int64_t)(fhi - flo) * m);
        }
        kp_sched_next_round(s);
    }

    for (int e = lead + 1; e < end; e++)
        kp_sched_send(s, e, KP_BUF_RECV, 0, (int64_t)P * m);
    return kp_sched_finish(s);
}
