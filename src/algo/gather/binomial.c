/*
 * Binomial-tree gather (baseline).
 *
 * Ranks are renumbered relative to the root, rel = (p - root) mod P. The
 * parent of rel > 0 is rel with its lowest set bit cleared; its children are
 * rel + 2^j for every j below that bit (every j for the root) with
 * rel + 2^j < P, and its subtree is the contiguous relative range [rel,
 * rel + min(lowest set bit of rel, P - rel)). In step j child rel + 2^j
 * sends rel its whole subtree in one message. A non-root rank with children
 * collects its subtree in scratch in relative order (own block first, child
 * rel + 2^j's blocks at scratch block 2^j), one child per round, then sends
 * the scratch to its parent; a leaf sends straight from the send buffer.
 * The root receives straight into the receive buffer: relative block t is
 * absolute block (root + t) mod P, so a child's range is contiguous there
 * too unless it runs past block P-1; that (at most one) child sends its
 * range as two messages, the blocks before the wrap and the rest, which the
 * root receives into the end and the start of the receive buffer. The
 * root's own block is copied into place in step 0; with MPI_IN_PLACE that
 * copy is onto itself, a no-op. Non-roots never touch the receive buffer.
 *
 * Paper: the classic binomial-tree gather (e.g. MPICH's MPIR_Gather_intra_
 * binomial, Open MPI's ompi_coll_base_gather_intra_binomial); E. Chan,
 * M. Heimlich, A. Purkayastha and R. van de Geijn, "Collective
 * communication: theory, practice, and experience", CCPE 19(13), 2007.
 *
 * Cost (Hockney; m = bytes per block): T = ceil(log2 P) * ts
 * + (P-1) * m * tau along the root's path (step j brings min(2^j, P - 2^j)
 * blocks), plus at most one ts for the split message and a local copy of m
 * bytes at every rank with children.
 * Memory: a rank with children other than the root needs
 * kp_binom_subtree(rel) * m bytes of scratch, at most floor(P/2) * m; leaves
 * and the root need none. Restrictions: none (any P >= 1, any root).
 * Parameters: none.
 *
 * Example, P = 6, root = 3 (rel 0..5 = ranks 3,4,5,0,1,2), 3 steps:
 *   step 0  4 -> 3: [4]        0 -> 5: [0]        2 -> 1: [2]
 *           root holds {3,4}   5's scratch [5,0]  1's scratch [1,2]
 *   step 1  5 -> 3: [5,0] wraps: block 5 into recv[5], block 0 into recv[0]
 *   step 2  1 -> 3: [1,2] into recv[1..3)      root holds all six
 *
 * Peer arithmetic: kp_binom_* in peers_coll.h, tested exhaustively by
 * tests/unit/test_peers_barrier_gather.c.
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "kport.h"

int kp_binom_rel(int p, int root, int P)
{
    return kp_mod((int64_t)p - root, P);
}

int kp_binom_abs(int rel, int root, int P)
{
    return kp_mod((int64_t)rel + root, P);
}

int kp_binom_nsteps(int P)
{
    int j = 0;
    for (int64_t d = 1; d < P; d *= 2)
        j++;
    return j;
}

int kp_binom_parent(int rel, int P)
{
    if (rel <= 0 || rel >= P)
        return -1;
    return rel & (rel - 1);
}

int kp_binom_send_step(int rel)
{
    if (rel <= 0)
        return -1;
    int j = 0;
    while (!(rel >> j & 1))
        j++;
    return j;
}

int kp_binom_child(int rel, int P, int j)
{
    if (rel < 0 || rel >= P || j < 0 || j > 30 || (rel > 0 && j >= kp_binom_send_step(rel)))
        return -1;
    const int64_t c = (int64_t)rel + ((int64_t)1 << j);
    return c < P ? (int)c : -1;
}

int kp_binom_subtree(int rel, int P)
{
    if (rel < 0 || rel >= P)
        return 0;
    if (rel == 0)
        return P;
    const int low = rel & -rel;
    return low < P - rel ? low : P - rel;
}

int kp_binom_first_piece(int lo, int cnt, int root, int P)
{
    const int room = P - kp_binom_abs(lo, root, P);
    return cnt < room ? cnt : room;
}

int kp_gather_binomial_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, p = s->rank, root = s->root;
    const int64_t m = s->bytes;

    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "binomial: root %d is not a rank of 0..%d", root, P - 1);

    const int rel = kp_binom_rel(p, root, P);
    if (rel == 0) { /* the root: every child's range straight into place */
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)root * m, m);
        for (int j = 0; j < kp_binom_nsteps(P); j++) {
            const int c = kp_binom_child(0, P, j), cnt = kp_binom_subtree(c, P);
            const int from = kp_binom_abs(c, root, P), first = kp_binom_first_piece(c, cnt, root, P);
            kp_sched_recv(s, from, KP_BUF_RECV, (int64_t)from * m, (int64_t)first * m);
            kp_sched_recv(s, from, KP_BUF_RECV, 0, (int64_t)(cnt - first) * m);
            kp_sched_next_round(s);
        }
        return kp_sched_finish(s);
    }

    /* a non-root: collect the subtree in scratch, then pass it up */
    const int size = kp_binom_subtree(rel, P), parent = kp_binom_parent(rel, P);
    int sbuf = KP_BUF_SEND;
    if (size > 1) {
        sbuf = KP_BUF_SCRATCH;
        kp_sched_need_scratch(s, (int64_t)size * m);
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SCRATCH, 0, m);
    }
    for (int j = 0; j < kp_binom_send_step(rel); j++) {
        const int c = kp_binom_child(rel, P, j);
        if (c < 0)
            break; /* rel + 2^j >= P: no larger child either */
        kp_sched_recv(s, kp_binom_abs(c, root, P), KP_BUF_SCRATCH, (int64_t)(c - rel) * m,
                      (int64_t)kp_binom_subtree(c, P) * m);
        kp_sched_next_round(s);
    }
    /* only a range sent to the root can wrap around its receive buffer */
    const int first = parent == 0 ? kp_binom_first_piece(rel, size, root, P) : size;
    const int to = kp_binom_abs(parent, root, P);
    kp_sched_send(s, to, sbuf, 0, (int64_t)first * m);
    kp_sched_send(s, to, sbuf, (int64_t)first * m, (int64_t)(size - first) * m);
    return kp_sched_finish(s);
}
