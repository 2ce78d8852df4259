/*
 * k-port Direct reduce-scatter (regular and with counts per rank),
 * commutative operations: k exchanges in flight per step.
 *
 * In round t (t = 0 .. ceil((P-1)/k) - 1) port j (j = 1..k) works at
 * distance d = t k + j (while d <= P - 1): rank r sends its block d ahead
 * of it (block r+d of its vector) to rank r+d and receives rank r-d's
 * contribution to block r (mod P), all k exchanges at once. Port j keeps an
 * accumulator of its own: its first arrival is received straight into it,
 * later ones are combined into it one round after they arrive, while the
 * next k exchanges are in flight (the k combines of a round write k
 * different accumulators, so they run in the same round). At the end the
 * accumulators are joined pairwise (ceil(log2 k) rounds) and with the own
 * block of the send buffer into the receive buffer; that is after the last
 * send, so MPI_IN_PLACE (input in the receive buffer, result at its start)
 * needs no care except a partial overlap of the result with the own input
 * block (counts per rank), which goes through scratch and a copy. Port j
 * accumulates ranks r-j, r-j-k, r-j-2k, ..., not a contiguous range, so the
 * operation must be commutative.
 *
 * This is the k-port Direct pattern (the all-gather's direct.c run
 * backwards with a combine), chosen over radix-(k+1) recursive sectioning:
 * it is correct for any P and any counts per rank without folding, and
 * for the short blocks where k ports pay (the latency term divided by k)
 * its extra volume does not matter; long vectors are the job of pairwise
 * (rank order) and recursive_halving.
 *
 * Paper: the k-port model and Direct algorithm of Y. Qian and A. Afsahi,
 * "RDMA-based and SMP-aware multi-port all-gather on multi-rail QsNetII
 * SMP clusters", ICPP 2007 (section 6.1.1), applied to reduce-scatter as in
 * J. Bruck et al., IEEE TPDS 8(11), 1997.
 *
 * Cost (Hockney, k-port; n = max block bytes, gamma = combine time per
 * byte): T = ceil((P-1)/k) (ts + n tau) + (P - 1) n gamma (k combines per
 * round, in parallel only across ports' data, not cores), plus
 * ceil(log2 min(k, P-1)) + 1 combines at the end.
 * Memory: 3 min(k, P-1) n_r bytes of scratch (k accumulators and two sets
 * of k arrival slots).
 * Restrictions: commutative operations only (KP_ERR_UNSUPPORTED otherwise;
 * pairwise keeps rank order). Parameters: k (ports, default 2).
 *
 * Example, P = 5, k = 2, rank 0:
 *   round 0  sends x0[b1] to 1 and x0[b2] to 2; receives x4[b0] into acc1,
 *            x3[b0] into acc2
 *   round 1  sends x0[b3] to 3 and x0[b4] to 4; receives x2[b0], x1[b0]
 *   round 2  acc1 op= x2[b0], acc2 op= x1[b0]
 *   round 3  acc1 op= acc2;  round 4: recv = x0[b0] op acc1
 */
#include "algo/reduce/red_common.h"

int kp_reduce_scatter_kport_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, me = s->rank, k = prm->k;
    const int64_t V = kp_sched_block_off(s, P), off = kp_sched_block_off(s, me), L = kp_sched_block_len(s, me);
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "kport: k = %d ports; k must be >= 1", k);
    if (!s->commute)
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "kport: the operation is not commutative (each port accumulates ranks k apart; "
                               "pairwise keeps rank order)");
    if (V == 0)
        return kp_sched_finish(s);
    if (P == 1) {
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, V);
        return kp_sched_finish(s);
    }
    const int kk = k < P - 1 ? k : P - 1, T = (P - 1 + k - 1) / k;
#define ACC(j) ((int64_t)(j) * L)                                     /* port j+1's accumulator */
#define SLOT(t, j) ((int64_t)kk * L + ((int64_t)((t) % 2) * kk + (j)) * L) /* its arrival in round t */
    kp_sched_need_scratch(s, 3 * (int64_t)kk * L);
    for (int t = 0; t <= T; t++) {
        for (int j = 1; t < T && j <= k && (int64_t)t * k + j <= P - 1; j++) {
            const int d = t * k + j, to = (me + d) % P, from = (me - d + P) % P;
            kp_sched_send(s, to, KP_BUF_SEND, kp_sched_block_off(s, to), kp_sched_block_len(s, to));
            kp_sched_recv(s, from, KP_BUF_SCRATCH, t == 0 ? ACC(j - 1) : SLOT(t, j - 1), L);
        }
        for (int j = 1; t >= 2 && j <= k && (int64_t)(t - 1) * k + j <= P - 1; j++)
            kp_sched_reduce(s, KP_BUF_SCRATCH, SLOT(t - 1, j - 1), KP_BUF_SCRATCH, ACC(j - 1), KP_BUF_SCRATCH,
                            ACC(j - 1), L);
        kp_sched_next_round(s);
    }
    for (int w = 1; w < kk; w *= 2) {
        for (int j = 0; j + w < kk; j += 2 * w)
            kp_sched_reduce(s, KP_BUF_SCRATCH, ACC(j), KP_BUF_SCRATCH, ACC(j + w), KP_BUF_SCRATCH, ACC(j), L);
        kp_sched_next_round(s);
    }
    if (kp_red_partial(s, KP_BUF_SEND, off, KP_BUF_RECV, 0, L)) {
        kp_sched_reduce(s, KP_BUF_SEND, off, KP_BUF_SCRATCH, ACC(0), KP_BUF_SCRATCH, ACC(0), L);
        kp_sched_next_round(s);
        kp_sched_copy(s, KP_BUF_SCRATCH, ACC(0), KP_BUF_RECV, 0, L);
    } else {
        kp_sched_reduce(s, KP_BUF_SEND, off, KP_BUF_SCRATCH, ACC(0), KP_BUF_RECV, 0, L);
    }
#undef ACC
#undef SLOT
    return kp_sched_finish(s);
}
