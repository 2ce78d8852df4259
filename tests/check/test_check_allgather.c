/*
 * Every all-gather algorithm through the checker on the flat layout (one
 * rank per node): every P 1..64, k 1..8,
 * C in {1,2,4,8}, bytes 0, 1, 7, 4096, with and without MPI_IN_PLACE.
 * Combinations an algorithm accepts must pass; the ones it must refuse (by
 * the paper's rules, written here independently of the builders) must be
 * refused with the documented code. A C larger than P is clamped to the
 * largest value that applies, so it never refuses (test_check_clamp checks
 * the clamps themselves).
 */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"
#include "sweep.h"

#include <stdio.h>
#include <string.h>

static int pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

/* expected refusal code for (algorithm, P, params), 0 when it must apply */
static int expected(const char *name, int P, const kp_params *p)
{
    /* C > P is clamped to the largest C' <= P that applies (C' = P for the
     * baseline, 2 or P <= 2 for the split); a C within 1..P is taken as given */
    if (!strcmp(name, "concurrent_exchange"))
        return (p->C > P || (P % p->C == 0 && pow2(P / p->C))) ? 0 : KP_ERR_UNSUPPORTED;
    if (!strcmp(name, "concurrent_exchange_split"))
        return !pow2(P) ? KP_ERR_UNSUPPORTED : (p->C == 2 || p->C > P || P <= 2) ? 0 : KP_ERR_UNSUPPORTED;
    /* one-node algorithms on the flat layout (every rank its own node);
     * check_shm covers them on one node, check_smp the hierarchical ones */
    if (!strncmp(name, "shm_", 4))
        return P == 1 ? 0 : KP_ERR_UNSUPPORTED;
    return 0;
}

int main(void)
{
    static const int64_t sizes[] = {0, 1, 7, 4096};
    static const int Cs[] = {1, 2, 4, 8};
    long passed = 0, failed = 0, refused = 0;
    for (int i = 0; i < kp_algo_count(KP_COLL_ALLGATHER); i++) {
        const kp_algo *a = kp_algo_at(KP_COLL_ALLGATHER, i);
        kp_params list[8];
        int n = 0;
        if (a->params & KP_PARAM_K)
            for (int k = 1; k <= 8; k++)
                list[n++] = (kp_params){.k = k};
        else if (a->params & KP_PARAM_C)
            for (int c = 0; c < 4; c++)
                list[n++] = (kp_params){.C = Cs[c]};
        else
            list[n++] = (kp_params){0};
        for (int j = 0; j < n; j++) {
            char name[64];
            kp_algo_format(a, &list[j], name, sizeof(name));
            for (int P = 1; P <= sweep_pmax(); P++) {
                int want = expected(a->name, P, &list[j]);
                for (int b = 0; b < 4; b++)
                    for (int ip = 0; ip < 2; ip++) {
                        kp_check_result res;
                        kp_check_allgather(a, &list[j], P, sizes[b], ip, &res);
                        int good;
                        if (want == 0)
                            good = res.ok && !res.refused;
                        else
                            good = res.refused && res.msg[0] &&
                                   (want > 0 ? res.refuse_code == want
                                             : (res.refuse_code == KP_ERR_PARAM || res.refuse_code == KP_ERR_UNSUPPORTED));
                        if (good) {
                            passed++;
                            refused += want != 0;
                        } else {
                            failed++;
                            if (failed < 30)
                                fprintf(stderr, "FAIL %s P=%d bytes=%lld%s: expected %s, got %s: %s\n", name, P,
                                        (long long)sizes[b], ip ? " in-place" : "", want ? "refusal" : "success",
                                        res.refused ? "refusal" : res.ok ? "success" : "error", res.msg);
                        }
                    }
            }
        }
        /* parameters out of range are refused with KP_ERR_PARAM by every builder that takes them */
        if (a->params) {
            kp_params bad = a->params & KP_PARAM_K ? (kp_params){.k = -1}
                            : a->params & KP_PARAM_C ? (kp_params){.C = -1}
                            : a->params & KP_PARAM_TREE ? (kp_params){.tree = 3}
                                                        : (kp_params){.chunk_kb = -1};
            kp_check_result res;
            kp_check_allgather(a, &bad, 8, 8, 0, &res);
            if (res.refused && res.refuse_code == KP_ERR_PARAM)
                passed++;
            else {
                failed++;
                fprintf(stderr, "FAIL %s with a negative parameter not refused with KP_ERR_PARAM: %s\n", a->name,
                        res.msg);
            }
        }
    }
    printf("(%ld of the passes are expected refusals)\n", refused);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed != 0;
}
