/*
 * Rabenseifner's reduce: reduce-scatter by recursive halving, then a
 * binomial gather of the pieces to the root (commutative operations, any P,
 * any root).
 *
 * The vector of m bytes is cut into P' = 2^floor(log2 P) pieces at whole
 * elements. Folding (P not a power of two): in each of the first rem = P -
 * P' pairs (2i, 2i+1) one rank sends its whole vector to the other and
 * drops out; the root never drops out (in its pair the other rank does).
 * Recursive halving among the P' active ranks, pairs at distance P'/2
 * first, leaves active rank q with piece q reduced over all ranks
 * (src/algo/reduce/halving.h). The gather runs the other way, distance 1
 * first: at distance d the rank whose bit d differs from the root's sends
 * the d pieces it holds to its partner and is done, so every message is a
 * contiguous range of pieces at their own vector offsets and the root ends
 * with all of them, straight in its receive buffer (the root combines into
 * the receive buffer from the first step; under MPI_IN_PLACE each combine
 * overwrites the input in place, destination = left operand).
 *
 * Paper: R. Rabenseifner, "Optimization of collective reduction
 * operations", ICCS 2004 (reduce_scatter + gather, section 3); R. Thakur,
 * R. Rabenseifner and W. Gropp, "Optimization of collective communication
 * operations in MPICH", IJHPCA 19(1), 2005 (folding for any P). For long
 * vectors.
 *
 * Cost (Hockney; m bytes, gamma = combine time per byte): with s = log2 P'
 * and f = 1 when P is not a power of two,
 *   T = (2 s + f) ts + (2 (P'-1)/P' + f) m tau + ((P'-1)/P' + f) m gamma,
 * against knomial's log_R P (ts + m tau + k m gamma) for long vectors.
 * Memory: 2 m bytes of scratch (partial result and arrival slot), m at the
 * root (its partial result is its receive buffer).
 * Restrictions: commutative operations only (halving joins ranks q and q +
 * P'/2 first); a non-commutative one is refused with KP_ERR_UNSUPPORTED
 * (knomial keeps rank order). Parameters: none.
 *
 * Example, P = 6 (P' = 4, rem = 2), root 0, pieces A B C D of the vector:
 *   fold     1 -> 0 (the root stays), 2 -> 3: new ranks q0..q3 = ranks
 *            0, 3, 4, 5; 0 holds x0+x1, 3 holds x2+x3
 *   halve 1  0 <-> 4: 0 keeps AB, 4 keeps CD;  3 <-> 5: 3 keeps AB, 5 CD
 *   halve 2  0 <-> 3: 0 keeps A, 3 keeps B;  4 <-> 5: 4 keeps C, 5 keeps D
 *   gather   d = 1: 3 -> 0 (B), 5 -> 4 (D);  d = 2: 4 -> 0 (C D)
 */
#include "algo/reduce/halving.h"

int kp_reduce_rabenseifner_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, root = s->root;
    const int64_t m = s->bytes;
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "rabenseifner: root %d is not a rank of 0..%d", root, P - 1);
    if (!s->commute)
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "rabenseifner: the operation is not commutative (recursive halving joins ranks out of "
                               "order; knomial keeps rank order)");
    if (P == 1 || m == 0) {
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, P == 1 ? m : 0);
        return kp_sched_finish(s);
    }
    const kp_halving h = kp_halving_init(P, root);
    const int amroot = s->rank == root;
    const int ab = amroot ? KP_BUF_RECV : KP_BUF_SCRATCH;
    const int64_t ao = amroot ? 0 : m;
    int placed;
    kp_sched_need_scratch(s, amroot ? m : 2 * m);
    const int q = kp_halving_run(s, &h, 0, m, ab, ao, 0, -1, 0, &placed);
    if (q < 0)
        return kp_sched_finish(s);
    const int qr = kp_halving_newrank(&h, root);
    for (int mask = 1; mask < h.pp; mask *= 2) {
        const int partner = q ^ mask;
        if ((q & mask) != (qr & mask)) { /* my pieces [q & ~(mask-1), + mask) to the partner */
            const int base = q & ~(mask - 1);
            const int64_t a = kp_halving_bnd(s, &h, 0, m, base), b = kp_halving_bnd(s, &h, 0, m, base + mask);
            kp_sched_send(s, kp_halving_rank(&h, partner), ab, ao + a, b - a);
            break;
        }
        const int pbase = partner & ~(mask - 1);
        const int64_t a = kp_halving_bnd(s, &h, 0, m, pbase), b = kp_halving_bnd(s, &h, 0, m, pbase + mask);
        kp_sched_recv(s, kp_halving_rank(&h, partner), ab, ao + a, b - a);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
