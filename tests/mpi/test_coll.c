/*
 * test_coll: kp_barrier, kp_gather and kp_alltoall under every algorithm.
 *
 * usage: test_coll barrier|gather|alltoall [-a spec[,spec...]] [-n iterations] [-t seconds]
 *
 *   -a  algorithm specifications, e.g. "binomial,direct:k=3,auto" (a piece
 *       "k=2" without ':' continues the previous spec's parameters).
 *       Default: every registered algorithm of the collective with its
 *       default parameters, those that take k (or n) with k (n) = 1, 2, 3, 5,
 *       and "auto".
 *   -n  back-to-back calls (default: 1000 barriers, 100 gathers/all-to-alls).
 *   -t  watchdog in seconds (default 300; 0 disables).
 *
 * For each spec, with the fallback policy "error", a first call decides
 * whether the algorithm refuses this P as a whole (KP_ERR_UNSUPPORTED on
 * every rank, with a message: an expected refusal). Otherwise:
 *
 * gather / all-to-all: every byte of the receive buffer, of its guards and
 * of the send buffer is compared with the image the formula of common.h
 * gives for (origin rank, element index, call tag). Gather: element j of
 * rank o's contribution is kt_val(o, j, tag); the root's receive block o
 * must hold it, every other rank's receive buffer (if one is passed) must
 * stay untouched. All-to-all: block d of rank o's send buffer holds
 * kt_val(o, d*n + j, tag) (n elements per block), so block o of rank d's
 * receive buffer must hold kt_val(o, d*n + j, tag). The cases are those of
 * cases.h, the one list that test_allgather runs through the all-gather:
 *   - MPI_BYTE, MPI_INT, MPI_DOUBLE x {1, 3, 100, 1000}, one block above
 *     64 KiB, misaligned byte buffers;
 *   - a contiguous derived type (3 MPI_INT), and different layouts with the
 *     same signature on the two sides;
 *   - a strided vector type (gaps inside and after each item) on the send
 *     side, the receive side or both, a vector without gaps, a gap-free
 *     indexed type whose signature order is not its memory order, a
 *     gap-free type with lower bound 8: either correct with the gaps
 *     untouched, or KP_ERR_DATATYPE;
 *   - MPI_IN_PLACE (at the root for gather), with a garbage send count and
 *     type (ignored, as in MPI); count 0 (nothing written, NULL buffers ok);
 *   - gather: roots spread over the cases, and every root with several
 *     cases; non-roots passing NULL / -1 / MPI_DATATYPE_NULL as receive
 *     arguments (insignificant there, as in MPI);
 *   - communicators from MPI_Comm_split with reversed rank order, split in
 *     two halves, a new split after the frees, MPI_COMM_SELF;
 *   - n back-to-back calls without synchronisation in between, cycling
 *     sizes (all-to-all: a quarter of them per block), types, in place,
 *     roots and two communicators.
 *
 * barrier: see barrier_* below: shared-memory flags written before each
 * barrier and read after it prove that no rank left a barrier before every
 * rank had entered it (with ranks delayed by different amounts, the slow one
 * rotating), and that no rank ran more than one barrier ahead; n barriers
 * back to back, on MPI_COMM_WORLD, a reversed split, two halves, a new
 * split, MPI_COMM_SELF.
 *
 * A forced algorithm may also refuse single calls (e.g. a sub-communicator
 * of a size it does not support) with KP_ERR_UNSUPPORTED on every rank:
 * counted and shown. Every call's return code must agree on all ranks, and
 * a successful call must report the forced algorithm in kp_last_algorithm().
 *
 * Then, with automatic selection, invalid arguments for the collective:
 * the same codes as kp_allgather (KP_ERR_ARG for NULL buffers with a nonzero
 * count, a root outside the communicator, MPI_IN_PLACE at a non-root;
 * KP_ERR_COUNT for negative counts and send/receive size mismatches;
 * KP_ERR_DATATYPE for MPI_DATATYPE_NULL; KP_ERR_COMM for MPI_COMM_NULL and
 * inter-communicators; some error for byte sizes that overflow), on every
 * rank, with buffers untouched and kp_last_error() non-empty; count 0 with
 * NULL buffers succeeds.
 *
 * Output: one line per spec on rank 0, then "N passed, M failed" (checks
 * summed over ranks); exit code nonzero if any rank failed a check.
 */
#include "cases.h"

#include <time.h>

static int P, me;
static enum kp_coll coll;
static const char *cname;
static kt_types T;

typedef struct astats {
    long refused;       /* single calls refused with KP_ERR_UNSUPPORTED */
    long dtype_refused; /* calls refused with KP_ERR_DATATYPE (allowed) */
} astats;

/* Return code compared over comm: one check. Returns 1 when equal. */
static int same_rc(int rc, MPI_Comm comm, const char *what)
{
    int lo = 0, hi = 0;
    int ok = kt_same(rc, comm, &lo, &hi);
    kt_expect(ok, "%s: return codes differ between ranks (%d..%d; this rank %d: %s)", what, lo, hi, rc,
              kt_str(kp_last_error()));
    return ok;
}

/* ====================================================================== */
/* gather and all-to-all                                                  */
/* ====================================================================== */

static kt_case rooted(kt_case c, int root, int junk)
{
    c.root = root;
    c.junk = junk;
    return c;
}

/* Gather: roots spread over a list of cases on a communicator of `size`
 * ranks (the first, the last, the middle, rank 1 with junk receive
 * arguments at the non-roots, a third, ... in turn). */
static void spread_roots(kt_case *c, int n, int size)
{
    for (int i = 0; i < n; i++) {
        const int pick[5] = {0, size - 1, size / 2, 1, size / 3};
        c[i].root = pick[i % 5] % size;
        c[i].junk = i % 5 == 3;
    }
}

/* The cases on MPI_COMM_WORLD (cases.h; gather: roots spread, and a few
 * cases with junk receive arguments at the non-roots); the first one is
 * the probe. */
