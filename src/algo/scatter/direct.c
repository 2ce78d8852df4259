/*
 * k-port Direct scatter.
 *
 * The root sends every other rank its block straight from its send buffer,
 * k messages in flight per round: in round i, port j, it sends to rank
 * root + d (mod P), d = i k + j, for every d <= P - 1 (the shift pattern of
 * the k-port Direct all-gather, peers_kport.h). Every other rank posts one
 * receive into its receive buffer. The root copies its own block into its
 * receive buffer in round 0 (nothing under MPI_IN_PLACE: it stays in the
 * send buffer).
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007 (k-port Direct,
 * section 6.1.1, here from one sender); MPICH's MPIR_Scatter_intra_... linear
 * and Open MPI's ompi_coll_base_scatter_intra_basic_linear are k = P - 1.
 *
 * Cost (Hockney, k-port; m = bytes per block):
 *   T = ceil((P-1)/k) ts + (P-1)/k m tau   (k ports at the root)
 * Memory: none. Restrictions: none (any P >= 1, any root, k >= 1;
 * k >= P - 1 posts every send at once). Parameters: k (ports, default 2).
 *
 * Example, P = 6, root 4, k = 2:
 *   round 0  4 -> 5 (block 5), 4 -> 0 (block 0); copy block 4 -> recv
 *   round 1  4 -> 1, 4 -> 2
 *   round 2  4 -> 3
 *
 * Peer arithmetic: kp_direct_* in allgather/peers_kport.h.
 */
#include "algo/algo.h"
#include "algo/allgather/peers_kport.h"
#include "kport.h"

int kp_scatter_direct_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, root = s->root, k = prm->k;
    const int64_t m = s->bytes;
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "scatter direct: k = %d ports; k must be >= 1", k);
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "scatter direct: root %d is not a rank of 0..%d", root, P - 1);
    if (s->rank != root) {
        kp_sched_recv(s, root, KP_BUF_RECV, 0, m);
        return kp_sched_finish(s);
    }
    if (!s->inplace)
        kp_sched_copy(s, KP_BUF_SEND, (int64_t)root * m, KP_BUF_RECV, 0, m);
    for (int i = 0, n = kp_direct_nsteps(P, k); i < n; i++) {
        for (int j = 1, q; j <= k && (q = kp_direct_send_peer(root, P, k, i, j)) >= 0; j++)
            kp_sched_send(s, q, KP_BUF_SEND, (int64_t)q * m, m);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
