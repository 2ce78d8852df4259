/*
 * Shared-memory reduce-scatter for ranks on one node (regular and with
 * counts per rank): every rank reduces its own block over all slots, in
 * rank order, straight into its receive buffer.
 *
 * Every rank copies its whole vector into its slot of the node's segment
 * and posts; once every other rank has posted, rank r combines block r of
 * the P slots, x_0 op x_1 op ... op x_{P-1} (one combine per round, the
 * first one writing the receive buffer), so the order is right for any
 * operation. Waiting for every rank's post, made on entering the call, is
 * the node fence of algo/smp_common.h: a slot is rewritten two calls later
 * (the same half of the segment) only after every reader of this call is
 * done. Under MPI_IN_PLACE the input is copied out of the receive buffer
 * in the first round, before any result is written.
 *
 * Paper: the flat shared-memory reductions of R. L. Graham and G. Shipman,
 * "MPI support for multi-core architectures: optimized shared memory
 * collectives", EuroPVM/MPI 2008 (each rank reduces its own part of the
 * segment); UCC's tl/shm.
 *
 * Cost (V = bytes of the whole vector, n_r = rank r's block, tc = copy time
 * per byte, gamma = combine time per byte, sync = post + wait):
 *   T = V tc + sync + (P - 1) max_r n_r gamma,
 * the combines of all ranks in parallel.
 * Memory: a segment of P stride(V) bytes (per call half; kp_red_stride: V rounded up to
 * a multiple of 128 bytes and of the element); no scratch.
 * Restrictions: all ranks on one node (else KP_ERR_UNSUPPORTED).
 * Parameters: none.
 *
 * Example, P = 3, blocks of 2 elements:
 *   round 0  rank r copies x_r (6 elements) into slot r
 *   round 1  post 1, wait for the others' post 1
 *   round 2  rank r: recv = slot0[b_r] op slot1[b_r]
 *   round 3  rank r: recv op= slot2[b_r]
 */
#include "algo/shm_common.h"
#include "algo/reduce/red_common.h"

int kp_reduce_scatter_shm_flat_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank;
    const int64_t V = kp_sched_block_off(s, P);
    int rc = kp_shm_one_node(s, "reduce_scatter shm_flat", 0);
    if (rc)
        return rc;
    if (V == 0)
        return kp_sched_finish(s);
    if (P == 1) {
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, V);
        return kp_sched_finish(s);
    }
    const int64_t stride = kp_red_stride(V, s->elem);
    kp_sched_need_shm(s, (int64_t)P * stride);
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SHM, (int64_t)me * stride, V);
    kp_sched_next_round(s);
    kp_shm_wait_all(s, kp_sched_post(s), 0);
    kp_sched_next_round(s);
    kp_red_chain(s, P, KP_BUF_SHM, kp_sched_block_off(s, me), stride, KP_BUF_RECV, 0, kp_sched_block_len(s, me));
    return kp_sched_finish(s);
}
