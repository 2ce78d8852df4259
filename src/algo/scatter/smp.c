/*
 * SMP-aware scatter: one message per node, the node's blocks handed out
 * through its shared segment.
 *
 * The root sends every other node's blocks, in local-index order, to that
 * node's leader in one message: straight from its send buffer when the
 * node's ranks are consecutive (one run of blocks), else packed into
 * scratch first (one copy per run of consecutive ranks) and sent one round
 * later. A leader receives its node's blocks straight into the node's
 * shared segment (block of local index l at l * m), posts, and copies its
 * own block out; its node-mates wait for that post and copy theirs. On the
 * root's own node the root copies its node-mates' blocks from its send
 * buffer into the segment (one copy per run of consecutive ranks) and
 * posts; its own block goes send -> receive buffer (nothing under
 * MPI_IN_PLACE). A leader alone on its node receives its block straight
 * into its receive buffer. When a node's blocks take at most KP_LINE - 8 =
 * 248 bytes they travel in the master's flag line instead of the segment
 * (post_line / wait_line: a node-mate gets the flag and its block with one
 * cache-line transfer). Every non-master posts once on entry, and every
 * rank of the node waits for the entry posts of the non-masters but itself
 * in its last round (non-masters know the master has entered from its
 * post): the node fence of algo/smp_common.h (no rank leaves a call before every
 * rank of its node has entered it, so call c + 2, which reuses call c's half
 * of the segment, cannot overwrite a block a node-mate still reads).
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007 (the per-node
 * shared buffer and the root's node served by the root itself, there for
 * the gather); the SMP-aware gather of gather/smp.c run the other way.
 *
 * Cost (Hockney; m = bytes per block, N nodes, c = ranks per node, tc = copy
 * time per byte, sync = one post/wait):
 *   T = ts + (P - c) m tau (the root sends every remote block, its N - 1
 *       messages at once) + sync + m tc at a remote non-leader,
 *   plus (blocks of nodes of non-consecutive ranks) m tc at the root (the
 *   packing, which those nodes' messages wait for); the root's node costs
 *   (c - 1) m tc + sync + m tc.
 * Memory: a shared segment of c m bytes on every node with c > 1 and
 * c m > 248 (per call half; else the master's flag line); scratch at the root of (blocks of remote nodes whose ranks are not
 * consecutive) * m bytes. Restrictions: none (any P, any layout, any root;
 * no layout: every rank its own node, and this is the Direct scatter with
 * every send at once). Parameters: none.
 *
 * Example, P = 7 on 3 nodes by rank mod 3: {0,3,6} {1,4} {2,5}, root 4,
 * m = 1000 bytes (with m <= 82 every node's blocks would ride in lines):
 *   round 0  4 copies send[1] -> segment block 0 and send[4] -> recv; packs
 *            blocks 0, 3, 6 and 2, 5 into scratch; everyone but 4, 0, 2
 *            posts 1 (entered)
 *   round 1  4 posts (node 1's segment is ready) and sends scratch [0 3 6]
 *            to 0 and [2 5] to 2; 1 waits for 4's post
 *            0 and 2 receive into their segments, then post; 3, 6, 5 and 1
 *            copy their blocks out; 0, 2, 4 wait for their mates' post 1.
 *
 * Layout arithmetic in algo/smp_common.h.
 */
#include "algo/algo.h"
#include "algo/smp_common.h"
#include "kport.h"

/* are node n's ranks consecutive (its blocks one run of the send buffer)? */
static int consecutive(const kp_smp *v, int n)
{
    for (int l = 1; l < kp_smp_size(v, n); l++)
        if (kp_smp_rank(v, n, l) != kp_smp_leader(v, n) + l)
            return 0;
    return 1;
}

/* copy node n's blocks from the root's send buffer to buf at base + l * m
 * (local-index order), one copy per run of consecutive ranks, leaving out
 * the root's own block */
static void pack_node(kp_sched *s, const kp_smp *v, int n, int buf, int64_t base)
{
    const int64_t m = s->bytes;
    for (int lo = 0, hi; lo < kp_smp_size(v, n); lo = hi) {
        const int r0 = kp_smp_rank(v, n, lo);
        for (hi = lo + 1; hi < kp_smp_size(v, n) && r0 != s->root && kp_smp_rank(v, n, hi) == r0 + (hi - lo) &&
                          kp_smp_rank(v, n, hi) != s->root;
             hi++)
            ;
        if (r0 != s->root)
            kp_sched_copy(s, KP_BUF_SEND, (int64_t)r0 * m, buf, base + (int64_t)lo * m, (int64_t)(hi - lo) * m);
    }
}

