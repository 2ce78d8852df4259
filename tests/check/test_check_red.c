/*
 * The checker on the new collectives (bcast, scatter, reduce, allreduce,
 * reduce_scatter_block, reduce_scatter): hand-written schedules that must
 * pass, swept over P (1..sweep_pmax(), tests/check/sweep.h), every root and
 * MPI_IN_PLACE, and broken ones that must fail with the right message: a
 * contribution counted twice or missing, a non-commutative combine out of
 * rank order, an allreduce whose ranks associate differently, a combine
 * reading what the same round receives, a race on the segment, a split
 * element, a broadcast missing at one rank, scatter's wrong block.
 */
#include "kport.h"
#include "sched/check.h"
#include "sweep.h"
#include "../unit/check.h"

#include <stdlib.h>
#include <string.h>

#define PMAX 64

typedef struct {
    int coll, P, root, inplace, commute;
    int64_t bytes, elem;
    const int64_t *block_off;
    const kp_layout *L;
} shape;

static void init(kp_sched *s, const shape *h)
{
    for (int r = 0; r < h->P; r++) {
        /* reduce: only the root passes MPI_IN_PLACE */
        const int ip = h->coll == KP_COLL_REDUCE && r != h->root ? 0 : h->inplace;
        kp_sched_init_coll(&s[r], h->coll, r, h->P, h->bytes, h->root, ip);
        kp_sched_set_reduction(&s[r], h->elem, h->commute, h->block_off);
        s[r].layout = h->L;
    }
}

/* check, then free; needle NULL: must pass, else must fail saying it */
static void expect(const char *what, kp_sched *s, const shape *h, const char *needle)
{
    kp_check_result res;
    int built = 1;
    for (int r = 0; r < h->P; r++)
        if (kp_sched_finish(&s[r]) != KP_SUCCESS) {
            CHECK(0, "%s P=%d: rank %d's hand-written schedule refused: %s", what, h->P, r, s[r].errmsg);
            built = 0;
        }
    if (built) {
        kp_check_scheds(s, h->P, &res);
        if (!needle)
            CHECK(res.ok, "%s P=%d root=%d inplace=%d commute=%d: expected to pass, checker says: %s", what, h->P,
                  h->root, h->inplace, h->commute, res.msg);
        else
            CHECK(!res.ok && strstr(res.msg, needle), "%s P=%d root=%d: expected \"%s\", checker says: %s", what,
                  h->P, h->root, needle, res.ok ? "ok" : res.msg);
    }
    for (int r = 0; r < h->P; r++)
        kp_sched_free(&s[r]);
}

/* ---- bcast: binomial tree from the root ------------------------------------- */

/* mode 1: the root never sends to relative rank 1; 2: the root overwrites
 * its data with scratch it never wrote */
static void bcast_binomial(kp_sched *s, const shape *h, int mode)
{
    init(s, h);
    for (int r = 0; r < h->P; r++) {
        const int vr = (r - h->root + h->P) % h->P;
        for (int mask = 1; mask < h->P; mask <<= 1) {
            if (vr >= mask && vr < 2 * mask && !(mode == 1 && vr == 1))
                kp_sched_recv(&s[r], (vr - mask + h->root) % h->P, KP_BUF_RECV, 0, h->bytes);
            else if (vr < mask && vr + mask < h->P && !(mode == 1 && vr == 0 && mask == 1))
                kp_sched_send(&s[r], (vr + mask + h->root) % h->P, KP_BUF_RECV, 0, h->bytes);
            kp_sched_next_round(&s[r]);
        }
        if (mode == 2 && vr == 0) {
            kp_sched_need_scratch(&s[r], h->bytes);
            kp_sched_copy(&s[r], KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, h->bytes);
        }
    }
}

/* ---- scatter: the root sends block j to rank j ------------------------------ */

/* mode 1: the root sends block j + 1 to rank j */
static void scatter_direct(kp_sched *s, const shape *h, int mode)
{
    init(s, h);
    const kp_sched *root = &s[h->root];
    for (int j = 0; j < h->P; j++) {
        const int64_t off = (int64_t)((j + (mode == 1)) % h->P) * h->bytes;
        if (j != h->root) {
            kp_sched_send(&s[h->root], j, KP_BUF_SEND, off, h->bytes);
            kp_sched_recv(&s[j], h->root, KP_BUF_RECV, 0, h->bytes);
        } else if (!root->inplace) {
            kp_sched_copy(&s[h->root], KP_BUF_SEND, off, KP_BUF_RECV, 0, h->bytes);
        }
    }
}

