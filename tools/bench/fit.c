/*
 * Least-squares fits for kport-bench's machine measurements; the manual is
 * fit.h.
 */
#include "fit.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double rel_err(double y, double f)
{
    return y != 0 ? (y - f) / y : y - f;
}

int kb_fit_line_w(const double *x, const double *y, const double *w, int n, kb_line *out)
{
    if (n < 1 || !x || !y || !out)
        return -1;
    double sw = 0, swx = 0, swy = 0;
    for (int i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        if (!isfinite(wi) || wi < 0 || !isfinite(x[i]) || !isfinite(y[i]))
            return -1;
        sw += wi, swx += wi * x[i], swy += wi * y[i];
    }
    if (sw <= 0)
        return -1;
    /* centred on the weighted means: no cancellation at large x */
    const double xm = swx / sw, ym = swy / sw;
    double sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        sxx += wi * (x[i] - xm) * (x[i] - xm);
        sxy += wi * (x[i] - xm) * (y[i] - ym);
    }
    out->b = sxx > 0 ? sxy / sxx : 0.0;
    out->a = ym - out->b * xm;
    out->n = n;
    double e2 = 0;
    for (int i = 0; i < n; i++) {
        double e = rel_err(y[i], out->a + out->b * x[i]);
        e2 += e * e;
    }
    out->rms = sqrt(e2 / n);
    return 0;
}

int kb_fit_line(const double *x, const double *y, int n, kb_line *out)
{
    if (n < 1 || !x || !y || !out)
        return -1;
    double *w = malloc((size_t)n * sizeof(double));
    if (!w)
        return -1;
    int pos = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        w[i] = y[i] > 0 ? 1.0 / (y[i] * y[i]) : 0.0;
        pos += y[i] > 0;
        if (!isfinite(x[i]) || !isfinite(y[i]))
            rc = -1;
    }
    if (rc == 0 && pos == 0) {
        out->a = out->b = out->rms = 0;
        out->n = n;
    } else if (rc == 0) {
        rc = kb_fit_line_w(x, y, w, n, out);
    }
    free(w);
    return rc;
}

/* the weight of a point y with a floor: 1/(|y| + floor)^2 (1 when both are 0) */
static double floor_weight(double y, double floor)
{
    const double d = fabs(y) + floor;
    return d > 0 ? 1.0 / (d * d) : 1.0;
}

int kb_fit_line_floor(const double *x, const double *y, int n, double floor, kb_line *out)
{
    if (n < 1 || !x || !y || !out || !(floor >= 0))
        return -1;
    double *w = malloc((size_t)n * sizeof(double));
    if (!w)
        return -1;
    for (int i = 0; i < n; i++)
        w[i] = floor_weight(y[i], floor);
    int rc = kb_fit_line_w(x, y, w, n, out);
    free(w);
    return rc;
}

/* a x = r for 3 unknowns by Gaussian elimination with partial pivoting;
 * -1 when singular */
static int solve3(double a[3][3], double r[3], double x[3])
{
    for (int c = 0; c < 3; c++) {
        int p = c;
        for (int i = c + 1; i < 3; i++)
            if (fabs(a[i][c]) > fabs(a[p][c]))
                p = i;
        if (!(fabs(a[p][c]) > 0))
            return -1;
        for (int j = 0; j < 3; j++) {
            double t = a[c][j];
            a[c][j] = a[p][j], a[p][j] = t;
        }
        double t = r[c];
        r[c] = r[p], r[p] = t;
        for (int i = c + 1; i < 3; i++) {
            double f = a[i][c] / a[c][c];
            for (int j = c; j < 3; j++)
                a[i][j] -= f * a[c][j];
            r[i] -= f * r[c];
        }
    }
    for (int c = 2; c >= 0; c--) {
        double s = r[c];
        for (int j = c + 1; j < 3; j++)
            s -= a[c][j] * x[j];
        x[c] = s / a[c][c];
    }
    return 0;
}

static double knee_eval(const kb_knee *k, double x)
{
    return k->knee > 0 && x > k->knee ? k->a + k->b * k->knee + k->c * (x - k->knee) : k->a + k->b * x;
}

