/*
 * Dissemination barrier (baseline).
 *
 * ceil(log2 P) rounds; in round r rank p signals rank (p + 2^r) mod P and
 * waits for the signal of rank (p - 2^r) mod P, both in flight at once. A
 * signal is a zero-byte message. By induction, after round r rank p has
 * heard, directly or through a chain of signals, from the 2^(r+1) ranks
 * p, p-1, ..., p - 2^(r+1) + 1 (mod P), so after the last round from all
 * P: no rank leaves before every rank has entered. P need not be a power
 * of two (the last round's distance simply wraps around).
 *
 * Paper: D. Hensgen, R. Finkel and U. Manber, "Two algorithms for barrier
 * synchronization", Int. J. Parallel Programming 17(1), 1988; as presented
 * in T. Hoefler's n-way dissemination slides ("speer = (p + 2^r) mod P,
 * rpeer = (p - 2^r) mod P"). This is the n-way dissemination barrier
 * (nway_dissemination.c) with n = 1.
 *
 * Cost (Hockney, zero-byte messages): T = ceil(log2 P) * ts; in LogP
 * T = ceil(log2 P) * (L + 2o). P * ceil(log2 P) messages in all.
 * Memory: none (no buffers at all). Restrictions: none (any P >= 1; P = 1
 * is an empty schedule). Parameters: none.
 *
 * Example, P = 5 (3 rounds), the ranks rank 0 has heard from:
 *   start    {0}
 *   round 0  {0,4}        (signal from 4, which knew {4})
 *   round 1  {0,4,3,2}    (from 3, which knew {3,2})
 *   round 2  {0,...,4}    (from 1, which knew {1,0,4,3})
 *
 * Peer arithmetic: kp_diss_* in peers_coll.h, tested exhaustively by
 * tests/unit/test_peers_barrier_gather.c.
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "kport.h"

int kp_diss_nrounds(int P)
{
    int r = 0;
    for (int64_t d = 1; d < P; d *= 2)
        r++;
    return r;
}

int kp_diss_send_peer(int p, int P, int r)
{
    if (r < 0 || r >= kp_diss_nrounds(P))
        return -1;
    return kp_mod((int64_t)p + ((int64_t)1 << r), P);
}

int kp_diss_recv_peer(int p, int P, int r)
{
    if (r < 0 || r >= kp_diss_nrounds(P))
        return -1;
    return kp_mod((int64_t)p - ((int64_t)1 << r), P);
}

int kp_barrier_dissemination_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, p = s->rank;
    const int nrounds = kp_diss_nrounds(P);

    for (int r = 0; r < nrounds; r++) {
        kp_sched_signal(s, kp_diss_send_peer(p, P, r));
        kp_sched_wait_signal(s, kp_diss_recv_peer(p, P, r));
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
