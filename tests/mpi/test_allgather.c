/*
 * test_allgather: kp_allgather against a formula, under every algorithm.
 *
 * usage: test_allgather [-a spec[,spec...]] [-n iterations] [-t seconds]
 *
 *   -a  algorithm specifications to test, e.g. "bruck:k=3,ring,auto" (a
 *       piece "C=2" without ':' continues the previous spec's parameters).
 *       Default: every registered algorithm with its default parameters,
 *       direct / standard_exchange / bruck with k = 1, 2, 3, 5,
 *       concurrent_exchange with C = 1, 2, 4, 8, concurrent_exchange_split
 *       and "auto".
 *   -n  number of back-to-back calls (default 100).
 *   -t  watchdog in seconds (default 300; 0 disables).
 *
 * For each spec, with the fallback policy "error": a first call decides
 * whether the algorithm refuses this P (KP_ERR_UNSUPPORTED on every rank,
 * with a message): an expected refusal. Otherwise every case of cases.h
 * (the one list that test_coll runs through gather and all-to-all) runs,
 * and every byte of the receive buffer, of its guards and of the send
 * buffer is compared with the value the formula of common.h gives for
 * (origin rank, element index, call tag):
 *   - MPI_BYTE, MPI_INT, MPI_DOUBLE x {1, 3, 100, 1000}, and one block above
 *     64 KiB; misaligned byte buffers;
 *   - a contiguous derived type (3 MPI_INT), and different layouts with the
 *     same signature on both sides (6n MPI_INT -> 2n of it, and back);
 *   - a strided vector type (gaps inside and after each item) on the send
 *     side, the receive side or both, a vector that is contiguous, a
 *     gap-free indexed type whose signature order is not its memory order
 *     (ints at offsets 4, 0), a gap-free type with lower bound 8: either
 *     correct (gaps untouched) or KP_ERR_DATATYPE;
 *   - MPI_IN_PLACE; count 0 (nothing written); MPI_COMM_SELF;
 *   - communicators from MPI_Comm_split with reversed rank order, split in
 *     two halves, freed, and a new split made after the free;
 *   - a user's MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) pending on the
 *     communicator during a call: it must not catch kport's messages;
 *   - n back-to-back calls without synchronisation in between, cycling
 *     sizes from 0 to 131075 bytes per rank, types, in place, two
 *     communicators.
 * A forced algorithm may also refuse single calls (e.g. a sub-communicator
 * of a size it does not support) with KP_ERR_UNSUPPORTED on every rank; that
 * is counted and shown in the summary. Every call's return code must agree
 * on all ranks, and a successful call must report the forced algorithm in
 * kp_last_algorithm().
 *
 * Output: one line per spec on rank 0, then "N passed, M failed" (checks
 * summed over ranks); exit code nonzero if any rank failed a check.
 */
#include "cases.h"

typedef struct astats {
    long refused;       /* single calls refused with KP_ERR_UNSUPPORTED */
    long dtype_refused; /* calls refused with KP_ERR_DATATYPE (allowed) */
} astats;

static kt_types T;

/* ---- one call ----------------------------------------------------------------- */

typedef struct call {
    kt_gbuf recv, init, send, send0;
    int64_t rstride; /* bytes per origin block in the receive buffer */
    int64_t nbasic;  /* basic elements per rank */
} call;

static void call_prepare(call *k, const kt_case *c, MPI_Comm comm, int tag)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    memset(k, 0, sizeof(*k));
    k->rstride = c->rc * c->rt->extent;
    k->nbasic = c->rc * c->rt->nelem;
    k->recv = kt_gbuf_alloc((size_t)((P - 1) * k->rstride + kt_case_span(c->rt, c->rc)), c->skew);
    if (c->inplace) {
        kt_fill(k->recv.p + me * k->rstride, c->rt, k->nbasic, me, tag);
    } else {
        k->send = kt_gbuf_alloc((size_t)kt_case_span(c->st, c->sc), c->skew);
        kt_fill(k->send.p, c->st, c->sc * c->st->nelem, me, tag);
        k->send0 = kt_gbuf_clone(&k->send);
    }
    k->init = kt_gbuf_clone(&k->recv);
}

static int call_run(call *k, const kt_case *c, MPI_Comm comm)
{
    return kp_allgather(c->inplace ? MPI_IN_PLACE : (const void *)k->send.p, c->sc,
                        c->inplace ? MPI_DATATYPE_NULL : c->st->type, k->recv.p, c->rc, c->rt->type, comm);
}