static int world_cases(kt_case *c)
{
    int n = kt_cases_world(&T, c, KT_MAX_CASES);
    if (coll == KP_COLL_GATHER) {
        for (int i = 1; i < n; i++)
            c[i].root = i % P;
        n = kt_case_add(c, n, KT_MAX_CASES, rooted(kt_case_mk(&T.i32, 100, &T.i32, 100, 0, 0, 0), P - 1, 1));
        n = kt_case_add(c, n, KT_MAX_CASES, rooted(kt_case_mk(&T.vec, 3, &T.i32, 18, 0, 0, 1), P / 2, 1));
        n = kt_case_add(c, n, KT_MAX_CASES, rooted(kt_case_mk(NULL, 0, &T.dbl, 10, 1, 0, 0), P / 3, 1));
        n = kt_case_add(c, n, KT_MAX_CASES, rooted(kt_case_mk(&T.byte, 0, &T.byte, 0, 0, 0, 0), 0, 1));
    }
    return n;
}

/* gather: cases run once for every root */
static int root_cases(kt_case *c, int root)
{
    int n = 0;
    c[n++] = rooted(kt_case_mk(&T.i32, 100, &T.i32, 100, 0, 0, 0), root, 0);
    c[n++] = rooted(kt_case_mk(NULL, 0, &T.dbl, 33, 1, 0, 0), root, root % 2);
    c[n++] = rooted(kt_case_mk(&T.byte, 5, &T.byte, 5, 0, 1, 0), root, 1);
    c[n++] = rooted(kt_case_mk(&T.vec, 2, &T.i32, 12, 0, 0, 1), root, 0);
    c[n++] = rooted(kt_case_mk(&T.i32, 12, &T.vec, 2, 0, 0, 1), root, 1);
    return n;
}

typedef struct call {
    kt_gbuf recv, init, send, send0;
    int P, me, root;
    int is_root;      /* the receive side is significant here (always, except gather non-roots) */
    int pass_recv;    /* a receive buffer is passed */
    int inplace;      /* this rank passes MPI_IN_PLACE */
    int64_t rstride;  /* bytes per block in the receive buffer */
    int64_t sstride;  /* bytes per block in the send buffer */
    int64_t nbasic;   /* basic elements per block */
} call;

static void call_prepare(call *k, const kt_case *c, MPI_Comm comm, int tag)
{
    memset(k, 0, sizeof(*k));
    MPI_Comm_size(comm, &k->P);
    MPI_Comm_rank(comm, &k->me);
    k->root = coll == KP_COLL_GATHER ? c->root % k->P : 0;
    k->is_root = coll != KP_COLL_GATHER || k->me == k->root;
    k->pass_recv = k->is_root || !c->junk;
    k->inplace = c->inplace && k->is_root;
    k->rstride = c->rc * c->rt->extent;
    k->sstride = c->sc * c->st->extent;
    k->nbasic = c->rc * c->rt->nelem;
    const int nsblk = coll == KP_COLL_ALLTOALL ? k->P : 1;
    if (k->pass_recv)
        k->recv = kt_gbuf_alloc((size_t)((k->P - 1) * k->rstride + kt_case_span(c->rt, c->rc)), c->skew);
    if (k->inplace) {
        if (coll == KP_COLL_ALLTOALL)
            for (int d = 0; d < k->P; d++)
                kt_fill_at(k->recv.p + d * k->rstride, c->rt, k->nbasic, k->me, tag, d * k->nbasic);
        else
            kt_fill(k->recv.p + k->me * k->rstride, c->rt, k->nbasic, k->me, tag);
    } else {
        k->send = kt_gbuf_alloc((size_t)((nsblk - 1) * k->sstride + kt_case_span(c->st, c->sc)), c->skew);
        for (int d = 0; d < nsblk; d++)
            kt_fill_at(k->send.p + d * k->sstride, c->st, k->nbasic, k->me, tag, d * k->nbasic);
        k->send0 = kt_gbuf_clone(&k->send);
    }
    if (k->pass_recv)
        k->init = kt_gbuf_clone(&k->recv);
}

static int call_run(call *k, const kt_case *c, int tag, MPI_Comm comm)
{
    const void *sb = k->inplace ? MPI_IN_PLACE : (const void *)k->send.p;
    /* under MPI_IN_PLACE the send count and type are ignored: pass garbage */
    MPI_Count sc = k->inplace ? (tag % 2 ? -5 : 7) : c->sc;
    MPI_Datatype st = k->inplace ? (tag % 2 ? MPI_DATATYPE_NULL : MPI_DOUBLE) : c->st->type;
    void *rb = k->pass_recv ? k->recv.p : NULL;
    MPI_Count rc = k->is_root || !c->junk ? c->rc : -1;
    MPI_Datatype rt = k->is_root || !c->junk ? c->rt->type : MPI_DATATYPE_NULL;
    if (coll == KP_COLL_GATHER)
        return kp_gather(sb, sc, st, rb, rc, rt, k->root, comm);
    return kp_alltoall(sb, sc, st, rb, rc, rt, comm);
}

