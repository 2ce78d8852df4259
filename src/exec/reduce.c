/*
 * Combine kernels (reduce.h): dst = a op b, element by element, a the left
 * operand.
 *
 * Builtin operations on the common C types run inline: one loop per
 * (operation, type) and per aliasing case (dst is a, dst is b, dst apart
 * from both), with restrict pointers so that the compiler vectorises each
 * without run-time overlap checks (dst == a or dst == b is the common case:
 * a received block combined into the running result). Element pointers are
 * under-aligned types: user buffers need not be aligned to their elements.
 * Integer SUM and PROD, and the logical and bitwise operations, use the
 * unsigned type of the same width (two's complement wrap-around, the same
 * bits as the signed operation, without C's undefined signed overflow);
 * MAX and MIN compare with the type's own signedness. MPI_C_BOOL's logical
 * operations read any nonzero byte as true and write 0 or 1. Floating-point
 * MAX/MIN are (x > y ? x : y) and (x < y ? x : y), left operand first.
 *
 * MPI_MAXLOC / MPI_MINLOC on the C pair types (MPI_2INT, MPI_FLOAT_INT,
 * MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT): the
 * element with the larger (smaller) value, and on equal values the one with
 * the smaller index (MPI's rule), copied whole (value, index and the
 * struct's padding, which kport moves with the element: elem is the
 * type's extent).
 *
 * Everything else a builtin operation applies to (long double, complex,
 * Fortran types, the Fortran pair types) and every user-defined operation
 * goes through MPI_Reduce_local(in, inout), which computes inout = in op
 * inout: dst == b is Reduce_local(a, dst); dst apart is b copied to dst,
 * then Reduce_local(a, dst); dst == a is Reduce_local(b, a) for a
 * commutative operation and, for a non-commutative one, b copied to a
 * bounce buffer, Reduce_local(a, bounce), the bounce copied to a (in
 * pieces of KP_BOUNCE bytes on the stack).
 *
 * Which operation applies to which type is MPI's table (MPI 4.1, 6.9.2):
 * MAX, MIN: C and Fortran integers, floating point; SUM, PROD: those and
 * complex; LAND, LOR, LXOR: C integers and logical; BAND, BOR, BXOR: C and
 * Fortran integers and MPI_BYTE; MAXLOC, MINLOC: the pair types. A
 * predefined type outside the table below (MPI_CHAR, MPI_WCHAR,
 * MPI_PACKED, ...) is KP_ERR_UNSUPPORTED: the drop-in hands such calls to
 * MPI, which decides.
 */
#include "exec/reduce.h"
#include "util/copy.h"
#include "util/error.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GCC 12 at -O2 vectorises only loops whose trip count is a multiple of
 * the vector length ("very cheap" cost model); these loops are the
 * reductions' memory-bound inner loops, so they get the usual model */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

/* ---- element types: under-aligned, may alias the bytes they live in ---- */
#define KP_UT(name, T) typedef T name __attribute__((aligned(1), may_alias))
KP_UT(u8_t, uint8_t);
KP_UT(u16_t, uint16_t);
KP_UT(u32_t, uint32_t);
KP_UT(u64_t, uint64_t);
KP_UT(s8_t, int8_t);
KP_UT(s16_t, int16_t);
KP_UT(s32_t, int32_t);
KP_UT(s64_t, int64_t);
KP_UT(f32_t, float);
KP_UT(f64_t, double);

#define OP_SUM(x, y) ((x) + (y))
#define OP_PROD(x, y) ((x) * (y))
#define OP_MAX(x, y) ((x) > (y) ? (x) : (y))
#define OP_MIN(x, y) ((x) < (y) ? (x) : (y))
#define OP_LAND(x, y) (((x) != 0) & ((y) != 0))
#define OP_LOR(x, y) (((x) != 0) | ((y) != 0))
#define OP_LXOR(x, y) (((x) != 0) ^ ((y) != 0))
#define OP_BAND(x, y) ((x) & (y))
#define OP_BOR(x, y) ((x) | (y))
#define OP_BXOR(x, y) ((x) ^ (y))

