/*
 * Shared pieces of the allreduce builders (one file each under src/algo/allreduce/).
 *
 * 1. kp_ar_begin: the checks every builder makes first (the vector is whole
 *    elements; a builder that needs a commutative operation refuses another
 *    one) and the trivial cases (0 bytes: nothing; P = 1: the copy).
 * 2. kp_ar_cut: a vector of whole elements cut into `parts` pieces of
 *    floor or ceil(elements / parts) elements (empty pieces when there are
 *    fewer elements than parts), so no combine ever splits an element.
 * 3. Groups: an allreduce among N participants named 0..N-1 whose ranks a
 *    callback gives (every rank for the flat builders, the node leaders for
 *    smp), each with its contribution at `in` and its result wanted at `out`
 *    (a buffer and an offset; the vector is s->bytes long). Participant
 *    order is rank order: participant a < b holds only ranks below b's, so a
 *    combine of a lower participant's value (left operand) with a higher
 *    one's keeps rank order (non-commutative operations).
 *    - Folding (kp_ar_fold_in / kp_ar_fold_out): the N participants are cut
 *      into R contiguous segments of 1 or 2 (peers_kport.h's Standard
 *      Exchange segments, R = kp_se_nleaders(N, k)); the second of a segment
 *      sends its contribution to the first (the leader), which combines
 *      leader (op) second and later returns the whole result.
 *    - Recursive multiplying (kp_ar_recmul): the R leaders run the Standard
 *      Exchange steps (radix k+1, then one step of radix c when c >= 2);
 *      in each step every member of a group of `radix` subgroups sends its
 *      value to its radix-1 peers and receives theirs, then combines the
 *      radix values IN SUBGROUP ORDER, left to right: ((v0 (op) v1) (op) v2)
 *      ... Every member of the group evaluates that same expression on the
 *      same operands, so all hold bitwise the same value, and subgroups are
 *      contiguous ranges of ranks, so rank order is kept.
 */
#ifndef KP_ALLREDUCE_AR_COMMON_H
#define KP_ALLREDUCE_AR_COMMON_H

#include "algo/algo.h"
#include "algo/allgather/peers_kport.h"
#include "algo/shm_common.h"
#include "kport.h"

/* Checks and trivial cases. Returns 1 when the builder is done (*rc is its
 * return value), 0 when it goes on. */
static inline int kp_ar_begin(kp_sched *s, const char *name, int need_commute, int *rc)
{
    const int64_t e = s->elem > 0 ? s->elem : 1;
    *rc = KP_SUCCESS;
    if (s->bytes % e) {
        *rc = kp_sched_refuse(s, KP_ERR_ARG, "%s: %lld bytes is not a whole number of %lld-byte elements", name,
                              (long long)s->bytes, (long long)e);
        return 1;
    }
    if (need_commute && !s->commute && s->P > 1) {
        *rc = kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                              "%s combines out of rank order: it needs a commutative operation", name);
        return 1;
    }
    if (s->bytes == 0 || s->P == 1) {
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, s->bytes);
        *rc = kp_sched_finish(s);
        return 1;
    }
    return 0;
}

/* byte offset of piece j (0..parts) of the s->bytes-long vector cut into
 * `parts` element-aligned pieces */
static inline int64_t kp_ar_cut(const kp_sched *s, int64_t len, int parts, int j)
{
    const int64_t e = s->elem > 0 ? s->elem : 1;
    return (len / e) * j / parts * e;
}

/* lcm(e, 64): shared-memory areas that start on a cache line and on an
 * element (combine offsets are whole elements) */
static inline int64_t kp_ar_align(int64_t e)
{
    int64_t a = e, b = 64;
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return e / a * 64;
}

/* Small vectors in the flag lines (one node): the vector fits in a line
 * after the flag, at an offset that is a whole number of elements
 * (kp_ar_line_off: max(8, elem), elem dividing KP_LINE). */
