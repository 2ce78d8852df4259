/*
 * Exhaustive test of the peer arithmetic of the barriers and the binomial
 * gather (src/algo/peers_coll.h: kp_diss_*, kp_nway_*, kp_binom_*): every P
 * in 1..64, every n in 1..8 (plus a few huge n), every root, rank, round
 * and peer. No MPI, no schedules: the data movement is simulated from the
 * helpers alone and compared with what the documentation promises.
 *
 * Barriers (dissemination, and n-way with the skip rule):
 *  - round counts equal ceil(log2 P) and ceil(log_{n+1} P), computed here
 *    independently; peers are idle outside the rounds;
 *  - in a round, a rank's signal peers are distinct and not itself, and so
 *    are the ranks it waits for; the active peers are exactly i = 1..
 *    min(n, floor((P-1)/(n+1)^r)), the same for every rank (symmetric skip);
 *  - pairing: p signals q in round r exactly as often as q waits for p;
 *  - knowledge: after round r a rank has heard (transitively) from exactly
 *    the min(P, (n+1)^(r+1)) ranks behind it, so from everyone at the end;
 *  - the skip rule keeps every needed signal: dropping any active peer of
 *    the last round breaks the barrier; n = 1 equals dissemination.
 * Binomial tree, for every root:
 *  - rel/abs are inverse; parent/child/send-step relations are consistent;
 *    every rank but the root is the child of exactly one rank;
 *  - a subtree is the contiguous range its children's subtrees tile after
 *    the own block, the root's has P blocks; sizes sum to P;
 *  - a simulated gather (children send their holdings to the parent in
 *    their send step) leaves the root with every block, each sender holding
 *    exactly its subtree when it sends; at most one child of the root has a
 *    range that wraps around the receive buffer, and the split is exact.
 * Prints failures (the first 20), exits 1 on failure; the last line is
 * "N passed, M failed".
 */
#include "algo/peers_coll.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PMAX 64

static long npassed, nfailed;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        npassed++;
        return;
    }
    if (nfailed++ < 20) {
        va_list ap;
        va_start(ap, fmt);
        printf("FAILED: ");
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    }
}

/* independent reference values */
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

static int md(long long a, int P)
{
    long long r = a % P;
    return (int)(r < 0 ? r + P : r);
}

/* the ranks at distance 0 .. cnt-1 behind p, as a bitset */
static uint64_t behind(int p, int P, long long cnt)
{
    uint64_t b = 0;
    for (long long x = 0; x < cnt && x < P; x++)
        b |= (uint64_t)1 << md(p - x, P);
    return b;
}

static uint64_t all_ranks(int P)
{
    return P == 64 ? ~(uint64_t)0 : ((uint64_t)1 << P) - 1;
}

/* ---- barriers ----------------------------------------------------------------- */

/* peer i of rank p in round r, for dissemination (n = 0) or n-way */
static int send_peer(int n, int p, int P, int r, int i)
{
    return n == 0 ? (i == 1 ? kp_diss_send_peer(p, P, r) : -1) : kp_nway_send_peer(p, P, n, r, i);
}

static int recv_peer(int n, int p, int P, int r, int i)
{
    return n == 0 ? (i == 1 ? kp_diss_recv_peer(p, P, r) : -1) : kp_nway_recv_peer(p, P, n, r, i);
}

/* simulate the barrier, rounds 0 .. nrounds-1, with peer `drop` of round
 * `drop_round` removed on every rank (drop = 0: nothing removed); returns
 * 1 if every rank has heard from every rank at the end. With check_rounds,
 * also checks the knowledge after every round against the formula. */
