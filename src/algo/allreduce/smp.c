/*
 * SMP-aware allreduce: shared-memory reduce per node, recursive
 * multiplying among the node leaders, shared-memory broadcast per node.
 *
 * On a node of c > 1 ranks (local indices 0..c-1 in rank order, 0 the
 * leader) the segment holds c input slots and a result area of n bytes
 * each (rounded up to a cache line and to the element):
 *  1. every rank copies its input into its slot, all but its own slice
 *     (the vector cut into c slices of whole elements, kp_ar_cut), posts
 *     (post 1) and waits for the node-mates' post 1;
 *  2. local rank l combines slice l over the node's c inputs left to right
 *     in local (= rank) order, its own from its send buffer, straight into
 *     the result area, and posts (post 2);
 *  3. the leader waits for every post 2 and runs the leaders' allreduce on
 *     the result area: recursive multiplying with radix k + 1 among the N
 *     leaders (ar_common.h: contiguous segments of 1 or 2 leaders folded,
 *     groups combined in subgroup order; k = 1 is recursive doubling), its
 *     messages straight from the segment, the peers' vectors in scratch;
 *     then it posts (post 3) and copies the result out;
 *  4. the other ranks wait for the leader's post 3 and copy the result out.
 * One node: no leaders' phase; every rank waits for every post 2 and copies
 * out. Small vectors (they fit in a flag line after the flag, as shm_flat's)
 * take one synchronisation per node instead of three: one node, shm_flat's
 * lines (every rank combines all inputs itself, rank order); several nodes,
 * the node-mates' inputs travel in their flag lines, the leader combines
 * them after its own (local order) into its receive buffer, runs the
 * leaders' allreduce there and puts the result in its line, on which it
 * posts once. A rank alone on its node joins the leaders with its send and receive
 * buffers (no shared memory); no layout: every rank its own node, and this
 * is recursive_multiplying.
 * Every value is one expression: each node's slices are combined once and
 * in rank order, the leaders' combines are the same expression on every
 * leader (ar_common.h), and everything after is copied; every rank gets
 * bitwise the same result. Non-commutative operations: the node's partial
 * is in rank order, and the leaders' combines keep node order, which is
 * rank order only when every node's ranks are consecutive; otherwise
 * KP_ERR_UNSUPPORTED.
 * Synchronisation: within a call every slot is read after its writer's
 * post 1, the result area after every post 2 (leader) or the leader's post 3;
 * across calls the node fence of algo/smp_common.h holds (the leader waits
 * for everyone's posts, the others for the leader's post made after them).
 * Under MPI_IN_PLACE the input (receive buffer) is consumed by steps 1-2
 * before step 3 or 4 writes over it.
 *
 * Paper: the hierarchical scheme of Y. Qian and A. Afsahi (SMP-aware
 * collectives, ICPP 2007 / Cluster Computing 11, 2008) and of MPICH's
 * two-level allreduce (node reduce, inter-node allreduce, node broadcast);
 * the node reduce is shm_flat's slice combine, the leaders' exchange the
 * Standard Exchange of Y. Qian and A. Afsahi (section 6.1.2) with combines.
 * For small to medium vectors across nodes.
 *
 * Cost (Hockney, k-port; n bytes, c ranks per node, N nodes, tc = copy per
 * byte, gamma = combine per byte, sync = post/wait):
 *   T = (c-1)/c n tc + sync + (c-1)/c n gamma + sync
 *     + s (ts + n tau + k n gamma) [+ 2 (ts + n tau) + n gamma folding]
 *     + sync + n tc,     s = ceil(log_{k+1} N) when N = c' (k+1)^m.
 * Memory: a segment of (c + 1) n bytes per node with c > 1 (rounded up),
 * scratch of k n bytes at the leaders. Not pipelined: the segment grows with
 * the vector (large vectors across nodes: ring or rabenseifner).
 * Restrictions: none for commutative operations (any P, any layout);
 * non-commutative ones need every node's ranks consecutive. Parameters: k
 * (ports among the leaders, >= 1; default 1).
 *
 * Example, P = 4 on 2 nodes {0,1} {2,3}, k = 1, n = 2 elements (slices a, b):
 *   step 1  0: copies b0 to slot 0; 1: copies a1 to slot 1; 2, 3 likewise
 *   step 2  0: res.a = (a0 a1); 1: res.b = (slot0.b b1); 2: (a2 a3); 3: (b2 b3)
 *   step 3  0 <-> 2 swap res; both compute ((x0 x1) (x2 x3)); post 3
 *   step 4  1 and 3 copy res out.
 */
#include "algo/allreduce/ar_common.h"
#include "algo/smp_common.h"

static int leader_of_node(const void *ctx, int q)
{
    return kp_smp_leader((const kp_smp *)ctx, q);
}

/* are every node's ranks consecutive? */
static int nodes_consecutive(const kp_smp *v)
{
    for (int x = 0; x < kp_smp_nnodes(v); x++)
        for (int l = 1; l < kp_smp_size(v, x); l++)
            if (kp_smp_rank(v, x, l) != kp_smp_rank(v, x, 0) + l)
                return 0;
    return 1;
}

/* Small vectors on a node of several ranks among several nodes: the
 * node's inputs in the flag lines, combined by the leader alone (into its
 * receive buffer, its own input as the first operand), the leaders'
 * allreduce there, the result back in the leader's line (post 1 of the
 * leader: the node-mates' only wait). */
