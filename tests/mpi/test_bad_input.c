/*
 * test_bad_input: kport's answers to invalid arguments, invalid algorithm
 * specifications and forced algorithms that cannot apply.
 *
 * usage: test_bad_input [-t seconds]
 *        test_bad_input --expect-env CODE [--expect-alg SPEC] [-t seconds]
 *
 * Default mode (every rank passes the same arguments; every call must return,
 * with the same code on every rank, the receive buffer untouched on error and
 * kp_last_error() non-empty):
 *   - kp_strerror(0..9) non-empty and distinct, kp_strerror(12345) and (-1)
 *     non-NULL; the registry lists non-empty distinct names;
 *   - kp_allgather: NULL send buffer with a nonzero count, NULL receive buffer
 *     -> KP_ERR_ARG; negative send or receive count, send size != receive size
 *     -> KP_ERR_COUNT; a count whose byte size overflows -> an error;
 *     MPI_DATATYPE_NULL -> KP_ERR_DATATYPE; MPI_COMM_NULL and an
 *     inter-communicator -> KP_ERR_COMM; NULL buffers with count 0, and
 *     MPI_IN_PLACE with a garbage send count and type (ignored, as in MPI)
 *     -> KP_SUCCESS;
 *   - kp_set_algorithm: unknown name, "bruck:k=0", "bruck:k=-1", "bruck:k=abc",
 *     "bruck:z=3", "ring:k=2", "concurrent_exchange:C=0" and a few more
 *     -> KP_ERR_PARAM, and the previous setting still applies (the next call
 *     runs it, with correct data); an invalid collective or fallback policy is
 *     refused;
 *   - a forced algorithm that cannot apply to this P (the first of
 *     "concurrent_exchange:C=3", "concurrent_exchange_split",
 *     "concurrent_exchange:C=P+1" that refuses; "concurrent_exchange_split"
 *     first at P = 3; none at P <= 2, where every algorithm runs and a C
 *     above P is clamped): KP_FALLBACK_ERROR -> KP_ERR_UNSUPPORTED, receive buffer
 *     untouched; KP_FALLBACK_WARN -> KP_SUCCESS, correct data,
 *     kp_last_algorithm() names another algorithm, rank 0 printed a warning;
 *     KP_FALLBACK_SILENT -> the same with nothing printed.
 *
 * --expect-env CODE: for CTest runs with KPORT_ALLGATHER / KPORT_FALLBACK in
 * the environment. One kp_allgather of 100 MPI_INT per rank; checks that it
 * returns CODE on every rank, with correct data on success (receive buffer
 * untouched otherwise), and, with --expect-alg, that kp_last_algorithm()
 * matches SPEC (same name, the parameters SPEC gives).
 *
 * Output: "N passed, M failed" on rank 0; exit code nonzero on any failure.
 */
#include "common.h"

#include <sys/stat.h>

static int P, me;
static kt_layout L_INT;

/* ---- a valid call of n MPI_INT per rank, with checks ------------------------- */

/* want_alg: the spec kp_last_algorithm() must match on success (NULL: any
 * registered one); avoid_alg: a spec it must not match (NULL: none). */
