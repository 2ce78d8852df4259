/*
 * test_red: kp_bcast, kp_scatter, kp_reduce, kp_allreduce,
 * kp_reduce_scatter_block and kp_reduce_scatter under every algorithm.
 *
 * usage: test_red bcast|scatter|reduce|allreduce|reduce_scatter_block|reduce_scatter
 *                 [-a spec[,spec...]] [-n cases] [-s seed] [-t seconds]
 *
 *   -a  algorithm specifications (default: every registered algorithm of the
 *       collective with its default parameters, and "auto")
 *   -n  random cases per algorithm (default 60)
 *   -s  seed of the cases (default 1; every rank draws the same cases)
 *
 * Each case draws a datatype, an operation that applies to it, a count
 * (0, 1, small primes, up to ~70,000 elements), a root (then every root
 * once more on MPI_COMM_WORLD), MPI_IN_PLACE or not, and a communicator (MPI_COMM_WORLD, a reversed split, two halves).
 * Element j of rank q's input is a value drawn from a hash of (q, j, case)
 * in a range that keeps the operation exact (sums and products of small
 * integers, also in float and double); the expected result is the formula:
 * the operation folded over the ranks in rank order (so the non-commutative
 * operation, a user-defined 2x2 integer matrix product, must come out as
 * M_0 M_1 ... M_{P-1}). Types: signed and unsigned char, short, int, long
 * long, int8_t/uint64_t, float, double, MPI_C_BOOL (logical operations),
 * MPI_BYTE (bitwise), the pair types MPI_2INT, MPI_FLOAT_INT, MPI_DOUBLE_INT,
 * MPI_LONG_INT, MPI_SHORT_INT with MAXLOC/MINLOC (values drawn from 4 so
 * ties happen: the smaller index must win), MPI_LONG_DOUBLE (through
 * MPI_Reduce_local), a contiguous type of 3 ints, a vector of doubles with
 * gaps (packed: the gaps of the receive buffer must stay untouched), a
 * user-defined commutative sum on MPI_INT and the matrix product on a
 * contiguous type of 4 ints.
 *
 * Every byte of each receive buffer, guards before and after included, is
 * compared with its expected image (bytes the call must not write keep a
 * position-dependent sentinel; the pair types' padding, which kport moves
 * with the element, is the same sentinel in every rank's send and receive
 * buffers). Allreduce: the ranks' results are also compared with each other
 * (a hash, MPI_Allreduce MIN/MAX). Every call's return code must agree on all
 * ranks; a forced algorithm may refuse a call (KP_ERR_UNSUPPORTED on every
 * rank: a non-commutative operation, a layout it does not serve), counted and
 * shown, but it must serve at least one case. A successful call must name
 * the forced algorithm in kp_last_algorithm().
 *
 * Then invalid arguments with automatic selection: MPI_OP_NULL and
 * MPI_REPLACE (KP_ERR_ARG), an operation the type does not take (MPI_SUM on
 * MPI_DOUBLE_INT, MPI_MAXLOC on MPI_INT, MPI_BAND on MPI_DOUBLE:
 * KP_ERR_DATATYPE), MPI_IN_PLACE at a reduce's non-root, NULL buffers,
 * NULL recvcounts (KP_ERR_ARG), negative counts (KP_ERR_COUNT), a root out
 * of range (KP_ERR_ARG), MPI_DATATYPE_NULL (KP_ERR_DATATYPE).
 */
#include "common.h"

#include <limits.h>

enum { C_BCAST, C_SCATTER, C_REDUCE, C_ALLREDUCE, C_RSB, C_RS, C_N };
static const char *const cnames[C_N] = {"bcast",     "scatter",  "reduce", "allreduce",
                                        "reduce_scatter_block", "reduce_scatter"};
static const enum kp_coll ccoll[C_N] = {KP_COLL_BCAST, KP_COLL_SCATTER, KP_COLL_REDUCE, KP_COLL_ALLREDUCE,
                                        KP_COLL_REDUCE_SCATTER_BLOCK, KP_COLL_REDUCE_SCATTER};

/* ---- element kinds and their values ----------------------------------------- */

enum { K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64, K_F32, K_F64, K_LD, K_BOOL,
       K_P2INT, K_PFLOAT, K_PDOUBLE, K_PLONG, K_PSHORT, K_MAT };

/* one element's value: an integer (wrapped to the kind's width), a real,
 * a (value, index) pair or a 2x2 matrix */
typedef struct val {
    int64_t i;
    long double f;
    int32_t idx;
    uint32_t m[4];
} val;

static int is_int(int k) { return k <= K_U64; }
static int is_real(int k) { return k == K_F32 || k == K_F64 || k == K_LD; }

