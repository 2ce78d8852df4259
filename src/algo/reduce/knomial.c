/*
 * k-nomial tree reduce (any root, any P, commutative or not).
 *
 * Radix R = k + 1. In step i (distance R^i) a rank whose number rel
 * (counted from the tree's root) is divisible by R^(i+1) receives the
 * partial results of its k children rel + j R^i (j = 1..k, those below P),
 * all k messages in flight at once, and combines them onto its own partial
 * result in order j = 1..k, one combine per round; a rank sends its partial
 * result to its parent in the first step where rel is not divisible by
 * R^(i+1), and is done. A rank's subtree is the contiguous range [rel, rel
 * + R^(its send step)), its children's subtrees follow each other in
 * increasing j, so each combine joins adjacent ranges, the left operand
 * holding the lower ones (tree arithmetic: kp_knom_* and kp_red_tree_run in
 * red_common.h).
 *  - Commutative operation, or root 0: one tree, rel = (p - root) mod P.
 *  - Non-commutative operation, root r > 0: the rotated tree would join
 *    rank P-1 and rank 0 in one subtree, out of order. Two trees run at
 *    once instead, k-nomial over [r, P) rooted at r and over [0, r) rooted
 *    at 0; rank 0 sends the result of [0, r) to r, which combines it last
 *    as the left operand: (x_0 .. x_{r-1}) op (x_r .. x_{P-1}). MPICH
 *    reduces to rank 0 and sends the result to the root, always one step
 *    more; this one is a step longer than the rotated tree only when
 *    ceil(log_R r) + 1 > ceil(log_R P).
 * Leaves send straight from the send buffer; a rank with children combines
 * into scratch (the first combine reads the send buffer), the root into the
 * receive buffer (under MPI_IN_PLACE the first combine overwrites the
 * root's input in place, which is allowed: destination = left operand).
 *
 * Paper: the k-nomial tree of J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal and
 * D. Weathersby, "Efficient algorithms for all-to-all communications in
 * multiport message-passing systems", IEEE TPDS 8(11), 1997 (k ports per
 * step); MPICH's MPIR_Reduce_intra_binomial (k = 1) and UCC's
 * reduce_knomial. Suits short vectors.
 *
 * Cost (Hockney, k-port; m = bytes of the vector, gamma = combine time per
 * byte): T = s (ts + m tau) + s k m gamma with s = ceil(log_R P) steps
 * (the k receives of a step in parallel, their k combines one after the
 * other); non-commutative with root r > 0: s = max(ceil(log_R (P - r)),
 * ceil(log_R r) + 1), plus one combine.
 * Memory: (k + 1) m bytes of scratch at a rank with children (k arrival
 * slots and the partial result), k m at the root; leaves none.
 * Restrictions: none (any P >= 1, any root, any k >= 1; k >= P - 1 is a
 * flat tree: the root receives from every rank in one step).
 * Parameters: k (children per step, default 2).
 *
 * Example, P = 7, k = 2 (R = 3), root 0:
 *   step 0  1, 2 -> 0;  4, 5 -> 3  (6 is divisible by 3: it waits for its
 *           children 7 and 8, which do not exist)
 *   step 1  3 -> 0 with x_3..x_5;  6 -> 0 with x_6
 *   rank 0: acc = x_0 op x_1, acc op= x_2, then acc op= (x_3 x_4 x_5),
 *           acc op= x_6: (((x_0 x_1) x_2) (x_3 x_4 x_5)) x_6.
 * The same with a non-commutative op and root 4: tree [4, 7): 5, 6 -> 4
 * in step 0; tree [0, 4): 1, 2 -> 0 in step 0, 3 -> 0 in step 1; then
 * 0 -> 4 with x_0..x_3 and rank 4 combines (x_0..x_3) op (x_4 x_5 x_6).
 */
#include "algo/reduce/red_common.h"

static int self_rank(const void *ctx, int member)
{
    (void)ctx;
    return member;
}

int kp_reduce_knomial_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, k = prm->k;
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "knomial: k = %d children per step; k must be >= 1", k);
    if (s->root < 0 || s->root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "knomial: root %d is not a rank of 0..%d", s->root, P - 1);
    const kp_red_tree t = {.n = P, .me = s->rank, .root = s->root, .k = k, .commute = s->commute, .ctx = NULL,
                           .rank = self_rank, .len = s->bytes, .ibuf = KP_BUF_SEND, .ioff = 0,
                           .rbuf = KP_BUF_RECV, .roff = 0, .scr = 0};
    kp_red_tree_run(s, &t);
    return kp_sched_finish(s);
}
