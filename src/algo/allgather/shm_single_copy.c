/*
 * Single-copy shared-memory all-gather for ranks on one node.
 *
 * Every rank reads each peer's block straight from the peer's send buffer
 * with Linux cross-memory attach (process_vm_readv), so each byte is copied
 * once instead of twice (into and out of a shared segment). The first post
 * publishes the rank's buffer addresses; the second says "I am done reading
 * your buffers": nobody returns (and lets its caller reuse the send buffer)
 * before every peer has finished reading it.
 *
 * Cost: T = 2 * (post + wait) + (P-1) * (syscall + m * gamma), m = bytes
 * per block. Memory: none besides the node's flags.
 * Restrictions: all ranks on one node, and cross-memory attach permitted
 * between them (detected at run time, layout->cma; KPORT_CMA=0 disables it)
 * - otherwise KP_ERR_UNSUPPORTED, and selection uses shm_flat.
 *
 * Example, P = 3, rank 0:
 *   round 0  post 1 (addresses); copy send -> recv[0]
 *   round 1  wait for post 1 of ranks 1 and 2
 *   round 2  read rank 1's send -> recv[1]; read rank 2's send -> recv[2]
 *   round 3  post 2                round 4  wait for post 2 of ranks 1 and 2
 */
#include "algo/shm_common.h"

int kp_allgather_shm_single_copy_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank;
    const int64_t m = s->bytes;
    int rc = kp_shm_one_node(s, "shm_single_copy", 1);
    if (rc)
        return rc;
    if (m == 0)
        return kp_sched_finish(s);
    int n1 = kp_sched_post(s);
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)me * m, m);
    kp_sched_next_round(s);
    kp_shm_wait_all(s, n1, 0);
    kp_sched_next_round(s);
    for (int q = 0; q < P; q++)
        if (q != me)
            kp_sched_peer_read(s, q, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)q * m, m);
    kp_sched_next_round(s);
    int n2 = kp_sched_post(s);
    kp_sched_next_round(s);
    kp_shm_wait_all(s, n2, 0);
    return kp_sched_finish(s);
}
