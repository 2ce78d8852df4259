/*
 * Fitting for kport-bench's machine measurements (loggp, fanout,
 * concurrency): least-squares lines, a two-piece fit with a breakpoint
 * search (a protocol change such as eager to rendezvous), and the list of
 * message sizes they are fed. Pure arithmetic, no MPI: tests/unit/test_fit.c
 * recovers known parameters from synthetic data.
 *
 * Weights. Timings over sizes from 1 byte to a megabyte span four decades;
 * an unweighted fit in nanoseconds lets the largest sizes decide the fixed
 * cost, which then misses the small sizes by 100% or more. The fits below
 * minimise the *relative* squared error, sum ((y_i - f(x_i)) / y_i)^2
 * (weights 1/y_i^2), so every size counts alike and the fixed cost comes
 * from the small sizes, the per-byte cost from the large ones.
 */
#ifndef KPORT_BENCH_FIT_H
#define KPORT_BENCH_FIT_H

#include <stddef.h>

/* y = a + b*x over n points; rms: root mean square relative error. */
typedef struct kb_line {
    double a, b, rms;
    int n;
} kb_line;

/* Weighted least squares (w may be NULL: unweighted). n >= 1; one point or
 * points all at one x give b = 0 and a = their weighted mean. Returns 0, or
 * -1 for n < 1 or a non-finite or negative weight. */
int kb_fit_line_w(const double *x, const double *y, const double *w, int n, kb_line *out);
/* The relative fit: weights 1/y^2; points with y <= 0 (a cost clamped at
 * zero, not a measurement) get weight 0, and without any positive y the
 * line is a = b = 0. */
int kb_fit_line(const double *x, const double *y, int n, kb_line *out);
/* The same with weights 1/(y + floor)^2 (floor >= 0): costs of a few
 * nanoseconds, below a clock's resolution, then weigh no more than one of
 * `floor` ns instead of deciding the line alone. */
int kb_fit_line_floor(const double *x, const double *y, int n, double floor, kb_line *out);

/* A line whose slope changes once, continuously: y = a + b*x up to the
 * knee, a + b*knee + c*(x - knee) beyond it (a copy whose buffers fit the
 * first-level cache, then one whose do not). */
typedef struct kb_knee {
    double a, b, c; /* c == b when knee == 0 */
    double knee;    /* 0: one line (a, b) */
    double rms;     /* root mean square relative error of what is returned */
    double rms_one; /* the single line's */
} kb_knee;

/* The knee is searched at the measured x (x increasing), with at least
 * min_pts points at or below it and min_pts beyond, weights 1/(y + floor)^2
 * as kb_fit_line_floor; it is kept when it at least halves the weighted
 * squared error of kb_fit_line_floor's single line and both slopes come out
 * >= 0; otherwise out holds that line (knee 0, c = b). Returns 0, or -1 for
 * bad arguments (n < 1, min_pts < 2, floor < 0, a non-finite value). */
int kb_fit_knee_floor(const double *x, const double *y, int n, double floor, int min_pts, kb_knee *out);

#define KB_MAX_PIECES 8
#define KB_FIT_MAX_POINTS 64

/* Consecutive pieces: piece p holds points [start[p], start[p+1]). */
typedef struct kb_pieces {
    int npieces;                  /* 1 .. KB_MAX_PIECES */
    int start[KB_MAX_PIECES + 1]; /* start[0] = 0, start[npieces] = n */
    kb_line piece[KB_MAX_PIECES];
    double rms_one;               /* the single line's rms relative error */
} kb_pieces;

/* Piecewise linear fit (a protocol change - a jump or a change of slope:
 * Open MPI's fast box and eager limits, rendezvous, a cache size - starts
 * a new piece). For every k up to max_pieces (1 .. KB_MAX_PIECES) the best
 * split into k pieces of at least min_pts points (least summed squared
 * relative error, by dynamic programming) is found. The number of pieces:
 * no more than the fewest whose rms relative error is within `noise`
 * (0.03 = 3%), and among those the least n*ln(rms^2) + penalty*k*ln(n)
 * (the Bayesian information criterion; penalty 3: two coefficients and a
 * breakpoint per piece), so a noisy straight line stays one piece. At most
 * KB_FIT_MAX_POINTS points, x increasing. Returns 0, or -1 for bad
 * arguments. Not thread-safe (static tables). */
