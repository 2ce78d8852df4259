/*
 * Strided one-sided transfers under real MPI (include/kport.h, "One-sided
 * strided transfers"): every byte of every window and buffer is compared
 * with a reference computed locally by plain nested loops (not kport's
 * descriptor code).
 *
 *   test_strided [--methods direct,datatype,pack,auto]
 *                [--user-window | --user-shared] [--thread] [--quick]
 *
 * Per method (forced with kp_strided_set_method):
 *   put   rank r puts a section of its source to rank r+1 (mod P): shapes of
 *         0 to 4 stride levels, odd counts and strides, zero counts, chunks
 *         from 1 byte to 4 KiB, sections larger than a slot; the whole
 *         window of every rank is checked (bytes outside the section too);
 *   get   rank r gets a section of rank r+1's window into a buffer whose
 *         bytes outside the section must stay untouched;
 *   acc   every rank accumulates into rank 0's same elements (overlapping,
 *         several origins at once), scale = origin + 1, for int, long,
 *         float and double (integer values: exact sums);
 *   nonblocking  three puts and two gets in flight per rank, to two
 *         targets, completed in reverse order and by kp_test polling;
 *   bad   descriptors refused with the expected code and a message, and
 *         every window unchanged afterwards;
 *   mixed  every rank accumulates into rank 0's same elements with a
 *         method of its own (direct, datatype, pack, auto by rank mod 4):
 *         exact sums; and (shared window) a direct accumulate into the own
 *         window from a source overlapping the target region;
 *   counters  the MPI calls per call (kp_strided_counters): one flush per
 *         blocking direct / datatype call, no lock, none by barriers; on a
 *         shared window direct puts, gets and accumulates are copies and
 *         adds (no MPI operation, no flush), every accumulate takes the
 *         target's accumulate lock once;
 *   params  KPORT_PARAMS' "rma" object steers auto (packing made free:
 *         auto packs) and a negative field is refused by kp_win_create.
 * --user-window: the window is the program's own (MPI_Win_create over
 * malloc'd memory) wrapped with kp_win_from_mpi; --user-shared: the
 * program's own from MPI_Win_allocate_shared (direct by load/store).
 * kport's own window (kp_win_create) is shared, and direct copies by
 * load/store, when every rank is on this machine, unless
 * KPORT_STRIDED_SHARED=0 (the ctest runs one such).
 * --thread: MPI_THREAD_MULTIPLE and the helper thread; the targets sit in a
 * plain MPI_Barrier while origins fence their pack writes (only the helper
 * thread can unpack them).
 * Environment: KPORT_STRIDED_SLOTS / KPORT_STRIDED_SLOT_KB shrink the pool
 * (the ctest runs one with 2 slots of 64 bytes: more pieces than slots).
 */
#include "common.h"

#define WIN_BYTES (256 * 1024)
#define MAXL KP_STRIDED_MAX_LEVELS

static int rank, P;
static kp_win win;
static unsigned char *wbase;
static int quick;
static int loadstore; /* direct puts and gets expected by load/store */

typedef struct shape {
    int levels;
    MPI_Aint count[MAXL + 1];
    int lpad, rpad; /* stride = what it strides over + pad, per side */
    MPI_Aint rdisp;
} shape;

static const shape shapes[] = {
    {0, {13}, 0, 0, 17},
    {1, {5, 7}, 1, 3, 5},
    {1, {8, 100}, 8, 8, 0},
    {1, {1, 301}, 2, 1, 3},
    {2, {3, 4, 5}, 1, 2, 11},
    {3, {7, 3, 2, 3}, 3, 0, 1},
    {4, {2, 3, 2, 2, 3}, 1, 1, 7},
    {1, {1000, 9}, 24, 40, 9},
    {2, {24, 50, 6}, 8, 0, 64},
    {1, {4096, 20}, 0, 8, 33},
    /* the load/store direct's inline rows (1-256 bytes: each branch of
     * copy_small, 16-byte moves with an overlapping last one) and rows
     * above kp_copy's 2 KiB pieces */
    {2, {4, 6, 3}, 4, 4, 3},
    {1, {16, 40}, 16, 0, 1},
    {2, {33, 5, 4}, 1, 32, 8},
    {1, {256, 7}, 3, 0, 5},
    {1, {257, 3}, 0, 1, 0},
    {1, {5000, 6}, 24, 40, 17},
    {1, {0, 5}, 1, 1, 0},
    {2, {5, 0, 3}, 1, 1, 0},
    {1, {6, 1}, 0, 0, 2}, /* count[1] = 1: the stride does not matter */
};
#define NSHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

/* strides of a side: stride[i] = extent of the block below + pad*(i+1) */
static MPI_Aint strides(const shape *s, MPI_Aint mult, int pad, MPI_Aint *st)
{
    MPI_Aint ext = s->count[0] * mult;
    for (int i = 0; i < s->levels; i++) {
        st[i] = ext + pad * (i + 1);
        ext = st[i] * (s->count[i + 1] - 1) + ext;
        if (s->count[i + 1] == 1)
            st[i] = 1 + i; /* smaller than the row: legal when the count is 1 */
        if (s->count[i + 1] == 0)
            ext = 0;
    }
    return ext < 0 ? 0 : ext;
}

