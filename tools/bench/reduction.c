/*
 * kport-bench's reductions: the datatypes and operations of --type and
 * --op, a plain combine loop (the bw_limit reference of allreduce), and
 * the values -c writes and checks (reduce.c, allreduce.c,
 * reduce_scatter_block.c, reduce_scatter.c).
 *
 * Values. Element i of rank r's input in call `iter` is, before it is
 * converted to the type,
 *     prod:          1 or 2 by bit 7 of h(i, iter) ^ r (signed integer
 *                    types: 1 or -1)
 *     every other:   (r + 1) + P * (h(i, iter) % m), m = 61 (int8 sums:
 *                    m as large as keeps the sum below 128; zeros and ones
 *                    by bit 7 of h ^ r above P = 11)
 * with h a 64-bit mix of i and iter. Every value is a small integer, so
 * every sum, product, maximum or minimum of them is exact in float and
 * double whatever the order of the combines (sums below 62 P^2 < 2^24 up to
 * P = 500; products at most 2^P), no signed sum or product overflows (MPI
 * leaves that undefined; unsigned types wrap, as MPI defines), and the
 * expected result is the fold over the P inputs in rank order computed
 * here in the same type. Under sum each rank's value
 * differs from every other rank's at the same element and the same call,
 * so a missing, doubled or substituted contribution changes the result; h
 * differs between neighbouring elements and calls, so a shifted block or
 * the result of an earlier call shows too. The result is compared byte by
 * byte; a wrong byte is reported with its element.
 */
#include "harness.h"

#include <string.h>

static const struct {
    const char *name;
    size_t elem;
    int integer;
} types[KB_NTYPES] = {
    [KB_T_DOUBLE] = {"double", sizeof(double), 0}, [KB_T_FLOAT] = {"float", sizeof(float), 0},
    [KB_T_INT] = {"int", sizeof(int), 1},          [KB_T_LONG] = {"long", sizeof(long), 1},
    [KB_T_INT8] = {"int8", 1, 1},                  [KB_T_UINT8] = {"uint8", 1, 1},
    [KB_T_INT64] = {"int64", 8, 1},                [KB_T_UINT64] = {"uint64", 8, 1},
};

static const char *const op_names[KB_NOPS] = {
    [KB_OP_SUM] = "sum", [KB_OP_PROD] = "prod", [KB_OP_MAX] = "max", [KB_OP_MIN] = "min",
    [KB_OP_BAND] = "band", [KB_OP_BOR] = "bor", [KB_OP_BXOR] = "bxor",
};

const char *kb_red_type_name(int type) { return type >= 0 && type < KB_NTYPES ? types[type].name : "?"; }
const char *kb_red_op_name(int op) { return op >= 0 && op < KB_NOPS ? op_names[op] : "?"; }
const char *kb_red_type_list(void) { return "double|float|int|long|int8|uint8|int64|uint64"; }
const char *kb_red_op_list(void) { return "sum|prod|max|min|band|bor|bxor"; }
size_t kb_red_elem(int type) { return types[type].elem; }

int kb_red_type_find(const char *name)
{
    for (int t = 0; t < KB_NTYPES; t++)
        if (strcmp(name, types[t].name) == 0)
            return t;
    return -1;
}

int kb_red_op_find(const char *name)
{
    for (int o = 0; o < KB_NOPS; o++)
        if (strcmp(name, op_names[o]) == 0)
            return o;
    return -1;
}

int kb_red_valid(int type, int op) { return op < KB_OP_BAND || types[type].integer; }

MPI_Datatype kb_red_mpi_type(int type)
{
    switch (type) {
    case KB_T_DOUBLE: return MPI_DOUBLE;
    case KB_T_FLOAT: return MPI_FLOAT;
    case KB_T_INT: return MPI_INT;
    case KB_T_LONG: return MPI_LONG;
    case KB_T_INT8: return MPI_INT8_T;
    case KB_T_UINT8: return MPI_UINT8_T;
    case KB_T_INT64: return MPI_INT64_T;
    default: return MPI_UINT64_T;
    }
}

MPI_Op kb_red_mpi_op(int op)
{
    switch (op) {
    case KB_OP_SUM: return MPI_SUM;
    case KB_OP_PROD: return MPI_PROD;
    case KB_OP_MAX: return MPI_MAX;
    case KB_OP_MIN: return MPI_MIN;
    case KB_OP_BAND: return MPI_BAND;
    case KB_OP_BOR: return MPI_BOR;
    default: return MPI_BXOR;
    }
}

