/*
 * Every allreduce algorithm of the registry through the checker, which
 * proves for reductions that every rank's result is each rank's input
 * exactly once, combined in rank order for a non-commutative operation,
 * and the same expression tree on every rank (kp_check_red_on).
 *
 * Sweep: P = 1..64 (KPORT_CHECK_PMAX), the algorithm's parameter k 1..8
 * (values that clamp to one already run are skipped), element counts
 * {1, P-1, P, 3P+1} of 8-byte elements, commutative and not, with and
 * without MPI_IN_PLACE; elements of 1, 4 and 16 bytes at the default
 * parameters; vectors long enough to pipeline (256 c + 3P + 1 elements:
 * shm_flat with chunk_kb = c = 1..8, two chunks and a short third, at P <=
 * 16 and P = 17, 25, ..., c = 1 and 5 there; the other algorithms c = 1);
 * node layouts for the
 * node algorithms: shm_flat on one node (and refused on two), smp with no
 * layout, one node, blocks of 2, 3 and P/2+1, cyclic over 2 and 3, uneven
 * nodes (1, 2, 3, 1, 2, 3, ...) and a random layout.
 *
 * What must hold: an algorithm that claims an operation passes the checker;
 * ring and rabenseifner refuse a non-commutative one (P > 1) with
 * KP_ERR_UNSUPPORTED, smp refuses it when some node's ranks are not
 * consecutive, shm_flat refuses a layout of several nodes; nothing else is
 * refused. Negative tests show the checker sees what matters here: swapped
 * operands of a non-commutative combine, a combine dropped, a combine done
 * twice, and partners that combine in opposite orders (same value for a
 * commutative operation, a different expression tree).
 */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"
#include "sweep.h"
#include "../unit/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- layouts ------------------------------------------------------------------ */

typedef struct {
    char name[48];
    int null;
    kp_layout L;
} layout;

static unsigned rnd(unsigned n) /* a fixed sequence: rand() after srand(37) in main */
{
    return (unsigned)rand() % n;
}

static void add(layout *ls, int *cnt, int P, const int *ids, const char *name)
{
    layout *l = &ls[(*cnt)++];
    memset(l, 0, sizeof(*l));
    snprintf(l->name, sizeof(l->name), "%s", name);
    if (!ids)
        l->null = 1;
    else if (kp_layout_init(&l->L, P, ids, 0)) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
}

/* the layouts smp runs on (shm_flat: "one node" and "blocks of 2") */
static int make_layouts(int P, layout *ls)
{
    int cnt = 0, ids[64];
    char name[48];
    add(ls, &cnt, P, NULL, "none");
    for (int r = 0; r < P; r++)
        ids[r] = 0;
    add(ls, &cnt, P, ids, "one node");
    const int blocks[] = {2, 3, P / 2 + 1};
    for (int b = 0; b < 3; b++) {
        if (b == 2 && (P / 2 + 1 <= 3 || P < 6))
            continue;
        for (int r = 0; r < P; r++)
            ids[r] = r / blocks[b];
        snprintf(name, sizeof(name), "blocks of %d", blocks[b]);
        add(ls, &cnt, P, ids, name);
    }
    for (int N = 2; N <= 3 && N < P; N++) {
        for (int r = 0; r < P; r++)
            ids[r] = r % N;
        snprintf(name, sizeof(name), "cyclic over %d", N);
        add(ls, &cnt, P, ids, name);
    }
    for (int r = 0, node = 0, left = 1; r < P; r++) {
        ids[r] = node;
        if (--left == 0)
            left = 1 + ++node % 3;
    }
    add(ls, &cnt, P, ids, "uneven 1,2,3,...");
    const unsigned N = 1 + rnd((unsigned)P);
    for (int r = 0; r < P; r++)
        ids[r] = (int)rnd(N);
    add(ls, &cnt, P, ids, "random");
    return cnt;
}

static void free_layouts(layout *ls, int cnt)
{
    for (int i = 0; i < cnt; i++)
        if (!ls[i].null)
            kp_layout_free(&ls[i].L);
}

