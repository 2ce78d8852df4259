/*
 * One timing engine (issue 36): the cost model (kp_model_predict_rules: P
 * explicit schedules) and kport-sim (kp_sim_run: schedules built rank by
 * rank) give the same time - every rank's, to the last bit - on the same
 * schedule and parameters under the same rules, for both rule sets
 * (KP_RULES_EXECUTOR, the model's default; KP_RULES_LOGGOPSIM, kport-sim's).
 *
 * Over every algorithm of the registry with its defaults and further
 * parameters (k, n, C), every collective, P 1..17 and 33, node layouts of
 * 1, 3 and 4 ranks per node (kport-sim's blocks; the model given the same
 * layout), sizes 0 B to 100 kB (eager and rendezvous), in place and not,
 * the rooted collectives' root first and last, reductions of doubles,
 * commutative or not, reduce_scatter's uneven blocks (their combines
 * counted alike), and three machines: LogGOPSim's parameters
 * with a rendezvous limit, and the two recorded parameter files of
 * docs/bench/allgather-p2 (measured exchanges X and X2, pieces, eager
 * limits, shared-memory costs, call.fixed and call.skew).
 *
 * usage: test_equal DIR (DIR: docs/bench/allgather-p2)
 */
#include "kport.h"
#include "model/model.h"
#include "sim/sim.h"
#include "../unit/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long errors;     /* cases where both tools stop with the same error */
static long reductions; /* cases of reductions with elements of 8 B or a non-commutative operation */

static void check(int ok, const char *what, const char *spec, int P, int ns, int64_t b, int rules, int mach)
{
    CHECK(ok, "%s: %s P=%d node size %d %lld B, rules %s, machine %d", what, spec, P, ns, (long long)b,
          kp_timing_rules_name((kp_timing_rules)rules), mach);
}

/* a reduction's shape: element size, commutativity, reduce_scatter's blocks */
typedef struct red {
    int64_t elem;
    int commute;
    const int64_t *block_off;
} red;

