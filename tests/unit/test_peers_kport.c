/*
 * Exhaustive test of the peer and offset arithmetic of the k-port
 * all-gathers (src/algo/allgather/peers_kport.h): every P in 1..64, every
 * k in 1..8 (plus a few huge k), every rank, step and port. No MPI, no
 * schedules: each algorithm's data movement is simulated block by block from
 * the helpers alone and compared with what its documentation promises.
 *
 * Checked for each algorithm:
 *  - step counts equal the documented formulas, computed here independently;
 *  - in a step, the send peers of a rank are distinct and not itself, and so
 *    are its receive peers; idle ports are exactly the documented ones;
 *  - pairing: if p sends to q in step i on port j, then q receives from p in
 *    step i on port j, with the same block count;
 *  - every block is received exactly once over the run, and at the end every
 *    rank holds every block.
 * Prints the first failure and exits 1; otherwise "N passed, 0 failed".
 */
#include "algo/allgather/peers_kport.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PMAX 64

static long npassed;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
    if (ok) {
        npassed++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    printf("FAILED: ");
    vprintf(fmt, ap);
    printf("\n%ld passed, 1 failed\n", npassed);
    va_end(ap);
    exit(1);
}

/* independent reference values */
static int ceil_log(int P, long long b) /* smallest s with b^s >= P */
{
    int s = 0;
    for (long long x = 1; x < P; x *= b)
        s++;
    return s;
}

static int floor_log(int P, long long b) /* largest n with b^n <= P */
{
    int n = 0;
    for (long long x = b; x <= P; x *= b)
        n++;
    return n;
}

static long long ipow(long long b, int e)
{
    long long r = 1;
    while (e-- > 0)
        r *= b;
    return r;
}

/* ports worth looking at: 1 .. min(k, P + 1), so that huge k stays cheap
 * while the first idle port past P - 1 is still checked */
static int port_limit(int P, int k)
{
    return k < P + 1 ? k : P + 1;
}

/* ---- Direct ---------------------------------------------------------------- */

static void test_direct(int P, int k)
{
    const int ns = kp_direct_nsteps(P, k);
    int want = 0;
    while ((long long)want * k < P - 1)
        want++;
    check(ns == want, "direct P=%d k=%d: %d steps, ceil((P-1)/k) = %d", P, k, ns, want);

    const int J = port_limit(P, k);
    for (int p = 0; p < P; p++) {
        int got[PMAX] = {0};
        for (int i = 0; i <= ns; i++) { /* step ns must be all idle */
            int sent[PMAX] = {0}, from[PMAX] = {0}, active = 0;
            for (int j = 1; j <= J; j++) {
                const long long d = (long long)i * k + j;
                const int idle = i >= ns || d >= P;
                const int to = kp_direct_send_peer(p, P, k, i, j);
                const int fr = kp_direct_recv_peer(p, P, k, i, j);
                check(idle ? kp_direct_dist(P, k, i, j) == 0 && to == -1 && fr == -1
                           : kp_direct_dist(P, k, i, j) == d,
                      "direct P=%d k=%d p=%d step %d port %d: idle=%d but dist %d to %d from %d", P, k,
                      p, i, j, idle, kp_direct_dist(P, k, i, j), to, fr);
                if (idle)
                    continue;
                active++;
                check(to >= 0 && to < P && to != p && !sent[to],
                      "direct P=%d k=%d p=%d step %d port %d: send peer %d repeated or bad", P, k, p, i,
                      j, to);
                check(fr >= 0 && fr < P && fr != p && !from[fr],
                      "direct P=%d k=%d p=%d step %d port %d: recv peer %d repeated or bad", P, k, p, i,
                      j, fr);
                sent[to] = from[fr] = 1;
                check(kp_direct_recv_peer(to, P, k, i, j) == p,
                      "direct P=%d k=%d: %d sends to %d in step %d port %d, which receives from %d", P,
                      k, p, to, i, j, kp_direct_recv_peer(to, P, k, i, j));
                got[fr]++; /* the block received is the sender's own */
            }
            if (i < ns)
                check(active > 0, "direct P=%d k=%d p=%d: step %d of %d is empty", P, k, p, i, ns);
        }
        for (int q = 0; q < P; q++)
            check(got[q] == (q != p), "direct P=%d k=%d: rank %d received block %d %d times", P, k,
                  p, q, got[q]);
    }
}

