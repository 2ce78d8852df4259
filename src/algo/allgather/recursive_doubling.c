/*
 * Recursive-doubling all-gather (pairwise exchange; baseline).
 *
 * Let Q be the largest power of two <= P and r = P - Q. Ranks Q..P-1 are
 * "extra": each first sends its block to its partner p - Q (pre-step). The
 * Q remaining ranks then do log2(Q) pairwise exchanges: in step i rank p
 * swaps everything it holds with p XOR 2^i. Rank q < r holds, besides the
 * blocks of its aligned range [base, base + 2^i), the blocks of the extra
 * ranks base+Q .. base+2^i+Q-1 below P; that is at most two contiguous
 * ranges, sent as two messages. Finally (post-step) rank q < r sends the
 * whole result to its extra partner q + Q.
 *
 * The first exchange sends the own block from the send buffer and copies
 * it into the receive buffer in the same round (extra ranks send it from
 * the send buffer and skip the copy: the result brings it back). Sending
 * it from the receive buffer right after copying it there cost at P = 2
 * 1.3-1.4x what ring and direct take for the same one exchange at 8-64
 * KiB (64 KiB: 8.7-9.3 against 6.4-6.5 us).
 *
 * Cost (Hockney): power-of-two P: T = log2(P) * ts + (P-1) * m * tau.
 * Otherwise two more steps: + ts + m*tau (pre) + ts + P*m*tau (post).
 * Memory: no scratch. Restrictions: none (any P >= 1). Parameters: none.
 *
 * Example, P = 4:  step 0: 0<->1, 2<->3  -> 0:{0,1} 2:{2,3}
 *                  step 1: 0<->2, 1<->3  -> everyone {0,1,2,3}
 */
#include "algo/algo.h"

/* the blocks a non-extra rank holds before step i: [base, base + 2^i) plus
 * their extra partners; emit them as send (dir 0) or receive (dir 1) ops */
static void rd_ranges(kp_sched *s, int peer, int base, int width, int Q, int dir)
{
    const int P = s->P;
    const int64_t m = s->bytes;
    int lo[2] = {base, base + Q};
    int hi[2] = {base + width, base + width + Q};
    if (hi[1] > P)
        hi[1] = P;
    for (int j = 0; j < 2; j++) {
        if (hi[j] <= lo[j])
            continue;
        if (dir == 0 && j == 0 && width == 1) /* the own block alone: from the send buffer (see below) */
            kp_sched_send(s, peer, KP_BUF_SEND, 0, m);
        else if (dir == 0)
            kp_sched_send(s, peer, KP_BUF_RECV, (int64_t)lo[j] * m, (int64_t)(hi[j] - lo[j]) * m);
        else
            kp_sched_recv(s, peer, KP_BUF_RECV, (int64_t)lo[j] * m, (int64_t)(hi[j] - lo[j]) * m);
    }
}

int kp_allgather_recursive_doubling_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, p = s->rank;
    const int64_t m = s->bytes;
    const int Q = (int)kp_ipow(2, kp_ilog(P, 2));
    const int r = P - Q;

    if (p >= Q) { /* extra rank: hand over the block, wait for the result (which holds it too) */
        kp_sched_send(s, p - Q, KP_BUF_SEND, 0, m);
        kp_sched_next_round(s);
        kp_sched_recv(s, p - Q, KP_BUF_RECV, 0, (int64_t)P * m);
        return kp_sched_finish(s);
    }
    if (p < r) { /* the extra partner's block arrives while the own block is copied */
        kp_sched_recv(s, p + Q, KP_BUF_RECV, (int64_t)(p + Q) * m, m);
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
        kp_sched_next_round(s);
    }
    for (int w = 1; w < Q; w <<= 1) {
        int peer = p ^ w;
        rd_ranges(s, peer, p & ~(w - 1), w, Q, 0);
        rd_ranges(s, peer, peer & ~(w - 1), w, Q, 1);
        if (w == 1 && p >= r) /* the own block's copy overlaps the first exchange */
            kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
        kp_sched_next_round(s);
    }
    if (Q == 1) /* P = 1: the copy is all */
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
    if (p < r)
        kp_sched_send(s, p + Q, KP_BUF_RECV, 0, (int64_t)P * m);
    return kp_sched_finish(s);
}