/* weighted squared error (floor weights) and rms relative error of k */
static void knee_err(const double *x, const double *y, int n, double floor, const kb_knee *k, double *wsse,
                     double *rms)
{
    double w2 = 0, e2 = 0;
    for (int i = 0; i < n; i++) {
        double f = knee_eval(k, x[i]), e = rel_err(y[i], f);
        w2 += floor_weight(y[i], floor) * (y[i] - f) * (y[i] - f);
        e2 += e * e;
    }
    *wsse = w2;
    *rms = sqrt(e2 / n);
}

int kb_fit_knee_floor(const double *x, const double *y, int n, double floor, int min_pts, kb_knee *out)
{
    if (n < 1 || min_pts < 2 || !x || !y || !out || !(floor >= 0))
        return -1;
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i]) || !isfinite(y[i]))
            return -1;
    kb_line l;
    if (kb_fit_line_floor(x, y, n, floor, &l))
        return -1;
    kb_knee one = {.a = l.a, .b = l.b, .c = l.b, .knee = 0}, best = one;
    double one_w, best_w;
    knee_err(x, y, n, floor, &one, &one_w, &one.rms);
    best_w = one_w;
    const double xs = x[n - 1] > 0 ? x[n - 1] : 1.0; /* columns scaled to O(1) */
    for (int kx = min_pts - 1; kx < n - min_pts; kx++) {
        const double K = x[kx];
        if (!(K > 0) || !(x[kx + 1] > K))
            continue;
        double m[3][3] = {{0}}, r[3] = {0}, s[3];
        for (int i = 0; i < n; i++) {
            const double w = floor_weight(y[i], floor);
            double v[3] = {1.0, (x[i] < K ? x[i] : K) / xs, (x[i] > K ? x[i] - K : 0) / xs};
            for (int p = 0; p < 3; p++) {
                for (int q = 0; q < 3; q++)
                    m[p][q] += w * v[p] * v[q];
                r[p] += w * v[p] * y[i];
            }
        }
        if (solve3(m, r, s))
            continue;
        kb_knee k = {.a = s[0], .b = s[1] / xs, .c = s[2] / xs, .knee = K};
        if (!(k.b >= 0) || !(k.c >= 0))
            continue;
        double w2, rms;
        knee_err(x, y, n, floor, &k, &w2, &rms);
        k.rms = rms;
        if (w2 < best_w)
            best = k, best_w = w2;
    }
    if (best.knee > 0 && !(best_w <= one_w / 2))
        best = one;
    best.rms_one = one.rms;
    *out = best;
    return 0;
}

/* the summed squared relative error of the line through x, y [lo, hi) */
static double line_sse(const double *x, const double *y, int lo, int hi)
{
    kb_line l;
    kb_fit_line(x + lo, y + lo, hi - lo, &l);
    return l.rms * l.rms * (hi - lo);
}

int kb_split_pieces_for(const double *x, const double *y, const double *z, int n, int min_pts, double noise,
                        int max_pieces, kb_pieces *pcs, int *split)
{
    if (!x || !y || !z || !pcs || !split || min_pts < 2 || max_pieces < 1 || max_pieces > KB_MAX_PIECES ||
        pcs->npieces < 1 || pcs->npieces > KB_MAX_PIECES || pcs->start[pcs->npieces] != n)
        return -1;
    for (int p = 0; p <= KB_MAX_PIECES; p++)
        split[p] = 0;
    int made = 0;
    for (int p = 0; p < pcs->npieces && pcs->npieces < max_pieces;) {
        const int lo = pcs->start[p], hi = pcs->start[p + 1];
        int best = -1;
        const double whole = line_sse(x, z, lo, hi);
        double bsse = whole;
        if (hi - lo >= 2 * min_pts && sqrt(whole / (hi - lo)) > noise)
            for (int j = lo + min_pts; j <= hi - min_pts; j++) {
                const double e = line_sse(x, z, lo, j) + line_sse(x, z, j, hi);
                if (e < bsse) {
                    bsse = e;
                    best = j;
                }
            }
        if (best < 0 || bsse > 0.5 * whole) {
            p++;
            continue;
        }
        for (int q = pcs->npieces; q > p; q--) {
            pcs->start[q + 1] = pcs->start[q];
            pcs->piece[q] = pcs->piece[q - 1];
            split[q] = split[q - 1];
        }
        pcs->npieces++;
        pcs->start[p + 1] = best;
        split[p + 1] = 1;
        kb_fit_line(x + lo, y + lo, best - lo, &pcs->piece[p]);
        kb_fit_line(x + best, y + best, hi - best, &pcs->piece[p + 1]);
        made++;
    }
    return made;
}

