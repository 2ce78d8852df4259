/*
 * halo: a 3-D 7-point stencil with halo exchange by strided puts, checked
 * against the same stencil computed serially.
 *
 *   mpirun -np P halo [-g NX,NY,NZ] [-s STEPS] [--methods direct,datatype,pack,auto]
 *
 * The periodic NX x NY x NZ grid of doubles is split over a 3-D grid of
 * ranks (MPI_Dims_create); each rank keeps its (lx+2)(ly+2)(lz+2) block
 * with a one-cell halo, z fastest, twice (the step reads one array and
 * writes the other), both in one kport window. After each step every rank
 * puts its six boundary faces into its neighbours' halos of the array just
 * written, then kp_win_barrier. The faces are strided sections:
 *   x faces: lz doubles per row, ly rows              (1 level, long rows)
 *   y faces: lz doubles per row, lx rows               (1 level, long stride)
 *   z faces: ONE double per chunk, ly x lx chunks      (2 levels: packing's case)
 * The stencil u' = (c + xl + xh + yl + yh + zl + zh) / 7 is evaluated in
 * the same order by the serial reference, so results must be bitwise
 * equal. Output per method: "halo grid=.. P=.. dims=.. method=..
 * step_us=<median per step of the max over ranks> put_us=<the six puts>
 * sync_us=<kp_win_barrier> skew_us=<the last rank's arrival at the barrier
 * after the first's> flushes_per_step=<MPI_Win_flush calls, most of
 * any rank> locks=<window locks taken> yields=<waits that gave the CPU
 * away> errors=0"; then
 * "halo: OK" or "halo: FAIL" (exit status 1).
 */
#include <kport.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long NX = 24, NY = 20, NZ = 18;

static double init(long x, long y, long z) { return (double)((x * 13 + y * 7 + z * 3) % 29); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double stencil(double c, double xl, double xh, double yl, double yh, double zl, double zh)
{
    return (c + xl + xh + yl + yh + zl + zh) / 7.0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P, steps = 4;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *methods = "direct,datatype,pack,auto";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-g") && i + 1 < argc) {
            if (sscanf(argv[++i], "%ld,%ld,%ld", &NX, &NY, &NZ) != 3)
                NX = 0;
        } else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            steps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--methods") && i + 1 < argc) {
            methods = argv[++i];
        }
    }
    int dims[3] = {0, 0, 0};
    MPI_Dims_create(P, 3, dims);
    if (NX <= 0 || NY <= 0 || NZ <= 0 || steps < 1 || NX % dims[0] || NY % dims[1] || NZ % dims[2]) {
        if (rank == 0)
            fprintf(stderr, "halo: grid %ld,%ld,%ld must divide over dims %dx%dx%d; steps >= 1\n", NX, NY, NZ, dims[0],
                    dims[1], dims[2]);
        MPI_Finalize();
        return 2;
    }
    int c[3] = {rank / (dims[1] * dims[2]), (rank / dims[2]) % dims[1], rank % dims[2]};
    long lx = NX / dims[0], ly = NY / dims[1], lz = NZ / dims[2];
    long sy = lz + 2, sx = (ly + 2) * (lz + 2);
    size_t cells = (size_t)((lx + 2) * sx);
