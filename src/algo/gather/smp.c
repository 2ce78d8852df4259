/*
 * SMP-aware gather: shared-memory gather per node, then one message per
 * node to the root.
 *
 * Every node has a "master": the root on the root's node, the leader
 * (lowest rank) elsewhere. On a node with several ranks every rank but the
 * root copies its block into the node's shared segment at its local index
 * (so the node's blocks are contiguous, in rank order); the non-masters
 * post, and the master waits for those posts.
 *  - A master other than the root sends its node's whole segment (c blocks)
 *    to the root in one message; a rank alone on its node sends its block
 *    straight from its send buffer (no shared memory).
 *  - The root copies its own block into place (a no-op under MPI_IN_PLACE)
 *    and receives every other node's message at once, straight into the
 *    receive buffer when that node's ranks are consecutive (one run), else
 *    into scratch, from which the blocks are copied into place in the next
 *    round. Meanwhile it copies its node-mates' blocks from the segment
 *    into place (one copy per run of consecutive ranks; the root's own slot
 *    of the segment is never used).
 * Every master posts once it has seen every node-mate's post (the node has
 * entered the call), and every non-master waits for that post before it
 * leaves; on a node of two ranks the master posts on entry instead (its
 * one node-mate needs to know only that the master has entered; the master
 * knows the mate has from its block's post), so the mate leaves one flag
 * transfer after the master enters, not after a round trip (P = 2, 8 B:
 * the mate's wait was the call's critical path). Blocks of at most
 * KP_LINE - 8 bytes on the root's node travel in their writers' flag lines
 * (KP_BUF_LINE, post_line / wait_line), so the root gets flag and data
 * together, as shm_flat's. This is the node fence of algo/smp_common.h: no rank leaves a
 * call before every rank of its node has entered it, so a rank cannot
 * overwrite its slot in call c+2 (the executor alternates the segment's
 * halves between calls) before its master has finished reading it in call
 * c -- nor before a node-mate has finished call c of any other algorithm
 * that uses the same half. Within the call the master reads each slot only
 * after its writer's post.
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007, sections 5.1
 * and 6.2.1 (per-node shared-memory gather, then Direct inter-node gather
 * among the masters, with the optimization for the root's node of their
 * Figure 3: the root gathers its own node itself); Y. Qian and A. Afsahi,
 * Cluster Computing 11, 2008 (SMP-aware gather).
 *
 * Cost (Hockney; m = bytes per block, N nodes, c = ranks per node, tc =
 * copy time per byte, sync = one post/wait through shared memory):
 *   T = m tc + sync + ts + (P - c) m tau (the root receives all remote
 *       blocks) + c m tc at the root (overlapped with the receives)
 *       + (blocks of non-consecutive nodes) m tc;
 * a non-master leaves after m tc + 2 sync (the node fence).
 * Operations per rank: non-master 3; leader c + 2; root (c - 1) waits +
 * 1 post + N - 1 receives + copies (one per run of consecutive ranks).
 * Memory: a shared segment of c * m bytes on each node with c > 1 (per call
 * half); scratch at the root of (blocks of nodes whose ranks are not
 * consecutive) * m bytes, none for nodes of consecutive ranks.
 * Restrictions: none (any P, any layout, any root; no layout: every rank its
 * own node, and this is the Direct gather with all receives at once).
 * Parameters: none.
 *
 * Example, P = 7 on 3 nodes by rank mod 3: {0,3,6} {1,4} {2,5}, root 4:
 *   round 0  every rank but 4 copies its block into its node's segment
 *            (node 0: [0 3 6], node 1: [1 .], node 2: [2 5]); ranks 0, 2
 *            (leaders) and 4 (root) wait for their node-mates' posts
 *   round 1  3, 6, 1, 5 post and wait for their master's post; 0, 2, 4 post;
 *            0 sends [0 3 6] and 2 sends [2 5] to 4, into its scratch (their
 *            ranks are not consecutive); 4 copies block 1 from the segment
 *   round 2  4 copies scratch blocks 0, 3, 6, 2, 5 into place.
 *
 * Layout arithmetic in algo/smp_common.h.
 */
#include "algo/algo.h"
#include "algo/smp_common.h"
#include "kport.h"

/* are node n's ranks consecutive (its blocks one run of the receive buffer)? */
static int one_run(const kp_smp *v, int n)
{
    const int r0 = kp_smp_rank(v, n, 0);
    for (int l = 1; l < kp_smp_size(v, n); l++)
        if (kp_smp_rank(v, n, l) != r0 + l)
            return 0;
    return 1;
}

/* copy blocks of node n from buffer buf (at base + local index * m) into
 * place, one copy per run of consecutive ranks, skipping rank `skip` */
