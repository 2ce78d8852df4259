/*
 * Pieces shared by the reduce and reduce-scatter builders
 * (the files of src/algo/reduce and src/algo/reduce_scatter):
 *
 *  1. splitting a vector at whole elements (kp_red_piece) and telling when
 *     two regions overlap in part under MPI_IN_PLACE (kp_red_partial);
 *  2. the chain dst = s_0 op s_1 op ... op s_{n-1} in rank order, one
 *     combine per round (kp_red_chain): the shared-memory reductions;
 *  3. the k-nomial reduction tree (kp_knom_*, kp_red_tree_run): radix
 *     k + 1, any root, in rank order for non-commutative operations;
 *  4. the pairwise reduce-scatter in rank order over "members" (ranks, or
 *     node leaders) whose result blocks are lists of ranges
 *     (kp_red_pairwise_run);
 *  5. the shared-memory node phase of the SMP reductions (kp_red_node_reduce).
 *
 * Conventions: a member is a participant of a tree or exchange (a rank, or
 * a node for the SMP builders) and members are numbered in rank order; an
 * operand that holds the contributions of members [i, j] is always combined
 * as the left operand with one that holds [j + 1, l] (kp_sched_reduce's a
 * and b), which is what a non-commutative operation needs.
 */
#ifndef KP_ALGO_RED_COMMON_H
#define KP_ALGO_RED_COMMON_H

#include "algo/algo.h"
#include "algo/smp_common.h"
#include "kport.h"

/* ---- vectors ------------------------------------------------------------- */

/* byte offset of piece q of n of a vector of len bytes, cut at whole
 * elements of elem bytes (q = n gives len); pieces differ by at most one
 * element */
static inline int64_t kp_red_piece(int64_t len, int64_t elem, int q, int n)
{
    if (q >= n)
        return len;
    return len / elem * q / n * elem;
}

/* The stride of slots of len bytes in the segment: len rounded up to a
 * multiple of 128 bytes (two cache lines) and of the element, so that every
 * slot starts on a line and a combine's offsets there stay whole elements
 * (an element of 24 bytes, three doubles, does not divide 128). */
static inline int64_t kp_red_stride(int64_t len, int64_t elem)
{
    int64_t a = elem, b = 128;
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    const int64_t unit = elem / a * 128; /* lcm(elem, 128) */
    return (len + unit - 1) / unit * unit;
}

/* Do (b1, o1) and (b2, o2), both len bytes, overlap in part (neither the
 * same bytes nor disjoint)? Under MPI_IN_PLACE KP_BUF_SEND is the receive
 * buffer from offset 0 (reductions). kp_sched_reduce allows a destination
 * that is exactly an operand or disjoint from both, nothing between. */
static inline int kp_red_partial(const kp_sched *s, int b1, int64_t o1, int b2, int64_t o2, int64_t len)
{
    if (kp_sched_aliased(s)) {
        b1 = b1 == KP_BUF_SEND ? KP_BUF_RECV : b1;
        b2 = b2 == KP_BUF_SEND ? KP_BUF_RECV : b2;
    }
    return len > 0 && b1 == b2 && o1 != o2 && o1 < o2 + len && o2 < o1 + len;
}

/* dst = src_0 op src_1 op ... op src_{n-1}, src_q at (sbuf, soff + q *
 * sstride): one combine per round, as each writes dst (the first one goes
 * into the current round); n = 1 is a copy. Closes the round of the last. */
static inline void kp_red_chain(kp_sched *s, int n, int sbuf, int64_t soff, int64_t sstride, int dbuf, int64_t doff,
                                int64_t len)
{
    if (n == 1)
        kp_sched_copy(s, sbuf, soff, dbuf, doff, len);
    else
        kp_sched_reduce(s, sbuf, soff, sbuf, soff + sstride, dbuf, doff, len);
    kp_sched_next_round(s);
    for (int q = 2; q < n; q++) {
        kp_sched_reduce(s, dbuf, doff, sbuf, soff + (int64_t)q * sstride, dbuf, doff, len);
        kp_sched_next_round(s);
    }
}