/* wrap x to the kind's width and signedness */
static int64_t wrap(int k, int64_t x)
{
    switch (k) {
    case K_I8: return (int8_t)x;
    case K_U8: case K_BOOL: return (uint8_t)x;
    case K_I16: return (int16_t)x;
    case K_U16: return (uint16_t)x;
    case K_I32: return (int32_t)x;
    case K_U32: return (uint32_t)x;
    default: return x;
    }
}

#define PAIR_STORE(V, p, v)                                                                                           \
    do {                                                                                                              \
        struct { V a; int b; } s_;                                                                                    \
        memcpy(&s_, p, sizeof s_);                                                                                    \
        s_.a = (V)(v).f;                                                                                              \
        s_.b = (v).idx;                                                                                               \
        memcpy(p, &s_, sizeof s_);                                                                                    \
    } while (0)

/* store v at p: only the data bytes (a pair's padding keeps what was there) */
static void store(int k, unsigned char *p, const val *v)
{
    switch (k) {
    case K_I8: case K_U8: case K_BOOL: { uint8_t x = (uint8_t)v->i; memcpy(p, &x, 1); break; }
    case K_I16: case K_U16: { uint16_t x = (uint16_t)v->i; memcpy(p, &x, 2); break; }
    case K_I32: case K_U32: { uint32_t x = (uint32_t)v->i; memcpy(p, &x, 4); break; }
    case K_I64: case K_U64: memcpy(p, &v->i, 8); break;
    case K_F32: { float x = (float)v->f; memcpy(p, &x, 4); break; }
    case K_F64: { double x = (double)v->f; memcpy(p, &x, 8); break; }
    case K_LD: { long double x = v->f; memcpy(p, &x, 10); break; } /* the 80 bits of data */
    case K_P2INT: PAIR_STORE(int, p, *v); break;
    case K_PFLOAT: PAIR_STORE(float, p, *v); break;
    case K_PDOUBLE: PAIR_STORE(double, p, *v); break;
    case K_PLONG: PAIR_STORE(long, p, *v); break;
    case K_PSHORT: PAIR_STORE(short, p, *v); break;
    case K_MAT: memcpy(p, v->m, 16); break;
    }
}

/* ---- operations ------------------------------------------------------------- */

enum { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_MAXLOC, O_MINLOC, O_USUM,
       O_UMAT, O_N };
static const char *const onames[O_N] = {"SUM",  "PROD", "MAX",  "MIN",    "LAND",   "LOR",      "LXOR",
                                        "BAND", "BOR",  "BXOR", "MAXLOC", "MINLOC", "user_sum", "user_matmul"};
static MPI_Op ops[O_N];

/* user-defined: commutative wrapping sum of ints */
static void usum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    int size;
    MPI_Type_size(*t, &size); /* MPI_INT or a contiguous type of ints */
    const int *a = in;
    int *b = inout;
    for (long i = 0; i < (long)*len * (size / 4); i++)
        b[i] = (int)((unsigned)a[i] + (unsigned)b[i]);
}

static void matmul(const uint32_t *x, const uint32_t *y, uint32_t *r)
{
    uint32_t t[4] = {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2],
                     x[2] * y[1] + x[3] * y[3]};
    memcpy(r, t, sizeof t);
}

/* user-defined, non-commutative: inout = in x inout (2x2 matrices of uint32) */
static void umat(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++) {
        uint32_t a[4], b[4];
        memcpy(a, (char *)in + 16 * i, 16);
        memcpy(b, (char *)inout + 16 * i, 16);
        matmul(a, b, b);
        memcpy((char *)inout + 16 * i, b, 16);
    }
}

/* x op y (x from lower ranks) */
static val combine(int o, int k, val x, val y)
{
    val r = x;
    switch (o) {
    case O_SUM: case O_USUM: r.i = wrap(k, (int64_t)((uint64_t)x.i + (uint64_t)y.i)); r.f = x.f + y.f; break;
    case O_PROD: r.i = wrap(k, (int64_t)((uint64_t)x.i * (uint64_t)y.i)); r.f = x.f * y.f; break;
    case O_MAX:
        if (is_real(k) ? y.f > x.f : (k == K_U64 ? (uint64_t)y.i > (uint64_t)x.i : y.i > x.i))
            r = y;
        break;
    case O_MIN:
        if (is_real(k) ? y.f < x.f : (k == K_U64 ? (uint64_t)y.i < (uint64_t)x.i : y.i < x.i))
            r = y;
        break;
    case O_LAND: r.i = (x.i != 0) && (y.i != 0); break;
    case O_LOR: r.i = (x.i != 0) || (y.i != 0); break;
    case O_LXOR: r.i = (x.i != 0) != (y.i != 0); break;
    case O_BAND: r.i = wrap(k, x.i & y.i); break;
    case O_BOR: r.i = wrap(k, x.i | y.i); break;
    case O_BXOR: r.i = wrap(k, x.i ^ y.i); break;
    case O_MAXLOC: case O_MINLOC: {
        const int better = o == O_MAXLOC ? y.f > x.f : y.f < x.f;
        if (better || (y.f == x.f && y.idx < x.idx))
            r = y;
        break;
    }
    case O_UMAT: matmul(x.m, y.m, r.m); break;
    }
    return r;
}

