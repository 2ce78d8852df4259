/*
 * An algorithm checked: every rank's schedule built by the registry's
 * builder (registry.c) and all of them run through the schedule checker
 * (src/sched/check.c), which knows schedules but no algorithm.
 */
#include "algo/algo.h"
#include "kport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kp_check_algo_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, int64_t bytes, int root,
                      int inplace, kp_check_result *res)
{
    kp_check_red_on(a, prm, L, P, bytes, root, inplace, 1, 1, NULL, res);
}

void kp_check_red_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, int64_t bytes, int root,
                     int inplace, int64_t elem, int commute, const int64_t *block_off, kp_check_result *res)
{
    memset(res, 0, sizeof(*res));
    kp_sched *sc = P >= 1 && P <= (1 << 20) ? calloc((size_t)P, sizeof(*sc)) : NULL;
    if (!sc) {
        snprintf(res->msg, sizeof(res->msg), "invalid P=%d (or out of memory)", P);
        return;
    }
    int built = 0, rc = KP_SUCCESS;
    for (; built < P; built++) {
        /* reduce: only the root passes MPI_IN_PLACE (the core builds the others without it) */
        const int ip = a->coll == KP_COLL_REDUCE && built != root ? 0 : inplace;
        rc = kp_algo_build_red_on(a, prm, L, built, P, bytes, root, ip, elem, commute, block_off, &sc[built]);
        if (rc != KP_SUCCESS) {
            built++;
            break;
        }
    }
    if (rc == KP_SUCCESS) {
        kp_check_scheds(sc, P, res);
    } else if (built - 1 == 0) {
        res->refused = 1;
        res->refuse_code = rc;
        snprintf(res->msg, sizeof(res->msg), "%s", sc[0].errmsg);
    } else {
        /* a refusal must not depend on the rank: the ranks that built would hang */
        snprintf(res->msg, sizeof(res->msg), "rank-dependent refusal: rank %d refused (%s) after rank 0 built",
                 built - 1, sc[built - 1].errmsg);
    }
    for (int r = 0; r < built; r++)
        kp_sched_free(&sc[r]);
    free(sc);
}

void kp_check_algo(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int root, int inplace,
                   kp_check_result *res)
{
    kp_check_algo_on(a, prm, NULL, P, bytes, root, inplace, res);
}

void kp_check_allgather(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int inplace,
                        kp_check_result *res)
{
    kp_check_algo_on(a, prm, NULL, P, bytes, 0, inplace, res);
}