/* Check the outcome of a call that returned rc (same on all ranks, when the
 * caller could check). */
static void call_check(call *k, const kt_case *c, MPI_Comm comm, int tag, int rc, const char *spec,
                       const char *ctx, astats *as)
{
    int P;
    MPI_Comm_size(comm, &P);
    char what[320];
    snprintf(what, sizeof(what), "%s: %s, comm size %d, tag %d", spec, c->name, P, tag);

    kt_gbuf exp = kt_gbuf_clone(&k->init);
    if (rc == KP_SUCCESS)
        for (int o = 0; o < P; o++)
            kt_fill(exp.p + o * k->rstride, c->rt, k->nbasic, o, tag);
    char w2[512];
    snprintf(w2, sizeof(w2), "%s%s: receive buffer%s", ctx, what, rc == KP_SUCCESS ? "" : " after a refusal");
    kt_compare(&k->recv, &exp, k->rstride, w2);
    kt_gbuf_free(&exp);
    if (!c->inplace) {
        snprintf(w2, sizeof(w2), "%s%s: send buffer modified", ctx, what);
        kt_compare(&k->send, &k->send0, 0, w2);
    }

    const char *err = kp_last_error();
    if (rc == KP_SUCCESS) {
        if (k->nbasic > 0) {
            const char *last = kp_last_algorithm(KP_COLL_ALLGATHER);
            kt_expect(kt_spec_matches(spec, last), "%s%s: kp_last_algorithm() is \"%s\", not the forced \"%s\"",
                      ctx, what, kt_str(last), spec);
        }
    } else if (rc == KP_ERR_UNSUPPORTED || (rc == KP_ERR_DATATYPE && c->dtype_ok)) {
        if (rc == KP_ERR_UNSUPPORTED)
            as->refused++;
        else
            as->dtype_refused++;
        kt_expect(err && *err, "%s%s: refused with %s but kp_last_error() is empty", ctx, what, kp_strerror(rc));
    } else {
        kt_fail("%s%s: kp_allgather returned %d (%s): %s", ctx, what, rc, kt_str(kp_strerror(rc)), kt_str(err));
    }
}

static void call_free(call *k)
{
    kt_gbuf_free(&k->recv);
    kt_gbuf_free(&k->init);
    if (k->send.mem) {
        kt_gbuf_free(&k->send);
        kt_gbuf_free(&k->send0);
    }
}

/* One call with the return code compared over comm; returns it (that of
 * this rank if the ranks disagree). */
static int run_case(const char *spec, const kt_case *c, MPI_Comm comm, int tag, astats *as)
{
    call k;
    call_prepare(&k, c, comm, tag);
    int rc = call_run(&k, c, comm);
    int lo, hi;
    if (!kt_same(rc, comm, &lo, &hi))
        kt_fail("%s: %s: return codes differ between ranks (%d..%d; this rank %d: %s)", spec, c->name, lo, hi, rc,
                kt_str(kp_last_error()));
    else
        kt_pass();
    call_check(&k, c, comm, tag, rc, spec, "", as);
    call_free(&k);
    return rc;
}

/* ---- communicators ------------------------------------------------------------- */

/* The cases of cases.h's list `which` on comm, tags tag0, tag0 + 1, ... */
static void run_sub(const char *spec, enum kt_sub which, MPI_Comm comm, int tag0, astats *as)
{
    kt_case c[KT_MAX_CASES];
    const int n = kt_cases_sub(&T, which, c, KT_MAX_CASES);
    for (int i = 0; i < n; i++)
        run_case(spec, &c[i], comm, tag0 + i, as);
}

