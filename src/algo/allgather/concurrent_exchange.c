/*
 * Concurrent-exchange all-gather (baseline, concurrency index C).
 *
 * Paper: "optimizing all-to-all collectives by exploiting network
 * concurrency (Infiniband, Quadrics)", the MPI_Allgather concurrent-exchange
 * paper (kport paper 004), section 3.1 "Concurrent Exchange
 * Algorithm-Baseline", Figures 2-3, Equation 3.
 *
 * The P ranks form C contiguous groups of G = P / C ranks: group g holds
 * ranks g*G .. g*G + G-1, and rank p = g*G + l has the peer h*G + l in every
 * other group h.
 *  - Pre-step (C > 1): every rank sends its own block to its C-1 peers and
 *    receives theirs, so it holds block h*G + l of every group h.
 *  - Steps i = 0 .. log2(G)-1, distance d = 2^i: rank p holds, of every
 *    group h, the aligned range of d blocks h*G + (l & ~(d-1)) ... It sends
 *    the range of its own group to its pair g*G + (l XOR d) and to the
 *    peer-of-pair h*G + (l XOR d) of every other group h; it receives the
 *    corresponding range h*G + ((l XOR d) & ~(d-1)) .. +d of group h from
 *    h*G + (l XOR d), for every h (its pair included). Its ranges double.
 * Every block reaches every rank exactly once: block h*G + j arrives at p in
 * the pre-step if j = l, else in the step of the highest bit of j XOR l.
 * Receives go straight into the receive buffer; the step-0 sends and the
 * pre-step read the own block from the send buffer, so MPI_IN_PLACE needs no
 * special case. The pre-step is a round of its own, as in the paper, so no
 * round has more than C sends in flight.
 *
 * Cost (Hockney, with C messages to distinct peers proceeding concurrently,
 * which is what the concurrency index assumes; m = bytes per block):
 *   C > 1:  T = (1 + log2(P/C)) * ts + (P/C) * m * tau
 *   C = 1:  T = log2(P) * ts + (P-1) * m * tau      (recursive doubling)
 * plus, per step, the paper's initiation cost of C-1 extra nonblocking sends.
 * Every rank sends (C-1) + C*log2(P/C) messages and (P-1)*m bytes (each
 * block once to each rank, no redundancy); with no concurrency at all the
 * messages serialise: T = (C-1 + C*log2(P/C)) * ts + (P-1) * m * tau.
 * Memory: no scratch.
 * Parameters: C (concurrency index, default 2 from the registry).
 * Restrictions: C >= 1 (else KP_ERR_PARAM); C divides P and P/C is a power
 * of two (else KP_ERR_UNSUPPORTED). C = 1 is recursive doubling on a
 * power-of-two P, C = P is the pre-step alone (a direct exchange). A C
 * larger than P never reaches this builder: the registry clamps it to P,
 * the largest value that applies (kp_algo_effective), so P = 1 runs C = 1
 * (a copy) and C = 8 on P = 2 or 3 ranks the direct exchange C = P. A C
 * within 1..P that does not divide P, or leaves P/C no power of two (C = 3
 * on 4 ranks, C = 2 on 6), is refused as given, never changed.
 *
 * Example, P = 8, C = 2 (groups {0,1,2,3} and {4,5,6,7}), held blocks:
 *   pre     0:{0,4}  1:{1,5}  2:{2,6}  3:{3,7}  (4..7 the same as 0..3)
 *   step 0  0 sends {0} to 1 and 5, gets {1} from 1 and {5} from 5
 *           0,1:{0,1,4,5}      2,3:{2,3,6,7}
 *   step 1  0 sends {0,1} to 2 and 6, gets {2,3} from 2 and {6,7} from 6
 *           everyone holds all eight
 */
#include "algo/algo.h"
#include "algo/allgather/peers_ce.h"
#include "kport.h"

int kp_ce_valid(int P, int C)
{
    return P >= 1 && C >= 1 && P % C == 0 && kp_is_pow2(P / C);
}

int kp_ce_group_size(int P, int C) { return P / C; }

int kp_ce_group(int p, int P, int C) { return p / kp_ce_group_size(P, C); }

int kp_ce_local(int p, int P, int C) { return p % kp_ce_group_size(P, C); }

int kp_ce_peer(int p, int h, int P, int C)
{
    return h * kp_ce_group_size(P, C) + kp_ce_local(p, P, C);
}

int kp_ce_nsteps(int P, int C) { return kp_ilog(kp_ce_group_size(P, C), 2); }

int kp_ce_peer_of_pair(int p, int h, int step, int P, int C)
{
    return h * kp_ce_group_size(P, C) + (kp_ce_local(p, P, C) ^ (1 << step));
}

int kp_ce_pair(int p, int step, int P, int C)
{
    return kp_ce_peer_of_pair(p, kp_ce_group(p, P, C), step, P, C);
}

int kp_ce_held_first(int p, int step, int P, int C)
{
    return kp_ce_local(p, P, C) & ~((1 << step) - 1);
}

int kp_allgather_concurrent_exchange_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank;
    const int64_t m = s->bytes;
    const int C = prm ? prm->C : 0;

    if (C < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM,
                               "concurrent_exchange: concurrency index C = %d, must be >= 1", C);
    if (!kp_ce_valid(P, C))
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "concurrent_exchange: P = %d ranks, C = %d: needs C to divide P "
                               "and P/C to be a power of two",
                               P, C);

    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
    const int g = kp_ce_group(p, P, C);
    if (C > 1) { /* pre-step: own block to the peer in every other group */
        for (int h = 0; h < C; h++) {
            if (h == g)
                continue;
            int peer = kp_ce_peer(p, h, P, C);
            kp_sched_send(s, peer, KP_BUF_SEND, 0, m);
            kp_sched_recv(s, peer, KP_BUF_RECV, (int64_t)peer * m, m);
        }
        kp_sched_next_round(s);
    }
    /* with C = 1 step 0 shares round 0 with the copy: both only read the
     * send buffer and the copy writes nothing the step touches */
    const int G = kp_ce_group_size(P, C), nsteps = kp_ce_nsteps(P, C);
    for (int i = 0; i < nsteps; i++) {
        const int d = 1 << i;
        const int mine = g * G + kp_ce_held_first(p, i, P, C);
        /* the own group's range to the pair and to every peer-of-pair */
        for (int h = 0; h < C; h++) {
            int q = kp_ce_peer_of_pair(p, h, i, P, C);
            if (i == 0)
                kp_sched_send(s, q, KP_BUF_SEND, 0, m);
            else
                kp_sched_send(s, q, KP_BUF_RECV, (int64_t)mine * m, (int64_t)d * m);
        }
        /* group h's range from h's peer-of-pair, which holds it */
        for (int h = 0; h < C; h++) {
            int q = kp_ce_peer_of_pair(p, h, i, P, C);
            int theirs = h * G + kp_ce_held_first(q, i, P, C);
            kp_sched_recv(s, q, KP_BUF_RECV, (int64_t)theirs * m, (int64_t)d * m);
        }
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