static int64_t total(const shape *s, MPI_Aint mult)
{
    int64_t n = s->count[0] * mult;
    for (int i = 1; i <= s->levels; i++)
        n *= s->count[i];
    return n;
}

/* reference copy of a section: nested loops */
static void ref_copy(unsigned char *dst, const MPI_Aint *dst_st, const unsigned char *src, const MPI_Aint *src_st,
                     const MPI_Aint *count, int level)
{
    if (level == 0) {
        memcpy(dst, src, (size_t)count[0]);
        return;
    }
    for (MPI_Aint i = 0; i < count[level]; i++)
        ref_copy(dst + i * dst_st[level - 1], dst_st, src + i * src_st[level - 1], src_st, count, level - 1);
}

static unsigned char win_byte(int r, size_t i, int tag)
{
    return (unsigned char)(r * 31 + (int)(i % 251) * 7 + tag * 13 + 1);
}

static unsigned char src_byte(int r, size_t i, int tag)
{
    return (unsigned char)(r * 13 + (int)(i % 241) * 3 + tag * 5 + 5);
}

static void win_init(int tag)
{
    for (size_t i = 0; i < WIN_BYTES; i++)
        wbase[i] = win_byte(rank, i, tag);
    kp_win_barrier(win);
}

static void expect_rc(int rc, int want, const char *what)
{
    if (rc == want)
        kt_pass();
    else
        kt_fail("%s: returned %d (%s), expected %d; %s", what, rc, kp_strerror(rc), want, kp_last_error());
}

static void test_put(const char *method, const shape *s, int tag)
{
    char what[160];
    snprintf(what, sizeof(what), "%s put shape %d", method, (int)(s - shapes));
    win_init(tag);
    MPI_Aint lst[MAXL], rst[MAXL];
    MPI_Aint lext = strides(s, 1, s->lpad, lst), rext = strides(s, 1, s->rpad, rst);
    unsigned char *src = malloc((size_t)lext + 1);
    for (MPI_Aint i = 0; i < lext + 1; i++)
        src[i] = src_byte(rank, (size_t)i, tag);
    int target = (rank + 1) % P, origin = (rank - 1 + P) % P;
    expect_rc(kp_put_strided(src, lst, s->rdisp, rst, s->count, s->levels, target, win), KP_SUCCESS, what);
    kp_win_barrier(win);
    /* expected: my initial window with the origin's section written */
    unsigned char *exp = malloc(WIN_BYTES), *osrc = malloc((size_t)lext + 1);
    for (size_t i = 0; i < WIN_BYTES; i++)
        exp[i] = win_byte(rank, i, tag);
    for (MPI_Aint i = 0; i < lext + 1; i++)
        osrc[i] = src_byte(origin, (size_t)i, tag);
    if (total(s, 1) > 0)
        ref_copy(exp + s->rdisp, rst, osrc, lst, s->count, s->levels);
    (void)rext;
    kt_compare_bytes(wbase, exp, WIN_BYTES, what);
    free(src);
    free(exp);
    free(osrc);
    kp_win_barrier(win);
}

static void test_get(const char *method, const shape *s, int tag)
{
    char what[160];
    snprintf(what, sizeof(what), "%s get shape %d", method, (int)(s - shapes));
    win_init(tag);
    MPI_Aint lst[MAXL], rst[MAXL];
    MPI_Aint lext = strides(s, 1, s->lpad, lst);
    strides(s, 1, s->rpad, rst);
    size_t n = (size_t)lext + 16;
    unsigned char *dst = malloc(n), *exp = malloc(n), *twin = malloc(WIN_BYTES);
    for (size_t i = 0; i < n; i++)
        dst[i] = exp[i] = (unsigned char)(0xA5 ^ i);
    int target = (rank + 1) % P;
    for (size_t i = 0; i < WIN_BYTES; i++)
        twin[i] = win_byte(target, i, tag);
    expect_rc(kp_get_strided(dst, lst, s->rdisp, rst, s->count, s->levels, target, win), KP_SUCCESS, what);
    if (total(s, 1) > 0)
        ref_copy(exp, lst, twin + s->rdisp, rst, s->count, s->levels);
    kt_compare_bytes(dst, exp, n, what);
    free(dst);
    free(exp);
    free(twin);
    kp_win_barrier(win);
}

/* ---- accumulate ------------------------------------------------------------ */

static const char *const tnames[4] = {"int", "long", "float", "double"};
static const int tsize[4] = {(int)sizeof(int), (int)sizeof(long), (int)sizeof(float), (int)sizeof(double)};

static double elem_get(int t, const unsigned char *p)
{
    switch (t) {
    case 0: { int v; memcpy(&v, p, sizeof v); return v; }
    case 1: { long v; memcpy(&v, p, sizeof v); return (double)v; }
    case 2: { float v; memcpy(&v, p, sizeof v); return v; }
    default: { double v; memcpy(&v, p, sizeof v); return v; }
    }
}

static void elem_set(int t, unsigned char *p, double x)
{
    switch (t) {
    case 0: { int v = (int)x; memcpy(p, &v, sizeof v); break; }
    case 1: { long v = (long)x; memcpy(p, &v, sizeof v); break; }
    case 2: { float v = (float)x; memcpy(p, &v, sizeof v); break; }
    default: memcpy(p, &x, sizeof x); break;
    }
}