static void split_cases(const char *spec, int tag0, astats *as)
{
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);

    /* reversed rank order */
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &rev);
    int rr;
    MPI_Comm_rank(rev, &rr);
    kt_expect(rr == P - 1 - me, "test bug: reversed split gives rank %d to world rank %d", rr, me);
    run_sub(spec, KT_SUB_REVERSED, rev, tag0, as);
    MPI_Comm_free(&rev);

    /* two halves (even / odd world ranks), reversed inside */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, P - me, &half);
    run_sub(spec, KT_SUB_HALVES, half, tag0 + 10, as);
    MPI_Comm_free(&half);

    /* a new communicator made after the frees (may reuse a handle) */
    MPI_Comm again;
    MPI_Comm_split(MPI_COMM_WORLD, 0, me, &again);
    run_sub(spec, KT_SUB_AGAIN, again, tag0 + 20, as);
    MPI_Comm_free(&again);

    run_sub(spec, KT_SUB_SELF, MPI_COMM_SELF, tag0 + 30, as);

    /* a user's wildcard receive pending on the communicator during the call
     * must not match kport's traffic (which belongs on a private duplicate) */
    unsigned char ubuf[256];
    int marker = 0x5eed0000 + me, flag = 0;
    MPI_Request rq;
    MPI_Status st;
    MPI_Irecv(ubuf, (int)sizeof(ubuf), MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
    kt_case wc = kt_case_mk(&T.byte, 200, &T.byte, 200, 0, 0, 0);
    run_case(spec, &wc, MPI_COMM_WORLD, tag0 + 40, as);
    MPI_Test(&rq, &flag, &st);
    if (kt_expect(!flag, "%s: a pending MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) on the user's communicator matched a "
                         "message of kport (source %d, tag %d)",
                  spec, st.MPI_SOURCE, st.MPI_TAG)) {
        MPI_Send(&marker, 1, MPI_INT, me, 4321, MPI_COMM_WORLD);
        MPI_Wait(&rq, &st);
        int got;
        memcpy(&got, ubuf, sizeof(got));
        kt_expect(got == marker && st.MPI_TAG == 4321 && st.MPI_SOURCE == me,
                  "%s: the user's wildcard receive got tag %d from %d", spec, st.MPI_TAG, st.MPI_SOURCE);
    }
}

/* n calls back to back with no synchronisation in between (kt_case_b2b:
 * cycling sizes, types, in place), every fifth call on a second
 * communicator (reversed rank order). */
static void back_to_back(const char *spec, int n, int tag0, astats *as)
{
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &rev);
    for (int i = 0; i < n; i++) {
        const kt_case c = kt_case_b2b(&T, i, 1);
        MPI_Comm comm = i % 5 == 4 ? rev : MPI_COMM_WORLD;
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "back-to-back call %d on %s: ", i, comm == rev ? "reversed comm" : "world");
        call k;
        call_prepare(&k, &c, comm, tag0 + i);
        int rc = call_run(&k, &c, comm);
        call_check(&k, &c, comm, tag0 + i, rc, spec, ctx, as);
        call_free(&k);
    }
    MPI_Comm_free(&rev);
}

/* ---- specs ------------------------------------------------------------------- */

static int default_specs(char specs[][KT_SPEC_LEN])
{
    int n = 0;
    char s[KT_SPEC_LEN];
    int cnt = kp_algorithm_count(KP_COLL_ALLGATHER);
    for (int i = 0; i < cnt; i++) {
        const char *a = kp_algorithm_name(KP_COLL_ALLGATHER, i);
        if (a)
            n = kt_spec_add(specs, n, a);
    }
    const char *kalgs[3] = {"direct", "standard_exchange", "bruck"};
    const int ks[4] = {1, 2, 3, 5};
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < 4; i++) {
            snprintf(s, sizeof(s), "%s:k=%d", kalgs[a], ks[i]);
            n = kt_spec_add(specs, n, s);
        }
    const int Cs[4] = {1, 2, 4, 8};
    for (int i = 0; i < 4; i++) {
        snprintf(s, sizeof(s), "concurrent_exchange:C=%d", Cs[i]);
        n = kt_spec_add(specs, n, s);
    }
    n = kt_spec_add(specs, n, "concurrent_exchange_split");
    n = kt_spec_add(specs, n, "auto");
    return n;
}

/* Has the algorithm `last` (as kp_last_algorithm() names it, decided on
 * rank 0) been tested already? Records it if not. */
