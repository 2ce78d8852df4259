/*
 * Every broadcast and scatter algorithm of the registry through the checker
 * (src/sched/check.c proves the final contents: every rank's receive buffer
 * holds the root's message, resp. its own block of the root's send buffer,
 * and the root's data is unchanged):
 *  - sweep 1: every P 1..64 (KPORT_CHECK_PMAX), every k in 1..8 (chunk_kb
 *    0, 1, 2 for the chunked ones), bytes 1, 7 and 1000, every root for
 *    P <= 8 and roots 0, 1, P/2, P-1 above, with and without MPI_IN_PLACE
 *    (scatter: the root's block stays in its send buffer), node layouts
 *    (none, blocks of 3, 3 nodes cyclic, uneven nodes of 1, 3, 2 ranks, all
 *    on one node) for the SMP and shared-memory ones;
 *  - sweep 2: bytes 8 and 65539 (pipelined in chunks) for P up to 17 and
 *    31..33, 64, roots 0 and P-1, k 1, 2, 3;
 *  - sweep 3: 300001 bytes (chunks beyond the node broadcast's ring of
 *    slots) for P = 2..5 and 8;
 *  - refusals: one-node algorithms on several nodes, single copy without
 *    cross-memory attach, a root out of range, parameters out of range;
 *  - negative tests: mutilated schedules the checker must reject (a block
 *    at the wrong place, a reader that skips its last chunk, a writer that
 *    leaves before its readers have entered).
 */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"
#include "sweep.h"

#include "../unit/check.h"

#include <stdio.h>
#include <string.h>

/* ---- node layouts ------------------------------------------------------------ */

enum { LAY_NONE, LAY_BLOCK, LAY_CYCLIC, LAY_UNEVEN, LAY_ONE, NLAY };
static const char *layname[NLAY] = {"none", "block3", "cyclic3", "uneven", "one-node"};

/* layout kind `kind` for P ranks into L; returns 0 for LAY_NONE (no layout) */
static int make_layout(kp_layout *L, int kind, int P, int cma)
{
    int id[64];
    static const int uneven[3] = {1, 3, 2};
    for (int r = 0, node = 0, left = uneven[0]; r < P; r++) {
        switch (kind) {
        case LAY_BLOCK: id[r] = r / 3; break;
        case LAY_CYCLIC: id[r] = r % 3; break;
        case LAY_ONE: id[r] = 0; break;
        default:
            if (left == 0)
                left = uneven[++node % 3];
            id[r] = node;
            left--;
        }
    }
    if (kind == LAY_NONE)
        return 0;
    kp_layout_init(L, P, id, cma);
    return 1;
}

/* ---- one check -------------------------------------------------------------------- */

static const char *collname(int coll) { return coll == KP_COLL_BCAST ? "bcast" : "scatter"; }

static void check_one(const kp_algo *a, const kp_params *prm, int lay, int P, int64_t bytes, int root, int inplace)
{
    kp_layout L;
    const int has = make_layout(&L, lay, P, 1);
    const int one_node = !strncmp(a->name, "shm_", 4);
    kp_check_result res;
    char name[96];
    kp_algo_format(a, prm, name, sizeof(name));
    kp_check_algo_on(a, prm, has ? &L : NULL, P, bytes, root, inplace, &res);
    const int nodes = has ? L.nnodes : P;
    if (one_node && nodes > 1)
        CHECK(res.refused && res.refuse_code == KP_ERR_UNSUPPORTED,
               "%s %s P=%d layout %s: one-node algorithm not refused on %d nodes: %s", collname(a->coll), name, P,
               layname[lay], nodes, res.msg);
    else
        CHECK(res.ok && !res.refused, "%s %s P=%d bytes=%lld root=%d layout %s%s: %s: %s", collname(a->coll), name,
               P, (long long)bytes, root, layname[lay], inplace ? " in-place" : "",
               res.refused ? "refused" : "error", res.msg);
    if (has)
        kp_layout_free(&L);
}

/* the parameter sets of algorithm a: k = 1..kmax, or chunk_kb 0, 1, 2 */
static int param_list(const kp_algo *a, int kmax, kp_params *list)
{
    int n = 0;
    if (a->params & KP_PARAM_K)
        for (int v = 1; v <= kmax; v++)
            list[n++] = (kp_params){.k = v};
    if (a->params & KP_PARAM_CHUNK)
        for (int c = n ? 1 : 0; c <= 2; c++)
            list[n++] = (kp_params){.k = a->params & KP_PARAM_K ? 2 : 0, .chunk_kb = c};
    if (n == 0)
        list[n++] = (kp_params){0};
    return n;
}