static int consecutive(const kp_layout *L)
{
    if (!L)
        return 1;
    for (int n = 0; n < L->nnodes; n++)
        for (int l = 1; l < kp_layout_node_size(L, n); l++)
            if (kp_layout_rank(L, n, l) != kp_layout_rank(L, n, 0) + l)
                return 0;
    return 1;
}

/* ---- one check ------------------------------------------------------------------ */

static long nchecks;

/* the refusal the algorithm must give (0: none) */
static int expected_refusal(const kp_algo *a, const kp_layout *L, int P, int commute)
{
    const char *nm = a->name;
    if (!strcmp(nm, "shm_flat") && P > 1 && (!L || L->nnodes != 1))
        return KP_ERR_UNSUPPORTED;
    if (!commute && P > 1 && (!strcmp(nm, "ring") || !strcmp(nm, "rabenseifner")))
        return KP_ERR_UNSUPPORTED;
    if (!commute && !strcmp(nm, "smp") && !consecutive(L))
        return KP_ERR_UNSUPPORTED;
    return 0;
}

static void check_one(const kp_algo *a, const kp_params *prm, const layout *ly, int P, int64_t count, int64_t elem,
                      int commute, int inplace)
{
    const kp_layout *L = ly->null ? NULL : &ly->L;
    kp_check_result res;
    nchecks++;
    kp_check_red_on(a, prm, L, P, count * elem, 0, inplace, elem, commute, NULL, &res);
    const int want = expected_refusal(a, L, P, commute);
    char spec[96];
    kp_algo_format(a, prm, spec, sizeof(spec));
    if (want)
        CHECK(res.refused && res.refuse_code == want,
               "%s P=%d layout %s count=%lld elem=%lld commute=%d inplace=%d: must be refused (code %d), got %s%s",
               spec, P, ly->name, (long long)count, (long long)elem, commute, inplace, want,
               res.refused ? "refused: " : res.ok ? "accepted" : "", res.refused || !res.ok ? res.msg : "");
    else
        CHECK(res.ok && !res.refused, "%s P=%d layout %s count=%lld elem=%lld commute=%d inplace=%d: %s", spec, P,
               ly->name, (long long)count, (long long)elem, commute, inplace, res.msg);
}

/* the parameter values to sweep: k 1..8 with what clamps to a value already
 * run left out; shm_flat's chunk_kb 0..8; none */
static int param_values(const kp_algo *a, const kp_layout *L, int P, kp_params *out)
{
    int n = 0;
    if (a->params & KP_PARAM_CHUNK) { /* chunks of 1..8 KiB: the pipelined vector below */
        out[n++] = a->defaults;
        return n;
    }
    if (!(a->params & KP_PARAM_K)) {
        out[n++] = a->defaults;
        return n;
    }
    int last = 0;
    for (int k = 1; k <= 8; k++) {
        kp_params p = a->defaults, eff;
        p.k = k;
        kp_algo_effective(a, &p, L, P, &eff, NULL, 0);
        if (eff.k == last)
            continue;
        last = eff.k;
        out[n++] = p;
    }
    return n;
}

