/*
 * Rabenseifner's allreduce: reduce-scatter by recursive halving, then an
 * all-gather by k-port Bruck (any P; k = 1 is the classic recursive-doubling
 * all-gather's cost with Bruck's peers).
 *
 * Fold in (any P): Q = the largest power of two <= P; the ranks are cut
 * into Q contiguous segments of 1 or 2 ranks (peers_kport.h's kp_se_* with
 * k = 1) whose second rank sends its vector to the first, the leader, which
 * combines them; at the end the leader sends it the result.
 * Reduce-scatter among the Q leaders: the vector is cut into Q pieces of
 * whole elements (kp_ar_cut); leader q starts with pieces [0, Q) and in the
 * step of distance d = Q/2, Q/4, ..., 1 swaps half of its range with leader
 * q XOR d: it keeps the lower half if its bit d is clear, sends the other
 * half and receives the partner's partial of the kept half into scratch,
 * then combines (lower leader's partial (op) upper's) into the receive
 * buffer. After log2 Q steps leader q holds piece q reduced over all ranks.
 * All-gather among the leaders, k-port Bruck on pieces placed straight in
 * the receive buffer: before step i leader q holds pieces q .. q+h-1
 * (mod Q), h = min((k+1)^i, Q); on port j it sends the first
 * min(h, Q - j h) of them to leader q - j h and receives as many from
 * leader q + j h into their places. A cyclic range of pieces is at most two
 * contiguous regions of the vector, so each port carries at most two
 * messages, and no rotation is needed (as smp_bruck's all-gather).
 *
 * Every piece is combined at one leader only and then copied, so every rank
 * gets bitwise the same vector. The halving joins leaders q and q XOR d
 * at distance d = Q/2 first, so a piece's combine order is not rank order
 * (piece of 4 leaders: ((x0 x2) (x1 x3))): non-commutative operations are
 * refused (KP_ERR_UNSUPPORTED).
 *
 * Paper: R. Rabenseifner, "Optimization of collective reduction operations",
 * ICCS 2004; R. Thakur, R. Rabenseifner and W. Gropp, IJHPCA 19(1), 2005,
 * section 4.6; the all-gather: J. Bruck et al., IEEE TPDS 8(11), 1997 and
 * Y. Qian and A. Afsahi, ICPP 2007 (k-port). For large vectors.
 *
 * Cost (Hockney, k-port; n = vector bytes, gamma = combine time per byte,
 * Q = 2^s): reduce-scatter s ts + (Q-1)/Q n (tau + gamma); all-gather
 * ceil(log_{k+1} Q) ts + about (Q-1)/(k Q) n tau (the partial last step
 * moves min(h, Q - h) pieces per port); P != Q adds 2 (ts + n tau) + n gamma.
 * Memory: scratch of n/2 bytes (rounded up to an element), n when a segment
 * has two ranks (the folded vector). Restrictions: commutative operations
 * only. Parameters: k (ports of the all-gather, >= 1; default 1).
 *
 * Example, P = 4, k = 1, pieces A B C D (x_i^A: rank i's piece A):
 *   halve d = 2  0 <-> 2: 0 keeps A B, 2 keeps C D; 1 <-> 3: 1 A B, 3 C D
 *                0: A = (A0 A2), B = (B0 B2); 1: (A1 A3), (B1 B3); ...
 *   halve d = 1  0 <-> 1: 0: A = ((A0 A2) (A1 A3)); 1: B; 2: C; 3: D
 *   Bruck i = 0  q sends piece q to q - 1, gets q + 1: 0 holds A B, 3 holds D A
 *   Bruck i = 1  q sends its 2 pieces to q - 2: everyone holds A B C D
 */
#include "algo/allreduce/ar_common.h"

