/*
 * Every reduce, reduce_scatter_block and reduce_scatter algorithm of the
 * registry through the checker, which proves each result element is every
 * rank's input combined exactly once (in rank order for a non-commutative
 * operation), with no read of a half-reduced value (src/sched/check_red.c).
 *
 * Sweep: P = 1 .. sweep_pmax(); k = 1..8 (chunk_kb 0 and 1 for shm_flat's
 * pipelining); element sizes 1, 4, 8, 16 bytes; counts (elements per rank's
 * vector, or per block) 1, P-1, P, 3P+1 and a large one; reduce_scatter
 * with random counts per rank, zeros included; every root for P <= 8 and
 * roots 0, 1, P/2, P-1 above; commutative and not; in place and not; node
 * layouts: every rank its own node, one node, blocks of 2 and 3, cyclic
 * over 3 nodes (ranks of a node not consecutive) and uneven nodes (1, 2, 3,
 * 1, 2, 3, ... ranks). For P > 16 the combinations are thinned (each k,
 * element size, count, commutativity and in-place value still appears for
 * every P) and reduce-scatter's blocks hold at most 8 elements.
 *
 * Expected: a pass, except where the algorithm documents a refusal, which
 * must then be a clean KP_ERR_UNSUPPORTED on every rank: rabenseifner,
 * recursive_halving and kport with a non-commutative operation; smp with a
 * non-commutative one on a layout whose nodes hold non-consecutive ranks;
 * shm_flat on more than one node. Parameters out of range are refused with
 * KP_ERR_PARAM. The knomial reduce's rounds are checked against its
 * documented step count.
 *
 * Negative tests show the checks can fail for reductions: a hand-built
 * reduce that combines out of rank order with a non-commutative operation,
 * and one that counts a rank twice.
 */
#include "kport.h"
#include "algo/algo.h"
#include "algo/reduce/red_common.h"
#include "sched/check.h"
#include "sweep.h"
#include "../unit/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long refused_ok;

/* ---- layouts ------------------------------------------------------------------ */

enum { LAY_NONE, LAY_ONE, LAY_BLOCK2, LAY_BLOCK3, LAY_CYCLIC3, LAY_UNEVEN, NLAY };
static const char *layname[NLAY] = {"separate", "one-node", "block2", "block3", "cyclic3", "uneven"};

/* builds layout `which` for P ranks into L; returns L, or NULL for LAY_NONE */
static const kp_layout *make_layout(int which, int P, kp_layout *L)
{
    int ids[64];
    if (which == LAY_NONE)
        return NULL;
    for (int r = 0, n = 0, left = 1; r < P; r++) {
        switch (which) {
        case LAY_ONE: ids[r] = 0; break;
        case LAY_BLOCK2: ids[r] = r / 2; break;
        case LAY_BLOCK3: ids[r] = r / 3; break;
        case LAY_CYCLIC3: ids[r] = r % 3; break;
        default: /* uneven: node sizes 1, 2, 3, 1, 2, 3, ... */
            ids[r] = n;
            if (--left == 0) {
                n++;
                left = n % 3 + 1;
            }
        }
    }
    kp_layout_init(L, P, ids, 1);
    return L;
}

static int consecutive(const kp_layout *L)
{
    const kp_smp v = {L, L ? L->P : 0};
    return kp_red_nodes_consecutive(&v);
}

/* ---- what an algorithm promises ------------------------------------------------- */

static int needs_commute(const kp_algo *a)
{
    return !strcmp(a->name, "rabenseifner") || !strcmp(a->name, "recursive_halving") || !strcmp(a->name, "kport");
}

/* 1 when the algorithm documents a refusal for this shape */
static int must_refuse(const kp_algo *a, const kp_layout *L, int P, int commute)
{
    if (!strncmp(a->name, "shm_", 4) && P > 1 && (!L || L->nnodes > 1))
        return 1;
    if (!commute && needs_commute(a))
        return 1;
    if (!commute && !strcmp(a->name, "smp") && !consecutive(L))
        return 1;
    return 0;
}

/* the layouts each algorithm runs on */
static int uses_layout(const kp_algo *a, int lay)
{
    if (!strncmp(a->name, "shm_", 4))
        return lay == LAY_NONE || lay == LAY_ONE;
    if (!strcmp(a->name, "smp"))
        return 1;
    return lay == LAY_NONE;
}

static const char *collname(int coll)
{
    return coll == KP_COLL_REDUCE ? "reduce" : coll == KP_COLL_REDUCE_SCATTER_BLOCK ? "rsb" : "rs";
}

/* ---- one check -------------------------------------------------------------------- */

static unsigned rng_state = 12345u;
static unsigned rnd(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return rng_state >> 16;
}