int kb_fit_pieces_multi(const double *x, const double *const *ys, int m, int n, int min_pts, double penalty,
                        double noise, int max_pieces, kb_pieces *out)
{
    if (n < 1 || n > KB_FIT_MAX_POINTS || min_pts < 2 || !x || !ys || m < 1 || !out || !(penalty > 0) ||
        !(noise >= 0) || max_pieces < 1 || max_pieces > KB_MAX_PIECES)
        return -1;
    for (int i = 1; i < n; i++)
        if (!(x[i] > x[i - 1]))
            return -1;
    for (int k = 0; k < m; k++)
        if (!ys[k])
            return -1;
    const double *y = ys[0];
    memset(out, 0, sizeof(*out));
    /* cost[i][j]: sum over the series of the squared relative errors of
     * one line through [i, j) */
    static double cost[KB_FIT_MAX_POINTS][KB_FIT_MAX_POINTS + 1];
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j <= n; j++) {
            cost[i][j] = 0;
            for (int k = 0; k < m; k++) {
                kb_line l;
                if (kb_fit_line(x + i, ys[k] + i, j - i, &l))
                    return -1;
                cost[i][j] += (j - i) * l.rms * l.rms;
            }
        }
    /* best[k][j]: least cost of k pieces of >= min_pts points over [0, j); cut: where the last starts */
    static double best[KB_MAX_PIECES + 1][KB_FIT_MAX_POINTS + 1];
    static int cut[KB_MAX_PIECES + 1][KB_FIT_MAX_POINTS + 1];
    for (int k = 0; k <= max_pieces; k++)
        for (int j = 0; j <= n; j++)
            best[k][j] = INFINITY;
    best[0][0] = 0;
    for (int k = 1; k <= max_pieces; k++)
        for (int j = 1; j <= n; j++)
            for (int i = 0; i < j; i++) {
                int len_ok = j - i >= min_pts || (k == 1 && j == n && i == 0); /* one piece: any n */
                if (!len_ok || !isfinite(best[k - 1][i]))
                    continue;
                double c = best[k - 1][i] + cost[i][j];
                if (c < best[k][j])
                    best[k][j] = c, cut[k][j] = i;
            }
    /* how many pieces: the fewest whose error is within the noise at most,
     * and among those the least n*ln(rms^2) + penalty*k*ln(n) (the
     * Bayesian information criterion, `penalty` parameters per piece) */
    const int N = m * n; /* points of all series */
    out->rms_one = sqrt(best[1][n] / N);
    int kmax = 1;
    while (kmax < max_pieces && sqrt(best[kmax][n] / N) > noise && isfinite(best[kmax + 1][n]))
        kmax++;
    int k = 1;
    double bic_best = INFINITY;
    for (int j = 1; j <= kmax; j++) {
        double ms = best[j][n] / N;
        double bic = N * log(ms > 1e-12 ? ms : 1e-12) + penalty * m * j * log((double)N);
        if (bic < bic_best)
            bic_best = bic, k = j;
    }
    out->npieces = k;
    out->start[k] = n;
    for (int p = k, j = n; p >= 1; p--) {
        out->start[p - 1] = cut[p][j];
        j = cut[p][j];
    }
    for (int p = 0; p < k; p++)
        if (kb_fit_line(x + out->start[p], y + out->start[p], out->start[p + 1] - out->start[p], &out->piece[p]))
            return -1;
    return 0;
}

int kb_fit_pieces(const double *x, const double *y, int n, int min_pts, double penalty, double noise, int max_pieces,
                  kb_pieces *out)
{
    return kb_fit_pieces_multi(x, &y, 1, n, min_pts, penalty, noise, max_pieces, out);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double kb_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double kb_trimmed_mean(double *v, int n, double trim)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    int cut = (int)(trim * n), m = n - 2 * cut;
    if (m < 1)
        cut = 0, m = n;
    double sum = 0;
    for (int i = cut; i < cut + m; i++)
        sum += v[i];
    return sum / m;
}

int kb_drop_outliers(double *v, int n, double factor, double floor)
{
    if (n < 1)
        return 0;
    double *tmp = malloc((size_t)n * sizeof(double));
    if (!tmp)
        return n; /* keep everything rather than fail a measurement */
    memcpy(tmp, v, (size_t)n * sizeof(double));
    double med = kb_median(tmp, n);
    free(tmp);
    double limit = factor * (med > floor ? med : floor);
    int k = 0;
    for (int i = 0; i < n; i++)
        if (v[i] <= limit)
            v[k++] = v[i];
    return k;
}

