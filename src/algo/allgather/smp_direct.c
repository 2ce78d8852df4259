/*
 * SMP-aware k-port Direct all-gather.
 *
 * Three phases (paper, section 6.2.2):
 *  1. shared-memory gather per node: every rank copies its block into the
 *     node's shared segment, at its node position (node order: rank r at
 *     node_start[node of r] + local index of r, so each node's blocks form
 *     one contiguous "chunk"), and posts;
 *  2. the node leaders (lowest rank of each node) run the k-port Direct
 *     all-gather over the N nodes on whole chunks, straight from and into
 *     their segments: in step i leader n sends its chunk to the leaders of
 *     nodes n + i*k + 1, ..., n + i*k + k and receives the chunks of nodes
 *     n - i*k - 1, ..., n - i*k - k (mod N) at their node positions; chunks
 *     may differ in size (uneven nodes), each message is one chunk;
 *  3. shared-memory broadcast: the leader posts once the last chunk has
 *     arrived, and every rank copies the blocks from the segment to their
 *     places in its receive buffer (one copy per run of consecutive ranks).
 * Copy-out overlaps the inter-node phase: non-leaders copy their own node's
 * blocks out as soon as every rank of the node has posted, before waiting
 * for the leader; the leader copies its own node's blocks in the round of
 * its first sends and each step's received chunks during the next step.
 * The synchronisation (posts and waits, and why calls that reuse the same
 * half of the segment cannot race) is described in algo/smp_common.h.
 * Every rank copies its own block send -> receive buffer beside its post
 * 1, and the copies out leave it out (smp_common.h). MPI_IN_PLACE needs no
 * special case: that copy is onto itself, which the executor skips.
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007, sections 5 and
 * 6.2.2 (SMP-aware Direct). For medium to large messages.
 *
 * Cost (Hockney, k-port; m = bytes per block, N nodes, c = ranks per node,
 * tc = copy time per byte, sync = one post/wait through shared memory):
 *   T = m tc + sync + ceil((N-1)/k) * (ts + c m tau) + sync + (P - c) m tc
 * (the copy-out of the own node, c m tc, is hidden behind phase 2). With
 * uneven nodes c is the largest node in each step's term.
 * Operations per rank: a non-leader makes 1 post, c waits and 2 + (runs)
 * copies, a run being positions of consecutive ranks other than its own (4
 * runs for nodes of consecutive ranks, up to P for cyclic placement); the leader 1 post +
 * (c - 1) waits (+1 post) + copies, and 2 (N-1) messages.
 * Memory: a shared segment of P * m bytes per node (per call half), no
 * scratch. Restrictions: none (any P, any layout, any k >= 1; k >= N-1
 * finishes phase 2 in one step; one node: no messages at all; no layout:
 * every rank is its own node and this is the flat Direct through the
 * segment). Parameters: k (ports among the leaders, >= 1; default 2).
 *
 * Example, P = 6 on 3 nodes {0,1} {2,3} {4,5}, k = 2 (one inter-node step):
 *   phase 1  segment of node 0: [0 1 . . . .]  node 1: [. . 2 3 . .]  node 2: [. . . . 4 5]
 *   step 0   leader 0 sends [0 1] to 2 and 4, receives [2 3] from 2 and [4 5]
 *            from 4 (and copies blocks 0, 1 out); every segment is [0 1 2 3 4 5]
 *   phase 3  leaders post; ranks 1, 3, 5 (which copied their own node's
 *            blocks already) copy the other four blocks out.
 *
 * Peer arithmetic: kp_direct_* in peers_kport.h (on node indices), layout
 * arithmetic in algo/smp_common.h.
 */
#include "algo/algo.h"
#include "algo/allgather/peers_kport.h"
#include "algo/smp_common.h"
#include "kport.h"

int kp_allgather_smp_direct_build(kp_sched *s, const kp_params *prm)
{
    const int me = s->rank, k = prm->k;
    const int64_t m = s->bytes;

    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "smp_direct: k = %d ports; k must be >= 1", k);
    kp_smp v;
    int rc;
    if (!kp_smp_ag_begin(s, "smp_direct", &v, &rc))
        return rc;
    const int N = kp_smp_nnodes(&v), n = kp_smp_node_of(&v, me);
    const int64_t lo = (int64_t)kp_smp_start(&v, n) * m, len = (int64_t)kp_smp_size(&v, n) * m;
    const int nsteps = kp_direct_nsteps(N, k);
    for (int i = 0; i < nsteps; i++) {
        for (int j = 1; j <= k && kp_direct_dist(N, k, i, j) > 0; j++) {
            const int to = kp_direct_send_peer(n, N, k, i, j), from = kp_direct_recv_peer(n, N, k, i, j);
            kp_sched_send(s, kp_smp_leader(&v, to), KP_BUF_SHM, lo, len);
            kp_sched_recv(s, kp_smp_leader(&v, from), KP_BUF_SHM, (int64_t)kp_smp_start(&v, from) * m,
                          (int64_t)kp_smp_size(&v, from) * m);
        }
        if (i == 0)
            kp_smp_copy_out_nodes(s, &v, n, 1);
        else
            for (int j = 1; j <= k && kp_direct_dist(N, k, i - 1, j) > 0; j++)
                kp_smp_copy_out_nodes(s, &v, kp_direct_recv_peer(n, N, k, i - 1, j), 1);
        kp_sched_next_round(s);
    }
    kp_smp_ag_release(s, &v);
    if (nsteps == 0)
        kp_smp_copy_out_nodes(s, &v, n, 1);
    else
        for (int j = 1; j <= k && kp_direct_dist(N, k, nsteps - 1, j) > 0; j++)
            kp_smp_copy_out_nodes(s, &v, kp_direct_recv_peer(n, N, k, nsteps - 1, j), 1);
    return kp_sched_finish(s);
}