/* ---- the types -------------------------------------------------------------- */

typedef struct ttype {
    const char *name;
    MPI_Datatype t;
    int kind;     /* of every element */
    int ne;       /* elements per item */
    int ext;      /* bytes per item */
    int off[4];   /* element offsets in an item */
    unsigned ops; /* operations (bits) that apply */
} ttype;

#define OPS_INT ((1u << O_SUM) | (1u << O_PROD) | (1u << O_MAX) | (1u << O_MIN) | (1u << O_LAND) | (1u << O_LOR) | \
                 (1u << O_LXOR) | (1u << O_BAND) | (1u << O_BOR) | (1u << O_BXOR))
#define OPS_REAL ((1u << O_SUM) | (1u << O_PROD) | (1u << O_MAX) | (1u << O_MIN))
#define OPS_LOGIC ((1u << O_LAND) | (1u << O_LOR) | (1u << O_LXOR))
#define OPS_BIT ((1u << O_BAND) | (1u << O_BOR) | (1u << O_BXOR))
#define OPS_LOC ((1u << O_MAXLOC) | (1u << O_MINLOC))

static ttype types[32];
static int ntypes;

static void tadd(const char *name, MPI_Datatype t, int kind, unsigned o)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    types[ntypes++] = (ttype){name, t, kind, 1, (int)ext, {0}, o};
}

static void types_make(void)
{
    tadd("int", MPI_INT, K_I32, OPS_INT | (1u << O_USUM));
    tadd("unsigned", MPI_UNSIGNED, K_U32, OPS_INT);
    tadd("long long", MPI_LONG_LONG, K_I64, OPS_INT);
    tadd("uint64_t", MPI_UINT64_T, K_U64, OPS_INT);
    tadd("short", MPI_SHORT, K_I16, OPS_INT);
    tadd("unsigned short", MPI_UNSIGNED_SHORT, K_U16, OPS_INT);
    tadd("signed char", MPI_SIGNED_CHAR, K_I8, OPS_INT);
    tadd("unsigned char", MPI_UNSIGNED_CHAR, K_U8, OPS_INT);
    tadd("int8_t", MPI_INT8_T, K_I8, OPS_INT);
    tadd("float", MPI_FLOAT, K_F32, OPS_REAL);
    tadd("double", MPI_DOUBLE, K_F64, OPS_REAL);
    tadd("long double", MPI_LONG_DOUBLE, K_LD, (1u << O_SUM) | (1u << O_MAX));
    tadd("C bool", MPI_C_BOOL, K_BOOL, OPS_LOGIC);
    tadd("byte", MPI_BYTE, K_U8, OPS_BIT);
    tadd("2int", MPI_2INT, K_P2INT, OPS_LOC);
    tadd("float_int", MPI_FLOAT_INT, K_PFLOAT, OPS_LOC);
    tadd("double_int", MPI_DOUBLE_INT, K_PDOUBLE, OPS_LOC);
    tadd("long_int", MPI_LONG_INT, K_PLONG, OPS_LOC);
    tadd("short_int", MPI_SHORT_INT, K_PSHORT, OPS_LOC);
    ttype c3 = {"contig3int", MPI_DATATYPE_NULL, K_I32, 3, 12, {0, 4, 8}, OPS_INT | (1u << O_USUM)};
    MPI_Type_contiguous(3, MPI_INT, &c3.t);
    MPI_Type_commit(&c3.t);
    types[ntypes++] = c3;
    /* two doubles at 0 and 16 of a 32-byte item: gaps inside and after */
    ttype v = {"vector2dbl", MPI_DATATYPE_NULL, K_F64, 2, 32, {0, 16}, OPS_REAL};
    MPI_Datatype v0;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &v0);
    MPI_Type_create_resized(v0, 0, 32, &v.t);
    MPI_Type_free(&v0);
    MPI_Type_commit(&v.t);
    types[ntypes++] = v;
    ttype m = {"mat2x2", MPI_DATATYPE_NULL, K_MAT, 1, 16, {0}, 1u << O_UMAT};
    MPI_Type_contiguous(4, MPI_UINT32_T, &m.t);
    MPI_Type_commit(&m.t);
    types[ntypes++] = m;
}

