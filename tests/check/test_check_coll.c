/*
 * Every barrier, gather and all-to-all algorithm of the registry through the
 * checker: every P 1..64, every n or k in 1..8, bytes 0, 1, 7, 4096 (barrier:
 * 0), every root for gather (all roots for P <= 16, roots 0, 1, P/2 and P-1
 * above), with and without MPI_IN_PLACE (gather: at the root; all-to-all:
 * the whole buffer). None of these algorithms refuses a valid P, so every
 * combination must pass; parameters out of range must be refused with
 * KP_ERR_PARAM, both through the registry and by the builder itself. The
 * barriers' and the binomial / Direct gathers' round counts must match their
 * documented formulas. For 7 and 4096 bytes, schedules that are exactly the
 * 1-byte ones scaled up get the 1-byte verdict without a second symbolic
 * run (the checker would repeat it granule for granule; see scaled()).
 *
 * Negative tests show the checks can fail: hand-made or mutilated barriers
 * (a rank that never waits, a missing last round, an asymmetric skip) and
 * gathers (a block at the wrong place, a non-root writing its receive
 * buffer, an unsplit range running past the end of the root's buffer).
 */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"
#include "sweep.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static long passed, failed;
static long quiet_after = 30; /* failures printed in full */

static void result(int good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int good, const char *fmt, ...)
{
    if (good) {
        passed++;
        return;
    }
    if (failed++ < quiet_after) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "FAIL ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
}

static const char *collname(int coll)
{
    return coll == KP_COLL_BARRIER ? "barrier" : coll == KP_COLL_GATHER ? "gather" : "alltoall";
}

/* ---- every algorithm, every shape ------------------------------------------ */

static long nscaled;

static int ceil_log(int P, long long b) /* smallest s with b^s >= P */
{
    int s = 0;
    for (long long x = 1; x < P; x *= b)
        s++;
    return s;
}

/* the documented number of rounds (the maximum over the ranks) of the
 * barrier and gather algorithms, or -1 when not known here */
static int expected_rounds(int coll, const char *name, const kp_params *prm, int P, int64_t bytes)
{
    if (coll == KP_COLL_BARRIER && !strcmp(name, "dissemination"))
        return ceil_log(P, 2);
    if (coll == KP_COLL_BARRIER && !strcmp(name, "nway_dissemination"))
        return ceil_log(P, (long long)prm->n + 1);
    if (coll != KP_COLL_GATHER || (strcmp(name, "binomial") && strcmp(name, "direct")))
        return -1;
    if (bytes == 0)
        return 0; /* zero-length operations are not stored */
    if (P == 1)
        return 1; /* the root's own copy */
    return !strcmp(name, "binomial") ? ceil_log(P, 2) : (P - 1 + prm->k - 1) / prm->k;
}

/* The checker tracks data in granules (the gcd of the block size and every
 * offset and length), so a set of schedules for `bytes` per block that is
 * exactly the 1-byte set with every offset, length and scratch size
 * multiplied by `bytes` gets the very same symbolic run as the 1-byte set.
 * Returns 1 if that is so (then the 1-byte verdict holds), 0 if the builder
 * does anything size-dependent (then the caller runs the checker). Keeps
 * the sweep fast: the checker is the expensive part. */
static int region_scaled(const kp_region *x, const kp_region *y, int64_t bytes)
{
    return x->buf == y->buf && x->off == y->off * bytes && x->len == y->len * bytes;
}

static int scaled(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int root, int inplace)
{
    int same = 1;
    for (int r = 0; r < P && same; r++) {
        kp_sched x, y;
        int rx = kp_algo_build_ex(a, prm, r, P, bytes, root, inplace, &x);
        int ry = kp_algo_build_ex(a, prm, r, P, 1, root, inplace, &y);
        same = rx == KP_SUCCESS && ry == KP_SUCCESS && x.nops == y.nops && x.nrounds == y.nrounds &&
               x.scratch_bytes == y.scratch_bytes * bytes && x.shm_bytes == 0 && y.shm_bytes == 0;
        for (int i = 0; i < x.nops && same; i++) {
            const kp_op *o = &x.ops[i], *q = &y.ops[i];
            same = o->kind == q->kind && o->round == q->round;
            if (same && o->kind == KP_OP_SEND)
                same = o->u.send.peer == q->u.send.peer && region_scaled(&o->u.send.src, &q->u.send.src, bytes);
            else if (same && o->kind == KP_OP_RECV)
                same = o->u.recv.peer == q->u.recv.peer && region_scaled(&o->u.recv.dst, &q->u.recv.dst, bytes);
            else if (same && o->kind == KP_OP_COPY)
                same = region_scaled(&o->u.copy.src, &q->u.copy.src, bytes) &&
                       region_scaled(&o->u.copy.dst, &q->u.copy.dst, bytes);
            else if (same)
                same = 0; /* other kinds (shared memory): run the checker */
        }
        kp_sched_free(&x);
        kp_sched_free(&y);
    }
    return same;
}

