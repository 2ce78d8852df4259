/*
 * What kp_allgather runs, size by size, under whatever selection the
 * environment sets up (KPORT_TUNING_FILE, KPORT_ALLGATHER, ...); driven by
 * tests/tune/check_tune.py.
 *
 *   mpirun -np P test_tuning_run -m 1,8,4096 [-r 2]
 *
 * Every size runs -r rounds (default 2), the sizes interleaved (1, 8, 4096,
 * 1, 8, 4096): the plan cache and the fast path of a repeated call see
 * sizes come back. Every call's receive buffer is compared byte for byte
 * with the formula (byte j of rank r's block of size s: (r * 131 + j * 7 +
 * s) mod 251), guard bytes after it included, and kp_last_algorithm() must
 * name the same algorithm in every round. Rank 0 prints one line per size,
 *   "size 8: bruck:k=1"
 * then "N passed, M failed" (every rank's checks); exit code 1 on a failure.
 */
#include "kport.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define MAX_SIZES 64

static unsigned char val(int r, long long j, long long s)
{
    return (unsigned char)(((long long)r * 131 + j * 7 + s) % 251);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long long sizes[MAX_SIZES];
    int nsizes = 0, rounds = 2;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) {
            for (char *tok = strtok(argv[++i], ","); tok && nsizes < MAX_SIZES; tok = strtok(NULL, ","))
                sizes[nsizes++] = atoll(tok);
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else {
            if (rank == 0)
                fprintf(stderr, "usage: test_tuning_run -m SIZE,SIZE,... [-r ROUNDS]\n");
            MPI_Finalize();
            return 2;
        }
    }
    long passed = 0, failed = 0;
    char names[MAX_SIZES][128];
    for (int z = 0; z < nsizes; z++)
        names[z][0] = '\0';
    for (int round = 0; round < rounds; round++) {
        for (int z = 0; z < nsizes; z++) {
            const long long s = sizes[z];
            unsigned char *sb = malloc((size_t)s + 1), *rb = malloc((size_t)(s * P + GUARD));
            if (!sb || !rb) {
                fprintf(stderr, "[rank %d] out of memory at size %lld\n", rank, s);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            for (long long j = 0; j < s; j++)
                sb[j] = val(rank, j, s);
            memset(rb, 0xEE, (size_t)(s * P + GUARD));
            int rc = kp_allgather(sb, s, MPI_BYTE, rb, s, MPI_BYTE, MPI_COMM_WORLD);
            if (rc != KP_SUCCESS) {
                failed++;
                fprintf(stderr, "[rank %d] size %lld: kp_allgather returned %d: %s\n", rank, s, rc, kp_last_error());
            } else {
                long long bad = 0, first = -1;
                for (int r = 0; r < P; r++)
                    for (long long j = 0; j < s; j++)
                        if (rb[r * s + j] != val(r, j, s) && bad++ == 0)
                            first = r * s + j;
                for (long long j = 0; j < GUARD; j++)
                    if (rb[s * P + j] != 0xEE && bad++ == 0)
                        first = s * P + j;
                const char *ran = kp_last_algorithm(KP_COLL_ALLGATHER);
                if (bad) {
                    failed++;
                    fprintf(stderr, "[rank %d] size %lld (%s): %lld wrong bytes, the first at offset %lld\n", rank,
                            s, ran, bad, first);
                } else {
                    passed++;
                }
                if (round == 0) {
                    snprintf(names[z], sizeof names[z], "%s", ran);
                } else if (strcmp(names[z], ran) != 0) {
                    failed++;
                    fprintf(stderr, "[rank %d] size %lld: round %d ran %s, round 0 ran %s\n", rank, s, round, ran,
                            names[z]);
                } else {
                    passed++;
                }
            }
            free(sb);
            free(rb);
        }
    }
    if (rank == 0)
        for (int z = 0; z < nsizes; z++)
            printf("size %lld: %s\n", sizes[z], names[z]);
    long tot[2] = {passed, failed}, sum[2];
    MPI_Allreduce(tot, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%ld passed, %ld failed\n", sum[0], sum[1]);
        fflush(stdout);
    }
    MPI_Finalize();
    return sum[1] ? 1 : 0;
}