/* ---- reduce: binomial tree to the root ---------------------------------------
 * Relative rank vr accumulates vr .. vr + 2^k - 1 (relative) in its
 * accumulator (the root's receive buffer, scratch elsewhere): child
 * vr + mask's partial is received into scratch and combined as the right
 * operand. In rank order for root 0 (non-commutative allowed). */
enum { RED_OK, RED_TWICE, RED_MISSING, RED_SWAPPED, RED_SAME_ROUND };

static void reduce_binomial(kp_sched *s, const shape *h, int mode)
{
    init(s, h);
    const int64_t b = h->bytes;
    for (int r = 0; r < h->P; r++) {
        kp_sched *x = &s[r];
        const int vr = (r - h->root + h->P) % h->P;
        const int accbuf = vr == 0 ? KP_BUF_RECV : KP_BUF_SCRATCH;
        const int64_t in = vr == 0 ? 0 : b; /* scratch: [acc | incoming] */
        int have = 0;                       /* accumulator written (else the input is in SEND) */
        kp_sched_need_scratch(x, 2 * b);
        for (int mask = 1; mask < h->P; mask <<= 1) {
            if (vr & mask) {
                kp_sched_send(x, (vr - mask + h->root) % h->P, have ? accbuf : KP_BUF_SEND, 0, b);
                kp_sched_next_round(x);
                break;
            }
            if (vr + mask >= h->P)
                continue;
            const int child = (vr + mask + h->root) % h->P;
            kp_sched_recv(x, child, KP_BUF_SCRATCH, in, b);
            if (!(mode == RED_SAME_ROUND && vr == 0 && mask > 1))
                kp_sched_next_round(x);
            int abuf = have ? accbuf : KP_BUF_SEND, bbuf = KP_BUF_SCRATCH;
            int64_t aoff = 0, boff = in;
            if (mode == RED_TWICE && vr == 0 && mask > 1)
                bbuf = KP_BUF_SEND, boff = 0; /* the root's own input again instead of the child's */
            if (mode == RED_MISSING && vr == 2 && mask == 1) {
                kp_sched_copy(x, KP_BUF_SEND, 0, accbuf, 0, b); /* relative rank 3 dropped */
            } else if (mode == RED_SWAPPED && vr == 0 && mask > 1) {
                kp_sched_reduce(x, bbuf, boff, abuf, aoff, accbuf, 0, b);
            } else {
                kp_sched_reduce(x, abuf, aoff, bbuf, boff, accbuf, 0, b);
            }
            kp_sched_next_round(x);
            have = 1;
        }
        if (vr == 0 && !have)
            kp_sched_copy(x, KP_BUF_SEND, 0, KP_BUF_RECV, 0, b); /* P = 1 (a no-op in place) */
    }
}

/* ---- allreduce: recursive doubling (P a power of two) -------------------------
 * Round 0 copies the input into the receive buffer; step k exchanges it with
 * r ^ 2^k and combines, the lower group's partial on the left: every rank
 * gets ((0+1)+(2+3)).. in the same association. */
static void allreduce_rd(kp_sched *s, const shape *h, int swap_rank)
{
    init(s, h);
    const int64_t b = h->bytes;
    for (int r = 0; r < h->P; r++) {
        kp_sched *x = &s[r];
        kp_sched_need_scratch(x, b);
        kp_sched_copy(x, KP_BUF_SEND, 0, KP_BUF_RECV, 0, b);
        kp_sched_next_round(x);
        for (int mask = 1; mask < h->P; mask <<= 1) {
            const int q = r ^ mask;
            kp_sched_send(x, q, KP_BUF_RECV, 0, b);
            kp_sched_recv(x, q, KP_BUF_SCRATCH, 0, b);
            kp_sched_next_round(x);
            if ((r < q) != (r == swap_rank))
                kp_sched_reduce(x, KP_BUF_RECV, 0, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, b);
            else
                kp_sched_reduce(x, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, KP_BUF_RECV, 0, b);
            kp_sched_next_round(x);
        }
    }
}

/* allreduce, P = 3, every rank receives every input and folds them itself:
 * rank r computes (0+1)+2, or 0+(1+2) when r == other */
