/*
 * SMP-aware reduce-scatter (regular and with counts per rank): a
 * shared-memory reduce of the whole vector inside every node, a pairwise
 * reduce-scatter of the node results among the node leaders, and every
 * rank copies its block out of the segment.
 *
 * Node phase (kp_red_node_reduce, red_common.h): on a node of c > 1 ranks
 * every rank copies its vector into its slot of the segment and posts
 * (post 1); once all node-mates have, each rank reduces its slice (1/c of
 * the vector) over the slots in rank order into the node's result area
 * and posts (post 2). The leader waits for every post 2, then the leaders
 * run the pairwise reduce-scatter of kp_red_pairwise_run among the nodes:
 * node n's share is the blocks of its ranks (one range per run of
 * consecutive ranks), sent straight from the result area, and the node's
 * share of the final result is written back into the result area, where
 * the leader posts (post 3) and every rank of the node copies its block
 * into its receive buffer. A rank alone on its node takes part with its
 * send buffer and writes its result straight into its receive buffer.
 * Every rank waits for every node-mate's post 1, made on entering: the node
 * fence of algo/smp_common.h (slots and result area of call c are not
 * rewritten in call c+2 before every reader is done).
 *
 * Non-commutative operations: when every node's ranks are consecutive,
 * node order is rank order, slots are combined in rank order, and the
 * leaders' pairwise exchange keeps node order, so the result is in rank
 * order; other layouts are refused with KP_ERR_UNSUPPORTED.
 *
 * Paper: the hierarchical reduce-scatter of the SMP-aware collectives
 * (node-level shared-memory reduction, then the inter-node algorithm among
 * leaders), e.g. R. L. Graham and G. Shipman, EuroPVM/MPI 2008, and
 * MPICH's multi-leader collectives; the pairwise exchange as in
 * pairwise.c.
 *
 * Cost (V = whole vector, c ranks per node, N nodes, B_n = bytes of node
 * n's blocks, B = max B_n, tc = copy, gamma = combine per byte, sync =
 * post + wait):
 *   T = V tc + sync + (c - 1) (V / c) gamma + sync
 *       + (N - 1) (ts + B tau + B gamma) + sync + n_r tc.
 * Memory: a segment of c ceil128(V) + V bytes per node of c > 1 ranks;
 * 4 B bytes of scratch at a leader.
 * Restrictions: non-commutative only on layouts whose nodes hold
 * consecutive ranks. Parameters: none.
 *
 * Example, P = 4 on nodes {0,1} {2,3}, blocks b0..b3:
 *   node phase  0, 1: res = x0 op x1 (each half of it); 2, 3: res = x2 op x3
 *   leaders     0 sends res[b2 b3] to 2 and receives 2's res[b0 b1]:
 *               0's res[b0 b1] = (x0 x1) op (x2 x3); 2's res[b2 b3] likewise
 *   copy out    post 3; rank r copies res[b_r] into its receive buffer.
 */
#include "algo/reduce/red_common.h"

typedef struct nodes {
    const kp_sched *s;
    kp_smp v;
} nodes;

static int leader_rank(const void *ctx, int n)
{
    return kp_smp_leader(&((const nodes *)ctx)->v, n);
}

/* the runs of consecutive ranks of node n: the t-th as (first rank, count) */
static int run_at(const kp_smp *v, int n, int t, int *first)
{
    int runs = 0;
    for (int lo = 0, hi; lo < kp_smp_size(v, n); lo = hi, runs++) {
        for (hi = lo + 1; hi < kp_smp_size(v, n) && kp_smp_rank(v, n, hi) == kp_smp_rank(v, n, lo) + (hi - lo); hi++)
            ;
        if (runs == t) {
            *first = kp_smp_rank(v, n, lo);
            return hi - lo;
        }
    }
    return runs; /* t past the end: the number of runs */
}

static int node_nranges(const void *ctx, int n)
{
    int first;
    return run_at(&((const nodes *)ctx)->v, n, -1, &first);
}

static void node_range(const void *ctx, int n, int t, int64_t *off, int64_t *len)
{
    const nodes *x = ctx;
    int first = 0;
    const int cnt = run_at(&x->v, n, t, &first);
    *off = kp_sched_block_off(x->s, first);
    *len = kp_sched_block_off(x->s, first + cnt) - *off;
}

int kp_reduce_scatter_smp_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int me = s->rank;
    const int64_t V = kp_sched_block_off(s, s->P), off = kp_sched_block_off(s, me), len = kp_sched_block_len(s, me);
    if (kp_smp_validate(s, "reduce_scatter smp"))
        return s->err;
    const nodes nx = {s, kp_smp_view(s)};
    if (!s->commute && !kp_red_nodes_consecutive(&nx.v))
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "reduce_scatter smp: the operation is not commutative and a node's ranks are not "
                               "consecutive (rank order cannot be kept)");
    if (V == 0)
        return kp_sched_finish(s);
    const int x = kp_smp_node_of(&nx.v, me), N = kp_smp_nnodes(&nx.v), leader = kp_smp_leader(&nx.v, x);
    const int64_t res = kp_red_node_reduce(s, &nx.v, V);
    if (me != leader) {
        kp_sched_wait(s, leader, 3);
        kp_sched_next_round(s);
        kp_sched_copy(s, KP_BUF_SHM, res + off, KP_BUF_RECV, 0, len);
        return kp_sched_finish(s);
    }
    if (res >= 0)
        kp_red_wait_node(s, &nx.v, 2);
    if (res < 0 || N > 1) {
        const kp_red_members M = {N, x, &nx, leader_rank, node_nranges, node_range};
        const kp_red_opnd init = {-1 - (res >= 0 ? KP_BUF_SHM : KP_BUF_SEND), res >= 0 ? res : 0};
        const kp_red_opnd dst = {-1 - (res >= 0 ? KP_BUF_SHM : KP_BUF_RECV), res >= 0 ? res : -off};
        kp_red_pairwise_run(s, &M, init, dst, 0);
    }
    if (res >= 0) {
        kp_sched_post(s); /* post 3: the node's blocks are final */
        kp_sched_copy(s, KP_BUF_SHM, res + off, KP_BUF_RECV, 0, len);
    }
    return kp_sched_finish(s);
}
