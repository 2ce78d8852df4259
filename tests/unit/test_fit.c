/*
 * kport-bench's fitting code (tools/bench/fit.c) recovers known parameters
 * from synthetic data: exact lines, lines with +-3% noise over four decades
 * of sizes, an eager-to-rendezvous switch (a jump and a slope change) found
 * at the right size with each piece within 5%, no false switch on a plain
 * noisy line, and the size lists of -m; bad input is refused. The strided
 * calibration's three-point cost fit (kb_fit_cost3) on hand-computed cases;
 * the two-slope copy line (kb_fit_knee_floor).
 */
#include "../../tools/bench/fit.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int within(double got, double want, double tol)
{
    return fabs(got - want) <= tol * fabs(want);
}

/* deterministic noise in [-amp, amp] (xorshift) */
static double noise(uint64_t *s, double amp)
{
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return amp * (2.0 * (double)(*s >> 11) / 9007199254740992.0 - 1.0);
}

#define NS 21 /* sizes 1 .. 1 MiB */

static void sizes(double *x)
{
    for (int i = 0; i < NS; i++)
        x[i] = (double)(1u << i);
}

static void test_exact_line(void)
{
    double x[NS], y[NS];
    sizes(x);
    for (int i = 0; i < NS; i++)
        y[i] = 250.0 + 0.125 * x[i];
    kb_line l;
    CHECK(kb_fit_line(x, y, NS, &l) == 0, "fit failed");
    CHECK(within(l.a, 250.0, 1e-9) && within(l.b, 0.125, 1e-9), "exact: a %g b %g", l.a, l.b);
    CHECK(l.rms < 1e-12, "exact: rms %g", l.rms);
    /* unweighted on two points */
    double x2[2] = {0, 10}, y2[2] = {1, 21};
    CHECK(kb_fit_line_w(x2, y2, NULL, 2, &l) == 0 && within(l.a, 1, 1e-12) && within(l.b, 2, 1e-12),
          "two points: a %g b %g", l.a, l.b);
    /* one point, or all at one x: a flat line at the mean */
    double x3[3] = {5, 5, 5}, y3[3] = {1, 2, 3};
    CHECK(kb_fit_line_w(x3, y3, NULL, 3, &l) == 0 && within(l.a, 2, 1e-12) && l.b == 0, "one x: a %g b %g", l.a,
          l.b);
}

static void test_noisy_line(void)
{
    uint64_t s = 88172645463325252ull;
    double x[NS], y[NS];
    sizes(x);
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < NS; i++)
            y[i] = (400.0 + 0.09 * x[i]) * (1.0 + noise(&s, 0.03));
        kb_line l;
        CHECK(kb_fit_line(x, y, NS, &l) == 0, "fit failed");
        CHECK(within(l.a, 400.0, 0.05) && within(l.b, 0.09, 0.05), "noisy line %d: a %g b %g", rep, l.a, l.b);
        kb_pieces p;
        CHECK(kb_fit_pieces(x, y, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == 0, "pieces failed");
        CHECK(p.npieces == 1, "noisy line %d: false switch at x = %g (rms %g vs %g)", rep, x[p.start[1]],
              p.rms_one, p.piece[1].rms);
    }
}