/* ---- values ------------------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

/* element j of rank q's input for case c under operation o */
static val value(int o, int k, int q, int64_t j, uint64_t c)
{
    const uint64_t h = mix(c * 0x9E3779B97F4A7C15ULL ^ (uint64_t)q * 0xD6E8FEB86659FD93ULL ^ (uint64_t)j);
    val v;
    memset(&v, 0, sizeof v);
    const int sgn = k == K_I8 || k == K_I16 || k == K_I32 || k == K_I64 || is_real(k);
    int64_t x;
    switch (o) {
    case O_PROD: x = sgn ? (int64_t)(h % 4) - 1 : (int64_t)(h % 3) + 1; if (x == 0) x = 2; break;
    case O_LAND: case O_LOR: case O_LXOR:
        x = k == K_BOOL ? (int64_t)(h % 2) : (int64_t)(h % 3);
        if (h % 5 == 0)
            x = 1;
        break;
    case O_BAND: case O_BOR: case O_BXOR: x = (int64_t)h; break;
    case O_MAXLOC: case O_MINLOC: x = (int64_t)(h % 4); break;
    default: x = sgn ? (int64_t)(h % 201) - 100 : (int64_t)(h % 200); break;
    }
    v.i = wrap(k, x);
    v.f = (long double)(is_int(k) ? v.i : x);
    v.idx = (int)((h >> 20) % 5);
    for (int e = 0; e < 4; e++)
        v.m[e] = (uint32_t)((h >> (8 * e)) % 4);
    return v;
}

/* ---- buffers ------------------------------------------------------------------ */

#define GUARD 64

typedef struct gbuf {
    unsigned char *mem, *p;
    size_t len;
} gbuf;

static gbuf galloc(size_t len)
{
    gbuf b = {malloc(len + 2 * GUARD + 1), NULL, len};
    b.p = b.mem + GUARD;
    kt_sentinel_fill(b.mem, 0, len + 2 * GUARD);
    return b;
}

/* items [i0, i0+n) of the vector of origin q (or the expected result, q < 0)
 * written at items [0, n) of buf */
static void put_items(unsigned char *buf, const ttype *T, int o, int64_t i0, int64_t n, int q, int P, uint64_t c)
{
    for (int64_t i = 0; i < n; i++)
        for (int e = 0; e < T->ne; e++) {
            const int64_t j = (i0 + i) * T->ne + e;
            val v = value(o, T->kind, q < 0 ? 0 : q, j, c);
            for (int r = 1; q < 0 && r < P; r++)
                v = combine(o, T->kind, v, value(o, T->kind, r, j, c));
            store(T->kind, buf + i * T->ext + T->off[e], &v);
        }
}

/* A pair's (and a long double's) padding bytes travel with the element,
 * from whichever offset of whichever rank's buffer it came: not compared
 * (copied from got into the expected image). */
static void mask_padding(gbuf *x, const gbuf *r, const ttype *T)
{
    int lo = 0, hi = 0; /* padding [lo, hi) of an item */
    switch (T->kind) {
    case K_PDOUBLE: case K_PLONG: lo = 12, hi = 16; break;
    case K_PSHORT: lo = 2, hi = 4; break;
    case K_LD: lo = 10, hi = (int)sizeof(long double); break; /* x87's 80 bits, then padding */
    default: return;
    }
    for (size_t i = 0; i + (size_t)T->ext <= r->len; i += (size_t)T->ext)
        memcpy(x->p + i + lo, r->p + i + lo, (size_t)(hi - lo));
}

/* ---- one case -------------------------------------------------------------------- */

typedef struct rcase {
    int coll, ti, o, root, inplace;
    int64_t count;  /* items (reduce_scatter_block: per rank; reduce_scatter: unused) */
    int *counts;    /* reduce_scatter */
    uint64_t seed;
} rcase;