/* reference accumulate: dst[e] += scale * src[e] over the section */
static void ref_acc(int t, double scale, unsigned char *dst, const MPI_Aint *dst_st, const unsigned char *src,
                    const MPI_Aint *src_st, const MPI_Aint *count, int level)
{
    if (level == 0) {
        for (MPI_Aint b = 0; b < count[0]; b += tsize[t])
            elem_set(t, dst + b, elem_get(t, dst + b) + scale * elem_get(t, src + b));
        return;
    }
    for (MPI_Aint i = 0; i < count[level]; i++)
        ref_acc(t, scale, dst + i * dst_st[level - 1], dst_st, src + i * src_st[level - 1], src_st, count,
                level - 1);
}

static void acc_src_fill(int t, unsigned char *p, size_t n, int r)
{
    for (size_t e = 0; e + (size_t)tsize[t] <= n; e += (size_t)tsize[t])
        elem_set(t, p + e, (double)((e / (size_t)tsize[t] + (size_t)r) % 13 + 1));
}

static void acc_win_fill(int t, unsigned char *p, size_t n, int r)
{
    for (size_t e = 0; e + (size_t)tsize[t] <= n; e += (size_t)tsize[t])
        elem_set(t, p + e, (double)((e / (size_t)tsize[t]) % 17 + (size_t)r));
}

/* On rank 0: its window must be its fill plus, from every rank o, reps
 * accumulates of o's source (ln bytes, strides src_st) scaled by o + 1
 * into disp (strides dst_st). */
static void expect_acc_sum(int t, size_t ln, MPI_Aint disp, const MPI_Aint *dst_st, const MPI_Aint *src_st,
                           const MPI_Aint *count, int levels, int reps, const char *what)
{
    unsigned char *exp = malloc(WIN_BYTES), *osrc = malloc(ln);
    acc_win_fill(t, exp, WIN_BYTES, 0);
    for (int o = 0; o < P; o++) {
        acc_src_fill(t, osrc, ln, o);
        for (int i = 0; i < reps; i++)
            ref_acc(t, o + 1, exp + disp, dst_st, osrc, src_st, count, levels);
    }
    kt_compare_bytes(wbase, exp, WIN_BYTES, what);
    free(exp);
    free(osrc);
}

static void test_acc(const char *method, const shape *s0, int t)
{
    char what[160];
    snprintf(what, sizeof(what), "%s acc %s shape %d", method, tnames[t], (int)(s0 - shapes));
    shape s = *s0;
    s.count[0] *= tsize[t];
    s.rdisp *= tsize[t]; /* element-aligned displacement */
    MPI_Aint lst[MAXL], rst[MAXL];
    MPI_Aint lext = strides(&s, 1, s.lpad * tsize[t], lst), rext = strides(&s, 1, s.rpad * tsize[t], rst);
    if (s.rdisp + rext > WIN_BYTES)
        return;
    acc_win_fill(t, wbase, WIN_BYTES, rank);
    kp_win_barrier(win);
    size_t ln = (size_t)lext + 8;
    unsigned char *src = malloc(ln);
    acc_src_fill(t, src, ln, rank);
    unsigned char scale[8];
    elem_set(t, scale, rank + 1);
    expect_rc(kp_acc_strided((enum kp_acc_type)t, scale, src, lst, s.rdisp, rst, s.count, s.levels, 0, win),
              KP_SUCCESS, what);
    kp_win_barrier(win);
    if (rank == 0)
        expect_acc_sum(t, ln, s.rdisp, rst, lst, s.count, s.levels, total(&s, 1) > 0, what);
    free(src);
    kp_win_barrier(win);
}

/* Accumulates from every rank into rank 0's same elements, each origin
 * forcing its own method (rank r: direct, datatype, pack, auto by r mod
 * 4), 40 times each, for int and double: the sums must be exact, so
 * accumulates of different methods are atomic with each other (on a
 * shared window the direct method adds by load/store, the others are MPI
 * operations; all take the target's accumulate lock). Then each rank
 * accumulates into its own window from a source overlapping the target
 * region (direct): every element adds the source as it was before the
 * call. */
