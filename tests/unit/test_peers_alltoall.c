/*
 * Exhaustive test of the all-to-all peer and offset arithmetic
 * (kp_a2a_* in src/algo/peers_coll.h): every P in 1..64, every k in 1..8
 * (plus a few huge k), every rank, round and port. No MPI, no schedules:
 * each pattern's data movement is simulated from the helpers alone and
 * compared with what the documentation promises, using reference values
 * computed here independently.
 *
 * Checked:
 *  - shift pattern (Direct; pairwise for P not a power of two): round count,
 *    idle ports, distinct peers in a round, pairing (p sends to q in round i
 *    port j <=> q receives from p in round i port j), and every ordered
 *    (source, destination) pair with source != destination exchanged
 *    exactly once;
 *  - exchange pairing (pairwise for powers of two, MPI_IN_PLACE): step
 *    count, symmetry, XOR for powers of two, idle steps, every unordered
 *    pair meeting exactly once, each rank's meetings in step order, the
 *    k-grouped rounds running to completion without deadlock, and the
 *    staging slots (distinct within a round and between consecutive rounds,
 *    within kp_a2a_swap_nslots);
 *  - Bruck: step count, digits, distances, pairing, group sizes, offsets and
 *    pack slots against brute force, every index moved exactly in the steps
 *    of its nonzero digits by a total distance equal to itself, and a
 *    block-by-block simulation ending with rank p holding at position i the
 *    block that rank p - i sent to p.
 * Prints each failure (up to a limit), then "N passed, M failed"; exits 1 on
 * any failure.
 */
#include "algo/peers_coll.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PMAX 64
#define KMAX 8

static long npassed, nfailed;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        npassed++;
        return;
    }
    if (++nfailed <= 50) {
        va_list ap;
        va_start(ap, fmt);
        printf("FAILED: ");
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    }
}

static int mod(long long a, int m)
{
    long long r = a % m;
    return (int)(r < 0 ? r + m : r);
}

static int ceil_log(int P, long long b) /* smallest s with b^s >= P */
{
    int s = 0;
    for (long long x = 1; x < P; x *= b)
        s++;
    return s;
}

static long long ipow(long long b, int e)
{
    long long r = 1;
    while (e-- > 0)
        r *= b;
    return r;
}

/* ---- shift pattern ----------------------------------------------------------- */

static void test_shift(int P, int k)
{
    static int sent[PMAX][PMAX], got[PMAX][PMAX];
    memset(sent, 0, sizeof(sent));
    memset(got, 0, sizeof(got));
    const int nr = kp_a2a_shift_nrounds(P, k);
    check(nr == (P <= 1 ? 0 : (P - 1 + k - 1) / k), "shift P=%d k=%d: %d rounds", P, k, nr);
    const int jmax = k < P + 1 ? k : P + 1; /* ports worth looking at */

    for (int p = 0; p < P; p++) {
        for (int i = 0; i <= nr; i++) { /* i = nr: everything idle */
            int seen_to[PMAX] = {0}, seen_from[PMAX] = {0};
            for (int j = 1; j <= jmax; j++) {
                const long long d = (long long)i * k + j;
                const int dist = kp_a2a_shift_dist(P, k, i, j);
                const int to = kp_a2a_shift_send_peer(p, P, k, i, j);
                const int from = kp_a2a_shift_recv_peer(p, P, k, i, j);
                if (d >= P) {
                    check(dist == 0 && to == -1 && from == -1, "shift P=%d k=%d p=%d i=%d j=%d: port should be idle",
                          P, k, p, i, j);
                    continue;
                }
                check(dist == d && to == mod(p + d, P) && from == mod(p - d, P),
                      "shift P=%d k=%d p=%d i=%d j=%d: dist %d to %d from %d", P, k, p, i, j, dist, to, from);
                if (to < 0 || from < 0 || to >= P || from >= P)
                    continue;
                check(to != p && from != p && !seen_to[to] && !seen_from[from],
                      "shift P=%d k=%d p=%d i=%d: peer repeated or self", P, k, p, i);
                seen_to[to] = seen_from[from] = 1;
                check(kp_a2a_shift_recv_peer(to, P, k, i, j) == p && kp_a2a_shift_send_peer(from, P, k, i, j) == p,
                      "shift P=%d k=%d p=%d i=%d j=%d: pairing not symmetric", P, k, p, i, j);
                sent[p][to]++;
                got[p][from]++;
            }
        }
        check(kp_a2a_shift_dist(P, k, -1, 1) == 0 && kp_a2a_shift_dist(P, k, 0, 0) == 0 &&
                  kp_a2a_shift_dist(P, k, 0, k + 1) == 0,
              "shift P=%d k=%d: out-of-range arguments not idle", P, k);
    }
    for (int a = 0; a < P; a++)
        for (int b = 0; b < P; b++)
            check(sent[a][b] == (a != b) && got[b][a] == (a != b),
                  "shift P=%d k=%d: %d -> %d sent %d times, received %d times", P, k, a, b, sent[a][b], got[b][a]);
}