static int valid_call(const char *what, int n, int inplace, MPI_Comm comm, int tag, int want_rc,
                      const char *want_alg, const char *avoid_alg)
{
    int np, r;
    MPI_Comm_size(comm, &np);
    MPI_Comm_rank(comm, &r);
    kt_gbuf recv = kt_gbuf_alloc((size_t)np * n * 4, 0), send = {0};
    if (inplace)
        kt_fill(recv.p + (size_t)r * n * 4, &L_INT, n, r, tag);
    else {
        send = kt_gbuf_alloc((size_t)n * 4, 0);
        kt_fill(send.p, &L_INT, n, r, tag);
    }
    kt_gbuf init = kt_gbuf_clone(&recv);
    int rc = kp_allgather(inplace ? MPI_IN_PLACE : (const void *)send.p, inplace ? 0 : n,
                          inplace ? MPI_DATATYPE_NULL : MPI_INT, recv.p, n, MPI_INT, comm);
    int lo, hi;
    int same = kt_same(rc, comm, &lo, &hi);
    kt_expect(same, "%s: return codes differ between ranks (%d..%d)", what, lo, hi);
    kt_expect(rc == want_rc, "%s: kp_allgather returned %d (%s), expected %d (%s): %s", what, rc,
              kt_str(kp_strerror(rc)), want_rc, kt_str(kp_strerror(want_rc)), kt_str(kp_last_error()));
    kt_gbuf exp = kt_gbuf_clone(&init);
    if (rc == KP_SUCCESS) {
        for (int o = 0; o < np; o++)
            kt_fill(exp.p + (size_t)o * n * 4, &L_INT, n, o, tag);
        const char *last = kp_last_algorithm(KP_COLL_ALLGATHER);
        if (want_alg)
            kt_expect(kt_spec_matches(want_alg, last), "%s: kp_last_algorithm() is \"%s\", expected \"%s\"", what,
                      kt_str(last), want_alg);
        else
            kt_expect(last && kt_registered(last), "%s: kp_last_algorithm() \"%s\" is no registered algorithm",
                      what, kt_str(last));
        if (avoid_alg)
            kt_expect(!kt_spec_matches(avoid_alg, last),
                      "%s: kp_last_algorithm() is \"%s\", the forced algorithm that cannot apply", what,
                      kt_str(last));
    } else {
        const char *e = kp_last_error();
        kt_expect(e && *e, "%s: error %d but kp_last_error() is empty", what, rc);
    }
    char w[640];
    snprintf(w, sizeof(w), "%s: receive buffer%s", what, rc == KP_SUCCESS ? "" : " after an error");
    kt_compare(&recv, &exp, (int64_t)n * 4, w);
    kt_gbuf_free(&exp);
    kt_gbuf_free(&init);
    kt_gbuf_free(&recv);
    if (send.mem)
        kt_gbuf_free(&send);
    return rc;
}

/* ---- invalid arguments ----------------------------------------------------- */

enum { SB_NULL, SB_BUF, SB_INPLACE };
enum { ANY_ERROR = -1 };

/* One call with the given arguments; the receive buffer (unless NULL) is a
 * guarded area large enough for any reading of the counts. want: the exact
 * code, or ANY_ERROR for any code but KP_SUCCESS. */
static int bad_call(const char *what, int sbmode, MPI_Count sc, MPI_Datatype st, int null_recv, MPI_Count rc,
                    MPI_Datatype rt, MPI_Comm comm, int want)
{
    kt_gbuf send = kt_gbuf_alloc(4096, 0), recv = kt_gbuf_alloc((size_t)P * 4096, 0);
    for (int i = 0; i < 1024; i++)
        kt_put(send.p + 4 * i, KT_I32, kt_val(me, i, 7));
    kt_gbuf send0 = kt_gbuf_clone(&send), recv0 = kt_gbuf_clone(&recv);
    const void *sb = sbmode == SB_NULL ? NULL : sbmode == SB_INPLACE ? MPI_IN_PLACE : (const void *)send.p;
    int r = kp_allgather(sb, sc, st, null_recv ? NULL : recv.p, rc, rt, comm);
    int lo, hi;
    int same = kt_same(r, MPI_COMM_WORLD, &lo, &hi);
    kt_expect(same, "%s: return codes differ between ranks (%d..%d)", what, lo, hi);
    if (want == ANY_ERROR)
        kt_expect(r != KP_SUCCESS, "%s: kp_allgather returned KP_SUCCESS, expected an error", what);
    else
        kt_expect(r == want, "%s: kp_allgather returned %d (%s), expected %d (%s); kp_last_error: %s", what, r,
                  kt_str(kp_strerror(r)), want, kt_str(kp_strerror(want)), r ? kt_str(kp_last_error()) : "-");
    if (r != KP_SUCCESS) {
        const char *e = kp_last_error();
        kt_expect(e && *e, "%s: error %d but kp_last_error() is empty", what, r);
        if (kt_st.rank == 0 && e)
            printf("    %-52s -> %d %s: %s\n", what, r, kt_str(kp_strerror(r)), e);
    }
    char w[300];
    snprintf(w, sizeof(w), "%s: receive buffer", what);
    if (r != KP_SUCCESS || rc == 0)
        kt_compare(&recv, &recv0, 0, w);
    snprintf(w, sizeof(w), "%s: send buffer", what);
    kt_compare(&send, &send0, 0, w);
    kt_gbuf_free(&send);
    kt_gbuf_free(&send0);
    kt_gbuf_free(&recv);
    kt_gbuf_free(&recv0);
    return r;
}