/* ---- k-nomial tree ------------------------------------------------------------
 * On a range of `size` members numbered rel = 0 .. size-1 from the tree's
 * root, radix R = k + 1: in step i (distance R^i) a member with rel
 * divisible by R^(i+1) receives from its children rel + j R^i (j = 1..k,
 * below size), each bringing its subtree [c, min(c + R^i, size)); a member
 * sends to its parent rel - (rel mod R^(i+1)) in the first step i where
 * rel mod R^(i+1) != 0, and is done. A member's subtree is the contiguous
 * range [rel, rel + R^(its send step)) (cut at size), its children's
 * subtrees follow each other in increasing j, so combining the children in
 * order j = 1..k onto the partial result keeps rank order. */

/* steps: smallest s with (k+1)^s >= size (0 for size <= 1) */
static inline int kp_knom_nsteps(int size, int k)
{
    int st = 0;
    for (int64_t d = 1; d < size; d *= (int64_t)k + 1)
        st++;
    return st;
}

/* the step in which rel sends to its parent (-1 for rel <= 0) */
static inline int kp_knom_send_step(int rel, int k)
{
    if (rel <= 0)
        return -1;
    int i = 0;
    while (rel % (k + 1) == 0) {
        rel /= k + 1;
        i++;
    }
    return i;
}

static inline int kp_knom_parent(int rel, int k)
{
    const int i = kp_knom_send_step(rel, k);
    return i < 0 ? -1 : (int)(rel - rel % kp_ipow((int64_t)k + 1, i + 1));
}

/* child j (1..k) of rel in step i, -1 if none */
static inline int kp_knom_child(int rel, int size, int k, int i, int j)
{
    const int ss = kp_knom_send_step(rel, k);
    if (rel < 0 || j < 1 || j > k || i < 0 || (rel > 0 && i >= ss))
        return -1;
    const int64_t c = rel + (int64_t)j * kp_ipow((int64_t)k + 1, i);
    return c < size ? (int)c : -1;
}

/* A reduction tree over members 0 .. n-1 towards member `root`. */
typedef struct kp_red_tree {
    int n, me, root, k, commute;
    const void *ctx;
    int (*rank)(const void *ctx, int member); /* the rank that acts for a member */
    int64_t len;         /* bytes of the vector */
    int ibuf;            /* my contribution: (ibuf, ioff) */
    int64_t ioff;
    int rbuf;            /* the root's result: (rbuf, roff) */
    int64_t roff;
    int64_t scr;         /* scratch from here: k slots and an accumulator, (k + 1) * len */
} kp_red_tree;

/*
 * The tree: commutative operations (or root 0) use one tree on the members
 * renumbered from the root, rel = (me - root) mod n. A non-commutative one
 * with root r > 0 cannot: the subtree that wraps from member n-1 to 0 would
 * join them out of order. It runs two trees at once instead, one over
 * [r, n) rooted at r and one over [0, r) rooted at 0, and member 0 sends
 * its range's result to r, which combines it as the left operand last:
 * x_0..x_{r-1} op x_r..x_{n-1}. That costs one step more than the
 * rotated tree only when ceil(log_R r) + 1 > ceil(log_R n) (MPICH reduces
 * to 0 and sends to the root: always one step more).
 */
static inline void kp_red_tree_run(kp_sched *s, const kp_red_tree *t)
{
    const int n = t->n, me = t->me, root = t->root, k = t->k;
    const int64_t len = t->len;
    const int split = !t->commute && root != 0;
    int lo = root, size = n;
    if (split && me < root)
        lo = 0, size = root;
    else if (split)
        size = n - root;
    const int rel = kp_mod((int64_t)me - lo, n);
    const int amroot = me == root;
    const int ab = amroot ? t->rbuf : KP_BUF_SCRATCH;
    const int64_t ao = amroot ? t->roff : t->scr + (int64_t)k * len;
    int cb = t->ibuf;
    int64_t co = t->ioff;
    const int ns = kp_knom_nsteps(size, k), ss = kp_knom_send_step(rel, k);
#define MEMBER_RANK(c) t->rank(t->ctx, (int)(((int64_t)lo + (c)) % n))
    for (int i = 0; i < ns; i++) {
        if (i == ss) {
            kp_sched_send(s, MEMBER_RANK(kp_knom_parent(rel, k)), cb, co, len);
            return;
        }
        int nc = 0;
        for (int j = 1, c; j <= k && (c = kp_knom_child(rel, size, k, i, j)) >= 0; j++, nc++)
            kp_sched_recv(s, MEMBER_RANK(c), KP_BUF_SCRATCH, t->scr + (int64_t)(j - 1) * len, len);
        if (nc == 0)
            continue;
        kp_sched_need_scratch(s, t->scr + (int64_t)(k + 1) * len);
        kp_sched_next_round(s);
        for (int j = 0; j < nc; j++) {
            kp_sched_reduce(s, cb, co, KP_BUF_SCRATCH, t->scr + (int64_t)j * len, ab, ao, len);
            cb = ab;
            co = ao;
            kp_sched_next_round(s);
        }
    }
#undef MEMBER_RANK
    if (split && me == 0) { /* the lower range's result to the root */
        kp_sched_send(s, t->rank(t->ctx, root), cb, co, len);
        return;
    }
    if (!amroot)
        return;
    if (split) { /* x_0..x_{r-1} (from member 0) op my range's result */
        kp_sched_need_scratch(s, t->scr + len);
        kp_sched_recv(s, t->rank(t->ctx, 0), KP_BUF_SCRATCH, t->scr, len);
        kp_sched_next_round(s);
        kp_sched_reduce(s, KP_BUF_SCRATCH, t->scr, cb, co, ab, ao, len);
    } else if (cb == t->ibuf && co == t->ioff) { /* no child: my contribution is the result */
        kp_sched_copy(s, cb, co, ab, ao, len);
    }
    kp_sched_next_round(s);
}