static void test_acc_mixed(void)
{
    static const char *const mm[4] = {"direct", "datatype", "pack", "auto"};
    enum { ROWS = 24, COLS = 20, STRIDE = 32, REPS = 40 };
    const int types[2] = {0, 3};
    for (int ti = 0; ti < 2; ti++) {
        const int t = types[ti], es = tsize[t];
        char what[96];
        snprintf(what, sizeof(what), "mixed-method acc %s (rank %d: %s)", tnames[t], rank, mm[rank % 4]);
        acc_win_fill(t, wbase, WIN_BYTES, rank);
        const size_t ln = (size_t)ROWS * STRIDE * (size_t)es;
        unsigned char *src = malloc(ln), scale[8];
        acc_src_fill(t, src, ln, rank);
        elem_set(t, scale, rank + 1);
        MPI_Aint count[2] = {COLS * es, ROWS}, st[1] = {STRIDE * es};
        kp_strided_set_method(mm[rank % 4]);
        kp_win_barrier(win);
        int rc = KP_SUCCESS;
        for (int i = 0; i < REPS && rc == KP_SUCCESS; i++)
            rc = kp_acc_strided((enum kp_acc_type)t, scale, src, st, 64, st, count, 1, 0, win);
        expect_rc(rc, KP_SUCCESS, what);
        kp_strided_set_method(NULL);
        kp_win_barrier(win);
        if (rank == 0)
            expect_acc_sum(t, ln, 64, st, st, count, 1, REPS, what);
        free(src);
        kp_win_barrier(win);
        /* into itself, the source 3 elements before the target region (an
         * add in place, front to back, would read elements it already
         * changed); MPI calls this erroneous, kport's load/store path
         * defines it */
        if (!loadstore)
            continue;
        snprintf(what, sizeof(what), "direct acc %s into itself, overlapping", tnames[t]);
        acc_win_fill(t, wbase, WIN_BYTES, rank);
        unsigned char *exp = malloc(WIN_BYTES), *before = malloc(WIN_BYTES);
        memcpy(exp, wbase, WIN_BYTES);
        memcpy(before, wbase, WIN_BYTES);
        elem_set(t, scale, 2);
        kp_strided_set_method("direct");
        rc = kp_acc_strided((enum kp_acc_type)t, scale, wbase + 64 - 3 * es, st, 64, st, count, 1, rank, win);
        kp_strided_set_method(NULL);
        expect_rc(rc, KP_SUCCESS, what);
        ref_acc(t, 2, exp + 64, st, before + 64 - 3 * es, st, count, 1);
        kp_win_barrier(win);
        kt_compare_bytes(wbase, exp, WIN_BYTES, what);
        free(exp);
        free(before);
        kp_win_barrier(win);
    }
}

/* ---- nonblocking ----------------------------------------------------------- */

static void test_nonblocking(const char *method, int tag)
{
    char what[160];
    snprintf(what, sizeof(what), "%s nonblocking", method);
    win_init(tag);
    const shape *ps[3] = {&shapes[2], &shapes[4], &shapes[8]};
    MPI_Aint pdisp[3] = {0, 20000, 40000};
    MPI_Aint gdisp = 100000;
    const shape *gs[2] = {&shapes[1], &shapes[7]};
    MPI_Aint gdisp2[2] = {gdisp, gdisp + 30000};
    MPI_Aint lst[5][MAXL], rst[5][MAXL], lext[5];
    unsigned char *src[3], *dst[2];
    kp_request req[5];
    int t1 = (rank + 1) % P, t2 = (rank + 2) % P;
    for (int i = 0; i < 3; i++) {
        lext[i] = strides(ps[i], 1, ps[i]->lpad, lst[i]);
        strides(ps[i], 1, ps[i]->rpad, rst[i]);
        src[i] = malloc((size_t)lext[i]);
        for (MPI_Aint j = 0; j < lext[i]; j++)
            src[i][j] = src_byte(rank, (size_t)j, tag + i);
        expect_rc(kp_iput_strided(src[i], lst[i], pdisp[i], rst[i], ps[i]->count, ps[i]->levels, t1, win, &req[i]),
                  KP_SUCCESS, what);
    }
    for (int i = 0; i < 2; i++) {
        lext[3 + i] = strides(gs[i], 1, gs[i]->lpad, lst[3 + i]);
        strides(gs[i], 1, gs[i]->rpad, rst[3 + i]);
        dst[i] = calloc((size_t)lext[3 + i], 1);
        expect_rc(kp_iget_strided(dst[i], lst[3 + i], gdisp2[i], rst[3 + i], gs[i]->count, gs[i]->levels, t2, win,
                                  &req[3 + i]),
                  KP_SUCCESS, what);
    }
    /* complete: the gets by kp_test polling, then the puts in reverse order */
    int pending = 2;
    while (pending) {
        pending = 0;
        for (int i = 4; i >= 3; i--) {
            int done = 0;
            expect_rc(kp_test(&req[i], &done), KP_SUCCESS, what);
            if (!done)
                pending++;
            else if (req[i] != KP_REQUEST_NULL)
                kt_fail("%s: a completed request is not KP_REQUEST_NULL", what);
        }
    }
    for (int i = 2; i >= 0; i--)
        expect_rc(kp_wait(&req[i]), KP_SUCCESS, what);
    expect_rc(kp_wait(&req[0]), KP_SUCCESS, "kp_wait on KP_REQUEST_NULL");
    /* gets: from t2's initial window */
    for (int i = 0; i < 2; i++) {
        unsigned char *exp = calloc((size_t)lext[3 + i], 1), *twin = malloc(WIN_BYTES);
        for (size_t j = 0; j < WIN_BYTES; j++)
            twin[j] = win_byte(t2, j, tag);
        ref_copy(exp, lst[3 + i], twin + gdisp2[i], rst[3 + i], gs[i]->count, gs[i]->levels);
        kt_compare_bytes(dst[i], exp, (size_t)lext[3 + i], what);
        free(exp);
        free(twin);
    }
    kp_win_barrier(win);
    unsigned char *exp = malloc(WIN_BYTES), *osrc = malloc(65536);
    for (size_t j = 0; j < WIN_BYTES; j++)
        exp[j] = win_byte(rank, j, tag);
    int origin = (rank - 1 + P) % P;
    for (int i = 0; i < 3; i++) {
        for (MPI_Aint j = 0; j < lext[i]; j++)
            osrc[j] = src_byte(origin, (size_t)j, tag + i);
        ref_copy(exp + pdisp[i], rst[i], osrc, lst[i], ps[i]->count, ps[i]->levels);
    }
    kt_compare_bytes(wbase, exp, WIN_BYTES, what);
    free(exp);
    free(osrc);
    for (int i = 0; i < 3; i++)
        free(src[i]);
    for (int i = 0; i < 2; i++)
        free(dst[i]);
    kp_win_barrier(win);
}