static void call_check(call *k, const kt_case *c, int tag, int rc, const char *spec, const char *ctx, astats *as)
{
    char what[400];
    if (coll == KP_COLL_GATHER)
        snprintf(what, sizeof(what), "%s%s: %s, root %d%s, comm size %d, tag %d", ctx, spec, c->name, k->root,
                 c->junk ? " (junk recv args at non-roots)" : "", k->P, tag);
    else
        snprintf(what, sizeof(what), "%s%s: %s, comm size %d, tag %d", ctx, spec, c->name, k->P, tag);
    char w2[480];
    if (k->pass_recv) {
        kt_gbuf exp = kt_gbuf_clone(&k->init);
        if (rc == KP_SUCCESS && k->is_root)
            for (int o = 0; o < k->P; o++) {
                if (coll == KP_COLL_ALLTOALL)
                    kt_fill_at(exp.p + o * k->rstride, c->rt, k->nbasic, o, tag, k->me * k->nbasic);
                else
                    kt_fill(exp.p + o * k->rstride, c->rt, k->nbasic, o, tag);
            }
        snprintf(w2, sizeof(w2), "%s: receive buffer%s%s", what, k->is_root ? "" : " of a non-root (must stay untouched)",
                 rc == KP_SUCCESS ? "" : " after a refusal");
        kt_compare(&k->recv, &exp, k->rstride, w2);
        kt_gbuf_free(&exp);
    }
    if (!k->inplace) {
        snprintf(w2, sizeof(w2), "%s: send buffer modified", what);
        kt_compare(&k->send, &k->send0, 0, w2);
    }
    const char *err = kp_last_error();
    if (rc == KP_SUCCESS) {
        if (k->nbasic > 0) {
            const char *last = kp_last_algorithm(coll);
            kt_expect(kt_spec_matches_coll(coll, spec, last), "%s: kp_last_algorithm() is \"%s\", not the forced \"%s\"",
                      what, kt_str(last), spec);
        }
    } else if (rc == KP_ERR_UNSUPPORTED || (rc == KP_ERR_DATATYPE && c->dtype_ok)) {
        if (rc == KP_ERR_UNSUPPORTED)
            as->refused++;
        else
            as->dtype_refused++;
        kt_expect(err && *err, "%s: refused with %s but kp_last_error() is empty", what, kp_strerror(rc));
    } else {
        kt_fail("%s: kp_%s returned %d (%s): %s", what, cname, rc, kt_str(kp_strerror(rc)), kt_str(err));
    }
}

static void call_free(call *k)
{
    if (k->recv.mem) {
        kt_gbuf_free(&k->recv);
        kt_gbuf_free(&k->init);
    }
    if (k->send.mem) {
        kt_gbuf_free(&k->send);
        kt_gbuf_free(&k->send0);
    }
}

/* One call, return code compared over comm; returns this rank's code. */
static int run_case(const char *spec, const kt_case *c, MPI_Comm comm, int tag, astats *as)
{
    call k;
    call_prepare(&k, c, comm, tag);
    int rc = call_run(&k, c, tag, comm);
    int lo = 0, hi = 0;
    kt_expect(kt_same(rc, comm, &lo, &hi), "%s: %s (tag %d): return codes differ between ranks (%d..%d; this rank %d: %s)",
              spec, c->name, tag, lo, hi, rc, kt_str(kp_last_error()));
    call_check(&k, c, tag, rc, spec, "", as);
    call_free(&k);
    return rc;
}

/* The cases of cases.h's list `which` on comm (gather: roots spread),
 * tags tag0, tag0 + 1, ... */
static void run_sub(const char *spec, enum kt_sub which, MPI_Comm comm, int tag0, astats *as)
{
    kt_case c[KT_MAX_CASES];
    const int n = kt_cases_sub(&T, which, c, KT_MAX_CASES);
    int size;
    MPI_Comm_size(comm, &size);
    if (coll == KP_COLL_GATHER) /* roots by rank in comm */
        spread_roots(c, n, size);
    for (int i = 0; i < n; i++)
        run_case(spec, &c[i], comm, tag0 + i, as);
}

static void data_split_cases(const char *spec, int tag0, astats *as)
{
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &rev);
    int rr;
    MPI_Comm_rank(rev, &rr);
    kt_expect(rr == P - 1 - me, "test bug: reversed split gives rank %d to world rank %d", rr, me);
    run_sub(spec, KT_SUB_REVERSED, rev, tag0, as);
    MPI_Comm_free(&rev);

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, P - me, &half);
    run_sub(spec, KT_SUB_HALVES, half, tag0 + 10, as);
    MPI_Comm_free(&half);

    MPI_Comm again;
    MPI_Comm_split(MPI_COMM_WORLD, 0, me, &again);
    run_sub(spec, KT_SUB_AGAIN, again, tag0 + 20, as);
    MPI_Comm_free(&again);

    run_sub(spec, KT_SUB_SELF, MPI_COMM_SELF, tag0 + 30, as);
}

/* n calls back to back with no synchronisation in between (kt_case_b2b:
 * changing sizes, per block for all-to-all a quarter of them, types, in
 * place now and then), gather roots rotating, junk receive arguments at
 * the non-roots every third call, every fifth call on a reversed
 * communicator. */
static void data_back_to_back(const char *spec, int n, int tag0, astats *as)
{
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &rev);
    for (int i = 0; i < n; i++) {
        kt_case c = kt_case_b2b(&T, i, coll == KP_COLL_ALLTOALL ? 4 : 1);
        c.root = (i * 7 + 3) % P;
        c.junk = i % 3 == 0;
        MPI_Comm comm = i % 5 == 4 ? rev : MPI_COMM_WORLD;
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "back-to-back call %d on %s: ", i, comm == rev ? "reversed comm" : "world");
        call k;
        call_prepare(&k, &c, comm, tag0 + i);
        int rc = call_run(&k, &c, tag0 + i, comm);
        call_check(&k, &c, tag0 + i, rc, spec, ctx, as);
        call_free(&k);
    }
    MPI_Comm_free(&rev);
}