/* ---- pairwise reduce-scatter over members -------------------------------------- */

/* Members 0 .. n-1 in rank order; member m's result is the list of its
 * ranges (vector offsets and lengths, possibly empty). */
typedef struct kp_red_members {
    int n, me;
    const void *ctx;
    int (*rank)(const void *ctx, int m);
    int (*nranges)(const void *ctx, int m);
    void (*range)(const void *ctx, int m, int t, int64_t *off, int64_t *len);
} kp_red_members;

/* total bytes of member m's ranges */
static inline int64_t kp_red_member_bytes(const kp_red_members *M, int m)
{
    int64_t sum = 0, off, len;
    for (int t = 0; t < M->nranges(M->ctx, m); t++) {
        M->range(M->ctx, m, t, &off, &len);
        sum += len;
    }
    return sum;
}

/* scratch areas of the pairwise exchange, each B = my result's bytes long */
enum { KP_RED_SLOT0 = 0, KP_RED_SLOT1 = 1, KP_RED_LACC = 2, KP_RED_RACC = 3, KP_RED_AREAS = 4 };

/* One operation on each of member m's ranges (kind): KP_RED_SEND a to
 * `peer`, KP_RED_RECV from `peer` into d, KP_RED_COMBINE d = a op b,
 * KP_RED_COPY a to d; a, b, d are each a scratch area (x >= 0: from scr +
 * x * B, ranges packed) or a vector region (x < 0: buffer -1-x at the
 * range's vector offset + shift). */
enum { KP_RED_SEND, KP_RED_RECV, KP_RED_COMBINE, KP_RED_COPY };
typedef struct kp_red_opnd {
    int x;          /* area, or -1 - buffer */
    int64_t shift;  /* vector region: offset - vector offset */
} kp_red_opnd;

static inline void kp_red_ranges_op(kp_sched *s, const kp_red_members *M, int m, int64_t scr, int kind, int peer,
                                    kp_red_opnd a, kp_red_opnd b, kp_red_opnd d)
{
    const int64_t B = kp_red_member_bytes(M, m);
    int64_t packed = 0, off, len;
#define RB(o) ((o).x >= 0 ? KP_BUF_SCRATCH : -1 - (o).x)
#define RO(o) ((o).x >= 0 ? scr + (int64_t)(o).x * B + packed : off + (o).shift)
    for (int t = 0; t < M->nranges(M->ctx, m); t++, packed += len) {
        M->range(M->ctx, m, t, &off, &len);
        if (kind == KP_RED_SEND)
            kp_sched_send(s, peer, RB(a), RO(a), len);
        else if (kind == KP_RED_RECV)
            kp_sched_recv(s, peer, RB(d), RO(d), len);
        else if (kind == KP_RED_COMBINE)
            kp_sched_reduce(s, RB(a), RO(a), RB(b), RO(b), RB(d), RO(d), len);
        else
            kp_sched_copy(s, RB(a), RO(a), RB(d), RO(d), len);
    }
#undef RB
#undef RO
}

