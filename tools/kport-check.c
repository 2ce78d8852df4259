/*
 * kport-check: run the schedule checker (no MPI ranks needed), dump a
 * schedule, or export the GOAL file of a collective.
 *
 *   kport-check allgather                      every algorithm, P 1..64, k 1..8, C 1,2,4,8, bytes 0,1,7,4096
 *   kport-check allgather -a bruck:k=3 -P 5 -b 8 --dump      print the 5 schedules
 *   kport-check allgather -a direct:k=2 -P 16 -b 1024 --goal out.goal
 */
#include "kport.h"
#include "sched/check.h"
#include "sched/goal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: kport-check allgather [-a name[:k=..,C=..]] [-P MIN[:MAX]] [-b BYTES[,BYTES...]]\n"
               "                            [--inplace] [--dump] [--goal FILE] [-v]\n"
               "Checks schedules symbolically. Without -a: every algorithm over k 1..8 / C 1,2,4,8.\n"
               "Exit status 0 when every checked schedule is correct (refusals are listed, not errors).\n");
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

int main(int argc, char **argv)
{
    const char *spec = NULL, *goal = NULL;
    int plo = 1, phi = 64, dump = 0, verbose = 0, inplace_only = -1;
    int64_t sizes[16] = {0, 1, 7, 4096};
    int nsizes = 4;
    if (argc < 2 || strcmp(argv[1], "allgather") != 0) {
        usage(argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? stdout : stderr);
        return argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? 0 : 2;
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
            for (char *t = strtok(argv[++i], ","); t && nsizes < 16; t = strtok(NULL, ","))
                sizes[nsizes++] = atoll(t);
        } else if (!strcmp(argv[i], "--inplace"))
            inplace_only = 1;
        else if (!strcmp(argv[i], "--dump"))
            dump = 1;
        else if (!strcmp(argv[i], "--goal") && i + 1 < argc)
            goal = argv[++i];
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else {
            usage(stderr);
            return 2;
        }
    }

    /* the list of (algorithm, params) to check */
    const kp_algo *algos[256];
    kp_params prms[256];
    int n = 0;
    if (spec) {
        char err[256];
        if (kp_algo_parse(KP_COLL_ALLGATHER, spec, &algos[0], &prms[0], err, sizeof(err)) || !algos[0]) {
            fprintf(stderr, "kport-check: %s\n", algos[0] ? err : "give an algorithm name, not auto");
            return 2;
        }
        n = 1;
    } else {
        static const int Cs[] = {1, 2, 4, 8};
        for (int i = 0; i < kp_algo_count(KP_COLL_ALLGATHER); i++) {
            const kp_algo *a = kp_algo_at(KP_COLL_ALLGATHER, i);
            if (a->params & KP_PARAM_K) {
                for (int k = 1; k <= 8; k++, n++)
                    algos[n] = a, prms[n] = (kp_params){.k = k};
            } else if (a->params & KP_PARAM_C) {
                for (int c = 0; c < 4; c++, n++)
                    algos[n] = a, prms[n] = (kp_params){.C = Cs[c]};
            } else {
                algos[n] = a, prms[n++] = (kp_params){0};
            }
        }
    }

    if (dump || goal) {
        if (plo != phi || nsizes != 1 || n != 1) {
            fprintf(stderr, "kport-check: --dump/--goal need one -a, one -P and one -b\n");
            return 2;
        }
        int P = plo;
        kp_sched *sc = calloc((size_t)P, sizeof(*sc));
        for (int r = 0; r < P; r++) {
            if (kp_algo_build(algos[0], &prms[0], r, P, sizes[0], &sc[r])) {
                fprintf(stderr, "kport-check: rank %d: refused: %s\n", r, sc[r].errmsg);
                return 1;
            }
        }
        if (dump)
            for (int r = 0; r < P; r++)
                kp_sched_dump(&sc[r], stdout);
        if (goal) {
            FILE *f = strcmp(goal, "-") ? fopen(goal, "w") : stdout;
            if (!f) {
                perror(goal);
                return 1;
            }
            kp_goal_write(sc, P, f);
            if (f != stdout)
                fclose(f);
        }
        for (int r = 0; r < P; r++)
            kp_sched_free(&sc[r]);
        free(sc);
        return 0;
    }

    long checked = 0, refused = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        char name[64];
        kp_algo_format(algos[i], &prms[i], name, sizeof(name));
        long a_ok = 0, a_ref = 0;
        for (int P = plo; P <= phi; P++)
            for (int b = 0; b < nsizes; b++)
                for (int ip = 0; ip < 2; ip++) {
                    if (inplace_only >= 0 && ip != inplace_only)
                        continue;
                    kp_check_result res;
                    kp_check_allgather(algos[i], &prms[i], P, sizes[b], ip, &res);
                    if (res.refused) {
                        a_ref++;
                        if (verbose && b == 0 && ip == 0)
                            printf("  %s P=%d refused: %s\n", name, P, res.msg);
                    } else if (res.ok) {
                        a_ok++;
                    } else {
                        failed++;
                        printf("FAIL %s P=%d bytes=%lld%s: %s\n", name, P, (long long)sizes[b],
                               ip ? " in-place" : "", res.msg);
                    }
                }
        printf("%-32s %6ld correct, %6ld refused\n", name, a_ok, a_ref);
        checked += a_ok;
        refused += a_ref;
    }
    printf("%ld passed, %ld failed (%ld refused combinations)\n", checked, failed, refused);
    return failed ? 1 : 0;
}