static void one(int coll, const kp_algo *a, const kp_params *prm, int lay, int P, int64_t elem, int64_t count,
                int root, int commute, int inplace)
{
    kp_layout Lbuf;
    const kp_layout *L = make_layout(lay, P, &Lbuf);
    int64_t off[65];
    int64_t bytes = count * elem;
    const int64_t *bo = NULL;
    if (coll == KP_COLL_REDUCE_SCATTER) { /* random counts per rank, zeros included */
        off[0] = 0;
        for (int r = 0; r < P; r++)
            off[r + 1] = off[r] + (rnd() % 4 == 0 ? 0 : (int64_t)(rnd() % (unsigned)(count + 1))) * elem;
        bytes = off[P];
        bo = off;
    }
    kp_check_result res;
    kp_check_red_on(a, prm, L, P, bytes, root, inplace, elem, commute, bo, &res);
    char name[64];
    kp_algo_format(a, prm, name, sizeof(name));
    const int refuse = must_refuse(a, L, P, commute);
    if (refuse) {
        CHECK(res.refused && res.refuse_code == KP_ERR_UNSUPPORTED,
               "%s %s P=%d %s elem=%lld count=%lld root=%d commute=%d%s: a documented refusal did not happen: %s",
               collname(coll), name, P, layname[lay], (long long)elem, (long long)count, root, commute,
               inplace ? " in-place" : "", res.ok ? "passed" : res.msg);
        refused_ok += res.refused != 0;
    } else {
        CHECK(res.ok && !res.refused, "%s %s P=%d %s elem=%lld count=%lld bytes=%lld root=%d commute=%d%s: %s: %s",
               collname(coll), name, P, layname[lay], (long long)elem, (long long)count, (long long)bytes, root,
               commute, inplace ? " in-place" : "", res.refused ? "refused" : "error", res.msg);
        if (coll == KP_COLL_REDUCE && !strcmp(a->name, "knomial") && res.ok && bytes > 0 && P > 1 &&
            (commute || root == 0)) {
            /* s = ceil(log_{k+1} P) steps: one receive round and k combine rounds at most per step */
            const int st = kp_knom_nsteps(P, prm->k < P - 1 ? prm->k : P - 1);
            const int kk = prm->k < P - 1 ? prm->k : P - 1;
            CHECK(res.max_rounds <= st * (kk + 1) + 1 && res.max_rounds >= st,
                   "reduce %s P=%d: %d rounds, the documentation says %d steps of at most %d rounds", name, P,
                   res.max_rounds, st, kk + 1);
        }
    }
    if (L)
        kp_layout_free(&Lbuf);
}

static void sweep(int coll)
{
    static const int64_t elems[4] = {1, 4, 8, 16};
    const int pmax = sweep_pmax();
    for (int i = 0; i < kp_algo_count(coll); i++) {
        const kp_algo *a = kp_algo_at(coll, i);
        const long c0 = checks, f0 = fails;
        kp_params list[8];
        int n = 0;
        if (a->params & KP_PARAM_K)
            for (int v = 1; v <= 8; v++)
                list[n++] = (kp_params){.k = v};
        else if (a->params & KP_PARAM_CHUNK)
            for (int v = 0; v <= 1; v++)
                list[n++] = (kp_params){.chunk_kb = v};
        else
            list[n++] = (kp_params){0};
        for (int P = 1; P <= pmax; P++) {
            const int thin = P > 16;
            const int64_t large = coll == KP_COLL_REDUCE ? 700 : P <= 16 ? 97 : 9;
            int64_t counts[5] = {1, P - 1, P, 3 * P + 1, large};
            /* reduce-scatter's vectors are P blocks: above P = 16 blocks of at most
             * 8 elements keep the sweep's time linear in P (the checker works per
             * element; each count is still a different shape per P) */
            for (int c = 0; c < 5 && coll != KP_COLL_REDUCE && thin; c++)
                counts[c] = counts[c] < 8 ? counts[c] : 2 + (counts[c] + c) % 7;
            int roots[64], nroots = 0;
            if (coll != KP_COLL_REDUCE)
                roots[nroots++] = 0;
            else if (P <= 8)
                for (int r = 0; r < P; r++)
                    roots[nroots++] = r;
            else {
                const int cand[4] = {0, 1, P / 2, P - 1};
                for (int c = 0; c < 4; c++)
                    roots[nroots++] = cand[c];
            }
            for (int lay = 0; lay < NLAY; lay++) {
                if (!uses_layout(a, lay))
                    continue;
                for (int j = 0; j < n; j++)
                    for (int c = 0; c < 5; c++)
                        for (int e = 0; e < 4; e++)
                            for (int cm = 0; cm < 2; cm++)
                                for (int ip = 0; ip < 2; ip++)
                                    for (int r = 0; r < nroots; r++) {
                                        /* thinning: one element size and in-place value per (k, count)
                                         * above P = 16, and for layouts other than the first */
                                        const int key = j + c + P + lay;
                                        if ((thin || lay > 1 || P > 8) && (e != key % 4 || ip != (key / 4 + cm) % 2))
                                            continue;
                                        if (thin && r != (j + c) % nroots)
                                            continue;
                                        one(coll, a, &list[j], lay, P, elems[e], counts[c], roots[r], cm, ip);
                                    }
            }
        }
        printf("%-7s %-18s %7ld checks, %ld failed\n", collname(coll), a->name, checks - c0,
               fails - f0);
        fflush(stdout);
        /* out-of-range parameters */
        if (a->params & KP_PARAM_K) {
            kp_sched s;
            kp_params bad = {.k = -1};
            int rc = kp_algo_build_red_on(a, &bad, NULL, 0, 4, 64, 0, 0, 4, 1, NULL, &s);
            CHECK(rc == KP_ERR_PARAM, "%s %s k=-1: not refused with KP_ERR_PARAM (%d)", collname(coll), a->name, rc);
            kp_sched_free(&s);
            kp_sched_init_coll(&s, coll, 0, 4, 64, 0, 0);
            kp_sched_set_reduction(&s, 4, 1, NULL);
            bad.k = 0;
            rc = a->build(&s, &bad);
            CHECK(rc == KP_ERR_PARAM, "%s %s builder with k=0: not refused with KP_ERR_PARAM (%d)", collname(coll),
                   a->name, rc);
            kp_sched_free(&s);
        }
        if (coll == KP_COLL_REDUCE) { /* a root that is not a rank */
            kp_sched s;
            kp_layout one1;
            int zeros[4] = {0};
            kp_layout_init(&one1, 4, zeros, 1);
            int rc = kp_algo_build_red_on(a, NULL, &one1, 0, 4, 64, 4, 0, 4, 1, NULL, &s);
            CHECK(rc == KP_ERR_ARG, "reduce %s root=4 of P=4: not refused with KP_ERR_ARG (%d)", a->name, rc);
            kp_sched_free(&s);
            kp_layout_free(&one1);
        }
    }
}