static int simulate_barrier(int n, int P, int nrounds, int drop_round, int drop, int check_rounds)
{
    const int ports = n == 0 ? 1 : (n < P + 1 ? n : P + 1);
    const long long base = n == 0 ? 2 : (long long)n + 1;
    uint64_t know[PMAX], next[PMAX];
    for (int p = 0; p < P; p++)
        know[p] = (uint64_t)1 << p;
    for (int r = 0; r < nrounds; r++) {
        memcpy(next, know, sizeof(know));
        for (int q = 0; q < P; q++)
            for (int i = 1; i <= ports; i++) {
                if (r == drop_round && i == drop)
                    continue;
                int from = recv_peer(n, q, P, r, i);
                if (from >= 0)
                    next[q] |= know[from]; /* the sender's knowledge as of its round start */
            }
        memcpy(know, next, sizeof(know));
        if (check_rounds)
            for (int p = 0; p < P; p++)
                check(know[p] == behind(p, P, ipow(base, r + 1)),
                      "barrier n=%d P=%d: after round %d rank %d has heard from %#llx, expected the %lld ranks "
                      "behind it",
                      n, P, r, p, (unsigned long long)know[p], ipow(base, r + 1));
    }
    for (int p = 0; p < P; p++)
        if (know[p] != all_ranks(P))
            return 0;
    return 1;
}

/* n = 0: dissemination; n >= 1: n-way dissemination */
static void test_barrier(int n, int P)
{
    const long long base = n == 0 ? 2 : (long long)n + 1;
    const int nr = n == 0 ? kp_diss_nrounds(P) : kp_nway_nrounds(P, n);
    const int want = ceil_log(P, base);
    check(nr == want, "barrier n=%d P=%d: %d rounds, expected ceil(log_%lld P) = %d", n, P, nr, base, want);
    /* ports worth looking at: a huge n is checked up to the first idle peer past P */
    const int ports = n == 0 ? 2 : (n < P + 1 ? n : P + 1);

    for (int r = -1; r <= nr; r++) {
        /* the active peers, from the documented rule, independently */
        long long npeers = 0;
        if (r >= 0 && r < nr) {
            const long long d = ipow(base, r);
            npeers = n == 0 ? 1 : ((P - 1) / d < n ? (P - 1) / d : n);
        }
        if (n >= 1)
            check(kp_nway_npeers(P, n, r) == npeers, "nway n=%d P=%d round %d: %d peers, expected %lld", n, P, r,
                  kp_nway_npeers(P, n, r), npeers);
        if (r >= 0 && r < nr)
            check(npeers >= 1, "barrier n=%d P=%d: round %d of %d is empty", n, P, r, nr);
        int waits[PMAX][PMAX]; /* waits[q][p]: how often q waits for p in this round */
        int sends[PMAX][PMAX];
        memset(waits, 0, sizeof(waits));
        memset(sends, 0, sizeof(sends));
        for (int p = 0; p < P; p++) {
            uint64_t to_seen = 0, from_seen = 0;
            for (int i = 1; i <= ports; i++) {
                const int to = send_peer(n, p, P, r, i), fr = recv_peer(n, p, P, r, i);
                const int active = i <= npeers;
                if (n >= 1)
                    check(kp_nway_dist(P, n, r, i) == (active ? i * ipow(base, r) : 0),
                          "nway n=%d P=%d round %d peer %d: distance %d", n, P, r, i, kp_nway_dist(P, n, r, i));
                if (!active) {
                    check(to == -1 && fr == -1, "barrier n=%d P=%d p=%d round %d peer %d: skipped but %d / %d", n,
                          P, p, r, i, to, fr);
                    continue;
                }
                const long long d = i * ipow(base, r);
                check(d < P && to == md(p + d, P) && fr == md(p - d, P),
                      "barrier n=%d P=%d p=%d round %d peer %d: signals %d, waits for %d, distance %lld", n, P, p,
                      r, i, to, fr, d);
                check(to >= 0 && to < P && to != p && !(to_seen >> to & 1),
                      "barrier n=%d P=%d p=%d round %d peer %d: signal to %d is self or repeated", n, P, p, r, i,
                      to);
                check(fr >= 0 && fr < P && fr != p && !(from_seen >> fr & 1),
                      "barrier n=%d P=%d p=%d round %d peer %d: wait for %d is self or repeated", n, P, p, r, i,
                      fr);
                if (to < 0 || to >= P || fr < 0 || fr >= P)
                    continue;
                to_seen |= (uint64_t)1 << to;
                from_seen |= (uint64_t)1 << fr;
                sends[p][to]++;
                waits[p][fr]++;
                if (n == 1)
                    check(to == kp_diss_send_peer(p, P, r) && fr == kp_diss_recv_peer(p, P, r),
                          "nway n=1 P=%d p=%d round %d: peers %d / %d differ from dissemination", P, p, r, to, fr);
            }
        }
        for (int p = 0; p < P; p++)
            for (int q = 0; q < P; q++)
                check(sends[p][q] == waits[q][p],
                      "barrier n=%d P=%d round %d: %d signals %d %d times, %d waits for it %d times", n, P, r, p,
                      q, sends[p][q], q, waits[q][p]);
    }

    check(simulate_barrier(n, P, nr, -1, 0, 1), "barrier n=%d P=%d: some rank leaves before all have entered", n,
          P);
    /* every signal of the last round is needed: the skip rule skips only
     * redundant ones (and every earlier round is needed: nr is minimal) */
    if (nr > 0) {
        int last = n == 0 ? 1 : kp_nway_npeers(P, n, nr - 1);
        last = last < ports ? last : ports; /* a wrong huge count is reported above */
        for (int i = 1; i <= last; i++)
            check(!simulate_barrier(n, P, nr, nr - 1, i, 0),
                  "barrier n=%d P=%d: the barrier still holds without peer %d of the last round", n, P, i);
    }
}

