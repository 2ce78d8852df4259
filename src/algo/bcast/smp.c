/*
 * SMP-aware broadcast: a k-nomial tree among the nodes' masters, and a
 * shared-memory broadcast inside every node, pipelined in chunks.
 *
 * Every node has a master: the root on the root's node (which need not be
 * that node's leader), the leader (lowest rank) elsewhere. The masters form
 * the k-nomial tree of knomial.c over the N nodes, numbered relative to the
 * root's node: node n's parent is the master of node (rnode + parent(rel))
 * mod N, with rel = (n - rnode) mod N. The message is cut into chunks; the
 * root sends chunk i to its child masters straight from its receive buffer
 * and copies it into its node's segment; any other master receives chunk i
 * from its parent straight into its node's segment, then (one round later,
 * while chunk i + 1 arrives) posts it for its node, forwards it to its
 * children from the segment and copies it to its own receive buffer. The
 * other ranks of a node copy each chunk out of the segment as soon as the
 * master's post says it is there, so the node broadcast runs behind the
 * leaders' receive instead of after it. A master alone on its node receives
 * into its receive buffer and forwards from there (no shared memory);
 * messages of at most KP_LINE - 8 bytes ride in the master's flag line. The
 * segment ring, posts, waits and node fence: algo/bcast/bcast_common.h.
 * A master sends a chunk to all its children at once, the highest level
 * (largest subtree) first.
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007, sections 5 and
 * 6.2 (the per-node shared buffer and the root's node handled by the root
 * itself), with the leaders' k-nomial tree of J. Bruck et al., IEEE TPDS
 * 7(3), 1996, and the pipelined node broadcast of MPICH's release_gather.
 *
 * Cost (Hockney; m = bytes, ch = chunk, nch = ceil(m / ch), N nodes,
 * L = ceil(log_{k+1} N) levels, tc = copy time per byte, sync = one
 * post/wait): the last node's master gets chunk nch - 1 after
 *   (L + nch - 1) * (ts + k' ch tau)   with k' = the children a master
 *   serves per chunk (at most k L); its node's ranks finish sync + ch tc later.
 * The root's node costs m tc + sync at the root (copy-in, overlapped with
 * its sends).
 * Memory: shared min(nch, 8) * ch bytes per node with more than one rank;
 * no scratch. Restrictions: none (any P, any layout, any root, any k >= 1;
 * no layout: every rank its own node, and this is the k-nomial broadcast
 * pipelined in chunks). Parameters: k (children per level among the
 * masters, default 2), chunk_kb (0: automatic, kp_bcast_node_chunk in
 * shm_flat.c: whole message up to 32 KiB, else 32 KiB chunks).
 *
 * Example, P = 8 on N = 4 nodes {0,1} {2,3} {4,5} {6,7}, root 3, k = 1,
 * m = 8 B (one chunk, in the flag lines): masters 3 (the root), 0, 4, 6;
 * node rel = (n - 1) mod 4, and the binomial tree over rel is 0 -> 2,
 * 0 -> 1, 2 -> 3, i.e. node 1 -> node 3 and node 2, node 3 -> node 0:
 *   rank 3   round 0: send to 6, send to 4, copy the message into its line
 *            round 1: post_line 1; wait for rank 2's post 1
 *   rank 6   round 0: receive from 3 into its line
 *            round 1: post_line 1, send (from the line) to 0, copy to recv;
 *                     wait for rank 7's post 1
 *   rank 4   the same, no children; rank 0 receives from 6
 *   ranks 2, 7, 5, 1: post 1 (entered); wait for the master's line post;
 *            copy the message out of the master's line.
 *
 * Tree arithmetic: kp_knom_* in peers_bcast.h; layout arithmetic in
 * algo/smp_common.h.
 */
#include "algo/bcast/bcast_common.h"

/* the master of node n: the root on its node, else the leader */
static int master_of(const kp_smp *v, int n, int root)
{
    return kp_smp_node_of(v, root) == n ? root : kp_smp_leader(v, n);
}

/* send chunk i (buffer buf at off) to every child master, highest level first */
static void send_children(kp_sched *s, const kp_smp *v, int k, int rel, int buf, int64_t off, int64_t len)
{
    const int N = kp_smp_nnodes(v), rnode = kp_smp_node_of(v, s->root);
    for (int j = kp_knom_level(rel, N, k) - 1; j >= 0; j--)
        for (int d = 1, c; d <= k && (c = kp_knom_child(rel, N, k, j, d)) >= 0; d++)
            kp_sched_send(s, master_of(v, kp_mod((int64_t)c + rnode, N), s->root), buf, off, len);
}

int kp_bcast_smp_build(kp_sched *s, const kp_params *prm)
{
    const int me = s->rank, root = s->root, k = prm->k;
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "bcast smp: k = %d; k must be >= 1", k);
    if (root < 0 || root >= s->P)
        return kp_sched_refuse(s, KP_ERR_ARG, "bcast smp: root %d is not a rank of 0..%d", root, s->P - 1);
    if (kp_smp_validate(s, "bcast smp"))
        return s->err;
    if (s->bytes == 0)
        return kp_sched_finish(s);
    const kp_smp v = kp_smp_view(s);
    const int N = kp_smp_nnodes(&v), x = kp_smp_node_of(&v, me), rnode = kp_smp_node_of(&v, root);
    const int master = master_of(&v, x, root), rel = kp_mod((int64_t)x - rnode, N);
    const kp_nbc b = kp_nbc_make(&v, master, s->bytes, kp_bcast_node_chunk(s->bytes, prm));
    kp_nbc_need(s, &b);
    if (me != master)
        return kp_nbc_reader(s, &v, &b);
    const int parent = rel > 0 ? master_of(&v, kp_mod((int64_t)kp_knom_parent(rel, N, k) + rnode, N), root) : -1;
    const int buf = kp_nbc_buf(&b);
    for (int i = 0; i <= b.c.nch; i++) {
        if (i < b.c.nch) {
            const int64_t off = kp_chunk_off(&b.c, i), len = kp_chunk_len(&b.c, i);
            if (me == root) { /* straight from the receive buffer; a copy for the node */
                send_children(s, &v, k, rel, KP_BUF_RECV, off, len);
                if (!b.direct)
                    kp_sched_copy(s, KP_BUF_RECV, off, buf, kp_nbc_off(&b, i), len);
            } else {
                kp_sched_recv(s, parent, buf, kp_nbc_off(&b, i), len);
            }
        }
        if (i >= 1) {
            kp_nbc_publish(s, &b);
            if (me != root) { /* chunk i - 1 arrived: forward it, keep a copy */
                const int64_t off = kp_chunk_off(&b.c, i - 1), len = kp_chunk_len(&b.c, i - 1);
                send_children(s, &v, k, rel, buf, kp_nbc_off(&b, i - 1), len);
                if (!b.direct)
                    kp_sched_copy(s, buf, kp_nbc_off(&b, i - 1), KP_BUF_RECV, off, len);
            }
        }
        kp_nbc_wait_slot(s, &v, &b, i);
        if (i == b.c.nch)
            kp_nbc_fence(s, &v, &b);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
