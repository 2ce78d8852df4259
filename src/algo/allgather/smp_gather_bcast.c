/*
 * SMP-aware Gather and Broadcast all-gather.
 *
 * Three phases (paper, section 6.2.1):
 *  1. shared-memory gather per node: every rank copies its block into the
 *     node's shared segment at its node position (node order: rank r at
 *     node_start[node of r] + local index of r, so each node's blocks form
 *     one contiguous "chunk" and the chunks of consecutive nodes are
 *     contiguous too), and posts;
 *  2. inter-node gather to the leader of node 0 (rank 0), then broadcast of
 *     the whole result from it to every other leader, both straight from
 *     and into the leaders' segments at node positions:
 *      - tree = 1: binomial tree over the N nodes rooted at node 0: node
 *        n + 2^j is a child of n for every j below n's lowest set bit (every
 *        j for n = 0) with n + 2^j < N; its subtree is the node range
 *        [n, n + min(lowest bit of n, N - n)), which never wraps, so one
 *        message per child (no scratch: intermediate leaders collect their
 *        subtree in their own segment);
 *      - tree = 2: direct, every leader sends its chunk to rank 0, which
 *        receives them all at once;
 *     the broadcast always runs down the binomial tree, largest subtree
 *     first, and each leader receives from its parent only what it lacks:
 *     the segment minus the chunks it already holds (its subtree for
 *     tree = 1, its own chunk for tree = 2), at most two messages, in the
 *     round it sends its gather data up (the receive is posted early);
 *  3. shared-memory broadcast: a leader posts as soon as its segment is
 *     complete (before it forwards the broadcast to its children), and
 *     every rank copies the blocks from the segment to their places in its
 *     receive buffer (one copy per run of consecutive ranks).
 * Copy-out overlaps the inter-node phase: non-leaders copy their own node's
 * blocks out as soon as every rank of the node has posted, before waiting
 * for the leader; a leader copies its own node's blocks in the round of its
 * first message and every batch of received chunks in the next round.
 * The synchronisation (posts and waits, and why calls that reuse the same
 * half of the segment cannot race) is described in algo/smp_common.h.
 * Every rank copies its own block send -> receive buffer beside its post
 * 1, and the copies out leave it out (smp_common.h). MPI_IN_PLACE needs no
 * special case: that copy is onto itself, which the executor skips.
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007, sections 5 and
 * 6.2.1 (there the broadcast is QsNetII's hardware broadcast; here it is a
 * binomial tree of messages). For small messages.
 *
 * Cost (Hockney; m = bytes per block, N nodes, c = ranks per node, tc =
 * copy time per byte, sync = one post/wait through shared memory, L =
 * ceil(log2 N)):
 *   tree = 1: T = m tc + sync + L ts + (N-1) c m tau        (gather)
 *                 + L ts + L (P - c) m tau  (at most)      (broadcast)
 *                 + sync + (P - c) m tc
 *   tree = 2: the gather term becomes ts + (N-1) c m tau (N-1 messages in
 *             flight at rank 0, which receives (N-1) c m bytes).
 * Broadcast messages carry the segment minus the receiver's own data, in at
 * most two pieces (+1 ts). The copy-out of the own node is hidden.
 * Operations per rank: a non-leader makes 1 post, c waits and 2 + (runs)
 * copies, a run being positions of consecutive ranks other than its own (4
 * runs for nodes of consecutive ranks, up to P for cyclic placement); the leader 1 post +
 * (c - 1) waits (+1 post) + copies, and O(log N) messages (tree = 2:
 * N-1 receives at rank 0).
 * Memory: a shared segment of P * m bytes per node (per call half), no
 * scratch. Restrictions: none (any P, any layout; one node: no messages; no
 * layout: every rank its own node). Parameters: tree (1 = binomial,
 * 2 = direct; default 1).
 *
 * Example, P = 8 on N = 4 nodes {0,1} {2,3} {4,5} {6,7}, tree = 1
 * (segment positions = ranks here; leaders 0, 2, 4, 6):
 *   gather step 0  2 -> 0: [2 3]; 6 -> 4: [6 7]      0 holds 0..3, 4 holds 4..7
 *   gather step 1  4 -> 0: [4 5 6 7]                 0 holds all eight; posts
 *   bcast          0 -> 4: [0 1 2 3] (4 lacks 0..3); then 0 -> 2: [0 1], [4..7]
 *                  and 4 -> 6: [0..5]; every leader posts once complete
 *   phase 3        ranks 1, 3, 5, 7 copy the blocks of the other nodes out.
 *
 * Peer arithmetic: kp_binom_* in peers_coll.h (on node indices, root node
 * 0), layout arithmetic in algo/smp_common.h.
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "algo/smp_common.h"
#include "kport.h"

/* chunks node n holds before the broadcast: [n, n + held) */
static int held(int n, int N, int tree)
{
    return n == 0 ? N : tree == 1 ? kp_binom_subtree(n, N) : 1;
}

