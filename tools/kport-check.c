/*
 * kport-check: run the schedule checker (no MPI ranks needed), dump
 * schedules, or export the GOAL file of a collective.
 *
 *   kport-check allgather                 every algorithm, P 1..64, k/n 1..8, C 1,2,4,8, bytes 0,1,7,4096
 *   kport-check gather -a smp -P 2:32 --node-size 4 --root 3
 *   kport-check allgather -a bruck:k=3 -P 5 -b 8 --dump           print the 5 schedules
 *   kport-check allgather -a direct:k=2 -P 16 -b 1024 --goal out.goal
 *   kport-check allreduce --elem 4 --noncommutative -P 1:16      reductions, element size, order
 *
 * Rooted collectives (gather, bcast, scatter, reduce) are checked at every
 * root unless --root is given. Reductions (reduce, allreduce,
 * reduce_scatter_block, reduce_scatter) combine elements of --elem bytes
 * (default 8; -b sizes must be multiples of it, the default sizes are 0,
 * 1, 7 and 512 elements), of a commutative operation unless
 * --noncommutative (then a combine must keep rank order). reduce_scatter's
 * -b is the whole vector, split over the ranks twice: evenly (the first
 * ranks one element more) and unevenly (rank j's share grows with j mod 3,
 * so every third rank gets none); --dump and --goal use the uneven split.
 *
 * Node layouts: --node-size n (blocks of n ranks), --node-map cyclic (with
 * --node-size), --node-map 0,0,1,... (explicit, one id per rank, fixes P);
 * --no-cma models a node where cross-memory attach is not permitted.
 *
 * Predictions (the cost model, src/model/model.h; no MPI):
 *   kport-check allgather -a ring -P 2:8 -b 8,65536 --node-size 8 --predict params.json
 * prints, per (algorithm, P, bytes), the LogGP and the Hockney time of the
 * collective (max over ranks, microseconds), the messages and rounds, from
 * the machine parameter file (docs/PARAMETERS.md); no schedule is checked.
 * Ranks of one node (--node-size, --node-map) use the file's p2p.intra,
 * ranks of different nodes p2p.inter: without --node-size every rank is its
 * own node. Gather predicts root 0 unless --root is given.
 * --rules loggopsim prices the LogGP column under kport-sim's rules
 * (LogGOPSim's event order, src/timing/rules.h) instead of the cost model's
 * (kport's executor order, the default): the time kport-sim prints for the
 * same schedule, parameters and node layout.
 */
#include "kport.h"
#include "model/model.h"
#include "algo/algo.h"
#include "sched/check.h"
#include "sched/goal.h"
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *colls[KP_COLL_COUNT] = {"allgather", "barrier", "gather", "alltoall", "bcast", "scatter", "reduce", "allreduce", "reduce_scatter_block", "reduce_scatter"};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kport-check allgather|barrier|gather|alltoall|bcast|scatter|reduce|allreduce|\n"
            "                   reduce_scatter_block|reduce_scatter [-a name[:k=..,C=..,n=..]] [-P MIN[:MAX]]\n"
            "                   [-b BYTES[,BYTES...]] [-r|--root R] [--inplace] [--node-size N]\n"
            "                   [--elem E] [--noncommutative]\n"
            "                   [--node-map cyclic|ID,ID,...] [--no-cma] [--dump] [--goal FILE] [--predict FILE]\n"
            "                   [--rules executor|loggopsim] [-v]\n"
            "Checks schedules symbolically. Without -a: every algorithm of the collective over k, n 1..8\n"
            "and C 1,2,4,8. Exit status 0 when every checked schedule is correct; refusals (an algorithm\n"
            "that does not apply to that P or layout) are counted, not errors. Rooted collectives: every\n"
            "root unless --root. Reductions: elements of E bytes (--elem, default 8), commutative unless\n"
            "--noncommutative; reduce_scatter splits the -b bytes over the ranks evenly and unevenly.\n"
            "--predict FILE: print the cost model's LogGP and Hockney times (microseconds, max over ranks)\n"
            "from the machine parameter file FILE instead of checking (docs/PARAMETERS.md); --rules loggopsim:\n"
            "the LogGP time under kport-sim's rules (default executor: the cost model's).\n");
}

static int is_reduction(int coll)
{
    return coll == KP_COLL_REDUCE || coll == KP_COLL_ALLREDUCE || coll == KP_COLL_REDUCE_SCATTER_BLOCK ||
           coll == KP_COLL_REDUCE_SCATTER;
}

static int is_rooted(int coll)
{
    return coll == KP_COLL_GATHER || coll == KP_COLL_BCAST || coll == KP_COLL_SCATTER || coll == KP_COLL_REDUCE;
}

