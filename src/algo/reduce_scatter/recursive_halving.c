/*
 * Recursive-halving reduce-scatter (regular and with counts per rank),
 * commutative operations, any P.
 *
 * New ranks and pieces as in src/algo/reduce/halving.h: for P not a power
 * of two, in each of the first rem = P - P' pairs (2i, 2i+1) rank 2i sends
 * its whole vector to 2i+1 and drops out, and active rank q stands for
 * ranks {2q, 2q+1} (q < rem) or {q + rem}; piece q of the vector is the
 * blocks of those ranks (with counts per rank, pieces of any sizes, 0
 * included). In step s (mask P'/2^(s+1)) q exchanges with q ^ mask: it
 * sends the half of its current piece range it gives up and combines the
 * half it keeps with what arrives, until it holds piece q. A rank that
 * stands for itself alone writes its last combine straight into its receive
 * buffer; the keeper of a pair copies its own block there and sends the
 * dropper's block to it. Under MPI_IN_PLACE the input in the receive buffer
 * is read by the fold and the first step only, long before the result is
 * written (where the result overlaps the own input block in part, with
 * counts per rank and a single step, it goes through scratch and a copy).
 *
 * Paper: R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of
 * collective communication operations in MPICH", IJHPCA 19(1), 2005,
 * section 4.4 (recursive halving for commutative operations, short and
 * medium vectors); MPICH's MPIR_Reduce_scatter_intra_recursive_halving.
 *
 * Cost (Hockney; V = bytes of the whole vector, P' = 2^floor(log2 P),
 * f = 1 when P is not a power of two, gamma = combine time per byte; even
 * blocks): T = (log2 P' + 2f) ts + ((P'-1)/P' + f) V tau
 *              + ((P'-1)/P' + f) V gamma
 * (the fold sends the whole vector; the final block to the dropper is the
 * second f ts).
 * Memory: 2 V bytes of scratch (partial result and arrival slot, at vector
 * offsets).
 * Restrictions: commutative operations only (q and q + P'/2 are joined
 * first); a non-commutative one is refused with KP_ERR_UNSUPPORTED
 * (pairwise keeps rank order). Parameters: none.
 *
 * Example, P = 5 (P' = 4, rem = 1), blocks b0..b4:
 *   fold    0 -> 1 (whole vector); q0..q3 = ranks 1, 2, 3, 4; pieces
 *           q0 = b0 b1, q1 = b2, q2 = b3, q3 = b4
 *   step 0  1 <-> 3: 1 keeps b0 b1 b2, 3 keeps b3 b4;  2 <-> 4 likewise
 *   step 1  1 <-> 2: 1 keeps b0 b1, 2 keeps b2;  3 <-> 4: 3 b3, 4 b4
 *   end     1 sends b0 to 0 and keeps b1.
 */
#include "algo/reduce/halving.h"

int kp_reduce_scatter_recursive_halving_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank;
    const int64_t V = kp_sched_block_off(s, P), off = kp_sched_block_off(s, me), len = kp_sched_block_len(s, me);
    if (!s->commute)
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "recursive_halving: the operation is not commutative (halving joins ranks out of "
                               "order; pairwise keeps rank order)");
    if (V == 0)
        return kp_sched_finish(s);
    if (P == 1) {
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, V);
        return kp_sched_finish(s);
    }
    const kp_halving h = kp_halving_init(P, -1);
    const int folded = me < 2 * h.rem;
    int placed;
    kp_sched_need_scratch(s, 2 * V);
    const int q = kp_halving_run(s, &h, 1, V, KP_BUF_SCRATCH, V, 0, folded ? -1 : KP_BUF_RECV, -off, &placed);
    if (q < 0) { /* a dropper: its block from its mate */
        kp_sched_next_round(s);
        kp_sched_recv(s, me ^ 1, KP_BUF_RECV, 0, len);
    } else if (folded) {
        kp_sched_send(s, me ^ 1, KP_BUF_SCRATCH, V + kp_sched_block_off(s, me ^ 1), kp_sched_block_len(s, me ^ 1));
        kp_sched_copy(s, KP_BUF_SCRATCH, V + off, KP_BUF_RECV, 0, len);
    } else if (!placed) {
        kp_sched_copy(s, KP_BUF_SCRATCH, V + off, KP_BUF_RECV, 0, len);
    }
    return kp_sched_finish(s);
}
