/* direct strided put to an on-node target: MPI_Put per row + flush against
 * memcpy per row into the MPI_Win_shared_query pointer + MPI_Win_sync */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me; MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Aint bytes = 8 << 20; char *base; MPI_Win win;
    MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Aint psz; int pdu; char *peer;
    MPI_Win_shared_query(win, 1 - me, &psz, &pdu, &peer);
    char *src = malloc(bytes); memset(src, 7, bytes);
    const int shapes[][2] = {{16, 2}, {64, 8}, {256, 32}, {1024, 128}, {4096, 512}};
    for (int s = 0; s < 5; s++) {
        int c = shapes[s][0], k = shapes[s][1], st = c + 64;
        for (int mode = 0; mode < 2; mode++) {
            double v[200];
            for (int it = -20; it < 200; it++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (me == 0) {
                    if (mode == 0) {
                        for (int r = 0; r < k; r++)
                            MPI_Put(src + (size_t)r * st, c, MPI_BYTE, 1, (MPI_Aint)r * st, c, MPI_BYTE, win);
                        MPI_Win_flush(1, win);
                    } else {
                        for (int r = 0; r < k; r++)
                            memcpy(peer + (size_t)r * st, src + (size_t)r * st, (size_t)c);
                        MPI_Win_sync(win);
                    }
                }
                if (it >= 0) v[it] = MPI_Wtime() - t0;
            }
            qsort(v, 200, sizeof(double), cmp);
            if (me == 0) printf("%5d x %4d  %-12s %8.2f us\n", c, k, mode ? "memcpy+sync" : "MPI_Put", v[100] * 1e6);
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