/* send (or receive) pieces [a, a + cnt) (mod Q) of the vector at out */
static void xfer_pieces(kp_sched *s, int send, int peer, kp_ar_at out, int Q, int a, int cnt)
{
    const int64_t n = s->bytes;
    const int end = a + cnt;
    const int64_t lo[2] = {kp_ar_cut(s, n, Q, a), 0};
    const int64_t hi[2] = {kp_ar_cut(s, n, Q, end < Q ? end : Q), end > Q ? kp_ar_cut(s, n, Q, end - Q) : 0};
    for (int x = 0; x < 2; x++) {
        if (send)
            kp_sched_send(s, peer, out.buf, out.off + lo[x], hi[x] - lo[x]);
        else
            kp_sched_recv(s, peer, out.buf, out.off + lo[x], hi[x] - lo[x]);
    }
}

int kp_allreduce_rabenseifner_build(kp_sched *s, const kp_params *prm)
{
    const int k = prm->k;
    int rc;
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "rabenseifner: k = %d ports; k must be >= 1", k);
    if (kp_ar_begin(s, "rabenseifner", 1, &rc))
        return rc;
    const int64_t n = s->bytes;
    const kp_ar_group g = kp_ar_flat(s);
    const kp_ar_at out = {KP_BUF_RECV, 0}, sc = {KP_BUF_SCRATCH, 0};
    kp_ar_at cur;
    int q;
    if (!kp_ar_fold_in(s, &g, 1, (kp_ar_at){KP_BUF_SEND, 0}, out, 0, &cur, &q))
        return kp_sched_finish(s);
    const int Q = kp_se_nleaders(s->P, 1);
    const int R = Q;
#define LEADER(x) kp_ar_rank(&g, kp_se_seg_start(s->P, R, (x)))
    /* reduce-scatter by recursive halving */
    int lo = 0, hi = Q;
    for (int d = Q / 2; d >= 1; d /= 2) {
        const int mid = lo + d, upper = (q & d) != 0, partner = q ^ d;
        const int klo = upper ? mid : lo, khi = upper ? hi : mid; /* kept */
        const int slo = upper ? lo : mid, shi = upper ? mid : hi; /* sent */
        const int64_t koff = kp_ar_cut(s, n, Q, klo), klen = kp_ar_cut(s, n, Q, khi) - koff;
        const int64_t soff = kp_ar_cut(s, n, Q, slo), slen = kp_ar_cut(s, n, Q, shi) - soff;
        kp_sched_need_scratch(s, klen);
        kp_sched_send(s, LEADER(partner), cur.buf, cur.off + soff, slen);
        kp_sched_recv(s, LEADER(partner), sc.buf, sc.off, klen);
        kp_sched_next_round(s);
        if (upper) /* the partner's leaders are lower: its partial is the left operand */
            kp_sched_reduce(s, sc.buf, sc.off, cur.buf, cur.off + koff, out.buf, out.off + koff, klen);
        else
            kp_sched_reduce(s, cur.buf, cur.off + koff, sc.buf, sc.off, out.buf, out.off + koff, klen);
        kp_sched_next_round(s);
        cur = out;
        lo = klo;
        hi = khi;
    }
    /* all-gather by k-port Bruck, pieces in place */
    const int nsteps = kp_bruck_nsteps(Q, k);
    for (int i = 0; i < nsteps; i++) {
        const int h = kp_bruck_held(Q, k, i);
        int cnt;
        for (int j = 1; j <= k && (cnt = kp_bruck_count(Q, k, i, j)) > 0; j++) {
            const int from = kp_bruck_recv_peer(q, Q, k, i, j);
            xfer_pieces(s, 1, LEADER(kp_bruck_send_peer(q, Q, k, i, j)), out, Q, q, cnt);
            xfer_pieces(s, 0, LEADER(from), out, Q, kp_mod((int64_t)q + (int64_t)j * h, Q), cnt);
        }
        kp_sched_next_round(s);
    }
#undef LEADER
    kp_ar_fold_out(s, &g, 1, out);
    return kp_sched_finish(s);
}
