/*
 * The strided API's one-sided promises (include/kport.h, "One-sided strided
 * transfers"; issue 35), every byte compared with a reference computed by
 * plain loops from a formula of (rank, index, case):
 *
 *   test_strided_order [--cross] [--order] [--sizes] [--refused fallback|error]
 *                      [--thread] [--methods direct,datatype,pack,auto] [--all-pairs]
 *   (no section named: --cross --order --sizes)
 *
 * --cross  the pack method's agent serves every window of the process from
 *          any call on any window. Windows A and B, a pool of 2 slots of
 *          1 KiB (more pieces than slots):
 *          a) rank r gets 8 bytes from rank r+1's window W[r mod 2] while
 *             r+1 gets from r+2's other window (P = 2: 0 on A from 1, 1 on
 *             B from 0): each waits in a call on one window for the other's
 *             agent of the other window;
 *          b) even ranks get from A while odd ranks sit in kp_win_barrier(B);
 *          c) even ranks put and accumulate 6 KiB (6 pieces, 2 slots) into
 *             A while odd ranks sit in kp_win_barrier(B);
 *          d) even ranks get from A while odd ranks put into B and sit in
 *             kp_win_fence(B); e) both sides wait in kp_wait on nonblocking
 *             gets of different windows; f) odd ranks loop on
 *             kp_win_progress(B) until an MPI message says A's get is done;
 *          g) a window C is created, used and freed between the rounds
 *             (the registry of live windows forgets it), and A is freed
 *             before B;
 *          with --thread (MPI_THREAD_MULTIPLE) A and B run helper threads
 *          (kp_win_progress_thread): a call on one window takes the other's
 *          mutex only if it is free, the helper serves only its own.
 * --order  a rank's operations to one target take effect in issue order:
 *          for every pair of conflicting kinds (get then put, get then acc,
 *          put then get, acc then get, put then put, put then acc, acc then
 *          put), every method of each (direct, datatype, pack; auto with
 *          auto, or with every method under --all-pairs: it runs one of
 *          the three), each blocking or not (the later one waited first),
 *          in two phases (even ranks the origins, then odd ones; a target
 *          that is no origin stays in MPI_Iprobe, out of kport, for 200 us
 *          (MPI progresses, its agent does not), so an overtaking
 *          operation overtakes every time), on a contiguous
 *          section of 64 bytes and on 80 rows of 13 bytes (12 with an
 *          accumulate) at stride 16: the gets return what the earlier
 *          operations left and the window ends as the issue order says.
 * --sizes  windows whose sizes are 8 mod 16 (40 / 32 / 56 / 24 bytes by
 *          rank): every rank puts its whole window to itself and to the
 *          next rank and reads it back, every method; every window byte
 *          checked (MPICH 4.0.2's MPI_Win_allocate misplaced the next
 *          rank's memory by 8 bytes: KPORT_STRIDED_SHARED=0).
 * --refused fallback  (Open MPI --mca osc pt2pt) the shared window is
 *          refused, kp_win_create falls back to MPI_Win_allocate; then the
 *          --order cases run on it; MPI_COMM_WORLD's error handler stays
 *          MPI_ERRORS_ARE_FATAL.
 * --refused error  (every osc component excluded) kp_win_create returns
 *          KP_ERR_UNSUPPORTED naming what MPI refused, 20 times over, win
 *          NULL, and the program goes on (an MPI_Allreduce afterwards).
 */
#include "common.h"

#include <pthread.h>

#define MAXL KP_STRIDED_MAX_LEVELS

static int rank, P;
static const char *const MN[4] = {"direct", "datatype", "pack", "auto"};
static int use_m[4] = {1, 1, 1, 1};
static int all_pairs; /* --all-pairs: auto paired with every method, not only with itself */

static unsigned char xb(int r, size_t i, int tag)
{
    return (unsigned char)(r * 29 + (int)(i % 239) * 5 + tag * 11 + 3);
}

static void expect_ok(int rc, const char *what)
{
    if (rc == KP_SUCCESS)
        kt_pass();
    else
        kt_fail("%s: returned %d (%s): %s", what, rc, kp_strerror(rc), kp_last_error());
}

