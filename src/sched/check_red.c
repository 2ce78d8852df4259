/*
 * Schedule checker, reductions (reduce, allreduce, reduce_scatter_block,
 * reduce_scatter): what a value is, and the checks on every combine and on
 * the results. The rest of the checker (matching, deadlock, round hazards,
 * races) treats a KP_OP_REDUCE as a copy that reads a and b and writes dst
 * (check.c).
 *
 * Values are expressions: a leaf is (call, rank, element position), rank's
 * input at that position; a node is combine(a, b), a the left operand. For
 * allreduce, whose ranks' results are compared, combines are interned in a
 * hash table so that equal trees are equal numbers (the other collectives
 * skip the table: its random accesses were most of their checking time). For a
 * commutative operation combine(a, b) and combine(b, a) are the same value
 * (IEEE + and * commute exactly); association is never ignored, since
 * (x + y) + z and x + (y + z) differ in floating point. Each value carries
 * the set of ranks it holds (a bitset of P bits, one word for P <= 64) and
 * the lowest and highest of them.
 *
 * A granule of a reduction's data holds value << 24 | part, part being its
 * index inside its element (elements are elem / g granules; the checker's
 * granule g divides elem). Inputs: each rank's send buffer (its receive
 * buffer under MPI_IN_PLACE) holds leaf (call, rank, p) at element p of the
 * vector, which is bytes long (P * bytes for reduce_scatter_block).
 *
 * A combine fails when an operand is garbage or not one whole element
 * (bytes moved by parts that do not line up with elements), when the
 * operands come from different calls or element positions, when they share
 * a contributor (a rank counted twice), and, for a non-commutative operation
 * (sched.commute == 0), unless a's ranks are a contiguous range lying
 * immediately below b's contiguous range.
 *
 * Results: element i of the root's (reduce) or every rank's (allreduce)
 * receive buffer, or element i of rank r's block (reduce_scatter[_block]:
 * positions kp_sched_block_off(r) / elem + i), must hold position i's (or
 * the block's) reduction over all P ranks. Allreduce also requires every
 * rank to hold the same expression (bitwise the same result, as MPI
 * requires): the first rank to finish a call sets the reference.
 */
#include "sched/check_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PART_BITS 24
#define PART_MASK ((UINT64_C(1) << PART_BITS) - 1)

typedef struct {
    int64_t a, b;  /* combine: operands (values); leaf: -1, -1 */
    int64_t pos;   /* element position in the vector */
    int call;
    int lo, hi, cnt; /* contributing ranks: lowest, highest, how many */
} node;

typedef struct {
    int64_t a, b; /* a combine's operands */
    int64_t id;   /* its value + 1; 0: an empty slot */
} slot;

struct kp_red {
    node *v;
    uint64_t *mask; /* [cap * nw] contributors of each value */
    int64_t n, cap;
    int nw;
    slot *slot;     /* combines, open addressing (leaves are never looked up) */
    int64_t nslot, nused;
    int sym;        /* commutative: combine(a, b) is combine(b, a) */
    int intern;     /* allreduce: equal combines are one value (ranks' results compared) */
    int64_t *ref[NCALLS_MAX]; /* allreduce: the reference result per position */
    int refrank[NCALLS_MAX];
};

/* the slot to start probing for combine (a, b); symmetric in a and b for a
 * commutative operation */
static uint64_t key_hash(const struct kp_red *t, int64_t a, int64_t b)
{
    if (t->sym && b < a) {
        const int64_t x = a;
        a = b;
        b = x;
    }
    uint64_t h = (uint64_t)a * UINT64_C(0x9e3779b97f4a7c15) ^ ((uint64_t)b + UINT64_C(0x7f4a7c159e3779b9));
    h ^= h >> 29;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    return (h ^ (h >> 32)) & (uint64_t)(t->nslot - 1);
}