/* One kernel: the three aliasing cases with restrict pointers, and a plain
 * loop for the odd case a == b. */
#define KP_KERNEL(name, T, OP)                                                                                        \
    static void name##_a(T *restrict d, const T *restrict y, size_t n)                                                \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++)                                                                                \
            d[i] = (T)OP(d[i], y[i]);                                                                                 \
    }                                                                                                                 \
    static void name##_b(T *restrict d, const T *restrict x, size_t n)                                                \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++)                                                                                \
            d[i] = (T)OP(x[i], d[i]);                                                                                 \
    }                                                                                                                 \
    static void name##_c(T *restrict d, const T *restrict x, const T *restrict y, size_t n)                           \
    {                                                                                                                 \
        for (size_t i = 0; i < n; i++)                                                                                \
            d[i] = (T)OP(x[i], y[i]);                                                                                 \
    }                                                                                                                 \
    static void name(void *d, const void *a, const void *b, size_t n)                                                 \
    {                                                                                                                 \
        if (a == b) {                                                                                                 \
            T *dd = d;                                                                                                \
            const T *x = a;                                                                                           \
            for (size_t i = 0; i < n; i++)                                                                            \
                dd[i] = (T)OP(x[i], x[i]);                                                                            \
        } else if (d == a) {                                                                                          \
            name##_a(d, b, n);                                                                                        \
        } else if (d == b) {                                                                                          \
            name##_b(d, a, n);                                                                                        \
        } else {                                                                                                      \
            name##_c(d, a, b, n);                                                                                     \
        }                                                                                                             \
    }