static void scatter_node(kp_sched *s, const kp_smp *v, int n, int buf, int64_t base, int skip)
{
    const int64_t m = s->bytes;
    const int ns = kp_smp_size(v, n);
    for (int lo = 0, hi; lo < ns; lo = hi) {
        const int r0 = kp_smp_rank(v, n, lo);
        if (r0 == skip) {
            hi = lo + 1;
            continue;
        }
        for (hi = lo + 1; hi < ns && kp_smp_rank(v, n, hi) == r0 + (hi - lo) && kp_smp_rank(v, n, hi) != skip; hi++)
            ;
        kp_sched_copy(s, buf, base + (int64_t)lo * m, KP_BUF_RECV, (int64_t)r0 * m, (int64_t)(hi - lo) * m);
    }
}

int kp_gather_smp_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, me = s->rank, root = s->root;
    const int64_t m = s->bytes;

    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "smp: root %d is not a rank of 0..%d", root, P - 1);
    if (kp_smp_validate(s, "gather smp"))
        return s->err;
    if (m == 0)
        return kp_sched_finish(s);
    const kp_smp v = kp_smp_view(s);
    const int N = kp_smp_nnodes(&v), x = kp_smp_node_of(&v, me), ns = kp_smp_size(&v, x);
    const int rnode = kp_smp_node_of(&v, root);
    const int master = x == rnode ? root : kp_smp_leader(&v, x);
    /* small blocks of the root's node travel in their writers' flag lines */
    const int inl = x == rnode && m <= KP_LINE - 8;
    if (ns > 1 && !inl)
        kp_sched_need_shm(s, (int64_t)ns * m);

    if (me != master) { /* into the segment, post, wait for the node fence */
        if (inl) {
            kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_LINE, (int64_t)kp_smp_local(&v, me) * KP_LINE + 8, m);
            kp_sched_next_round(s);
            kp_sched_post_line(s); /* post 1: my block is in my line */
        } else {
            kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SHM, (int64_t)kp_smp_local(&v, me) * m, m);
            kp_sched_next_round(s);
            kp_sched_post(s); /* post 1: my block is in the segment */
        }
        kp_sched_wait(s, master, 1); /* the whole node has entered (two ranks: the master has) */
        return kp_sched_finish(s);
    }
    /* a node of two: the master's post 1 comes first, on entry: the fence
     * for its one node-mate, which then leaves without the round trip */
    if (ns == 2)
        kp_sched_post(s);
    if (me != root) { /* a leader: collect the node, one message to the root */
        if (ns == 1) {
            kp_sched_send(s, root, KP_BUF_SEND, 0, m);
            return kp_sched_finish(s);
        }
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SHM, 0, m);
        for (int l = 1; l < ns; l++)
            kp_sched_wait(s, kp_smp_rank(&v, x, l), 1);
        kp_sched_next_round(s);
        if (ns > 2)
            kp_sched_post(s); /* post 1: the node fence */
        kp_sched_send(s, root, KP_BUF_SHM, 0, (int64_t)ns * m);
        return kp_sched_finish(s);
    }

    /* the root */
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)root * m, m);
    if (ns > 1) {
        for (int l = 0; l < ns; l++)
            if (kp_smp_rank(&v, x, l) != root) {
                if (inl)
                    kp_sched_wait_line(s, kp_smp_rank(&v, x, l), 1);
                else
                    kp_sched_wait(s, kp_smp_rank(&v, x, l), 1);
            }
        kp_sched_next_round(s);
        if (ns > 2)
            kp_sched_post(s); /* post 1: the node fence */
    }
    int64_t scratch = 0;
    for (int n = 0; n < N; n++) {
        if (n == x)
            continue;
        const int64_t len = (int64_t)kp_smp_size(&v, n) * m;
        if (one_run(&v, n)) {
            kp_sched_recv(s, kp_smp_leader(&v, n), KP_BUF_RECV, (int64_t)kp_smp_leader(&v, n) * m, len);
        } else {
            kp_sched_recv(s, kp_smp_leader(&v, n), KP_BUF_SCRATCH, scratch, len);
            scratch += len;
        }
    }
    if (ns > 1 && inl) {
        for (int l = 0; l < ns; l++)
            if (kp_smp_rank(&v, x, l) != root)
                kp_sched_copy(s, KP_BUF_LINE, (int64_t)l * KP_LINE + 8, KP_BUF_RECV,
                              (int64_t)kp_smp_rank(&v, x, l) * m, m);
    } else if (ns > 1) {
        scatter_node(s, &v, x, KP_BUF_SHM, 0, root);
    }
    kp_sched_next_round(s);
    if (scratch > 0) {
        kp_sched_need_scratch(s, scratch);
        int64_t off = 0;
        for (int n = 0; n < N; n++) {
            if (n == x || one_run(&v, n))
                continue;
            scatter_node(s, &v, n, KP_BUF_SCRATCH, off, -1);
            off += (int64_t)kp_smp_size(&v, n) * m;
        }
    }
    return kp_sched_finish(s);
}