static void test_strerror(void)
{
    const char *s[10];
    for (int i = 0; i < 10; i++) {
        s[i] = kp_strerror(i);
        kt_expect(s[i] && *s[i], "kp_strerror(%d) is NULL or empty", i);
    }
    for (int i = 0; i < 10; i++)
        for (int j = i + 1; j < 10; j++)
            if (s[i] && s[j])
                kt_expect(strcmp(s[i], s[j]) != 0, "kp_strerror(%d) == kp_strerror(%d) == \"%s\"", i, j, s[i]);
    kt_expect(kp_strerror(12345) != NULL, "kp_strerror(12345) is NULL");
    kt_expect(kp_strerror(-1) != NULL, "kp_strerror(-1) is NULL");
    kt_expect(kp_last_error() != NULL, "kp_last_error() is NULL");
}

static void test_registry(void)
{
    int n = kp_algorithm_count(KP_COLL_ALLGATHER);
    kt_expect(n > 0, "kp_algorithm_count(KP_COLL_ALLGATHER) = %d", n);
    for (int i = 0; i < n; i++) {
        const char *a = kp_algorithm_name(KP_COLL_ALLGATHER, i);
        kt_expect(a && *a, "kp_algorithm_name(%d) is NULL or empty", i);
        for (int j = 0; a && j < i; j++) {
            const char *b = kp_algorithm_name(KP_COLL_ALLGATHER, j);
            kt_expect(!b || strcmp(a, b) != 0, "algorithms %d and %d are both named \"%s\"", j, i, a);
        }
    }
    /* out of range: must return, whatever the answer */
    (void)kp_algorithm_name(KP_COLL_ALLGATHER, -1);
    (void)kp_algorithm_name(KP_COLL_ALLGATHER, n);
    (void)kp_algorithm_count(KP_COLL_COUNT);
    (void)kp_algorithm_name(KP_COLL_COUNT, 0);
    (void)kp_last_algorithm(KP_COLL_COUNT);
    kt_pass();
}