/* the master's post 1: the node's blocks are in place (in its line: inl) */
static void publish(kp_sched *s, int inl)
{
    if (inl)
        kp_sched_post_line(s);
    else
        kp_sched_post(s);
}

int kp_scatter_smp_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int me = s->rank, root = s->root;
    const int64_t m = s->bytes;
    if (root < 0 || root >= s->P)
        return kp_sched_refuse(s, KP_ERR_ARG, "scatter smp: root %d is not a rank of 0..%d", root, s->P - 1);
    if (kp_smp_validate(s, "scatter smp"))
        return s->err;
    if (m == 0)
        return kp_sched_finish(s);
    const kp_smp v = kp_smp_view(s);
    const int N = kp_smp_nnodes(&v), x = kp_smp_node_of(&v, me), ns = kp_smp_size(&v, x);
    const int rnode = kp_smp_node_of(&v, root), master = x == rnode ? root : kp_smp_leader(&v, x);
    /* the node's blocks: in the master's flag line when they fit (a mate gets
     * flag and block with one transfer), else in the segment */
    const int inl = ns > 1 && (int64_t)ns * m <= KP_LINE - 8;
    const int area = inl ? KP_BUF_LINE : KP_BUF_SHM;
    const int64_t base = inl ? (int64_t)kp_smp_local(&v, master) * KP_LINE + 8 : 0;
    if (ns > 1 && !inl)
        kp_sched_need_shm(s, (int64_t)ns * m);

    if (me != master) { /* entered; wait for the node's blocks; mine out */
        kp_sched_post(s);
        if (inl)
            kp_sched_wait_line(s, master, 1);
        else
            kp_sched_wait(s, master, 1);
        kp_sched_next_round(s);
        kp_sched_copy(s, area, base + (int64_t)kp_smp_local(&v, me) * m, KP_BUF_RECV, 0, m);
        kp_smp_wait_node(s, &v, x, 1, master); /* the fence: every node-mate has entered */
        return kp_sched_finish(s);
    }
    if (me != root) { /* a leader: the node's blocks from the root */
        kp_sched_recv(s, root, ns > 1 ? area : KP_BUF_RECV, base, (int64_t)ns * m);
        kp_sched_next_round(s);
        if (ns > 1) {
            publish(s, inl);
            kp_sched_copy(s, area, base, KP_BUF_RECV, 0, m);
            kp_smp_wait_node(s, &v, x, 1, -1);
        }
        return kp_sched_finish(s);
    }

    /* the root: its node through the segment, one message per other node */
    if (!s->inplace)
        kp_sched_copy(s, KP_BUF_SEND, (int64_t)root * m, KP_BUF_RECV, 0, m);
    if (ns > 1)
        pack_node(s, &v, x, area, base);
    int64_t scratch = 0;
    for (int n = 0; n < N; n++) {
        const int64_t len = (int64_t)kp_smp_size(&v, n) * m;
        if (n == x)
            continue;
        if (consecutive(&v, n)) {
            kp_sched_send(s, kp_smp_leader(&v, n), KP_BUF_SEND, (int64_t)kp_smp_leader(&v, n) * m, len);
        } else {
            pack_node(s, &v, n, KP_BUF_SCRATCH, scratch);
            scratch += len;
        }
    }
    kp_sched_need_scratch(s, scratch);
    kp_sched_next_round(s);
    if (ns > 1)
        publish(s, inl);
    for (int n = 0, off = 0; n < N; n++)
        if (n != x && !consecutive(&v, n)) {
            const int64_t len = (int64_t)kp_smp_size(&v, n) * m;
            kp_sched_send(s, kp_smp_leader(&v, n), KP_BUF_SCRATCH, (int64_t)off * m, len);
            off += kp_smp_size(&v, n);
        }
    if (ns > 1)
        kp_smp_wait_node(s, &v, x, 1, -1);
    return kp_sched_finish(s);
}