static int is_node_alg(const kp_algo *a) { return kp_algo_is_node(a); }

static void sweep_algo(const kp_algo *a, const int *Ps, int nP, const int64_t *sizes, int nsizes, int kmax,
                       int all_roots_upto)
{
    kp_params list[16];
    const int np = param_list(a, kmax, list);
    const int nip = a->coll == KP_COLL_SCATTER ? 2 : 1;
    for (int pi = 0; pi < nP; pi++) {
        const int P = Ps[pi];
        int roots[64], nroots = 0;
        if (P <= all_roots_upto)
            for (int r = 0; r < P; r++)
                roots[nroots++] = r;
        else { /* 0, P-1 (and 1, P/2 in the first sweep), each once */
            const int cand[4] = {0, P - 1, 1, P / 2};
            for (int c = 0; c < (all_roots_upto > 0 ? 4 : 2); c++) {
                int seen = 0;
                for (int x = 0; x < nroots; x++)
                    seen |= roots[x] == cand[c];
                if (!seen)
                    roots[nroots++] = cand[c];
            }
        }
        for (int lay = 0; lay < NLAY; lay++) {
            if (!is_node_alg(a) && lay != LAY_NONE)
                continue;
            for (int j = 0; j < np; j++)
                for (int b = 0; b < nsizes; b++)
                    for (int r = 0; r < nroots; r++)
                        for (int ip = 0; ip < nip; ip++)
                            check_one(a, &list[j], lay, P, sizes[b], roots[r], ip);
        }
    }
}

static void sweeps(int coll)
{
    const int pmax = sweep_pmax();
    int all[64], n_all = 0, mid[64], n_mid = 0, few[8], n_few = 0;
    for (int P = 1; P <= pmax; P++) {
        all[n_all++] = P;
        if (P <= 17 || (P >= 31 && P <= 33) || P == 64)
            mid[n_mid++] = P;
    }
    static const int few_cand[5] = {2, 3, 4, 5, 8};
    for (int i = 0; i < 5; i++)
        if (few_cand[i] <= pmax)
            few[n_few++] = few_cand[i];
    static const int64_t small[3] = {1, 7, 1000}, medium[2] = {8, 65539}, large[1] = {300001};
    for (int i = 0; i < kp_algo_count(coll); i++) {
        const kp_algo *a = kp_algo_at(coll, i);
        const long c0 = checks, f0 = fails;
        sweep_algo(a, all, n_all, small, 3, 8, 8);
        sweep_algo(a, mid, n_mid, medium, 2, 3, 0);
        sweep_algo(a, few, n_few, large, 1, 2, -1);
        printf("%-8s %-20s %7ld checks, %ld failed\n", collname(coll), a->name, checks - c0, fails - f0);
    }
}

/* ---- refusals ----------------------------------------------------------------------- */

static void refusals(int coll)
{
    for (int i = 0; i < kp_algo_count(coll); i++) {
        const kp_algo *a = kp_algo_at(coll, i);
        kp_check_result res;
        /* a root that is not a rank */
        for (int root = -1; root <= 8; root += 9) {
            kp_layout L;
            make_layout(&L, LAY_ONE, 8, 1);
            kp_check_algo_on(a, NULL, &L, 8, 8, root, 0, &res);
            CHECK(res.refused && res.refuse_code == KP_ERR_ARG && res.msg[0],
                   "%s %s with root %d of 8 ranks not refused with KP_ERR_ARG: %s", collname(coll), a->name, root,
                   res.msg);
            kp_layout_free(&L);
        }
        if (!strcmp(a->name, "shm_single_copy")) { /* no cross-memory attach */
            kp_layout L;
            make_layout(&L, LAY_ONE, 4, 0);
            kp_check_algo_on(a, NULL, &L, 4, 8, 0, 0, &res);
            CHECK(res.refused && res.refuse_code == KP_ERR_UNSUPPORTED,
                   "%s shm_single_copy without cross-memory attach not refused: %s", collname(coll), res.msg);
            kp_layout_free(&L);
        }
        if (!(a->params & KP_PARAM_K))
            continue;
        kp_params bad = {.k = -1};
        kp_check_algo(a, &bad, 8, 8, 3, 0, &res);
        CHECK(res.refused && res.refuse_code == KP_ERR_PARAM && res.msg[0],
               "%s %s with k = -1 not refused with KP_ERR_PARAM: %s", collname(coll), a->name, res.msg);
        for (int v = -1; v <= 0; v++) {
            kp_params own = a->defaults;
            own.k = v;
            kp_sched s;
            kp_sched_init_coll(&s, coll, 3, 8, 8, 3, 0);
            const int rc = a->build(&s, &own);
            CHECK(rc == KP_ERR_PARAM && s.errmsg[0], "%s %s builder called with k = %d returns %d, not KP_ERR_PARAM",
                   collname(coll), a->name, v, rc);
            kp_sched_free(&s);
        }
    }
}