static int grow_slots(struct kp_red *t)
{
    struct kp_red o = *t;
    t->nslot = o.nslot ? 2 * o.nslot : 1024;
    t->slot = calloc((size_t)t->nslot, sizeof(slot));
    if (!t->slot) {
        *t = o;
        return -1;
    }
    for (int64_t i = 0; i < o.nslot; i++)
        if (o.slot[i].id) {
            uint64_t h = key_hash(t, o.slot[i].a, o.slot[i].b);
            while (t->slot[h].id)
                h = (h + 1) & (uint64_t)(t->nslot - 1);
            t->slot[h] = o.slot[i];
        }
    free(o.slot);
    return 0;
}

/* a new value with no contributors yet, or -1 when out of memory */
static int64_t new_value(struct kp_red *t, int64_t a, int64_t b)
{
    if (t->n == t->cap) {
        const int64_t nc = t->cap ? 2 * t->cap : 1024;
        node *v = realloc(t->v, (size_t)nc * sizeof(*v));
        if (v)
            t->v = v;
        uint64_t *m = realloc(t->mask, (size_t)(nc * t->nw) * sizeof(*m));
        if (m)
            t->mask = m;
        if (!v || !m)
            return -1;
        t->cap = nc;
    }
    const int64_t id = t->n++;
    t->v[id].a = a;
    t->v[id].b = b;
    memset(&t->mask[id * t->nw], 0, (size_t)t->nw * sizeof(uint64_t));
    return id;
}

static int64_t leaf(ctx *c, int call, int rank, int64_t pos)
{
    struct kp_red *t = c->red;
    const int64_t id = new_value(t, -1, -1);
    if (id >= 0) {
        node *x = &t->v[id];
        x->pos = pos;
        x->call = call;
        x->lo = x->hi = rank;
        x->cnt = 1;
        t->mask[id * t->nw + rank / 64] |= UINT64_C(1) << (rank % 64);
    }
    return id;
}

/* combine(a, b): for allreduce the value already made (for a commutative
 * operation also as combine(b, a), keeping the operands' order first seen)
 * or a new one; elsewhere always a new one (no result is compared with
 * another, and the table's random accesses are most of the checker's time);
 * -1 when out of memory */
static int64_t combine(ctx *c, int64_t a, int64_t b)
{
    struct kp_red *t = c->red;
    uint64_t h = 0;
    if (t->intern) {
        if (2 * (t->nused + 1) > t->nslot && grow_slots(t))
            return -1;
        for (h = key_hash(t, a, b); t->slot[h].id; h = (h + 1) & (uint64_t)(t->nslot - 1)) {
            const slot *x = &t->slot[h];
            if ((x->a == a && x->b == b) || (t->sym && x->a == b && x->b == a))
                return x->id - 1;
        }
    }
    const int64_t id = new_value(t, a, b);
    if (id < 0)
        return -1;
    if (t->intern) {
        t->slot[h] = (slot){a, b, id + 1};
        t->nused++;
    }
    node *x = &t->v[id];
    const node *l = &t->v[a], *r = &t->v[b];
    x->pos = l->pos;
    x->call = l->call;
    x->lo = l->lo < r->lo ? l->lo : r->lo;
    x->hi = l->hi > r->hi ? l->hi : r->hi;
    x->cnt = l->cnt + r->cnt;
    for (int w = 0; w < t->nw; w++)
        t->mask[id * t->nw + w] = t->mask[a * t->nw + w] | t->mask[b * t->nw + w];
    return id;
}

static int64_t gran_per_elem(const ctx *c)
{
    return c->elem / c->g;
}

/* the value of the element at tok[0 .. m): 0 and *id, or 1 (never written)
 * or 2 (not one whole element) */
static int element_value(ctx *c, const uint64_t *tok, int64_t *id)
{
    const int64_t m = gran_per_elem(c);
    for (int64_t k = 0; k < m; k++)
        if (tok[k] == GARBAGE)
            return 1;
    *id = (int64_t)(tok[0] >> PART_BITS);
    for (int64_t k = 0; k < m; k++)
        if ((int64_t)(tok[k] >> PART_BITS) != *id || (int64_t)(tok[k] & PART_MASK) != k)
            return 2;
    return 0;
}