int kb_parse_bytes(const char *s, size_t len, unsigned long long max, size_t *out)
{
    if (!s || len == 0 || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10); /* stops at s[len]: a separator or the end */
    if (errno)
        return -1;
    unsigned shift = 0;
    if (end < s + len && (*end == 'k' || *end == 'K'))
        shift = 10, end++;
    else if (end < s + len && (*end == 'm' || *end == 'M'))
        shift = 20, end++;
    else if (end < s + len && (*end == 'g' || *end == 'G'))
        shift = 30, end++;
    if (end != s + len || (shift && v > (ULLONG_MAX >> shift)) || (v << shift) > max ||
        (v << shift) > (unsigned long long)SIZE_MAX)
        return -1;
    *out = (size_t)(v << shift);
    return 0;
}

/* a size of the list in s[0..len): sizes are int counts of bytes in MPI */
static int parse_one(const char *s, size_t len, size_t *out) { return kb_parse_bytes(s, len, INT_MAX, out); }

int kb_size_list(const char *val, int zero_ok, size_t *sizes, int max, const char **why)
{
    static const char *const bad = "expected MIN:MAX, MAX or a list such as 8,1K,64K (bytes, at most 2G-1)";
    *why = bad;
    if (!val || max < 1)
        return -1;
    const char *colon = strchr(val, ':'), *comma = strchr(val, ',');
    int n = 0;
    if (comma) {
        const char *p = val;
        for (;;) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p), s;
            if (parse_one(p, len, &s))
                return -1;
            if ((s == 0 && !zero_ok) || (n > 0 && s <= sizes[n - 1])) {
                *why = s == 0 ? "size 0 is not measured here" : "list sizes must increase";
                return -1;
            }
            if (n == max) {
                *why = "too many sizes";
                return -1;
            }
            sizes[n++] = s;
            if (!e)
                break;
            p = e + 1;
        }
        return n;
    }
    size_t lo = 1, hi;
    if (colon) {
        if (parse_one(val, (size_t)(colon - val), &lo) || parse_one(colon + 1, strlen(colon + 1), &hi))
            return -1;
    } else if (parse_one(val, strlen(val), &hi)) {
        return -1;
    }
    if (lo > hi) {
        *why = "MIN is larger than MAX";
        return -1;
    }
    if (lo == 0) {
        if (zero_ok)
            sizes[n++] = 0;
        lo = 1;
    }
    for (size_t s = lo; s <= hi; s *= 2) {
        if (n == max) {
            *why = "too many sizes";
            return -1;
        }
        sizes[n++] = s;
        if (s > hi / 2)
            break;
    }
    if (n == 0)
        *why = "no size left (size 0 is not measured here)";
    return n > 0 ? n : -1;
}

int kb_fit_cost3(const double *k, const double *n, const double *t, double *c0, double *c1, double *c2)
{
    const double k1 = k[1] - k[0], n1 = n[1] - n[0], d1 = t[1] - t[0];
    const double k2 = k[2] - k[0], n2 = n[2] - n[0], d2 = t[2] - t[0];
    const double det = k1 * n2 - k2 * n1;
    *c0 = *c1 = *c2 = 0;
    if (!(fabs(det) > 1e-9 * (fabs(k1 * n2) + fabs(k2 * n1))))
        return -1;
    double a = (d1 * n2 - d2 * n1) / det, b = (k1 * d2 - k2 * d1) / det;
    if (a < 0) { /* per operation: noise; the byte slope through the longer point */
        int j = fabs(n2) > fabs(n1) ? 2 : 1;
        a = 0, b = (t[j] - t[0]) / (n[j] - n[0]);
    }
    if (b < 0) {
        int j = fabs(k2) > fabs(k1) ? 2 : 1;
        b = 0, a = k[j] != k[0] ? (t[j] - t[0]) / (k[j] - k[0]) : 0;
    }
    *c1 = a > 0 ? a : 0;
    *c2 = b > 0 ? b : 0;
    const double r = t[0] - (k[0] - 1) * *c1 - n[0] * *c2;
    *c0 = r > 0 ? r : 0;
    return 0;
}