/* ---- Standard Exchange ------------------------------------------------------ */

static void test_se(int P, int k)
{
    /* documented shape, computed independently */
    const int n = floor_log(P, (long long)k + 1);
    const long long Q = ipow((long long)k + 1, n);
    const int c = (int)(P / Q);
    const int R = kp_se_nleaders(P, k), ns = kp_se_nsteps(P, k);
    check(c >= 1 && c <= k && R == c * Q, "se P=%d k=%d: %d leaders, expected c*Q = %d*%lld", P, k,
          R, c, Q);
    check(ns == n + (c >= 2), "se P=%d k=%d: %d steps, expected floor(log) + (c>=2) = %d", P, k,
          ns, n + (c >= 2));
    /* the documented step counts: ceil(log_{k+1} P) exchange steps without
     * folding; with folding one fewer when c = 1 (plus fold and unfold) */
    const int cl = ceil_log(P, (long long)k + 1);
    check(R == P ? ns == cl : ns == cl - (c == 1),
          "se P=%d k=%d: %d exchange steps, %d leaders, ceil(log) = %d", P, k, ns, R, cl);

    /* segments: contiguous, 1 or 2 ranks, seg_of inverts seg_start */
    check(kp_se_seg_start(P, R, 0) == 0 && kp_se_seg_start(P, R, R) == P,
          "se P=%d k=%d: segments do not cover 0..P", P, k);
    for (int q = 0; q < R; q++) {
        int sz = kp_se_seg_start(P, R, q + 1) - kp_se_seg_start(P, R, q);
        check(sz == 1 || sz == 2, "se P=%d k=%d: segment %d has %d ranks", P, k, q, sz);
    }
    for (int p = 0; p < P; p++) {
        int q = kp_se_seg_of(P, R, p);
        check(q >= 0 && q < R && kp_se_seg_start(P, R, q) <= p && p < kp_se_seg_start(P, R, q + 1),
              "se P=%d k=%d: rank %d mapped to segment %d", P, k, p, q);
    }

    /* radices and spans */
    long long prod = 1;
    for (int i = 0; i < ns; i++) {
        int r = kp_se_radix(P, k, i);
        check(r >= 2 && r <= (long long)k + 1 && kp_se_span(P, k, i) == prod,
              "se P=%d k=%d step %d: radix %d, span %d, expected span %lld", P, k, i, r,
              kp_se_span(P, k, i), prod);
        prod *= r;
    }
    check(prod == R && kp_se_span(P, k, ns) == R && kp_se_radix(P, k, ns) == 0,
          "se P=%d k=%d: radices multiply to %lld, leaders %d", P, k, prod, R);

    /* simulate the leaders' holdings */
    static unsigned char held[PMAX][PMAX], next[PMAX][PMAX];
    memset(held, 0, sizeof(held));
    for (int q = 0; q < R; q++) {
        int lo, hi;
        kp_se_held(P, k, q, 0, &lo, &hi);
        check(lo == kp_se_seg_start(P, R, q) && hi == kp_se_seg_start(P, R, q + 1),
              "se P=%d k=%d: leader %d starts with [%d,%d), not its segment", P, k, q, lo, hi);
        for (int b = lo; b < hi; b++)
            held[q][b] = 1;
    }
    for (int i = 0; i < ns; i++) {
        const int r = kp_se_radix(P, k, i), d = kp_se_span(P, k, i);
        memcpy(next, held, sizeof(held));
        for (int q = 0; q < R; q++) {
            int to_seen[PMAX] = {0}, from_seen[PMAX] = {0};
            for (int j = 1; j <= (long long)k + 1 && j <= P + 1; j++) {
                const int to = kp_se_send_peer(P, k, q, i, j);
                const int fr = kp_se_recv_peer(P, k, q, i, j);
                if (j >= r) {
                    check(to == -1 && fr == -1, "se P=%d k=%d leader %d step %d: port %d >= radix %d busy",
                          P, k, q, i, j, r);
                    continue;
                }
                check(to >= 0 && to < R && to != q && !to_seen[to] && to / (r * d) == q / (r * d),
                      "se P=%d k=%d leader %d step %d port %d: bad or repeated send peer %d", P, k, q,
                      i, j, to);
                check(fr >= 0 && fr < R && fr != q && !from_seen[fr] && fr / (r * d) == q / (r * d),
                      "se P=%d k=%d leader %d step %d port %d: bad or repeated recv peer %d", P, k, q,
                      i, j, fr);
                to_seen[to] = from_seen[fr] = 1;
                check(kp_se_recv_peer(P, k, to, i, j) == q,
                      "se P=%d k=%d: %d sends to %d in step %d port %d, which receives from %d", P, k,
                      q, to, i, j, kp_se_recv_peer(P, k, to, i, j));
                /* receive what fr holds; it must be exactly fr's holdings */
                int lo, hi;
                kp_se_held(P, k, fr, i, &lo, &hi);
                for (int b = 0; b < P; b++)
                    check(held[fr][b] == (b >= lo && b < hi),
                          "se P=%d k=%d step %d: leader %d holds block %d = %d, range says [%d,%d)", P,
                          k, i, fr, b, held[fr][b], lo, hi);
                for (int b = lo; b < hi; b++) {
                    check(!next[q][b], "se P=%d k=%d step %d: leader %d receives block %d twice", P,
                          k, i, q, b);
                    next[q][b] = 1;
                }
            }
        }
        memcpy(held, next, sizeof(held));
        for (int q = 0; q < R; q++) { /* holdings stay one contiguous range */
            int lo, hi;
            kp_se_held(P, k, q, i + 1, &lo, &hi);
            for (int b = 0; b < P; b++)
                check(held[q][b] == (b >= lo && b < hi),
                      "se P=%d k=%d after step %d: leader %d block %d = %d, range [%d,%d)", P, k, i, q,
                      b, held[q][b], lo, hi);
        }
    }
    for (int q = 0; q < R; q++)
        for (int b = 0; b < P; b++)
            check(held[q][b], "se P=%d k=%d: leader %d misses block %d at the end", P, k, q, b);
}