/* ---- --cross ----------------------------------------------------------------- */

#define WX 16384
static kp_win W[2];
static unsigned char *WB[2];

static void fill(int w, int tag)
{
    for (size_t i = 0; i < WX; i++)
        WB[w][i] = xb(rank, i, tag * 2 + w);
}

/* rank `o`'s get of n bytes at disp from window w of rank t into buf, checked */
static void check_get(const unsigned char *buf, size_t n, int t, int w, size_t disp, int tag, const char *what)
{
    unsigned char *exp = malloc(n);
    for (size_t i = 0; i < n; i++)
        exp[i] = xb(t, disp + i, tag * 2 + w);
    kt_compare_bytes(buf, exp, n, what);
    free(exp);
}

static void barrier_both(void)
{
    expect_ok(kp_win_barrier(W[0]), "kp_win_barrier(A)");
    expect_ok(kp_win_barrier(W[1]), "kp_win_barrier(B)");
}

static void cross_round(int tag, int thread)
{
    char what[128];
    const int even = rank % 2 == 0, next = (rank + 1) % P, prev = (rank - 1 + P) % P;
    /* pairs (even r, r+1); with odd P the last even rank pairs with itself */
    const int partner = even ? (rank + 1 < P ? rank + 1 : rank) : rank - 1;
    MPI_Aint c8[1] = {8};
    unsigned char buf[64];
    kp_strided_set_method("pack");
    for (int w = 0; w < 2; w++)
        fill(w, tag);
    barrier_both();
    /* a) everyone gets from next on W[r mod 2] */
    snprintf(what, sizeof(what), "%scross a: get 8 B from rank %d's %c", thread ? "thread " : "", next,
             "AB"[rank % 2]);
    memset(buf, 0, sizeof(buf));
    expect_ok(kp_get_strided(buf, NULL, 8 * (MPI_Aint)rank, NULL, c8, 0, next, W[rank % 2]), what);
    check_get(buf, 8, next, rank % 2, 8 * (size_t)rank, tag, what);
    barrier_both();
    /* b) even: get from A of the partner; odd: straight into B's barrier */
    snprintf(what, sizeof(what), "%scross b: get from A while the target is in kp_win_barrier(B)",
             thread ? "thread " : "");
    if (even) {
        memset(buf, 0, sizeof(buf));
        expect_ok(kp_get_strided(buf, NULL, 64, NULL, c8, 0, partner, W[0]), what);
        check_get(buf, 8, partner, 0, 64, tag, what);
    }
    expect_ok(kp_win_barrier(W[1]), what);
    expect_ok(kp_win_barrier(W[0]), what);
    /* c) even: put then accumulate 6 KiB into A of the partner (6 pieces,
     * 2 slots); odd: in B's barrier */
    enum { CN = 6144, CD = 4096 };
    snprintf(what, sizeof(what), "%scross c: put + acc filling the pool while the target is in kp_win_barrier(B)",
             thread ? "thread " : "");
    unsigned char *src = malloc(CN);
    for (size_t i = 0; i < CN; i += 4) {
        int v = (int)(i / 4) % 1000 + rank;
        memcpy(src + i, &v, 4);
    }
    MPI_Aint cn[1] = {CN};
    int two = 2;
    if (even && partner != rank) {
        expect_ok(kp_put_strided(src, NULL, CD, NULL, cn, 0, partner, W[0]), what);
        expect_ok(kp_acc_strided(KP_ACC_INT, &two, src, NULL, CD, NULL, cn, 0, partner, W[0]), what);
    }
    expect_ok(kp_win_barrier(W[1]), what);
    expect_ok(kp_win_barrier(W[0]), what);
    if (!even) { /* A at [CD, CD+CN) holds 3 * the partner's source */
        unsigned char *exp = malloc(WX);
        for (size_t i = 0; i < WX; i++)
            exp[i] = xb(rank, i, tag * 2);
        for (size_t i = 0; i < CN; i += 4) {
            int v = 3 * ((int)(i / 4) % 1000 + partner);
            memcpy(exp + CD + i, &v, 4);
        }
        kt_compare_bytes(WB[0], exp, WX, what);
        free(exp);
    }
    free(src);
    for (int w = 0; w < 2; w++)
        fill(w, tag + 1000);
    barrier_both();
    /* d) even: get from A of the partner; odd: put into B of the partner,
     * then kp_win_fence(B) (waits for the even rank's agent of B) */
    snprintf(what, sizeof(what), "%scross d: get from A against a put + kp_win_fence on B", thread ? "thread " : "");
    MPI_Aint c16[1] = {16};
    if (even) {
        memset(buf, 0, sizeof(buf));
        expect_ok(kp_get_strided(buf, NULL, 200, NULL, c8, 0, partner, W[0]), what);
        check_get(buf, 8, partner, 0, 200, tag + 1000, what);
    } else {
        for (int i = 0; i < 16; i++)
            buf[i] = (unsigned char)(rank * 7 + i);
        expect_ok(kp_put_strided(buf, NULL, 300, NULL, c16, 0, partner, W[1]), what);
        expect_ok(kp_win_fence(W[1], partner), what);
    }
    barrier_both();
    if (even && partner != rank) {
        unsigned char exp[16];
        for (int i = 0; i < 16; i++)
            exp[i] = (unsigned char)(partner * 7 + i);
        kt_compare_bytes(WB[1] + 300, exp, 16, what);
    }
    /* e) both wait in kp_wait, on nonblocking gets of different windows */
    snprintf(what, sizeof(what), "%scross e: kp_wait on a get of %c against one of %c", thread ? "thread " : "",
             "AB"[rank % 2], "AB"[1 - rank % 2]);
    kp_request rq = KP_REQUEST_NULL;
    memset(buf, 0, sizeof(buf));
    expect_ok(kp_iget_strided(buf, NULL, 400, NULL, c8, 0, prev, W[rank % 2], &rq), what);
    expect_ok(kp_wait(&rq), what);
    check_get(buf, 8, prev, rank % 2, 400, tag + 1000, what);
    barrier_both();
    /* f) odd ranks loop on kp_win_progress(B) until the even partner says
     * (an MPI message) that its get from A is done */
    snprintf(what, sizeof(what), "%scross f: get from A while the target loops on kp_win_progress(B)",
             thread ? "thread " : "");
    if (partner != rank) {
        if (even) {
            memset(buf, 0, sizeof(buf));
            expect_ok(kp_get_strided(buf, NULL, 500, NULL, c8, 0, partner, W[0]), what);
            check_get(buf, 8, partner, 0, 500, tag + 1000, what);
            MPI_Send(buf, 0, MPI_BYTE, partner, 77, MPI_COMM_WORLD);
        } else {
            int flag = 0, rc = KP_SUCCESS;
            while (!flag && rc == KP_SUCCESS) {
                rc = kp_win_progress(W[1]);
                MPI_Iprobe(partner, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            }
            expect_ok(rc, what);
            MPI_Recv(buf, 0, MPI_BYTE, partner, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    barrier_both();
    kp_strided_set_method(NULL);
}

static void test_cross(int thread)
{
    /* a tiny pool: more pieces than slots (read at kp_win_create) */
    setenv("KPORT_STRIDED_SLOTS", "2", 1);
    setenv("KPORT_STRIDED_SLOT_KB", "1", 1);
    for (int w = 0; w < 2; w++) {
        void *b = NULL;
        int rc = kp_win_create(WX, MPI_COMM_WORLD, &b, &W[w]);
        if (rc != KP_SUCCESS) {
            kt_fail("cross: kp_win_create: %s", kp_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        WB[w] = b;
        if (thread)
            expect_ok(kp_win_progress_thread(W[w], 1), "kp_win_progress_thread");
    }
    cross_round(1, thread);
    /* g) a third window lives and dies between the rounds */
    {
        kp_win C = NULL;
        void *cb = NULL;
        int rc = kp_win_create(4096, MPI_COMM_WORLD, &cb, &C);
        expect_ok(rc, "cross g: kp_win_create(C)");
        if (rc == KP_SUCCESS) {
            kp_strided_set_method("pack");
            memset(cb, rank, 4096);
            expect_ok(kp_win_barrier(C), "cross g: kp_win_barrier(C)");
            unsigned char got[32];
            MPI_Aint c32[1] = {32};
            expect_ok(kp_get_strided(got, NULL, 0, NULL, c32, 0, (rank + 1) % P, C), "cross g: get from C");
            unsigned char exp[32];
            memset(exp, (rank + 1) % P, 32);
            kt_compare_bytes(got, exp, 32, "cross g: get from C");
            kp_strided_set_method(NULL);
            expect_ok(kp_win_free(&C), "cross g: kp_win_free(C)");
        }
    }
    cross_round(2, thread);
    unsetenv("KPORT_STRIDED_SLOTS");
    unsetenv("KPORT_STRIDED_SLOT_KB");
    /* A freed first, B goes on serving */
    expect_ok(kp_win_free(&W[0]), "cross: kp_win_free(A)");
    {
        kp_strided_set_method("pack");
        unsigned char got[8];
        MPI_Aint c8[1] = {8};
        expect_ok(kp_get_strided(got, NULL, 16, NULL, c8, 0, (rank + 1) % P, W[1]), "cross: get from B after A's free");
        check_get(got, 8, (rank + 1) % P, 1, 16, 2 + 1000, "cross: get from B after A's free");
        kp_strided_set_method(NULL);
    }
    expect_ok(kp_win_free(&W[1]), "cross: kp_win_free(B)");
}

/* ---- --order ------------------------------------------------------------------ */

enum { K_PUT = 0, K_GET = 1, K_ACC = 2 };
static const char *const KN[3] = {"put", "get", "acc"};
#define OW 2048   /* window bytes */
#define OL 1296   /* origin buffer bytes */
static const int pairs[][2] = {{K_GET, K_PUT}, {K_GET, K_ACC}, {K_PUT, K_GET}, {K_ACC, K_GET},
                               {K_PUT, K_PUT}, {K_PUT, K_ACC}, {K_ACC, K_PUT}};
#define NPAIRS ((int)(sizeof(pairs) / sizeof(pairs[0])))

typedef struct oshape {
    int levels;
    MPI_Aint count[2], stride[1], disp;
} oshape;
/* 0: 64 contiguous bytes; 1: 80 rows of 13 bytes at stride 16 (12 bytes:
 * whole ints, when an accumulate is in the pair) */
static oshape order_shape(int s, int acc)
{
    oshape o;
    memset(&o, 0, sizeof(o));
    if (s == 0) {
        o.count[0] = 64;
        o.disp = 128;
    } else {
        o.levels = 1;
        o.count[0] = acc ? 12 : 13;
        o.count[1] = 80;
        o.stride[0] = 16;
        o.disp = 100;
    }
    return o;
}

static void ord_win_init(unsigned char *b, int r, int tag)
{
    for (size_t i = 0; i < OW; i += 4) {
        int v = (int)((r * 1009 + (int)i / 4 * 7 + tag * 13) % 100000);
        memcpy(b + i, &v, 4);
    }
}

/* origin o's buffer of op `which` (1, 2): source data, or a get's sentinel */
static void ord_buf_init(unsigned char *b, int kind, int o, int tag, int which)
{
    for (size_t i = 0; i < OL; i += 4) {
        int v = kind == K_GET ? -0x11111112 : (int)((o * 313 + (int)i / 4 * 3 + tag * 17 + which * 50000) % 100000);
        memcpy(b + i, &v, 4);
    }
}

/* apply op of `kind` on the reference target image img with origin buffer
 * buf (a get copies img into buf) */
static void ref_apply(int kind, const oshape *s, unsigned char *img, unsigned char *buf)
{
    MPI_Aint rows = s->levels ? s->count[1] : 1, st = s->levels ? s->stride[0] : 0;
    for (MPI_Aint j = 0; j < rows; j++) {
        unsigned char *t = img + s->disp + j * st, *l = buf + j * st;
        if (kind == K_PUT)
            memcpy(t, l, (size_t)s->count[0]);
        else if (kind == K_GET)
            memcpy(l, t, (size_t)s->count[0]);
        else
            for (MPI_Aint b = 0; b < s->count[0]; b += 4) {
                uint32_t x, y;
                memcpy(&x, t + b, 4);
                memcpy(&y, l + b, 4);
                x += 2u * y;
                memcpy(t + b, &x, 4);
            }
    }
}

static int do_op(int kind, int m, int blocking, unsigned char *buf, const oshape *s, int t, kp_win w, kp_request *rq)
{
    static const int two = 2;
    kp_strided_set_method(MN[m]);
    const MPI_Aint *st = s->levels ? s->stride : NULL;
    int rc;
    *rq = KP_REQUEST_NULL;
    if (kind == K_PUT)
        rc = blocking ? kp_put_strided(buf, st, s->disp, st, s->count, s->levels, t, w)
                      : kp_iput_strided(buf, st, s->disp, st, s->count, s->levels, t, w, rq);
    else if (kind == K_GET)
        rc = blocking ? kp_get_strided(buf, st, s->disp, st, s->count, s->levels, t, w)
                      : kp_iget_strided(buf, st, s->disp, st, s->count, s->levels, t, w, rq);
    else
        rc = blocking ? kp_acc_strided(KP_ACC_INT, &two, buf, st, s->disp, st, s->count, s->levels, t, w)
                      : kp_iacc_strided(KP_ACC_INT, &two, buf, st, s->disp, st, s->count, s->levels, t, w, rq);
    kp_strided_set_method(NULL);
    return rc;
}

static void test_order(kp_win w, unsigned char *wb, const char *label)
{
    const int t = (rank + 1) % P, o = (rank - 1 + P) % P;
    unsigned char *b1 = malloc(OL), *b2 = malloc(OL), *e1 = malloc(OL), *e2 = malloc(OL), *img = malloc(OW);
    int tag = 0;
    long cases = 0;
    for (int pi = 0; pi < NPAIRS; pi++)
        for (int s = 0; s < 2; s++)
            for (int m1 = 0; m1 < 4; m1++)
                for (int m2 = 0; m2 < 4; m2++)
                    for (int bl = 0; bl < 4; bl++) {
                        if (!use_m[m1] || !use_m[m2] || (!all_pairs && (m1 == 3) != (m2 == 3)))
                            continue;
                        const int k1 = pairs[pi][0], k2 = pairs[pi][1], bl1 = bl & 1, bl2 = bl >> 1;
                        const oshape sh = order_shape(s, k1 == K_ACC || k2 == K_ACC);
                        char what[200];
                        snprintf(what, sizeof(what), "%sorder: %s %s (%s) then %s %s (%s), %s", label,
                                 bl1 ? "blocking" : "nonblocking", KN[k1], MN[m1], bl2 ? "blocking" : "nonblocking",
                                 KN[k2], MN[m2], s ? "80 rows at stride 16" : "64 contiguous bytes");
                        cases++;
                        /* two phases: origins are the even ranks, then the
                         * odd ones; a target that is no origin stays out of
                         * kport for 200 us (its agent does not run), so an
                         * operation that overtakes an earlier one does so
                         * every time, not by the luck of timing */
                        for (int ph = 0; ph < 2; ph++) {
                            const int active = rank % 2 == ph, oactive = o % 2 == ph;
                            tag++;
                            ord_win_init(wb, rank, tag);
                            kp_win_barrier(w);
                            if (active) {
                                ord_buf_init(b1, k1, rank, tag, 1);
                                ord_buf_init(b2, k2, rank, tag, 2);
                                kp_request r1, r2;
                                expect_ok(do_op(k1, m1, bl1, b1, &sh, t, w, &r1), what);
                                expect_ok(do_op(k2, m2, bl2, b2, &sh, t, w, &r2), what);
                                expect_ok(kp_wait(&r2), what);
                                expect_ok(kp_wait(&r1), what);
                                /* my gets: the target's initial image with my operations in issue order */
                                ord_win_init(img, t, tag);
                                ord_buf_init(e1, k1, rank, tag, 1);
                                ord_buf_init(e2, k2, rank, tag, 2);
                                ref_apply(k1, &sh, img, e1);
                                ref_apply(k2, &sh, img, e2);
                                if (k1 == K_GET)
                                    kt_compare_bytes(b1, e1, OL, what);
                                if (k2 == K_GET)
                                    kt_compare_bytes(b2, e2, OL, what);
                            } else {
                                /* in MPI (its RMA progresses), not in kport */
                                double until = MPI_Wtime() + 200e-6;
                                int flag;
                                while (MPI_Wtime() < until)
                                    MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                            }
                            kp_win_barrier(w);
                            /* my window: my origin's operations in issue order */
                            ord_win_init(img, rank, tag);
                            if (oactive) {
                                ord_buf_init(e1, k1, o, tag, 1);
                                ord_buf_init(e2, k2, o, tag, 2);
                                ref_apply(k1, &sh, img, e1);
                                ref_apply(k2, &sh, img, e2);
                            }
                            kt_compare_bytes(wb, img, OW, what);
                        }
                    }
    if (rank == 0)
        printf("%sorder: %ld cases\n", label, cases);
    free(b1);
    free(b2);
    free(e1);
    free(e2);
    free(img);
}

/* ---- --sizes ------------------------------------------------------------------- */

static void test_sizes(void)
{
    static const MPI_Aint sz[4] = {40, 32, 56, 24};
    const MPI_Aint mine = sz[rank % 4];
    const int t = (rank + 1) % P, o = (rank - 1 + P) % P;
    const MPI_Aint tsz = sz[t % 4];
    kp_win w = NULL;
    void *b = NULL;
    int rc = kp_win_create(mine, MPI_COMM_WORLD, &b, &w);
    expect_ok(rc, "sizes: kp_win_create");
    if (rc != KP_SUCCESS)
        return;
    unsigned char *wb = b, src[64], got[64], exp[64];
    for (int m = 0; m < 4; m++) {
        if (!use_m[m])
            continue;
        char what[96];
        int tag = 10 * m;
        kp_strided_set_method(MN[m]);
        /* 1: the whole window to itself */
        snprintf(what, sizeof(what), "sizes %s: rank %d puts its %ld bytes to itself", MN[m], rank, (long)mine);
        memset(wb, 0xEE, (size_t)mine);
        kp_win_barrier(w);
        for (MPI_Aint i = 0; i < mine; i++)
            src[i] = xb(rank, (size_t)i, tag + 1);
        MPI_Aint c[1] = {mine};
        expect_ok(kp_put_strided(src, NULL, 0, NULL, c, 0, rank, w), what);
        kp_win_barrier(w);
        kt_compare_bytes(wb, src, (size_t)mine, what);
        kp_win_barrier(w);
        /* 2: the whole window of the next rank, and read back */
        snprintf(what, sizeof(what), "sizes %s: rank %d puts %ld bytes into rank %d", MN[m], rank, (long)tsz, t);
        for (MPI_Aint i = 0; i < tsz; i++)
            src[i] = xb(rank, (size_t)i, tag + 2);
        c[0] = tsz;
        expect_ok(kp_put_strided(src, NULL, 0, NULL, c, 0, t, w), what);
        kp_win_barrier(w);
        for (MPI_Aint i = 0; i < mine; i++)
            exp[i] = xb(o, (size_t)i, tag + 2);
        kt_compare_bytes(wb, exp, (size_t)mine, what);
        kp_win_barrier(w);
        snprintf(what, sizeof(what), "sizes %s: rank %d gets rank %d's %ld bytes", MN[m], rank, t, (long)tsz);
        memset(got, 0, sizeof(got));
        expect_ok(kp_get_strided(got, NULL, 0, NULL, c, 0, t, w), what);
        for (MPI_Aint i = 0; i < tsz; i++)
            exp[i] = xb(rank, (size_t)i, tag + 2);
        kt_compare_bytes(got, exp, (size_t)tsz, what);
        /* past the end is still refused: bounds are the asked-for size */
        c[0] = 1;
        rc = kp_put_strided(src, NULL, tsz, NULL, c, 0, t, w);
        kt_expect(rc == KP_ERR_ARG, "sizes %s: a put at byte %ld of rank %d's %ld-byte window returned %d", MN[m],
                  (long)tsz, t, (long)tsz, rc);
        kp_win_barrier(w);
    }
    kp_strided_set_method(NULL);
    expect_ok(kp_win_free(&w), "sizes: kp_win_free");
}

/* ---- --refused -------------------------------------------------------------------- */

static void errhandler_untouched(const char *what)
{
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    kt_expect(eh == MPI_ERRORS_ARE_FATAL, "%s: MPI_COMM_WORLD's error handler changed", what);
    if (eh != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&eh);
}

static void test_refused(const char *mode)
{
    if (!strcmp(mode, "error")) {
        for (int i = 0; i < 20; i++) {
            kp_win w = (kp_win)&w;
            void *b = &b;
            int rc = kp_win_create(4096, MPI_COMM_WORLD, &b, &w);
            kt_expect(rc == KP_ERR_UNSUPPORTED && w == NULL && strstr(kp_last_error(), "MPI_Win_allocate"),
                      "refused: kp_win_create returned %d (%s), win %p: %s", rc, kp_strerror(rc), (void *)w,
                      kp_last_error());
            if (rc == KP_SUCCESS)
                kp_win_free(&w);
        }
        if (rank == 0)
            printf("refused: %s\n", kp_last_error());
        errhandler_untouched("refused");
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        kt_expect(sum == P, "refused: MPI_Allreduce after the refusals gave %d", sum);
        return;
    }
    kp_win w = NULL;
    void *b = NULL;
    int rc = kp_win_create(OW, MPI_COMM_WORLD, &b, &w);
    expect_ok(rc, "fallback: kp_win_create");
    errhandler_untouched("fallback");
    if (rc != KP_SUCCESS)
        return;
    /* not shared: a direct put is MPI operations, not copies */
    kp_strided_counters c;
    unsigned char x[8] = {0};
    MPI_Aint c8[1] = {8};
    kp_strided_set_method("direct");
    kp_strided_counters_reset(w);
    expect_ok(kp_put_strided(x, NULL, 0, NULL, c8, 0, (rank + 1) % P, w), "fallback: direct put");
    kp_strided_counters_get(w, &c);
    kt_expect(c.data_ops == 1 && c.shm_chunks == 0, "fallback: direct put made %lld MPI ops, %lld copies", c.data_ops,
              c.shm_chunks);
    kp_strided_set_method(NULL);
    kp_win_barrier(w);
    test_order(w, b, "fallback ");
    expect_ok(kp_win_free(&w), "fallback: kp_win_free");
}

int main(int argc, char **argv)
{
    int cross = 0, order = 0, sizes = 0, thread = 0;
    const char *refused = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cross"))
            cross = 1;
        else if (!strcmp(argv[i], "--order"))
            order = 1;
        else if (!strcmp(argv[i], "--sizes"))
            sizes = 1;
        else if (!strcmp(argv[i], "--thread"))
            thread = cross = 1;
        else if (!strcmp(argv[i], "--all-pairs"))
            all_pairs = 1;
        else if (!strcmp(argv[i], "--refused") && i + 1 < argc)
            refused = argv[++i];
        else if (!strcmp(argv[i], "--methods") && i + 1 < argc) {
            const char *l = argv[++i];
            for (int m = 0; m < 4; m++)
                use_m[m] = strstr(l, MN[m]) != NULL;
        } else {
            fprintf(stderr, "usage: %s [--cross] [--order] [--sizes] [--thread] [--refused fallback|error] "
                            "[--methods LIST] [--all-pairs]\n", argv[0]);
            return 2;
        }
    }
    if (!cross && !order && !sizes && !refused)
        cross = order = sizes = 1;
    if (thread) {
        int prov = 0;
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &prov);
    } else {
        MPI_Init(&argc, &argv);
    }
    kt_init();
    kt_watchdog(100);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (refused) {
        test_refused(refused);
    } else {
        if (cross)
            test_cross(thread);
        if (order) {
            kp_win w = NULL;
            void *b = NULL;
            int rc = kp_win_create(OW, MPI_COMM_WORLD, &b, &w);
            expect_ok(rc, "order: kp_win_create");
            if (rc == KP_SUCCESS) {
                test_order(w, b, "");
                expect_ok(kp_win_free(&w), "order: kp_win_free");
            }
        }
        if (sizes)
            test_sizes();
    }
    int bad = kt_finish();
    MPI_Finalize();
    return bad ? 1 : 0;
}