/* ---- bad descriptors --------------------------------------------------------- */

static void expect_bad(int rc, int want, const char *what, const char *word)
{
    if (rc != want)
        kt_fail("bad input %s: returned %d (%s), expected %d", what, rc, kp_strerror(rc), want);
    else if (!strstr(kp_last_error(), word))
        kt_fail("bad input %s: message \"%s\" does not mention \"%s\"", what, kp_last_error(), word);
    else
        kt_pass();
}

static void test_bad(int tag)
{
    win_init(tag);
    int t = (rank + 1) % P;
    unsigned char buf[4096];
    memset(buf, 0x5A, sizeof(buf));
    MPI_Aint c1[2] = {8, 4}, s1[1] = {16}, s1small[1] = {7}, sneg[1] = {-16};
    MPI_Aint cneg0[2] = {-1, 4}, cneg1[2] = {8, -5}, cbig[3] = {(MPI_Aint)1 << 40, (MPI_Aint)1 << 30, 64};
    MPI_Aint c2[3] = {8, 4, 3}, s2bad[2] = {16, 40}, s2[2] = {16, 64};
    double one = 1.0;
    expect_bad(kp_put_strided(buf, s1, 0, s1, cneg0, 1, t, win), KP_ERR_COUNT, "count[0] = -1", "count[0]");
    expect_bad(kp_put_strided(buf, s1, 0, s1, cneg1, 1, t, win), KP_ERR_COUNT, "count[1] = -5", "count[1]");
    expect_bad(kp_put_strided(buf, s2, 0, s2, cbig, 2, t, win), KP_ERR_COUNT, "overflowing counts", "2^62");
    expect_bad(kp_put_strided(buf, s1, 0, s1small, c1, 1, t, win), KP_ERR_ARG, "target stride < row", "target stride[0]");
    expect_bad(kp_put_strided(buf, s1small, 0, s1, c1, 1, t, win), KP_ERR_ARG, "origin stride < row", "origin stride[0]");
    expect_bad(kp_put_strided(buf, s2, 0, s2bad, c2, 2, t, win), KP_ERR_ARG, "level-2 stride < block", "stride[1]");
    expect_bad(kp_put_strided(buf, s1, 0, sneg, c1, 1, t, win), KP_ERR_ARG, "negative stride", "negative");
    expect_bad(kp_put_strided(buf, s1, WIN_BYTES - 20, s1, c1, 1, t, win), KP_ERR_ARG, "region past the window", "outside");
    expect_bad(kp_put_strided(buf, s1, -8, s1, c1, 1, t, win), KP_ERR_ARG, "negative displacement", "outside");
    expect_bad(kp_get_strided(buf, s1, WIN_BYTES, s1, c1, 1, t, win), KP_ERR_ARG, "get past the window", "outside");
    expect_bad(kp_put_strided(NULL, s1, 0, s1, c1, 1, t, win), KP_ERR_ARG, "NULL source", "NULL");
    expect_bad(kp_get_strided(NULL, s1, 0, s1, c1, 1, t, win), KP_ERR_ARG, "NULL destination", "NULL");
    expect_bad(kp_put_strided(buf, s1, 0, s1, NULL, 1, t, win), KP_ERR_ARG, "NULL count", "count");
    expect_bad(kp_put_strided(buf, s1, 0, NULL, c1, 1, t, win), KP_ERR_ARG, "NULL stride", "NULL");
    expect_bad(kp_put_strided(buf, s1, 0, s1, c1, -1, t, win), KP_ERR_ARG, "levels -1", "levels");
    expect_bad(kp_put_strided(buf, s1, 0, s1, c1, MAXL + 1, t, win), KP_ERR_ARG, "levels 9", "levels");
    expect_bad(kp_put_strided(buf, s1, 0, s1, c1, 1, P, win), KP_ERR_ARG, "target P", "target rank");
    expect_bad(kp_put_strided(buf, s1, 0, s1, c1, 1, -1, win), KP_ERR_ARG, "target -1", "target rank");
    expect_bad(kp_put_strided(buf, s1, 0, s1, c1, 1, t, NULL), KP_ERR_ARG, "NULL window", "win");
    expect_bad(kp_acc_strided((enum kp_acc_type)7, &one, buf, s1, 0, s1, c1, 1, t, win), KP_ERR_DATATYPE,
               "accumulate type 7", "type");
    expect_bad(kp_acc_strided(KP_ACC_DOUBLE, NULL, buf, s1, 0, s1, c1, 1, t, win), KP_ERR_ARG, "NULL scale", "scale");
    MPI_Aint c12[2] = {12, 4};
    expect_bad(kp_acc_strided(KP_ACC_DOUBLE, &one, buf, s1, 0, s1, c12, 1, t, win), KP_ERR_COUNT,
               "12 bytes of doubles", "element");
    kp_request r = KP_REQUEST_NULL;
    expect_bad(kp_iput_strided(buf, s1, WIN_BYTES - 20, s1, c1, 1, t, win, &r), KP_ERR_ARG, "nonblocking past the window",
               "outside");
    kt_expect(r == KP_REQUEST_NULL, "a refused nonblocking call left a request");
    expect_bad(kp_strided_set_method("fastest"), KP_ERR_PARAM, "method name", "fastest");
    /* nothing was written anywhere */
    kp_win_barrier(win);
    unsigned char *exp = malloc(WIN_BYTES);
    for (size_t i = 0; i < WIN_BYTES; i++)
        exp[i] = win_byte(rank, i, tag);
    kt_compare_bytes(wbase, exp, WIN_BYTES, "window after refused calls");
    free(exp);
    /* zero counts are no-ops, even with NULL buffers */
    MPI_Aint cz[2] = {0, 4};
    expect_rc(kp_put_strided(NULL, NULL, 0, NULL, cz, 1, t, win), KP_SUCCESS, "zero count with NULL buffers");
    kp_win_barrier(win);
}