/* ---- the checks can fail --------------------------------------------------------------- */

/* build every rank's schedule of a registered algorithm on layout L */
static void build(kp_sched *s, int coll, const char *name, const kp_params *prm, const kp_layout *L, int P,
                  int64_t bytes, int root)
{
    const kp_algo *a = kp_algo_find(coll, name);
    for (int r = 0; r < P; r++)
        if (!a || kp_algo_build_on(a, prm, L, r, P, bytes, root, 0, &s[r]) != KP_SUCCESS)
            CHECK(0, "negative tests: cannot build %s %s", collname(coll), name);
}

static void expect_fail(const char *what, kp_sched *s, int P)
{
    kp_check_result res;
    kp_check_scheds(s, P, &res);
    CHECK(!res.ok, "negative test \"%s\": the checker passed it", what);
    for (int r = 0; r < P; r++)
        kp_sched_free(&s[r]);
}

/* remove operation i of s */
static void drop_op(kp_sched *s, int i)
{
    memmove(&s->ops[i], &s->ops[i + 1], (size_t)(s->nops - i - 1) * sizeof(kp_op));
    s->nops--;
}

static void negative(void)
{
    kp_sched s[8];
    kp_layout L;
    make_layout(&L, LAY_ONE, 4, 1);

    /* k-nomial broadcast: rank 5 receives one byte off */
    const kp_params k2 = {.k = 2};
    build(s, KP_COLL_BCAST, "knomial", &k2, NULL, 8, 16, 0);
    for (int i = 0; i < s[5].nops; i++)
        if (s[5].ops[i].kind == KP_OP_RECV)
            s[5].ops[i].u.recv.dst.off = 1, s[5].ops[i].u.recv.dst.len = 15;
    for (int i = 0; i < s[3].nops; i++) /* its parent 3 sends 15 bytes to match */
        if (s[3].ops[i].kind == KP_OP_SEND && s[3].ops[i].u.send.peer == 5)
            s[3].ops[i].u.send.src.len = 15;
    expect_fail("bcast knomial: a receive one byte off", s, 8);

    /* direct scatter: the root sends rank 2 the block of rank 1 */
    build(s, KP_COLL_SCATTER, "direct", &k2, NULL, 4, 8, 0);
    for (int i = 0; i < s[0].nops; i++)
        if (s[0].ops[i].kind == KP_OP_SEND && s[0].ops[i].u.send.peer == 2)
            s[0].ops[i].u.send.src.off = 8;
    expect_fail("scatter direct: a wrong block", s, 4);

    /* shm_flat broadcast of 3 chunks: a reader skips copying the last one */
    const kp_params c1 = {.chunk_kb = 1};
    build(s, KP_COLL_BCAST, "shm_flat", &c1, &L, 4, 3000, 1);
    for (int i = s[2].nops - 1; i >= 0; i--)
        if (s[2].ops[i].kind == KP_OP_COPY) {
            drop_op(&s[2], i);
            break;
        }
    expect_fail("bcast shm_flat: a reader skips its last chunk", s, 4);

    /* shm_flat broadcast: the root does not wait for its readers' entry
     * (the node fence): a reader of call c may still read the slot the
     * root overwrites in call c + 2 */
    build(s, KP_COLL_BCAST, "shm_flat", &c1, &L, 4, 3000, 1);
    for (int i = s[1].nops - 1; i >= 0; i--)
        if (s[1].ops[i].kind == KP_OP_WAIT)
            drop_op(&s[1], i);
    expect_fail("bcast shm_flat: the root leaves without the node fence", s, 4);

    /* smp scatter on one node: a reader copies its block before the root's post */
    build(s, KP_COLL_SCATTER, "smp", NULL, &L, 4, 64, 0);
    for (int i = 0; i < s[3].nops; i++)
        if (s[3].ops[i].kind == KP_OP_WAIT)
            s[3].ops[i].kind = KP_OP_POST, s[3].ops[i].u.post.n = 2, s[3].ops[i].u.post.line = 0;
    expect_fail("scatter smp: a reader does not wait for the root", s, 4);
    kp_layout_free(&L);
}

int main(void)
{
    sweeps(KP_COLL_BCAST);
    sweeps(KP_COLL_SCATTER);
    refusals(KP_COLL_BCAST);
    refusals(KP_COLL_SCATTER);
    negative();
    printf("%ld checks, %ld failed\n", checks, fails);
    return fails != 0;
}