/* ---- binomial tree ---------------------------------------------------------- */

static void test_binomial(int P, int root)
{
    const int ns = kp_binom_nsteps(P);
    check(ns == ceil_log(P, 2), "binom P=%d: %d steps, expected ceil(log2 P) = %d", P, ns, ceil_log(P, 2));

    int nparents[PMAX] = {0};
    for (int p = 0; p < P; p++) {
        const int rel = kp_binom_rel(p, root, P);
        check(rel == md(p - root, P) && kp_binom_abs(rel, root, P) == p, "binom P=%d root=%d: rank %d <-> rel %d",
              P, root, p, rel);
    }
    for (int rel = 0; rel < P; rel++) {
        const int par = kp_binom_parent(rel, P), st = kp_binom_send_step(rel), size = kp_binom_subtree(rel, P);
        if (rel == 0) {
            check(par == -1 && st == -1 && size == P, "binom P=%d: root has parent %d, send step %d, subtree %d", P,
                  par, st, size);
        } else {
            check(par >= 0 && par < rel && st >= 0 && st < ns && rel == par + (1 << st) &&
                      kp_binom_child(par, P, st) == rel,
                  "binom P=%d: rel %d has parent %d, send step %d, but child(%d, %d) = %d", P, rel, par, st, par,
                  st, par >= 0 && st >= 0 ? kp_binom_child(par, P, st) : -2);
            const int low = rel & -rel;
            check(size == (low < P - rel ? low : P - rel), "binom P=%d: rel %d subtree %d", P, rel, size);
        }
        /* children tile the subtree after the own block, in step order */
        int next = rel + 1, nch = 0;
        for (int j = -1; j <= 32; j++) {
            const int c = kp_binom_child(rel, P, j);
            if (c < 0)
                continue;
            nch++;
            nparents[c]++;
            check(j >= 0 && j < ns && c == rel + (1 << j) && kp_binom_parent(c, P) == rel &&
                      kp_binom_send_step(c) == j && (rel == 0 || j < st),
                  "binom P=%d: child(%d, %d) = %d, whose parent is %d and send step %d", P, rel, j, c,
                  kp_binom_parent(c, P), kp_binom_send_step(c));
            check(c == next, "binom P=%d: rel %d's child %d does not follow the blocks up to %d", P, rel, c, next);
            next = c + kp_binom_subtree(c, P);
        }
        check(next == rel + size, "binom P=%d: rel %d's children cover [%d, %d), its subtree is [%d, %d)", P, rel,
              rel + 1, next, rel, rel + size);
        check((size > 1) == (nch > 0), "binom P=%d: rel %d has %d children and subtree %d", P, rel, nch, size);
    }
    for (int rel = 0; rel < P; rel++)
        check(nparents[rel] == (rel != 0), "binom P=%d: rel %d is a child of %d ranks", P, rel, nparents[rel]);
    int sum = 1;
    for (int j = 0; j < ns; j++)
        sum += kp_binom_child(0, P, j) >= 0 ? kp_binom_subtree(kp_binom_child(0, P, j), P) : 0;
    check(sum == P, "binom P=%d: the root's children's subtrees sum to %d, not P - 1", P, sum - 1);

    /* simulated gather, relative block numbers */
    uint64_t held[PMAX];
    int sent[PMAX] = {0};
    for (int rel = 0; rel < P; rel++)
        held[rel] = (uint64_t)1 << rel;
    for (int j = 0; j < ns; j++)
        for (int rel = 1; rel < P; rel++) {
            if (kp_binom_send_step(rel) != j)
                continue;
            const int size = kp_binom_subtree(rel, P);
            const uint64_t want = (size == 64 ? ~(uint64_t)0 : (((uint64_t)1 << size) - 1)) << rel;
            check(held[rel] == want && !sent[rel], "binom P=%d: rel %d sends in step %d holding %#llx, not [%d, %d)",
                  P, rel, j, (unsigned long long)held[rel], rel, rel + size);
            held[kp_binom_parent(rel, P)] |= held[rel];
            sent[rel] = 1;
        }
    check(held[0] == all_ranks(P), "binom P=%d: the root ends with %#llx", P, (unsigned long long)held[0]);

    /* the root receives each child's range straight into place, split once at the wrap */
    int wraps = 0;
    for (int j = 0; j < ns; j++) {
        const int c = kp_binom_child(0, P, j);
        if (c < 0)
            continue;
        const int cnt = kp_binom_subtree(c, P), first = kp_binom_first_piece(c, cnt, root, P);
        const int a = kp_binom_abs(c, root, P);
        wraps += first < cnt;
        check(first >= 1 && first <= cnt && a + first <= P && (first == cnt || a + first == P),
              "binom P=%d root=%d: child %d (%d blocks at %d) split after %d", P, root, c, cnt, a, first);
        for (int t = 0; t < cnt; t++) /* block t of the message lands where it belongs */
            check(kp_binom_abs(c + t, root, P) == (t < first ? a + t : t - first),
                  "binom P=%d root=%d: child %d's block %d lands at the wrong place", P, root, c, t);
    }
    check(wraps <= 1, "binom P=%d root=%d: %d children's ranges wrap", P, root, wraps);
    check(kp_binom_first_piece(0, P, root, P) == P - root, "binom P=%d root=%d: first piece of [0, P) is %d", P,
          root, kp_binom_first_piece(0, P, root, P));
}

int main(void)
{
    static const int huge[] = {63, 64, 65, 1000, 1000000};
    for (int P = 1; P <= PMAX; P++) {
        test_barrier(0, P);
        for (int n = 1; n <= 8; n++)
            test_barrier(n, P);
        for (int h = 0; h < (int)(sizeof(huge) / sizeof(huge[0])); h++)
            test_barrier(huge[h], P);
        for (int root = 0; root < P; root++)
            test_binomial(P, root);
    }
    /* out-of-range arguments name no peer */
    check(kp_nway_nrounds(8, 0) == 0 && kp_nway_npeers(8, 0, 0) == 0 && kp_nway_send_peer(0, 8, 0, 0, 1) == -1,
          "nway with n = 0 names peers");
    check(kp_binom_parent(8, 8) == -1 && kp_binom_child(8, 8, 0) == -1 && kp_binom_subtree(-1, 8) == 0,
          "binomial with rel out of range names peers");
    printf("%ld passed, %ld failed\n", npassed, nfailed);
    return nfailed != 0;
}