/* ---- exchange pairing ---------------------------------------------------------- */

static int is_pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

static void test_swap_pairing(int P)
{
    static int met[PMAX][PMAX];
    memset(met, 0, sizeof(met));
    const int ns = kp_a2a_swap_nsteps(P);
    check(ns == (P <= 1 ? 0 : P % 2 == 0 ? P - 1 : P), "swap P=%d: %d steps", P, ns);
    for (int p = 0; p < P; p++) {
        int idle = 0;
        for (int t = 0; t < ns; t++) {
            const int q = kp_a2a_swap_peer(p, P, t);
            if (q < 0) {
                idle++;
                continue;
            }
            check(q < P && q != p && kp_a2a_swap_peer(q, P, t) == p, "swap P=%d p=%d t=%d: partner %d not symmetric",
                  P, p, t, q);
            if (is_pow2(P))
                check(q == (p ^ (t + 1)), "swap P=%d p=%d t=%d: %d is not p XOR (t+1)", P, p, t, q);
            if (q >= 0 && q < P)
                met[p][q]++;
        }
        check(idle == (P > 1 && P % 2 == 1), "swap P=%d p=%d: idle %d times", P, p, idle);
        check(kp_a2a_swap_peer(p, P, ns) == -1 && kp_a2a_swap_peer(p, P, -1) == -1,
              "swap P=%d p=%d: step out of range not idle", P, p);
        /* the rank's own meetings, in step order */
        int prev = -1;
        for (int e = 0; e < P - 1; e++) {
            const int t = kp_a2a_swap_step(p, P, e);
            check(t > prev && t < ns && kp_a2a_swap_peer(p, P, t) >= 0 &&
                      kp_a2a_swap_partner(p, P, e) == kp_a2a_swap_peer(p, P, t),
                  "swap P=%d p=%d e=%d: step %d (previous %d) wrong", P, p, e, t, prev);
            prev = t;
        }
        check(kp_a2a_swap_step(p, P, P - 1) == -1 && kp_a2a_swap_partner(p, P, -1) == -1,
              "swap P=%d p=%d: meeting out of range", P, p);
    }
    for (int a = 0; a < P; a++)
        for (int b = 0; b < P; b++)
            check(met[a][b] == (a != b), "swap P=%d: %d and %d meet %d times", P, a, b, met[a][b]);
}

/* rounds of k meetings: simulate the executor (a meeting completes once both
 * sides have posted it, a round ends when all its meetings have completed)
 * and check the staging slots */
static void test_swap_rounds(int P, int k)
{
    static int done[PMAX][PMAX];
    int round[PMAX];
    memset(done, 0, sizeof(done));
    const int nmeet = P - 1, nrounds = P <= 1 ? 0 : (nmeet + k - 1) / k;
    for (int p = 0; p < P; p++)
        round[p] = 0;
    for (int progress = 1; progress;) {
        progress = 0;
        for (int p = 0; p < P; p++) {
            if (round[p] >= nrounds)
                continue;
            int all = 1;
            for (int e = round[p] * k; e < (round[p] + 1) * k && e < nmeet; e++) {
                const int q = kp_a2a_swap_partner(p, P, e);
                if (q < 0 || q >= P) {
                    all = 0;
                    continue;
                }
                if (done[p][q])
                    continue;
                /* has q posted the meeting with p in its current round? */
                int posted = 0;
                for (int f = round[q] * k; round[q] < nrounds && f < (round[q] + 1) * k && f < nmeet; f++)
                    posted |= kp_a2a_swap_partner(q, P, f) == p;
                if (posted) {
                    done[p][q] = done[q][p] = 1;
                    progress = 1;
                } else {
                    all = 0;
                }
            }
            if (all) {
                round[p]++;
                progress = 1;
            }
        }
    }
    for (int p = 0; p < P; p++)
        check(round[p] == nrounds, "swap rounds P=%d k=%d: rank %d stuck in round %d of %d (deadlock)", P, k, p,
              round[p], nrounds);

    const int ns = kp_a2a_swap_nslots(P, k);
    check(ns == (P <= 1 ? 0 : (long long)2 * k < P - 1 ? 2 * k : P - 1), "swap P=%d k=%d: %d slots", P, k, ns);
    for (int e = 0; e < nmeet; e++) {
        const int se = kp_a2a_swap_slot(P, k, e);
        check(se >= 0 && se < ns, "swap P=%d k=%d e=%d: slot %d outside 0..%d", P, k, e, se, ns - 1);
        for (int f = 0; f < e; f++)
            if (e / k - f / k <= 1) /* same or consecutive rounds */
                check(kp_a2a_swap_slot(P, k, f) != se, "swap P=%d k=%d: meetings %d and %d share slot %d", P, k, f,
                      e, se);
    }
    check(kp_a2a_swap_slot(P, k, nmeet) == -1 && kp_a2a_swap_slot(P, k, -1) == -1,
          "swap P=%d k=%d: slot of a meeting out of range", P, k);
}