/* returns 1 when the algorithm refuses this P as a whole */
static int data_spec(const char *spec, int tag0, int iters, astats *as, char *why, size_t whylen)
{
    static kt_case cases[KT_MAX_CASES];
    const int ncases = world_cases(cases);
    int rc = run_case(spec, &cases[0], MPI_COMM_WORLD, tag0, as);
    int lo = 0, hi = 0;
    if (rc == KP_ERR_UNSUPPORTED && kt_same(rc, MPI_COMM_WORLD, &lo, &hi)) {
        snprintf(why, whylen, "%s", kt_str(kp_last_error()));
        as->refused--;
        return 1;
    }
    for (int c = 1; c < ncases; c++)
        run_case(spec, &cases[c], MPI_COMM_WORLD, tag0 + c, as);
    if (coll == KP_COLL_GATHER)
        for (int r = 0; r < P; r++) {
            kt_case rc5[8];
            int nr = root_cases(rc5, r);
            for (int i = 0; i < nr; i++)
                run_case(spec, &rc5[i], MPI_COMM_WORLD, tag0 + 100 + 8 * r + i, as);
        }
    data_split_cases(spec, tag0 + 300, as);
    data_back_to_back(spec, iters, tag0 + 400, as);
    return 0;
}

/* ====================================================================== */
/* barrier                                                                */
/* ====================================================================== */

/*
 * How the barrier test knows that a barrier synchronised, without clocks:
 *
 * Every rank owns one word of a shared-memory window (MPI_Win_allocate_shared
 * over the ranks of this node; on one node, that is all of them). Before its
 * e-th barrier call a rank stores e into its word (an atomic store followed
 * by MPI_Win_sync, so the store is visible before any message the barrier
 * sends). After the call returns, it runs MPI_Win_sync and reads the words of
 * every other member of the communicator:
 *   - each must be >= e: that member has at least entered barrier e. A
 *     barrier that lets a rank out before some member has entered fails this
 *     as soon as that member is late; to make sure some member IS late,
 *     the timed rounds delay rank r by ((r + round) mod P) * 2 ms before the
 *     barrier (the slow rank rotates, so a barrier that only waits for some
 *     ranks, e.g. a broken round, is caught too);
 *   - each must be <= e + 1: a member may already have left barrier e and
 *     stored e + 1 for the next one, but it cannot have left barrier e + 1
 *     while this rank has not entered it.
 * The information that "rank s entered" travels only through the barrier's
 * own messages (the chain store -> Win_sync -> s's sends -> ... -> this rank's
 * receives -> Win_sync -> load), which is exactly what a barrier must
 * guarantee; no other message passes between the store and the load. Every
 * rank makes the same sequence of barrier calls (the halves too), so one
 * counter serves all communicators.
 */
static MPI_Comm nodecomm = MPI_COMM_NULL;
static MPI_Win flagwin = MPI_WIN_NULL;
static long **flagp; /* flagp[r]: the word of node rank r */
static int nodesize, noderank;
static long epoch;

static void flags_init(void)
{
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &nodecomm);
    MPI_Comm_size(nodecomm, &nodesize);
    MPI_Comm_rank(nodecomm, &noderank);
    long *mine;
    MPI_Win_allocate_shared((MPI_Aint)sizeof(long), (int)sizeof(long), MPI_INFO_NULL, nodecomm, &mine, &flagwin);
    flagp = malloc((size_t)nodesize * sizeof(*flagp));
    for (int r = 0; r < nodesize; r++) {
        MPI_Aint sz;
        int du;
        void *p;
        MPI_Win_shared_query(flagwin, r, &sz, &du, &p);
        flagp[r] = p;
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, flagwin);
    __atomic_store_n(mine, 0L, __ATOMIC_SEQ_CST);
    MPI_Win_sync(flagwin);
    MPI_Barrier(nodecomm);
    MPI_Win_sync(flagwin);
    if (me == 0 && nodesize < P)
        printf("  note: only %d of %d ranks share memory: the barrier checks see those\n", nodesize, P);
}

static void flags_free(void)
{
    MPI_Win_unlock_all(flagwin);
    MPI_Win_free(&flagwin);
    MPI_Comm_free(&nodecomm);
    free(flagp);
}

/* node ranks of comm's members (-1: not on this node), excluding myself */
typedef struct members {
    int n;
    int *node; /* node rank of each member, -1 if none */
} members;

static members members_of(MPI_Comm comm)
{
    members m;
    MPI_Group g, ng;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(nodecomm, &ng);
    MPI_Comm_size(comm, &m.n);
    int *in = malloc((size_t)m.n * sizeof(int));
    m.node = malloc((size_t)m.n * sizeof(int));
    for (int i = 0; i < m.n; i++)
        in[i] = i;
    MPI_Group_translate_ranks(g, m.n, in, ng, m.node);
    for (int i = 0; i < m.n; i++)
        if (m.node[i] == MPI_UNDEFINED || m.node[i] == noderank)
            m.node[i] = -1;
    free(in);
    MPI_Group_free(&g);
    MPI_Group_free(&ng);
    return m;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

typedef struct bres {
    long calls, errors, early, ahead, wrong_name, refused;
    int first_rc;
    char first[300];
} bres;

/* One flagged barrier on comm. */
static int flagged_barrier(MPI_Comm comm, const members *m, const char *spec, bres *b)
{
    epoch++;
    __atomic_store_n(flagp[noderank], epoch, __ATOMIC_SEQ_CST);
    MPI_Win_sync(flagwin);
    int rc = kp_barrier(comm);
    b->calls++;
    if (rc != KP_SUCCESS) {
        if (rc == KP_ERR_UNSUPPORTED)
            b->refused++;
        else
            b->errors++;
        if (!b->first_rc) {
            b->first_rc = rc;
            snprintf(b->first, sizeof(b->first), "kp_barrier returned %d (%s): %s", rc, kt_str(kp_strerror(rc)),
                     kt_str(kp_last_error()));
        }
        return rc;
    }
    MPI_Win_sync(flagwin);
    for (int i = 0; i < m->n; i++) {
        if (m->node[i] < 0)
            continue;
        long v = __atomic_load_n(flagp[m->node[i]], __ATOMIC_SEQ_CST);
        if (v < epoch || v > epoch + 1) {
            if (v < epoch)
                b->early++;
            else
                b->ahead++;
            if (!b->first[0])
                snprintf(b->first, sizeof(b->first),
                         "barrier #%ld: member %d (of %d) shows %ld after the barrier, expected %ld or %ld (%s)",
                         epoch, i, m->n, v, epoch, epoch + 1,
                         v < epoch ? "it had not entered: the barrier did not wait for it"
                                   : "it passed the next barrier without this rank");
        }
    }
    if (!kt_spec_matches_coll(KP_COLL_BARRIER, spec, kp_last_algorithm(KP_COLL_BARRIER))) {
        b->wrong_name++;
        if (!b->first[0])
            snprintf(b->first, sizeof(b->first), "kp_last_algorithm() is \"%s\", not the forced \"%s\"",
                     kt_str(kp_last_algorithm(KP_COLL_BARRIER)), spec);
    }
    return rc;
}

/* rounds flagged barriers on comm: delayed (slow rank rotating) or back to back */
static void barrier_rounds(const char *spec, MPI_Comm comm, int rounds, int delayed, const char *label, astats *as)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    members m = members_of(comm);
    bres b;
    memset(&b, 0, sizeof(b));
    for (int i = 0; i < rounds; i++) {
        if (delayed)
            sleep_ms(((r + i) % n) * 2);
        flagged_barrier(comm, &m, spec, &b);
    }
    kt_expect(b.errors == 0 && b.early == 0 && b.ahead == 0 && b.wrong_name == 0,
              "%s: %s, comm size %d: %ld barriers: %ld errors, %ld left before a member entered, %ld with a member "
              "two barriers ahead, %ld with the wrong kp_last_algorithm(); first: %s",
              spec, label, n, b.calls, b.errors, b.early, b.ahead, b.wrong_name, b.first);
    as->refused += b.refused;
    int lo = 0, hi = 0;
    kt_expect(kt_same((int)b.refused, comm, &lo, &hi), "%s: %s: refusals differ between ranks (%d..%d)", spec, label,
              lo, hi);
    free(m.node);
}

