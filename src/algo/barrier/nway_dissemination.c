/*
 * n-way dissemination barrier.
 *
 * The dissemination barrier with n signals per round: in round r rank p
 * signals ranks (p + i*(n+1)^r) mod P and waits for the signals of ranks
 * (p - i*(n+1)^r) mod P, i = 1..n, all 2n messages in flight at once. A
 * signal is a zero-byte message. After round r rank p has heard from the
 * (n+1)^(r+1) ranks p, p-1, ..., p - (n+1)^(r+1) + 1 (mod P), so
 * ceil(log_{n+1} P) rounds suffice.
 *
 * Skip rule (P not a power of n+1): peer i is used only while its distance
 * i*(n+1)^r is below P, i.e. for i = 1 .. min(n, floor((P-1)/(n+1)^r)).
 * Only the last round can be affected. A larger distance would wrap around
 * to p itself (P = 6, n = 2, round 1: 2*3 = 6), to a rank another peer of
 * the same round already signals, or to one whose knowledge the unskipped
 * peers already bring; it is never needed. The rule depends on (P, n, r, i)
 * only, so p skips signalling q exactly when q skips waiting for p. With
 * n = 1 no distance is ever skipped and this is the dissemination barrier.
 *
 * Paper: T. Hoefler, "n-way Dissemination: A new Barrier Algorithm for
 * InfiniBand" (slides; speer_i = (p + i*(n+1)^r) mod P, rpeer_i =
 * (p - i*(n+1)^r) mod P, i = 1..n), published as T. Hoefler, T. Mehlan,
 * F. Mietke and W. Rehm, "Fast Barrier Synchronization for InfiniBand",
 * CAC 2006. It exploits networks that send to several hosts at once about
 * as fast as to one (the slides' 1:n n:1 benchmark).
 *
 * Cost (Hockney, n-port, zero-byte messages): T = ceil(log_{n+1} P) * ts.
 * LogP, the n signals of a round leaving max(g, o) apart:
 * T = ceil(log_{n+1} P) * (L + 2o + (n-1) * max(g, o)).
 * At most n * P * ceil(log_{n+1} P) messages.
 * Memory: none (no buffers at all). Restrictions: none (any P >= 1, any
 * n >= 1; n >= P-1 finishes in one round; P = 1 is an empty schedule).
 * Parameters: n (signals per round, >= 1; default 2).
 *
 * Example, P = 10, n = 2 (3 rounds: distances 1,2 / 3,6 / 9; in round 2
 * distance 18 >= 10 is skipped), the ranks rank 0 has heard from:
 *   start    {0}
 *   round 0  {0,9,8}              (from 9 and 8)
 *   round 1  {0,9,8,...,2}        (from 7, which knew {7,6,5}; 4: {4,3,2})
 *   round 2  {0,...,9}            (from 1, which knew {1,0,9,...,3})
 *
 * Peer arithmetic: kp_nway_* in peers_coll.h, tested exhaustively by
 * tests/unit/test_peers_barrier_gather.c.
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "kport.h"

/* (n+1)^r, or 0 once it reaches P (r is then not a round) */
static int64_t nway_unit(int P, int n, int r)
{
    int64_t d = 1;
    for (int t = 0; t < r && d < P; t++)
        d *= (int64_t)n + 1;
    return r >= 0 && d < P ? d : 0;
}

int kp_nway_nrounds(int P, int n)
{
    int r = 0;
    if (n < 1)
        return 0;
    for (int64_t d = 1; d < P; d *= (int64_t)n + 1)
        r++;
    return r;
}

int kp_nway_npeers(int P, int n, int r)
{
    const int64_t d = n >= 1 ? nway_unit(P, n, r) : 0;
    if (d == 0)
        return 0;
    const int64_t fit = (P - 1) / d;
    return (int)(fit < n ? fit : n);
}

int kp_nway_dist(int P, int n, int r, int i)
{
    if (i < 1 || i > kp_nway_npeers(P, n, r))
        return 0;
    return (int)(i * nway_unit(P, n, r));
}

int kp_nway_send_peer(int p, int P, int n, int r, int i)
{
    const int d = kp_nway_dist(P, n, r, i);
    return d ? kp_mod((int64_t)p + d, P) : -1;
}

int kp_nway_recv_peer(int p, int P, int n, int r, int i)
{
    const int d = kp_nway_dist(P, n, r, i);
    return d ? kp_mod((int64_t)p - d, P) : -1;
}

int kp_barrier_nway_dissemination_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank, n = prm->n;

    if (n < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "nway_dissemination: n = %d signals per round; n must be >= 1", n);

    const int nrounds = kp_nway_nrounds(P, n);
    for (int r = 0; r < nrounds; r++) {
        const int npeers = kp_nway_npeers(P, n, r);
        for (int i = 1; i <= npeers; i++)
            kp_sched_signal(s, kp_nway_send_peer(p, P, n, r, i));
        for (int i = 1; i <= npeers; i++)
            kp_sched_wait_signal(s, kp_nway_recv_peer(p, P, n, r, i));
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
