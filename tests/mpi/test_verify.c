/*
 * test_verify: the calibrated choice checked by measurement
 * (src/select/verify.c) under real MPI, with the measured times replaced
 * by KPORT_VERIFY_FAKE (so the outcome does not depend on the machine).
 *
 *   test_verify
 *
 * Needs the calibrated choice between two priced candidates: one node, at
 * least two ranks, not more ranks than cores, cross-memory attach working;
 * elsewhere it exits 77 (skipped). For all-gather, all-to-all and gather
 * at 64 KiB per block, in phases of calls, every call's result checked
 * byte for byte against a formula and the algorithm that ran gathered from
 * every rank (all must agree at every call):
 *   1. no fake: the first KP_FIRST calls run the model's pick;
 *   2. fake "other 2x faster" on every rank: once a trial and its
 *      confirmation have run, every later call runs the other candidate;
 *   3. fake "the pick 2x faster": a later trial brings the pick back;
 *   4. the ranks disagree (rank 0: the other faster, rank 1: the pick
 *      faster): MPI_MAX makes both 100 us, a tie, so nothing changes, on
 *      every rank.
 * Prints "test_verify: N passed, M failed".
 */
#include "core/core.h"
#include "kport.h"
#include "common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KP_FIRST 16 /* select/verify.c: KP_VERIFY_FIRST */

static int wrank, wsize, npass, nfail;

static void check(const char *what, long bad)
{
    kt_check_world("test_verify", what, bad, &npass, &nfail);
}

static unsigned char V(int src, int dst, long i, int call)
{
    return (unsigned char)(src * 37 + dst * 11 + i * 7 + (i >> 9) + call * 3);
}

/* one call of coll with blocks of m bytes, its data checked; the name of
 * what ran in `ran` (the same on every rank, or a failure counted) */