/* ---- the helper thread ----------------------------------------------------- */

static void test_thread(int tag)
{
    win_init(tag);
    int rc = kp_win_progress_thread(win, 1);
    if (rc != KP_SUCCESS) {
        kt_fail("kp_win_progress_thread: %s", kp_last_error());
        return;
    }
    kp_strided_set_method("pack");
    const shape *s = &shapes[8];
    MPI_Aint lst[MAXL], rst[MAXL];
    MPI_Aint lext = strides(s, 1, s->lpad, lst);
    strides(s, 1, s->rpad, rst);
    unsigned char *src = malloc((size_t)lext);
    for (MPI_Aint i = 0; i < lext; i++)
        src[i] = src_byte(rank, (size_t)i, tag);
    /* rank 0 puts and fences while everyone else waits in MPI_Barrier:
     * only their helper threads can unpack */
    if (rank == 0)
        for (int t = 0; t < P; t++) {
            expect_rc(kp_put_strided(src, lst, s->rdisp, rst, s->count, s->levels, t, win), KP_SUCCESS, "thread put");
            expect_rc(kp_win_fence(win, t), KP_SUCCESS, "thread fence");
        }
    MPI_Barrier(MPI_COMM_WORLD);
    kp_win_progress_thread(win, 0);
    unsigned char *exp = malloc(WIN_BYTES), *osrc = malloc((size_t)lext);
    for (size_t i = 0; i < WIN_BYTES; i++)
        exp[i] = win_byte(rank, i, tag);
    for (MPI_Aint i = 0; i < lext; i++)
        osrc[i] = src_byte(0, (size_t)i, tag);
    ref_copy(exp + s->rdisp, rst, osrc, lst, s->count, s->levels);
    MPI_Win_sync(kp_win_mpi(win));
    kt_compare_bytes(wbase, exp, WIN_BYTES, "put unpacked by the helper thread");
    free(exp);
    free(osrc);
    free(src);
    kp_strided_set_method(NULL);
    kp_win_barrier(win);
}

/* The MPI calls a strided call costs, from the window's counters: one
 * flush per blocking direct / datatype call and no lock, so a halo step of
 * six face puts and a barrier is six flushes whatever the method's chunk
 * count (a flush or lock per chunk, or a barrier flushing what the calls
 * already completed, would show here, not only as time). */