static inline int64_t kp_ar_line_off(const kp_sched *s, int local)
{
    const int64_t e = s->elem > 0 ? s->elem : 1;
    return (int64_t)local * KP_LINE + (e > 8 ? e : 8);
}
static inline int kp_ar_lines_fit(const kp_sched *s)
{
    const int64_t e = s->elem > 0 ? s->elem : 1;
    return KP_LINE % e == 0 && kp_ar_line_off(s, 0) + s->bytes <= KP_LINE;
}
/* Every rank of the one node copies its vector into its flag line and
 * posts on it; every rank then combines all P vectors itself, left to
 * right in rank order, into its receive buffer: the same expression on the
 * same operands everywhere, one synchronisation (rank = local index). */
static inline int kp_ar_by_lines(kp_sched *s)
{
    const int64_t n = s->bytes;
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_LINE, kp_ar_line_off(s, s->rank), n);
    kp_sched_next_round(s);
    kp_shm_wait_all(s, kp_sched_post_line(s), 1);
    kp_sched_next_round(s);
    for (int t = 1; t < s->P; t++) {
        if (t == 1)
            kp_sched_reduce(s, KP_BUF_LINE, kp_ar_line_off(s, 0), KP_BUF_LINE, kp_ar_line_off(s, 1), KP_BUF_RECV, 0, n);
        else
            kp_sched_reduce(s, KP_BUF_RECV, 0, KP_BUF_LINE, kp_ar_line_off(s, t), KP_BUF_RECV, 0, n);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}

/* a place in a buffer */
typedef struct kp_ar_at {
    int buf;
    int64_t off;
} kp_ar_at;

/* the participants of a group allreduce */
typedef struct kp_ar_group {
    int N;  /* participants */
    int me; /* my index */
    int (*rank_of)(const void *ctx, int q);
    const void *ctx;
} kp_ar_group;

static inline int kp_ar_rank(const kp_ar_group *g, int q) { return g->rank_of(g->ctx, q); }

/* the flat group: participant q is rank q */
static inline int kp_ar_rank_self(const void *ctx, int q)
{
    (void)ctx;
    return q;
}
static inline kp_ar_group kp_ar_flat(const kp_sched *s)
{
    kp_ar_group g = {s->P, s->rank, kp_ar_rank_self, NULL};
    return g;
}

static inline int kp_ar_same(kp_ar_at a, kp_ar_at b) { return a.buf == b.buf && a.off == b.off; }

/* dst = a (op) b over the vector at offset off, len bytes */
static inline void kp_ar_combine(kp_sched *s, kp_ar_at a, kp_ar_at b, kp_ar_at d, int64_t off, int64_t len)
{
    kp_sched_reduce(s, a.buf, a.off + off, b.buf, b.off + off, d.buf, d.off + off, len);
}

/* Folding in. A folded participant (second of its segment) sends its
 * contribution to its leader and gets the whole result at `out` at the
 * end: its whole schedule; returns 0. A leader returns 1 and sets *cur to
 * where its value (its segment's) is: `in`, or `out` after combining its
 * folded partner's contribution, received into scratch at sbase. *lidx is
 * the leader's index among the R leaders. */
static inline int kp_ar_fold_in(kp_sched *s, const kp_ar_group *g, int k, kp_ar_at in, kp_ar_at out,
                                int64_t sbase, kp_ar_at *cur, int *lidx)
{
    const int64_t n = s->bytes;
    const int R = kp_se_nleaders(g->N, k), q = kp_se_seg_of(g->N, R, g->me);
    const int lead = kp_se_seg_start(g->N, R, q), end = kp_se_seg_start(g->N, R, q + 1);
    *lidx = q;
    *cur = in;
    if (g->me != lead) {
        kp_sched_send(s, kp_ar_rank(g, lead), in.buf, in.off, n);
        kp_sched_next_round(s);
        kp_sched_recv(s, kp_ar_rank(g, lead), out.buf, out.off, n);
        kp_sched_next_round(s);
        return 0;
    }
    if (end - lead > 1) {
        const kp_ar_at sc = {KP_BUF_SCRATCH, sbase};
        kp_sched_need_scratch(s, sbase + n);
        kp_sched_recv(s, kp_ar_rank(g, lead + 1), sc.buf, sc.off, n);
        kp_sched_next_round(s);
        kp_ar_combine(s, in, sc, out, 0, n); /* the leader is the lower rank */
        kp_sched_next_round(s);
        *cur = out;
    }
    return 1;
}