static int run(const rcase *k, MPI_Comm comm, const char *spec, int *refused)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    const ttype *T = &types[k->ti];
    const int root = k->root % P;
    int64_t total = k->count, mine = k->count, first = 0;
    if (k->coll == C_RS) {
        total = 0;
        for (int j = 0; j < P; j++) {
            if (j == me)
                first = total, mine = k->counts[j];
            total += k->counts[j];
        }
    } else if (k->coll == C_RSB || k->coll == C_SCATTER) {
        total = k->count * P;
        first = k->count * me;
    }
    const int ip = k->inplace && (k->coll == C_ALLREDUCE || k->coll == C_RSB || k->coll == C_RS || me == root);
    const int data_coll = k->coll == C_BCAST || k->coll == C_SCATTER;
    /* send: the input vector (scatter: at the root; bcast: none) */
    int64_t sitems = k->coll == C_BCAST ? 0 : k->coll == C_SCATTER ? (me == root ? total : 0) : total;
    int64_t ritems = k->coll == C_BCAST ? k->count : k->coll == C_SCATTER ? k->count
                     : k->coll == C_REDUCE ? (me == root ? total : 0) : k->coll == C_ALLREDUCE ? total : mine;
    if (ip && !(k->coll == C_SCATTER))
        ritems = total;
    gbuf s = galloc((size_t)(sitems * T->ext)), r = galloc((size_t)(ritems * T->ext));
    gbuf x = galloc((size_t)(ritems * T->ext)); /* the expected image of r */
    /* inputs */
    unsigned char *in = ip && k->coll != C_SCATTER ? r.p : s.p;
    if (k->coll == C_BCAST) {
        if (me == root)
            put_items(r.p, T, k->o, 0, k->count, root, P, k->seed);
        put_items(x.p, T, k->o, 0, k->count, root, P, k->seed);
    } else if (k->coll == C_SCATTER) {
        if (me == root)
            put_items(s.p, T, k->o, 0, total, root, P, k->seed);
        if (!(ip && me == root))
            put_items(x.p, T, k->o, first, k->count, root, P, k->seed);
    } else {
        put_items(in, T, k->o, 0, total, me, P, k->seed);
        if (ip)
            memcpy(x.mem, r.mem, r.len + 2 * GUARD);
        if (k->coll == C_ALLREDUCE || (k->coll == C_REDUCE && me == root))
            put_items(x.p, T, k->o, 0, total, -1, P, k->seed);
        else if (k->coll == C_RSB || k->coll == C_RS)
            put_items(x.p, T, k->o, first, mine, -1, P, k->seed); /* into the first items */
    }
    const void *sb = ip && !data_coll ? MPI_IN_PLACE : s.p;
    void *rb = ip && k->coll == C_SCATTER ? MPI_IN_PLACE : r.p;
    int rc = KP_SUCCESS;
    switch (k->coll) {
    case C_BCAST: rc = kp_bcast(r.p, k->count, T->t, root, comm); break;
    case C_SCATTER: rc = kp_scatter(s.p, k->count, T->t, rb, k->count, T->t, root, comm); break;
    case C_REDUCE: rc = kp_reduce(sb, r.p, k->count, T->t, ops[k->o], root, comm); break;
    case C_ALLREDUCE: rc = kp_allreduce(sb, r.p, k->count, T->t, ops[k->o], comm); break;
    case C_RSB: rc = kp_reduce_scatter_block(sb, r.p, k->count, T->t, ops[k->o], comm); break;
    case C_RS: rc = kp_reduce_scatter(sb, r.p, k->counts, T->t, ops[k->o], comm); break;
    }
    int lo, hi;
    char what[400];
    snprintf(what, sizeof what, "%s %.100s %s on %s count %lld root %d%s P=%d", cnames[k->coll], spec,
             data_coll ? "" : onames[k->o], T->name, (long long)(k->coll == C_RS ? total : k->count), root,
             ip ? " in place" : "", P);
    if (!kt_same(rc, comm, &lo, &hi))
        kt_fail("%s: return codes differ between ranks (%d..%d): %s", what, lo, hi, kp_last_error());
    else if (rc == KP_ERR_UNSUPPORTED && strcmp(spec, "auto") != 0)
        ++*refused;
    else if (!kt_expect(rc == KP_SUCCESS, "%s: returned %s: %s", what, kp_strerror(rc), kp_last_error()))
        ;
    else {
        mask_padding(&x, &r, T);
        kt_compare_bytes(r.mem, x.mem, r.len + 2 * GUARD, what);
        if (sitems > 0 && !ip) { /* the send buffer is never written */
            gbuf y = galloc(s.len);
            if (k->coll == C_SCATTER)
                put_items(y.p, T, k->o, 0, total, root, P, k->seed);
            else
                put_items(y.p, T, k->o, 0, total, me, P, k->seed);
            kt_compare_bytes(s.mem, y.mem, s.len + 2 * GUARD, "send buffer untouched");
            free(y.mem);
        }
        if (total > 0 && T->ne * total > 0) {
            const char *last = kp_last_algorithm(ccoll[k->coll]);
            kt_expect(kt_spec_matches_coll(ccoll[k->coll], spec, last), "%s: kp_last_algorithm says \"%s\"", what,
                      kt_str(last));
        }
        if (k->coll == C_ALLREDUCE) { /* bitwise the same on every rank */
            uint64_t hsh = 1469598103934665603ULL;
            for (size_t i = 0; i < r.len; i++)
                hsh = (hsh ^ r.p[i]) * 1099511628211ULL;
            int h32 = (int)(hsh & 0x3fffffff);
            kt_expect(kt_same(h32, comm, &lo, &hi), "%s: results differ between ranks", what);
        }
    }
    free(s.mem);
    free(r.mem);
    free(x.mem);
    return rc;
}