static void allreduce_fold3(kp_sched *s, const shape *h, int other)
{
    init(s, h);
    const int64_t b = h->bytes;
    for (int r = 0; r < 3; r++) {
        kp_sched *x = &s[r];
        kp_sched_need_scratch(x, 3 * b);
        for (int q = 0; q < 3; q++)
            if (q != r) {
                kp_sched_send(x, q, KP_BUF_SEND, 0, b);
                kp_sched_recv(x, q, KP_BUF_SCRATCH, q * b, b);
            }
        kp_sched_copy(x, KP_BUF_SEND, 0, KP_BUF_SCRATCH, r * b, b);
        kp_sched_next_round(x);
        if (r == other) {
            kp_sched_reduce(x, KP_BUF_SCRATCH, b, KP_BUF_SCRATCH, 2 * b, KP_BUF_RECV, 0, b);
            kp_sched_next_round(x);
            kp_sched_reduce(x, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, KP_BUF_RECV, 0, b);
        } else {
            kp_sched_reduce(x, KP_BUF_SCRATCH, 0, KP_BUF_SCRATCH, b, KP_BUF_RECV, 0, b);
            kp_sched_next_round(x);
            kp_sched_reduce(x, KP_BUF_RECV, 0, KP_BUF_SCRATCH, 2 * b, KP_BUF_RECV, 0, b);
        }
    }
}

/* ---- reduce-scatter: ring ------------------------------------------------------
 * Step t = 0 .. P-2: rank r sends its partial of block (r - t - 1) mod P to
 * r + 1 and receives block (r - t - 2) mod P's partial from r - 1, which it
 * combines with its own input of that block; after P - 1 steps it holds
 * block r over all ranks. Commutative only (the ring wraps around). Works
 * for reduce_scatter_block and reduce_scatter (block offsets). Scratch:
 * partials of every block at their vector offsets, then the incoming one. */
static void rs_ring(kp_sched *s, const shape *h, int64_t vec)
{
    init(s, h);
    const int P = h->P;
    int64_t maxb = 0;
    for (int j = 0; j < P; j++)
        if (kp_sched_block_len(&s[0], j) > maxb)
            maxb = kp_sched_block_len(&s[0], j);
    for (int r = 0; r < P; r++) {
        kp_sched *x = &s[r];
        const int in = h->inplace ? KP_BUF_RECV : KP_BUF_SEND;
        kp_sched_need_scratch(x, vec + maxb);
        if (P == 1)
            kp_sched_copy(x, in, 0, KP_BUF_RECV, 0, kp_sched_block_len(x, 0));
        for (int t = 0; t < P - 1; t++) {
            const int sb = kp_mod(r - t - 1, P), rb = kp_mod(r - t - 2, P);
            kp_sched_send(x, (r + 1) % P, t == 0 ? in : KP_BUF_SCRATCH, kp_sched_block_off(x, sb),
                          kp_sched_block_len(x, sb));
            kp_sched_recv(x, (r + P - 1) % P, KP_BUF_SCRATCH, vec, kp_sched_block_len(x, rb));
            kp_sched_next_round(x);
            /* the last combine writes the result; in place through scratch (the
             * result's bytes may overlap the input block) */
            const int last = t == P - 2 && !h->inplace;
            kp_sched_reduce(x, KP_BUF_SCRATCH, vec, in, kp_sched_block_off(x, rb), last ? KP_BUF_RECV : KP_BUF_SCRATCH,
                            last ? 0 : kp_sched_block_off(x, rb), kp_sched_block_len(x, rb));
            kp_sched_next_round(x);
        }
        if (P > 1 && h->inplace)
            kp_sched_copy(x, KP_BUF_SCRATCH, kp_sched_block_off(x, r), KP_BUF_RECV, 0, kp_sched_block_len(x, r));
    }
}

/* ---- allreduce in one node's segment ---------------------------------------------
 * Every rank copies its input into its slot of the segment and posts; after
 * waiting for everyone it folds the slots in rank order into its receive
 * buffer ((0+1)+2)+.., posts again and waits for everyone's second post
 * before leaving (the next call may reuse the slots). racy: rank 0 does not
 * wait for rank P-1's first post. */