static void sweep_algo(const kp_algo *a, int P)
{
    layout ls[16];
    const int nl = make_layouts(P, ls);
    const int node = !strcmp(a->name, "smp"), shm = !strcmp(a->name, "shm_flat");
    const int64_t counts[4] = {1, P - 1, P, 3 * P + 1};
    for (int li = 0; li < nl; li++) {
        const layout *ly = &ls[li];
        const int lidx_ok = node || (shm ? (!strcmp(ly->name, "one node") || !strcmp(ly->name, "blocks of 2"))
                                         : ly->null);
        if (!lidx_ok)
            continue;
        kp_params prms[16];
        const int np = param_values(a, ly->null ? NULL : &ly->L, P, prms);
        const int full = !node || li < 3; /* smp: every parameter on the first layouts, the default elsewhere */
        for (int pi = 0; pi < np; pi++) {
            if (!full && pi > 0)
                continue;
            for (int ci = 0; ci < 4; ci++) {
                if (counts[ci] == 0 || (ci > 0 && counts[ci] == counts[ci - 1]))
                    continue;
                for (int v = 0; v < 4; v++)
                    check_one(a, &prms[pi], ly, P, counts[ci], 8, v & 1, v >> 1);
            }
        }
        /* element sizes, default parameters */
        kp_params def = a->defaults;
        const int64_t elems[3] = {1, 4, 16};
        for (int ei = 0; ei < 3; ei++)
            for (int ci = 0; ci < 4; ci += 3)
                for (int v = 0; v < 4; v++)
                    check_one(a, &def, ly, P, counts[ci] ? counts[ci] : 1, elems[ei], v & 1, v >> 1);
        /* long enough to pipeline: shm_flat in chunks of 1..8 KiB (P <= 16 and
         * a few above, the others at every 8th), with a short last chunk */
        if (P <= 16 || P % 8 == 1) {
            kp_params pipe = a->defaults;
            for (int c = 1; c <= (shm ? 8 : 1); c++) {
                if (shm && P > 16 && c % 4 != 1)
                    continue;
                pipe.chunk_kb = shm ? c : pipe.chunk_kb;
                for (int v = 0; v < 4; v++)
                    check_one(a, &pipe, ly, P, 256 * c + 3 * (int64_t)P + 1, 8, v & 1, v >> 1);
            }
        }
    }
    free_layouts(ls, nl);
}

/* ---- negative tests ---------------------------------------------------------- */

static kp_sched scheds[64];

static int build_all(const char *name, int P, int64_t count, int commute)
{
    const kp_algo *a = kp_algo_find(KP_COLL_ALLREDUCE, name);
    if (!a)
        return -1;
    for (int r = 0; r < P; r++)
        if (kp_algo_build_red_on(a, NULL, NULL, r, P, count * 8, 0, 0, 8, commute, NULL, &scheds[r]) != KP_SUCCESS)
            return -1;
    return 0;
}

static void free_all(int P)
{
    for (int r = 0; r < P; r++)
        kp_sched_free(&scheds[r]);
}

/* the index of rank r's first (nth) reduce, -1 if none */
static int nth_reduce(const kp_sched *s, int nth)
{
    for (int i = 0; i < s->nops; i++)
        if (s->ops[i].kind == KP_OP_REDUCE && nth-- == 0)
            return i;
    return -1;
}

/* exchange the operands of rank r's nth combine */
static void swap_operands(int r, int nth)
{
    kp_op *op = &scheds[r].ops[nth_reduce(&scheds[r], nth)];
    const kp_region t = op->u.reduce.a;
    op->u.reduce.a = op->u.reduce.b;
    op->u.reduce.b = t;
}

static void expect_fail(const char *what, int P)
{
    kp_check_result res;
    kp_check_scheds(scheds, P, &res);
    CHECK(!res.ok, "negative test \"%s\" passed the checker", what);
    if (!res.ok && getenv("KPORT_TEST_VERBOSE"))
        fprintf(stderr, "  %s: %s\n", what, res.msg);
}

