/*
 * Single-copy gather for ranks on one node.
 *
 * The root reads every block straight from the other ranks' send buffers
 * with Linux cross-memory attach (process_vm_readv): each byte is copied
 * once, by the root, with no shared staging. Every rank posts once to
 * publish its buffer addresses; the root posts again when it has read
 * everything, and nobody returns (and reuses its send buffer) before that.
 *
 * Cost: T = post/wait + (P-1) * (syscall + m * gamma) + post/wait at the
 * root, m = bytes per block. Memory: none besides the node's flags.
 * Restrictions: all ranks on one node and cross-memory attach permitted
 * (layout->cma; KPORT_CMA=0 disables it), else KP_ERR_UNSUPPORTED.
 *
 * Example, P = 3, root 0:
 *   ranks 1, 2: round 0 post 1 | round 1 wait for the root's post 2
 *   root:       round 0 post 1; copy send -> recv[0] | round 1 wait for
 *               post 1 of 1 and 2 | round 2 read 1's send -> recv[1], 2's
 *               send -> recv[2] | round 3 post 2
 */
#include "algo/algo.h"
#include "kport.h"

int kp_gather_shm_single_copy_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank, root = s->root;
    const int64_t m = s->bytes;
    const kp_layout *L = s->layout;
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "gather shm_single_copy: root %d outside 0..%d", root, P - 1);
    if (P > 1 && (!L || L->nnodes != 1))
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED, "gather shm_single_copy needs all %d ranks on one node (%d nodes)",
                               P, L ? L->nnodes : P);
    if (P > 1 && !L->cma)
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "gather shm_single_copy: cross-memory attach (process_vm_readv) is not permitted here");
    if (m == 0)
        return kp_sched_finish(s);
    int n1 = kp_sched_post(s);
    if (me != root) {
        kp_sched_next_round(s);
        kp_sched_wait(s, root, 2); /* the root's second post: it has read my block */
        return kp_sched_finish(s);
    }
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)me * m, m);
    kp_sched_next_round(s);
    for (int q = 0; q < P; q++)
        if (q != me)
            kp_sched_wait(s, q, n1);
    kp_sched_next_round(s);
    for (int q = 0; q < P; q++)
        if (q != me)
            kp_sched_peer_read(s, q, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)q * m, m);
    kp_sched_next_round(s);
    kp_sched_post(s);
    return kp_sched_finish(s);
}
