/*
 * test_kernels: the combine kernels (src/exec/reduce.c) on one rank, without
 * communication: kp_reduce_apply for every builtin operation on every type
 * kport reduces inline or through MPI_Reduce_local, in each aliasing case
 * (dst is a, dst is b, dst apart, a == b == dst), on misaligned buffers,
 * against a scalar reference computed here; MPI's table of which operation
 * applies to which type (kp_reducer_builtin's codes); a non-commutative
 * user-defined operation with dst == a (the bounce buffer, with elements
 * smaller and larger than the bounce) keeping a as the left operand.
 *
 * usage: test_kernels (one rank). Prints "N passed, M failed".
 */
#include "common.h"
#include "exec/reduce.h"

typedef struct tcase {
    const char *name;
    MPI_Datatype t;
    int size, is_float, is_signed;
} tcase;

/* value i of operand k: small, positive or negative, exact in every type */
static double val(int k, int i, int is_signed)
{
    int v = (i * 7 + k * 13) % 11 + 1;
    return is_signed && (i + k) % 3 == 0 ? -v : v;
}

static void put(unsigned char *p, const tcase *c, double v)
{
    if (c->is_float) {
        if (c->size == 4) {
            float f = (float)v;
            memcpy(p, &f, 4);
        } else {
            memcpy(p, &v, 8);
        }
        return;
    }
    int64_t x = (int64_t)v;
    memcpy(p, &x, (size_t)c->size); /* little-endian: the low bytes */
}