/* ---- Bruck ------------------------------------------------------------------- */

static int ref_digit(int i, int k, int x)
{
    long long w = ipow(k + 1, x);
    return w > i ? 0 : (int)(i / w % (k + 1));
}

static void test_bruck(int P, int k)
{
    const int ns = kp_a2a_bruck_nsteps(P, k);
    check(ns == ceil_log(P, (long long)k + 1), "bruck P=%d k=%d: %d steps", P, k, ns);

    /* digits and the steps each index moves in */
    for (int i = 0; i < P; i++) {
        long long travelled = 0;
        for (int x = 0; x <= ns; x++) {
            const int dg = kp_a2a_bruck_digit(i, k, x);
            check(dg == ref_digit(i, k, x), "bruck k=%d: digit %d of %d is %d", k, x, i, dg);
            if (x == ns) {
                check(dg == 0, "bruck P=%d k=%d: index %d has a digit past the last step", P, k, i);
                continue;
            }
            const int slot = kp_a2a_bruck_slot(P, k, x, i);
            if (dg == 0) {
                check(slot == -1, "bruck P=%d k=%d x=%d: index %d has digit 0 but slot %d", P, k, x, i, slot);
                continue;
            }
            const int dist = kp_a2a_bruck_dist(P, k, x, dg);
            check(dist == (long long)dg * ipow(k + 1, x) && dist < P,
                  "bruck P=%d k=%d x=%d: index %d moves on an idle port (digit %d, dist %d)", P, k, x, i, dg, dist);
            travelled += dist;
            const int off = kp_a2a_bruck_group_off(P, k, x, dg), cnt = kp_a2a_bruck_count(P, k, x, dg);
            check(slot >= off && slot < off + cnt, "bruck P=%d k=%d x=%d: index %d slot %d outside group %d [%d,%d)",
                  P, k, x, i, slot, dg, off, off + cnt);
        }
        check(travelled == i, "bruck P=%d k=%d: index %d travels %lld", P, k, i, travelled);
    }

    /* groups: sizes, offsets and slots against brute force */
    int most = 0;
    for (int x = 0; x < ns; x++) {
        int off = 0;
        for (int d = 1; d <= k; d++) {
            int n = 0, ok = 1;
            for (int i = 0; i < P; i++) {
                if (ref_digit(i, k, x) != d)
                    continue;
                const int sl = kp_a2a_bruck_slot(P, k, x, i);
                ok &= sl == off + n; /* increasing i, consecutive slots */
                n++;
            }
            const long long dist = (long long)d * ipow(k + 1, x);
            check(ok, "bruck P=%d k=%d x=%d d=%d: slots not consecutive in increasing index", P, k, x, d);
            check(kp_a2a_bruck_count(P, k, x, d) == n, "bruck P=%d k=%d x=%d d=%d: count %d, expected %d",
                  P, k, x, d, kp_a2a_bruck_count(P, k, x, d), n);
            check(kp_a2a_bruck_group_off(P, k, x, d) == off, "bruck P=%d k=%d x=%d d=%d: offset %d, expected %d", P,
                  k, x, d, kp_a2a_bruck_group_off(P, k, x, d), off);
            check((n > 0) == (dist < P) && kp_a2a_bruck_dist(P, k, x, d) == (dist < P ? dist : 0),
                  "bruck P=%d k=%d x=%d d=%d: port idle iff it carries nothing", P, k, x, d);
            for (int p = 0; p < P; p++) {
                const int to = kp_a2a_bruck_send_peer(p, P, k, x, d), from = kp_a2a_bruck_recv_peer(p, P, k, x, d);
                if (n == 0)
                    check(to == -1 && from == -1, "bruck P=%d k=%d x=%d d=%d p=%d: idle port has peers", P, k, x, d, p);
                else
                    check(to == mod(p + dist, P) && from == mod(p - dist, P) && to != p &&
                              kp_a2a_bruck_recv_peer(to, P, k, x, d) == p && kp_a2a_bruck_send_peer(from, P, k, x, d) == p,
                          "bruck P=%d k=%d x=%d d=%d p=%d: peers %d/%d not paired", P, k, x, d, p, to, from);
            }
            off += n;
        }
        most = off > most ? off : most;
        check(kp_a2a_bruck_group_off(P, k, x, k + 1) == off, "bruck P=%d k=%d x=%d: %d blocks moved, expected %d", P, k,
              x, kp_a2a_bruck_group_off(P, k, x, k + 1), off);
    }
    check(kp_a2a_bruck_max_packed(P, k) == most, "bruck P=%d k=%d: pack area %d, expected %d", P, k,
          kp_a2a_bruck_max_packed(P, k), most);

    /* block-by-block: hold[p][i] = source * P + destination */
    static int hold[PMAX][PMAX], next[PMAX][PMAX], pack[PMAX][PMAX];
    for (int p = 0; p < P; p++)
        for (int i = 0; i < P; i++)
            hold[p][i] = p * P + mod(p + i, P);
    for (int x = 0; x < ns; x++) {
        for (int p = 0; p < P; p++)
            for (int i = 0; i < P; i++) {
                const int sl = kp_a2a_bruck_slot(P, k, x, i);
                if (sl >= 0 && sl < PMAX)
                    pack[p][sl] = hold[p][i];
            }
        memcpy(next, hold, sizeof(next));
        for (int p = 0; p < P; p++)
            for (int i = 0; i < P; i++) {
                const int dg = kp_a2a_bruck_digit(i, k, x), sl = kp_a2a_bruck_slot(P, k, x, i);
                if (dg == 0 || sl < 0 || sl >= PMAX)
                    continue;
                const int from = kp_a2a_bruck_recv_peer(p, P, k, x, dg);
                if (from >= 0 && from < P)
                    next[p][i] = pack[from][sl];
            }
        memcpy(hold, next, sizeof(hold));
    }
    for (int p = 0; p < P; p++)
        for (int i = 0; i < P; i++)
            check(hold[p][i] == mod(p - i, P) * P + p,
                  "bruck P=%d k=%d: rank %d position %d holds %d's block for %d, expected %d's block for %d", P, k, p,
                  i, hold[p][i] / P, hold[p][i] % P, mod(p - i, P), p);
}