/* The combine loops, one per type. Integers add and multiply in their
 * unsigned type U (wrapping, never undefined; floating types: U = T);
 * max and min compare in the type; BITWISE: the integer types' band, bor,
 * bxor (empty for floating types, where the options refuse them). */
#define KB_LOOP(EXPR)                                                                                         \
    for (size_t i = 0; i < n; i++)                                                                            \
        c[i] = (EXPR);                                                                                        \
    break;
#define KB_BITWISE(T)                                                                                         \
    case KB_OP_BAND: KB_LOOP((T)(a[i] & b[i]))                                                                \
    case KB_OP_BOR: KB_LOOP((T)(a[i] | b[i]))                                                                 \
    case KB_OP_BXOR: KB_LOOP((T)(a[i] ^ b[i]))
#define KB_COMBINE(NAME, T, U, BITWISE)                                                                       \
    static void combine_##NAME(int op, const void *va, const void *vb, void *vc, size_t n)                    \
    {                                                                                                         \
        const T *a = va, *b = vb;                                                                             \
        T *c = vc;                                                                                            \
        switch (op) {                                                                                         \
        case KB_OP_SUM: KB_LOOP((T)((U)a[i] + (U)b[i]))                                                       \
        case KB_OP_PROD: KB_LOOP((T)((U)a[i] * (U)b[i]))                                                      \
        case KB_OP_MAX: KB_LOOP(a[i] > b[i] ? a[i] : b[i])                                                    \
        case KB_OP_MIN: KB_LOOP(a[i] < b[i] ? a[i] : b[i])                                                    \
            BITWISE                                                                                           \
        default: break;                                                                                       \
        }                                                                                                     \
    }

KB_COMBINE(double, double, double, )
KB_COMBINE(float, float, float, )
KB_COMBINE(int, int, unsigned, KB_BITWISE(int))
KB_COMBINE(long, long, unsigned long, KB_BITWISE(long))
KB_COMBINE(int8, int8_t, uint8_t, KB_BITWISE(int8_t))
KB_COMBINE(uint8, uint8_t, uint8_t, KB_BITWISE(uint8_t))
KB_COMBINE(int64, int64_t, uint64_t, KB_BITWISE(int64_t))
KB_COMBINE(uint64, uint64_t, uint64_t, KB_BITWISE(uint64_t))

void kb_red_combine(int type, int op, const void *a, const void *b, void *c, size_t n)
{
    switch (type) {
    case KB_T_DOUBLE: combine_double(op, a, b, c, n); break;
    case KB_T_FLOAT: combine_float(op, a, b, c, n); break;
    case KB_T_INT: combine_int(op, a, b, c, n); break;
    case KB_T_LONG: combine_long(op, a, b, c, n); break;
    case KB_T_INT8: combine_int8(op, a, b, c, n); break;
    case KB_T_UINT8: combine_uint8(op, a, b, c, n); break;
    case KB_T_INT64: combine_int64(op, a, b, c, n); break;
    default: combine_uint64(op, a, b, c, n); break;
    }
}

/* ------------------------------------------------------------------------- */
/* Values                                                                     */
/* ------------------------------------------------------------------------- */

static uint64_t mix(size_t i, int iter)
{
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull ^ (uint64_t)(unsigned)(iter + 1) * 0xD1B54A32D192ED03ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return x;
}

/* The value of element i of rank's input in call iter (the header's
 * formula). No signed sum or product overflows: MPI leaves that undefined
 * (Open MPI 4.1's vector kernels saturate int8 sums where a loop wraps). */
static uint64_t value(const kb_ctx *cx, int rank, size_t i, int iter)
{
    const uint64_t h = mix(i, iter), P = (uint64_t)(unsigned)cx->P, r = (uint64_t)(unsigned)rank;
    const int sign = types[cx->type].integer && cx->type != KB_T_UINT8 && cx->type != KB_T_UINT64;
    if (cx->op == KB_OP_PROD) /* signed integers: 1 or -1 (never overflows); else 1 or 2 */
        return (h >> 7 ^ r) & 1 ? (sign ? ~0ull : 2) : 1;
    uint64_t m = 61;
    if (cx->op == KB_OP_SUM && cx->type == KB_T_INT8) { /* the sum stays below 128 */
        if (127 / P < P)
            return (h >> 7 ^ r) & 1; /* P > 11: zeros and ones */
        const uint64_t fit = (127 / P - P) / P + 1;
        m = fit < m ? fit : m;
    }
    return r + 1 + P * (h % m);
}