/* does the vector region d overlap the vector region a in part on one of my ranges? */
static inline int kp_red_ranges_partial(const kp_sched *s, const kp_red_members *M, kp_red_opnd a, kp_red_opnd d)
{
    int64_t off, len;
    if (a.x >= 0 || d.x >= 0)
        return 0;
    for (int t = 0; t < M->nranges(M->ctx, M->me); t++) {
        M->range(M->ctx, M->me, t, &off, &len);
        if (kp_red_partial(s, -1 - a.x, off + a.shift, -1 - d.x, off + d.shift, len))
            return 1;
    }
    return 0;
}

/*
 * Pairwise reduce-scatter in rank order: in step i = 1 .. n-1 member me
 * sends member me+i its ranges of my contribution (init) and receives
 * member me-i's contribution to my ranges (mod n), which it combines one
 * step later while the next exchange is in flight. Arrivals come from
 * me-1, me-2, ..., 0 (prepended to the left accumulator, which holds
 * [q, me]) and then from n-1, n-2, ..., me+1 (prepended to the right one,
 * which holds [q, n-1]; the first arrival is received straight into it);
 * the result is left op right, written to dst (vector region), so every
 * combine joins adjacent ranges in rank order. The last combine comes
 * after the last send, so dst may be the receive buffer that holds the
 * input under MPI_IN_PLACE; where it overlaps the input of my own ranges
 * in part, the result goes through the left accumulator and a copy.
 * Scratch: 4 B bytes from scr (two arrival slots, two accumulators).
 */
static inline void kp_red_pairwise_run(kp_sched *s, const kp_red_members *M, kp_red_opnd init, kp_red_opnd dst,
                                       int64_t scr)
{
    const int n = M->n, me = M->me;
    const kp_red_opnd none = {0, 0}, L = {KP_RED_LACC, 0}, R = {KP_RED_RACC, 0};
    if (n == 1) {
        kp_red_ranges_op(s, M, me, scr, KP_RED_COPY, -1, init, init, dst);
        kp_sched_next_round(s);
        return;
    }
    kp_sched_need_scratch(s, scr + KP_RED_AREAS * kp_red_member_bytes(M, me));
    int staged = 0; /* the result went to the left accumulator (partial overlap) */
    for (int i = 1; i <= n; i++) {
        if (i < n) {
            const int to = (me + i) % n, from = (me - i + n) % n;
            kp_red_ranges_op(s, M, to, scr, KP_RED_SEND, M->rank(M->ctx, to), init, none, none);
            const kp_red_opnd slot = {i == me + 1 ? KP_RED_RACC : (i - 1) % 2, 0};
            kp_red_ranges_op(s, M, me, scr, KP_RED_RECV, M->rank(M->ctx, from), none, none, slot);
        }
        const int a = i - 1; /* the arrival combined in this round (from me - a) */
        const kp_red_opnd slot = {(a - 1) % 2, 0};
        if (a >= 1 && a <= me) { /* left: slot op (left, or my own for the first) */
            const kp_red_opnd b = a == 1 ? init : L;
            kp_red_opnd d = a == n - 1 ? dst : L;
            if (a == n - 1 && kp_red_ranges_partial(s, M, b, d))
                d = L, staged = 1;
            kp_red_ranges_op(s, M, me, scr, KP_RED_COMBINE, -1, slot, b, d);
        } else if (a > me + 1) { /* right: slot op right */
            kp_red_ranges_op(s, M, me, scr, KP_RED_COMBINE, -1, slot, R, R);
        }
        kp_sched_next_round(s);
    }
    if (me < n - 1) {
        const kp_red_opnd a = me == 0 ? init : L;
        kp_red_opnd d = dst;
        if (kp_red_ranges_partial(s, M, a, d))
            d = L, staged = 1;
        kp_red_ranges_op(s, M, me, scr, KP_RED_COMBINE, -1, a, R, d);
        kp_sched_next_round(s);
    }
    if (staged) {
        kp_red_ranges_op(s, M, me, scr, KP_RED_COPY, -1, L, L, dst);
        kp_sched_next_round(s);
    }
}

/* ---- SMP node phase ------------------------------------------------------------- */

/* every node's ranks consecutive (then node order is rank order)? */
static inline int kp_red_nodes_consecutive(const kp_smp *v)
{
    for (int n = 0; n < kp_smp_nnodes(v); n++)
        for (int l = 1; l < kp_smp_size(v, n); l++)
            if (kp_smp_rank(v, n, l) != kp_smp_rank(v, n, 0) + l)
                return 0;
    return 1;
}

