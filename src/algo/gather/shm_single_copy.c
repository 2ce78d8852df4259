/*
 * Single-copy gather for ranks on one node: every rank writes its block
 * into the root's receive buffer.
 *
 * Paper: 001_256b9c8d7ad2b1c7.txt (multi-port Direct gather: each process
 * puts its block at its place in the root's buffer; here a put is Linux
 * cross-memory attach, process_vm_writev). The root's first post publishes
 * its buffer addresses; every other rank waits for it, writes its block
 * straight into recv[rank] at the root, and posts; the root copies its own
 * block meanwhile and waits for every post. The copies run on all the
 * ranks' cores at once instead of one after another at the root, and
 * nothing passes through the shared segment.
 *
 * Cost: T = post/wait + syscall + m * gamma + post/wait, m = bytes per block
 * (the P-1 writes proceed in parallel, bounded by memory bandwidth).
 * Memory: none besides the node's flags.
 * Restrictions: all ranks on one node and cross-memory attach permitted
 * (layout->cma; KPORT_CMA=0 disables it), else KP_ERR_UNSUPPORTED.
 *
 * Example, P = 3, root 0:
 *   root:   round 0 post 1 (addresses); copy send -> recv[0]
 *           round 1 wait for post 1 of ranks 1 and 2
 *   rank q: round 0 wait for the root's post 1
 *           round 1 write send -> root's recv[q]      round 2 post 1
 */
#include "algo/shm_common.h"

int kp_gather_shm_single_copy_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank, root = s->root;
    const int64_t m = s->bytes;
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "gather shm_single_copy: root %d outside 0..%d", root, P - 1);
    int rc = kp_shm_one_node(s, "gather shm_single_copy", 1);
    if (rc)
        return rc;
    if (m == 0)
        return kp_sched_finish(s);
    if (me == root) {
        kp_sched_post(s);
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)me * m, m);
        kp_sched_next_round(s);
        kp_shm_wait_all(s, 1, 0);
        return kp_sched_finish(s);
    }
    kp_sched_wait(s, root, 1);
    kp_sched_next_round(s);
    kp_sched_peer_write(s, root, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)me * m, m);
    kp_sched_next_round(s);
    kp_sched_post(s);
    return kp_sched_finish(s);
}