static void allreduce_shm(kp_sched *s, const shape *h, int racy)
{
    init(s, h);
    const int P = h->P;
    const int64_t b = h->bytes;
    for (int r = 0; r < P; r++) {
        kp_sched *x = &s[r];
        kp_sched_need_shm(x, (int64_t)P * b);
        kp_sched_copy(x, KP_BUF_SEND, 0, KP_BUF_SHM, (int64_t)r * b, b);
        kp_sched_next_round(x);
        const int n1 = kp_sched_post(x);
        kp_sched_next_round(x);
        for (int q = 0; q < P; q++)
            if (q != r && !(racy && r == 0 && q == P - 1))
                kp_sched_wait(x, q, n1);
        kp_sched_next_round(x);
        if (P == 1)
            kp_sched_copy(x, KP_BUF_SHM, 0, KP_BUF_RECV, 0, b);
        for (int q = 1; q < P; q++) {
            kp_sched_reduce(x, q == 1 ? KP_BUF_SHM : KP_BUF_RECV, 0, KP_BUF_SHM, (int64_t)q * b, KP_BUF_RECV, 0, b);
            kp_sched_next_round(x);
        }
        const int n2 = kp_sched_post(x);
        kp_sched_next_round(x);
        for (int q = 0; q < P; q++)
            if (q != r)
                kp_sched_wait(x, q, n2);
    }
}

/* build(s, h, -1) must pass, build(s, h, odd) must fail saying needle */
static void good_then_odd(const char *what, kp_sched *s, const shape *h, void (*build)(kp_sched *, const shape *, int),
                          int odd, const char *needle)
{
    build(s, h, -1);
    expect(what, s, h, NULL);
    build(s, h, odd);
    expect(what, s, h, needle);
}

/* ---- the sweeps -------------------------------------------------------------------- */

static void sweep_good(void)
{
    kp_sched *s = calloc(PMAX, sizeof(*s));
    const int pmax = sweep_pmax();
    int64_t off[PMAX + 1];
    for (int P = 1; P <= pmax; P++) {
        for (int root = 0; root < P; root++)
            for (int ip = 0; ip < 2; ip++) {
                shape h = {KP_COLL_BCAST, P, root, ip, 1, 24, 1, NULL, NULL};
                bcast_binomial(s, &h, 0);
                expect("bcast binomial", s, &h, NULL);
                h.coll = KP_COLL_SCATTER;
                scatter_direct(s, &h, 0);
                expect("scatter direct", s, &h, NULL);
                for (int cm = 0; cm < 2; cm++) {
                    if (!cm && root) /* a binomial tree to root != 0 is out of rank order */
                        continue;
                    shape r = {KP_COLL_REDUCE, P, root, ip, cm, 32, 8, NULL, NULL};
                    reduce_binomial(s, &r, RED_OK);
                    expect("reduce binomial", s, &r, NULL);
                }
            }
        for (int ip = 0; ip < 2; ip++) {
            if (kp_is_pow2(P))
                for (int cm = 0; cm < 2; cm++) {
                    shape h = {KP_COLL_ALLREDUCE, P, 0, ip, cm, 24, 8, NULL, NULL};
                    allreduce_rd(s, &h, -1);
                    expect("allreduce recursive doubling", s, &h, NULL);
                }
            shape h = {KP_COLL_REDUCE_SCATTER_BLOCK, P, 0, ip, 1, 16, 4, NULL, NULL};
            rs_ring(s, &h, (int64_t)P * 16);
            expect("reduce_scatter_block ring", s, &h, NULL);
            off[0] = 0; /* blocks of 0, 1, 2, 0, 1, 2, .. 4-byte elements */
            for (int j = 0; j < P; j++)
                off[j + 1] = off[j] + 4 * (j % 3);
            shape v = {KP_COLL_REDUCE_SCATTER, P, 0, ip, 1, off[P], 4, off, NULL};
            rs_ring(s, &v, off[P]);
            expect("reduce_scatter ring", s, &v, NULL);
        }
    }
    for (int P = 1; P <= (pmax < 12 ? pmax : 12); P++) {
        kp_layout L;
        int ids[12] = {0};
        if (kp_layout_init(&L, P, ids, 0)) {
            CHECK(0, "layout for P=%d", P);
            continue;
        }
        for (int ip = 0; ip < 2; ip++) {
            shape h = {KP_COLL_ALLREDUCE, P, 0, ip, 0, 16, 8, NULL, &L};
            allreduce_shm(s, &h, 0);
            expect("allreduce in the segment", s, &h, NULL);
        }
        kp_layout_free(&L);
    }
    free(s);
}