static int barrier_spec(const char *spec, int iters, astats *as, char *why, size_t whylen)
{
    members m = members_of(MPI_COMM_WORLD);
    bres b;
    memset(&b, 0, sizeof(b));
    int rc = flagged_barrier(MPI_COMM_WORLD, &m, spec, &b);
    free(m.node);
    same_rc(rc, MPI_COMM_WORLD, spec);
    int lo = 0, hi = 0;
    if (rc == KP_ERR_UNSUPPORTED && kt_same(rc, MPI_COMM_WORLD, &lo, &hi)) {
        snprintf(why, whylen, "%s", kt_str(kp_last_error()));
        return 1;
    }
    kt_expect(rc == KP_SUCCESS && !b.first[0], "%s: first barrier: %s", spec, b.first);

    const int timed = P < 4 ? 8 : 2 * P;
    barrier_rounds(spec, MPI_COMM_WORLD, timed, 1, "delayed ranks (slow rank rotating)", as);
    barrier_rounds(spec, MPI_COMM_WORLD, iters, 0, "back to back", as);

    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &rev);
    barrier_rounds(spec, rev, P < 4 ? 4 : P, 1, "reversed split, delayed ranks", as);
    barrier_rounds(spec, rev, 100, 0, "reversed split, back to back", as);
    /* alternate world and reversed: two private communicators interleaved */
    members mw = members_of(MPI_COMM_WORLD), mr = members_of(rev);
    memset(&b, 0, sizeof(b));
    for (int i = 0; i < 100; i++)
        flagged_barrier(i % 2 ? rev : MPI_COMM_WORLD, i % 2 ? &mr : &mw, spec, &b);
    kt_expect(b.errors == 0 && b.early == 0 && b.ahead == 0 && b.wrong_name == 0,
              "%s: world and reversed split alternating: %ld errors, %ld early, %ld ahead, %ld wrong names; first: %s",
              spec, b.errors, b.early, b.ahead, b.wrong_name, b.first);
    as->refused += b.refused;
    free(mw.node);
    free(mr.node);
    MPI_Comm_free(&rev);

    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, P - me, &half);
    barrier_rounds(spec, half, P < 4 ? 4 : P, 1, "half (even/odd world ranks), delayed ranks", as);
    barrier_rounds(spec, half, 50, 0, "half, back to back", as);
    MPI_Comm_free(&half);

    MPI_Comm again;
    MPI_Comm_split(MPI_COMM_WORLD, 0, me, &again);
    barrier_rounds(spec, again, 4, 1, "new split after the frees, delayed ranks", as);
    MPI_Comm_free(&again);

    barrier_rounds(spec, MPI_COMM_SELF, 10, 0, "MPI_COMM_SELF", as);
    return 0;
}

/* ====================================================================== */
/* invalid arguments                                                      */
/* ====================================================================== */

enum { SB_NULL, SB_BUF, SB_INPLACE };
enum { ANY_ERROR = -1 };

typedef struct bargs {
    int sb; /* SB_* */
    MPI_Count sc;
    MPI_Datatype st;
    int null_recv;
    MPI_Count rc;
    MPI_Datatype rt;
} bargs;

static bargs A(int sb, MPI_Count sc, MPI_Datatype st, int null_recv, MPI_Count rc, MPI_Datatype rt)
{
    bargs a = {sb, sc, st, null_recv, rc, rt};
    return a;
}

/* One call with this rank's arguments `a` (gather: `nr` at non-roots);
 * every rank must return `want` (ANY_ERROR: the same error everywhere),
 * buffers untouched on error or when nothing is to be moved. */
