/*
 * Single-copy broadcast for ranks on one node: every rank reads the root's
 * buffer straight into its own.
 *
 * Paper: 001_256b9c8d7ad2b1c7.txt (multi-port Direct: the root's message
 * reaches every process at once; here a transfer is Linux cross-memory
 * attach, process_vm_readv, so each rank copies the data once, on its own
 * core). The root's first post publishes its buffer addresses; every other
 * rank waits for it, reads the root's buffer into its own and posts; the
 * root waits for every post before it returns, since its buffer is read
 * until then. Nothing passes through the shared segment, so every byte is
 * copied once instead of twice (into the segment and out again), which is
 * what a large broadcast on one node is bounded by.
 *
 * Cost: T = post/wait + syscall + m * gamma + post/wait, m = bytes (the P-1
 * reads proceed in parallel, bounded by memory bandwidth).
 * Memory: none besides the node's flags.
 * Restrictions: all ranks on one node and cross-memory attach permitted
 * (layout->cma; KPORT_CMA=0 disables it), else KP_ERR_UNSUPPORTED.
 *
 * Example, P = 3, root 1:
 *   root 1:   round 0 post 1 (addresses)      round 1 wait for post 1 of 0 and 2
 *   rank q:   round 0 wait for the root's post 1
 *             round 1 read root's recv -> recv      round 2 post 1
 */
#include "algo/shm_common.h"

int kp_bcast_shm_single_copy_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank, root = s->root;
    const int64_t m = s->bytes;
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "bcast shm_single_copy: root %d outside 0..%d", root, P - 1);
    int rc = kp_shm_one_node(s, "bcast shm_single_copy", 1);
    if (rc)
        return rc;
    if (m == 0 || P == 1)
        return kp_sched_finish(s);
    if (me == root) {
        kp_sched_post(s);
        kp_sched_next_round(s);
        kp_shm_wait_all(s, 1, 0);
        return kp_sched_finish(s);
    }
    kp_sched_wait(s, root, 1);
    kp_sched_next_round(s);
    kp_sched_peer_read(s, root, KP_BUF_RECV, 0, KP_BUF_RECV, 0, m);
    kp_sched_next_round(s);
    kp_sched_post(s);
    return kp_sched_finish(s);
}