static void broken(void)
{
    kp_sched s[8];
    shape h = {KP_COLL_BCAST, 5, 2, 0, 1, 24, 1, NULL, NULL};
    bcast_binomial(s, &h, 1);
    expect("bcast missing at one rank", s, &h, "bcast byte 0 was never written");
    bcast_binomial(s, &h, 2);
    expect("bcast root overwrites its data", s, &h, "rank 2: bcast byte 0 was never written");

    h.coll = KP_COLL_SCATTER;
    scatter_direct(s, &h, 1);
    expect("scatter's wrong block", s, &h, "scatter byte 0 holds block");

    shape r = {KP_COLL_REDUCE, 4, 0, 0, 0, 32, 8, NULL, NULL};
    reduce_binomial(s, &r, RED_TWICE);
    expect("reduce: a contribution counted twice", s, &r, "rank 0 op 3 (round 3): rank 0's contribution counted twice");
    reduce_binomial(s, &r, RED_MISSING);
    expect("reduce: a contribution missing", s, &r, "lacks rank 3's contribution (holds 3 of 4 ranks)");
    reduce_binomial(s, &r, RED_SWAPPED);
    expect("reduce: non-commutative out of order", s, &r,
           "non-commutative reduce out of rank order at element 0: a holds ranks 2..3, b holds ranks 0..1");
    r.commute = 1;
    reduce_binomial(s, &r, RED_SWAPPED);
    expect("reduce: swapped operands of a commutative operation", s, &r, NULL);
    reduce_binomial(s, &r, RED_SAME_ROUND);
    expect("reduce reading what its round receives", s, &r, "op 2 (recv) and op 3 (reduce) touch the same region");

    /* rank 1 sends bytes 0..28 and 28..32, which rank 0 stores rotated by 4
     * bytes: its combine then reads parts of two elements as one */
    shape two = {KP_COLL_REDUCE, 2, 0, 0, 0, 32, 8, NULL, NULL};
    init(s, &two);
    kp_sched_send(&s[1], 0, KP_BUF_SEND, 0, 28);
    kp_sched_send(&s[1], 0, KP_BUF_SEND, 28, 4);
    kp_sched_need_scratch(&s[0], 32);
    kp_sched_recv(&s[0], 1, KP_BUF_SCRATCH, 4, 28);
    kp_sched_recv(&s[0], 1, KP_BUF_SCRATCH, 0, 4);
    kp_sched_next_round(&s[0]);
    kp_sched_reduce(&s[0], KP_BUF_SEND, 0, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, 32);
    expect("reduce reading a rotated element", s, &two, "reduce reads a part of an element at its operand b");
    reduce_binomial(s, &r, RED_OK);
    s[0].ops[1].u.reduce.a.off = 4; /* past the builder helper's own refusal */
    s[0].ops[1].u.reduce.b.off = 4;
    s[0].ops[1].u.reduce.dst.off = 4;
    s[0].ops[1].u.reduce.a.len = s[0].ops[1].u.reduce.b.len = s[0].ops[1].u.reduce.dst.len = 8;
    expect("reduce splitting an element", s, &r, "reduce splits an element: send[4..+8] with 8-byte elements");
    kp_sched_init_coll(&s[0], KP_COLL_REDUCE, 0, 1, 32, 0, 0);
    kp_sched_set_reduction(&s[0], 8, 1, NULL);
    kp_sched_reduce(&s[0], KP_BUF_SEND, 0, KP_BUF_SEND, 8, KP_BUF_RECV, 0, 8);
    kp_sched_copy(&s[0], KP_BUF_SEND, 8, KP_BUF_RECV, 8, 24);
    shape one = {KP_COLL_REDUCE, 1, 0, 0, 1, 32, 8, NULL, NULL};
    expect("reduce combining two positions", s, &one, "reduce combines element 0 with element 1 of the vector");

    /* shapes the ranks disagree on, or that do not fit */
    shape rs = {KP_COLL_REDUCE_SCATTER, 2, 0, 0, 1, 16, 8, NULL, NULL};
    init(s, &rs);
    expect("reduce_scatter without block offsets", s, &rs, "reduce_scatter without block offsets");
    shape ip = {KP_COLL_REDUCE, 3, 1, 1, 1, 16, 8, NULL, NULL};
    reduce_binomial(s, &ip, RED_OK);
    s[2].inplace = 1;
    expect("reduce with MPI_IN_PLACE at a non-root", s, &ip, "reduce: rank 2's schedule was built with MPI_IN_PLACE");
    shape ar = {KP_COLL_ALLREDUCE, 2, 0, 0, 1, 16, 8, NULL, NULL};
    init(s, &ar);
    s[1].elem = 4;
    expect("ranks disagreeing on the element", s, &ar, "rank 1's schedule was built for another reduction");
    ar.bytes = 12;
    init(s, &ar);
    expect("a vector of partial elements", s, &ar, "allreduce of 12 bytes is not a whole number of 8-byte elements");

    shape a = {KP_COLL_ALLREDUCE, 3, 0, 0, 1, 16, 8, NULL, NULL};
    good_then_odd("allreduce folded alike, then rank 2 associating differently", s, &a, allreduce_fold3, 2,
                  "allreduce: ranks 0 and 2 hold differently combined results at element 0 (byte 0; not bitwise the "
                  "same in floating point): rank 0 ((0+1)+2), rank 2 (0+(1+2))");
    shape a4 = {KP_COLL_ALLREDUCE, 4, 0, 0, 1, 16, 8, NULL, NULL};
    allreduce_rd(s, &a4, 1);
    expect("allreduce: one rank commutes its operands (commutative)", s, &a4, NULL);
    a4.commute = 0;
    allreduce_rd(s, &a4, 1);
    expect("allreduce: one rank commutes its operands (non-commutative)", s, &a4,
           "rank 1 op 3 (round 2): non-commutative reduce out of rank order at element 0: a holds ranks 1..1, "
           "b holds ranks 0..0");

    kp_layout L;
    int ids[4] = {0, 0, 0, 0};
    if (kp_layout_init(&L, 4, ids, 0) == 0) {
        shape m = {KP_COLL_ALLREDUCE, 4, 0, 0, 1, 16, 8, NULL, &L};
        allreduce_shm(s, &m, 1);
        expect("a race on the segment", s, &m, "race: rank 0 reads (reduce");
        kp_layout_free(&L);
    }

    /* reduce_scatter_block ring with one block's partial dropped at rank 1 */
    shape b = {KP_COLL_REDUCE_SCATTER_BLOCK, 4, 0, 0, 1, 16, 4, NULL, NULL};
    rs_ring(s, &b, 64);
    for (int i = 0; i < s[1].nops; i++)
        if (s[1].ops[i].kind == KP_OP_REDUCE && s[1].ops[i].u.reduce.dst.buf == KP_BUF_RECV)
            s[1].ops[i].u.reduce.a = s[1].ops[i].u.reduce.b; /* own input twice */
    expect("reduce_scatter_block: own input twice", s, &b, "rank 1's contribution counted twice");
}