static void sweep(int coll)
{
    static const int64_t sizes[] = {0, 1, 7, 4096};
    const int nsizes = coll == KP_COLL_BARRIER ? 1 : 4;
    const int nip = coll == KP_COLL_BARRIER ? 1 : 2;
    for (int i = 0; i < kp_algo_count(coll); i++) {
        const kp_algo *a = kp_algo_at(coll, i);
        const long p0 = passed, f0 = failed;
        const int one_node_only = !strncmp(a->name, "shm_", 4);
        quiet_after = failed + 3; /* the first few failures of each algorithm */
        kp_params list[8];
        int n = 0;
        for (int v = 1; v <= 8; v++) /* the one parameter these algorithms take, if any */
            if (a->params & (KP_PARAM_K | KP_PARAM_N | KP_PARAM_C))
                list[n++] = (kp_params){.k = a->params & KP_PARAM_K ? v : 0,
                                        .n = a->params & KP_PARAM_N ? v : 0,
                                        .C = a->params & KP_PARAM_C ? v : 0};
        if (n == 0)
            list[n++] = (kp_params){0};
        for (int j = 0; j < n; j++) {
            char name[64];
            kp_algo_format(a, &list[j], name, sizeof(name));
            for (int P = 1; P <= sweep_pmax(); P++) {
                int roots[64], nroots = 0, zeros[64] = {0};
                kp_layout one;
                kp_layout_init(&one, P, zeros, 1);
                if (coll != KP_COLL_GATHER)
                    roots[nroots++] = 0;
                else if (P <= 16)
                    for (int r = 0; r < P; r++)
                        roots[nroots++] = r;
                else {
                    const int cand[4] = {0, 1, P / 2, P - 1};
                    for (int c = 0; c < 4; c++)
                        roots[nroots++] = cand[c];
                }
                for (int ip = 0; ip < nip; ip++)
                    for (int r = 0; r < nroots; r++) {
                        int ok1 = 0; /* the verdict for 1 byte */
                        for (int b = 0; b < nsizes; b++) {
                            kp_check_result res;
                            if (sizes[b] > 1 && scaled(a, &list[j], P, sizes[b], roots[r], ip)) {
                                res.ok = ok1; /* the very same symbolic run, see scaled() */
                                res.refused = 0;
                                snprintf(res.msg, sizeof(res.msg), "as for 1 byte");
                                nscaled++;
                            } else if (one_node_only && P > 1) {
                                /* refused on one rank per node, correct on one node */
                                kp_check_algo(a, &list[j], P, sizes[b], roots[r], ip, &res);
                                result(res.refused && res.refuse_code == KP_ERR_UNSUPPORTED,
                                       "%s %s P=%d bytes=%lld: one-node algorithm not refused on separate nodes: %s",
                                       collname(coll), name, P, (long long)sizes[b], res.msg);
                                kp_check_algo_on(a, &list[j], &one, P, sizes[b], roots[r], ip, &res);
                            } else {
                                kp_check_algo(a, &list[j], P, sizes[b], roots[r], ip, &res);
                                const int want = expected_rounds(coll, a->name, &list[j], P, sizes[b]);
                                if (want >= 0 && !res.refused)
                                    result(res.max_rounds == want,
                                           "%s %s P=%d bytes=%lld root=%d: %d rounds, the documentation says %d",
                                           collname(coll), name, P, (long long)sizes[b], roots[r], res.max_rounds,
                                           want);
                            }
                            if (sizes[b] == 1)
                                ok1 = res.ok && !res.refused;
                            result(res.ok && !res.refused, "%s %s P=%d bytes=%lld root=%d%s: %s: %s",
                                   collname(coll), name, P, (long long)sizes[b], roots[r], ip ? " in-place" : "",
                                   res.refused ? "refused" : "error", res.msg);
                        }
                    }
                kp_layout_free(&one);
            }
        }
        printf("%-8s %-20s %6ld checks, %ld failed\n", collname(coll), a->name, passed + failed - p0 - f0,
               failed - f0);
        if (!(a->params & (KP_PARAM_K | KP_PARAM_N | KP_PARAM_C)))
            continue;
        /* out-of-range parameters: through the registry (negative), and the
         * builder itself (negative or 0, which the registry would replace by
         * the default) */
        kp_params bad = {.k = a->params & KP_PARAM_K ? -1 : 0,
                         .n = a->params & KP_PARAM_N ? -1 : 0,
                         .C = a->params & KP_PARAM_C ? -1 : 0};
        kp_check_result res;
        kp_check_algo(a, &bad, 8, 8, 3, 0, &res);
        result(res.refused && res.refuse_code == KP_ERR_PARAM && res.msg[0],
               "%s %s with a negative parameter not refused with KP_ERR_PARAM: %s", collname(coll), a->name, res.msg);
        for (int v = -1; v <= 0; v++) {
            kp_params own = a->defaults;
            if (a->params & KP_PARAM_K)
                own.k = v;
            if (a->params & KP_PARAM_N)
                own.n = v;
            if (a->params & KP_PARAM_C)
                own.C = v;
            kp_sched s;
            kp_sched_init_coll(&s, coll, 3, 8, 8, 3, 0);
            int rc = a->build(&s, &own);
            result(rc == KP_ERR_PARAM && s.errmsg[0], "%s %s builder called with parameter %d returns %d, not "
                   "KP_ERR_PARAM: %s", collname(coll), a->name, v, rc, s.errmsg);
            kp_sched_free(&s);
        }
    }
}

