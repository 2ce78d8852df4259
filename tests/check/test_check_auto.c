/*
 * The automatic rules of bcast, scatter and the reductions pick only what
 * applies, and what they pick is correct: for every one of those
 * collectives, P = 1..16 (1..KPORT_CHECK_PMAX below that; vectors past
 * 16 KiB at P <= 6, past 64 KiB at P <= 2), node layouts
 * (none, one node with and without cross-memory attach or oversubscribed,
 * blocks of 2 and 3, cyclic over 2, uneven, one rank per node), sizes from
 * one element to past every threshold of the rules, commutative and not,
 * the rules' choice (kp_select_auto_red) must name an algorithm of the
 * registry whose schedules pass the checker (kp_check_red_on) at a root
 * other than 0, or refuse with KP_ERR_UNSUPPORTED for the layout (the SMP
 * reductions on nodes whose ranks are not consecutive, with a
 * non-commutative operation), in which case the rules without a layout
 * (what select_plan then runs) must pass. Reduce-scatter runs with uneven
 * blocks (one of them empty).
 */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"
#include "select/select.h"
#include "sweep.h"
#include "../unit/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NLAY = 8 };

static const char *const lname[NLAY] = {"none", "one node", "one node, no cma", "one node, oversubscribed",
                                        "blocks of 2", "blocks of 3", "cyclic over 2", "uneven (1,2,3,...)"};

/* layout lk for P ranks; returns 0 for "none" (NULL), 1 when *L was built */
static int make(int lk, int P, kp_layout *L)
{
    int ids[64];
    if (lk == 0)
        return 0;
    for (int r = 0, n = 0, left = 1; r < P; r++) {
        switch (lk) {
        case 1: case 2: case 3: ids[r] = 0; break;
        case 4: ids[r] = r / 2; break;
        case 5: ids[r] = r / 3; break;
        case 6: ids[r] = r % 2; break;
        default: /* nodes of 1, 2, 3, 1, 2, 3, ... ranks */
            ids[r] = n;
            if (--left == 0) {
                n++;
                left = n % 3 + 1;
            }
            break;
        }
    }
    if (kp_layout_init(L, P, ids, lk != 2)) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    L->oversub = lk == 3;
    return 1;
}

static int64_t g_off[65];

/* run the rules' choice through the checker; 1 when it passed */
static int run(int coll, const kp_choice *ch, const kp_layout *L, int P, int64_t bytes, int64_t elem, int commute,
               kp_check_result *res)
{
    const int root = P > 2 ? P - 2 : P - 1;
    const int64_t *off = coll == KP_COLL_REDUCE_SCATTER ? g_off : NULL;
    kp_check_red_on(ch->algo, &ch->prm, L, P, bytes, root, 0, elem, commute, off, res);
    return res->ok && !res->refused;
}

int main(void)
{
    static const int colls[] = {KP_COLL_BCAST, KP_COLL_SCATTER, KP_COLL_REDUCE, KP_COLL_ALLREDUCE,
                                KP_COLL_REDUCE_SCATTER_BLOCK, KP_COLL_REDUCE_SCATTER};
    /* elements (8 bytes for the reductions): around the rules' thresholds
     * (16 KiB, 64 KiB, 512 KiB of vector) */
    static const int64_t elems[] = {1, 3, 64, 2048, 2049, 8192, 8200, 65537};
    if (kp_settings_load() != KP_SUCCESS) {
        printf("settings: %s\n", kp_last_error());
        return 1;
    }
    const int pmax = sweep_pmax() < 16 ? sweep_pmax() : 16;
    long fellback = 0;
    for (int ci = 0; ci < (int)(sizeof colls / sizeof colls[0]); ci++) {
        const int coll = colls[ci];
        const int red = coll != KP_COLL_BCAST && coll != KP_COLL_SCATTER;
        const int64_t elem = red ? 8 : 1, unit = 8; /* bytes per element of the sizes below */
        for (int commute = red ? 0 : 1; commute <= 1; commute++)
            for (int P = 1; P <= pmax; P++)
                for (int lk = 0; lk < NLAY; lk++)
                    for (int e = 0; e < (int)(sizeof elems / sizeof elems[0]); e++) {
                        int64_t n = elems[e];
                        if ((n > 8200 && P > 2) || (n > 2049 && P > 6))
                            continue; /* the largest only at small P: the checker's time grows with bytes x P */
                        /* per-rank block (scatter, reduce_scatter_block) or the whole vector */
                        const int block = coll == KP_COLL_SCATTER || coll == KP_COLL_REDUCE_SCATTER_BLOCK;
                        if (block)
                            n = (n + P - 1) / P;
                        const int64_t bytes = n * unit;
                        if (coll == KP_COLL_REDUCE_SCATTER) {
                            /* uneven blocks: rank j's weighs j (rank 0's is empty when P > 1) */
                            const int64_t tri = (int64_t)P * (P - 1) / 2;
                            for (int j = 0; j <= P; j++)
                                g_off[j] = P == 1 ? j * bytes : n * ((int64_t)j * (j - 1) / 2) / tri * unit;
                        }
                        kp_layout L;
                        const int built = make(lk, P, &L);
                        kp_choice ch;
                        kp_select_auto_red(coll, built ? &L : NULL, P, bytes, commute, &ch);
                        CHECK(ch.algo != NULL, "%s P=%d %s bytes=%lld commute=%d: no algorithm (%s)",
                              kp_coll_name(coll), P, lname[lk], (long long)bytes, commute, ch.why);
                        if (ch.algo) {
                            kp_check_result res;
                            int ok = run(coll, &ch, built ? &L : NULL, P, bytes, elem, commute, &res);
                            if (!ok && res.refused && res.refuse_code == KP_ERR_UNSUPPORTED) {
                                /* select_plan's fallback: the rules without a layout */
                                fellback++;
                                kp_choice ch2;
                                kp_select_auto_red(coll, NULL, P, bytes, commute, &ch2);
                                ok = ch2.algo && run(coll, &ch2, NULL, P, bytes, elem, commute, &res);
                            }
                            CHECK(ok, "%s P=%d %s bytes=%lld commute=%d: %s: %s", kp_coll_name(coll), P,
                                  lname[lk], (long long)bytes, commute, ch.algo->name, res.msg);
                        }
                        if (built)
                            kp_layout_free(&L);
                    }
    }
    printf("%ld checks, %ld failures (%ld choices refused for their layout, the flat rules ran)\n", checks, fails,
           fellback);
    return fails ? 1 : 0;
}