/* Folding out: a leader with a folded partner sends it the result. */
static inline void kp_ar_fold_out(kp_sched *s, const kp_ar_group *g, int k, kp_ar_at out)
{
    const int R = kp_se_nleaders(g->N, k), q = kp_se_seg_of(g->N, R, g->me);
    const int lead = kp_se_seg_start(g->N, R, q), end = kp_se_seg_start(g->N, R, q + 1);
    if (g->me == lead && end - lead > 1)
        kp_sched_send(s, kp_ar_rank(g, lead + 1), out.buf, out.off, s->bytes);
}

/* One multiplying step's combine: the radix values, mine (at cur) being
 * subgroup a's and subgroup t's (t != a) in scratch slot (a - t) mod r - 1
 * (the port it came on), joined left to right in subgroup order into out.
 * The running value stays in out once it holds mine; before that in the
 * scratch slot of subgroup 0 (overwritten in place). One round each. */
static inline void kp_ar_chain(kp_sched *s, int r, int a, kp_ar_at cur, kp_ar_at out, int64_t sbase)
{
    const int64_t n = s->bytes;
    kp_ar_at acc = a == 0 ? cur : (kp_ar_at){KP_BUF_SCRATCH, sbase + (int64_t)(kp_mod(a, r) - 1) * n};
    for (int t = 1; t < r; t++) {
        const kp_ar_at b = t == a ? cur : (kp_ar_at){KP_BUF_SCRATCH, sbase + (int64_t)(kp_mod(a - t, r) - 1) * n};
        const kp_ar_at d = (t >= a) ? out : acc; /* mine joined: the result goes to out */
        kp_ar_combine(s, acc, b, d, 0, n);
        kp_sched_next_round(s);
        acc = d;
    }
}

/* Recursive multiplying among the leaders (after kp_ar_fold_in): every
 * step exchanges whole vectors with radix - 1 peers (k ports) and combines
 * in subgroup order. The result ends at `out`. Scratch: k vectors at sbase. */
static inline void kp_ar_recmul(kp_sched *s, const kp_ar_group *g, int k, int lidx, kp_ar_at cur, kp_ar_at out,
                                int64_t sbase)
{
    const int64_t n = s->bytes;
    const int R = kp_se_nleaders(g->N, k), nsteps = kp_se_nsteps(g->N, k);
    for (int i = 0; i < nsteps; i++) {
        const int r = kp_se_radix(g->N, k, i), span = kp_se_span(g->N, k, i);
        kp_sched_need_scratch(s, sbase + (int64_t)(r - 1) * n);
        for (int j = 1; j < r; j++) {
            const int to = kp_se_send_peer(g->N, k, lidx, i, j), from = kp_se_recv_peer(g->N, k, lidx, i, j);
            kp_sched_send(s, kp_ar_rank(g, kp_se_seg_start(g->N, R, to)), cur.buf, cur.off, n);
            kp_sched_recv(s, kp_ar_rank(g, kp_se_seg_start(g->N, R, from)), KP_BUF_SCRATCH,
                          sbase + (int64_t)(j - 1) * n, n);
        }
        kp_sched_next_round(s);
        kp_ar_chain(s, r, (lidx % (r * span)) / span, cur, out, sbase);
        cur = out;
    }
    if (!kp_ar_same(cur, out))
        kp_sched_copy(s, cur.buf, cur.off, out.buf, out.off, n);
}

/* The whole group allreduce by recursive multiplying (radix k + 1; k = 1:
 * recursive doubling): fold in, multiply, fold out. */
static inline void kp_ar_group_recmul(kp_sched *s, const kp_ar_group *g, int k, kp_ar_at in, kp_ar_at out,
                                      int64_t sbase)
{
    kp_ar_at cur;
    int lidx;
    if (!kp_ar_fold_in(s, g, k, in, out, sbase, &cur, &lidx))
        return;
    kp_ar_recmul(s, g, k, lidx, cur, out, sbase);
    kp_sched_next_round(s);
    kp_ar_fold_out(s, g, k, out);
}

#endif /* KP_ALLREDUCE_AR_COMMON_H */