/* ---- random cases ------------------------------------------------------------------ */

static uint64_t rng_state;
static uint64_t rnd(uint64_t n)
{
    rng_state = mix(rng_state + 0x9E3779B97F4A7C15ULL);
    return n ? rng_state % n : 0;
}

static int64_t draw_count(void)
{
    static const int64_t small[] = {0, 1, 2, 3, 5, 7, 13, 31, 97, 257, 1009, 4099};
    const uint64_t r = rnd(20);
    if (r < 12)
        return small[r];
    if (r < 18)
        return (int64_t)rnd(3000);
    return 10000 + (int64_t)rnd(60000);
}

#define KT_MAX_P 256 /* ranks the test runs on at most */

static void draw(rcase *k, int coll, int P, int *counts)
{
    memset(k, 0, sizeof *k);
    k->coll = coll;
    k->seed = rnd(1u << 30);
    for (;;) {
        k->ti = (int)rnd((uint64_t)ntypes);
        if (coll == C_BCAST || coll == C_SCATTER) {
            k->o = O_SUM;
            if (types[k->ti].kind == K_MAT || types[k->ti].kind == K_LD)
                continue;
            break;
        }
        unsigned ok = types[k->ti].ops;
        k->o = (int)rnd(O_N);
        if (ok & (1u << k->o))
            break;
    }
    k->count = draw_count();
    if (types[k->ti].ext >= 16 && k->count > 20000)
        k->count /= 4;
    if (coll == C_RSB || coll == C_SCATTER)
        k->count /= P;
    k->root = (int)rnd(64);
    k->inplace = rnd(3) == 0;
    if (coll == C_RS) {
        /* as many draws on every rank, whatever the size of its communicator
         * (the halves differ): the ranks' sequences must stay the same */
        for (int j = 0; j < KT_MAX_P; j++) {
            const int x = rnd(4) == 0 ? 0 : (int)(draw_count() / P);
            if (j < P)
                counts[j] = x;
        }
        k->counts = counts;
    }
}

/* ---- bad input ------------------------------------------------------------------------ */