/* one case under both rule sets: the model and kport-sim agree exactly */
static void one(const kp_machine *m, int mach, int coll, const kp_algo *a, const kp_params *prm, const char *spec,
                int P, int ns, int64_t bytes, int root, int inplace, const red *rd, double *model_ranks)
{
    kp_layout L;
    if (kp_sim_block_layout(&L, P, ns)) {
        check(0, "layout", spec, P, ns, bytes, 0, mach);
        return;
    }
    for (int rules = 0; rules < 2; rules++) {
        kp_model_result mr;
        mr.rank_ns = model_ranks;
        int rc = kp_model_predict_red(m, a, prm, ns > 1 ? &L : NULL, P, bytes, root, inplace, rd->elem, rd->commute,
                                      rd->block_off, (kp_timing_rules)rules, &mr);
        kp_sim_config c;
        memset(&c, 0, sizeof c);
        c.coll = coll;
        c.algo = a;
        c.prm = *prm;
        c.P = P;
        c.bytes = bytes;
        c.node_size = ns;
        c.root = root;
        c.inplace = inplace;
        c.elem = rd->elem;
        c.noncommutative = !rd->commute;
        c.block_off = rd->block_off;
        c.m = *m;
        c.rules = (kp_timing_rules)rules;
        kp_sim_result sr;
        int src = kp_sim_run(&c, &sr);
        if (rc != KP_SUCCESS || src != KP_SUCCESS) {
            /* an error (kport-sim's parked messages can meet the wrong receive
             * under LogGOPSim's rules): the same in both */
            check(rc == src && !strcmp(mr.msg, sr.msg), "the same error", spec, P, ns, bytes, rules, mach);
            if (rc != src || strcmp(mr.msg, sr.msg))
                fprintf(stderr, "  model: %s / sim: %s\n", mr.msg, sr.msg);
            else
                errors++;
            continue;
        }
        check(mr.refused == sr.refused, "both refuse or neither", spec, P, ns, bytes, rules, mach);
        if (!mr.refused && !sr.refused) {
            check(mr.time_ns == sr.max_ns && mr.slowest_rank == sr.slowest_rank, "same time", spec, P, ns, bytes,
                  rules, mach);
            if (mr.time_ns != sr.max_ns)
                fprintf(stderr, "  model %.17g ns, kport-sim %.17g ns\n", mr.time_ns, sr.max_ns);
            int same = 1;
            for (int r = 0; r < P; r++)
                same &= model_ranks[r] == sr.rank_ns[r];
            check(same, "same time on every rank", spec, P, ns, bytes, rules, mach);
            check(mr.messages == sr.messages && mr.msg_bytes == sr.msg_bytes && mr.rendezvous == sr.rendezvous,
                  "same messages", spec, P, ns, bytes, rules, mach);
            check(mr.reduces == sr.reduces && mr.reduce_bytes == sr.reduce_bytes, "same combines", spec, P, ns, bytes,
                  rules, mach);
            if (rd->elem > 1 || !rd->commute)
                reductions++;
        }
        kp_sim_result_free(&sr);
    }
    kp_layout_free(&L);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_equal DIR\n");
        return 2;
    }
    kp_machine mach[3];
    kp_sim_machine_loggp(&mach[0], 2500, 1500, 1000, 6, 0.5, 1000);
    const char *files[2] = {"params-mpich.json", "params-ompi.json"};
    for (int i = 0; i < 2; i++) {
        char path[1024], err[512];
        snprintf(path, sizeof path, "%s/%s", argv[1], files[i]);
        if (kp_params_load(path, &mach[i + 1], err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
    }
    static const char *const extra[] = {"allgather:direct:k=3",
                                        "allgather:standard_exchange:k=2",
                                        "allgather:bruck:k=3",
                                        "allgather:concurrent_exchange:C=2",
                                        "allgather:concurrent_exchange_split:C=2",
                                        "allgather:smp_direct:k=2",
                                        "allgather:smp_bruck:k=3",
                                        "allgather:smp_gather_bcast:tree=2",
                                        "barrier:nway_dissemination:n=3",
                                        "barrier:smp:n=2",
                                        "alltoall:direct:k=3",
                                        "alltoall:bruck:k=2"};
    static const int Ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 33};
    static const int nss[] = {1, 3, 4};
    static const int64_t sizes[] = {0, 8, 1000, 100000};
    double *ranks = malloc(64 * sizeof(double));
    int64_t block_off[64 + 1];
    for (int coll = 0; coll < KP_COLL_COUNT; coll++) {
        /* the registry's algorithms with their defaults, then the extra parameters */
        const int nreg = kp_algo_count(coll);
        for (int i = 0; i < nreg + (int)(sizeof extra / sizeof extra[0]); i++) {
            const kp_algo *a;
            kp_params prm;
            char spec[128];
            if (i < nreg) {
                a = kp_algo_at(coll, i);
                prm = a->defaults;
                snprintf(spec, sizeof spec, "%s:%s", kp_coll_name(coll), a->name);
            } else {
                const char *e = extra[i - nreg];
                const size_t n = strlen(kp_coll_name(coll));
                if (strncmp(e, kp_coll_name(coll), n) || e[n] != ':')
                    continue;
                char err[256];
                if (kp_algo_parse(coll, e + n + 1, &a, &prm, err, sizeof err) || !a) {
                    CHECK(0, "%s: %s", e, err);
                    continue;
                }
                snprintf(spec, sizeof spec, "%s", e);
            }
            for (size_t p = 0; p < sizeof Ps / sizeof Ps[0]; p++)
                for (size_t n = 0; n < sizeof nss / sizeof nss[0]; n++)
                    for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++)
                        for (int k = 0; k < 3; k++) {
                            const int64_t bytes = coll == KP_COLL_BARRIER ? 0 : sizes[b];
                            if (coll == KP_COLL_BARRIER && b > 0)
                                continue;
                            const int P = Ps[p];
                            const int rooted = coll == KP_COLL_GATHER || coll == KP_COLL_BCAST ||
                                               coll == KP_COLL_SCATTER || coll == KP_COLL_REDUCE;
                            const int reduction = coll == KP_COLL_REDUCE || coll == KP_COLL_ALLREDUCE ||
                                                  coll == KP_COLL_REDUCE_SCATTER_BLOCK ||
                                                  coll == KP_COLL_REDUCE_SCATTER;
                            /* allgather and the reductions in place; the rooted ones' last rank as root */
                            const int inplace = (coll == KP_COLL_ALLGATHER || reduction) && (p + b) % 2;
                            const int root = rooted && (p + n) % 2 ? P - 1 : 0;
                            /* reductions: doubles, every third case a non-commutative operation;
                             * reduce_scatter's blocks: whole elements, the first ranks one more */
                            red rd = {reduction ? 8 : 1, !(reduction && (p + b + n) % 3 == 0), NULL};
                            if (coll == KP_COLL_REDUCE_SCATTER) {
                                const int64_t e = bytes / rd.elem;
                                block_off[0] = 0;
                                for (int j = 0; j < P; j++)
                                    block_off[j + 1] = block_off[j] + (e / P + (j < e % P)) * rd.elem;
                                rd.block_off = block_off;
                            }
                            one(&mach[k], k, coll, a, &prm, spec, P, nss[n], bytes, root, inplace, &rd, ranks);
                        }
        }
    }
    free(ranks);
    printf("test_equal: %ld passed, %ld failed (%ld cases where both give the same error; %ld of reductions)\n",
           checks - fails, fails, errors, reductions);
    return fails ? 1 : 0;
}