/* eager up to 4 KiB: 300 + 0.10*s; rendezvous above: 900 + 0.08*s */
static void test_protocol_switch(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    double x[NS], y[NS];
    sizes(x);
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < NS; i++) {
            double t = x[i] <= 4096 ? 300.0 + 0.10 * x[i] : 900.0 + 0.08 * x[i];
            y[i] = t * (1.0 + noise(&s, rep == 0 ? 0.0 : 0.02));
        }
        kb_pieces p;
        CHECK(kb_fit_pieces(x, y, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == 0, "pieces failed");
        CHECK(p.npieces == 2, "switch %d: not found (rms %g)", rep, p.rms_one);
        if (p.npieces != 2)
            continue;
        CHECK(x[p.start[1] - 1] == 4096 && x[p.start[1]] == 8192, "switch %d: at %g..%g, expected 4096..8192", rep,
              x[p.start[1] - 1], x[p.start[1]]);
        CHECK(within(p.piece[0].a, 300.0, 0.05), "eager fixed %g", p.piece[0].a);
        CHECK(within(p.piece[0].b, 0.10, 0.05), "eager per byte %g", p.piece[0].b);
        CHECK(within(p.piece[1].a, 900.0, 0.05), "rendezvous fixed %g", p.piece[1].a);
        CHECK(within(p.piece[1].b, 0.08, 0.05), "rendezvous per byte %g", p.piece[1].b);
    }
    /* a pure slope change without a jump, at 64 KiB: 100 + 0.2*s, then the
     * same time at 64 KiB and 0.05 ns/byte beyond */
    for (int i = 0; i < NS; i++) {
        double k = 65536.0;
        y[i] = x[i] <= k ? 100.0 + 0.2 * x[i] : 100.0 + 0.2 * k + 0.05 * (x[i] - k);
    }
    kb_pieces p;
    CHECK(kb_fit_pieces(x, y, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == 0 && p.npieces == 2, "slope change not found");
    CHECK(p.npieces == 2 && within(p.piece[1].b, 0.05, 0.05) && within(p.piece[0].b, 0.2, 0.05),
          "slope change: slopes %g %g", p.piece[0].b, p.piece[1].b);

    /* three protocols (Open MPI's shared memory: fast box up to 256 B,
     * eager up to 4 KiB, rendezvous): both switches, every piece within 5% */
    uint64_t r = 12345;
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < NS; i++) {
            double t = x[i] <= 256 ? 450.0 + 0.2 * x[i] : x[i] <= 4096 ? 800.0 + 0.15 * x[i] : 2500.0 + 0.1 * x[i];
            y[i] = t * (1.0 + noise(&r, rep == 0 ? 0.0 : 0.01));
        }
        CHECK(kb_fit_pieces(x, y, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == 0, "pieces failed");
        CHECK(p.npieces == 3, "three protocols %d: %d pieces", rep, p.npieces);
        if (p.npieces != 3)
            continue;
        CHECK(x[p.start[1]] == 512 && x[p.start[2]] == 8192, "three protocols %d: switches at %g and %g", rep,
              x[p.start[1]], x[p.start[2]]);
        const double a[3] = {450, 800, 2500}, b[3] = {0.2, 0.15, 0.1};
        for (int k = 0; k < 3; k++) {
            CHECK(within(p.piece[k].a, a[k], 0.05), "three protocols %d: piece %d fixed %g", rep, k, p.piece[k].a);
            /* the first piece's per-byte cost is 0.2 ns over at most 256 B: 50 ns of 500, below the noise */
            if (k > 0)
                CHECK(within(p.piece[k].b, b[k], 0.05), "three protocols %d: piece %d per byte %g", rep, k,
                      p.piece[k].b);
        }
    }
    /* at most max_pieces */
    CHECK(kb_fit_pieces(x, y, NS, 3, 3.0, 0.03, 2, &p) == 0 && p.npieces == 2, "max_pieces 2 gave %d", p.npieces);
    CHECK(kb_fit_pieces(x, y, NS, 3, 3.0, 0.03, 1, &p) == 0 && p.npieces == 1, "max_pieces 1 gave %d", p.npieces);
    CHECK(p.start[0] == 0 && p.start[1] == NS, "one piece covers every point");
}

/* costs clamped at zero do not count; all zero gives a zero line */
static void test_zeros(void)
{
    double x[6] = {1, 2, 4, 8, 16, 32}, y[6] = {0, 100.5, 101, 102, 104, 108};
    kb_line l;
    CHECK(kb_fit_line(x, y, 6, &l) == 0 && within(l.a, 100, 1e-9) && within(l.b, 0.25, 1e-9), "zeros: a %g b %g",
          l.a, l.b);
    double z[3] = {0, 0, -1};
    CHECK(kb_fit_line(x, z, 3, &l) == 0 && l.a == 0 && l.b == 0, "all zero: a %g b %g", l.a, l.b);
    /* a copy: 0.5 ns + 0.05 ns/B over 1 B .. 1 MiB, timed to +-1 ns: the
     * floored fit gets the per-byte cost within 5%, the plain relative fit
     * lets the sub-nanosecond points decide it */
    double xs[21], ys[21];
    uint64_t st = 42;
    for (int i = 0; i < 21; i++) {
        xs[i] = (double)(1u << i);
        ys[i] = 0.5 + 0.05 * xs[i] + noise(&st, 1.0);
        if (ys[i] < 0.1)
            ys[i] = 0.1;
    }
    CHECK(kb_fit_line_floor(xs, ys, 21, 20.0, &l) == 0 && within(l.b, 0.05, 0.05) && fabs(l.a) < 5,
          "floored fit: a %g b %g", l.a, l.b);
    CHECK(kb_fit_line_floor(xs, ys, 21, -1, &l) == -1, "negative floor accepted");
    double v[10] = {5, 1, 1, 1, 1, 1, 1, 1, 1, 100};
    CHECK(within(kb_trimmed_mean(v, 10, 0.1), 1.5, 1e-12), "trimmed mean %g", kb_trimmed_mean(v, 10, 0.1));
    /* descheduled samples: above 5x the median (4) dropped, order kept */
    double d[7] = {3, 25, 2, 1171, 4, 15, 3};
    int k = kb_drop_outliers(d, 7, 5.0, 0.0);
    CHECK(k == 5 && d[0] == 3 && d[1] == 2 && d[2] == 4 && d[3] == 15 && d[4] == 3, "outliers: kept %d", k);
    /* the floor: 2 ns medians of a coarse clock keep samples up to 5 * 20 */
    double f[5] = {2, 2, 90, 2, 120};
    k = kb_drop_outliers(f, 5, 5.0, 20.0);
    CHECK(k == 4 && f[2] == 90 && f[3] == 2, "outliers with floor: kept %d", k);
    CHECK(kb_drop_outliers(f, 0, 5.0, 0.0) == 0, "outliers of nothing");
}