static void bad_call(const char *what, bargs a, bargs nr, int root, MPI_Comm comm, int want)
{
    int np = 1, r = 0;
    if (comm != MPI_COMM_NULL) {
        int inter = 0;
        MPI_Comm_test_inter(comm, &inter);
        if (inter)
            MPI_Comm_remote_size(comm, &np);
        else
            MPI_Comm_size(comm, &np);
        MPI_Comm_rank(comm, &r);
    }
    if (coll == KP_COLL_GATHER && r != root)
        a = nr;
    const size_t big = (size_t)(np > P ? np : P) * 4096;
    kt_gbuf send = kt_gbuf_alloc(big, 0), recv = kt_gbuf_alloc(big, 0);
    for (size_t i = 0; i < big / 4; i++)
        kt_put(send.p + 4 * i, KT_I32, kt_val(me, (int64_t)i, 7));
    kt_gbuf send0 = kt_gbuf_clone(&send), recv0 = kt_gbuf_clone(&recv);
    const void *sb = a.sb == SB_NULL ? NULL : a.sb == SB_INPLACE ? MPI_IN_PLACE : (const void *)send.p;
    void *rb = a.null_recv ? NULL : recv.p;
    int rc = coll == KP_COLL_GATHER ? kp_gather(sb, a.sc, a.st, rb, a.rc, a.rt, root, comm)
                                    : kp_alltoall(sb, a.sc, a.st, rb, a.rc, a.rt, comm);
    int lo = 0, hi = 0;
    int same = kt_same(rc, MPI_COMM_WORLD, &lo, &hi);
    kt_expect(same, "bad input: %s: return codes differ between ranks (%d..%d)", what, lo, hi);
    if (want == ANY_ERROR)
        kt_expect(rc != KP_SUCCESS, "bad input: %s: kp_%s returned KP_SUCCESS, expected an error", what, cname);
    else
        kt_expect(rc == want, "bad input: %s: kp_%s returned %d (%s), expected %d (%s); kp_last_error: %s", what, cname,
                  rc, kt_str(kp_strerror(rc)), want, kt_str(kp_strerror(want)), rc ? kt_str(kp_last_error()) : "-");
    if (rc != KP_SUCCESS) {
        const char *e = kp_last_error();
        kt_expect(e && *e, "bad input: %s: error %d but kp_last_error() is empty", what, rc);
        if (me == 0 && e)
            printf("    %-60s -> %d %s\n", what, rc, e);
    }
    char w[300];
    snprintf(w, sizeof(w), "bad input: %s: receive buffer", what);
    if (rc != KP_SUCCESS || a.rc == 0)
        kt_compare(&recv, &recv0, 0, w);
    snprintf(w, sizeof(w), "bad input: %s: send buffer", what);
    kt_compare(&send, &send0, 0, w);
    kt_gbuf_free(&send);
    kt_gbuf_free(&send0);
    kt_gbuf_free(&recv);
    kt_gbuf_free(&recv0);
}

static void bad_same(const char *what, bargs a, MPI_Comm comm, int want)
{
    bad_call(what, a, a, 0, comm, want);
}