static void test_counters(int tag)
{
    enum { K1 = 6, K2 = 5 };
    unsigned char *src = calloc(K1 * K2 * 40, 1);
    MPI_Aint count[3] = {8, K1, K2}, st[2] = {24, 24 * K1};
    const int target = (rank + 1) % P;
    double one = 1.0;
    const char *ms[2] = {"direct", "datatype"};
    for (int mi = 0; mi < 2; mi++) {
        kp_strided_set_method(ms[mi]);
        kp_win_barrier(win);
        kp_strided_counters_reset(win);
        int rc = kp_put_strided(src, st, 0, st, count, 2, target, win);
        rc |= kp_get_strided(src, st, 4096, st, count, 2, target, win);
        rc |= kp_acc_strided(KP_ACC_DOUBLE, &one, src, st, 8192, st, count, 2, target, win);
        kp_strided_counters c;
        kp_strided_counters_get(win, &c);
        /* direct by load/store: the put, the get and the accumulate are
         * copies and adds, no MPI operation, no flush; on a shared window
         * every accumulate (the datatype one too, its flush inside) takes
         * the target's accumulate lock once */
        const int ls = mi == 0 && loadstore;
        const long long ops = mi == 0 ? (ls ? 0LL : 3LL) * K1 * K2 : 3, flushes = ls ? 0 : 3,
                        copies = ls ? 3LL * K1 * K2 : 0, alocks = loadstore ? 1 : 0;
        kt_expect(rc == KP_SUCCESS && c.calls == 3 && c.data_ops == ops && c.data_flushes == flushes &&
                      c.shm_chunks == copies && c.locks == 0 && c.pool_ops == 0 && c.pool_flushes == 0 &&
                      c.acc_locks == alocks,
                  "%s: put+get+acc of %d chunks: calls %lld, data ops %lld (want %lld), data flushes %lld (want %lld), "
                  "chunks copied %lld (want %lld), locks %lld, pool ops %lld (want 0), accumulate locks %lld "
                  "(want %lld)",
                  ms[mi], K1 * K2, c.calls, c.data_ops, ops, c.data_flushes, flushes, c.shm_chunks, copies, c.locks,
                  c.pool_ops, c.acc_locks, alocks);
        /* a halo-like step, ten times: two face puts per neighbour, a barrier */
        kp_win_barrier(win);
        kp_strided_counters_reset(win);
        for (int step = 0; step < 10; step++) {
            rc |= kp_put_strided(src, st, 0, st, count, 2, target, win);
            rc |= kp_put_strided(src, st, 2048, st, count, 2, (rank + P - 1) % P, win);
            rc |= kp_win_barrier(win);
        }
        kp_strided_counters_get(win, &c);
        kt_expect(rc == KP_SUCCESS && c.calls == 20 && c.data_flushes == (ls ? 0 : 20) &&
                      c.shm_chunks == (ls ? 20LL * K1 * K2 : 0) && c.locks == 0 && c.pool_ops == 0,
                  "%s: 10 steps of 2 puts + barrier: calls %lld, data flushes %lld (want %d), chunks copied %lld, "
                  "locks %lld, pool ops %lld",
                  ms[mi], c.calls, c.data_flushes, ls ? 0 : 20, c.shm_chunks, c.locks, c.pool_ops);
    }
    /* pack: one slot's piece costs a reservation, the slot's put, its ready
     * word and the turn poll(s); never the data window, never a lock */
    kp_strided_set_method("pack");
    kp_win_barrier(win);
    kp_strided_counters_reset(win);
    int rc = kp_put_strided(src, st, 0, st, count, 2, target, win);
    kp_strided_counters c;
    kp_strided_counters_get(win, &c);
    kt_expect(rc == KP_SUCCESS && c.calls == 1 && c.data_ops == 0 && c.data_flushes == 0 && c.locks == 0 &&
                  c.pool_ops >= 4 && c.pool_flushes <= c.pool_ops,
              "pack put: calls %lld, data ops %lld, data flushes %lld, locks %lld (want 0), pool ops %lld (want >= 4)",
              c.calls, c.data_ops, c.data_flushes, c.locks, c.pool_ops);
    kp_win_barrier(win);
    kp_strided_set_method(NULL);
    kt_expect(kp_strided_counters_get(NULL, &c) == KP_ERR_ARG && kp_strided_counters_reset(NULL) == KP_ERR_ARG,
              "kp_strided_counters_*(NULL) accepted");
    (void)tag;
    free(src);
}

/* KPORT_PARAMS (already pointing at path) with the "rma" members `members`:
 * kp_win_create refuses it with KP_ERR_PARAM naming `field` */
static void params_refused(const char *path, const char *members, const char *field)
{
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"kport_params\": 1, \"rma\": {%s}}\n", members);
    fclose(f);
    kp_win w2 = NULL;
    void *b2 = NULL;
    int rc = kp_win_create(4096, MPI_COMM_WORLD, &b2, &w2);
    kt_expect(rc == KP_ERR_PARAM && w2 == NULL && strstr(kp_last_error(), field),
              "rma {%s} accepted or refused wrongly: rc %d, %s", members, rc, kp_last_error());
}

/* The cost model's parameters come from KPORT_PARAMS' "rma" object: a
 * file that makes packing free and every other method dear makes auto
 * pack (and the data still arrive); a negative or unknown-typed value is
 * refused by kp_win_create naming the field. */