static void test_bad_input(void)
{
    double x[3] = {1, 2, 2}, y[3] = {1, 2, 3};
    kb_line l;
    kb_pieces p;
    CHECK(kb_fit_line(x, y, 0, &l) == -1, "n = 0 accepted");
    CHECK(kb_fit_pieces(x, y, 3, 2, 3.0, 0.03, 8, &p) == -1, "x not increasing accepted");
    double xi[3] = {1, 2, 3};
    CHECK(kb_fit_pieces(xi, y, 3, 2, 3.0, 0.03, 9, &p) == -1, "max_pieces 9 accepted");
    CHECK(kb_fit_pieces(x, y, 2, 1, 3.0, 0.03, 8, &p) == -1, "min_pts 1 accepted");
    double w[2] = {1, -1};
    CHECK(kb_fit_line_w(x, y, w, 2, &l) == -1, "negative weight accepted");
    double yn[2] = {1, NAN};
    CHECK(kb_fit_line_w(x, yn, NULL, 2, &l) == -1, "NaN accepted");
}

static void test_sizes(void)
{
    size_t s[40];
    const char *why;
    int n = kb_size_list("1:1M", 0, s, 40, &why);
    CHECK(n == 21 && s[0] == 1 && s[20] == 1048576, "1:1M gave %d sizes", n);
    n = kb_size_list("0:8", 1, s, 40, &why);
    CHECK(n == 5 && s[0] == 0 && s[1] == 1 && s[4] == 8, "0:8 gave %d sizes", n);
    n = kb_size_list("0:8", 0, s, 40, &why);
    CHECK(n == 4 && s[0] == 1, "0:8 without zero gave %d sizes", n);
    n = kb_size_list("8,1K,64K", 0, s, 40, &why);
    CHECK(n == 3 && s[0] == 8 && s[1] == 1024 && s[2] == 65536, "list gave %d sizes", n);
    n = kb_size_list("100", 0, s, 40, &why);
    CHECK(n == 7 && s[6] == 64, "100 gave %d sizes", n);
    n = kb_size_list("3:3", 0, s, 40, &why);
    CHECK(n == 1 && s[0] == 3, "3:3 gave %d sizes", n);
    const char *bad[] = {"", "x", "8:4", "8,4", "8,,16", "1:", ":4", "4G", "1:1M", "0", "-1", "1K:2Q"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int max = i == 8 ? 5 : 40; /* "1:1M" with room for 5 */
        n = kb_size_list(bad[i], 0, s, max, &why);
        CHECK(n == -1 && why && *why, "\"%s\" accepted (%d sizes)", bad[i], n);
    }
}

/* kb_fit_pieces_multi: the shape of Open MPI's shared memory measured
 * here (loggp, 22 Nov 2026): RTT/2 grows smoothly across the fast boxes'
 * end at 256 B (0.27 -> 0.29 us) while the sender's overhead triples
 * (0.13 -> 0.41 us) and so does the gap; rendezvous from 8 KiB in all of
 * them. Jointly: a boundary between 256 and 512 B in every noisy
 * repetition (RTT/2 alone, a line up to 4 KiB, gives none there), the
 * lines in out those of RTT/2; one series reproduces kb_fit_pieces. */