static int parse_range(const char *s, int *lo, int *hi)
{
    char *end;
    *lo = (int)strtol(s, &end, 10);
    *hi = *lo;
    if (*end == ':' || *end == '-')
        *hi = (int)strtol(end + 1, &end, 10);
    return *end != '\0' || *lo < 1 || *hi < *lo;
}

/* node ids for P ranks from the options; 0 on success */
static int layout_for(int P, int node_size, const char *map, int cma, kp_layout *L)
{
    int *ids = malloc((size_t)P * sizeof(int));
    if (!ids)
        return -1;
    int nnodes = node_size > 0 ? (P + node_size - 1) / node_size : P;
    for (int r = 0; r < P; r++)
        ids[r] = node_size > 0 ? r / node_size : r;
    if (map && !strcmp(map, "cyclic"))
        for (int r = 0; r < P; r++)
            ids[r] = r % nnodes;
    else if (map) {
        const char *p = map;
        for (int r = 0; r < P; r++) {
            char *end;
            ids[r] = (int)strtol(p, &end, 10);
            if (end == p) {
                free(ids);
                return -1;
            }
            p = *end == ',' ? end + 1 : end;
        }
    }
    int rc = kp_layout_init(L, P, ids, cma);
    free(ids);
    return rc;
}

/* --predict: the cost model's time of every (algorithm, P, bytes) */
static int predict_all(const char *file, int coll, const kp_algo **algos, const kp_params *prms, int n, int plo,
                       int phi, const int64_t *sizes, int nsizes, int node_size, const char *map, int cma, int root,
                       int inplace, kp_timing_rules rules, int64_t elem, int commute)
{
    kp_machine m;
    char err[512];
    if (kp_params_load(file, &m, err, sizeof err)) {
        fprintf(stderr, "kport-check: %s\n", err);
        return 2;
    }
    printf("# %s predicted from %s (LogGP and Hockney, microseconds, max over ranks)%s\n", colls[coll], file,
           rules == KP_RULES_EXECUTOR ? "" : "; LogGP under kport-sim's rules (--rules loggopsim)");
    printf("%-40s %6s %12s %12s %12s %9s %7s\n", "algorithm", "P", "bytes", "loggp_us", "hockney_us", "messages",
           "rounds");
    int bad = 0;
    for (int i = 0; i < n; i++) {
        for (int P = plo; P <= phi; P++) {
            kp_layout L;
            if (layout_for(P, node_size, map, cma, &L)) {
                fprintf(stderr, "kport-check: bad node layout for P=%d\n", P);
                return 2;
            }
            char name[160];
            kp_algo_format_on(algos[i], &prms[i], &L, P, name, sizeof name);
            const int rt = root < 0 ? 0 : root >= P ? P - 1 : root;
            for (int b = 0; b < nsizes; b++) {
                kp_model_result res = {0};
                /* reductions with their element size and commutativity; reduce_scatter's vector split
                 * evenly over the ranks, as the sweep's first split */
                int64_t *off = NULL;
                if (coll == KP_COLL_REDUCE_SCATTER && !(off = malloc(sizeof(int64_t) * (size_t)(P + 1)))) {
                    fprintf(stderr, "kport-check: out of memory\n");
                    return 2;
                }
                if (off)
                    kp_sim_split_blocks(P, sizes[b], elem, 0, off);
                int rc = kp_model_predict_red(&m, algos[i], &prms[i], &L, P, sizes[b], rt, inplace, elem, commute, off,
                                              rules, &res);
                free(off);
                if (rc) {
                    printf("%-40s %6d %12lld error: %s\n", name, P, (long long)sizes[b], res.msg);
                    bad = 1;
                } else if (res.refused)
                    printf("%-40s %6d %12lld refused: %s\n", name, P, (long long)sizes[b], res.msg);
                else
                    printf("%-40s %6d %12lld %12.3f %12.3f %9lld %7d\n", name, P, (long long)sizes[b],
                           res.time_ns / 1e3, res.hockney_ns / 1e3, (long long)res.messages, res.max_rounds);
            }
            kp_layout_free(&L);
        }
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *spec = NULL, *goal = NULL, *map = NULL, *predict = NULL;
    int plo = 1, phi = 64, dump = 0, verbose = 0, inplace_only = -1, root = -1, node_size = 0, cma = 1;
    int64_t sizes[16] = {0, 1, 7, 4096}, elem = 0;
    int nsizes = 4, coll = -1, given_sizes = 0, commute = 1;
    kp_timing_rules rules = KP_RULES_EXECUTOR;
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    for (int c = 0; argc >= 2 && c < KP_COLL_COUNT; c++)
        if (!strcmp(argv[1], colls[c]))
            coll = c;
    if (coll < 0) {
        usage(stderr);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "-a") && i + 1 < argc)
            spec = argv[++i];
        else if (!strcmp(argv[i], "-P") && i + 1 < argc) {
            if (parse_range(argv[++i], &plo, &phi)) {
                fprintf(stderr, "kport-check: bad -P %s\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "-b") && i + 1 < argc) {
            nsizes = 0;
            given_sizes = 1;
            for (char *t = strtok(argv[++i], ","); t && nsizes < 16; t = strtok(NULL, ","))
                sizes[nsizes++] = atoll(t);
        } else if (!strcmp(argv[i], "--elem") && i + 1 < argc) {
            elem = atoll(argv[++i]);
            if (elem < 1 || !is_reduction(coll)) {
                fprintf(stderr, "kport-check: --elem %s: a positive element size, for reductions only\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--noncommutative")) {
            commute = 0;
        } else if ((!strcmp(argv[i], "--root") || !strcmp(argv[i], "-r")) && i + 1 < argc)
            root = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--node-size") && i + 1 < argc)
            node_size = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--node-map") && i + 1 < argc)
            map = argv[++i];
        else if (!strcmp(argv[i], "--no-cma"))
            cma = 0;
        else if (!strcmp(argv[i], "--inplace"))
            inplace_only = 1;
        else if (!strcmp(argv[i], "--dump"))
            dump = 1;
        else if (!strcmp(argv[i], "--goal") && i + 1 < argc)
            goal = argv[++i];
        else if (!strcmp(argv[i], "--predict") && i + 1 < argc)
            predict = argv[++i];
        else if (!strcmp(argv[i], "--rules") && i + 1 < argc) {
            if (kp_timing_rules_parse(argv[++i], &rules)) {
                fprintf(stderr, "kport-check: --rules \"%s\": expected executor or loggopsim\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else {
            usage(stderr);
            return 2;
        }
    }
    if (map && strcmp(map, "cyclic")) { /* an explicit map fixes P */
        int n = 1;
        for (const char *p = map; *p; p++)
            n += *p == ',';
        plo = phi = n;
    }
    if (map && !strcmp(map, "cyclic") && node_size < 1) {
        fprintf(stderr, "kport-check: --node-map cyclic needs --node-size\n");
        return 2;
    }
    if (coll == KP_COLL_BARRIER) {
        nsizes = 1;
        sizes[0] = 0;
    }
    if (!elem)
        elem = is_reduction(coll) ? 8 : 1;
    for (int b = 0; b < nsizes; b++) {
        if (!given_sizes && b) /* reductions: 1, 7 and 4096 / elem elements */
            sizes[b] = b < 3 ? sizes[b] * elem : (sizes[b] + elem - 1) / elem * elem;
        if (sizes[b] < 0 || sizes[b] % elem) {
            fprintf(stderr, "kport-check: -b %lld: not a whole number of %lld-byte elements\n", (long long)sizes[b],
                    (long long)elem);
            return 2;
        }
    }

    /* the list of (algorithm, params) to check */
    const kp_algo *algos[256];
    kp_params prms[256];
    int n = 0;
    if (spec) {
        char err[256];
        if (kp_algo_parse(coll, spec, &algos[0], &prms[0], err, sizeof(err)) || !algos[0]) {
            fprintf(stderr, "kport-check: %s\n", algos[0] ? err : "give an algorithm name, not auto");
            return 2;
        }
        n = 1;
    } else {
        static const int Cs[] = {1, 2, 4, 8};
        for (int i = 0; i < kp_algo_count(coll) && n < 240; i++) {
            const kp_algo *a = kp_algo_at(coll, i);
            if (a->params & (KP_PARAM_K | KP_PARAM_N)) {
                for (int k = 1; k <= 8; k++, n++) {
                    algos[n] = a, prms[n] = a->defaults;
                    if (a->params & KP_PARAM_K)
                        prms[n].k = k;
                    else
                        prms[n].n = k;
                }
            } else if (a->params & KP_PARAM_C) {
                for (int c = 0; c < 4; c++, n++)
                    algos[n] = a, prms[n] = (kp_params){.C = Cs[c]};
            } else if (a->params & KP_PARAM_TREE) {
                for (int t = 1; t <= 2; t++, n++)
                    algos[n] = a, prms[n] = (kp_params){.tree = t};
            } else {
                algos[n] = a, prms[n++] = a->defaults;
            }
        }
    }

    if (dump || goal) {
        if (plo != phi || nsizes != 1 || n != 1) {
            fprintf(stderr, "kport-check: --dump/--goal need one -a, one -P and one -b\n");
            return 2;
        }
        int P = plo, rc = 0;
        kp_layout L;
        if (layout_for(P, node_size, map, cma, &L)) {
            fprintf(stderr, "kport-check: bad node layout\n");
            return 2;
        }
        kp_sched *sc = calloc((size_t)P, sizeof(*sc));
        int64_t *off = malloc((size_t)(P + 1) * sizeof(int64_t));
        if (!sc || !off) {
            fprintf(stderr, "kport-check: out of memory\n");
            return 2;
        }
        kp_sim_split_blocks(P, sizes[0], elem, 1, off);
        const int rt = root < 0 ? 0 : root;
        for (int r = 0; r < P && !rc; r++) {
            const int ip = inplace_only == 1 && (coll != KP_COLL_REDUCE || r == rt);
            if (kp_algo_build_red_on(algos[0], &prms[0], &L, r, P, sizes[0], rt, ip, elem, commute,
                                     coll == KP_COLL_REDUCE_SCATTER ? off : NULL, &sc[r])) {
                fprintf(stderr, "kport-check: rank %d: refused: %s\n", r, sc[r].errmsg);
                rc = 1;
            }
        }
        if (!rc && dump)
            for (int r = 0; r < P; r++)
                kp_sched_dump(&sc[r], stdout);
        if (!rc && goal) {
            FILE *f = strcmp(goal, "-") ? fopen(goal, "w") : stdout;
            if (!f) {
                perror(goal);
                rc = 1;
            } else {
                kp_goal_write(sc, P, f);
                if (f != stdout)
                    fclose(f);
            }
        }
        for (int r = 0; r < P; r++)
            kp_sched_free(&sc[r]);
        free(sc);
        free(off);
        kp_layout_free(&L);
        return rc;
    }

    if (predict)
        return predict_all(predict, coll, algos, prms, n, plo, phi, sizes, nsizes, node_size, map, cma, root,
                           inplace_only == 1, rules, elem, commute);

    long checked = 0, refused = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        char name[64];
        kp_algo_format(algos[i], &prms[i], name, sizeof(name));
        long a_ok = 0, a_ref = 0;
        for (int P = plo; P <= phi; P++) {
            kp_layout L;
            if (layout_for(P, node_size, map, cma, &L)) {
                fprintf(stderr, "kport-check: bad node layout for P=%d\n", P);
                return 2;
            }
            int rlo = root >= 0 ? root : 0, rhi = root >= 0 ? root : is_rooted(coll) ? P - 1 : 0;
            if (rhi >= P)
                rlo = rhi = P - 1;
            int64_t *off = malloc((size_t)(P + 1) * sizeof(int64_t));
            if (!off) {
                fprintf(stderr, "kport-check: out of memory\n");
                return 2;
            }
            for (int rt = rlo; rt <= rhi; rt++)
                for (int b = 0; b < nsizes; b++)
                    for (int ip = 0; ip < 2; ip++)
                        for (int split = 0; split < (coll == KP_COLL_REDUCE_SCATTER ? 2 : 1); split++) {
                            if ((inplace_only >= 0 && ip != inplace_only) || (coll == KP_COLL_BARRIER && ip))
                                continue;
                            kp_check_result res;
                            kp_sim_split_blocks(P, sizes[b], elem, split, off);
                            kp_check_red_on(algos[i], &prms[i], &L, P, sizes[b], rt, ip, elem, commute,
                                            coll == KP_COLL_REDUCE_SCATTER ? off : NULL, &res);
                            if (res.refused) {
                                a_ref++;
                                if (verbose && b == 0 && ip == 0 && rt == rlo && !split)
                                    printf("  %s P=%d refused: %s\n", name, P, res.msg);
                            } else if (res.ok) {
                                a_ok++;
                            } else {
                                failed++;
                                printf("FAIL %s %s P=%d bytes=%lld root=%d elem=%lld%s%s%s: %s\n", colls[coll],
                                       name, P, (long long)sizes[b], rt, (long long)elem, ip ? " in-place" : "",
                                       coll == KP_COLL_REDUCE_SCATTER ? (split ? " uneven" : " even") : "",
                                       commute ? "" : " non-commutative", res.msg);
                            }
                        }
            free(off);
            kp_layout_free(&L);
        }
        printf("%-32s %6ld correct, %6ld refused\n", name, a_ok, a_ref);
        checked += a_ok;
        refused += a_ref;
    }
    printf("%ld passed, %ld failed (%ld refused combinations)\n", checked, failed, refused);
    return failed ? 1 : 0;
}