static void negative_tests(void)
{
    kp_check_result res;
    /* the unmodified schedules pass */
    if (build_all("recursive_doubling", 4, 5, 0) == 0) {
        kp_check_scheds(scheds, 4, &res);
        CHECK(res.ok, "recursive_doubling P=4 non-commutative, unmodified: %s", res.msg);
        free_all(4);
    }
    /* swapped operands of a non-commutative combine (rank 1's first) */
    if (build_all("recursive_doubling", 4, 5, 0) == 0) {
        swap_operands(1, 0);
        expect_fail("swapped operands, non-commutative", 4);
        free_all(4);
    }
    /* partners combining in opposite orders: same value for a commutative
     * operation, but not the same expression on both (rank 0 swapped only) */
    if (build_all("recursive_doubling", 2, 5, 1) == 0) {
        swap_operands(0, 0);
        kp_check_scheds(scheds, 2, &res);
        /* combine(x, y) == combine(y, x) for commutative ops: this one is
         * the same tree, and must pass */
        CHECK(res.ok, "commutative swap at P=2 is the same tree and must pass: %s", res.msg);
        free_all(2);
    }
    if (build_all("recursive_doubling", 4, 5, 1) == 0) {
        /* rank 0's second combine ((x0 x1) (x2 x3)) left out: its result
         * lacks x2 and x3 */
        const int i = nth_reduce(&scheds[0], 1);
        memmove(&scheds[0].ops[i], &scheds[0].ops[i + 1], sizeof(kp_op) * (size_t)(scheds[0].nops - i - 1));
        scheds[0].nops--;
        expect_fail("a combine dropped", 4);
        free_all(4);
    }
    if (build_all("ring", 3, 7, 1) == 0) {
        /* a combine done twice: rank 2's first combine repeated in the next
         * round of its own (the input counted twice) */
        kp_sched *s = &scheds[2];
        const int i = nth_reduce(s, 0);
        kp_op dup = s->ops[i];
        dup.u.reduce.a = dup.u.reduce.dst; /* dst = dst (op) own input again */
        if (s->nops + 1 > s->cap) {
            kp_op *grown = realloc(s->ops, sizeof(kp_op) * (size_t)(s->nops + 1));
            if (!grown) {
                fprintf(stderr, "out of memory\n");
                exit(1);
            }
            s->ops = grown;
            s->cap = s->nops + 1;
        }
        memmove(&s->ops[i + 1], &s->ops[i], sizeof(kp_op) * (size_t)(s->nops - i));
        s->nops++;
        for (int j = i + 1; j < s->nops; j++)
            s->ops[j].round++;
        s->ops[i + 1] = dup;
        s->ops[i + 1].round = s->ops[i].round + 1;
        s->nrounds++;
        expect_fail("a combine done twice", 3);
        free_all(3);
    }
    /* a tree that differs between ranks although each holds every input
     * once: rank 0 of recursive_multiplying k=2 at P=3 combines (x0 (x1 x2))
     * instead of ((x0 x1) x2) by swapping its chain */
    if (build_all("recursive_multiplying", 3, 4, 1) == 0) {
        kp_sched *s = &scheds[1];
        const int i0 = nth_reduce(s, 0), i1 = nth_reduce(s, 1);
        if (i0 >= 0 && i1 >= 0) {
            /* rank 1 (subgroup 1): acc = s0 (op) mine -> out; out (op) s2 -> out.
             * Make it mine (op) s2 -> out; s0 (op) out -> out: x0 (x1 x2) */
            kp_op *a = &s->ops[i0], *b = &s->ops[i1];
            const kp_region s0 = a->u.reduce.a, mine = a->u.reduce.b, s2 = b->u.reduce.b, out = a->u.reduce.dst;
            a->u.reduce.a = mine, a->u.reduce.b = s2;
            b->u.reduce.a = s0, b->u.reduce.b = out;
            (void)out;
            expect_fail("rank 1 associates differently (x0 (x1 x2))", 3);
        } else {
            CHECK(0, "recursive_multiplying P=3 k=2: rank 1 should combine twice");
        }
        free_all(3);
    }
}

int main(void)
{
    const int pmax = sweep_pmax();
    srand(37);
    negative_tests();
    for (int i = 0; i < kp_algo_count(KP_COLL_ALLREDUCE); i++) {
        const kp_algo *a = kp_algo_at(KP_COLL_ALLREDUCE, i);
        const clock_t t0 = clock();
        for (int P = 1; P <= pmax; P++)
            sweep_algo(a, P);
        printf("%s: %ld algorithm checks so far, %ld failures (%.1f s)\n", a->name, nchecks, fails,
               (double)(clock() - t0) / CLOCKS_PER_SEC);
    }
    CHECK(kp_algo_count(KP_COLL_ALLREDUCE) >= 6, "the registry has %d allreduce algorithms, expected 6",
           kp_algo_count(KP_COLL_ALLREDUCE));
    printf("check_allreduce: %ld checks, %ld failed (%ld algorithm checks, P = 1..%d)\n", checks, fails, nchecks,
           pmax);
    return fails ? 1 : 0;
}
