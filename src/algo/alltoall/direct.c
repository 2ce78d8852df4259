/*
 * k-port Direct all-to-all.
 *
 * Every rank sends each of its P-1 outgoing blocks straight to its
 * destination, k at a time: in round i rank p sends send block p + d to rank
 * p + d and receives rank p - d's block p into receive block p - d, for
 * d = i*k + 1, ..., i*k + k (all mod P, d <= P-1). The last round has fewer
 * ports busy when k does not divide P - 1. The own block is copied into
 * place in round 0. k = 1 is the pairwise exchange (shift pattern).
 *
 * MPI_IN_PLACE (the send buffer is the receive buffer): the shift pattern
 * would overwrite receive block p - d before sending it on (to rank p - d,
 * later, as distance P - d). So in place the rounds use the exchange
 * pairing instead (kp_a2a_swap_* in peers_coll.h: XOR for powers of two,
 * the circle-method 1-factorisation otherwise), in which every meeting is a
 * swap with one partner q: receive block q goes to q while q's block for p
 * arrives. Round i runs p's meetings e = i*k .. i*k + k - 1; arrivals land
 * in scratch slots (two sets of k, alternating by round) and are copied into
 * their receive blocks during the next round, when the blocks they replace
 * have been sent; one last local round places the final arrivals. No region
 * is read and written in one round, and every block is sent before it is
 * overwritten. The own block stays where it is.
 *
 * Paper: Y. Qian and A. Afsahi, journal version of "RDMA-based and
 * SMP-aware multi-port all-gather on multi-rail QsNetII SMP clusters"
 * (multi-port Direct gather and all-to-all; papers/001), after the k-port
 * Direct all-gather of the ICPP 2007 paper, section 6.1.1. For medium to
 * large messages.
 *
 * Cost (Hockney, k-port; m = bytes per block):
 *   T = ceil((P-1)/k) * (ts + m * tau)
 * each round moves one block per port; plus a local copy of m bytes (own
 * block) or, under MPI_IN_PLACE, (P-1) * m bytes of scratch-to-buffer copies
 * overlapped with the next round (one extra local round at the end).
 * Memory: no scratch; MPI_IN_PLACE: min(2k, P-1) * m bytes.
 * Restrictions: none (any P >= 1, any k >= 1; k >= P-1 finishes in one
 * round). Parameters: k (ports, >= 1; default 2).
 *
 * Example, P = 5, k = 2 (2 rounds), not in place; rank 0:
 *   round 0  sends block 1 to 1, block 2 to 2; receives from 4 and 3
 *   round 1  sends block 3 to 3, block 4 to 4; receives from 2 and 1
 *   (rank p does the same shifted by p: in round 0 rank 3 sends to 4 and 0)
 * In place, P = 5 (circle method, partner (t - p) mod 5, p idle when
 * 2p = t), k = 2; rank 0 meets 1 (t = 1), 2 (t = 2), 3 (t = 3), 4 (t = 4):
 *   round 0  swap with 1 and 2, arrivals -> scratch 0, 1
 *   round 1  swap with 3 and 4, arrivals -> scratch 2, 3;
 *            scratch 0, 1 -> receive blocks 1, 2
 *   round 2  scratch 2, 3 -> receive blocks 3, 4
 *
 * Peer arithmetic: kp_a2a_shift_* and kp_a2a_swap_* in algo/peers_coll.h,
 * tested exhaustively by tests/unit/test_peers_alltoall.c.
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "kport.h"

int kp_a2a_shift_nrounds(int P, int k)
{
    if (P <= 1 || k < 1)
        return 0;
    return (int)(((int64_t)P - 1 + k - 1) / k);
}

int kp_a2a_shift_dist(int P, int k, int i, int j)
{
    const int64_t d = (int64_t)i * k + j;
    return (i < 0 || j < 1 || j > k || d >= P) ? 0 : (int)d;
}

int kp_a2a_shift_send_peer(int p, int P, int k, int i, int j)
{
    const int d = kp_a2a_shift_dist(P, k, i, j);
    return d ? kp_mod((int64_t)p + d, P) : -1;
}

int kp_a2a_shift_recv_peer(int p, int P, int k, int i, int j)
{
    const int d = kp_a2a_shift_dist(P, k, i, j);
    return d ? kp_mod((int64_t)p - d, P) : -1;
}

/* MPI_IN_PLACE: p's P-1 swaps, k per round, arrivals staged in scratch */
static int inplace_rounds(kp_sched *s, int k)
{
    const int P = s->P, p = s->rank;
    const int64_t m = s->bytes;
    const int nmeet = P - 1;

    kp_sched_need_scratch(s, (int64_t)kp_a2a_swap_nslots(P, k) * m);
    /* round r: meetings [r*k, r*k + k) start, meetings [(r-1)*k, r*k) are placed */
    for (int64_t first = 0; first - k < nmeet; first += k) {
        for (int64_t e = first; e < first + k && e < nmeet; e++) {
            const int q = kp_a2a_swap_partner(p, P, (int)e);
            kp_sched_send(s, q, KP_BUF_SEND, (int64_t)q * m, m);
            kp_sched_recv(s, q, KP_BUF_SCRATCH, (int64_t)kp_a2a_swap_slot(P, k, (int)e) * m, m);
        }
        for (int64_t e = first - k > 0 ? first - k : 0; e < first && e < nmeet; e++) {
            const int q = kp_a2a_swap_partner(p, P, (int)e);
            kp_sched_copy(s, KP_BUF_SCRATCH, (int64_t)kp_a2a_swap_slot(P, k, (int)e) * m, KP_BUF_RECV,
                          (int64_t)q * m, m);
        }
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}

int kp_alltoall_direct_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank, k = prm->k;
    const int64_t m = s->bytes;

    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "alltoall direct: k = %d ports; k must be >= 1", k);
    if (s->inplace)
        return inplace_rounds(s, k);

    kp_sched_copy(s, KP_BUF_SEND, (int64_t)p * m, KP_BUF_RECV, (int64_t)p * m, m);
    for (int i = 0; i < kp_a2a_shift_nrounds(P, k); i++) {
        for (int j = 1; j <= k && kp_a2a_shift_dist(P, k, i, j); j++) {
            const int to = kp_a2a_shift_send_peer(p, P, k, i, j), from = kp_a2a_shift_recv_peer(p, P, k, i, j);
            kp_sched_send(s, to, KP_BUF_SEND, (int64_t)to * m, m);
            kp_sched_recv(s, from, KP_BUF_RECV, (int64_t)from * m, m);
        }
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