static int seen_before(char canon[][KT_SPEC_LEN], int *n, const char *last, char out[KT_SPEC_LEN])
{
    memset(out, 0, KT_SPEC_LEN);
    snprintf(out, KT_SPEC_LEN, "%s", last ? last : "");
    MPI_Bcast(out, KT_SPEC_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 0; i < *n; i++)
        if (strcmp(canon[i], out) == 0)
            return 1;
    if (*n < KT_MAX_SPECS)
        memcpy(canon[(*n)++], out, KT_SPEC_LEN); /* out[KT_SPEC_LEN - 1] is '\0' */
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: test_allgather [-a spec[,spec...]] [-n iterations] [-t seconds]\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    kt_init();
    int P, me;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);

    static char specs[KT_MAX_SPECS][KT_SPEC_LEN];
    int nspecs = -1, iters = 100;
    unsigned timeout = 300;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-a") == 0 && i + 1 < argc && (nspecs = kt_spec_parse(specs, argv[i + 1])) >= 0) {
            i++;
        } else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            iters = atoi(argv[++i]);
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
    if (nspecs < 0 && (nspecs = default_specs(specs)) < 0) {
        MPI_Finalize();
        return 2;
    }

    kt_types_make(&T);
    static kt_case cases[KT_MAX_CASES];
    const int ncases = kt_cases_world(&T, cases, KT_MAX_CASES);

    kt_expect(kp_set_fallback(KP_FALLBACK_ERROR) == KP_SUCCESS, "kp_set_fallback(KP_FALLBACK_ERROR) failed");
    if (me == 0) {
        printf("test_allgather: P=%d, %d specs, %d cases + communicator cases + %d back-to-back calls each\n", P,
               nspecs, ncases, iters);
        fflush(stdout);
    }

    static char canon[KT_MAX_SPECS][KT_SPEC_LEN];
    int ncanon = 0;
    for (int a = 0; a < nspecs; a++) {
        const char *spec = specs[a];
        long p0 = kt_st.passed, f0 = kt_st.failed;
        astats as = {0, 0};
        int tag0 = 1000 * (a + 1);
        double t0 = MPI_Wtime();
        enum { RAN, REFUSED, SAME, BADSPEC } status = RAN;
        char why[256] = "";

        int src = kp_set_algorithm(KP_COLL_ALLGATHER, spec);
        int lo, hi;
        kt_same(src, MPI_COMM_WORLD, &lo, &hi);
        if (src != KP_SUCCESS || hi != KP_SUCCESS) {
            kt_fail("kp_set_algorithm(\"%s\") returned %d (%s): %s", spec, src, kt_str(kp_strerror(src)),
                    kt_str(kp_last_error()));
            snprintf(why, sizeof(why), "kp_set_algorithm refused the spec");
            status = BADSPEC;
        } else {
            /* probe: does the algorithm apply to this P at all? */
            int rc = run_case(spec, &cases[0], MPI_COMM_WORLD, tag0, &as);
            int same = kt_same(rc, MPI_COMM_WORLD, &lo, &hi);
            if (same && rc == KP_ERR_UNSUPPORTED) {
                status = REFUSED;
                snprintf(why, sizeof(why), "%s", kt_str(kp_last_error()));
                as.refused--; /* a refusal of the whole P, not of a single call */
            } else if (same && rc == KP_SUCCESS && strcmp(spec, "auto") != 0 &&
                       seen_before(canon, &ncanon, kp_last_algorithm(KP_COLL_ALLGATHER), why)) {
                status = SAME; /* same algorithm and parameters as an earlier spec */
            } else {
                for (int c = 1; c < ncases; c++)
                    run_case(spec, &cases[c], MPI_COMM_WORLD, tag0 + c, &as);
                split_cases(spec, tag0 + 100, &as);
                back_to_back(spec, iters, tag0 + 200, &as);
            }
        }

        long loc[4] = {kt_st.passed - p0, kt_st.failed - f0, as.refused, as.dtype_refused}, tot[4];
        MPI_Allreduce(loc, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(loc + 2, tot + 2, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        double dt = MPI_Wtime() - t0;
        if (me == 0) {
            const char *verdict = tot[1] ? "FAILED" : "ok";
            if (status == BADSPEC)
                printf("  %-28s FAILED: %s\n", spec, why);
            else if (status == REFUSED)
                printf("  %-28s %s: refused at P=%d (expected): %s\n", spec, verdict, P, why);
            else if (status == SAME)
                printf("  %-28s %s: runs \"%s\", tested above\n", spec, verdict, why);
            else {
                printf("  %-28s %s: %ld checks passed, %ld failed", spec, verdict, tot[0], tot[1]);
                if (tot[2])
                    printf(", %ld single calls refused (KP_ERR_UNSUPPORTED)", tot[2]);
                if (tot[3])
                    printf(", %ld calls refused with KP_ERR_DATATYPE", tot[3]);
                printf(" (%.2f s)\n", dt);
            }
            fflush(stdout);
        }
    }

    kt_expect(kp_set_algorithm(KP_COLL_ALLGATHER, NULL) == KP_SUCCESS, "kp_set_algorithm(NULL) failed");
    kp_release_caches();
    kt_types_free(&T);
    int code = kt_finish();
    MPI_Finalize();
    return code;
}