/* ---- Bruck ------------------------------------------------------------------ */

static void test_bruck(int P, int k)
{
    const int ns = kp_bruck_nsteps(P, k);
    check(ns == ceil_log(P, (long long)k + 1), "bruck P=%d k=%d: %d steps, ceil(log_{k+1} P) = %d", P,
          k, ns, ceil_log(P, (long long)k + 1));
    for (int i = 0; i <= ns; i++) {
        long long h = 1; /* min((k+1)^i, P) without overflow */
        for (int t = 0; t < i && h < P; t++)
            h *= (long long)k + 1;
        check(kp_bruck_held(P, k, i) == (h < P ? h : P), "bruck P=%d k=%d: held before step %d = %d",
              P, k, i, kp_bruck_held(P, k, i));
    }
    check(kp_bruck_held(P, k, ns) == P, "bruck P=%d k=%d: not everything held after the last step", P,
          k);

    /* scratch[p][t]: block at scratch position t of rank p, -1 empty */
    static int scr[PMAX][PMAX], nxt[PMAX][PMAX];
    for (int p = 0; p < P; p++) {
        for (int t = 0; t < P; t++)
            scr[p][t] = -1;
        scr[p][0] = p;
    }
    const int J = port_limit(P, k);
    for (int i = 0; i <= ns; i++) { /* step ns must be all idle */
        const int h = kp_bruck_held(P, k, i);
        int total = 0, prev = h;
        for (int j = 1; j <= J; j++) {
            const int cnt = kp_bruck_count(P, k, i, j);
            long long want = (long long)P - (long long)j * h;
            want = i >= ns || want < 0 ? 0 : want < h ? want : h;
            check(cnt == want, "bruck P=%d k=%d step %d port %d: count %d, expected %lld", P, k, i, j,
                  cnt, want);
            check(cnt <= prev, "bruck P=%d k=%d step %d: port %d busy after an idle one", P, k, i, j);
            prev = cnt;
            total += cnt;
        }
        if (i < ns)
            check(kp_bruck_count(P, k, i, 1) > 0, "bruck P=%d k=%d: step %d is empty", P, k, i);
        check(h + total == kp_bruck_held(P, k, i + 1), "bruck P=%d k=%d step %d: %d + %d != %d", P, k,
              i, h, total, kp_bruck_held(P, k, i + 1));

        memcpy(nxt, scr, sizeof(scr));
        for (int p = 0; p < P; p++) {
            int to_seen[PMAX] = {0}, from_seen[PMAX] = {0};
            for (int j = 1; j <= J; j++) {
                const int cnt = kp_bruck_count(P, k, i, j);
                const int to = kp_bruck_send_peer(p, P, k, i, j);
                const int fr = kp_bruck_recv_peer(p, P, k, i, j);
                if (cnt == 0) {
                    check(to == -1 && fr == -1, "bruck P=%d k=%d p=%d step %d: idle port %d has peers",
                          P, k, p, i, j);
                    continue;
                }
                check(to >= 0 && to < P && to != p && !to_seen[to],
                      "bruck P=%d k=%d p=%d step %d port %d: bad or repeated send peer %d", P, k, p, i,
                      j, to);
                check(fr >= 0 && fr < P && fr != p && !from_seen[fr],
                      "bruck P=%d k=%d p=%d step %d port %d: bad or repeated recv peer %d", P, k, p, i,
                      j, fr);
                to_seen[to] = from_seen[fr] = 1;
                check(kp_bruck_recv_peer(to, P, k, i, j) == p,
                      "bruck P=%d k=%d: %d sends to %d in step %d port %d, which receives from %d", P,
                      k, p, to, i, j, kp_bruck_recv_peer(to, P, k, i, j));
                /* receive the first cnt blocks fr held before the step */
                for (int t = 0; t < cnt; t++) {
                    const int pos = j * h + t;
                    check(pos < P && nxt[p][pos] == -1,
                          "bruck P=%d k=%d p=%d step %d port %d: scratch block %d written twice", P, k,
                          p, i, j, pos);
                    check(scr[fr][t] == (p + pos) % P,
                          "bruck P=%d k=%d p=%d step %d port %d: scratch block %d gets block %d, not %d",
                          P, k, p, i, j, pos, scr[fr][t], (p + pos) % P);
                    nxt[p][pos] = scr[fr][t];
                }
            }
        }
        memcpy(scr, nxt, sizeof(scr));
    }
    for (int p = 0; p < P; p++)
        for (int t = 0; t < P; t++)
            check(scr[p][t] == (p + t) % P, "bruck P=%d k=%d: rank %d scratch block %d holds %d at the end",
                  P, k, p, t, scr[p][t]);
}

int main(void)
{
    static const int big_k[] = {63, 64, 1000, INT_MAX / 2, INT_MAX};
    for (int P = 1; P <= PMAX; P++) {
        for (int x = 0; x < 8 + (int)(sizeof(big_k) / sizeof(big_k[0])); x++) {
            const int k = x < 8 ? x + 1 : big_k[x - 8];
            test_direct(P, k);
            test_se(P, k);
            test_bruck(P, k);
        }
    }
    printf("%ld passed, 0 failed\n", npassed);
    return 0;
}