/* send (receive) positions [0, start(a)) and [start(b), P): the segment
 * minus node range [a, b) */
static void xfer_complement(kp_sched *s, const kp_smp *v, int send, int peer, int a, int b)
{
    const int64_t m = s->bytes;
    const int64_t lo = (int64_t)kp_smp_start(v, a) * m, hi = (int64_t)kp_smp_start(v, b) * m;
    const int64_t all = (int64_t)s->P * m;
    if (send) {
        kp_sched_send(s, peer, KP_BUF_SHM, 0, lo);
        kp_sched_send(s, peer, KP_BUF_SHM, hi, all - hi);
    } else {
        kp_sched_recv(s, peer, KP_BUF_SHM, 0, lo);
        kp_sched_recv(s, peer, KP_BUF_SHM, hi, all - hi);
    }
}

int kp_allgather_smp_gather_bcast_build(kp_sched *s, const kp_params *prm)
{
    const int me = s->rank, tree = prm->tree;
    const int64_t m = s->bytes;

    if (tree != 1 && tree != 2)
        return kp_sched_refuse(s, KP_ERR_PARAM, "smp_gather_bcast: tree = %d; 1 (binomial) or 2 (direct)", tree);
    kp_smp v;
    int rc;
    if (!kp_smp_ag_begin(s, "smp_gather_bcast", &v, &rc))
        return rc;
    const int N = kp_smp_nnodes(&v), n = kp_smp_node_of(&v, me);
    /* gather: receive from children, each round copying out what the
     * previous one brought (the first: the own chunk) */
    int copy_lo = n, copy_cnt = 1; /* node range to copy out in the next round */
    if (tree == 1) {
        for (int j = 0, c; (c = kp_binom_child(n, N, j)) >= 0; j++) {
            const int cnt = kp_binom_subtree(c, N);
            kp_sched_recv(s, kp_smp_leader(&v, c), KP_BUF_SHM, (int64_t)kp_smp_start(&v, c) * m,
                          (int64_t)(kp_smp_start(&v, c + cnt) - kp_smp_start(&v, c)) * m);
            kp_smp_copy_out_nodes(s, &v, copy_lo, copy_cnt);
            kp_sched_next_round(s);
            copy_lo = c;
            copy_cnt = cnt;
        }
    } else if (n == 0 && N > 1) {
        for (int q = 1; q < N; q++)
            kp_sched_recv(s, kp_smp_leader(&v, q), KP_BUF_SHM, (int64_t)kp_smp_start(&v, q) * m,
                          (int64_t)kp_smp_size(&v, q) * m);
        kp_smp_copy_out_nodes(s, &v, copy_lo, copy_cnt);
        kp_sched_next_round(s);
        copy_lo = 1;
        copy_cnt = N - 1;
    }
    const int hn = held(n, N, tree);
    if (n > 0) {
        /* send the held chunks up, receive the rest from the broadcast parent */
        const int up = tree == 1 ? kp_binom_parent(n, N) : 0;
        kp_sched_send(s, kp_smp_leader(&v, up), KP_BUF_SHM, (int64_t)kp_smp_start(&v, n) * m,
                      (int64_t)(kp_smp_start(&v, n + hn) - kp_smp_start(&v, n)) * m);
        xfer_complement(s, &v, 0, kp_smp_leader(&v, kp_binom_parent(n, N)), n, n + hn);
        kp_smp_copy_out_nodes(s, &v, copy_lo, copy_cnt);
        kp_sched_next_round(s);
    }
    /* the segment is complete: release the node, copy out the rest, and
     * forward the broadcast, largest subtree first */
    kp_smp_ag_release(s, &v);
    if (n > 0) {
        kp_smp_copy_out(s, &v, 0, kp_smp_start(&v, n));
        kp_smp_copy_out(s, &v, kp_smp_start(&v, n + hn), s->P);
    } else {
        kp_smp_copy_out_nodes(s, &v, copy_lo, copy_cnt);
    }
    for (int j = kp_binom_nsteps(N) - 1; j >= 0; j--) {
        const int c = kp_binom_child(n, N, j);
        if (c < 0)
            continue;
        xfer_complement(s, &v, 1, kp_smp_leader(&v, c), c, c + held(c, N, tree));
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