static void set_element(ctx *c, uint64_t *tok, int64_t id)
{
    const int64_t m = gran_per_elem(c);
    for (int64_t k = 0; k < m; k++)
        tok[k] = (uint64_t)id << PART_BITS | (uint64_t)k;
}

/* the first rank both values hold, or -1 */
static int shared_rank(const struct kp_red *t, int64_t a, int64_t b)
{
    for (int w = 0; w < t->nw; w++) {
        uint64_t x = t->mask[a * t->nw + w] & t->mask[b * t->nw + w];
        if (x)
            return w * 64 + __builtin_ctzll(x);
    }
    return -1;
}

/* the first rank the value lacks, or -1 */
static int missing_rank(const ctx *c, int64_t id)
{
    for (int q = 0; q < c->P; q++)
        if (!(c->red->mask[id * c->red->nw + q / 64] >> (q % 64) & 1))
            return q;
    return -1;
}

/* "ranks 2..5" or "6 ranks between 2 and 9, not contiguous" */
static void describe_ranks(const node *x, char *out, size_t n)
{
    if (x->cnt == x->hi - x->lo + 1)
        snprintf(out, n, "ranks %d..%d", x->lo, x->hi);
    else
        snprintf(out, n, "%d ranks between %d and %d, not contiguous", x->cnt, x->lo, x->hi);
}

/* the expression as text: leaves are ranks, "(a+b)" a combine */
static void render(const struct kp_red *t, int64_t id, char *out, size_t n, size_t *len, int depth)
{
    const node *x = &t->v[id];
    if (*len + 8 >= n || depth > 48) {
        if (*len + 4 < n)
            *len += (size_t)snprintf(out + *len, n - *len, "..");
        return;
    }
    if (x->a < 0) {
        *len += (size_t)snprintf(out + *len, n - *len, "%d", x->lo);
        return;
    }
    *len += (size_t)snprintf(out + *len, n - *len, "(");
    render(t, x->a, out, n, len, depth + 1);
    if (*len + 2 < n)
        *len += (size_t)snprintf(out + *len, n - *len, "+");
    render(t, x->b, out, n, len, depth + 1);
    if (*len + 2 < n)
        *len += (size_t)snprintf(out + *len, n - *len, ")");
}

static void text(const struct kp_red *t, int64_t id, char *out, size_t n)
{
    size_t len = 0;
    out[0] = 0;
    render(t, id, out, n, &len, 0);
}

int kp_red_setup(ctx *c)
{
    const int P = c->P;
    const kp_sched *sc = c->sc;
    if ((c->coll == KP_COLL_REDUCE_SCATTER) != (c->block_off != NULL))
        return fail(c, "%s %s block offsets (sched.block_off: reduce_scatter's, and only its)",
                    kp_coll_name(c->coll), c->block_off ? "with" : "without");
    for (int r = 0; r < P; r++) {
        if (c->coll == KP_COLL_REDUCE && r != c->root && sc[r].inplace)
            return fail(c, "reduce: rank %d's schedule was built with MPI_IN_PLACE, which only the root %d passes "
                        "(build the other ranks without it)", r, c->root);
        if (sc[r].elem != sc[0].elem || sc[r].commute != sc[0].commute ||
            (!sc[r].block_off) != (!sc[0].block_off) ||
            (sc[r].block_off && memcmp(sc[r].block_off, sc[0].block_off, (size_t)(P + 1) * sizeof(int64_t))))
            return fail(c, "rank %d's schedule was built for another reduction (element %" PRId64 " bytes, %s, "
                        "%s blocks) than rank 0's (element %" PRId64 " bytes, %s)",
                        r, sc[r].elem, sc[r].commute ? "commutative" : "non-commutative",
                        sc[r].block_off ? "its own" : "regular", sc[0].elem,
                        sc[0].commute ? "commutative" : "non-commutative");
    }
    if (c->bytes % c->elem)
        return fail(c, "%s of %" PRId64 " bytes is not a whole number of %" PRId64 "-byte elements",
                    kp_coll_name(c->coll), c->bytes, c->elem);
    if (c->block_off) {
        if (c->block_off[0] != 0 || c->block_off[P] != c->bytes)
            return fail(c, "reduce_scatter: block offsets run from %" PRId64 " to %" PRId64 ", not 0 to %" PRId64,
                        c->block_off[0], c->block_off[P], c->bytes);
        for (int j = 0; j < P; j++)
            if (c->block_off[j + 1] < c->block_off[j] || c->block_off[j] % c->elem)
                return fail(c, "reduce_scatter: block %d at offset %" PRId64 " (next at %" PRId64 ") is not a "
                            "whole number of %" PRId64 "-byte elements in order", j, c->block_off[j],
                            c->block_off[j + 1], c->elem);
    }
    if (c->elem > (int64_t)PART_MASK)
        return fail(c, "element of %" PRId64 " bytes: the checker handles up to %" PRId64, c->elem,
                    (int64_t)PART_MASK);
    c->red = calloc(1, sizeof(*c->red));
    if (!c->red)
        return fail(c, "checker out of memory");
    c->red->nw = (P + 63) / 64;
    c->red->sym = c->commute != 0;
    c->red->intern = c->coll == KP_COLL_ALLREDUCE; /* only allreduce compares results' trees */
    return 0;
}

