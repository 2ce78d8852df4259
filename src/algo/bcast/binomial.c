/*
 * Binomial-tree broadcast (baseline).
 *
 * The k-nomial tree of knomial.c with k = 1: on relative ranks rel =
 * (p - root) mod P, the parent of rel > 0 is rel with its lowest set bit
 * cleared and its children are rel + 2^j for every j below that bit (every
 * j for the root) with rel + 2^j < P. A rank receives the whole message
 * from its parent, then sends it to its children one per round, the
 * largest subtree (highest j) first.
 *
 * Paper: the classic binomial broadcast (MPICH's MPIR_Bcast_intra_binomial,
 * Open MPI's ompi_coll_base_bcast_intra_binomial); E. Chan, M. Heimlich,
 * A. Purkayastha and R. van de Geijn, "Collective communication: theory,
 * practice, and experience", CCPE 19(13), 2007, section 4.
 *
 * Cost (Hockney; m = bytes): T = ceil(log2 P) * (ts + m tau).
 * For short messages; scatter_allgather / scatter_ring move (P-1)/P m per
 * step instead of m for long ones.
 * Memory: none. Restrictions: none (any P >= 1, any root). Parameters: none.
 *
 * Example, P = 6, root 2 (rel 0..5 = ranks 2,3,4,5,0,1), 3 steps:
 *   step 0  2 -> 0 (rel 4)
 *   step 1  2 -> 4 (rel 2);  0 -> 1 (rel 5)
 *   step 2  2 -> 3 (rel 1);  4 -> 5 (rel 3)
 * (rank 0's schedule: round 0 receive from 2, round 1 send to 1.)
 *
 * Tree arithmetic: kp_knom_* (k = 1) in peers_bcast.h.
 */
#include "algo/algo.h"
#include "algo/bcast/bcast_common.h"

int kp_bcast_binomial_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    return kp_bcast_knomial_tree(s, 1, "binomial");
}