static double get(const unsigned char *p, const tcase *c)
{
    if (c->is_float) {
        if (c->size == 4) {
            float f;
            memcpy(&f, p, 4);
            return f;
        }
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    int64_t x = 0;
    memcpy(&x, p, (size_t)c->size);
    if (c->is_signed && c->size < 8 && (x >> (8 * c->size - 1)) & 1)
        x -= (int64_t)1 << (8 * c->size);
    return (double)x;
}

/* SUM, PROD, MAX, MIN in the type: wrap integers to the width */
static double ref(const tcase *c, int o, double x, double y)
{
    double r = o == 0 ? x + y : o == 1 ? x * y : o == 2 ? (x > y ? x : y) : (x < y ? x : y);
    if (!c->is_float) {
        unsigned char b[8];
        put(b, c, r);
        r = get(b, c);
    }
    return r;
}

static void arith(void)
{
    const tcase cs[] = {{"MPI_INT", MPI_INT, 4, 0, 1},           {"MPI_UNSIGNED", MPI_UNSIGNED, 4, 0, 0},
                        {"MPI_SHORT", MPI_SHORT, 2, 0, 1},       {"MPI_SIGNED_CHAR", MPI_SIGNED_CHAR, 1, 0, 1},
                        {"MPI_UNSIGNED_CHAR", MPI_UNSIGNED_CHAR, 1, 0, 0}, {"MPI_LONG", MPI_LONG, 8, 0, 1},
                        {"MPI_INT64_T", MPI_INT64_T, 8, 0, 1},   {"MPI_UINT16_T", MPI_UINT16_T, 2, 0, 0},
                        {"MPI_FLOAT", MPI_FLOAT, 4, 1, 1},       {"MPI_DOUBLE", MPI_DOUBLE, 8, 1, 1}};
    const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
    const int n = 1003; /* not a multiple of any vector length */
    unsigned char *mem = malloc(4 * (size_t)n * 8 + 64);
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
        for (int o = 0; o < 4; o++)
            for (int alias = 0; alias < 4; alias++)
                for (int mis = 0; mis < 2; mis++) {
                    const tcase *c = &cs[ci];
                    kp_reducer r;
                    char why[200];
                    if (!kt_expect(kp_reducer_builtin(ops[o], c->t, &r, why, sizeof why) == KP_SUCCESS,
                                   "%s on %s: %s", "op", c->name, why))
                        continue;
                    kt_expect(r.fn != NULL && r.elem == c->size, "%s: inline kernel, elem %lld", c->name,
                              (long long)r.elem);
                    unsigned char *a = mem + mis, *b = a + (size_t)n * c->size + 1,
                                  *d = b + (size_t)n * c->size + 3;
                    for (int i = 0; i < n; i++) {
                        put(a + i * c->size, c, val(0, i, c->is_signed));
                        put(b + i * c->size, c, val(1, i, c->is_signed));
                    }
                    /* 0: dst apart; 1: dst == a; 2: dst == b; 3: a == b == dst */
                    unsigned char *dst = alias == 0 ? d : alias == 2 ? b : a, *bb = alias == 3 ? a : b;
                    kp_reduce_apply(&r, dst, a, bb, (int64_t)n * c->size);
                    int bad = -1;
                    for (int i = 0; i < n && bad < 0; i++) {
                        const double x = val(0, i, c->is_signed), y = alias == 3 ? x : val(1, i, c->is_signed);
                        if (get(dst + i * c->size, c) != ref(c, o, x, y))
                            bad = i;
                    }
                    kt_expect(bad < 0, "op %d on %s, aliasing %d, misaligned %d: element %d is %g, expected %g", o,
                              c->name, alias, mis, bad, bad < 0 ? 0 : get(dst + bad * c->size, c),
                              bad < 0 ? 0
                                      : ref(c, o, val(0, bad, c->is_signed),
                                            alias == 3 ? val(0, bad, c->is_signed) : val(1, bad, c->is_signed)));
                }
    free(mem);
}

/* logical and bitwise on unsigned int, logical on C bool, bitwise on MPI_BYTE */
static void logic(void)
{
    const int n = 77;
    unsigned a[77], b[77], d[77];
    for (int i = 0; i < n; i++)
        a[i] = (unsigned)(i % 3) * 0x01010101u, b[i] = (unsigned)((i / 3) % 3) * 0x10203u;
    const MPI_Op ops[] = {MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    for (int o = 0; o < 6; o++) {
        kp_reducer r;
        char why[200];
        kp_reducer_builtin(ops[o], MPI_UNSIGNED, &r, why, sizeof why);
        kp_reduce_apply(&r, d, a, b, sizeof d);
        int ok = 1;
        for (int i = 0; i < n; i++) {
            unsigned x = a[i], y = b[i];
            unsigned e = o == 0   ? (x && y)
                         : o == 1 ? (x || y)
                         : o == 2 ? (!x != !y)
                         : o == 3 ? x & y
                         : o == 4 ? x | y
                                  : x ^ y;
            ok &= d[i] == e;
        }
        kt_expect(ok, "logical/bitwise operation %d on MPI_UNSIGNED", o);
    }
    unsigned char ba[5] = {0, 1, 0, 1, 1}, bb[5] = {0, 0, 1, 1, 1}, bd[5];
    const unsigned char want[3][5] = {{0, 0, 0, 1, 1}, {0, 1, 1, 1, 1}, {0, 1, 1, 0, 0}};
    for (int o = 0; o < 3; o++) {
        kp_reducer r;
        char why[200];
        kt_expect(kp_reducer_builtin(ops[o], MPI_C_BOOL, &r, why, sizeof why) == KP_SUCCESS, "%s", why);
        kp_reduce_apply(&r, bd, ba, bb, 5);
        kt_expect(memcmp(bd, want[o], 5) == 0, "logical operation %d on MPI_C_BOOL", o);
    }
    unsigned char ya[3] = {0xF0, 0x0F, 0xAA}, yb[3] = {0xFF, 0xF0, 0x55}, yd[3];
    kp_reducer r;
    char why[200];
    kp_reducer_builtin(MPI_BXOR, MPI_BYTE, &r, why, sizeof why);
    kp_reduce_apply(&r, yd, ya, yb, 3);
    kt_expect(yd[0] == 0x0F && yd[1] == 0xFF && yd[2] == 0xFF, "MPI_BXOR on MPI_BYTE");
}

/* MAXLOC / MINLOC with ties: the smaller index wins */
static void loc(void)
{
    struct di {
        double v;
        int i;
    } a[4] = {{1, 5}, {2, 1}, {3, 3}, {3, 3}}, b[4] = {{1, 2}, {1, 0}, {4, 9}, {3, 1}}, d[4];
    kp_reducer r;
    char why[200];
    kt_expect(kp_reducer_builtin(MPI_MAXLOC, MPI_DOUBLE_INT, &r, why, sizeof why) == KP_SUCCESS && r.fn &&
                  r.elem == sizeof(struct di),
              "MPI_MAXLOC on MPI_DOUBLE_INT inline, elem = extent");
    kp_reduce_apply(&r, d, a, b, sizeof d);
    kt_expect(d[0].v == 1 && d[0].i == 2 && d[1].v == 2 && d[1].i == 1 && d[2].v == 4 && d[2].i == 9 &&
                  d[3].v == 3 && d[3].i == 1,
              "MPI_MAXLOC on MPI_DOUBLE_INT (ties: smaller index)");
    kp_reducer_builtin(MPI_MINLOC, MPI_DOUBLE_INT, &r, why, sizeof why);
    kp_reduce_apply(&r, a, a, b, sizeof d); /* dst == a */
    kt_expect(a[0].i == 2 && a[1].v == 1 && a[1].i == 0 && a[2].v == 3 && a[2].i == 3 && a[3].i == 1,
              "MPI_MINLOC on MPI_DOUBLE_INT in place");
    struct si { short v; int i; } sa[2] = {{7, 4}, {-1, 2}}, sb[2] = {{7, 3}, {-2, 8}};
    kp_reducer_builtin(MPI_MINLOC, MPI_SHORT_INT, &r, why, sizeof why);
    kp_reduce_apply(&r, sb, sa, sb, sizeof sa); /* dst == b */
    kt_expect(sb[0].v == 7 && sb[0].i == 3 && sb[1].v == -2 && sb[1].i == 8, "MPI_MINLOC on MPI_SHORT_INT");
    struct ldi { long double v; int i; } la[1] = {{2.5L, 7}}, lb[1] = {{2.5L, 6}}, ld[1];
    kp_reducer_builtin(MPI_MAXLOC, MPI_LONG_DOUBLE_INT, &r, why, sizeof why);
    kp_reduce_apply(&r, ld, la, lb, sizeof la);
    kt_expect(ld[0].v == 2.5L && ld[0].i == 6, "MPI_MAXLOC on MPI_LONG_DOUBLE_INT");
}

/* MPI's table: what applies and what does not */
static void table(void)
{
    static const struct { const char *what; int code; } want[] = {
        {"SUM double_int", KP_ERR_DATATYPE}, {"MAXLOC int", KP_ERR_DATATYPE}, {"BAND double", KP_ERR_DATATYPE},
        {"LAND float", KP_ERR_DATATYPE},     {"SUM c_bool", KP_ERR_DATATYPE}, {"BOR byte", KP_SUCCESS},
        {"SUM byte", KP_ERR_DATATYPE},       {"LOR c_bool", KP_SUCCESS},      {"PROD long double", KP_SUCCESS},
        {"SUM char", KP_ERR_UNSUPPORTED},    {"OP_NULL int", KP_ERR_ARG},     {"REPLACE int", KP_ERR_ARG}};
    const MPI_Op o[] = {MPI_SUM, MPI_MAXLOC, MPI_BAND, MPI_LAND, MPI_SUM, MPI_BOR,
                        MPI_SUM, MPI_LOR,    MPI_PROD, MPI_SUM,  MPI_OP_NULL, MPI_REPLACE};
    const MPI_Datatype t[] = {MPI_DOUBLE_INT, MPI_INT,  MPI_DOUBLE,      MPI_FLOAT, MPI_C_BOOL, MPI_BYTE,
                              MPI_BYTE,       MPI_C_BOOL, MPI_LONG_DOUBLE, MPI_CHAR,  MPI_INT,    MPI_INT};
    for (int i = 0; i < 12; i++) {
        kp_reducer r;
        char why[200] = "";
        const int rc = kp_reducer_builtin(o[i], t[i], &r, why, sizeof why);
        kt_expect(rc == want[i].code, "%s: got %s (%s), expected %s", want[i].what, kp_strerror(rc), why,
                  kp_strerror(want[i].code));
    }
}

/* 2x2 matrices of ints (16 bytes) or of 3000 (12000 bytes, above the bounce) */
static int mdim;
static void matop(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int e = 0; e < *len; e++) {
        int *x = (int *)in + e * mdim, *y = (int *)inout + e * mdim;
        /* x then y: an associative, non-commutative combine on each
         * element's first 4 ints (2x2 product), the rest summed */
        int r[4] = {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2],
                    x[2] * y[1] + x[3] * y[3]};
        memcpy(y, r, sizeof r);
        for (int k = 4; k < mdim; k++)
            y[k] += x[k];
    }
}