int kb_fit_pieces(const double *x, const double *y, int n, int min_pts, double penalty, double noise, int max_pieces,
                  kb_pieces *out);
/* The same over m series measured at the same x (ys[0..m), each n
 * points): the pieces that fit all of them together (the summed squared
 * relative errors of every series; the criterion counts m*n points and
 * penalty per series and piece); the lines in out are those through ys[0].
 * A protocol change may show in one quantity and not in another (Open
 * MPI's fast boxes end at 256 B: the sender's overhead and the gap triple
 * from 256 to 512 B while RTT/2 moves 8 %). */
int kb_fit_pieces_multi(const double *x, const double *const *ys, int m, int n, int min_pts, double penalty,
                        double noise, int max_pieces, kb_pieces *out);

/* A second quantity z measured at the same x may change slope inside a
 * piece of pcs (fitted on y): a piece whose line through z misses by more
 * than `noise` rms relative error is split at the point that fits z best
 * (min_pts points a side at least) when that halves z's summed squared
 * error, and both halves get their lines through y refitted; repeated
 * until no piece splits or there are max_pieces (<= KB_MAX_PIECES).
 * split[p] = 1 (p >= 1) marks a piece that starts at such a split, 0 the
 * others (split holds KB_MAX_PIECES + 1). Returns the number of splits
 * made, or -1 for bad arguments. */
int kb_split_pieces_for(const double *x, const double *y, const double *z, int n, int min_pts, double noise,
                        int max_pieces, kb_pieces *pcs, int *split);

/* A cost t = c0 + (k - 1) c1 + n c2 (k operations or chunks, n bytes)
 * through three timings t[i] of k[i] and n[i], exactly; point 0 is the
 * smallest. A term the noise makes negative is dropped (0) and the other
 * slope taken through point 0 and the point that sets it (the one of
 * larger n, or of larger k); c0 is then what point 0 leaves, at least 0.
 * Returns 0, or -1 (c0 = c1 = c2 = 0) when the three points do not
 * determine both slopes (k and n of points 1 and 2 in proportion). */
int kb_fit_cost3(const double *k, const double *n, const double *t, double *c0, double *c1, double *c2);

/* The median of v[0..n) (n >= 1); sorts v. */
double kb_median(double *v, int n);
/* The mean of the middle of v[0..n) after sorting: the lowest and highest
 * `trim` fraction (0 <= trim < 0.5) left out. A timer that ticks in steps
 * of 10-20 ns gives medians of 0 or one step for short operations; the
 * mean of many samples resolves them. */
double kb_trimmed_mean(double *v, int n, double trim);
/* Drops the samples of v[0..n) above factor * max(median, floor) - a
 * process descheduled during a sample (a context switch, a time slice of
 * another process on a loaded machine) gives times many times the median -
 * keeping the others in place, in their order. Returns how many are kept
 * (at least half of them: the median and all below); n < 1: 0. */
int kb_drop_outliers(double *v, int n, double factor, double floor);

/* A non-negative decimal integer with an optional K/M/G suffix (binary
 * multiples) in s[0..len), where s[len] is not a digit (a separator or the
 * end of the string), at most max: 0 and *out, or -1. The one size parser
 * of kport-bench (kb_parse_size, the lists below). */
int kb_parse_bytes(const char *s, size_t len, unsigned long long max, size_t *out);

/* Message sizes from an -m value: "MIN:MAX" (MIN, 2*MIN, ... up to MAX, MIN
 * 0 counts as 1 unless zero_ok, when 0 comes first), "MAX" (1:MAX) or a
 * comma-separated list "8,1K,64K" (strictly increasing); K/M/G suffixes.
 * Stores at most max sizes; returns their number, or -1 with a reason in
 * why (a static string). */
int kb_size_list(const char *val, int zero_ok, size_t *sizes, int max, const char **why);

#endif