static void bad_inputs(void)
{
    if (me == 0)
        printf("  invalid arguments (code and kp_last_error() of rank 0):\n");
    const MPI_Comm W = MPI_COMM_WORLD;
    const MPI_Datatype DN = MPI_DATATYPE_NULL, I = MPI_INT;
    const MPI_Count huge = (MPI_Count)1 << 62;

    if (coll == KP_COLL_BARRIER) {
        int rc = kp_barrier(MPI_COMM_NULL);
        kt_expect(rc == KP_ERR_COMM, "bad input: kp_barrier(MPI_COMM_NULL) returned %d, expected KP_ERR_COMM", rc);
        kt_expect(*kp_last_error(), "bad input: kp_barrier(MPI_COMM_NULL): kp_last_error() is empty");
        if (me == 0)
            printf("    %-60s -> %d %s\n", "MPI_COMM_NULL", rc, kp_last_error());
        if (P >= 2) {
            MPI_Comm local, inter;
            MPI_Comm_split(W, me % 2, me, &local);
            MPI_Intercomm_create(local, 0, W, me % 2 == 0 ? 1 : 0, 78, &inter);
            rc = kp_barrier(inter);
            kt_expect(rc == KP_ERR_COMM, "bad input: kp_barrier(inter-communicator) returned %d, expected KP_ERR_COMM",
                      rc);
            if (me == 0)
                printf("    %-60s -> %d %s\n", "inter-communicator", rc, kp_last_error());
            MPI_Comm_free(&inter);
            MPI_Comm_free(&local);
        }
        rc = kp_barrier(W);
        kt_expect(rc == KP_SUCCESS, "bad input: a valid kp_barrier after the invalid ones returned %d: %s", rc,
                  kt_str(kp_last_error()));
        return;
    }

    /* arguments valid on every rank */
    const bargs ok = A(SB_BUF, 10, I, 0, 10, I);
    bad_same("NULL sendbuf, scount 10", A(SB_NULL, 10, I, 0, 10, I), W, KP_ERR_ARG);
    bad_same("scount -1", A(SB_BUF, -1, I, 0, 10, I), W, KP_ERR_COUNT);
    bad_same("stype MPI_DATATYPE_NULL", A(SB_BUF, 10, DN, 0, 10, I), W, KP_ERR_DATATYPE);
    bad_same("MPI_COMM_NULL", ok, MPI_COMM_NULL, KP_ERR_COMM);
    bad_same("2^62 MPI_INT (byte size overflows)", A(SB_BUF, huge, I, 0, huge, I), W, ANY_ERROR);
    bad_same("2^61+1 MPI_DOUBLE (byte size overflows)",
             A(SB_BUF, huge / 2 + 1, MPI_DOUBLE, 0, huge / 2 + 1, MPI_DOUBLE), W, ANY_ERROR);
    if (P >= 2) {
        MPI_Comm local, inter;
        MPI_Comm_split(W, me % 2, me, &local);
        MPI_Intercomm_create(local, 0, W, me % 2 == 0 ? 1 : 0, 77, &inter);
        bad_same("inter-communicator", ok, inter, KP_ERR_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    if (coll == KP_COLL_ALLTOALL) {
        bad_same("NULL recvbuf, rcount 10", A(SB_BUF, 10, I, 1, 10, I), W, KP_ERR_ARG);
        bad_same("MPI_IN_PLACE, NULL recvbuf, rcount 10", A(SB_INPLACE, 0, DN, 1, 10, I), W, KP_ERR_ARG);
        bad_same("rcount -1", A(SB_BUF, 10, I, 0, -1, I), W, KP_ERR_COUNT);
        bad_same("MPI_IN_PLACE, rcount -3", A(SB_INPLACE, 0, DN, 0, -3, I), W, KP_ERR_COUNT);
        bad_same("3 MPI_INT sent, 4 MPI_INT received", A(SB_BUF, 3, I, 0, 4, I), W, KP_ERR_COUNT);
        bad_same("4 MPI_BYTE sent, 1 MPI_DOUBLE received", A(SB_BUF, 4, MPI_BYTE, 0, 1, MPI_DOUBLE), W, KP_ERR_COUNT);
        bad_same("0 MPI_INT sent, 1 received", A(SB_BUF, 0, I, 0, 1, I), W, KP_ERR_COUNT);
        bad_same("1 MPI_INT sent, 0 received", A(SB_BUF, 1, I, 0, 0, I), W, KP_ERR_COUNT);
        bad_same("rtype MPI_DATATYPE_NULL", A(SB_BUF, 10, I, 0, 10, DN), W, KP_ERR_DATATYPE);
        bad_same("MPI_IN_PLACE, rtype MPI_DATATYPE_NULL", A(SB_INPLACE, 0, DN, 0, 10, DN), W, KP_ERR_DATATYPE);
        bad_same("NULL buffers, counts 0", A(SB_NULL, 0, I, 1, 0, I), W, KP_SUCCESS);
        bad_same("MPI_IN_PLACE, NULL recvbuf, rcount 0", A(SB_INPLACE, -5, DN, 1, 0, I), W, KP_SUCCESS);
    } else {
        /* root-only errors: the other ranks get an error of the same class,
         * so that no rank waits for one that left */
        const bargs nr_arg = A(SB_NULL, 10, I, 0, 10, I), nr_count = A(SB_BUF, -1, I, 0, 10, I),
                    nr_dt = A(SB_BUF, 10, DN, 0, 10, I);
        for (int root = 0; root < P; root += (P > 2 ? P - 1 : 1)) {
            char w[160];
            snprintf(w, sizeof(w), "root %d: NULL recvbuf (others: NULL sendbuf)", root);
            bad_call(w, A(SB_BUF, 10, I, 1, 10, I), nr_arg, root, W, KP_ERR_ARG);
            snprintf(w, sizeof(w), "root %d: MPI_IN_PLACE, NULL recvbuf (others: NULL sendbuf)", root);
            bad_call(w, A(SB_INPLACE, 0, DN, 1, 10, I), nr_arg, root, W, KP_ERR_ARG);
            snprintf(w, sizeof(w), "root %d: rcount -1 (others: scount -1)", root);
            bad_call(w, A(SB_BUF, 10, I, 0, -1, I), nr_count, root, W, KP_ERR_COUNT);
            snprintf(w, sizeof(w), "root %d: 3 MPI_INT sent, 4 received (others: scount -1)", root);
            bad_call(w, A(SB_BUF, 3, I, 0, 4, I), nr_count, root, W, KP_ERR_COUNT);
            snprintf(w, sizeof(w), "root %d: 0 sent, 1 received (others: scount -1)", root);
            bad_call(w, A(SB_BUF, 0, I, 0, 1, I), nr_count, root, W, KP_ERR_COUNT);
            snprintf(w, sizeof(w), "root %d: rtype MPI_DATATYPE_NULL (others: stype)", root);
            bad_call(w, A(SB_BUF, 10, I, 0, 10, DN), nr_dt, root, W, KP_ERR_DATATYPE);
            snprintf(w, sizeof(w), "root %d: in place, rtype MPI_DATATYPE_NULL (others: stype)", root);
            bad_call(w, A(SB_INPLACE, 0, DN, 0, 10, DN), nr_dt, root, W, KP_ERR_DATATYPE);
            if (P >= 2) {
                snprintf(w, sizeof(w), "root %d: NULL recvbuf; others: MPI_IN_PLACE (only valid at the root)", root);
                bad_call(w, A(SB_BUF, 10, I, 1, 10, I), A(SB_INPLACE, 0, DN, 0, 10, I), root, W, KP_ERR_ARG);
            }
            /* valid: counts 0 with NULL buffers; junk receive arguments at non-roots */
            snprintf(w, sizeof(w), "root %d: NULL buffers, counts 0", root);
            bad_call(w, A(SB_NULL, 0, I, 1, 0, I), A(SB_NULL, 0, I, 1, -1, DN), root, W, KP_SUCCESS);
            snprintf(w, sizeof(w), "root %d: in place, NULL recvbuf, rcount 0", root);
            bad_call(w, A(SB_INPLACE, -5, DN, 1, 0, I), A(SB_NULL, 0, I, 1, -1, DN), root, W, KP_SUCCESS);
        }
    }
}

/* gather: roots outside the communicator (every rank passes the same root) */
static void bad_roots(void)
{
    if (coll != KP_COLL_GATHER)
        return;
    const bargs ok = A(SB_BUF, 10, MPI_INT, 0, 10, MPI_INT);
    const int roots[4] = {-1, P, P + 5, -1000};
    for (int i = 0; i < 4; i++) {
        char w[64];
        snprintf(w, sizeof(w), "root %d (comm size %d)", roots[i], P);
        bad_call(w, ok, ok, roots[i], MPI_COMM_WORLD, KP_ERR_ARG);
    }
}

/* ====================================================================== */
/* specs and main                                                         */
/* ====================================================================== */

/* Every registered algorithm; those that accept k (or n, or C) with values
 * 1, 2, 3, 5 (C: 1, 2, 4, 8), found by asking kp_set_algorithm. */
static int default_specs(char specs[][KT_SPEC_LEN])
{
    int n = 0;
    char s[KT_SPEC_LEN + 32]; /* longer specs are refused by kt_spec_add */
    const int cnt = kp_algorithm_count(coll);
    for (int i = 0; i < cnt; i++) {
        const char *a = kp_algorithm_name(coll, i);
        if (!a)
            continue;
        n = kt_spec_add(specs, n, a);
        const char *pn[3] = {"k", "n", "C"};
        const int vals[2][4] = {{1, 2, 3, 5}, {1, 2, 4, 8}};
        for (int p = 0; p < 3; p++) {
            snprintf(s, sizeof(s), "%s:%s=1", a, pn[p]);
            if (kp_set_algorithm(coll, s) != KP_SUCCESS)
                continue;
            for (int v = 0; v < 4; v++) {
                snprintf(s, sizeof(s), "%s:%s=%d", a, pn[p], vals[p == 2][v]);
                n = kt_spec_add(specs, n, s);
            }
        }
    }
    kp_set_algorithm(coll, NULL);
    return kt_spec_add(specs, n, "auto");
}

static void usage(void)
{
    fprintf(stderr, "usage: test_coll barrier|gather|alltoall [-a spec[,spec...]] [-n iterations] [-t seconds]\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    kt_init();
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);

    static char specs[KT_MAX_SPECS][KT_SPEC_LEN];
    int nspecs = -1, iters = -1;
    unsigned timeout = 300;
    int bad = argc < 2;
    if (!bad) {
        if (strcmp(argv[1], "barrier") == 0)
            coll = KP_COLL_BARRIER;
        else if (strcmp(argv[1], "gather") == 0)
            coll = KP_COLL_GATHER;
        else if (strcmp(argv[1], "alltoall") == 0)
            coll = KP_COLL_ALLTOALL;
        else
            bad = 1;
        cname = argv[1];
    }
    for (int i = 2; i < argc && !bad; i++) {
        if (strcmp(argv[i], "-a") == 0 && i + 1 < argc)
            bad = (nspecs = kt_spec_parse(specs, argv[++i])) < 0;
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
            timeout = (unsigned)atoi(argv[++i]);
        else
            bad = 1;
    }
    if (bad) {
        if (me == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    kt_watchdog(timeout);
    if (nspecs < 0 && (nspecs = default_specs(specs)) < 0) {
        MPI_Finalize();
        return 2;
    }
    if (iters < 0)
        iters = coll == KP_COLL_BARRIER ? 1000 : 100;

    kt_types_make(&T);
    if (coll == KP_COLL_BARRIER)
        flags_init();
    kt_expect(kp_set_fallback(KP_FALLBACK_ERROR) == KP_SUCCESS, "kp_set_fallback(KP_FALLBACK_ERROR) failed");
    if (me == 0) {
        printf("test_coll %s: P=%d, %d specs, %d back-to-back calls each\n", cname, P, nspecs, iters);
        fflush(stdout);
    }
    double t_all = MPI_Wtime();

    for (int a = 0; a < nspecs; a++) {
        const char *spec = specs[a];
        long p0 = kt_st.passed, f0 = kt_st.failed;
        astats as = {0, 0};
        double t0 = MPI_Wtime();
        int refused = 0;
        char why[256] = "";

        int src = kp_set_algorithm(coll, spec);
        int lo = 0, hi = 0;
        kt_same(src, MPI_COMM_WORLD, &lo, &hi);
        if (src != KP_SUCCESS || hi != KP_SUCCESS) {
            kt_fail("kp_set_algorithm(%s, \"%s\") returned %d (%s): %s", cname, spec, src, kt_str(kp_strerror(src)),
                    kt_str(kp_last_error()));
            snprintf(why, sizeof(why), "kp_set_algorithm refused the spec");
            refused = -1;
        } else if (coll == KP_COLL_BARRIER) {
            refused = barrier_spec(spec, iters, &as, why, sizeof(why));
        } else {
            refused = data_spec(spec, 10000 * (a + 1), iters, &as, why, sizeof(why));
        }

        long loc[4] = {kt_st.passed - p0, kt_st.failed - f0, as.refused, as.dtype_refused}, tot[4];
        MPI_Allreduce(loc, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(loc + 2, tot + 2, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
        double dt = MPI_Wtime() - t0;
        if (me == 0) {
            if (refused == 1)
                printf("  %-28s refused at P=%d (expected): %s\n", spec, P, why);
            else if (refused == -1)
                printf("  %-28s FAILED: %s\n", spec, why);
            else
                printf("  %-28s %s: %ld checks passed, %ld failed", spec, tot[1] ? "FAILED" : "ok", tot[0], tot[1]);
            if (refused == 0 && tot[2])
                printf(", %ld single calls refused (KP_ERR_UNSUPPORTED)", tot[2]);
            if (refused == 0 && tot[3])
                printf(", %ld calls refused with KP_ERR_DATATYPE", tot[3]);
            if (refused == 0)
                printf(" (%.2f s)\n", dt);
            fflush(stdout);
        }
    }

    kt_expect(kp_set_algorithm(coll, NULL) == KP_SUCCESS, "kp_set_algorithm(NULL) failed");
    bad_inputs();
    bad_roots();
    if (coll != KP_COLL_BARRIER) { /* a valid call after the invalid ones */
        astats as = {0, 0};
        kt_case c = kt_case_mk(&T.i32, 100, &T.i32, 100, 0, 0, 0);
        c.root = P - 1;
        run_case("auto", &c, MPI_COMM_WORLD, 99, &as);
    }

    kp_release_caches();
    if (coll == KP_COLL_BARRIER)
        flags_free();
    kt_types_free(&T);
    if (me == 0)
        printf("test_coll %s: total %.2f s\n", cname, MPI_Wtime() - t_all);
    int code = kt_finish();
    MPI_Finalize();
    return code;
}