static void bad_input(int coll)
{
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int buf[64] = {0}, out[64 * 16];
    int counts[64];
    for (int j = 0; j < P && j < 64; j++)
        counts[j] = 2;
    double dbl[4] = {0};
    struct { double v; int i; } di[4];
    memset(di, 0, sizeof di);
    int rc;
#define EXPECT(call, code, why)                                                                                       \
    do {                                                                                                              \
        rc = (call);                                                                                                  \
        kt_expect(rc == (code), "bad input (%s) %s: got %s (%s), expected %s", cnames[coll], why, kp_strerror(rc),     \
                  kp_last_error(), kp_strerror(code));                                                                \
    } while (0)
    switch (coll) {
    case C_BCAST:
        EXPECT(kp_bcast(buf, 2, MPI_INT, P, MPI_COMM_WORLD), KP_ERR_ARG, "root P");
        EXPECT(kp_bcast(buf, 2, MPI_INT, -1, MPI_COMM_WORLD), KP_ERR_ARG, "root -1");
        EXPECT(kp_bcast(NULL, 2, MPI_INT, 0, MPI_COMM_WORLD), KP_ERR_ARG, "NULL buffer");
        EXPECT(kp_bcast(buf, -1, MPI_INT, 0, MPI_COMM_WORLD), KP_ERR_COUNT, "count -1");
        EXPECT(kp_bcast(buf, 2, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD), KP_ERR_DATATYPE, "MPI_DATATYPE_NULL");
        EXPECT(kp_bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD), KP_SUCCESS, "count 0, NULL buffer");
        break;
    case C_SCATTER:
        EXPECT(kp_scatter(buf, 1, MPI_INT, out, 1, MPI_INT, P, MPI_COMM_WORLD), KP_ERR_ARG, "root P");
        /* errors of one rank's arguments: every rank makes one (each names
         * another rank as the root), so that none enters the collective */
        if (P > 1)
            EXPECT(kp_scatter(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, (me + 1) % P, MPI_COMM_WORLD), KP_ERR_ARG,
                   "MPI_IN_PLACE at a non-root");
        EXPECT(kp_scatter(buf, 1, MPI_INT, NULL, 1, MPI_INT, 0, MPI_COMM_WORLD), KP_ERR_ARG, "NULL recvbuf");
        EXPECT(kp_scatter(buf, 1, MPI_INT, out, -2, MPI_INT, 0, MPI_COMM_WORLD), KP_ERR_COUNT, "rcount -2");
        break;
    case C_REDUCE:
    case C_ALLREDUCE: {
        const int red = coll == C_REDUCE;
#define RED(sb, rb, n, t, op, root)                                                                                   \
    (red ? kp_reduce(sb, rb, n, t, op, root, MPI_COMM_WORLD) : kp_allreduce(sb, rb, n, t, op, MPI_COMM_WORLD))
        EXPECT(RED(buf, out, 2, MPI_INT, MPI_OP_NULL, 0), KP_ERR_ARG, "MPI_OP_NULL");
        EXPECT(RED(buf, out, 2, MPI_INT, MPI_REPLACE, 0), KP_ERR_ARG, "MPI_REPLACE");
        EXPECT(RED(di, out, 2, MPI_DOUBLE_INT, MPI_SUM, 0), KP_ERR_DATATYPE, "MPI_SUM on MPI_DOUBLE_INT");
        EXPECT(RED(buf, out, 2, MPI_INT, MPI_MAXLOC, 0), KP_ERR_DATATYPE, "MPI_MAXLOC on MPI_INT");
        EXPECT(RED(dbl, out, 2, MPI_DOUBLE, MPI_BAND, 0), KP_ERR_DATATYPE, "MPI_BAND on MPI_DOUBLE");
        EXPECT(RED(dbl, out, 2, MPI_DOUBLE, MPI_LXOR, 0), KP_ERR_DATATYPE, "MPI_LXOR on MPI_DOUBLE");
        EXPECT(RED(buf, out, 2, MPI_DATATYPE_NULL, MPI_SUM, 0), KP_ERR_DATATYPE, "MPI_DATATYPE_NULL");
        EXPECT(RED(buf, out, -1, MPI_INT, MPI_SUM, 0), KP_ERR_COUNT, "count -1");
        EXPECT(RED(NULL, out, 2, MPI_INT, MPI_SUM, 0), KP_ERR_ARG, "NULL sendbuf");
        EXPECT(RED(NULL, NULL, 0, MPI_INT, MPI_SUM, 0), KP_SUCCESS, "count 0, NULL buffers");
        if (red) {
            EXPECT(kp_reduce(buf, out, 2, MPI_INT, MPI_SUM, P, MPI_COMM_WORLD), KP_ERR_ARG, "root P");
            /* one rank's errors: every rank makes one (see scatter) */
            EXPECT(kp_reduce(buf, NULL, 2, MPI_INT, MPI_SUM, me, MPI_COMM_WORLD), KP_ERR_ARG,
                   "NULL recvbuf at the root");
            if (P > 1)
                EXPECT(kp_reduce(MPI_IN_PLACE, out, 2, MPI_INT, MPI_SUM, (me + 1) % P, MPI_COMM_WORLD), KP_ERR_ARG,
                       "MPI_IN_PLACE at a non-root");
        } else {
            EXPECT(kp_allreduce(buf, NULL, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), KP_ERR_ARG, "NULL recvbuf");
        }
#undef RED
        break;
    }
    case C_RSB:
        EXPECT(kp_reduce_scatter_block(buf, out, 2, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), KP_ERR_ARG, "MPI_OP_NULL");
        EXPECT(kp_reduce_scatter_block(buf, out, -3, MPI_INT, MPI_SUM, MPI_COMM_WORLD), KP_ERR_COUNT, "count -3");
        EXPECT(kp_reduce_scatter_block(buf, out, 1, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD), KP_ERR_DATATYPE,
               "MPI_MINLOC on MPI_INT");
        EXPECT(kp_reduce_scatter_block(buf, NULL, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), KP_ERR_ARG, "NULL recvbuf");
        break;
    case C_RS:
        EXPECT(kp_reduce_scatter(buf, out, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD), KP_ERR_ARG, "NULL recvcounts");
        counts[P - 1] = -1;
        EXPECT(kp_reduce_scatter(buf, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD), KP_ERR_COUNT,
               "a negative recvcount");
        counts[P - 1] = 2;
        EXPECT(kp_reduce_scatter(buf, out, counts, MPI_FLOAT, MPI_BOR, MPI_COMM_WORLD), KP_ERR_DATATYPE,
               "MPI_BOR on MPI_FLOAT");
        EXPECT(kp_reduce_scatter(buf, out, counts, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), KP_ERR_ARG, "MPI_OP_NULL");
        break;
    }
