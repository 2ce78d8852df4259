/*
 * Shared pieces of the SMP-aware (hierarchical) builders: all-gather
 * smp_gather_bcast / smp_direct / smp_bruck, barrier smp and gather smp.
 *
 * 1. A view of the node layout that also covers s->layout == NULL (every
 *    rank its own node: node r = {r}, no shared memory needed), so builders
 *    never allocate a trivial layout.
 * 2. The all-gathers' shared-segment layout and their common phases.
 *    The result area is the whole segment, P blocks in NODE ORDER: rank r's
 *    block lives at position kp_smp_pos(r) = node_start[node_of[r]] +
 *    local[r], so node n's blocks ("chunk n") are the contiguous positions
 *    [node_start[n], node_start[n+1]) and any cyclic range of nodes is at
 *    most two contiguous pieces of the segment.
 *
 *    Phase 1 (every rank): round 0 copies the own block send -> shm[pos];
 *    round 1 makes post 1, copies the own block send -> recv (it is never
 *    read back from the segment) and waits for post 1 of every other rank
 *    of the node (a node of one rank: the copy in round 0, no round 1).
 *    Phase 2 (leaders only, builder-specific): MPI send/receive of chunks
 *    straight from/to the segment at their node positions; the leader copies
 *    its own chunk out in the round of its first MPI operation, every later
 *    batch of received chunks in the round after it arrived, and makes post 2
 *    ("the segment is complete") as soon as the last chunk has arrived.
 *    Phase 3 (non-leaders): copy the own node's chunk out right after phase 1
 *    (overlapping the leaders' inter-node transfers), wait for the leader's
 *    post 2, copy the other chunks out. Copies out are coalesced: one copy
 *    per run of positions holding consecutive ranks, the own block left
 *    out.
 *
 *    Why no rank can touch shared bytes out of order: within a call every
 *    read of a block follows its writer's post (post 1 for own-node blocks,
 *    the leader's post 2 for received chunks). Across calls (the executor
 *    alternates the segment's halves, so call c+2 reuses call c's half)
 *    every builder here keeps the NODE FENCE: no rank leaves a call before
 *    it has seen, through a chain of posts, every rank of its node enter
 *    that call (all-gathers: every rank waits for every node-mate's post 1,
 *    made after entering; gather: non-masters wait for the master's post,
 *    made after it saw all node-mates' posts; barrier: the release). Then
 *    an access of call c+2 by rank x follows x leaving call c+1, which
 *    follows every node-mate entering c+1, which follows its leaving c and
 *    so all its accesses of c. This holds whichever fence-keeping
 *    algorithms the three calls run; the checker verifies three calls of
 *    the same schedules.
 */
#ifndef KP_ALGO_SMP_COMMON_H
#define KP_ALGO_SMP_COMMON_H

#include "algo/algo.h"
#include "algo/shm_common.h"
#include "kport.h"

/* ---- node layout view ------------------------------------------------------ */

typedef struct kp_smp {
    const kp_layout *L; /* NULL: every rank is its own node */
    int P;
} kp_smp;

static inline kp_smp kp_smp_view(const kp_sched *s)
{
    kp_smp v = {s->layout, s->P};
    return v;
}

/* refuse a layout built for another number of ranks; 0 when usable */
static inline int kp_smp_validate(kp_sched *s, const char *name)
{
    if (s->layout && s->layout->P != s->P)
        return kp_sched_refuse(s, KP_ERR_ARG, "%s: node layout is for %d ranks, the call has %d", name,
                               s->layout->P, s->P);
    return 0;
}

static inline int kp_smp_nnodes(const kp_smp *v) { return v->L ? v->L->nnodes : v->P; }
static inline int kp_smp_node_of(const kp_smp *v, int r) { return v->L ? v->L->node_of[r] : r; }
static inline int kp_smp_local(const kp_smp *v, int r) { return v->L ? v->L->local[r] : 0; }
/* first position of node n (n = nnodes gives P) */
static inline int kp_smp_start(const kp_smp *v, int n) { return v->L ? v->L->node_start[n] : n; }
static inline int kp_smp_size(const kp_smp *v, int n) { return kp_smp_start(v, n + 1) - kp_smp_start(v, n); }
/* the rank whose block lives at position pos (node order) */
static inline int kp_smp_rank_at(const kp_smp *v, int pos) { return v->L ? v->L->node_ranks[pos] : pos; }
static inline int kp_smp_rank(const kp_smp *v, int n, int l) { return kp_smp_rank_at(v, kp_smp_start(v, n) + l); }
static inline int kp_smp_leader(const kp_smp *v, int n) { return kp_smp_rank(v, n, 0); }
static inline int kp_smp_pos(const kp_smp *v, int r)
{
    return kp_smp_start(v, kp_smp_node_of(v, r)) + kp_smp_local(v, r);
}

/* wait for post n of every other rank of node `node` but `skip` (-1: none),
 * into the current round */
static inline void kp_smp_wait_node(kp_sched *s, const kp_smp *v, int node, int n, int skip)
{
    for (int l = 0; l < kp_smp_size(v, node); l++)
        if (kp_smp_rank(v, node, l) != s->rank && kp_smp_rank(v, node, l) != skip)
            kp_sched_wait(s, kp_smp_rank(v, node, l), n);
}

/* ---- all-gather phases ------------------------------------------------------- */