static long one(int coll, long m, int call, unsigned char *sb, unsigned char *rb, char *ran, size_t n)
{
    const int P = wsize, me = wrank;
    long bad = 0;
    int rc = KP_SUCCESS;
    if (coll == KP_COLL_ALLTOALL) {
        for (int d = 0; d < P; d++)
            for (long i = 0; i < m; i++)
                sb[(long)d * m + i] = V(me, d, i, call);
        memset(rb, 0xEE, (size_t)(P * m));
        rc = kp_alltoall(sb, m, MPI_BYTE, rb, m, MPI_BYTE, MPI_COMM_WORLD);
        for (int s = 0; s < P; s++)
            for (long i = 0; i < m; i++)
                bad += rb[(long)s * m + i] != V(s, me, i, call);
    } else {
        for (long i = 0; i < m; i++)
            sb[i] = V(me, 0, i, call);
        memset(rb, 0xEE, (size_t)(P * m));
        if (coll == KP_COLL_ALLGATHER)
            rc = kp_allgather(sb, m, MPI_BYTE, rb, m, MPI_BYTE, MPI_COMM_WORLD);
        else
            rc = kp_gather(sb, m, MPI_BYTE, rb, m, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (coll == KP_COLL_ALLGATHER || me == 0)
            for (int s = 0; s < P; s++)
                for (long i = 0; i < m; i++)
                    bad += rb[(long)s * m + i] != V(s, 0, i, call);
    }
    if (rc != KP_SUCCESS) {
        printf("test_verify: rank %d call %d: %s\n", me, call, kp_last_error());
        bad++;
    }
    const char *nm = kp_last_algorithm((enum kp_coll)coll);
    char mine[64] = {0}, *all = malloc(64 * (size_t)P);
    snprintf(mine, sizeof mine, "%s", nm ? nm : "?");
    MPI_Allgather(mine, 64, MPI_CHAR, all, 64, MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 1; r < P; r++)
        bad += strcmp(all, all + 64 * r) != 0;
    snprintf(ran, n, "%s", mine);
    free(all);
    return bad;
}

/* n calls from *call on; how many of the k-th, from <= k < to, ran `name` */
static long run(int coll, long m, int *call, int n, unsigned char *sb, unsigned char *rb, const char *name,
                int from, int to, long *bad)
{
    long hits = 0;
    char ran[64];
    for (int k = 0; k < n; k++, (*call)++) {
        *bad += one(coll, m, *call, sb, rb, ran, sizeof ran);
        ran[strcspn(ran, ": (")] = '\0'; /* "shm_flat:chunk_kb=0" -> "shm_flat" */
        if (k >= from && k < to && strcmp(ran, name) == 0)
            hits++;
    }
    return hits;
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    const long m = 65536;
    unsigned char *sb = malloc((size_t)(wsize * m)), *rb = malloc((size_t)(wsize * m));
    const int colls[3] = {KP_COLL_ALLGATHER, KP_COLL_ALLTOALL, KP_COLL_GATHER};
    int skipped = 0;
    for (int ci = 0; ci < 3 && !skipped; ci++) {
        const int coll = colls[ci];
        int call = 0;
        long bad = 0;
        char pick[64];
        unsetenv("KPORT_VERIFY_FAKE");
        bad += one(coll, m, call++, sb, rb, pick, sizeof pick);
        pick[strcspn(pick, ": (")] = '\0';
        kp_comm *c = NULL;
        kp_comm_get(MPI_COMM_WORLD, &c);
        int have = c && c->alt[coll] != NULL, all = 0;
        MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) { /* no calibrated choice between two candidates here */
            skipped = 1;
            break;
        }
        char other[64];
        snprintf(other, sizeof other, "%s", c->alt[coll]->name);
        /* 1: the model's pick until the first trial */
        long h = run(coll, m, &call, KP_FIRST - 1, sb, rb, pick, 0, KP_FIRST, &bad);
        char what[160];
        snprintf(what, sizeof what, "coll %d phase 1: %s in every call before the first trial", coll, pick);
        check(what, (KP_FIRST - 1 - h) + bad);
        bad = 0;
        /* 2 (calls 16-75): the other candidate 2x faster: the trial
         * (calls 16-23) says change, its confirmation (32-39) agrees, and
         * calls 40-103 run the other one */
        setenv("KPORT_VERIFY_FAKE", "100000,50000", 1);
        h = run(coll, m, &call, 60, sb, rb, other, 25, 60, &bad);
        snprintf(what, sizeof what, "coll %d phase 2: %s after the confirmed trial", coll, other);
        check(what, (35 - h) + bad);
        bad = 0;
        /* 3 (calls 76-195): the pick 2x faster: the next trial (104-111)
         * and its confirmation (120-127, the pick's block 124-127) bring
         * it back for calls 124-191 */
        setenv("KPORT_VERIFY_FAKE", "50000,100000", 1);
        h = run(coll, m, &call, 120, sb, rb, pick, 50, 110, &bad);
        snprintf(what, sizeof what, "coll %d phase 3: %s again after a later trial", coll, pick);
        check(what, (60 - h) + bad);
        bad = 0;
        /* 4 (calls 196-595): the ranks disagree, the maximum over ranks is
         * a tie, and every call but the other candidate's blocks of the
         * trials (328-331, 592-595) runs the pick */
        setenv("KPORT_VERIFY_FAKE", "100000,50000;50000,100000", 1);
        h = run(coll, m, &call, 400, sb, rb, pick, 0, 400, &bad);
        snprintf(what, sizeof what, "coll %d phase 4: ranks disagree, %s kept outside trials", coll, pick);
        check(what, (h != 400 - 2 * 4) + bad);
    }
    unsetenv("KPORT_VERIFY_FAKE");
    int rc = 0;
    if (skipped) {
        if (wrank == 0)
            printf("test_verify: skipped (no calibrated choice between two candidates: one node, P <= cores, "
                   "cross-memory attach)\n");
        rc = 77;
    } else {
        if (wrank == 0)
            printf("test_verify: %d passed, %d failed\n", npass, nfail);
        rc = nfail ? 1 : 0;
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return rc;
}