void kp_red_free(ctx *c)
{
    struct kp_red *t = c->red;
    if (!t)
        return;
    free(t->v);
    free(t->mask);
    free(t->slot);
    for (int k = 0; k < NCALLS_MAX; k++)
        free(t->ref[k]);
    free(t);
    c->red = NULL;
}

/* the input vector's length in elements */
static int64_t input_elems(const ctx *c)
{
    const int64_t n = c->coll == KP_COLL_REDUCE_SCATTER_BLOCK ? (int64_t)c->P * c->bytes : c->bytes;
    return n / c->elem;
}

int kp_red_fill(ctx *c, int r, int call, uint64_t *in, int64_t avail)
{
    const int64_t m = gran_per_elem(c), ne = input_elems(c);
    if (ne * m > avail)
        return fail(c, "rank %d: its input (%" PRId64 " bytes) does not fit its buffer (%" PRId64 " bytes)", r,
                    ne * c->elem, avail * c->g);
    for (int64_t p = 0; p < ne; p++) {
        const int64_t id = leaf(c, call, r, p);
        if (id < 0)
            return fail(c, "checker out of memory");
        set_element(c, in + p * m, id);
    }
    return 0;
}

int kp_red_combine(ctx *c, int r, int opi, phys a, phys b, phys dst)
{
    const kp_op *op = &c->sc[r].ops[opi];
    const int64_t m = gran_per_elem(c), ne = a.n / m;
    struct kp_red *t = c->red;
    for (int64_t e = 0; e < ne; e++) {
        int64_t v[2];
        const phys *src[2] = {&a, &b};
        const kp_region *reg[2] = {&op->u.reduce.a, &op->u.reduce.b};
        for (int x = 0; x < 2; x++) {
            const int st = element_value(c, src[x]->m->tok + src[x]->lo + e * m, &v[x]);
            if (st)
                return fail(c, "rank %d op %d (round %d): reduce reads %s at its operand %c (%s byte %" PRId64 ")",
                            r, opi, op->round, st == 1 ? "bytes never written" : "a part of an element",
                            "ab"[x], kp_chk_bname(reg[x]->buf), reg[x]->off + e * c->elem);
        }
        const node *l = &t->v[v[0]], *rr = &t->v[v[1]];
        char sa[96], sb[96];
        if (l->call != rr->call)
            return fail(c, "rank %d op %d (round %d): reduce combines call %d's data with call %d's (element %" PRId64
                        " of its operands)", r, opi, op->round, l->call, rr->call, e);
        if (l->pos != rr->pos)
            return fail(c, "rank %d op %d (round %d): reduce combines element %" PRId64 " with element %" PRId64
                        " of the vector", r, opi, op->round, l->pos, rr->pos);
        const int q = shared_rank(t, v[0], v[1]);
        if (q >= 0)
            return fail(c, "rank %d op %d (round %d): rank %d's contribution counted twice at element %" PRId64
                        " (both operands hold it)", r, opi, op->round, q, l->pos);
        if (!c->commute && (l->cnt != l->hi - l->lo + 1 || rr->cnt != rr->hi - rr->lo + 1 || l->hi + 1 != rr->lo)) {
            describe_ranks(l, sa, sizeof(sa));
            describe_ranks(rr, sb, sizeof(sb));
            return fail(c, "rank %d op %d (round %d): non-commutative reduce out of rank order at element %" PRId64
                        ": a holds %s, b holds %s (a must hold the ranks just below b's)",
                        r, opi, op->round, l->pos, sa, sb);
        }
        const int64_t id = combine(c, v[0], v[1]);
        if (id < 0)
            return fail(c, "checker out of memory");
        set_element(c, dst.m->tok + dst.lo + e * m, id);
    }
    return 0;
}

