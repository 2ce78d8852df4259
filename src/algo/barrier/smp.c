/*
 * SMP-aware barrier: shared-memory arrival, n-way dissemination among the
 * node leaders, shared-memory release.
 *
 *  1. arrival: every rank of a node except its leader (lowest rank) posts
 *     (post 1: "I have entered the barrier"); the leader waits for all of
 *     those posts;
 *  2. the N leaders run the n-way dissemination barrier over node indices
 *     with zero-byte signals: in round r leader of node x signals the
 *     leaders of nodes (x + i*(n+1)^r) mod N and waits for the signals of
 *     (x - i*(n+1)^r) mod N, i = 1..n (skip rule for N not a power of n+1:
 *     see nway_dissemination.c);
 *  3. release: the leader posts (its post 1: "every rank has entered") and
 *     every other rank of its node waits for that post.
 * No data moves and no shared bytes are used (the segment is 0 bytes); the
 * posts alone order the ranks (and keep the node fence of
 * algo/smp_common.h, so shared-memory calls around a barrier stay safe). Across calls: a rank's post 1 of call c+1
 * is distinct from its post 1 of call c (posts are counted per call), so a
 * fast rank's next barrier cannot be mistaken for this one.
 * A rank alone on its node makes no post and waits for none; with no layout
 * (every rank its own node) this is the n-way dissemination barrier.
 *
 * Papers: T. Hoefler, T. Mehlan, F. Mietke and W. Rehm, "Fast Barrier
 * Synchronization for InfiniBand", CAC 2006 (n-way dissemination; slides
 * "n-way Dissemination: A new Barrier Algorithm for InfiniBand"); the
 * shared-memory arrival/release per node follows the SMP-aware collectives
 * of Y. Qian and A. Afsahi, ICPP 2007, section 5.1 (flags in shared memory,
 * one writer each, polled by the master).
 *
 * Cost (N nodes, c ranks per node, sync = one post observed through shared
 * memory): T = sync + ceil(log_{n+1} N) * ts + sync; LogP for phase 2 as in
 * nway_dissemination.c. The leader polls c-1 flags.
 * Operations per rank: non-leader 2; leader (c-1) waits + 2n per
 * dissemination round + 1 post.
 * Memory: none. Restrictions: none (any P, any layout, any n >= 1; P = 1 is
 * an empty schedule). Parameters: n (signals per round among leaders, >= 1;
 * default 2).
 *
 * Example, P = 7 on N = 3 nodes {0,1,2} {3,4} {5,6}, n = 2:
 *   arrival  1, 2 post; 0 waits for both; 4 posts, 3 waits; 6 posts, 5 waits
 *   round 0  leaders 0, 3, 5 signal the two other leaders and wait for both
 *            (distances 1 and 2 among 3 nodes)
 *   release  0, 3, 5 post; 1, 2, 4, 6 wait for their leader's post
 *
 * Peer arithmetic: kp_nway_* in peers_coll.h (on node indices), layout
 * arithmetic in algo/smp_common.h.
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "algo/smp_common.h"
#include "kport.h"

int kp_barrier_smp_build(kp_sched *s, const kp_params *prm)
{
    const int me = s->rank, nw = prm->n;

    if (nw < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "barrier smp: n = %d signals per round; n must be >= 1", nw);
    if (kp_smp_validate(s, "barrier smp"))
        return s->err;
    const kp_smp v = kp_smp_view(s);
    const int N = kp_smp_nnodes(&v), x = kp_smp_node_of(&v, me), ns = kp_smp_size(&v, x);
    const int leader = kp_smp_leader(&v, x);

    if (me != leader) {
        kp_sched_post(s); /* post 1: arrived */
        kp_sched_next_round(s);
        kp_sched_wait(s, leader, 1); /* the leader's post 1: everyone arrived */
        return kp_sched_finish(s);
    }
    for (int l = 1; l < ns; l++)
        kp_sched_wait(s, kp_smp_rank(&v, x, l), 1);
    kp_sched_next_round(s);
    const int nrounds = kp_nway_nrounds(N, nw);
    for (int r = 0; r < nrounds; r++) {
        const int npeers = kp_nway_npeers(N, nw, r);
        for (int i = 1; i <= npeers; i++)
            kp_sched_signal(s, kp_smp_leader(&v, kp_nway_send_peer(x, N, nw, r, i)));
        for (int i = 1; i <= npeers; i++)
            kp_sched_wait_signal(s, kp_smp_leader(&v, kp_nway_recv_peer(x, N, nw, r, i)));
        kp_sched_next_round(s);
    }
    if (ns > 1)
        kp_sched_post(s); /* post 1: release the node */
    return kp_sched_finish(s);
}
