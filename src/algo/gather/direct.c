/*
 * k-port Direct gather.
 *
 * Every non-root rank sends its block straight to the root in one message,
 * all at once (one round). The root receives them straight into their
 * places in the receive buffer, k at a time, ordered by distance: in step i
 * it receives the blocks of ranks root - i*k - 1, ..., root - i*k - k
 * (mod P), so ceil((P-1)/k) steps, the last one with fewer ports busy when
 * k does not divide P - 1. This is the receive half of the k-port Direct
 * all-gather (allgather/direct.c) run by the root alone. The root's own
 * block is copied into place in step 0; with MPI_IN_PLACE that copy is onto
 * itself, a no-op. Non-roots never touch the receive buffer.
 *
 * Paper: Y. Qian and A. Afsahi, "Efficient shared memory and RDMA based
 * collectives on multi-rail QsNetII SMP clusters", Cluster Computing 11,
 * 341-354, 2008 (multi-port RDMA-based Direct gather, after their CAC 2006
 * "Efficient RDMA-based multi-port collectives on multi-rail QsNetII
 * clusters"); the Direct pattern is section 6.1.1 of the ICPP 2007
 * all-gather paper. For medium to large messages.
 *
 * Cost (Hockney, k-port; m = bytes per block): T = ceil((P-1)/k) *
 * (ts + m * tau) at the root, which receives one block per port per step.
 * Memory: no scratch. Restrictions: none (any P >= 1, any root, any k >= 1;
 * k >= P-1 finishes in one step). Parameters: k (ports at the root, >= 1).
 *
 * Example, P = 5, k = 2, root = 1 (2 steps at the root):
 *   step 0  root receives blocks 0 and 4 (distance 1, 2)  root holds {1,0,4}
 *   step 1  root receives blocks 3 and 2 (distance 3, 4)  root holds all five
 *   ranks 0, 2, 3, 4 each post their one send at the start.
 *
 * Peer arithmetic: kp_direct_* in allgather/peers_kport.h, tested
 * exhaustively by tests/unit/test_peers_kport.c.
 */
#include "algo/algo.h"
#include "algo/allgather/peers_kport.h"
#include "kport.h"

int kp_gather_direct_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank, root = s->root, k = prm->k;
    const int64_t m = s->bytes;

    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "direct: k = %d ports; k must be >= 1", k);
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "direct: root %d is not a rank of 0..%d", root, P - 1);

    if (p != root) {
        kp_sched_send(s, root, KP_BUF_SEND, 0, m);
        return kp_sched_finish(s);
    }
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)root * m, m);
    const int nsteps = kp_direct_nsteps(P, k);
    for (int i = 0; i < nsteps; i++) {
        for (int j = 1; j <= k && kp_direct_dist(P, k, i, j) > 0; j++) {
            const int from = kp_direct_recv_peer(root, P, k, i, j);
            kp_sched_recv(s, from, KP_BUF_RECV, (int64_t)from * m, m);
        }
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