static void test_arguments(void)
{
    if (me == 0)
        printf("  invalid arguments (code and kp_last_error() of rank 0):\n");
    bad_call("NULL sendbuf, scount 10", SB_NULL, 10, MPI_INT, 0, 10, MPI_INT, MPI_COMM_WORLD, KP_ERR_ARG);
    bad_call("NULL recvbuf, rcount 10", SB_BUF, 10, MPI_INT, 1, 10, MPI_INT, MPI_COMM_WORLD, KP_ERR_ARG);
    bad_call("MPI_IN_PLACE, NULL recvbuf, rcount 10", SB_INPLACE, 0, MPI_DATATYPE_NULL, 1, 10, MPI_INT,
             MPI_COMM_WORLD, KP_ERR_ARG);
    bad_call("scount -1", SB_BUF, -1, MPI_INT, 0, 10, MPI_INT, MPI_COMM_WORLD, KP_ERR_COUNT);
    bad_call("rcount -1", SB_BUF, 10, MPI_INT, 0, -1, MPI_INT, MPI_COMM_WORLD, KP_ERR_COUNT);
    bad_call("scount -1, rcount -1", SB_BUF, -1, MPI_INT, 0, -1, MPI_INT, MPI_COMM_WORLD, KP_ERR_COUNT);
    bad_call("MPI_IN_PLACE, rcount -3", SB_INPLACE, 0, MPI_DATATYPE_NULL, 0, -3, MPI_INT, MPI_COMM_WORLD,
             KP_ERR_COUNT);
    bad_call("3 MPI_INT sent, 4 MPI_INT received", SB_BUF, 3, MPI_INT, 0, 4, MPI_INT, MPI_COMM_WORLD,
             KP_ERR_COUNT);
    bad_call("4 MPI_BYTE sent, 1 MPI_DOUBLE received", SB_BUF, 4, MPI_BYTE, 0, 1, MPI_DOUBLE, MPI_COMM_WORLD,
             KP_ERR_COUNT);
    bad_call("0 MPI_INT sent, 1 received", SB_BUF, 0, MPI_INT, 0, 1, MPI_INT, MPI_COMM_WORLD, KP_ERR_COUNT);
    bad_call("1 MPI_INT sent, 0 received", SB_BUF, 1, MPI_INT, 0, 0, MPI_INT, MPI_COMM_WORLD, KP_ERR_COUNT);
    bad_call("stype MPI_DATATYPE_NULL", SB_BUF, 10, MPI_DATATYPE_NULL, 0, 10, MPI_INT, MPI_COMM_WORLD,
             KP_ERR_DATATYPE);
    bad_call("rtype MPI_DATATYPE_NULL", SB_BUF, 10, MPI_INT, 0, 10, MPI_DATATYPE_NULL, MPI_COMM_WORLD,
             KP_ERR_DATATYPE);
    bad_call("MPI_IN_PLACE, rtype MPI_DATATYPE_NULL", SB_INPLACE, 0, MPI_DATATYPE_NULL, 0, 10, MPI_DATATYPE_NULL,
             MPI_COMM_WORLD, KP_ERR_DATATYPE);
    bad_call("MPI_COMM_NULL", SB_BUF, 10, MPI_INT, 0, 10, MPI_INT, MPI_COMM_NULL, KP_ERR_COMM);
    /* 2^62 ints = 2^64 bytes: wraps to 0 in 64 bits */
    const MPI_Count huge = (MPI_Count)1 << 62;
    bad_call("2^62 MPI_INT (byte size overflows)", SB_BUF, huge, MPI_INT, 0, huge, MPI_INT, MPI_COMM_WORLD,
             ANY_ERROR);
    bad_call("2^61+1 MPI_DOUBLE (byte size overflows)", SB_BUF, huge / 2 + 1, MPI_DOUBLE, 0, huge / 2 + 1,
             MPI_DOUBLE, MPI_COMM_WORLD, ANY_ERROR);

    if (P >= 2) { /* inter-communicator between even and odd ranks */
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, me % 2 == 0 ? 1 : 0, 77, &inter);
        bad_call("inter-communicator", SB_BUF, 10, MPI_INT, 0, 10, MPI_INT, inter, KP_ERR_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    /* valid after all */
    bad_call("NULL buffers, counts 0", SB_NULL, 0, MPI_INT, 1, 0, MPI_INT, MPI_COMM_WORLD, KP_SUCCESS);
    bad_call("NULL sendbuf, counts 0", SB_NULL, 0, MPI_INT, 0, 0, MPI_INT, MPI_COMM_WORLD, KP_SUCCESS);

    /* MPI_IN_PLACE: send count and type are ignored (MPI semantics) */
    kt_gbuf recv = kt_gbuf_alloc((size_t)P * 40, 0);
    kt_fill(recv.p + (size_t)me * 40, &L_INT, 10, me, 11);
    kt_gbuf exp = kt_gbuf_clone(&recv);
    for (int o = 0; o < P; o++)
        kt_fill(exp.p + (size_t)o * 40, &L_INT, 10, o, 11);
    int r = kp_allgather(MPI_IN_PLACE, -5, MPI_DATATYPE_NULL, recv.p, 10, MPI_INT, MPI_COMM_WORLD);
    kt_expect(r == KP_SUCCESS, "MPI_IN_PLACE with scount -5, MPI_DATATYPE_NULL (ignored): returned %d (%s): %s", r,
              kt_str(kp_strerror(r)), r ? kt_str(kp_last_error()) : "");
    if (r == KP_SUCCESS)
        kt_compare(&recv, &exp, 40, "MPI_IN_PLACE with scount -5, MPI_DATATYPE_NULL: receive buffer");
    kt_gbuf_free(&recv);
    kt_gbuf_free(&exp);
    recv = kt_gbuf_alloc((size_t)P * 40, 0);
    kt_fill(recv.p + (size_t)me * 40, &L_INT, 10, me, 12);
    exp = kt_gbuf_clone(&recv);
    for (int o = 0; o < P; o++)
        kt_fill(exp.p + (size_t)o * 40, &L_INT, 10, o, 12);
    r = kp_allgather(MPI_IN_PLACE, 7, MPI_DOUBLE, recv.p, 10, MPI_INT, MPI_COMM_WORLD);
    kt_expect(r == KP_SUCCESS, "MPI_IN_PLACE with scount 7, MPI_DOUBLE (ignored): returned %d (%s): %s", r,
              kt_str(kp_strerror(r)), r ? kt_str(kp_last_error()) : "");
    if (r == KP_SUCCESS)
        kt_compare(&recv, &exp, 40, "MPI_IN_PLACE with scount 7, MPI_DOUBLE: receive buffer");
    kt_gbuf_free(&recv);
    kt_gbuf_free(&exp);

    /* and a normal call still works */
    valid_call("valid call after the invalid ones", 100, 0, MPI_COMM_WORLD, 13, KP_SUCCESS, NULL, NULL);
}

/* ---- algorithm specifications ----------------------------------------------------- */

static void test_specs(void)
{
    static const char *bad[] = {
        "no_such_algorithm", "bruck:k=0", "bruck:k=-1", "bruck:k=abc", "bruck:z=3", "ring:k=2",
        "concurrent_exchange:C=0", "bruck:k=", "bruck:k", "bruck:k=3x", "bruck:k=99999999999999999999",
        "direct:C=2", "concurrent_exchange:k=2", "auto:k=2", "bruck:k=2:k=3", "ring,bruck",
    };
    const int nbad = (int)(sizeof(bad) / sizeof(bad[0]));
    static const char *prev[] = {"ring", "bruck:k=3"};
    char what[512];
    for (int i = 0; i < nbad; i++) {
        const char *pv = prev[i % 2];
        int r = kp_set_algorithm(KP_COLL_ALLGATHER, pv);
        kt_expect(r == KP_SUCCESS, "kp_set_algorithm(\"%s\") returned %d: %s", pv, r, kt_str(kp_last_error()));
        r = kp_set_algorithm(KP_COLL_ALLGATHER, bad[i]);
        kt_expect(r == KP_ERR_PARAM, "kp_set_algorithm(\"%s\") returned %d (%s), expected KP_ERR_PARAM", bad[i], r,
                  kt_str(kp_strerror(r)));
        if (r != KP_SUCCESS) {
            const char *e = kp_last_error();
            kt_expect(e && *e, "kp_set_algorithm(\"%s\"): error but kp_last_error() is empty", bad[i]);
            if (me == 0)
                printf("    kp_set_algorithm(\"%s\") -> %d: %s\n", bad[i], r, kt_str(e));
        }
        snprintf(what, sizeof(what), "call after refused \"%s\" (previous \"%s\")", bad[i], pv);
        valid_call(what, 50, i % 3 == 2, MPI_COMM_WORLD, 100 + i, KP_SUCCESS, pv, NULL);
    }

    /* invalid collective / policy: refused, setting kept */
    int r = kp_set_algorithm(KP_COLL_ALLGATHER, "ring");
    kt_expect(r == KP_SUCCESS, "kp_set_algorithm(\"ring\") returned %d", r);
    r = kp_set_algorithm(KP_COLL_COUNT, "ring");
    kt_expect(r != KP_SUCCESS, "kp_set_algorithm(KP_COLL_COUNT, \"ring\") succeeded");
    r = kp_set_algorithm((enum kp_coll) - 1, "bruck:k=3");
    kt_expect(r != KP_SUCCESS, "kp_set_algorithm((enum kp_coll)-1, ...) succeeded");
    r = kp_set_fallback((enum kp_fallback)7);
    kt_expect(r != KP_SUCCESS, "kp_set_fallback(7) succeeded");
    valid_call("call after invalid collective / policy (previous \"ring\")", 10, 0, MPI_COMM_WORLD, 130,
               KP_SUCCESS, "ring", NULL);

    /* back to automatic selection */
    r = kp_set_algorithm(KP_COLL_ALLGATHER, NULL);
    kt_expect(r == KP_SUCCESS, "kp_set_algorithm(NULL) returned %d", r);
    valid_call("call after kp_set_algorithm(NULL)", 10, 0, MPI_COMM_WORLD, 131, KP_SUCCESS, NULL, NULL);
    r = kp_set_algorithm(KP_COLL_ALLGATHER, "auto");
    kt_expect(r == KP_SUCCESS, "kp_set_algorithm(\"auto\") returned %d", r);
    valid_call("call after kp_set_algorithm(\"auto\")", 10, 0, MPI_COMM_WORLD, 132, KP_SUCCESS, NULL, NULL);
}

/* ---- fallback policies --------------------------------------------------------------- */

typedef struct capture {
    FILE *tmp;
    int saved;
} capture;

/* Redirect this process's stderr (fd 2) to a temporary file. */
static int capture_begin(capture *c)
{
    fflush(stderr);
    c->tmp = tmpfile();
    c->saved = c->tmp ? dup(2) : -1;
    if (!c->tmp || c->saved < 0 || dup2(fileno(c->tmp), 2) < 0) {
        if (c->tmp)
            fclose(c->tmp);
        if (c->saved >= 0)
            close(c->saved);
        c->tmp = NULL;
        return 0;
    }
    return 1;
}

/* Restore stderr; return how many bytes were written, text in out. */
static long capture_end(capture *c, char *out, size_t outlen)
{
    out[0] = '\0';
    if (!c->tmp)
        return -1;
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->saved);
    struct stat st;
    long n = fstat(fileno(c->tmp), &st) == 0 ? (long)st.st_size : -1;
    rewind(c->tmp);
    size_t got = fread(out, 1, outlen - 1, c->tmp);
    out[got] = '\0';
    fclose(c->tmp);
    return n;
}