/*
 * The node's ranks reduce V bytes of their send buffers into the node's
 * result area of the segment: round 0 copies the own vector into slot
 * `local` (slots 128-byte and element aligned), then post 1 and a wait for post 1 of
 * every node-mate (the node fence of algo/smp_common.h: no rank leaves
 * before all have entered, so slots and result area of call c are not
 * rewritten in call c+2 before every reader is done with them), then the
 * rank reduces its slice (piece `local` of the node's size) over the slots
 * in local order, which is rank order, into the result area, and makes
 * post 2. Returns the result area's offset, or -1 on a node of one rank
 * (nothing done: its send buffer is the node's result).
 */
static inline int64_t kp_red_node_reduce(kp_sched *s, const kp_smp *v, int64_t V)
{
    const int me = s->rank, node = kp_smp_node_of(v, me), ns = kp_smp_size(v, node), l = kp_smp_local(v, me);
    if (ns == 1)
        return -1;
    const int64_t stride = kp_red_stride(V, s->elem), res = (int64_t)ns * stride;
    kp_sched_need_shm(s, res + V);
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SHM, (int64_t)l * stride, V);
    kp_sched_next_round(s);
    kp_sched_post(s); /* post 1: my vector is in my slot */
    for (int q = 0; q < ns; q++)
        if (q != l)
            kp_sched_wait(s, kp_smp_rank(v, node, q), 1);
    kp_sched_next_round(s);
    const int64_t a = kp_red_piece(V, s->elem, l, ns), b = kp_red_piece(V, s->elem, l + 1, ns);
    kp_red_chain(s, ns, KP_BUF_SHM, a, stride, KP_BUF_SHM, res + a, b - a);
    kp_sched_post(s); /* post 2: my slice of the node's result is in place */
    return res;
}

/* wait for post n of every other rank of my node, then close the round */
static inline void kp_red_wait_node(kp_sched *s, const kp_smp *v, int n)
{
    const int node = kp_smp_node_of(v, s->rank);
    for (int q = 0; q < kp_smp_size(v, node); q++)
        if (kp_smp_rank(v, node, q) != s->rank)
            kp_sched_wait(s, kp_smp_rank(v, node, q), n);
    kp_sched_next_round(s);
}

/* Small vectors through the flag lines: a rank's vector sits in its line
 * after the flag at a whole number of elements, max(8, elem) (elem must
 * divide KP_LINE), so the waiting rank gets flag and data in one transfer. */
static inline int64_t kp_red_line_off(const kp_sched *s, int local)
{
    return (int64_t)local * KP_LINE + (s->elem > 8 ? s->elem : 8);
}

static inline int kp_red_lines_fit(const kp_sched *s, int64_t len)
{
    return KP_LINE % s->elem == 0 && kp_red_line_off(s, 0) + len <= KP_LINE;
}

/*
 * A node's reduce of a small vector (kp_red_lines_fit) towards its
 * `master`, who combines the node's lines in rank order into (dbuf, doff):
 * every other rank copies its vector into its line, posts on it (post 1)
 * and waits for the master's post 1, which the master makes once it has
 * seen every mate's post (on a node of two: on entering, as gather smp).
 * That is the node fence of algo/smp_common.h (no rank leaves before all
 * have entered; so a line is rewritten in call c+2 only after the master
 * read it in call c), and it costs one flag transfer each way, not the two
 * synchronisations of the segment's slices.
 */
static inline void kp_red_node_lines(kp_sched *s, const kp_smp *v, int master, int dbuf, int64_t doff)
{
    const int me = s->rank, node = kp_smp_node_of(v, me), ns = kp_smp_size(v, node);
    const int64_t len = s->bytes;
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_LINE, kp_red_line_off(s, kp_smp_local(v, me)), len);
    if (me != master) {
        kp_sched_next_round(s);
        kp_sched_post_line(s); /* post 1: my vector is in my line */
        kp_sched_wait(s, master, 1);
        return;
    }
    if (ns == 2)
        kp_sched_post(s); /* post 1 on entry: the one mate's fence (its own post shows it entered) */
    for (int q = 0; q < ns; q++)
        if (kp_smp_rank(v, node, q) != me)
            kp_sched_wait_line(s, kp_smp_rank(v, node, q), 1);
    kp_sched_next_round(s);
    if (ns > 2)
        kp_sched_post(s); /* post 1 once every mate has entered: the node fence */
    kp_red_chain(s, ns, KP_BUF_LINE, kp_red_line_off(s, 0), KP_LINE, dbuf, doff, len);
}

#endif /* KP_ALGO_RED_COMMON_H */
