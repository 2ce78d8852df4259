/*
 * test_calibrate: the calibrated default choice (src/select/calibrate.c)
 * under real MPI.
 *
 *   test_calibrate [--expect-fixed]
 *
 * For all-gather, all-to-all and gather, at every power-of-two size from
 * 1 B to 1 MiB, on MPI_COMM_WORLD and on a communicator with the ranks
 * reversed:
 *   - the result is right (every byte against a formula);
 *   - every rank ran the same algorithm (kp_last_algorithm gathered);
 *   - every rank holds the same agreed costs, byte for byte, even when the
 *     ranks measured differently (run it with KPORT_CALIBRATE_SKEW, which
 *     scales each rank's own measurements by its rank, and with emulated
 *     nodes, which measure separately);
 *   - the algorithm that ran is the cost model's pick with those costs
 *     (kp_model_pick) where the calibrated choice applies, else the fixed
 *     rules' (kp_select_auto);
 *   - --expect-fixed (with KPORT_CALIBRATE=0): nothing was calibrated and
 *     the fixed rules chose everywhere.
 * Prints the calibration's cost on rank 0 and "test_calibrate: N passed,
 * M failed".
 */
#include "core/core.h"
#include "topo/topo.h"
#include "kport.h"
#include "common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, npass, nfail;

static void check(const char *what, long bad)
{
    kt_check_world("test_calibrate", what, bad, &npass, &nfail);
}

static unsigned char V(int src, int dst, long i)
{
    return (unsigned char)(src * 37 + dst * 11 + i * 7 + (i >> 9));
}

/* "name:k=2 (...)" -> "name" */
static void base_name(const char *full, char *out, size_t n)
{
    snprintf(out, n, "%s", full);
    out[strcspn(out, ": (")] = '\0';
}

static long one(MPI_Comm comm, int coll, long bytes, unsigned char *sb, unsigned char *rb, int fixed)
{
    int me, P;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &P);
    if (P < 1 || bytes < 1)
        return 1;
    const int a2a = coll == KP_COLL_ALLTOALL;
    for (int d = 0; d < (a2a ? P : 1); d++)
        for (long i = 0; i < bytes; i++)
            sb[d * bytes + i] = V(me, a2a ? d : 0, i);
    memset(rb, 0xee, (size_t)P * (size_t)bytes);
    int rc = coll == KP_COLL_ALLGATHER ? kp_allgather(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, comm)
             : a2a                     ? kp_alltoall(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, comm)
                                       : kp_gather(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, 0, comm);
    long bad = rc != KP_SUCCESS;
    if (rc)
        fprintf(stderr, "rank %d: %s\n", wrank, kp_last_error());
    if (!rc && (coll != KP_COLL_GATHER || me == 0))
        for (int s = 0; s < P; s++)
            for (long i = 0; i < bytes; i++)
                bad += rb[s * bytes + i] != V(s, a2a ? me : 0, i);
    /* the same algorithm on every rank */
    char mine[64], *all = malloc((size_t)P * 64);
    snprintf(mine, sizeof(mine), "%s", kp_last_algorithm(coll));
    MPI_Allgather(mine, 64, MPI_CHAR, all, 64, MPI_CHAR, comm);
    for (int r = 0; r < P; r++)
        bad += strcmp(all + 64 * r, mine) != 0;
    free(all);
    /* the model's pick with the agreed costs, or the fixed rules' */
    kp_comm *c;
    if (kp_comm_get(comm, &c) == KP_SUCCESS) {
        kp_choice ch;
        memset(&ch, 0, sizeof(ch));
        int model = !fixed && kp_calibrated_choice(c, coll, bytes, 0, 0, &ch);
        if (!model)
            kp_select_auto(coll, &c->layout, c->size, bytes, &ch);
        char ran[64];
        base_name(mine, ran, sizeof(ran));
        if (strcmp(ran, ch.algo->name) != 0) {
            bad++;
            fprintf(stderr, "rank %d: coll %d bytes %ld ran %s, expected %s (%s)\n", wrank, coll, bytes, mine,
                    ch.algo->name, model ? "model" : "rules");
        }
        if (fixed)
            bad += c->calibrated != 0;
        /* the agreed costs, identical everywhere */
        double w[32] = {0}, *allw = malloc((size_t)P * sizeof(w));
        bad += kp_calibration_words(c, w, 32) < 12; /* at least fixed + per byte of 6 operations */
        MPI_Allgather(w, 32, MPI_DOUBLE, allw, 32, MPI_DOUBLE, comm);
        for (int r = 0; r < P; r++)
            bad += memcmp(allw + 32 * r, w, sizeof(w)) != 0;
        free(allw);
    } else {
        bad++;
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const int fixed = argc > 1 && strcmp(argv[1], "--expect-fixed") == 0;
    const long maxb = 1 << 20;
    unsigned char *sb = malloc((size_t)(P * maxb)), *rb = malloc((size_t)(P * maxb));
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - wrank, &rev);
    const MPI_Comm comms[2] = {MPI_COMM_WORLD, rev};
    static const char *cname[] = {"allgather", "barrier", "gather", "alltoall"};
    const int colls[3] = {KP_COLL_ALLGATHER, KP_COLL_ALLTOALL, KP_COLL_GATHER};
    for (int k = 0; k < 2; k++)
        for (int ci = 0; ci < 3; ci++) {
            long bad = 0;
            for (long b = 1; b <= maxb; b *= 2)
                bad += one(comms[k], colls[ci], b, sb, rb, fixed);
            char what[96];
            snprintf(what, sizeof(what), "%s on %s: data, same algorithm and costs everywhere, the expected choice",
                     cname[colls[ci]], k ? "reversed ranks" : "MPI_COMM_WORLD");
            check(what, bad);
        }
    kp_comm *c;
    if (kp_comm_get(MPI_COMM_WORLD, &c) == KP_SUCCESS && wrank == 0)
        printf("test_calibrate: calibrated=%d, calibration took %.0f us on this rank\n", c->calibrated,
               kp_calibration_cost_ns() / 1000);
    MPI_Comm_free(&rev);
    if (wrank == 0)
        printf("test_calibrate: %d passed, %d failed\n", npass, nfail);
    free(sb);
    free(rb);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