/* v as one element of type at dst (integers: its low bytes, two's complement) */
static void store(int type, unsigned char *dst, uint64_t v)
{
    switch (type) {
    case KB_T_DOUBLE: {
        double d = (double)v;
        memcpy(dst, &d, sizeof d);
        break;
    }
    case KB_T_FLOAT: {
        float f = (float)v;
        memcpy(dst, &f, sizeof f);
        break;
    }
    case KB_T_INT: {
        unsigned u = (unsigned)v;
        memcpy(dst, &u, sizeof u);
        break;
    }
    case KB_T_LONG: {
        unsigned long u = (unsigned long)v;
        memcpy(dst, &u, sizeof u);
        break;
    }
    case KB_T_INT8:
    case KB_T_UINT8: *dst = (unsigned char)v; break;
    default: memcpy(dst, &v, 8); break;
    }
}

void kb_red_fill(const kb_ctx *cx, unsigned char *dst, size_t first, size_t n, int rank, int iter)
{
    for (size_t k = 0; k < n; k++)
        store(cx->type, dst + k * cx->elem, value(cx, rank, first + k, iter));
}

/* Compare one element; prints the first wrong bytes of it. */
static long long check_elem(kb_ctx *cx, const unsigned char *got, const unsigned char *want, size_t k, int iter,
                            const char *where, const char *what)
{
    if (memcmp(got, want, cx->elem) == 0)
        return 0;
    long long bad = 0;
    for (size_t b = 0; b < cx->elem; b++)
        if (got[b] != want[b]) {
            char msg[224];
            snprintf(msg, sizeof msg, "%s element %zu byte %zu (%s %s)", where, k, b, kb_red_type_name(cx->type),
                     what);
            kb_mismatch(cx, iter, msg, want[b], got[b]);
            bad++;
        }
    return bad;
}

long long kb_red_check(kb_ctx *cx, const unsigned char *got, size_t first, size_t n, int iter, const char *where)
{
    unsigned char acc[8], v[8];
    char what[64];
    snprintf(what, sizeof what, "%s over %d ranks", kb_red_op_name(cx->op), cx->P);
    long long bad = 0;
    for (size_t k = 0; k < n; k++) {
        const size_t i = first + k;
        store(cx->type, acc, value(cx, 0, i, iter));
        for (int r = 1; r < cx->P; r++) {
            store(cx->type, v, value(cx, r, i, iter));
            kb_red_combine(cx->type, cx->op, acc, v, acc, 1);
        }
        bad += check_elem(cx, got + k * cx->elem, acc, i, iter, where, what);
    }
    return bad;
}

long long kb_red_check_input(kb_ctx *cx, const unsigned char *got, size_t first, size_t n, int iter,
                             const char *where)
{
    unsigned char v[8];
    long long bad = 0;
    for (size_t k = 0; k < n; k++) {
        store(cx->type, v, value(cx, cx->rank, first + k, iter));
        bad += check_elem(cx, got + k * cx->elem, v, first + k, iter, where, "input");
    }
    return bad;
}

/* ------------------------------------------------------------------------- */
/* The reduction collectives' -c hooks                                        */
/* ------------------------------------------------------------------------- */

void kb_red_write(kb_ctx *cx, size_t nsend, int iter) { kb_red_fill(cx, cx->sbuf, 0, nsend, cx->rank, iter); }

void kb_red_poison(kb_ctx *cx, size_t rbytes, int iter)
{
    kb_fill_pattern(cx->rbuf, rbytes, kb_rank_id(cx->rank), iter, 1);
    kb_guard_fill(cx, rbytes);
}

long long kb_red_check_call(kb_ctx *cx, size_t first, size_t n, size_t rbytes, size_t nsend, int iter)
{
    long long bad = n ? kb_red_check(cx, cx->rbuf, first, n, iter, "recvbuf")
                      : kb_check_id(cx, cx->rbuf, rbytes, kb_rank_id(cx->rank), iter, 1,
                                    "recvbuf of a non-root rank modified:", 0, "poison");
    bad += kb_red_check_input(cx, cx->sbuf, 0, nsend, iter, "sendbuf modified:");
    return bad + kb_guard_check(cx, rbytes, iter);
}

void kb_rs_counts(int n, int P, int *counts)
{
    const int b = n / P;
    for (int r = 0; r < P; r++)
        counts[r] = r % 2 == 0 ? (r + 1 < P ? b + b / 2 : b) : b - b / 2;
    counts[P - 1] += n - P * b;
}