int kp_red_final(ctx *c, int r, int call, const uint64_t *out)
{
    struct kp_red *t = c->red;
    if (c->coll == KP_COLL_REDUCE && r != c->root)
        return 0;
    const int all = c->coll == KP_COLL_REDUCE || c->coll == KP_COLL_ALLREDUCE;
    const int64_t m = gran_per_elem(c), p0 = all ? 0 : kp_sched_block_off(&c->sc[r], r) / c->elem,
                  ne = (all ? c->bytes : kp_sched_block_len(&c->sc[r], r)) / c->elem;
    const char *cn = kp_coll_name(c->coll);
    if (c->coll == KP_COLL_ALLREDUCE && !t->ref[call] && ne) {
        t->ref[call] = malloc((size_t)ne * sizeof(int64_t));
        if (!t->ref[call])
            return fail(c, "checker out of memory");
        t->refrank[call] = -1;
    }
    for (int64_t e = 0; e < ne; e++) {
        int64_t id;
        const int st = element_value(c, out + e * m, &id);
        if (st)
            return fail(c, "%s: rank %d's result at element %" PRId64 " (byte %" PRId64 ") %s (call %d)", cn, r, e,
                        e * c->elem, st == 1 ? "was never written" : "is not one whole element", call);
        const node *x = &t->v[id];
        if (x->call != call)
            return fail(c, "%s: rank %d's result at element %" PRId64 " holds data of call %d in call %d", cn, r, e,
                        x->call, call);
        if (x->pos != p0 + e)
            return fail(c, "%s: rank %d's result at element %" PRId64 " holds element %" PRId64
                        "'s reduction, not element %" PRId64 "'s", cn, r, e, x->pos, p0 + e);
        if (x->cnt != c->P)
            return fail(c, "%s: rank %d's result at element %" PRId64 " (vector element %" PRId64 ") lacks rank %d's "
                        "contribution (holds %d of %d ranks)", cn, r, e, p0 + e, missing_rank(c, id), x->cnt, c->P);
        if (c->coll != KP_COLL_ALLREDUCE)
            continue;
        if (t->refrank[call] < 0) {
            t->ref[call][e] = id;
        } else if (t->ref[call][e] != id) {
            char s0[200], s1[200];
            const int q = t->refrank[call], lo = q < r ? q : r, hi = q ^ r ^ lo;
            text(t, lo == q ? t->ref[call][e] : id, s0, sizeof(s0));
            text(t, lo == q ? id : t->ref[call][e], s1, sizeof(s1));
            return fail(c, "allreduce: ranks %d and %d hold differently combined results at element %" PRId64
                        " (byte %" PRId64 "; not bitwise the same in floating point): rank %d %s, rank %d %s",
                        lo, hi, e, e * c->elem, lo, s0, hi, s1);
        }
    }
    if (c->coll == KP_COLL_ALLREDUCE && t->refrank[call] < 0)
        t->refrank[call] = r;
    return 0;
}