/* an operation on the unsigned widths (and floats where given) */
#define KP_UNSIGNED4(op)                                                                                              \
    KP_KERNEL(k_##op##_u8, u8_t, OP_##op)                                                                             \
    KP_KERNEL(k_##op##_u16, u16_t, OP_##op)                                                                           \
    KP_KERNEL(k_##op##_u32, u32_t, OP_##op) KP_KERNEL(k_##op##_u64, u64_t, OP_##op)
#define KP_SIGNED4(op)                                                                                                \
    KP_KERNEL(k_##op##_s8, s8_t, OP_##op)                                                                             \
    KP_KERNEL(k_##op##_s16, s16_t, OP_##op)                                                                           \
    KP_KERNEL(k_##op##_s32, s32_t, OP_##op) KP_KERNEL(k_##op##_s64, s64_t, OP_##op)
#define KP_FLOAT2(op) KP_KERNEL(k_##op##_f32, f32_t, OP_##op) KP_KERNEL(k_##op##_f64, f64_t, OP_##op)

KP_UNSIGNED4(SUM)
KP_FLOAT2(SUM)
KP_UNSIGNED4(PROD)
KP_FLOAT2(PROD)
KP_UNSIGNED4(MAX)
KP_SIGNED4(MAX)
KP_FLOAT2(MAX)
KP_UNSIGNED4(MIN)
KP_SIGNED4(MIN)
KP_FLOAT2(MIN)
KP_UNSIGNED4(LAND)
KP_UNSIGNED4(LOR)
KP_UNSIGNED4(LXOR)
KP_UNSIGNED4(BAND)
KP_UNSIGNED4(BOR)
KP_UNSIGNED4(BXOR)

/* MAXLOC / MINLOC on struct { V v; I i; } (MPI's pair layouts) */
#define KP_PAIR(name, V, BETTER)                                                                                      \
    static void name(void *d, const void *a, const void *b, size_t n)                                                 \
    {                                                                                                                 \
        typedef struct {                                                                                              \
            V v;                                                                                                      \
            int i;                                                                                                    \
        } pair;                                                                                                       \
        for (size_t j = 0; j < n; j++) {                                                                              \
            const char *pa = (const char *)a + j * sizeof(pair), *pb = (const char *)b + j * sizeof(pair);           \
            V va, vb;                                                                                                 \
            int ia, ib;                                                                                               \
            memcpy(&va, pa + offsetof(pair, v), sizeof va);                                                           \
            memcpy(&vb, pb + offsetof(pair, v), sizeof vb);                                                           \
            memcpy(&ia, pa + offsetof(pair, i), sizeof ia);                                                           \
            memcpy(&ib, pb + offsetof(pair, i), sizeof ib);                                                           \
            const char *w = (va BETTER vb || (va == vb && ia <= ib)) ? pa : pb;                                       \
            char *pd = (char *)d + j * sizeof(pair);                                                                  \
            if (w != pd)                                                                                              \
                memcpy(pd, w, sizeof(pair));                                                                          \
        }                                                                                                             \
    }
#define KP_PAIRS(V, tag) KP_PAIR(k_MAXLOC_##tag, V, >) KP_PAIR(k_MINLOC_##tag, V, <)
KP_PAIRS(int, 2int)
KP_PAIRS(float, float_int)
KP_PAIRS(double, double_int)
KP_PAIRS(long, long_int)
KP_PAIRS(short, short_int)
KP_PAIRS(long double, ldouble_int)

/* ---- the operations and the types ---------------------------------------- */

enum { O_MAX, O_MIN, O_SUM, O_PROD, O_LAND, O_BAND, O_LOR, O_BOR, O_LXOR, O_BXOR, O_MAXLOC, O_MINLOC, O_N };

/* MPI's type classes (MPI 4.1, 6.9.2) */
#define C_CINT 0x01u
#define C_FINT 0x02u
#define C_FLOAT 0x04u
#define C_LOGICAL 0x08u
#define C_COMPLEX 0x10u
#define C_BYTE 0x20u
#define C_PAIR 0x40u

static const unsigned op_classes[O_N] = {
    [O_MAX] = C_CINT | C_FINT | C_FLOAT,
    [O_MIN] = C_CINT | C_FINT | C_FLOAT,
    [O_SUM] = C_CINT | C_FINT | C_FLOAT | C_COMPLEX,
    [O_PROD] = C_CINT | C_FINT | C_FLOAT | C_COMPLEX,
    [O_LAND] = C_CINT | C_LOGICAL,
    [O_LOR] = C_CINT | C_LOGICAL,
    [O_LXOR] = C_CINT | C_LOGICAL,
    [O_BAND] = C_CINT | C_FINT | C_BYTE,
    [O_BOR] = C_CINT | C_FINT | C_BYTE,
    [O_BXOR] = C_CINT | C_FINT | C_BYTE,
    [O_MAXLOC] = C_PAIR,
    [O_MINLOC] = C_PAIR,
};
static const char *const op_names[O_N] = {"MPI_MAX",  "MPI_MIN", "MPI_SUM",  "MPI_PROD", "MPI_LAND",   "MPI_BAND",
                                          "MPI_LOR",  "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MAXLOC", "MPI_MINLOC"};

/* inline kernel families: C integers by width and signedness, float,
 * double, C bool, the C pair types; K_NONE: MPI_Reduce_local */
enum { K_U8, K_U16, K_U32, K_U64, K_S8, K_S16, K_S32, K_S64, K_F32, K_F64, K_BOOL,
       K_2INT, K_FLOAT_INT, K_DOUBLE_INT, K_LONG_INT, K_SHORT_INT, K_LDOUBLE_INT, K_N, K_NONE = -1 };

#define ROW_U(op) [K_U8] = k_##op##_u8, [K_U16] = k_##op##_u16, [K_U32] = k_##op##_u32, [K_U64] = k_##op##_u64
/* signed integers share the unsigned kernels where the bits are the same */
#define ROW_SAME(op)                                                                                                  \
    ROW_U(op), [K_S8] = k_##op##_u8, [K_S16] = k_##op##_u16, [K_S32] = k_##op##_u32, [K_S64] = k_##op##_u64
#define ROW_S(op)                                                                                                     \
    ROW_U(op), [K_S8] = k_##op##_s8, [K_S16] = k_##op##_s16, [K_S32] = k_##op##_s32, [K_S64] = k_##op##_s64
#define ROW_F(op) [K_F32] = k_##op##_f32, [K_F64] = k_##op##_f64
#define ROW_LOC(op)                                                                                                   \
    [K_2INT] = k_##op##_2int, [K_FLOAT_INT] = k_##op##_float_int, [K_DOUBLE_INT] = k_##op##_double_int,               \
    [K_LONG_INT] = k_##op##_long_int, [K_SHORT_INT] = k_##op##_short_int, [K_LDOUBLE_INT] = k_##op##_ldouble_int

static const kp_combine_fn kernels[O_N][K_N] = {
    [O_MAX] = {ROW_S(MAX), ROW_F(MAX)},
    [O_MIN] = {ROW_S(MIN), ROW_F(MIN)},
    [O_SUM] = {ROW_SAME(SUM), ROW_F(SUM)},
    [O_PROD] = {ROW_SAME(PROD), ROW_F(PROD)},
    [O_LAND] = {ROW_SAME(LAND), [K_BOOL] = k_LAND_u8},
    [O_LOR] = {ROW_SAME(LOR), [K_BOOL] = k_LOR_u8},
    [O_LXOR] = {ROW_SAME(LXOR), [K_BOOL] = k_LXOR_u8},
    [O_BAND] = {ROW_SAME(BAND)},
    [O_BOR] = {ROW_SAME(BOR)},
    [O_BXOR] = {ROW_SAME(BXOR)},
    [O_MAXLOC] = {ROW_LOC(MAXLOC)},
    [O_MINLOC] = {ROW_LOC(MINLOC)},
};

/* the C integer kernel of a type of `size` bytes */
static int k_int(size_t size, int is_signed)
{
    const int k = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
    return k < 0 ? K_NONE : (is_signed ? K_S8 : K_U8) + k;
}

typedef struct tentry {
    MPI_Datatype t;
    const char *name;
    unsigned cls;
    int kernel;
    size_t csize; /* sizeof the C pair struct the kernel assumes (0: none) */
} tentry;

#define T_MAX 64
static tentry types[T_MAX];
static int ntypes;
static pthread_once_t types_once = PTHREAD_ONCE_INIT;

static void add(MPI_Datatype t, const char *name, unsigned cls, int kernel, size_t csize)
{
    if (t == MPI_DATATYPE_NULL || ntypes == T_MAX) /* an optional type this MPI lacks */
        return;
    types[ntypes++] = (tentry){t, name, cls, kernel, csize};
}
#define ADD_INT(t, T, sgn) add(t, #t, C_CINT, k_int(sizeof(T), sgn), 0)
#define ADD_PAIR(t, V, k)                                                                                             \
    add(t, #t, C_PAIR, k, sizeof(struct {                                                                             \
            V v;                                                                                                      \
            int i;                                                                                                    \
        }))

static void types_init(void)
{
    ADD_INT(MPI_INT, int, 1);
    ADD_INT(MPI_UNSIGNED, unsigned, 0);
    ADD_INT(MPI_LONG, long, 1);
    ADD_INT(MPI_UNSIGNED_LONG, unsigned long, 0);
    ADD_INT(MPI_LONG_LONG, long long, 1);
    ADD_INT(MPI_LONG_LONG_INT, long long, 1);
    ADD_INT(MPI_UNSIGNED_LONG_LONG, unsigned long long, 0);
    ADD_INT(MPI_SHORT, short, 1);
    ADD_INT(MPI_UNSIGNED_SHORT, unsigned short, 0);
    ADD_INT(MPI_SIGNED_CHAR, signed char, 1);
    ADD_INT(MPI_UNSIGNED_CHAR, unsigned char, 0);
    ADD_INT(MPI_INT8_T, int8_t, 1);
    ADD_INT(MPI_INT16_T, int16_t, 1);
    ADD_INT(MPI_INT32_T, int32_t, 1);
    ADD_INT(MPI_INT64_T, int64_t, 1);
    ADD_INT(MPI_UINT8_T, uint8_t, 0);
    ADD_INT(MPI_UINT16_T, uint16_t, 0);
    ADD_INT(MPI_UINT32_T, uint32_t, 0);
    ADD_INT(MPI_UINT64_T, uint64_t, 0);
    ADD_INT(MPI_AINT, MPI_Aint, 1);
    ADD_INT(MPI_OFFSET, MPI_Offset, 1);
    ADD_INT(MPI_COUNT, MPI_Count, 1);
    add(MPI_FLOAT, "MPI_FLOAT", C_FLOAT, K_F32, 0);
    add(MPI_DOUBLE, "MPI_DOUBLE", C_FLOAT, K_F64, 0);
    add(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", C_FLOAT, K_NONE, 0);
    add(MPI_C_BOOL, "MPI_C_BOOL", C_LOGICAL, sizeof(_Bool) == 1 ? K_BOOL : K_NONE, 0);
    add(MPI_BYTE, "MPI_BYTE", C_BYTE, K_U8, 0);
    add(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", C_COMPLEX, K_NONE, 0);
    add(MPI_C_COMPLEX, "MPI_C_COMPLEX", C_COMPLEX, K_NONE, 0);
    add(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", C_COMPLEX, K_NONE, 0);
    add(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", C_COMPLEX, K_NONE, 0);
    ADD_PAIR(MPI_2INT, int, K_2INT);
    ADD_PAIR(MPI_FLOAT_INT, float, K_FLOAT_INT);
    ADD_PAIR(MPI_DOUBLE_INT, double, K_DOUBLE_INT);
    ADD_PAIR(MPI_LONG_INT, long, K_LONG_INT);
    ADD_PAIR(MPI_SHORT_INT, short, K_SHORT_INT);
    ADD_PAIR(MPI_LONG_DOUBLE_INT, long double, K_LDOUBLE_INT);
    /* Fortran types (MPI_Reduce_local) */
    add(MPI_INTEGER, "MPI_INTEGER", C_FINT, K_NONE, 0);
    add(MPI_REAL, "MPI_REAL", C_FLOAT, K_NONE, 0);
    add(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", C_FLOAT, K_NONE, 0);
    add(MPI_LOGICAL, "MPI_LOGICAL", C_LOGICAL, K_NONE, 0);
    add(MPI_COMPLEX, "MPI_COMPLEX", C_COMPLEX, K_NONE, 0);
    add(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", C_COMPLEX, K_NONE, 0);
    add(MPI_2INTEGER, "MPI_2INTEGER", C_PAIR, K_NONE, 0);
    add(MPI_2REAL, "MPI_2REAL", C_PAIR, K_NONE, 0);
    add(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", C_PAIR, K_NONE, 0);
}

static int op_index(MPI_Op op)
{
    static MPI_Op ops[O_N];
    static int ready;
    if (!ready) { /* handles are constants of the MPI library: idempotent */
        const MPI_Op o[O_N] = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND,   MPI_BAND,
                               MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
        memcpy(ops, o, sizeof(o));
        ready = 1;
    }
    for (int i = 0; i < O_N; i++)
        if (ops[i] == op)
            return i;
    return -1;
}

int kp_op_builtin(MPI_Op op, const char **name)
{
    const int i = op_index(op);
    if (name)
        *name = i < 0 ? "?" : op_names[i];
    return i >= 0;
}

int kp_reducer_builtin(MPI_Op op, MPI_Datatype t, kp_reducer *r, char *why, size_t whylen)
{
    const int o = op_index(op);
    if (o < 0) {
        snprintf(why, whylen, "%s",
                 op == MPI_OP_NULL ? "the operation is MPI_OP_NULL"
                 : op == MPI_REPLACE || op == MPI_NO_OP
                     ? "MPI_REPLACE and MPI_NO_OP apply only to one-sided accumulates, not to collectives"
                     : "the operation is not a builtin operation");
        return KP_ERR_ARG;
    }
    pthread_once(&types_once, types_init);
    const tentry *e = NULL;
    for (int i = 0; i < ntypes && !e; i++)
        if (types[i].t == t)
            e = &types[i];
    if (!e) {
        snprintf(why, whylen, "kport does not reduce this predefined datatype with %s", op_names[o]);
        return KP_ERR_UNSUPPORTED;
    }
    if (!(op_classes[o] & e->cls)) {
        snprintf(why, whylen, "%s does not apply to %s (MPI 4.1, 6.9.2)", op_names[o], e->name);
        return KP_ERR_DATATYPE;
    }
    MPI_Aint lb, extent;
    if (MPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS || extent <= 0) {
        snprintf(why, whylen, "%s has no valid extent", e->name);
        return KP_ERR_DATATYPE;
    }
    kp_combine_fn fn = e->kernel == K_NONE ? NULL : kernels[o][e->kernel];
    if (e->csize && (size_t)extent != e->csize) /* an MPI whose pair layout is not C's */
        fn = NULL;
    *r = (kp_reducer){.fn = fn, .op = op, .type = t, .elem = extent, .commute = 1, .name = e->name};
    return KP_SUCCESS;
}

void kp_reducer_user(MPI_Op op, MPI_Datatype t, int64_t elem, int commute, kp_reducer *r)
{
    *r = (kp_reducer){.fn = NULL, .op = op, .type = t, .elem = elem, .commute = commute,
                      .name = "user-defined operation"};
}

/* inout = in op inout over n elements, in pieces MPI's int counts allow */
static int local(const kp_reducer *r, const char *in, char *inout, int64_t n)
{
    while (n > 0) {
        const int c = (int)(n < INT_MAX ? n : INT_MAX);
        if (MPI_Reduce_local(in, inout, c, r->type, r->op) != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "MPI_Reduce_local of %d elements (%s) failed", c, r->name);
        in += (int64_t)c * r->elem;
        inout += (int64_t)c * r->elem;
        n -= c;
    }
    return KP_SUCCESS;
}

#define KP_BOUNCE 8192

int kp_reduce_apply(const kp_reducer *r, void *dst, const void *a, const void *b, int64_t len)
{
    const int64_t n = len / r->elem;
    if (r->fn) {
        r->fn(dst, a, b, (size_t)n);
        return KP_SUCCESS;
    }
    if (dst == b)
        return local(r, a, dst, n);
    if (dst != a) {
        kp_copy(dst, b, (size_t)len);
        return local(r, a, dst, n);
    }
    if (r->commute)
        return local(r, b, dst, n);
    /* dst == a, non-commutative: a = a op b through a bounce buffer */
    char stack[KP_BOUNCE];
    const int64_t piece = r->elem <= KP_BOUNCE ? KP_BOUNCE / r->elem : 1;
    char *bounce = r->elem <= KP_BOUNCE ? stack : malloc((size_t)r->elem);
    if (!bounce)
        return kp_error(KP_ERR_NOMEM, "no memory for a bounce element of %lld bytes", (long long)r->elem);
    int rc = KP_SUCCESS;
    for (int64_t i = 0; i < n && !rc; i += piece) {
        const int64_t m = n - i < piece ? n - i : piece, off = i * r->elem;
        memcpy(bounce, (const char *)b + off, (size_t)(m * r->elem));
        if (!(rc = local(r, (const char *)a + off, bounce, m)))
            memcpy((char *)dst + off, bounce, (size_t)(m * r->elem));
    }
    if (bounce != stack)
        free(bounce);
    return rc;
}