static int by_lines(kp_sched *s, const kp_smp *v, const kp_ar_group *g, int k)
{
    const int64_t n = s->bytes;
    const int me = s->rank, x = kp_smp_node_of(v, me), c = kp_smp_size(v, x), leader = kp_smp_leader(v, x);
    if (me != leader) {
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_LINE, kp_ar_line_off(s, kp_smp_local(v, me)), n);
        kp_sched_next_round(s);
        kp_sched_post_line(s);
        kp_sched_wait_line(s, leader, 1);
        kp_sched_next_round(s);
        kp_sched_copy(s, KP_BUF_LINE, kp_ar_line_off(s, 0), KP_BUF_RECV, 0, n);
        return kp_sched_finish(s);
    }
    for (int l = 1; l < c; l++)
        kp_sched_wait_line(s, kp_smp_rank(v, x, l), 1);
    kp_sched_next_round(s);
    for (int l = 1; l < c; l++) {
        kp_sched_reduce(s, l == 1 ? KP_BUF_SEND : KP_BUF_RECV, 0, KP_BUF_LINE, kp_ar_line_off(s, l), KP_BUF_RECV, 0, n);
        kp_sched_next_round(s);
    }
    const kp_ar_at r = {KP_BUF_RECV, 0};
    kp_ar_group_recmul(s, g, k, r, r, 0);
    kp_sched_next_round(s);
    kp_sched_copy(s, KP_BUF_RECV, 0, KP_BUF_LINE, kp_ar_line_off(s, 0), n);
    kp_sched_next_round(s);
    kp_sched_post_line(s);
    return kp_sched_finish(s);
}

int kp_allreduce_smp_build(kp_sched *s, const kp_params *prm)
{
    const int k = prm->k, me = s->rank;
    int rc;
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "smp: k = %d ports; k must be >= 1", k);
    if (kp_smp_validate(s, "allreduce smp"))
        return s->err;
    const kp_smp v = kp_smp_view(s);
    if (!s->commute && !nodes_consecutive(&v))
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "smp: a non-commutative operation needs every node's ranks consecutive (the "
                               "leaders combine in node order)");
    if (kp_ar_begin(s, "smp", 0, &rc))
        return rc;
    const int64_t n = s->bytes, e = s->elem > 0 ? s->elem : 1;
    const int N = kp_smp_nnodes(&v), x = kp_smp_node_of(&v, me), c = kp_smp_size(&v, x), l = kp_smp_local(&v, me);
    const int leader = kp_smp_leader(&v, x);
    const kp_ar_group g = {N, x, leader_of_node, &v};
    if (c == 1) { /* alone on the node: a leader with its own buffers */
        kp_ar_group_recmul(s, &g, k, (kp_ar_at){KP_BUF_SEND, 0}, (kp_ar_at){KP_BUF_RECV, 0}, 0);
        return kp_sched_finish(s);
    }
    if (kp_ar_lines_fit(s))
        return N == 1 ? kp_ar_by_lines(s) : by_lines(s, &v, &g, k);
    const int64_t A = kp_ar_align(e), st = (n + A - 1) / A * A, res = (int64_t)c * st;
    kp_sched_need_shm(s, res + st);
#define SOFF(j) kp_ar_cut(s, n, c, (j))
#define SLEN(j) (SOFF((j) + 1) - SOFF(j))
    /* 1: the input, all but the own slice, into my slot */
    for (int j = 0; j < c; j++)
        if (j != l)
            kp_sched_copy(s, KP_BUF_SEND, SOFF(j), KP_BUF_SHM, (int64_t)l * st + SOFF(j), SLEN(j));
    kp_sched_next_round(s);
    kp_sched_post(s);
    for (int j = 0; j < c; j++)
        if (j != l)
            kp_sched_wait(s, kp_smp_rank(&v, x, j), 1);
    kp_sched_next_round(s);
    /* 2: slice l over the node's inputs, local order, into the result area */
    for (int t = 1; t < c; t++) {
        const int ab = t == 1 && l == 0 ? KP_BUF_SEND : KP_BUF_SHM;
        const int64_t ao = t == 1 ? SOFF(l) : res + SOFF(l); /* slot 0 or my send buffer; then the result */
        const int bb = t == l ? KP_BUF_SEND : KP_BUF_SHM;
        const int64_t bo = t == l ? SOFF(l) : (int64_t)t * st + SOFF(l);
        kp_sched_reduce(s, ab, ao, bb, bo, KP_BUF_SHM, res + SOFF(l), SLEN(l));
        kp_sched_next_round(s);
    }
    kp_sched_post(s); /* post 2: my slice of the node's partial is in */
    if (me == leader || N == 1) {
        for (int j = 0; j < c; j++)
            if (j != l)
                kp_sched_wait(s, kp_smp_rank(&v, x, j), 2);
        kp_sched_next_round(s);
    }
    if (N == 1) { /* 4 on one node: everyone copies the result out */
        kp_sched_copy(s, KP_BUF_SHM, res, KP_BUF_RECV, 0, n);
        return kp_sched_finish(s);
    }
    if (me == leader) { /* 3: the leaders' allreduce on the result area */
        const kp_ar_at r = {KP_BUF_SHM, res};
        kp_ar_group_recmul(s, &g, k, r, r, 0);
        kp_sched_next_round(s);
        kp_sched_post(s); /* post 3: the result is in the segment */
    } else {
        kp_sched_next_round(s);
        kp_sched_wait(s, leader, 3);
        kp_sched_next_round(s);
    }
    kp_sched_copy(s, KP_BUF_SHM, res, KP_BUF_RECV, 0, n);
#undef SOFF
#undef SLEN
    return kp_sched_finish(s);
}
