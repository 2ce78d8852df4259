/*
 * Scatter + ring all-gather broadcast (for long messages, any P).
 *
 * The scatter of scatter_allgather.c (binomial tree, piece rel owned by the
 * relative rank rel = (p - root) mod P, pieces at floor(i m / P)), then a
 * ring all-gather of the pieces on relative ranks: in step t = 0 .. P-2,
 * rel sends piece (rel - t) mod P to rel + 1 and receives piece
 * (rel - t - 1) mod P from rel - 1. A piece the receiver q already holds
 * from the scatter (its subtree [q, q + subtree(q))) is not sent: both ends
 * know it from (q, P) alone, so the root receives nothing and its
 * predecessor sends nothing to it. The ring moves one piece per step over
 * every link at once: bandwidth-optimal, P - 1 latencies.
 *
 * Paper: E. Chan, M. Heimlich, A. Purkayastha and R. van de Geijn,
 * "Collective communication: theory, practice, and experience", CCPE 19(13),
 * 2007 (long-vector broadcast: scatter + bucket all-gather); MPICH's
 * MPIR_Bcast_intra_scatter_ring_allgather (which likewise skips pieces the
 * receiver has).
 *
 * Cost (Hockney; m = bytes):
 *   T = (ceil(log2 P) + P - 1) ts + 2 (P-1)/P m tau   (at most)
 * Memory: none. Restrictions: none (any P >= 1, any root, any m >= 1).
 * Parameters: none.
 *
 * Example, P = 4, root 0, m = 8 (pieces of 2 bytes):
 *   scatter  0 -> 2: pieces 2,3; 0 -> 1: piece 1; 2 -> 3: piece 3
 *            holds 0:{0,1,2,3} 1:{1} 2:{2,3} 3:{3}
 *   step 0   1 -> 2 piece 1; 2 -> 3 piece 2; 3 -> 0 skipped (the root);
 *            0 -> 1 piece 0
 *   step 1   1 -> 2 piece 0; 2 -> 3 piece 1; 0 -> 1 piece 3
 *   step 2   2 -> 3 piece 0; 0 -> 1 piece 2; 1 -> 2 skipped (2 holds 3)
 */
#include "algo/bcast/bcast_common.h"

int kp_bcast_scatter_ring_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, root = s->root;
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "bcast scatter_ring: root %d is not a rank of 0..%d", root, P - 1);
    if (P == 1 || s->bytes == 0)
        return kp_sched_finish(s);
    const int rel = kp_mod((int64_t)s->rank - root, P);
    const int next = kp_mod((int64_t)s->rank + 1, P), prev = kp_mod((int64_t)s->rank - 1, P);
    kp_bcast_scatter_pieces(s);
    for (int t = 0; t < P - 1; t++) {
        const int out = kp_mod((int64_t)rel - t, P), in = kp_mod((int64_t)rel - t - 1, P);
        kp_bcast_pieces_xfer(s, 1, next, out, 1 - kp_bcast_pieces_known((rel + 1) % P, P, out, 1));
        kp_bcast_pieces_xfer(s, 0, prev, in, 1 - kp_bcast_pieces_known(rel, P, in, 1));
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