static void noncommutative(void)
{
    MPI_Op op;
    MPI_Op_create(matop, 0, &op);
    const int dims[] = {4, 3000};
    for (int di = 0; di < 2; di++) {
        mdim = dims[di];
        MPI_Datatype t;
        MPI_Type_contiguous(mdim, MPI_INT, &t);
        MPI_Type_commit(&t);
        const int n = 5;
        int *a = malloc(sizeof(int) * (size_t)(n * mdim)), *b = malloc(sizeof(int) * (size_t)(n * mdim));
        for (int i = 0; i < n * mdim; i++)
            a[i] = (i % 4 == 1) ? 1 : i % 5, b[i] = (i % 4 == 2) ? 2 : i % 3;
        int *want = malloc(sizeof(int) * (size_t)(n * mdim));
        memcpy(want, b, sizeof(int) * (size_t)(n * mdim));
        int len = n;
        matop(a, want, &len, &t); /* want = a op b */
        kp_reducer r;
        kp_reducer_user(op, t, (int64_t)mdim * 4, 0, &r);
        kp_reduce_apply(&r, a, a, b, (int64_t)n * mdim * 4); /* dst == a: the bounce */
        kt_expect(memcmp(a, want, sizeof(int) * (size_t)(n * mdim)) == 0,
                  "non-commutative user operation, dst == a, %d-byte elements", mdim * 4);
        free(a);
        free(b);
        free(want);
        MPI_Type_free(&t);
    }
    MPI_Op_free(&op);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    kt_init();
    kt_watchdog(120);
    arith();
    logic();
    loc();
    table();
    noncommutative();
    const int rc = kt_finish();
    MPI_Finalize();
    return rc;
}