static void test_params(void)
{
    char path[96];
    snprintf(path, sizeof(path), "/tmp/kport_test_strided_%d_%d.json", (int)getpid(), rank);
    const char *saved = getenv("KPORT_PARAMS");
    char *keep = saved ? strdup(saved) : NULL;
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"kport_params\": 1, \"rma\": {\"t0\": 1e9, \"td0\": 1e9, \"ta0\": 1e9, \"tda0\": 1e9, "
               "\"tp\": 0, \"tm\": 0, \"tc\": 0, \"tsa\": 0, \"tpn\": 0, \"tpc\": 0}}\n");
    fclose(f);
    setenv("KPORT_PARAMS", path, 1);
    kp_win w2 = NULL;
    void *b2 = NULL;
    int rc = kp_win_create(4096, MPI_COMM_WORLD, &b2, &w2);
    kt_expect(rc == KP_SUCCESS, "kp_win_create with a valid rma object: %s", kp_last_error());
    if (rc == KP_SUCCESS) {
        kp_strided_set_method("auto");
        unsigned char src[64 * 4];
        for (int i = 0; i < (int)sizeof(src); i++)
            src[i] = (unsigned char)(rank * 3 + i);
        MPI_Aint count[2] = {16, 4}, st[1] = {64};
        memset(b2, 0, 4096);
        kp_win_barrier(w2);
        rc = kp_put_strided(src, st, 100, st, count, 1, (rank + 1) % P, w2);
        kt_expect(rc == KP_SUCCESS && !strcmp(kp_strided_last_method(), "pack"),
                  "auto under a parameter file that makes packing free ran %s (rc %d)", kp_strided_last_method(), rc);
        kp_win_barrier(w2);
        int origin = (rank - 1 + P) % P, bad = 0;
        for (int r = 0; r < 4; r++)
            for (int i = 0; i < 16; i++)
                bad += ((unsigned char *)b2)[100 + r * 64 + i] != (unsigned char)(origin * 3 + r * 64 + i);
        kt_expect(bad == 0, "auto's pack put under KPORT_PARAMS: %d wrong bytes", bad);
        kp_strided_set_method(NULL);
        kp_win_free(&w2);
    }
    /* refused, naming the field (the newest fields are read by their names too) */
    params_refused(path, "\"ts\": 20, \"tda1\": -3", "rma.tda1");
    params_refused(path, "\"tpc\": \"fast\"", "rma.tpc");
    params_refused(path, "\"tl0\": 150, \"tln\": -0.5", "rma.tln");
    params_refused(path, "\"tla0\": 150, \"tlan\": null", "rma.tlan");
    /* KPORT_STRIDED_SHARED is 0 or 1 */
    unsetenv("KPORT_PARAMS");
    const char *she = getenv("KPORT_STRIDED_SHARED");
    char *keepsh = she ? strdup(she) : NULL;
    setenv("KPORT_STRIDED_SHARED", "yes", 1);
    rc = kp_win_create(4096, MPI_COMM_WORLD, &b2, &w2);
    kt_expect(rc == KP_ERR_PARAM && w2 == NULL && strstr(kp_last_error(), "KPORT_STRIDED_SHARED"),
              "KPORT_STRIDED_SHARED=yes accepted or refused wrongly: rc %d, %s", rc, kp_last_error());
    if (keepsh)
        setenv("KPORT_STRIDED_SHARED", keepsh, 1);
    else
        unsetenv("KPORT_STRIDED_SHARED");
    free(keepsh);
    if (keep)
        setenv("KPORT_PARAMS", keep, 1);
    else
        unsetenv("KPORT_PARAMS");
    free(keep);
    remove(path);
}

int main(int argc, char **argv)
{
    int thread = 0, user = 0;
    const char *methods = "direct,datatype,pack,auto";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--thread"))
            thread = 1;
        else if (!strcmp(argv[i], "--user-window"))
            user = 1;
        else if (!strcmp(argv[i], "--user-shared"))
            user = 2;
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--methods") && i + 1 < argc)
            methods = argv[++i];
    }
    if (thread) {
        int prov;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    } else {
        MPI_Init(&argc, &argv);
    }
    kt_init();
    kt_watchdog(240);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Win uwin = MPI_WIN_NULL;
    unsigned char *umem = NULL;
    int rc;
    const char *she = getenv("KPORT_STRIDED_SHARED");
    const int shared_ok = !(she && !strcmp(she, "0")); /* every test rank is on this machine */
    if (user == 1) {
        umem = malloc(WIN_BYTES);
        MPI_Win_create(umem, WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &uwin);
        rc = kp_win_from_mpi(uwin, MPI_COMM_WORLD, &win);
        wbase = umem;
    } else if (user == 2) {
        void *b;
        MPI_Win_allocate_shared(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &b, &uwin);
        rc = kp_win_from_mpi(uwin, MPI_COMM_WORLD, &win);
        wbase = b;
        loadstore = shared_ok;
    } else {
        void *b;
        rc = kp_win_create(WIN_BYTES, MPI_COMM_WORLD, &b, &win);
        wbase = b;
        loadstore = shared_ok;
    }
    if (rc != KP_SUCCESS) {
        fprintf(stderr, "rank %d: window: %s\n", rank, kp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int tag = 0;
    if (thread) {
        test_thread(++tag);
    } else {
        char list[256];
        snprintf(list, sizeof(list), "%s", methods);
        for (char *m = strtok(list, ","); m; m = strtok(NULL, ",")) {
            if (kp_strided_set_method(m) != KP_SUCCESS) {
                kt_fail("unknown method %s", m);
                continue;
            }
            for (int i = 0; i < NSHAPES; i++) {
                test_put(m, &shapes[i], ++tag);
                test_get(m, &shapes[i], ++tag);
                if (!quick || i % 3 == 0)
                    for (int t = 0; t < 4; t++)
                        test_acc(m, &shapes[i], t);
            }
            test_nonblocking(m, ++tag);
            if (strcmp(m, "auto") && strcmp(m, kp_strided_last_method()))
                kt_fail("forced %s, but the last call ran %s", m, kp_strided_last_method());
        }
        kp_strided_set_method(NULL);
        test_acc_mixed();
        test_bad(++tag);
        test_counters(++tag);
        test_params();
    }
    rc = kp_win_free(&win);
    kt_expect(rc == KP_SUCCESS && win == NULL, "kp_win_free: %s", kp_last_error());
    if (user) {
        MPI_Win_free(&uwin);
        free(umem);
    }
    int bad = kt_finish();
    MPI_Finalize();
    return bad ? 1 : 0;
}
