/*
 * SMP-aware reduce: a shared-memory reduce inside every node, then a
 * k-nomial reduce among the nodes' masters towards the root's node.
 *
 * Node phase (kp_red_node_reduce, red_common.h): on a node of c > 1 ranks
 * every rank copies its vector into its slot of the node's segment and
 * posts; once all node-mates have posted, each rank reduces its slice (1/c
 * of the vector, cut at whole elements) over the c slots in rank order
 * into the node's result area, all slices in parallel, and posts again.
 * Every node has a master: the root on the root's node (the root need not
 * be the leader), the leader (lowest rank) elsewhere. The master waits for
 * every node-mate's second post and takes part in a k-nomial reduce among
 * the masters (kp_red_tree_run over node numbers, radix k + 1), sending
 * straight from the segment's result area; the root combines into its
 * receive buffer. A rank alone on its node takes part with its send buffer.
 * Non-masters leave after their second post; since every rank waited for
 * every node-mate's first post (made on entering the call), nobody writes a
 * slot or the result area in call c + 2 before every reader of call c is
 * done (the node fence of algo/smp_common.h).
 *
 * Vectors that fit in the flag lines (kp_red_lines_fit) skip the slices:
 * the master combines its node's lines in rank order (kp_red_node_lines),
 * straight into the receive buffer on a single node.
 *
 * Non-commutative operations: nodes are numbered in order of their lowest
 * rank, and when every node's ranks are consecutive, node order is rank
 * order and each node's result is the reduction of a contiguous range of
 * ranks (slots are in rank order), so the masters' tree keeps rank order
 * as knomial does (two trees when the root's node is not node 0). On any
 * other layout (ranks of a node not consecutive) it is refused with
 * KP_ERR_UNSUPPORTED.
 *
 * Paper: the two-level reduce of MagPIe (T. Kielmann et al., PPoPP 1999)
 * and of MPICH's SMP-aware collectives; the parallel slice reduction in
 * shared memory after R. L. Graham and G. Shipman, "MPI support for
 * multi-core architectures: optimized shared memory collectives",
 * EuroPVM/MPI 2008; k-nomial tree as in knomial.c.
 *
 * Cost (m bytes, c ranks per node, N nodes, tc = copy time per byte,
 * gamma = combine time per byte, sync = a post/wait through shared memory):
 *   T = m tc + sync + (c - 1) (m / c) gamma + sync
 *       + s (ts + m tau + k m gamma),  s = ceil(log_{k+1} N)
 * (non-commutative with the root's node r > 0: s as in knomial.c).
 * Memory: a segment of c * ceil128(m) + m bytes per node of c > 1 ranks
 * (per call half); (k + 1) m bytes of scratch at a master with children.
 * Restrictions: non-commutative only on layouts whose nodes hold
 * consecutive ranks. Parameters: k (children per step among the masters,
 * default 2; counts nodes).
 *
 * Example, P = 6 on nodes {0,1,2} {3,4,5}, root 4, k = 2:
 *   node 0  ranks 0,1,2 put x0,x1,x2 in slots, post; rank l reduces slice
 *           l of x0 op x1 op x2 into the result area, posts; master 0 waits
 *   node 1  the same with x3,x4,x5; master = the root, 4
 *   tree    2 nodes: master 0 sends the node-0 result to 4, which combines
 *           it with node 1's into its receive buffer (node 0 is the left
 *           operand when the operation is not commutative: two trees, the
 *           lower one of node 0 alone).
 */
#include "algo/reduce/red_common.h"

typedef struct masters {
    kp_smp v;
    int root, rnode;
} masters;

static int master_rank(const void *ctx, int node)
{
    const masters *x = ctx;
    return node == x->rnode ? x->root : kp_smp_leader(&x->v, node);
}

int kp_reduce_smp_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, me = s->rank, root = s->root, k = prm->k;
    const int64_t m = s->bytes;
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "reduce smp: k = %d children per step; k must be >= 1", k);
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "reduce smp: root %d is not a rank of 0..%d", root, P - 1);
    if (kp_smp_validate(s, "reduce smp"))
        return s->err;
    const kp_smp v = kp_smp_view(s);
    const masters mx = {v, root, kp_smp_node_of(&v, root)};
    if (!s->commute && !kp_red_nodes_consecutive(&mx.v))
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "reduce smp: the operation is not commutative and a node's ranks are not "
                               "consecutive (rank order cannot be kept)");
    if (m == 0)
        return kp_sched_finish(s);
    const int x = kp_smp_node_of(&mx.v, me), N = kp_smp_nnodes(&mx.v), ns = kp_smp_size(&mx.v, x);
    const int master = master_rank(&mx, x);
    int ibuf = KP_BUF_SEND;
    int64_t ioff = 0;
    if (ns > 1 && kp_red_lines_fit(s, m)) { /* small: the master combines the node's flag lines */
        ibuf = N == 1 ? KP_BUF_RECV : KP_BUF_SCRATCH;
        ioff = N == 1 ? 0 : (int64_t)(k + 1) * m;
        if (me == master && N > 1)
            kp_sched_need_scratch(s, ioff + m);
        kp_red_node_lines(s, &mx.v, master, ibuf, ioff);
        if (me != master || N == 1)
            return kp_sched_finish(s);
    } else if (ns > 1) {
        ibuf = KP_BUF_SHM;
        ioff = kp_red_node_reduce(s, &mx.v, m);
        if (me != master)
            return kp_sched_finish(s);
        kp_red_wait_node(s, &mx.v, 2);
    }
    const kp_red_tree t = {.n = N, .me = x, .root = mx.rnode, .k = k, .commute = s->commute, .ctx = &mx,
                           .rank = master_rank, .len = m, .ibuf = ibuf, .ioff = ioff, .rbuf = KP_BUF_RECV,
                           .roff = 0, .scr = 0};
    kp_red_tree_run(s, &t);
    return kp_sched_finish(s);
}