/* ---- the checks can fail ------------------------------------------------------ */

static void expect_fail(const char *what, kp_sched *s, int P, const char *needle)
{
    kp_check_result res;
    for (int r = 0; r < P; r++)
        kp_sched_finish(&s[r]);
    kp_check_scheds(s, P, &res);
    result(!res.ok && strstr(res.msg, needle) != NULL, "negative test \"%s\": expected \"%s\", got ok=%d \"%s\"",
           what, needle, res.ok, res.msg);
    for (int r = 0; r < P; r++)
        kp_sched_free(&s[r]);
}

static void init(kp_sched *s, int coll, int P, int64_t bytes, int root)
{
    for (int r = 0; r < P; r++)
        kp_sched_init_coll(&s[r], coll, r, P, bytes, root, 0);
}

/* build every rank's schedule of a registered algorithm */
static void build(kp_sched *s, int coll, const char *name, const kp_params *prm, int P, int64_t bytes, int root)
{
    const kp_algo *a = kp_algo_find(coll, name);
    for (int r = 0; r < P; r++)
        if (!a || kp_algo_build_ex(a, prm, r, P, bytes, root, 0, &s[r]) != KP_SUCCESS)
            result(0, "negative tests: cannot build %s %s", collname(coll), name);
}

/* keep only the ops of rounds < `rounds` */
static void truncate_rounds(kp_sched *s, int rounds)
{
    int n = 0;
    while (n < s->nops && s->ops[n].round < rounds)
        n++;
    s->nops = n;
    s->nrounds = rounds < s->nrounds ? rounds : s->nrounds;
}

