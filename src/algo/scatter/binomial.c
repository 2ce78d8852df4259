/*
 * Binomial-tree scatter (baseline).
 *
 * The gather tree of gather/binomial.c run the other way. On relative
 * ranks rel = (p - root) mod P, the parent of rel > 0 is rel with its
 * lowest set bit cleared and its subtree is the relative range [rel, rel +
 * kp_binom_subtree(rel)). The root sends each child c the blocks of c's
 * subtree, largest subtree first, one child per round, straight from its
 * send buffer: relative block t is absolute block (root + t) mod P, so a
 * child's range is contiguous there unless it runs past block P-1, and
 * that (at most one) child gets it as two messages. A rank with children
 * receives its subtree's blocks into scratch in relative order (from the
 * root: the two messages back to back), copies its own (first) block to
 * its receive buffer and forwards each child's range from scratch, largest
 * first; a leaf receives its block straight into its receive buffer. The
 * root copies its own block to its receive buffer (nothing under
 * MPI_IN_PLACE: it stays in the send buffer).
 *
 * Paper: the classic binomial scatter (MPICH's MPIR_Scatter_intra_binomial,
 * Open MPI's ompi_coll_base_scatter_intra_binomial); E. Chan, M. Heimlich,
 * A. Purkayastha and R. van de Geijn, CCPE 19(13), 2007.
 *
 * Cost (Hockney; m = bytes per block): T = ceil(log2 P) ts + (P-1) m tau
 * along the root's path (its children get min(2^j, P - 2^j) blocks), plus
 * at most one ts for the split message and a local copy of m bytes at every
 * inner rank.
 * Memory: kp_binom_subtree(rel) * m bytes of scratch at an inner rank other
 * than the root (at most floor(P/2) m); none at leaves and the root.
 * Restrictions: none (any P >= 1, any root). Parameters: none.
 *
 * Example, P = 6, root 3 (rel 0..5 = ranks 3,4,5,0,1,2), 3 rounds at the root:
 *   round 0  3 -> 1: blocks [1,2] (rel 4, 5) into 1's scratch
 *   round 1  3 -> 5: blocks 5, 0 (rel 2, 3): wraps, two messages, from
 *            send[5] and send[0]; 1 -> 2: block 2
 *   round 2  3 -> 4: block 4; 5 -> 0: block 0 (from scratch block 1)
 *
 * Tree arithmetic: kp_binom_* in peers_coll.h (gather/binomial.c).
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "kport.h"

int kp_scatter_binomial_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, p = s->rank, root = s->root;
    const int64_t m = s->bytes;

    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "scatter binomial: root %d is not a rank of 0..%d", root, P - 1);
    const int rel = kp_binom_rel(p, root, P);
    if (rel == 0) { /* the root: every child's range from the send buffer */
        if (!s->inplace)
            kp_sched_copy(s, KP_BUF_SEND, (int64_t)root * m, KP_BUF_RECV, 0, m);
        for (int j = kp_binom_nsteps(P) - 1; j >= 0; j--) {
            const int c = kp_binom_child(0, P, j), cnt = kp_binom_subtree(c, P);
            const int to = kp_binom_abs(c, root, P), first = kp_binom_first_piece(c, cnt, root, P);
            kp_sched_send(s, to, KP_BUF_SEND, (int64_t)to * m, (int64_t)first * m);
            kp_sched_send(s, to, KP_BUF_SEND, 0, (int64_t)(cnt - first) * m);
            kp_sched_next_round(s);
        }
        return kp_sched_finish(s);
    }

    const int size = kp_binom_subtree(rel, P), parent = kp_binom_parent(rel, P);
    const int from = kp_binom_abs(parent, root, P);
    if (size == 1) { /* a leaf */
        kp_sched_recv(s, from, KP_BUF_RECV, 0, m);
        return kp_sched_finish(s);
    }
    /* only a range from the root can come in two messages */
    const int first = parent == 0 ? kp_binom_first_piece(rel, size, root, P) : size;
    kp_sched_need_scratch(s, (int64_t)size * m);
    kp_sched_recv(s, from, KP_BUF_SCRATCH, 0, (int64_t)first * m);
    kp_sched_recv(s, from, KP_BUF_SCRATCH, (int64_t)first * m, (int64_t)(size - first) * m);
    kp_sched_next_round(s);
    kp_sched_copy(s, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, m);
    for (int j = kp_binom_send_step(rel) - 1; j >= 0; j--) {
        const int c = kp_binom_child(rel, P, j);
        if (c < 0)
            continue; /* rel + 2^j >= P */
        kp_sched_send(s, kp_binom_abs(c, root, P), KP_BUF_SCRATCH, (int64_t)(c - rel) * m,
                      (int64_t)kp_binom_subtree(c, P) * m);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
