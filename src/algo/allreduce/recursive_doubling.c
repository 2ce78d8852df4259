/*
 * Recursive-doubling allreduce (any P, any operation).
 *
 * Let Q be the largest power of two <= P. The P ranks are cut into Q
 * contiguous segments of one or two ranks, segment q being ranks
 * [floor(q*P/Q), floor((q+1)*P/Q)) (peers_kport.h's kp_se_* with k = 1);
 * the first rank of a segment is its leader. Fold in: the second rank of a
 * segment sends its vector to its leader, which combines leader (op)
 * second. Then log2 Q steps among the leaders: in step i leader q swaps
 * its whole vector with leader q XOR 2^i and both compute
 * combine(lower, upper) -- the leader whose segments are lower is the left
 * operand on BOTH sides, so the two partners evaluate the same expression
 * on the same operands and hold bitwise the same value, and as segments
 * are contiguous ranges of ranks every combine keeps rank order (MPICH
 * keeps the order the same way; it folds even/odd pairs, kport the
 * balanced segments). Fold out: each leader sends the result to its
 * folded rank. Every rank thus gets the same expression tree, a balanced
 * binary tree over the segments in rank order.
 *
 * The first step sends straight from the send buffer and combines
 * send (op) received into the receive buffer (no copy in); under
 * MPI_IN_PLACE the send buffer is the receive buffer and the combine
 * writes its own left (or right) operand, which the IR allows.
 *
 * Paper: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of
 * collective communication operations in MPICH", IJHPCA 19(1), 2005,
 * section 4.6 (recursive doubling for short messages). For small vectors.
 *
 * Cost (Hockney, gamma = combine time per byte, n = vector bytes):
 *   P = 2^s:  T = s (ts + n tau + n gamma)
 *   else:     T = s (ts + n tau + n gamma) + 2 (ts + n tau) + n gamma
 *   (s = floor(log2 P)). Rounds: 2 per step (exchange, combine).
 * Memory: scratch of n bytes (the partner's vector). Restrictions: none
 * (any P, commutative or not, any element size). Parameters: none.
 *
 * Example, P = 6 (Q = 4 segments {0} {1,2} {3} {4,5}, leaders 0, 1, 3, 4;
 * (a b) is a (op) b):
 *   fold in  2 -> 1: 1 holds (x1 x2); 5 -> 4: 4 holds (x4 x5)
 *   step 0   0 <-> 1: both (x0 (x1 x2));  3 <-> 4: both (x3 (x4 x5))
 *   step 1   0 <-> 3, 1 <-> 4: all four ((x0 (x1 x2)) (x3 (x4 x5)))
 *   fold out 1 -> 2, 4 -> 5
 *
 * Peer arithmetic: kp_se_* (peers_kport.h, tested by
 * tests/unit/test_peers_kport.c); the steps in ar_common.h (shared with
 * recursive_multiplying, of which this is radix 2).
 */
#include "algo/allreduce/ar_common.h"

int kp_allreduce_recursive_doubling_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    int rc;
    if (kp_ar_begin(s, "recursive_doubling", 0, &rc))
        return rc;
    const kp_ar_group g = kp_ar_flat(s);
    kp_ar_group_recmul(s, &g, 1, (kp_ar_at){KP_BUF_SEND, 0}, (kp_ar_at){KP_BUF_RECV, 0}, 0);
    return kp_sched_finish(s);
}
