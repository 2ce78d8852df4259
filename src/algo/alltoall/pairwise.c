/*
 * Pairwise-exchange all-to-all (baseline).
 *
 * P-1 steps, one message out and one in per step; the own block is copied
 * locally in step 0. The pairing depends on P, as in MPICH:
 *  - P a power of two: in step t rank p swaps with q = p XOR (t + 1): it
 *    sends send block q to q and receives q's block p into receive block q.
 *    Sender and receiver are the same rank, so a step is one bidirectional
 *    exchange.
 *  - otherwise the shift pattern (Open MPI's pairwise): in step s = 1..P-1
 *    rank p sends send block (p + s) mod P to rank p + s and receives rank
 *    p - s's block p into receive block (p - s) mod P.
 * Both send straight from the send buffer into the receive buffer.
 *
 * MPI_IN_PLACE (the send buffer is the receive buffer): the schedule is
 * Direct's in-place one with k = 1 (built by kp_alltoall_direct_build, see
 * direct.c): every step is a swap with a single partner q (XOR for powers of
 * two, the circle-method 1-factorisation otherwise; kp_a2a_swap_* in
 * peers_coll.h). Receive block q is sent to q in the step in which q's block
 * for p arrives, so the arrival goes to a scratch block and is copied into
 * receive block q during the next step; two scratch blocks alternate, and a
 * last local round places the final arrival. For odd P the circle method has
 * P steps in which every rank is idle once; a rank skips its idle step, so it
 * still makes P-1 exchanges.
 *
 * Cost (Hockney): T = (P-1) * (ts + m * tau), m = bytes per block, plus a
 * local copy of m bytes (own block; under MPI_IN_PLACE instead (P-1) * m
 * bytes of scratch-to-buffer copies, overlapped with the next exchange).
 * Memory: no scratch; MPI_IN_PLACE: min(2, P-1) * m bytes.
 * Restrictions: none (any P >= 1). Parameters: none. Same data movement as
 * direct with k = 1 except for powers of two (XOR instead of shift).
 *
 * Example, P = 4 (power of two: partner p XOR (t+1)), not in place:
 *   step 0  0<->1  2<->3     e.g. rank 0 sends block 1 to 1, gets 1's block 0
 *   step 1  0<->2  1<->3
 *   step 2  0<->3  1<->2     every rank has received from every other rank
 * Example, P = 3, shift: step 1: 0->1 1->2 2->0; step 2: 0->2 1->0 2->1.
 * Example, P = 3, in place (circle method, partner (t - p) mod 3):
 *   t = 0: 1<->2, 0 idle   t = 1: 0<->1, 2 idle   t = 2: 0<->2, 1 idle
 *   rank 0: round 0 swaps with 1 (arrival -> scratch 0); round 1 swaps with
 *   2 (arrival -> scratch 1) and copies scratch 0 to block 1; round 2
 *   copies scratch 1 to block 2.
 *
 * Peer arithmetic: kp_a2a_swap_* and kp_a2a_shift_* in algo/peers_coll.h,
 * tested exhaustively by tests/unit/test_peers_alltoall.c.
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "kport.h"

int kp_a2a_swap_nsteps(int P)
{
    if (P <= 1)
        return 0;
    return P % 2 == 0 ? P - 1 : P; /* powers of two are even */
}

int kp_a2a_swap_peer(int p, int P, int t)
{
    if (P <= 1 || p < 0 || p >= P || t < 0 || t >= kp_a2a_swap_nsteps(P))
        return -1;
    if (kp_is_pow2(P))
        return p ^ (t + 1);
    if (P % 2 == 1) { /* circle on P ranks: the rank meeting itself is idle */
        int q = kp_mod((int64_t)t - p, P);
        return q == p ? -1 : q;
    }
    const int M = P - 1; /* odd: circle on ranks 0..M-1, rank M fills in */
    if (p == M)
        return kp_mod((int64_t)t * (P / 2), M); /* the q with 2q = t (mod M) */
    int q = kp_mod((int64_t)t - p, M);
    return q == p ? M : q;
}

int kp_a2a_swap_step(int p, int P, int e)
{
    if (P <= 1 || p < 0 || p >= P || e < 0 || e > P - 2)
        return -1;
    if (kp_a2a_swap_nsteps(P) == P - 1) /* nobody is ever idle */
        return e;
    const int idle = kp_mod(2 * (int64_t)p, P);
    return e < idle ? e : e + 1;
}

int kp_a2a_swap_partner(int p, int P, int e)
{
    const int t = kp_a2a_swap_step(p, P, e);
    return t < 0 ? -1 : kp_a2a_swap_peer(p, P, t);
}

int kp_a2a_swap_slot(int P, int k, int e)
{
    if (P <= 1 || k < 1 || e < 0 || e > P - 2)
        return -1;
    return (e / k) % 2 * k + e % k; /* a second set only exists if k < P - 1 */
}

int kp_a2a_swap_nslots(int P, int k)
{
    if (P <= 1 || k < 1)
        return 0;
    if (k >= P - 1) /* one round: one set of P-1 slots */
        return P - 1;
    return 2 * k < P - 1 ? 2 * k : P - 1;
}

int kp_alltoall_pairwise_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, p = s->rank;
    const int64_t m = s->bytes;
    const int swap = kp_is_pow2(P); /* XOR pairing */

    if (s->inplace) /* the swap schedule with scratch staging, see direct.c */
        return kp_alltoall_direct_build(s, &(kp_params){.k = 1});
    kp_sched_copy(s, KP_BUF_SEND, (int64_t)p * m, KP_BUF_RECV, (int64_t)p * m, m);
    for (int e = 0; e < P - 1; e++) {
        const int to = swap ? kp_a2a_swap_partner(p, P, e) : kp_a2a_shift_send_peer(p, P, 1, e, 1);
        const int from = swap ? to : kp_a2a_shift_recv_peer(p, P, 1, e, 1);
        kp_sched_send(s, to, KP_BUF_SEND, (int64_t)to * m, m);
        kp_sched_recv(s, from, KP_BUF_RECV, (int64_t)from * m, m);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
