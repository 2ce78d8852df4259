/*
 * allgather_example: the smallest kport program. Every rank contributes
 * `n` ints, kp_allgather collects them on every rank, kp_barrier closes.
 *
 * Build against an installed kport, with CMake (see CMakeLists.txt here):
 *   cmake -S examples -B build-ex -DCMAKE_PREFIX_PATH=<prefix> && cmake --build build-ex
 * or with pkg-config and the MPI compiler wrapper kport was built with:
 *   mpicc allgather_example.c $(pkg-config --cflags --libs kport) -o allgather_example
 * Run:
 *   mpirun -np 2 ./allgather_example
 * Exits 0 when every rank received the right data.
 */
#include <kport.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    const int n = 4; /* ints per rank */
    int mine[4], *all = malloc(sizeof(int) * (size_t)n * (size_t)size);
    if (!all)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < n; i++)
        mine[i] = 100 * rank + i;

    int rc = kp_allgather(mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD);
    if (rc != KP_SUCCESS) {
        fprintf(stderr, "rank %d: kp_allgather: %s (%s)\n", rank, kp_strerror(rc), kp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int wrong = 0;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            wrong += all[r * n + i] != 100 * r + i;

    if ((rc = kp_barrier(MPI_COMM_WORLD)) != KP_SUCCESS) {
        fprintf(stderr, "rank %d: kp_barrier: %s (%s)\n", rank, kp_strerror(rc), kp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int total = 0;
    MPI_Allreduce(&wrong, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("allgather_example: kport %d.%d.%d, %d ranks, algorithm %s: rank 0 received", KPORT_VERSION_MAJOR,
               KPORT_VERSION_MINOR, KPORT_VERSION_PATCH, size, kp_last_algorithm(KP_COLL_ALLGATHER));
        for (int i = 0; i < n * size && i < 16; i++)
            printf(" %d", all[i]);
        printf("%s\nallgather_example: %s (%d wrong values)\n", n * size > 16 ? " ..." : "", total ? "FAILED" : "OK",
               total);
    }
    free(all);
    MPI_Finalize();
    return total ? 1 : 0;
}