/* huge k: one step / one round, nothing may overflow */
static void test_huge_k(int P, int k)
{
    check(kp_a2a_shift_nrounds(P, k) == (P > 1), "shift P=%d k=%d: rounds", P, k);
    check(kp_a2a_bruck_nsteps(P, k) == (P > 1), "bruck P=%d k=%d: steps", P, k);
    check(kp_a2a_swap_nslots(P, k) == (P > 1 ? P - 1 : 0), "swap P=%d k=%d: slots", P, k);
    int moved = 0;
    for (int i = 0; i < P; i++) {
        check(kp_a2a_bruck_digit(i, k, 0) == i && kp_a2a_bruck_digit(i, k, 1) == 0, "bruck P=%d k=%d: digits of %d",
              P, k, i);
        const int sl = kp_a2a_bruck_slot(P, k, 0, i);
        check(sl == i - 1, "bruck P=%d k=%d: slot of %d is %d", P, k, i, sl);
        moved += i > 0;
        check(kp_a2a_swap_slot(P, k, i) == (i < P - 1 ? i : -1), "swap P=%d k=%d: slot of meeting %d", P, k, i);
    }
    check(kp_a2a_bruck_max_packed(P, k) == moved, "bruck P=%d k=%d: pack area", P, k);
    check(kp_a2a_shift_dist(P, k, 0, P) == 0 && kp_a2a_bruck_dist(P, k, 0, P) == 0 &&
              (P < 2 || (kp_a2a_shift_dist(P, k, 0, P - 1) == P - 1 && kp_a2a_bruck_dist(P, k, 0, P - 1) == P - 1)),
          "P=%d k=%d: distances at the edge", P, k);
}

int main(void)
{
    const int huge[] = {100, 1 << 20, INT_MAX - 1, INT_MAX};
    for (int P = 1; P <= PMAX; P++) {
        test_swap_pairing(P);
        for (int k = 1; k <= KMAX; k++) {
            test_shift(P, k);
            test_swap_rounds(P, k);
            test_bruck(P, k);
        }
        for (int h = 0; h < (int)(sizeof(huge) / sizeof(huge[0])); h++)
            if (huge[h] >= P)
                test_huge_k(P, huge[h]);
    }
    printf("%ld passed, %ld failed\n", npassed, nfailed);
    return nfailed ? 1 : 0;
}
