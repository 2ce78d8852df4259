/*
 * One-node shared-memory all-gathers through the checker (three consecutive
 * calls, race detection): shm_flat with one chunk and pipelined chunks,
 * shm_single_copy with and without cross-memory attach, P 1..32, in place
 * or not; their refusals on multi-node layouts; and proof that the checker
 * catches what the shared-memory rules forbid (missing wait, missing final
 * post, reuse without ordering).
 */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long passed, failed;

static void expect(int cond, const char *fmt, const char *name, int P, long long b, int ip, const char *msg)
{
    if (cond) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL ");
    fprintf(stderr, fmt, name, P, b, ip);
    fprintf(stderr, ": %s\n", msg);
}

static void one_node(kp_layout *L, int P, int cma)
{
    int *ids = calloc((size_t)P, sizeof(int));
    kp_layout_init(L, P, ids, cma);
    free(ids);
}

/* a hand-made one-node exchange through the segment; `bug` removes a piece */
static void handmade(int bug, const char *needle)
{
    const int P = 2;
    const int64_t m = 8;
    kp_layout L;
    one_node(&L, P, 1);
    kp_sched s[2];
    for (int r = 0; r < P; r++) {
        kp_sched_init(&s[r], r, P, m);
        s[r].layout = &L;
        kp_sched_need_shm(&s[r], P * m);
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_SHM, r * m, m);
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * m, m);
        kp_sched_next_round(&s[r]);
        kp_sched_post(&s[r]);
        kp_sched_next_round(&s[r]);
        if (bug != 1)
            kp_sched_wait(&s[r], 1 - r, bug == 2 ? 2 : 1);
        kp_sched_next_round(&s[r]);
        kp_sched_copy(&s[r], KP_BUF_SHM, (1 - r) * m, KP_BUF_RECV, (1 - r) * m, m);
        kp_sched_finish(&s[r]);
    }
    kp_check_result res;
    kp_check_scheds(s, P, &res);
    int good = needle ? (!res.ok && strstr(res.msg, needle)) : res.ok;
    expect(good, "handmade bug %s P=%d b=%lld ip=%d", bug == 0 ? "none" : bug == 1 ? "no-wait" : "wrong-post", P, m,
           0, res.msg);
    for (int r = 0; r < P; r++)
        kp_sched_free(&s[r]);
    kp_layout_free(&L);
}

int main(void)
{
    static const int64_t sizes[] = {0, 1, 7, 4096, 5000};
    const kp_algo *flat = kp_algo_find(KP_COLL_ALLGATHER, "shm_flat");
    const kp_algo *one = kp_algo_find(KP_COLL_ALLGATHER, "shm_single_copy");
    for (int P = 1; P <= 32; P++) {
        kp_layout L;
        for (int cma = 0; cma < 2; cma++) {
            one_node(&L, P, cma);
            for (int b = 0; b < 5; b++)
                for (int ip = 0; ip < 2; ip++) {
                    kp_check_result res;
                    /* whole block, and pipelined 1 KiB chunks for 4096/5000 bytes */
                    for (int ck = 0; ck < 2; ck++) {
                        kp_params prm = {.chunk_kb = ck};
                        kp_check_algo_on(flat, &prm, &L, P, sizes[b], 0, ip, &res);
                        expect(res.ok, "shm_flat %s P=%d bytes=%lld ip=%d", ck ? "chunk_kb=1" : "", P, sizes[b], ip,
                               res.msg);
                    }
                    kp_check_algo_on(one, NULL, &L, P, sizes[b], 0, ip, &res);
                    if (cma || P == 1)
                        expect(res.ok, "%s P=%d bytes=%lld ip=%d", "shm_single_copy", P, sizes[b], ip, res.msg);
                    else
                        expect(res.refused && res.refuse_code == KP_ERR_UNSUPPORTED && strstr(res.msg, "cross-memory"),
                               "%s without CMA P=%d bytes=%lld ip=%d", "shm_single_copy", P, sizes[b], ip, res.msg);
                }
            kp_layout_free(&L);
        }
        /* two nodes: both refuse */
        if (P >= 2) {
            int *ids = malloc((size_t)P * sizeof(int));
            for (int r = 0; r < P; r++)
                ids[r] = r % 2;
            kp_layout_init(&L, P, ids, 1);
            free(ids);
            kp_check_result res;
            kp_check_algo_on(flat, NULL, &L, P, 8, 0, 0, &res);
            expect(res.refused && res.refuse_code == KP_ERR_UNSUPPORTED, "%s on two nodes P=%d b=%lld ip=%d",
                   "shm_flat", P, 8, 0, res.msg);
            kp_check_algo_on(one, NULL, &L, P, 8, 0, 0, &res);
            expect(res.refused && res.refuse_code == KP_ERR_UNSUPPORTED, "%s on two nodes P=%d b=%lld ip=%d",
                   "shm_single_copy", P, 8, 0, res.msg);
            kp_layout_free(&L);
        }
    }
    /* the single-copy gather and all-to-all refuse without cross-memory attach */
    static const int colls[] = {KP_COLL_GATHER, KP_COLL_ALLTOALL};
    for (int ci = 0; ci < 2; ci++) {
        const kp_algo *a = kp_algo_find(colls[ci], "shm_single_copy");
        for (int P = 2; P <= 8; P++)
            for (int cma = 0; cma < 2; cma++)
                for (int ip = 0; ip < 2; ip++) {
                    kp_layout L;
                    one_node(&L, P, cma);
                    kp_check_result res;
                    kp_check_algo_on(a, NULL, &L, P, 24, P - 1, ip, &res);
                    if (cma)
                        expect(res.ok, "%s P=%d bytes=%lld ip=%d", ci ? "alltoall shm_single_copy" : "gather shm_single_copy",
                               P, 24, ip, res.msg);
                    else
                        expect(res.refused && res.refuse_code == KP_ERR_UNSUPPORTED, "%s without CMA P=%d bytes=%lld ip=%d",
                               ci ? "alltoall shm_single_copy" : "gather shm_single_copy", P, 24, ip, res.msg);
                    kp_layout_free(&L);
                }
    }
    handmade(0, NULL);
    handmade(1, "race");
    handmade(2, "deadlock");
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed != 0;
}
