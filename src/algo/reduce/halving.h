/*
 * Recursive halving with folding: the reduce-scatter half of Rabenseifner's
 * reduce (src/algo/reduce/rabenseifner.c) and the recursive-halving
 * reduce-scatter (src/algo/reduce_scatter/recursive_halving.c).
 *
 * Folding: P' = 2^floor(log2 P), rem = P - P'. Ranks 2i and 2i+1, i < rem,
 * pair up: one of them (the "dropper", 2i unless 2i is `keep`, then 2i+1)
 * sends its whole vector to the other and leaves the halving; the keeper
 * combines it with its own. Active ranks get new numbers q: the pair i gets
 * q = i, rank p >= 2 rem gets q = p - rem. So new rank q stands for the
 * consecutive ranks lo(q) .. hi(q) ({2q, 2q+1} or {q + rem}), and "piece q"
 * of the vector is the part that belongs to them (reduce-scatter: their
 * blocks; reduce: an even cut at whole elements).
 *
 * Halving, step s = 0 .. log2 P' - 1, mask = P' / 2^(s+1): q exchanges
 * with q ^ mask; of the pieces [lo, lo + 2 mask) both hold, the one with
 * the mask bit clear keeps [lo, lo + mask), the other the upper half; each
 * sends the half it gives up and combines the half it keeps with what
 * arrives. After the last step q holds piece q reduced over all ranks.
 * Pairs at distance P'/2 first: the ranks a partial result holds are not
 * contiguous, so this needs a commutative operation.
 *
 * Scratch: the partial result at vector offsets from acc0 (V bytes), the
 * arrival slot at vector offsets from slot0 (V bytes).
 */
#ifndef KP_ALGO_RED_HALVING_H
#define KP_ALGO_RED_HALVING_H

#include "algo/reduce/red_common.h"

typedef struct kp_halving {
    int P, pp, rem, keep; /* ranks, P', P - P', the rank that must stay active (-1: none) */
    int steps;            /* log2 P' */
} kp_halving;

static inline kp_halving kp_halving_init(int P, int keep)
{
    kp_halving h = {P, 1, 0, keep, 0};
    while (h.pp * 2 <= P) {
        h.pp *= 2;
        h.steps++;
    }
    h.rem = P - h.pp;
    return h;
}

/* the rank of pair i (i < rem) that drops out */
static inline int kp_halving_dropper(const kp_halving *h, int i)
{
    return 2 * i == h->keep ? 2 * i + 1 : 2 * i;
}

/* new number of rank p, -1 for a dropper */
static inline int kp_halving_newrank(const kp_halving *h, int p)
{
    if (p >= 2 * h->rem)
        return p - h->rem;
    return p == kp_halving_dropper(h, p / 2) ? -1 : p / 2;
}

/* the rank that acts for new rank q */
static inline int kp_halving_rank(const kp_halving *h, int q)
{
    if (q >= h->rem)
        return q + h->rem;
    return 4 * q + 1 - kp_halving_dropper(h, q); /* the pair's other rank */
}

/* the lowest original rank new rank q stands for (q = P' gives P) */
static inline int kp_halving_lo(const kp_halving *h, int q)
{
    return q >= h->rem ? q + h->rem : 2 * q;
}

/* Byte offset of piece q (q = P' gives the end) of the vector: `rs` 1:
 * the blocks of ranks lo(q) .. (reduce-scatter); 0: an even cut of V
 * bytes at whole elements (reduce). */
static inline int64_t kp_halving_bnd(const kp_sched *s, const kp_halving *h, int rs, int64_t V, int q)
{
    return rs ? kp_sched_block_off(s, kp_halving_lo(h, q)) : kp_red_piece(V, s->elem, q, h->pp);
}

/*
 * Fold and halve. (ib, io): my vector; the partial result goes to (ab, ao)
 * at vector offsets (ab = scratch at acc0, or the root's receive buffer).
 * The last step's combine of the kept piece goes to (db, doff + vector
 * offset) instead when db >= 0 (the result's final place), unless that
 * region overlaps the operand in part (MPI_IN_PLACE); *placed says whether
 * it went there. Returns my new rank q (then piece q is reduced), or -1
 * for a dropper (its vector sent, nothing more to do here).
 */
static inline int kp_halving_run(kp_sched *s, const kp_halving *h, int rs, int64_t V, int ab, int64_t ao,
                                 int64_t slot0, int db, int64_t doff, int *placed)
{
    *placed = 0;
    const int p = s->rank, q = kp_halving_newrank(h, p);
    int cb = KP_BUF_SEND;
    int64_t co = 0;
    kp_sched_need_scratch(s, slot0 + V);
    if (p < 2 * h->rem) { /* fold */
        const int mate = p ^ 1;
        if (q < 0) {
            kp_sched_send(s, mate, KP_BUF_SEND, 0, V);
            return -1;
        }
        kp_sched_recv(s, mate, KP_BUF_SCRATCH, slot0, V);
        kp_sched_next_round(s);
        if (mate < p) /* rank order, although halving needs commutativity anyway */
            kp_sched_reduce(s, KP_BUF_SCRATCH, slot0, KP_BUF_SEND, 0, ab, ao, V);
        else
            kp_sched_reduce(s, KP_BUF_SEND, 0, KP_BUF_SCRATCH, slot0, ab, ao, V);
        kp_sched_next_round(s);
        cb = ab;
        co = ao;
    }
    int lo = 0;
    for (int st = 0, mask = h->pp / 2; st < h->steps; st++, mask /= 2) {
        const int partner = kp_halving_rank(h, q ^ mask);
        const int klo = q & mask ? lo + mask : lo, glo = q & mask ? lo : lo + mask;
        const int64_t ks = kp_halving_bnd(s, h, rs, V, klo), ke = kp_halving_bnd(s, h, rs, V, klo + mask);
        const int64_t gs = kp_halving_bnd(s, h, rs, V, glo), ge = kp_halving_bnd(s, h, rs, V, glo + mask);
        kp_sched_send(s, partner, cb, co + gs, ge - gs);
        kp_sched_recv(s, partner, KP_BUF_SCRATCH, slot0 + ks, ke - ks);
        kp_sched_next_round(s);
        int d = ab;
        int64_t dof = ao + ks;
        if (st == h->steps - 1 && db >= 0 && !kp_red_partial(s, cb, co + ks, db, doff + ks, ke - ks))
            d = db, dof = doff + ks, *placed = 1;
        kp_sched_reduce(s, cb, co + ks, KP_BUF_SCRATCH, slot0 + ks, d, dof, ke - ks);
        kp_sched_next_round(s);
        cb = ab;
        co = ao;
        lo = klo;
    }
    return q;
}

#endif /* KP_ALGO_RED_HALVING_H */
