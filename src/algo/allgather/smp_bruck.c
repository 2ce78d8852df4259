/*
 * SMP-aware k-port Bruck all-gather.
 *
 * Three phases (paper, section 6.2.2):
 *  1. shared-memory gather per node: every rank copies its block into the
 *     node's shared segment at its node position (node order: rank r at
 *     node_start[node of r] + local index of r, so each node's blocks form
 *     one contiguous "chunk"), and posts;
 *  2. the node leaders (lowest rank of each node) run the k-port Bruck
 *     all-gather over the N nodes on chunks, straight in their segments.
 *     Before step i leader n holds the chunks of nodes n, n+1, ..., n+h-1
 *     (mod N), h = min((k+1)^i, N); on port j it sends the first
 *     cnt = min(h, N - j*h) of them to the leader of node n - j*h and
 *     receives the chunks of nodes n + j*h, ..., n + j*h + cnt - 1 from the
 *     leader of node n + j*h (ports with j*h >= N are idle). A cyclic range
 *     of nodes is at most two contiguous pieces of the segment (it may wrap
 *     past node N-1), so each port sends and receives at most two messages,
 *     and received chunks land directly at their node positions: the
 *     segment is in final order, which replaces Bruck's rotation (paper:
 *     "instead of doing a local memory shift, we copy each message from the
 *     shared buffer to the right position of the destination buffer");
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
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007, sections 5,
 * 6.1.3 and 6.2.2 (SMP-aware Bruck), after J. Bruck et al., IEEE TPDS 8(11),
 * 1997. For small to medium messages.
 *
 * Cost (Hockney, k-port; m = bytes per block, N nodes, c = ranks per node,
 * tc = copy time per byte, sync = one post/wait through shared memory):
 * with s = ceil(log_{k+1} N) steps and h = (k+1)^(s-1),
 *   T = m tc + sync + s ts + ((h - 1)/k + min(h, N - h)) c m tau + sync
 *       + (P - c) m tc
 * plus one ts in a step where a port's range wraps past node N-1 (two
 * messages); for N = (k+1)^s the transfer term is (N-1)/k * c m tau. The
 * copy-out of the own node (c m tc) is hidden behind phase 2.
 * Operations per rank: a non-leader makes 1 post, c waits and 2 + (runs)
 * copies, a run being positions of consecutive ranks other than its own (4
 * runs for nodes of consecutive ranks, up to P for cyclic placement); the leader 1 post +
 * (c - 1) waits (+1 post) + copies, and at most 4k messages per step.
 * Memory: a shared segment of P * m bytes per node (per call half), no
 * scratch. Restrictions: none (any P, any layout, any k >= 1; k >= N-1
 * finishes phase 2 in one step; one node: no messages at all; no layout:
 * every rank is its own node). Parameters: k (ports among leaders, >= 1;
 * default 2).
 *
 * Example, P = 10 on N = 5 nodes {0,1} {2,3} ... {8,9}, k = 1 (3 steps),
 * chunks (node indices) each leader holds:
 *   start   0:{0}        1:{1}        2:{2}        3:{3}        4:{4}
 *   step 0  0:{0,1}      1:{1,2}      2:{2,3}      3:{3,4}      4:{4,0}
 *           (h = 1: chunk of node n+1 from the leader of node n+1)
 *   step 1  0:{0,1,2,3}  ...          2:{2,3,4,0}  ...
 *           (h = 2: leader of node 4 sends chunks 4, 0 to leader of node 2
 *           as two messages, segment positions 8..9 and 0..1)
 *   step 2  everyone holds all five (h = 4, partial: one chunk, n+4)
 *   phase 3 leaders post; every rank copies blocks out (two copies for the
 *           blocks of other nodes: positions 0..2n-1 and 2n+2..9).
 *
 * Peer arithmetic: kp_bruck_* in peers_kport.h (on node indices), layout
 * arithmetic in algo/smp_common.h.
 */
#include "algo/algo.h"
#include "algo/allgather/peers_kport.h"
#include "algo/smp_common.h"
#include "kport.h"

/* send (or receive) the chunks of the cyclic node range [a, a + cnt) to (from)
 * rank peer: one message per contiguous piece of the segment */
static void xfer_nodes(kp_sched *s, const kp_smp *v, int send, int peer, int a, int cnt)
{
    const int N = kp_smp_nnodes(v), end = a + cnt;
    const int64_t m = s->bytes;
    const int pieces[2][2] = {{kp_smp_start(v, a), kp_smp_start(v, end < N ? end : N)},
                              {0, end > N ? kp_smp_start(v, end - N) : 0}};
    for (int x = 0; x < 2; x++) {
        const int64_t off = (int64_t)pieces[x][0] * m, len = (int64_t)(pieces[x][1] - pieces[x][0]) * m;
        if (send)
            kp_sched_send(s, peer, KP_BUF_SHM, off, len);
        else
            kp_sched_recv(s, peer, KP_BUF_SHM, off, len);
    }
}

/* copy out the chunks leader n received in step i */
static void copy_out_step(kp_sched *s, const kp_smp *v, int n, int k, int i)
{
    const int N = kp_smp_nnodes(v), h = kp_bruck_held(N, k, i);
    int cnt;
    for (int j = 1; j <= k && (cnt = kp_bruck_count(N, k, i, j)) > 0; j++)
        kp_smp_copy_out_nodes(s, v, kp_mod((int64_t)n + (int64_t)j * h, N), cnt);
}

int kp_allgather_smp_bruck_build(kp_sched *s, const kp_params *prm)
{
    const int me = s->rank, k = prm->k;

    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "smp_bruck: k = %d ports; k must be >= 1", k);
    kp_smp v;
    int rc;
    if (!kp_smp_ag_begin(s, "smp_bruck", &v, &rc))
        return rc;
    const int N = kp_smp_nnodes(&v), n = kp_smp_node_of(&v, me);
    const int nsteps = kp_bruck_nsteps(N, k);
    for (int i = 0; i < nsteps; i++) {
        int cnt;
        for (int j = 1; j <= k && (cnt = kp_bruck_count(N, k, i, j)) > 0; j++) {
            const int to = kp_bruck_send_peer(n, N, k, i, j), from = kp_bruck_recv_peer(n, N, k, i, j);
            xfer_nodes(s, &v, 1, kp_smp_leader(&v, to), n, cnt);
            xfer_nodes(s, &v, 0, kp_smp_leader(&v, from), from, cnt);
        }
        if (i == 0)
            kp_smp_copy_out_nodes(s, &v, n, 1);
        else
            copy_out_step(s, &v, n, k, i - 1);
        kp_sched_next_round(s);
    }
    kp_smp_ag_release(s, &v);
    if (nsteps == 0)
        kp_smp_copy_out_nodes(s, &v, n, 1);
    else
        copy_out_step(s, &v, n, k, nsteps - 1);
    return kp_sched_finish(s);
}