/* more ranks than one word of contributors holds */
static void many_ranks(void)
{
    kp_sched *s = calloc(130, sizeof(*s));
    if (!s)
        return;
    shape h = {KP_COLL_ALLREDUCE, 128, 0, 0, 0, 16, 8, NULL, NULL};
    good_then_odd("allreduce recursive doubling, 128 ranks, then rank 100 swapping", s, &h, allreduce_rd, 100,
                  "rank 100 op 3 (round 2): non-commutative reduce out of rank order at element 0: a holds ranks "
                  "101..101, b holds ranks 100..100");
    shape b = {KP_COLL_REDUCE_SCATTER_BLOCK, 130, 0, 1, 1, 8, 4, NULL, NULL};
    rs_ring(s, &b, 130 * 8);
    expect("reduce_scatter_block ring, 130 ranks, in place", s, &b, NULL);
    rs_ring(s, &b, 130 * 8);
    for (int i = 0; i < s[129].nops; i++)
        if (s[129].ops[i].kind == KP_OP_REDUCE)
            s[129].ops[i].u.reduce.a = s[129].ops[i].u.reduce.b; /* own input instead of the incoming partial */
    expect("reduce_scatter_block ring, 130 ranks, a partial dropped", s, &b, "rank 129's contribution counted twice");
    free(s);
}

int main(void)
{
    sweep_good();
    broken();
    many_ranks();
    printf("%ld checks, %ld failed\n", checks, fails);
    return fails ? 1 : 0;
}