static void test_fallback(void)
{
    char cand[4][64];
    int nc = 0;
    if (P == 3)
        snprintf(cand[nc++], 64, "concurrent_exchange_split");
    snprintf(cand[nc++], 64, "concurrent_exchange:C=3");
    if (P != 3)
        snprintf(cand[nc++], 64, "concurrent_exchange_split");
    snprintf(cand[nc++], 64, "concurrent_exchange:C=%d", P + 1);

    kt_expect(kp_set_fallback(KP_FALLBACK_ERROR) == KP_SUCCESS, "kp_set_fallback(KP_FALLBACK_ERROR) failed");
    const char *forced = NULL;
    char what[512];
    for (int i = 0; i < nc && !forced; i++) {
        int r = kp_set_algorithm(KP_COLL_ALLGATHER, cand[i]);
        kt_expect(r == KP_SUCCESS, "kp_set_algorithm(\"%s\") returned %d: %s", cand[i], r, kt_str(kp_last_error()));
        if (r != KP_SUCCESS)
            continue;
        /* a tentative call: if it runs, its data must be right */
        kt_gbuf recv = kt_gbuf_alloc((size_t)P * 400, 0), send = kt_gbuf_alloc(400, 0);
        kt_fill(send.p, &L_INT, 100, me, 200 + i);
        kt_gbuf exp = kt_gbuf_clone(&recv);
        r = kp_allgather(send.p, 100, MPI_INT, recv.p, 100, MPI_INT, MPI_COMM_WORLD);
        int lo, hi;
        int same = kt_same(r, MPI_COMM_WORLD, &lo, &hi);
        kt_expect(same, "forced \"%s\": return codes differ (%d..%d)", cand[i], lo, hi);
        if (r == KP_SUCCESS)
            for (int o = 0; o < P; o++)
                kt_fill(exp.p + (size_t)o * 400, &L_INT, 100, o, 200 + i);
        snprintf(what, sizeof(what), "forced \"%s\" (returned %d): receive buffer", cand[i], r);
        kt_compare(&recv, &exp, 400, what);
        kt_gbuf_free(&recv);
        kt_gbuf_free(&exp);
        kt_gbuf_free(&send);
        if (r == KP_ERR_UNSUPPORTED && same)
            forced = cand[i];
        else
            kt_expect(r == KP_SUCCESS, "forced \"%s\": returned %d (%s): %s", cand[i], r, kt_str(kp_strerror(r)),
                      kt_str(kp_last_error()));
    }
    if (!forced && P <= 2) { /* every algorithm runs on 1 and 2 ranks, parameters clamped (issue 7) */
        if (me == 0)
            printf("  no forced algorithm refuses P=%d (every one runs there); fallback policies untested\n", P);
        kp_set_algorithm(KP_COLL_ALLGATHER, NULL);
        return;
    }
    if (!kt_expect(forced != NULL, "no candidate forced algorithm refuses P=%d; fallback policies untested", P)) {
        kp_set_algorithm(KP_COLL_ALLGATHER, NULL);
        return;
    }
    if (me == 0)
        printf("  forced algorithm that cannot apply at P=%d: \"%s\"\n", P, forced);

    /* KP_FALLBACK_ERROR */
    snprintf(what, sizeof(what), "\"%s\", KP_FALLBACK_ERROR", forced);
    valid_call(what, 100, 0, MPI_COMM_WORLD, 210, KP_ERR_UNSUPPORTED, NULL, NULL);
    snprintf(what, sizeof(what), "\"%s\", KP_FALLBACK_ERROR, in place", forced);
    valid_call(what, 100, 1, MPI_COMM_WORLD, 211, KP_ERR_UNSUPPORTED, NULL, NULL);
    if (me == 0)
        printf("    KP_FALLBACK_ERROR: %s\n", kt_str(kp_last_error()));

    /* KP_FALLBACK_WARN: rank 0 prints a warning */
    kt_expect(kp_set_fallback(KP_FALLBACK_WARN) == KP_SUCCESS, "kp_set_fallback(KP_FALLBACK_WARN) failed");
    capture cap;
    char text[2048];
    int capturing = capture_begin(&cap);
    snprintf(what, sizeof(what), "\"%s\", KP_FALLBACK_WARN", forced);
    valid_call(what, 100, 0, MPI_COMM_WORLD, 220, KP_SUCCESS, NULL, forced);
    long nw = capturing ? capture_end(&cap, text, sizeof(text)) : -1;
    if (me == 0 && capturing) {
        kt_expect(nw > 0, "KP_FALLBACK_WARN: rank 0 printed no warning on stderr");
        printf("    KP_FALLBACK_WARN: ran \"%s\"; rank 0 stderr: %s", kt_str(kp_last_algorithm(KP_COLL_ALLGATHER)),
               nw > 0 ? text : "(nothing)\n");
        if (nw > 0 && text[strlen(text) - 1] != '\n')
            printf("\n");
    }
    snprintf(what, sizeof(what), "\"%s\", KP_FALLBACK_WARN, in place", forced);
    valid_call(what, 100, 1, MPI_COMM_WORLD, 221, KP_SUCCESS, NULL, forced);

    /* KP_FALLBACK_SILENT: nothing printed anywhere */
    kt_expect(kp_set_fallback(KP_FALLBACK_SILENT) == KP_SUCCESS, "kp_set_fallback(KP_FALLBACK_SILENT) failed");
    capturing = capture_begin(&cap);
    snprintf(what, sizeof(what), "\"%s\", KP_FALLBACK_SILENT", forced);
    valid_call(what, 100, 0, MPI_COMM_WORLD, 230, KP_SUCCESS, NULL, forced);
    snprintf(what, sizeof(what), "\"%s\", KP_FALLBACK_SILENT, in place", forced);
    valid_call(what, 100, 1, MPI_COMM_WORLD, 231, KP_SUCCESS, NULL, forced);
    long ns = capturing ? capture_end(&cap, text, sizeof(text)) : -1;
    if (capturing)
        kt_expect(ns == 0, "KP_FALLBACK_SILENT: stderr got %ld bytes: %s", ns, text);
    if (me == 0)
        printf("    KP_FALLBACK_SILENT: ran \"%s\"\n", kt_str(kp_last_algorithm(KP_COLL_ALLGATHER)));

    /* and back to KP_FALLBACK_ERROR */
    kt_expect(kp_set_fallback(KP_FALLBACK_ERROR) == KP_SUCCESS, "kp_set_fallback(KP_FALLBACK_ERROR) failed");
    snprintf(what, sizeof(what), "\"%s\", KP_FALLBACK_ERROR again", forced);
    valid_call(what, 100, 0, MPI_COMM_WORLD, 240, KP_ERR_UNSUPPORTED, NULL, NULL);

    kt_expect(kp_set_algorithm(KP_COLL_ALLGATHER, NULL) == KP_SUCCESS, "kp_set_algorithm(NULL) failed");
}

