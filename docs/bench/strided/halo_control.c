/*
 * Control for examples/halo at -g 64,64,64 on 2 ranks: the same stencil
 * (32 x 64 x 64 cells a rank) and a plain MPI_Barrier per step, no kport,
 * no puts. 400 repetitions of 11 steps; prints the repetitions whose median
 * step exceeds 1 ms. On the shared 2-core machine (load 5) a few percent of
 * them take 4-8 ms (whole 4 ms scheduler ticks): what halo's occasional
 * 10-20 ms steps are, with or without kport.
 *
 *   mpicc -O2 halo_control.c -o halo_control && mpirun -np 2 ./halo_control
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank; MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long lx = 32, ly = 64, lz = 64, sy = lz + 2, sx = (ly + 2) * (lz + 2);
    size_t cells = (size_t)((lx + 2) * sx);
    double *u = calloc(cells, 8), *v = calloc(cells, 8);
    for (int rep = 0; rep < 400; rep++) {
        double t[11];
        for (int s = 0; s < 11; s++) {
            double t0 = MPI_Wtime();
            for (long x = 1; x <= lx; x++) for (long y = 1; y <= ly; y++) for (long z = 1; z <= lz; z++) {
                long i = x * sx + y * sy + z;
                v[i] = (u[i] + u[i - sx] + u[i + sx] + u[i - sy] + u[i + sy] + u[i - 1] + u[i + 1]) / 7.0;
            }
            double t1 = MPI_Wtime();
            MPI_Barrier(MPI_COMM_WORLD);
            double d[2] = {MPI_Wtime() - t0, MPI_Wtime() - t1}, m[2];
            MPI_Allreduce(d, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t[s] = m[0];
            double *tmp = u; u = v; v = tmp;
        }
        qsort(t, 11, 8, cmp);
        if (rank == 0 && (t[5] > 1e-3 || rep % 50 == 0)) printf("rep %d step_us median %.1f max %.1f\n", rep, t[5] * 1e6, t[10] * 1e6);
    }
    MPI_Finalize();
}
