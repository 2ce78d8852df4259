/*
 * Scatter + all-gather broadcast with k-port Bruck (van de Geijn; for long
 * messages).
 *
 * The message is cut into P pieces, piece i at offset floor(i m / P) of the
 * receive buffer (lengths differ by at most one byte; with m < P some are
 * empty and carry no message). Ranks are renumbered relative to the root,
 * rel = (p - root) mod P, and rel owns piece rel.
 *  1. Scatter down the binomial tree (kp_knom_* with k = 1): rel receives
 *     the pieces of its subtree [rel, rel + subtree) from its parent in one
 *     message (they are contiguous in the buffer: pieces are numbered
 *     relative to the root), then sends each child c its subtree's pieces,
 *     largest subtree first, one child per round.
 *  2. All-gather of the pieces with k-port Bruck on relative ranks
 *     (allgather/bruck.c, peers_kport.h): before step i rel holds pieces
 *     rel .. rel + h - 1 (mod P), h = min((k+1)^i, P); on port j it sends the
 *     first min(h, P - j h) of them to rel - j h and receives as many, the
 *     pieces from rel + j h on, from rel + j h. A cyclic range of pieces is
 *     at most two regions of the buffer, and every piece lands at its own
 *     offset: no scratch and no rotation. Pieces a receiver q already holds
 *     from the scatter (its subtree [q, q + subtree(q))) are left out of the
 *     message: they are always a prefix of the range sent to it, so sender
 *     and receiver trim the same prefix (the root receives nothing at all).
 *
 * Paper: M. Barnett, S. Gupta, D. Payne, L. Shuler, R. van de Geijn and
 * J. Watts, "Interprocessor collective communication library (InterCom)",
 * SHPCC 1994; E. Chan et al., CCPE 19(13), 2007 (section 5: scatter +
 * all-gather broadcast); the all-gather is the k-port Bruck of Y. Qian and
 * A. Afsahi, ICPP 2007, section 6.1.3. MPICH's MPIR_Bcast_intra_scatter_
 * recursive_doubling_allgather is the same with recursive doubling.
 *
 * Cost (Hockney, k-port; m = bytes): with s = ceil(log_{k+1} P),
 *   T = ceil(log2 P) ts + (P-1)/P m tau          (scatter, root's path)
 *     + s ts + (P-1)/(kP) m tau  (about)          (Bruck all-gather)
 * against ceil(log2 P) (ts + m tau) for the binomial tree: better once m is
 * large enough that m tau dominates ts.
 * Memory: none. Restrictions: none (any P >= 1, any root, any m >= 1).
 * Parameters: k (Bruck ports, >= 1; default 1: plain Bruck, the pieces of a
 * long message share one link anyway).
 *
 * Example, P = 5, root 0, k = 1, m = 10 (pieces of 2 bytes):
 *   scatter  0 -> 4: piece 4; 0 -> 2: pieces 2,3; 0 -> 1: piece 1; 2 -> 3: piece 3
 *            holds 0:{all} 1:{1} 2:{2,3} 3:{3} 4:{4}
 *   bruck 0  (h = 1) rel sends piece rel to rel - 1: 1 -> 0 trimmed (root),
 *            2 -> 1 piece 2, 3 -> 2 trimmed (2 holds 3), 4 -> 3, 0 -> 4 piece 0
 *   bruck 1  (h = 2) pieces rel, rel+1 to rel - 2: 3 -> 1 pieces 3,4; 4 -> 2
 *            pieces 4,0; 0 -> 3 pieces 0,1; 1 -> 4 pieces 1,2; 2 -> 0 trimmed
 *   bruck 2  (h = 4, partial) one piece rel + 4 from rel + 4 ... everyone holds all.
 */
#include "algo/allgather/peers_kport.h"
#include "algo/bcast/bcast_common.h"

int64_t kp_piece_off(int64_t bytes, int P, int i)
{
    if (P <= 0)
        return 0;
    /* floor(i m / P) without overflow: i (m div P) + floor(i (m mod P) / P) */
    return (int64_t)i * (bytes / P) + (int64_t)i * (bytes % P) / P;
}

/* send (or receive) pieces [a, a + cnt) (mod P) to (from) rank peer: one
 * message per region of the buffer (two when the range wraps) */
void kp_bcast_pieces_xfer(kp_sched *s, int send, int peer, int a, int cnt)
{
    const int P = s->P;
    a = kp_mod(a, P);
    const int end = a + cnt;
    const int64_t m = s->bytes;
    const int64_t lo[2] = {kp_piece_off(m, P, a), 0};
    const int64_t hi[2] = {kp_piece_off(m, P, end < P ? end : P), end > P ? kp_piece_off(m, P, end - P) : 0};
    for (int x = 0; x < 2; x++) {
        if (send)
            kp_sched_send(s, peer, KP_BUF_RECV, lo[x], hi[x] - lo[x]);
        else
            kp_sched_recv(s, peer, KP_BUF_RECV, lo[x], hi[x] - lo[x]);
    }
}

void kp_bcast_scatter_pieces(kp_sched *s)
{
    const int P = s->P, root = s->root, rel = kp_mod((int64_t)s->rank - root, P);
    if (rel > 0) {
        kp_bcast_pieces_xfer(s, 0, kp_mod((int64_t)kp_knom_parent(rel, P, 1) + root, P), rel,
                             kp_knom_subtree(rel, P, 1));
        kp_sched_next_round(s);
    }
    for (int j = kp_knom_level(rel, P, 1) - 1, c; j >= 0; j--)
        if ((c = kp_knom_child(rel, P, 1, j, 1)) >= 0) {
            kp_bcast_pieces_xfer(s, 1, kp_mod((int64_t)c + root, P), c, kp_knom_subtree(c, P, 1));
            kp_sched_next_round(s);
        }
}

int kp_bcast_pieces_known(int q, int P, int a, int cnt)
{
    const int held = kp_knom_subtree(q, P, 1), from = kp_mod((int64_t)a - q, P);
    if (from >= held)
        return 0;
    return held - from < cnt ? held - from : cnt;
}

int kp_bcast_scatter_allgather_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, root = s->root, k = prm->k;
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "bcast scatter_allgather: k = %d; k must be >= 1", k);
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "bcast scatter_allgather: root %d is not a rank of 0..%d", root,
                               P - 1);
    if (P == 1 || s->bytes == 0)
        return kp_sched_finish(s);
    const int rel = kp_mod((int64_t)s->rank - root, P);
    kp_bcast_scatter_pieces(s);
    for (int i = 0, n = kp_bruck_nsteps(P, k); i < n; i++) {
        int cnt;
        for (int j = 1; j <= k && (cnt = kp_bruck_count(P, k, i, j)) > 0; j++) {
            const int to = kp_bruck_send_peer(rel, P, k, i, j), from = kp_bruck_recv_peer(rel, P, k, i, j);
            const int skip_to = kp_bcast_pieces_known(to, P, rel, cnt);
            const int skip_from = kp_bcast_pieces_known(rel, P, from, cnt);
            kp_bcast_pieces_xfer(s, 1, kp_mod((int64_t)to + root, P), rel + skip_to, cnt - skip_to);
            kp_bcast_pieces_xfer(s, 0, kp_mod((int64_t)from + root, P), from + skip_from, cnt - skip_from);
        }
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