/* copy positions [a, b) of the result area (segment) to their ranks' places
 * in the receive buffer, one copy per run of positions with consecutive
 * ranks, leaving out the own block: phase 1 copies it from the send buffer
 * (reading it back from the segment while node-mates read the same lines
 * costs more: P = 2, 2 KiB, smp_bruck took 0.49 us against shm_flat's 0.33
 * in one run, now both 0.35-0.38; docs/PERFORMANCE.md) */
static inline void kp_smp_copy_out(kp_sched *s, const kp_smp *v, int a, int b)
{
    const int64_t m = s->bytes;
    for (int lo = a, hi; lo < b; lo = hi) {
        const int r0 = kp_smp_rank_at(v, lo);
        if (r0 == s->rank) {
            hi = lo + 1;
            continue;
        }
        for (hi = lo + 1; hi < b && kp_smp_rank_at(v, hi) == r0 + (hi - lo) && r0 + (hi - lo) != s->rank; hi++)
            ;
        kp_sched_copy(s, KP_BUF_SHM, (int64_t)lo * m, KP_BUF_RECV, (int64_t)r0 * m, (int64_t)(hi - lo) * m);
    }
}

/* copy the chunks of the cyclic node range [a, a + cnt) (mod nnodes) out */
static inline void kp_smp_copy_out_nodes(kp_sched *s, const kp_smp *v, int a, int cnt)
{
    const int N = kp_smp_nnodes(v), end = a + cnt;
    kp_smp_copy_out(s, v, kp_smp_start(v, a), kp_smp_start(v, end < N ? end : N));
    if (end > N)
        kp_smp_copy_out(s, v, 0, kp_smp_start(v, end - N));
}

/* Phase 1 (rounds 0 and 1): own block into the segment, post 1, wait for
 * post 1 of every other rank of the node. Sizes the segment. */
static inline void kp_smp_ag_phase1(kp_sched *s, const kp_smp *v)
{
    const int me = s->rank, node = kp_smp_node_of(v, me), ns = kp_smp_size(v, node);
    kp_sched_need_shm(s, (int64_t)s->P * s->bytes);
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SHM, (int64_t)kp_smp_pos(v, me) * s->bytes, s->bytes);
    if (ns == 1) /* the own block to its place (the copies out leave it out) */
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)me * s->bytes, s->bytes);
    kp_sched_next_round(s);
    if (ns > 1) {
        kp_sched_post(s); /* post 1: my block is in the segment */
        /* the own block to its place while the node-mates' posts come in
         * (the executor makes a round's copies before its waits) */
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)me * s->bytes, s->bytes);
        for (int l = 0; l < ns; l++)
            if (kp_smp_rank(v, node, l) != me)
                kp_sched_wait(s, kp_smp_rank(v, node, l), 1);
        kp_sched_next_round(s);
    }
}

/* Post 2 of a leader: every chunk has arrived (nothing when alone on its
 * node or when there is a single node: no one waits for it). Goes into the
 * current round, i.e. after the round of the last receive. */
static inline void kp_smp_ag_release(kp_sched *s, const kp_smp *v)
{
    const int node = kp_smp_node_of(v, s->rank);
    if (kp_smp_size(v, node) > 1 && kp_smp_nnodes(v) > 1)
        kp_sched_post(s);
}

/* Phases 1 and 3 of a non-leader: its whole schedule. */
static inline int kp_smp_ag_nonleader(kp_sched *s, const kp_smp *v)
{
    const int node = kp_smp_node_of(v, s->rank), N = kp_smp_nnodes(v);
    const int a = kp_smp_start(v, node), b = kp_smp_start(v, node + 1);
    kp_smp_ag_phase1(s, v);
    kp_smp_copy_out(s, v, a, b); /* the own node's blocks, while the leaders talk */
    kp_sched_next_round(s);
    if (N > 1) {
        kp_sched_wait(s, kp_smp_leader(v, node), 2);
        kp_sched_next_round(s);
        kp_smp_copy_out(s, v, 0, a);
        kp_smp_copy_out(s, v, b, s->P);
    }
    return kp_sched_finish(s);
}

/* The start the three SMP all-gathers share: validate the layout, finish an
 * empty message at once, build a non-leader's whole schedule, and phase 1
 * for a leader. Returns 1 when the caller (a leader) goes on with phase 2,
 * with *v set; else 0, and *rc is what the builder returns. */
static inline int kp_smp_ag_begin(kp_sched *s, const char *name, kp_smp *v, int *rc)
{
    if (kp_smp_validate(s, name)) {
        *rc = s->err;
        return 0;
    }
    if (s->bytes == 0) {
        *rc = kp_sched_finish(s);
        return 0;
    }
    *v = kp_smp_view(s);
    if (kp_smp_nnodes(v) == 1 && s->P > 1 && s->bytes <= KP_LINE - 8) {
        /* one node: only phase 1 is left, and small blocks take shm_flat's
         * flag lines (a waiting rank gets flag and data with one transfer
         * instead of the flag's line and then the segment's; P = 2, 8 B:
         * 0.25 -> 0.19 us) */
        *rc = kp_shm_allgather_lines(s);
        return 0;
    }
    if (kp_smp_leader(v, kp_smp_node_of(v, s->rank)) != s->rank) {
        *rc = kp_smp_ag_nonleader(s, v);
        return 0;
    }
    kp_smp_ag_phase1(s, v);
    return 1;
}

#endif /* KP_ALGO_SMP_COMMON_H */