#undef EXPECT
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    kt_init();
    int coll = -1, ncases = 60, nspecs = 0, bad = argc < 2;
    unsigned timeout = 300;
    uint64_t seed = 1;
    char specs[KT_MAX_SPECS][KT_SPEC_LEN];
    for (int c = 0; argc > 1 && c < C_N; c++)
        if (strcmp(argv[1], cnames[c]) == 0)
            coll = c;
    bad |= coll < 0;
    for (int i = 2; i < argc && !bad; i++) {
        if (strcmp(argv[i], "-a") == 0 && i + 1 < argc)
            bad = (nspecs = kt_spec_parse(specs, argv[++i])) < 0;
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            ncases = atoi(argv[++i]);
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            seed = (uint64_t)atoll(argv[++i]);
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
            timeout = (unsigned)atoi(argv[++i]);
        else
            bad = 1;
    }
    if (bad) {
        if (kt_st.rank == 0)
            fprintf(stderr, "usage: test_red bcast|scatter|reduce|allreduce|reduce_scatter_block|reduce_scatter "
                            "[-a spec[,spec...]] [-n cases] [-s seed] [-t seconds]\n");
        MPI_Finalize();
        return 2;
    }
    kt_watchdog(timeout);
    const enum kp_coll kc = ccoll[coll];
    if (nspecs == 0) {
        for (int i = 0; i < kp_algorithm_count(kc); i++)
            nspecs = kt_spec_add(specs, nspecs, kp_algorithm_name(kc, i));
        nspecs = kt_spec_add(specs, nspecs, "auto");
    }
    const MPI_Op mpi_ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR,
                              MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
    memcpy(ops, mpi_ops, sizeof mpi_ops);
    MPI_Op_create(usum, 1, &ops[O_USUM]);
    MPI_Op_create(umat, 0, &ops[O_UMAT]);
    types_make();
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm rev, half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &rev);
    MPI_Comm_split(MPI_COMM_WORLD, me < (P + 1) / 2, me, &half);
    if (P > KT_MAX_P) {
        if (me == 0)
            fprintf(stderr, "test_red: at most %d ranks\n", KT_MAX_P);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *counts = malloc(sizeof(int) * (size_t)P), nnodes = 1;
    kp_node_info(MPI_COMM_WORLD, &nnodes, NULL, NULL, NULL);
    for (int s = 0; s < nspecs; s++) {
        if (kp_set_algorithm(kc, specs[s]) != KP_SUCCESS) {
            kt_fail("kp_set_algorithm(%s, %s): %s", cnames[coll], specs[s], kp_last_error());
            continue;
        }
        rng_state = seed;
        int refused = 0, served = 0;
        for (int i = 0; i < ncases; i++) {
            const int w = (int)rnd(6);
            MPI_Comm comm = w == 4 ? rev : w == 5 ? half : MPI_COMM_WORLD;
            int cp;
            MPI_Comm_size(comm, &cp);
            rcase k;
            draw(&k, coll, cp, counts);
            served += run(&k, comm, specs[s], &refused) == KP_SUCCESS;
        }
        /* rooted collectives: every root once more, on MPI_COMM_WORLD */
        for (int root = 0; root < P && (coll == C_BCAST || coll == C_SCATTER || coll == C_REDUCE); root++) {
            rcase k;
            draw(&k, coll, P, counts);
            k.root = root;
            served += run(&k, MPI_COMM_WORLD, specs[s], &refused) == KP_SUCCESS;
        }
        int lo, hi;
        kt_same(served, MPI_COMM_WORLD, &lo, &hi);
        /* one-node algorithms (shm_*) refuse every communicator that spans
         * several (emulated) nodes */
        kt_expect(lo > 0 || (strncmp(specs[s], "shm_", 4) == 0 && nnodes > 1),
                  "%s %s served no case of %d (refused %d)", cnames[coll], specs[s], ncases, refused);
        if (me == 0 && refused)
            printf("%s %s: %d of %d cases refused (KP_ERR_UNSUPPORTED)\n", cnames[coll], specs[s], refused, ncases);
    }
    kp_set_algorithm(kc, "auto");
    bad_input(coll);
    free(counts);
    MPI_Comm_free(&rev);
    MPI_Comm_free(&half);
    const int rc = kt_finish();
    MPI_Finalize();
    return rc;
}