static void negative(void)
{
    kp_sched s[8];
    quiet_after = failed + 30;

    /* a "barrier" where rank 0 only signals and never waits */
    init(s, KP_COLL_BARRIER, 2, 0, 0);
    kp_sched_signal(&s[0], 1);
    kp_sched_wait_signal(&s[1], 0);
    expect_fail("rank 0 never waits", s, 2, "barrier: rank 0 may leave before rank 1 has entered");

    /* a chain of signals 0 -> 1 -> 2 -> 3: rank 3 has heard from everyone,
     * but rank 0 leaves at once */
    init(s, KP_COLL_BARRIER, 4, 0, 0);
    for (int r = 0; r < 4; r++) {
        if (r > 0)
            kp_sched_wait_signal(&s[r], r - 1);
        kp_sched_next_round(&s[r]);
        if (r < 3)
            kp_sched_signal(&s[r], r + 1);
    }
    expect_fail("a chain is not a barrier", s, 4, "barrier: rank 0 may leave");

    /* the dissemination barrier without its last round */
    build(s, KP_COLL_BARRIER, "dissemination", NULL, 5, 0, 0);
    for (int r = 0; r < 5; r++)
        truncate_rounds(&s[r], 2);
    expect_fail("dissemination without its last round", s, 5, "may leave before rank");

    /* n-way with its last round, yet one rank's skip is not mirrored: rank 0
     * drops its last signal while its peer still waits for it */
    const kp_params n2 = {.n = 2};
    build(s, KP_COLL_BARRIER, "nway_dissemination", &n2, 7, 0, 0);
    for (int i = s[0].nops - 1; i >= 0; i--)
        if (s[0].ops[i].kind == KP_OP_SEND) { /* rank 0's last signal */
            memmove(&s[0].ops[i], &s[0].ops[i + 1], (size_t)(s[0].nops - i - 1) * sizeof(kp_op));
            s[0].nops--;
            break;
        }
    expect_fail("asymmetric skip", s, 7, "deadlock");

    /* Direct gather, P = 4, k = 3: the root's receives of blocks 1 and 2 swapped */
    const kp_params k3 = {.k = 3};
    build(s, KP_COLL_GATHER, "direct", &k3, 4, 8, 0);
    int swapped = 0;
    for (int i = 0; i < s[0].nops; i++) {
        kp_op *op = &s[0].ops[i];
        if (op->kind == KP_OP_RECV && (op->u.recv.peer == 1 || op->u.recv.peer == 2)) {
            op->u.recv.dst.off = (3 - op->u.recv.peer) * 8;
            swapped++;
        }
    }
    result(swapped == 2, "negative tests: direct gather root has %d receives from ranks 1 and 2", swapped);
    expect_fail("gather block at the wrong place", s, 4, "holds block");

    /* binomial gather, P = 6, root = 3: the root's first receive lands one block off */
    build(s, KP_COLL_GATHER, "binomial", NULL, 6, 8, 3);
    for (int i = 0; i < s[3].nops; i++)
        if (s[3].ops[i].kind == KP_OP_RECV) {
            s[3].ops[i].u.recv.dst.off = (s[3].ops[i].u.recv.dst.off + 8) % 48;
            break;
        }
    expect_fail("binomial gather block one place off", s, 6, "rank 3: block");

    /* a non-root writing its (empty) receive buffer */
    init(s, KP_COLL_GATHER, 2, 8, 0);
    kp_sched_copy(&s[0], KP_BUF_SEND, 0, KP_BUF_RECV, 0, 8);
    kp_sched_recv(&s[0], 1, KP_BUF_RECV, 8, 8);
    kp_sched_copy(&s[1], KP_BUF_SEND, 0, KP_BUF_RECV, 8, 8);
    kp_sched_send(&s[1], 0, KP_BUF_SEND, 0, 8);
    expect_fail("non-root touches the receive buffer", s, 2, "outside the buffer");

    /* P = 3, root = 1: rank 0 (relative rank 2) sends its block to rank 2
     * (relative 1), which forwards blocks 2 and 0 in one message: at the
     * root they would have to wrap around the end of the receive buffer */
    init(s, KP_COLL_GATHER, 3, 8, 1);
    kp_sched_send(&s[0], 2, KP_BUF_SEND, 0, 8);
    kp_sched_need_scratch(&s[2], 16);
    kp_sched_copy(&s[2], KP_BUF_SEND, 0, KP_BUF_SCRATCH, 0, 8);
    kp_sched_recv(&s[2], 0, KP_BUF_SCRATCH, 8, 8);
    kp_sched_next_round(&s[2]);
    kp_sched_send(&s[2], 1, KP_BUF_SCRATCH, 0, 16);
    kp_sched_copy(&s[1], KP_BUF_SEND, 0, KP_BUF_RECV, 8, 8);
    kp_sched_recv(&s[1], 2, KP_BUF_RECV, 16, 16);
    expect_fail("unsplit wrap-around at the root", s, 3, "outside the buffer");
}

int main(void)
{
    sweep(KP_COLL_BARRIER);
    sweep(KP_COLL_GATHER);
    sweep(KP_COLL_ALLTOALL);
    negative();
    printf("(%ld of the passes for 7 and 4096 bytes are 1-byte runs scaled exactly)\n", nscaled);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed != 0;
}
