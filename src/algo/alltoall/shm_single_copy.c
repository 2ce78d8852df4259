/*
 * Single-copy all-to-all for ranks on one node.
 *
 * Every rank reads the block meant for it straight from every peer's send
 * buffer with Linux cross-memory attach (process_vm_readv), so each byte is
 * copied once instead of twice through a shared segment. The first post
 * publishes the rank's buffer addresses, the second says "done reading
 * yours"; nobody returns before every peer is done with its send buffer.
 *
 * Cost: T = 2 * (post + wait) + (P-1) * (syscall + m * gamma) + m * gamma,
 * m = bytes per block. Memory: none besides the node's flags.
 * MPI_IN_PLACE: the send data would be overwritten while peers read it, so
 * it is first copied to scratch (one extra local copy) and peers read there.
 * Restrictions: all ranks on one node and cross-memory attach permitted
 * (layout->cma; KPORT_CMA=0 disables it) - KP_ERR_UNSUPPORTED otherwise.
 *
 * Example, P = 3, rank 1:
 *   round 0 post 1; copy send[1] -> recv[1]   round 1 wait for post 1 of 0, 2
 *   round 2 read 0's send[1] -> recv[0], 2's send[1] -> recv[2]
 *   round 3 post 2                             round 4 wait for post 2 of 0, 2
 */
#include "algo/shm_common.h"

int kp_alltoall_shm_single_copy_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank;
    const int64_t m = s->bytes;
    int rc = kp_shm_one_node(s, "alltoall shm_single_copy", 1);
    if (rc)
        return rc;
    if (m == 0)
        return kp_sched_finish(s);
    int src = KP_BUF_SEND;
    if (s->inplace && P > 1) { /* peers read a copy: this rank overwrites its buffer */
        kp_sched_need_scratch(s, (int64_t)P * m);
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SCRATCH, 0, (int64_t)P * m);
        kp_sched_next_round(s);
        src = KP_BUF_SCRATCH;
    }
    int n1 = kp_sched_post(s);
    kp_sched_copy(s, KP_BUF_SEND, (int64_t)me * m, KP_BUF_RECV, (int64_t)me * m, m);
    kp_sched_next_round(s);
    kp_shm_wait_all(s, n1, 0);
    kp_sched_next_round(s);
    for (int q = 0; q < P; q++)
        if (q != me)
            kp_sched_peer_read(s, q, src, (int64_t)me * m, KP_BUF_RECV, (int64_t)q * m, m);
    kp_sched_next_round(s);
    int n2 = kp_sched_post(s);
    kp_sched_next_round(s);
    kp_shm_wait_all(s, n2, 0);
    return kp_sched_finish(s);
}
