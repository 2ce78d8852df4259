/*
 * Single-copy scatter for ranks on one node: every rank reads its block
 * from the root's send buffer.
 *
 * The root's first post publishes its buffer addresses; every other rank
 * waits for it, reads its block straight from the root's send buffer
 * (Linux cross-memory attach, process_vm_readv) into its receive buffer,
 * and posts; the root copies its own block meanwhile (nothing under
 * MPI_IN_PLACE) and waits for every post before it returns, so its send
 * buffer stays valid while it is read. The P - 1 copies run on all the
 * ranks' cores at once instead of one after another at the root, and
 * nothing passes through the shared segment.
 *
 * Paper: the gather of gather/shm_single_copy.c run the other way (there:
 * a put into the root's buffer; here: a get from it), after the kernel-
 * assisted collectives of T. Ma, G. Bosilca, A. Bouteiller and J. Dongarra,
 * "Kernel-assisted and topology-aware MPI collective communications on
 * multicore/many-core platforms", JPDC 73(7), 2013.
 *
 * Cost: T = post/wait + syscall + m gamma + post/wait, m = bytes per block
 * (the P - 1 reads proceed in parallel, bounded by memory bandwidth).
 * Memory: none besides the node's flags.
 * Restrictions: all ranks on one node and cross-memory attach permitted
 * (layout->cma; KPORT_CMA=0 disables it), else KP_ERR_UNSUPPORTED.
 * Parameters: none.
 *
 * Example, P = 3, root 2:
 *   root:   round 0 post 1 (addresses); copy send[2] -> recv
 *           round 1 wait for post 1 of ranks 0 and 1
 *   rank q: round 0 wait for the root's post 1
 *           round 1 read the root's send[q] -> recv     round 2 post 1
 */
#include "algo/shm_common.h"

int kp_scatter_shm_single_copy_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank, root = s->root;
    const int64_t m = s->bytes;
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "scatter shm_single_copy: root %d outside 0..%d", root, P - 1);
    int rc = kp_shm_one_node(s, "scatter shm_single_copy", 1);
    if (rc)
        return rc;
    if (m == 0)
        return kp_sched_finish(s);
    if (me == root) {
        if (P > 1)
            kp_sched_post(s);
        if (!s->inplace)
            kp_sched_copy(s, KP_BUF_SEND, (int64_t)me * m, KP_BUF_RECV, 0, m);
        kp_sched_next_round(s);
        kp_shm_wait_all(s, 1, 0);
        return kp_sched_finish(s);
    }
    kp_sched_wait(s, root, 1);
    kp_sched_next_round(s);
    kp_sched_peer_read(s, root, KP_BUF_SEND, (int64_t)me * m, KP_BUF_RECV, 0, m);
    kp_sched_next_round(s);
    kp_sched_post(s);
    return kp_sched_finish(s);
}
