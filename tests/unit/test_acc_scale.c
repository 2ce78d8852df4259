/*
 * kp_acc_scale (src/strided/api.c), the accumulate's scaling, against the
 * scalar formula dst[i] = scale * src[i] computed here: every type (int,
 * long, float, double), every length 0..67 elements plus a tail of 0..7
 * stray bytes (left as they were), source and destination at every byte
 * offset 0..7 (unaligned vectors), in place and between two buffers; the
 * bytes past the end untouched. No MPI communication.
 */
#include "strided/strided.h"

#include "check.h"

#include <stdio.h>
#include <string.h>

/* element k's value: small enough to scale without overflow or rounding */
static void put_value(int type, unsigned char *e, int k)
{
    if (type == KP_ACC_INT) {
        int v = (k * 37 % 2001) - 1000;
        memcpy(e, &v, sizeof v);
    } else if (type == KP_ACC_LONG) {
        long v = (long)(k * 91 % 4001) - 2000;
        memcpy(e, &v, sizeof v);
    } else if (type == KP_ACC_FLOAT) {
        float v = (float)(k - 30) * 0.25f;
        memcpy(e, &v, sizeof v);
    } else {
        double v = (double)(k - 30) * 0.125;
        memcpy(e, &v, sizeof v);
    }
}

/* out = scale * in, one element, the formula computed here */
#define EXPECT(T)                                                                                                    \
    do {                                                                                                             \
        T a, v;                                                                                                      \
        memcpy(&a, scale, sizeof(T));                                                                                \
        memcpy(&v, in, sizeof(T));                                                                                   \
        v = (T)(a * v);                                                                                              \
        memcpy(out, &v, sizeof(T));                                                                                  \
    } while (0)

static void expect(int type, const void *scale, const unsigned char *in, unsigned char *out)
{
    if (type == KP_ACC_INT)
        EXPECT(int);
    else if (type == KP_ACC_LONG)
        EXPECT(long);
    else if (type == KP_ACC_FLOAT)
        EXPECT(float);
    else
        EXPECT(double);
}
#undef EXPECT

enum { MAXN = 67, BUF = MAXN * 8 + 64 };

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        b[i] = (unsigned char)(seed >> 16);
    }
}

static void run(int type, size_t esize, const void *scale, const char *name)
{
    unsigned char src[BUF], dst[BUF], orig[BUF], want[BUF];
    for (int n = 0; n <= MAXN; n++)
        for (int tail = 0; tail < (int)esize; tail++)
            for (int so = 0; so < 8; so++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    const int doff = inplace ? so : (so * 5 + 3) % 8;
                    const size_t bytes = (size_t)n * esize + (size_t)tail;
                    fill(src, sizeof(src), (unsigned)(n * 131 + so * 7 + tail));
                    for (int k = 0; k < n; k++)
                        put_value(type, src + so + (size_t)k * esize, k);
                    unsigned char *in = src + so;
                    unsigned char *out;
                    if (inplace) {
                        out = in;
                    } else {
                        fill(dst, sizeof(dst), (unsigned)(n + 1000));
                        out = dst + doff;
                    }
                    memcpy(orig, inplace ? src : dst, BUF);
                    memcpy(want, orig, BUF);
                    const unsigned char *inv = inplace ? orig + so : in; /* the source before the call */
                    const size_t base = (size_t)(out - (inplace ? src : dst));
                    for (int k = 0; k < n; k++)
                        expect(type, scale, inv + (size_t)k * esize, want + base + (size_t)k * esize);
                    kp_acc_scale(type, scale, (const char *)in, (char *)out, (int64_t)bytes);
                    const unsigned char *got = inplace ? src : dst;
                    CHECK(memcmp(got, want, BUF) == 0, "%s: %d elements + %d bytes, source offset %d, %s", name, n,
                          tail, so, inplace ? "in place" : "apart");
                }
}

int main(void)
{
    const int si = -3;
    const long sl = 7;
    const float sf = 2.5f;
    const double sd = -1.5;
    run(KP_ACC_INT, sizeof(int), &si, "int");
    run(KP_ACC_LONG, sizeof(long), &sl, "long");
    run(KP_ACC_FLOAT, sizeof(float), &sf, "float");
    run(KP_ACC_DOUBLE, sizeof(double), &sd, "double");
    printf("unit_acc_scale: %ld checks, %ld failed\n", checks, fails);
    return fails != 0;
}
