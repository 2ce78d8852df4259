/*
 * Pairwise reduce-scatter (regular and with counts per rank), in rank
 * order for any operation.
 *
 * In step i = 1 .. P-1 rank r sends rank r+i its block of r's vector and
 * receives from rank r-i that rank's contribution to block r (mod P), one
 * exchange in flight per step; the combine of an arrival runs one step
 * later, beside the next exchange. Arrivals come from r-1, r-2, ..., 0 and
 * then from P-1, P-2, ..., r+1: the first run is prepended to a left
 * accumulator (x_q op left: it holds ranks [q, r]), the second to a right
 * one (it holds [q, P-1]; the first, x_{P-1}, is received straight into
 * it), and the result is left op right, so every combine joins adjacent
 * ranges of ranks, lower ranks as the left operand: the order a
 * non-commutative operation needs, at no extra combine (P - 1 in all, as
 * in the unordered exchange). The result is written into the receive
 * buffer by the last combine, after the last send, so under MPI_IN_PLACE
 * (the input in the receive buffer, the result at its start) no input is
 * overwritten before it is sent; with counts per rank, where the result
 * overlaps the rank's own input block in part, it goes through scratch and
 * a copy. Blocks of 0 bytes send and combine nothing. Arithmetic:
 * kp_red_pairwise_run in src/algo/reduce/red_common.h.
 *
 * Paper: the pairwise-exchange reduce-scatter of R. Thakur, R. Rabenseifner
 * and W. Gropp, "Optimization of collective communication operations in
 * MPICH", IJHPCA 19(1), 2005 (section 4.4: long messages, P - 1 steps);
 * MPICH's MPIR_Reduce_scatter_intra_pairwise (commutative only there).
 *
 * Cost (Hockney; n_j = bytes of block j, n = max_j n_j, gamma = combine
 * time per byte): T = (P - 1) (ts + n tau + n gamma) (+ one combine, the
 * left and right accumulators joined, when 0 < r < P-1); the combine of
 * step i overlaps the exchange of step i+1.
 * Memory: 4 n_r bytes of scratch (two arrival slots, two accumulators).
 * Restrictions: none (any P, any counts, any operation). Parameters: none.
 *
 * Example, P = 4, rank 1 (block 1):
 *   step 1  sends x_1[b2] to 2, receives x_0[b1]       (left: x0, then x0 op x1)
 *   step 2  sends x_1[b3] to 3, receives x_3[b1]       (right: x3)
 *   step 3  sends x_1[b0] to 0, receives x_2[b1]       (right: x2 op x3)
 *   result  (x0 op x1) op (x2 op x3)
 */
#include "algo/reduce/red_common.h"

static int self_rank(const void *ctx, int m)
{
    (void)ctx;
    return m;
}

static int one_range(const void *ctx, int m)
{
    (void)ctx;
    (void)m;
    return 1;
}

static void block_range(const void *ctx, int m, int t, int64_t *off, int64_t *len)
{
    (void)t;
    *off = kp_sched_block_off(ctx, m);
    *len = kp_sched_block_len(ctx, m);
}

int kp_reduce_scatter_pairwise_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    if (kp_sched_block_off(s, s->P) == 0)
        return kp_sched_finish(s);
    const kp_red_members M = {s->P, s->rank, s, self_rank, one_range, block_range};
    const kp_red_opnd init = {-1 - KP_BUF_SEND, 0}, dst = {-1 - KP_BUF_RECV, -kp_sched_block_off(s, s->rank)};
    kp_red_pairwise_run(s, &M, init, dst, 0);
    return kp_sched_finish(s);
}