/* ---- negative tests --------------------------------------------------------------- */

/* a reduce of one element at P = 3, root 0: rank 0 receives x1 and x2 and
 * combines (x0 op x2) op x1 -- right for a commutative operation, out of
 * rank order otherwise; `twice`: it combines x1 twice and never x2 */
static void bad_reduce(int commute, int twice, kp_check_result *res)
{
    kp_sched sc[3];
    for (int r = 0; r < 3; r++) {
        kp_sched_init_coll(&sc[r], KP_COLL_REDUCE, r, 3, 4, 0, 0);
        kp_sched_set_reduction(&sc[r], 4, commute, NULL);
        if (r > 0) {
            kp_sched_send(&sc[r], 0, KP_BUF_SEND, 0, 4);
        } else {
            kp_sched_need_scratch(&sc[r], 8);
            kp_sched_recv(&sc[r], 1, KP_BUF_SCRATCH, 0, 4);
            kp_sched_recv(&sc[r], 2, KP_BUF_SCRATCH, 4, 4);
            kp_sched_next_round(&sc[r]);
            kp_sched_reduce(&sc[r], KP_BUF_SEND, 0, KP_BUF_SCRATCH, twice ? 0 : 4, KP_BUF_RECV, 0, 4);
            kp_sched_next_round(&sc[r]);
            kp_sched_reduce(&sc[r], KP_BUF_RECV, 0, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, 4);
        }
        kp_sched_finish(&sc[r]);
    }
    kp_check_scheds(sc, 3, res);
    for (int r = 0; r < 3; r++)
        kp_sched_free(&sc[r]);
}

static void negative(void)
{
    kp_check_result res;
    bad_reduce(1, 0, &res);
    CHECK(res.ok, "negative: (x0 op x2) op x1 with a commutative op must pass: %s", res.msg);
    bad_reduce(0, 0, &res);
    CHECK(!res.ok, "negative: (x0 op x2) op x1 with a non-commutative op passed");
    bad_reduce(1, 1, &res);
    CHECK(!res.ok, "negative: x1 combined twice, x2 never, passed");
    /* the tree helpers agree with their definition */
    for (int k = 1; k <= 8; k++)
        for (int size = 1; size <= 200; size++) {
            int seen[200] = {0};
            seen[0] = 1;
            for (int rel = 1; rel < size; rel++) {
                const int par = kp_knom_parent(rel, k), st = kp_knom_send_step(rel, k);
                int found = 0;
                for (int j = 1; j <= k; j++)
                    found += kp_knom_child(par, size, k, st, j) == rel;
                CHECK(par >= 0 && par < rel && found == 1 && st < kp_knom_nsteps(size, k),
                       "knomial k=%d size=%d: rel %d's parent %d (step %d) does not list it as a child", k, size, rel,
                       par, st);
                seen[rel] += found;
            }
            for (int rel = 0; rel < size; rel++)
                CHECK(seen[rel] == 1, "knomial k=%d size=%d: rel %d is reached %d times", k, size, rel, seen[rel]);
        }
}

int main(void)
{
    negative();
    sweep(KP_COLL_REDUCE);
    sweep(KP_COLL_REDUCE_SCATTER_BLOCK);
    sweep(KP_COLL_REDUCE_SCATTER);
    printf("%ld checks, %ld failed (%ld documented refusals seen)\n", checks, fails, refused_ok);
    return fails ? 1 : 0;
}