/* ---- main ---------------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr, "usage: test_bad_input [-t seconds]\n"
                    "       test_bad_input --expect-env CODE [--expect-alg SPEC] [--coll barrier|gather|alltoall]"
                    " [-t seconds]\n");
}

/* --expect-env for the other collectives (KPORT_BARRIER / KPORT_GATHER /
 * KPORT_ALLTOALL): one valid call, its return code, the algorithm that ran
 * and, for gather and all-to-all, every received int. */
static void env_other(const char *name, int want, const char *alg)
{
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    enum kp_coll coll = !strcmp(name, "barrier") ? KP_COLL_BARRIER : !strcmp(name, "gather") ? KP_COLL_GATHER
                                                                   : KP_COLL_ALLTOALL;
    const int n = 10;
    int *sb = malloc((size_t)P * n * sizeof(int)), *rb = malloc((size_t)P * n * sizeof(int));
    for (int d = 0; d < P; d++)
        for (int i = 0; i < n; i++)
            sb[d * n + i] = me * 100000 + d * 1000 + i;
    for (int i = 0; i < P * n; i++)
        rb[i] = -1;
    int rc = coll == KP_COLL_BARRIER ? kp_barrier(MPI_COMM_WORLD)
             : coll == KP_COLL_GATHER ? kp_gather(sb, n, MPI_INT, rb, n, MPI_INT, P - 1, MPI_COMM_WORLD)
                                      : kp_alltoall(sb, n, MPI_INT, rb, n, MPI_INT, MPI_COMM_WORLD);
    kt_expect(rc == want, "%s: returned %d (%s: %s), expected %d", name, rc, kp_strerror(rc), kp_last_error(), want);
    if (rc == KP_SUCCESS && alg)
        kt_expect(!strcmp(kp_last_algorithm(coll), alg), "%s: ran \"%s\", expected \"%s\"", name,
                  kp_last_algorithm(coll), alg);
    int bad = 0;
    if (rc == KP_SUCCESS && coll == KP_COLL_GATHER && me == P - 1)
        for (int q = 0; q < P; q++)
            for (int i = 0; i < n; i++)
                bad += rb[q * n + i] != q * 100000 + i; /* block 0 of q's send buffer */
    if (rc == KP_SUCCESS && coll == KP_COLL_ALLTOALL)
        for (int q = 0; q < P; q++)
            for (int i = 0; i < n; i++)
                bad += rb[q * n + i] != q * 100000 + me * 1000 + i;
    kt_expect(bad == 0, "%s: %d received ints wrong", name, bad);
    if (me == 0)
        printf("--expect-env %d --coll %s: returned %d, algorithm \"%s\"\n", want, name, rc,
               rc == KP_SUCCESS ? kp_last_algorithm(coll) : "-");
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    kt_init();
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    /* an MPI error inside kport should come back as KP_ERR_MPI, not abort */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    int env_mode = 0, env_code = 0;
    const char *env_alg = NULL, *env_coll = "allgather";
    unsigned timeout = 120;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect-env") == 0 && i + 1 < argc) {
            char *end;
            env_mode = 1;
            env_code = (int)strtol(argv[++i], &end, 10);
            if (*end) {
                if (me == 0)
                    usage();
                MPI_Finalize();
                return 2;
            }
        } else if (strcmp(argv[i], "--expect-alg") == 0 && i + 1 < argc) {
            env_alg = argv[++i];
        } else if (strcmp(argv[i], "--coll") == 0 && i + 1 < argc) {
            env_coll = argv[++i];
        } else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            timeout = (unsigned)atoi(argv[++i]);
        } else {
            if (me == 0)
                usage();
            MPI_Finalize();
            return 2;
        }
    }
    kt_watchdog(timeout);
    L_INT = kt_layout_basic("int", MPI_INT, KT_I32);

    if (env_mode && strcmp(env_coll, "allgather") != 0) {
        env_other(env_coll, env_code, env_alg);
    } else if (env_mode) {
        const char *ea = getenv("KPORT_ALLGATHER"), *ef = getenv("KPORT_FALLBACK");
        char what[300];
        snprintf(what, sizeof(what), "--expect-env %d with KPORT_ALLGATHER=%s KPORT_FALLBACK=%s", env_code,
                 ea ? ea : "(unset)", ef ? ef : "(unset)");
        int r = valid_call(what, 100, 0, MPI_COMM_WORLD, 1, env_code, env_alg, NULL);
        if (me == 0)
            printf("%s: returned %d (%s), algorithm \"%s\"%s%s\n", what, r, kt_str(kp_strerror(r)),
                   r == KP_SUCCESS ? kt_str(kp_last_algorithm(KP_COLL_ALLGATHER)) : "-", r ? ": " : "",
                   r ? kt_str(kp_last_error()) : "");
    } else {
        if (me == 0)
            printf("test_bad_input: P=%d\n", P);
        test_strerror();
        test_registry();
        valid_call("valid call (auto)", 100, 0, MPI_COMM_WORLD, 2, KP_SUCCESS, NULL, NULL);
        test_specs();
        test_arguments();
        test_fallback();
    }
    int code = kt_finish();
    MPI_Finalize();
    return code;
}