#define AT(x, y, z) ((x) * sx + (y) * sy + (z))
    void *base;
    kp_win win;
    if (kp_win_create((MPI_Aint)(2 * cells * sizeof(double)), MPI_COMM_WORLD, &base, &win) != KP_SUCCESS) {
        fprintf(stderr, "halo: %s\n", kp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *arr[2] = {base, (double *)base + cells};
    /* neighbours: rank of coordinates c + d (periodic) */
    int nb[3][2];
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            int cc[3] = {c[0], c[1], c[2]};
            cc[d] = (cc[d] + (s ? 1 : dims[d] - 1)) % dims[d];
            nb[d][s] = (cc[0] * dims[1] + cc[1]) * dims[2] + cc[2];
        }
    /* faces: (origin cell, target cell) for d and side s (s = 0: my low
     * face goes to the low neighbour's high halo) */
    MPI_Aint count[3][3] = {{lz * 8, ly, 0}, {lz * 8, lx, 0}, {8, ly, lx}};
    MPI_Aint stride[3][2] = {{sy * 8, 0}, {sx * 8, 0}, {sy * 8, sx * 8}};
    int levels[3] = {1, 1, 2};
    long from[3][2] = {{AT(1, 1, 1), AT(lx, 1, 1)}, {AT(1, 1, 1), AT(1, ly, 1)}, {AT(1, 1, 1), AT(1, 1, lz)}};
    long to[3][2] = {{AT(lx + 1, 1, 1), AT(0, 1, 1)}, {AT(1, ly + 1, 1), AT(1, 0, 1)}, {AT(1, 1, lz + 1), AT(1, 1, 0)}};

    /* the serial reference: the whole periodic grid */
    size_t G = (size_t)(NX * NY * NZ);
    double *g0 = malloc(G * sizeof(double)), *g1 = malloc(G * sizeof(double));
#define GI(x, y, z) ((((x) + NX) % NX) * NY * NZ + (((y) + NY) % NY) * NZ + (((z) + NZ) % NZ))
    for (long x = 0; x < NX; x++)
        for (long y = 0; y < NY; y++)
            for (long z = 0; z < NZ; z++)
                g0[GI(x, y, z)] = init(x, y, z);
    for (int t = 0; t < steps; t++) {
        for (long x = 0; x < NX; x++)
            for (long y = 0; y < NY; y++)
                for (long z = 0; z < NZ; z++)
                    g1[GI(x, y, z)] = stencil(g0[GI(x, y, z)], g0[GI(x - 1, y, z)], g0[GI(x + 1, y, z)],
                                              g0[GI(x, y - 1, z)], g0[GI(x, y + 1, z)], g0[GI(x, y, z - 1)],
                                              g0[GI(x, y, z + 1)]);
        double *tmp = g0;
        g0 = g1;
        g1 = tmp;
    }

    int fail = 0;
    char list[256];
    snprintf(list, sizeof(list), "%s", methods);
    for (char *m = strtok(list, ","); m; m = strtok(NULL, ",")) {
        if (kp_strided_set_method(m) != KP_SUCCESS) {
            if (rank == 0)
                fprintf(stderr, "halo: %s\n", kp_last_error());
            fail = 1;
            continue;
        }
        int rc = KP_SUCCESS;
        for (long x = 0; x < lx + 2; x++)
            for (long y = 0; y < ly + 2; y++)
                for (long z = 0; z < lz + 2; z++) {
                    long gx = c[0] * lx + x - 1, gy = c[1] * ly + y - 1, gz = c[2] * lz + z - 1;
                    arr[0][AT(x, y, z)] = init((gx + NX) % NX, (gy + NY) % NY, (gz + NZ) % NZ);
                    arr[1][AT(x, y, z)] = -1.0;
                }
        kp_win_barrier(win);
        kp_strided_counters_reset(win);
        double *times = malloc(sizeof(double) * (size_t)steps * 4), *tput = times + steps, *tsync = tput + steps,
               *tskew = tsync + steps;
        int cur = 0;
        for (int t = 0; t < steps; t++) {
            double t0 = MPI_Wtime();
            double *u = arr[cur], *v = arr[1 - cur];
            for (long x = 1; x <= lx; x++)
                for (long y = 1; y <= ly; y++)
                    for (long z = 1; z <= lz; z++)
                        v[AT(x, y, z)] = stencil(u[AT(x, y, z)], u[AT(x - 1, y, z)], u[AT(x + 1, y, z)],
                                                 u[AT(x, y - 1, z)], u[AT(x, y + 1, z)], u[AT(x, y, z - 1)],
                                                 u[AT(x, y, z + 1)]);
            double t1 = MPI_Wtime();
            MPI_Aint off = (MPI_Aint)((1 - cur) * cells * sizeof(double));
            for (int d = 0; d < 3 && rc == KP_SUCCESS; d++)
                for (int s = 0; s < 2 && rc == KP_SUCCESS; s++)
                    rc = kp_put_strided(v + from[d][s], stride[d], off + to[d][s] * 8, stride[d], count[d], levels[d],
                                        nb[d][s], win);
            double t2 = MPI_Wtime(), arrive = mono();
            int r2 = kp_win_barrier(win);
            if (rc == KP_SUCCESS)
                rc = r2;
            double t3 = MPI_Wtime();
            /* skew: how much later the last rank reached the barrier than
             * the first, what a barrier must wait anyway (CLOCK_MONOTONIC:
             * one clock on one machine; MPI_Wtime's origin is per process) */
            double dt[5] = {t3 - t0, t2 - t1, t3 - t2, arrive, -arrive}, mx[5];
            MPI_Allreduce(dt, mx, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            tskew[t] = mx[3] + mx[4];
            times[t] = mx[0];
            tput[t] = mx[1];
            tsync[t] = mx[2];
            cur = 1 - cur;
        }
        kp_strided_counters cnt;
        kp_strided_counters_get(win, &cnt);
        long long mine[3] = {cnt.data_flushes + cnt.pool_flushes, cnt.locks, cnt.yields}, most[3];
        MPI_Allreduce(mine, most, 3, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        long errors = 0;
        for (long x = 1; x <= lx; x++)
            for (long y = 1; y <= ly; y++)
                for (long z = 1; z <= lz; z++)
                    errors += arr[cur][AT(x, y, z)] != g0[GI(c[0] * lx + x - 1, c[1] * ly + y - 1, c[2] * lz + z - 1)];
        long all = 0;
        MPI_Allreduce(&errors, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        int anyrc = 0;
        MPI_Allreduce(&rc, &anyrc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        qsort(times, (size_t)steps, sizeof(double), cmp_double);
        qsort(tput, (size_t)steps, sizeof(double), cmp_double);
        qsort(tsync, (size_t)steps, sizeof(double), cmp_double);
        qsort(tskew, (size_t)steps, sizeof(double), cmp_double);
        if (rank == 0)
            printf("halo grid=%ldx%ldx%ld P=%d dims=%dx%dx%d method=%s step_us=%.2f put_us=%.2f sync_us=%.2f "
                   "skew_us=%.2f flushes_per_step=%.1f locks=%lld yields=%lld errors=%ld%s\n",
                   NX, NY, NZ, P, dims[0], dims[1], dims[2], m, times[steps / 2] * 1e6, tput[steps / 2] * 1e6,
                   tsync[steps / 2] * 1e6, tskew[steps / 2] * 1e6, (double)most[0] / steps, most[1], most[2], all,
                   anyrc ? " (a call failed)" : "");
        if (all || anyrc)
            fail = 1;
        free(times);
    }
    if (rank == 0)
        printf("halo: %s\n", fail ? "FAIL" : "OK");
    kp_win_free(&win);
    free(g0);
    free(g1);
    MPI_Finalize();
    return fail;
}
