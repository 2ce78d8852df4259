/*
 * Recursive-multiplying allreduce, radix k + 1 (any P, any operation).
 *
 * The k-port form of recursive doubling: in step i the ranks form groups of
 * (k+1)^(i+1) consecutive leaders, each of k+1 subgroups of (k+1)^i whose
 * members already hold their subgroup's value; every leader sends its value
 * to the k peers at distances j (k+1)^i (j = 1..k, cyclic in the group),
 * receives theirs, and combines the k+1 values left to right in subgroup
 * order, ((v0 (op) v1) (op) v2) ... Every member of a group evaluates that
 * one expression on the same operands, so all hold bitwise the same value
 * (a member that combined in its own order -- its value first, or the
 * arrival order -- would not), and subgroups are contiguous ranges of ranks,
 * so rank order is kept and non-commutative operations are correct.
 *
 * Any P (kport's correction steps, as the Standard Exchange all-gather's):
 * n = floor(log_{k+1} P), Q = (k+1)^n, c = floor(P / Q), R = c Q leaders;
 * n steps of radix k + 1 and, when c >= 2, one last step of radix c joining
 * the c groups of Q; the P - R < Q remaining ranks are folded into leaders
 * (contiguous segments of 1 or 2 ranks: the second sends its vector to the
 * first before, and gets the result after). MPICH's recexch folds to the
 * largest power of k+1 instead (up to k (k+1)^n ranks folded, k at a leader);
 * here at most one per leader and never more than two steps are added.
 *
 * Paper: the k-port exchange is Y. Qian and A. Afsahi's Standard Exchange
 * (ICPP 2007, section 6.1.2) with combines; MPICH's recursive exchange
 * (allreduce_intra_recexch, D. Sharma et al.) is the same idea. For small
 * to medium vectors on networks with several ports.
 *
 * Cost (Hockney, k-port; n = vector bytes, gamma = combine time per byte):
 *   T = s (ts + n tau + k n gamma)    (s = ceil(log_{k+1} P) steps when
 *                                       P = c (k+1)^n; radix-c step: c - 1)
 *   folded ranks add 2 (ts + n tau) + n gamma. Rounds per step: 1 exchange
 *   + radix - 1 combines (each depends on the previous one).
 * Memory: scratch of k n bytes (one vector per port). Restrictions: none
 * (any P, commutative or not; k >= P - 1: one step). Parameters: k (ports,
 * >= 1; default 2; k = 1 is recursive_doubling).
 *
 * Example, P = 7, k = 2: n = 1, Q = 3, c = 2, R = 6 leaders; segments
 * {0} {1} {2} {3} {4} {5,6}:
 *   fold in  6 -> 5: 5 holds (x5 x6)
 *   step 0   radix 3, groups {0,1,2} {3,4,5}: 0, 1, 2 hold ((x0 x1) x2),
 *            3, 4, 5 hold ((x3 x4) (x5 x6))
 *   step 1   radix 2, distance 3: 0<->3, 1<->4, 2<->5: all hold
 *            (((x0 x1) x2) ((x3 x4) (x5 x6)))
 *   fold out 5 -> 6
 *
 * Peer arithmetic: kp_se_* (peers_kport.h, tested by
 * tests/unit/test_peers_kport.c); the steps in ar_common.h.
 */
#include "algo/allreduce/ar_common.h"

int kp_allreduce_recursive_multiplying_build(kp_sched *s, const kp_params *prm)
{
    int rc;
    if (prm->k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "recursive_multiplying: k = %d ports; k must be >= 1", prm->k);
    if (kp_ar_begin(s, "recursive_multiplying", 0, &rc))
        return rc;
    const kp_ar_group g = kp_ar_flat(s);
    kp_ar_group_recmul(s, &g, prm->k, (kp_ar_at){KP_BUF_SEND, 0}, (kp_ar_at){KP_BUF_RECV, 0}, 0);
    return kp_sched_finish(s);
}