static void test_multi(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    double x[NS], y[NS], os[NS], g[NS];
    sizes(x);
    for (int rep = 0; rep < 20; rep++) {
        for (int i = 0; i < NS; i++) {
            const double nz = rep == 0 ? 0.0 : 0.01;
            y[i] = (x[i] <= 4096 ? 215.0 + 0.04 * x[i] : 1200.0 + 0.1 * x[i]) * (1.0 + noise(&s, nz));
            os[i] = (x[i] <= 256 ? 125.0 : x[i] <= 4096 ? 400.0 + 0.03 * x[i] : 1200.0 + 0.1 * x[i]) *
                    (1.0 + noise(&s, nz));
            g[i] = (x[i] <= 256 ? 122.0 + 0.1 * x[i] : x[i] <= 4096 ? 340.0 + 0.03 * x[i] : 1150.0 + 0.1 * x[i]) *
                   (1.0 + noise(&s, nz));
        }
        const double *ys[] = {y, os, g};
        kb_pieces p, q;
        CHECK(kb_fit_pieces_multi(x, ys, 3, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == 0, "multi %d failed", rep);
        int at256 = 0;
        for (int k = 1; k < p.npieces; k++)
            at256 |= x[p.start[k] - 1] == 256 && x[p.start[k]] == 512;
        CHECK(at256, "multi %d: no boundary at 256|512 B (%d pieces, the first ends at %g)", rep, p.npieces,
              x[p.start[1] - 1]);
        for (int k = 0; k < p.npieces; k++) {
            kb_line l;
            kb_fit_line(x + p.start[k], y + p.start[k], p.start[k + 1] - p.start[k], &l);
            CHECK(l.a == p.piece[k].a && l.b == p.piece[k].b, "multi %d: piece %d's line is not RTT/2's", rep, k);
        }
        CHECK(kb_fit_pieces_multi(x, ys, 1, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == 0 &&
                  kb_fit_pieces(x, y, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &q) == 0 && p.npieces == q.npieces &&
                  !memcmp(p.start, q.start, sizeof p.start),
              "multi %d: one series differs from kb_fit_pieces", rep);
    }
    const double *bad[] = {x, NULL};
    kb_pieces p;
    CHECK(kb_fit_pieces_multi(x, bad, 2, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == -1, "a NULL series accepted");
    CHECK(kb_fit_pieces_multi(x, bad, 0, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == -1, "no series accepted");
}

/* kb_split_pieces_for: RTT/2 with a jump at 8 KiB (two pieces); the
 * exchange z follows a line in the first piece and changes slope at 64 KiB
 * inside the second (0.06 -> 0.14 ns/byte, no jump): one split there, the
 * lines through z of the three pieces within 5%, the refitted y lines too;
 * with z on the lines of the two y pieces nothing splits. */
static void test_split_for(void)
{
    uint64_t s = 0x243f6a8885a308d3ull;
    double x[NS], y[NS], z[NS], z2[NS];
    sizes(x);
    for (int rep = 0; rep < 10; rep++) {
        for (int i = 0; i < NS; i++) {
            const double k = 65536.0, nz = 1.0 + noise(&s, rep == 0 ? 0.0 : 0.01);
            y[i] = (x[i] <= 8192 ? 300.0 + 0.10 * x[i] : 1000.0 + 0.10 * x[i]) * nz;
            z[i] = (x[i] <= 8192      ? 500.0 + 0.2 * x[i]
                    : x[i] <= k       ? 2000.0 + 0.06 * x[i]
                                      : 2000.0 + 0.06 * k + 0.14 * (x[i] - k)) * nz;
            z2[i] = (x[i] <= 8192 ? 500.0 + 0.2 * x[i] : 2000.0 + 0.06 * x[i]) * nz;
        }
        kb_pieces p, q;
        int split[KB_MAX_PIECES + 1];
        CHECK(kb_fit_pieces(x, y, NS, 3, 3.0, 0.03, KB_MAX_PIECES, &p) == 0 && p.npieces == 2, "y pieces: %d",
              p.npieces);
        q = p;
        CHECK(kb_split_pieces_for(x, y, z2, NS, 3, 0.05, KB_MAX_PIECES, &q, split) == 0 && q.npieces == 2 &&
                  !split[1],
              "z on the y pieces' lines split them (%d pieces)", q.npieces);
        CHECK(kb_split_pieces_for(x, y, z, NS, 3, 0.05, KB_MAX_PIECES, &p, split) == 1 && p.npieces == 3,
              "split %d: %d pieces, expected 3", rep, p.npieces);
        if (p.npieces != 3)
            continue;
        CHECK(!split[1] && split[2], "split %d: marks %d %d", rep, split[1], split[2]);
        CHECK(x[p.start[2] - 1] == 65536 && x[p.start[2]] == 131072, "split %d: at %g..%g, expected 64K..128K", rep,
              x[p.start[2] - 1], x[p.start[2]]);
        kb_line l1, l2;
        kb_fit_line(x + p.start[1], z + p.start[1], p.start[2] - p.start[1], &l1);
        kb_fit_line(x + p.start[2], z + p.start[2], NS - p.start[2], &l2);
        CHECK(within(l1.b, 0.06, 0.05) && within(l2.b, 0.14, 0.05), "split %d: z slopes %g %g", rep, l1.b, l2.b);
        CHECK(within(p.piece[1].b, 0.10, 0.05) && within(p.piece[2].b, 0.10, 0.05) &&
                  within(p.piece[1].a, 1000.0, 0.05),
              "split %d: y lines %g + %g s, %g s", rep, p.piece[1].a, p.piece[1].b, p.piece[2].b);
    }
    kb_pieces p = {.npieces = 1, .start = {0, NS}};
    int split[KB_MAX_PIECES + 1];
    CHECK(kb_split_pieces_for(x, y, NULL, NS, 3, 0.05, 8, &p, split) == -1, "NULL z accepted");
    CHECK(kb_split_pieces_for(x, y, z, NS - 1, 3, 0.05, 8, &p, split) == -1, "pieces not covering n accepted");
}

/* kb_fit_cost3: t = c0 + (k - 1) c1 + n c2 through three points. */
static void test_cost3(void)
{
    double c0, c1, c2;
    /* MPICH-like direct put: 900 ns, 120 ns per further operation, 0.05
     * ns/B; the calibration's shapes 1 x 8 B, 1 x 1 MiB, 64 x 8 B:
     * 900 + 0.4 = 900.4; 900 + 52428.8 = 53328.8; 900 + 63 * 120 + 25.6 = 8485.6 */
    const double k[3] = {1, 1, 64}, n[3] = {8, 1048576, 512}, t[3] = {900.4, 53328.8, 8485.6};
    CHECK(kb_fit_cost3(k, n, t, &c0, &c1, &c2) == 0, "cost3 refused a determined system");
    CHECK(within(c0, 900, 1e-9) && within(c1, 120, 1e-9) && within(c2, 0.05, 1e-9), "cost3: %g %g %g", c0, c1,
          c2);
    /* the datatype shapes 2 x 8 B, 4096 x 8 B, 4 x 256 KiB: 1650 + 4 (k - 1) + 0.55 n */
    const double kd[3] = {2, 4096, 4}, nd[3] = {16, 32768, 1048576};
    double td[3];
    for (int i = 0; i < 3; i++)
        td[i] = 1650 + 4 * (kd[i] - 1) + 0.55 * nd[i];
    CHECK(kb_fit_cost3(kd, nd, td, &c0, &c1, &c2) == 0 && within(c0, 1650, 1e-9) && within(c1, 4, 1e-9) &&
              within(c2, 0.55, 1e-9),
          "cost3 datatype: %g %g %g", c0, c1, c2);
    /* noise making the per-operation slope negative: 300, 300 + 1 MiB * 0.04
     * = 42243.84, and 64 x 8 B measured at 280 (below point 0): c1 dropped,
     * c2 through points 0 and 1 = (42243.84 - 300) / (1048576 - 8) */
    const double tn[3] = {300, 42243.84, 280};
    CHECK(kb_fit_cost3(k, n, tn, &c0, &c1, &c2) == 0 && c1 == 0 && within(c2, 41943.84 / 1048568.0, 1e-12) &&
              within(c0, 300 - 8 * c2, 1e-12),
          "cost3 negative ts: %g %g %g", c0, c1, c2);
    /* the byte slope negative: 1000 (1 x 8), 900 (1 x 1 MiB), 1000 + 63 * 50
     * (64 x 8): c2 dropped, c1 = 3150 / 63 = 50 through points 0 and 2 */
    const double tb[3] = {1000, 900, 4150};
    CHECK(kb_fit_cost3(k, n, tb, &c0, &c1, &c2) == 0 && c2 == 0 && within(c1, 50, 1e-12) && within(c0, 1000, 1e-12),
          "cost3 negative tn: %g %g %g", c0, c1, c2);
    /* an undetermined system (points 1 and 2 in proportion) is refused */
    const double kp[3] = {1, 2, 3}, np[3] = {0, 10, 20}, tp[3] = {1, 2, 3};
    CHECK(kb_fit_cost3(kp, np, tp, &c0, &c1, &c2) == -1 && c0 == 0 && c1 == 0 && c2 == 0, "cost3 undetermined");
}

/* the two-slope copy line (kb_fit_knee_floor): a known knee recovered
 * exactly and under +-3% noise; a noisy straight line and too few points
 * keep one line, the floor-weighted line; a falling cost gets no negative
 * slope */
static void test_knee(void)
{
    double x[NS], y[NS];
    sizes(x);
    for (int i = 0; i < NS; i++) /* loggp's private copy here: 0.011 ns/B in the first-level cache, 0.024 beyond */
        y[i] = 4.0 + 0.011 * (x[i] < 16384 ? x[i] : 16384) + (x[i] > 16384 ? 0.024 * (x[i] - 16384) : 0);
    kb_knee k;
    CHECK(kb_fit_knee_floor(x, y, NS, 20.0, 3, &k) == 0, "knee fit failed");
    CHECK(k.knee == 16384 && within(k.a, 4.0, 1e-6) && within(k.b, 0.011, 1e-6) && within(k.c, 0.024, 1e-6),
          "exact knee: knee %g a %g b %g c %g", k.knee, k.a, k.b, k.c);
    CHECK(k.rms < 1e-9 && k.rms_one > 0.05, "exact knee: rms %g, one line's %g", k.rms, k.rms_one);

    uint64_t s = 2463534242ull;
    double yn[NS];
    for (int i = 0; i < NS; i++)
        yn[i] = y[i] * (1.0 + noise(&s, 0.03));
    CHECK(kb_fit_knee_floor(x, yn, NS, 20.0, 3, &k) == 0 && k.knee == 16384 && within(k.b, 0.011, 0.1) &&
              within(k.c, 0.024, 0.05),
          "noisy knee: knee %g b %g c %g", k.knee, k.b, k.c);

    /* a straight line with +-3% noise: no knee, the floor-weighted line */
    for (int i = 0; i < NS; i++)
        yn[i] = (30.0 + 0.02 * x[i]) * (1.0 + noise(&s, 0.03));
    kb_line l;
    CHECK(kb_fit_line_floor(x, yn, NS, 20.0, &l) == 0 && kb_fit_knee_floor(x, yn, NS, 20.0, 3, &k) == 0, "fits failed");
    CHECK(k.knee == 0 && k.a == l.a && k.b == l.b && k.c == l.b && k.rms == k.rms_one,
          "straight line: knee %g a %g/%g b %g/%g c %g", k.knee, k.a, l.a, k.b, l.b, k.c);

    /* a cost that falls beyond 4 KiB: no negative slope comes out */
    for (int i = 0; i < NS; i++)
        yn[i] = x[i] <= 4096 ? 10.0 + 0.05 * x[i] : 10.0 + 0.05 * 4096 - 1e-4 * (x[i] - 4096);
    CHECK(kb_fit_knee_floor(x, yn, NS, 20.0, 3, &k) == 0 && k.b >= 0 && k.c >= 0, "falling: knee %g b %g c %g",
          k.knee, k.b, k.c);

    /* five points, three needed each side: no knee can be placed */
    CHECK(kb_fit_knee_floor(x + 12, y + 12, 5, 20.0, 3, &k) == 0 && k.knee == 0, "few points: knee %g", k.knee);

    double bad[3] = {1, NAN, 3};
    CHECK(kb_fit_knee_floor(x, y, 0, 20.0, 3, &k) == -1 && kb_fit_knee_floor(x, y, NS, -1.0, 3, &k) == -1 &&
              kb_fit_knee_floor(x, y, NS, 20.0, 1, &k) == -1 && kb_fit_knee_floor(x, bad, 3, 20.0, 2, &k) == -1 &&
              kb_fit_knee_floor(x, y, NS, 20.0, 3, NULL) == -1,
          "bad arguments accepted");
}

int main(void)
{
    test_exact_line();
    test_noisy_line();
    test_protocol_switch();
    test_split_for();
    test_multi();
    test_bad_input();
    test_zeros();
    test_sizes();
    test_cost3();
    test_knee();
    double v[4] = {4, 1, 3, 2};
    CHECK(kb_median(v, 4) == 2.5 && kb_median(v, 3) == 2, "median");
    if (fails)
        printf("%ld failed\n", fails);
    else
        printf("test_fit: all passed\n");
    return fails ? 1 : 0;
}
