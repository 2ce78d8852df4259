/*
 * srumma: SRUMMA dense matrix multiply C = A * B on strided one-sided gets
 * (Krishnan and Nieplocha; the paper's section 6.4), over kport and, when
 * built with ARMCI-MPI, over ARMCI_NbGetS for comparison.
 *
 *   mpirun -np P srumma [-n N] [-r REPS] [--methods direct,datatype,pack,auto,armci]
 *
 * A, B and C are N x N doubles, block-distributed over a pr x pc grid of
 * ranks (pr the largest divisor of P not above sqrt(P)); rank (i, j) holds
 * the (N/pr) x (N/pc) blocks A(i,j), B(i,j), C(i,j), row-major, in its
 * window. C(i,j) = sum over inner chunks k of width kb = gcd(N/pr, N/pc):
 * A(i, k) is a strided section of one rank's A block (kb doubles of each
 * of N/pr rows), B(k, j) a block of rows of one rank's B block. Each rank
 * gets chunk k+1 (nonblocking kp_iget_strided into the other of two
 * buffers) while it multiplies chunk k: communication overlaps computation.
 *
 * Check: A(r,c) = (7r + 3c) mod 11 - 5, B(r,c) = (5r + 2c) mod 13 - 6 are
 * small integers, so every product and sum is exact; each rank compares
 * its C block with a serial product element by element (any difference
 * fails). Output: one line per method, "srumma N=.. P=.. grid=..x..
 * method=.. time_ms=<median over REPS of the max over ranks> gflops=..
 * errors=0", then "srumma: OK" or "srumma: FAIL"; exit status 1 on failure.
 */
#include <kport.h>

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef KPORT_HAVE_ARMCI
#include <armci.h>
#endif

static double aval(long r, long c) { return (double)((7 * r + 3 * c) % 11 - 5); }
static double bval(long r, long c) { return (double)((5 * r + 2 * c) % 13 - 6); }

static long gcd(long a, long b) { return b ? gcd(b, a % b) : a; }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct grid {
    int P, rank, pr, pc, gi, gj;
    long n, br, bc, kb; /* block rows, block cols, inner chunk */
} grid;

/* where inner chunk k (columns k*kb..) of A row-block gi lives, and B's */
static void a_src(const grid *g, long k, int *rank, MPI_Aint *disp)
{
    long col = k * g->kb;
    *rank = g->gi * g->pc + (int)(col / g->bc);
    *disp = (MPI_Aint)((col % g->bc) * 8);
}

static void b_src(const grid *g, long k, int *rank, MPI_Aint *disp)
{
    long row = k * g->kb;
    *rank = (int)(row / g->br) * g->pc + g->gj;
    *disp = (MPI_Aint)(g->br * g->bc * 8 + (row % g->br) * g->bc * 8);
}

/* c[br x bc] += a[br x kb] * b[kb x bc] */
static void mult(const grid *g, const double *a, const double *b, double *c)
{
    for (long i = 0; i < g->br; i++)
        for (long k = 0; k < g->kb; k++) {
            double x = a[i * g->kb + k];
            const double *brow = b + k * g->bc;
            double *crow = c + i * g->bc;
            for (long j = 0; j < g->bc; j++)
                crow[j] += x * brow[j];
        }
}

/* one multiplication; method < 0: ARMCI */
static int multiply(const grid *g, kp_win win, void **armci_base, int armci, double *c, double *buf[2][2])
{
    long nk = g->n / g->kb;
    memset(c, 0, sizeof(double) * (size_t)(g->br * g->bc));
    MPI_Aint acount[2] = {g->kb * 8, g->br}, ast[1] = {g->bc * 8}, alst[1] = {g->kb * 8};
    MPI_Aint bcount[2] = {g->bc * 8 * g->kb, 1}, bst[1] = {0};
    kp_request req[2][2] = {{KP_REQUEST_NULL, KP_REQUEST_NULL}, {KP_REQUEST_NULL, KP_REQUEST_NULL}};
#ifdef KPORT_HAVE_ARMCI
    armci_hdl_t h[2][2];
#endif
    (void)armci_base;
    int rc = KP_SUCCESS;
    for (long k = 0; k <= nk && rc == KP_SUCCESS; k++) {
        if (k < nk) { /* start chunk k into buffer k % 2 */
            int ar, br_;
            MPI_Aint ad, bd;
            a_src(g, k, &ar, &ad);
            b_src(g, k, &br_, &bd);
            double *da = buf[k % 2][0], *db = buf[k % 2][1];
            if (!armci) {
                rc = kp_iget_strided(da, alst, ad, ast, acount, 1, ar, win, &req[k % 2][0]);
                if (rc == KP_SUCCESS)
                    rc = kp_iget_strided(db, bst, bd, bst, bcount, 0, br_, win, &req[k % 2][1]);
            }
#ifdef KPORT_HAVE_ARMCI
            else {
                int ac[2] = {(int)acount[0], (int)acount[1]}, as[1] = {(int)ast[0]}, als[1] = {(int)alst[0]};
                int bc[1] = {(int)bcount[0]}, bs[1] = {0};
                ARMCI_INIT_HANDLE(&h[k % 2][0]);
                ARMCI_INIT_HANDLE(&h[k % 2][1]);
                ARMCI_NbGetS((char *)armci_base[ar] + ad, as, da, als, ac, 1, ar, &h[k % 2][0]);
                ARMCI_NbGetS((char *)armci_base[br_] + bd, bs, db, bs, bc, 0, br_, &h[k % 2][1]);
            }
#endif
        }
        if (k > 0) { /* finish chunk k-1 and multiply it while chunk k flies */
            int p = (int)((k - 1) % 2);
            if (!armci) {
                if (rc == KP_SUCCESS)
                    rc = kp_wait(&req[p][0]);
                if (rc == KP_SUCCESS)
                    rc = kp_wait(&req[p][1]);
            }
#ifdef KPORT_HAVE_ARMCI
            else {
                ARMCI_Wait(&h[p][0]);
                ARMCI_Wait(&h[p][1]);
            }
#endif
            mult(g, buf[p][0], buf[p][1], c);
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    grid g;
    memset(&g, 0, sizeof(g));
    MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g.P);
    g.n = 256;
    int reps = 3;
    const char *methods = "direct,datatype,pack,auto,armci";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            g.n = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--methods") && i + 1 < argc)
            methods = argv[++i];
    }
    for (g.pr = 1; (long)(g.pr + 1) * (g.pr + 1) <= g.P; g.pr++)
        ;
    while (g.P % g.pr)
        g.pr--;
    g.pc = g.P / g.pr;
    g.gi = g.rank / g.pc;
    g.gj = g.rank % g.pc;
    if (g.n <= 0 || reps <= 0 || g.n % g.pr || g.n % g.pc) {
        if (g.rank == 0)
            fprintf(stderr, "srumma: N = %ld must be positive and divisible by the grid %dx%d; REPS >= 1\n", g.n,
                    g.pr, g.pc);
        MPI_Finalize();
        return 2;
    }
    g.br = g.n / g.pr;
    g.bc = g.n / g.pc;
    g.kb = gcd(g.br, g.bc);
    size_t blk = (size_t)(g.br * g.bc);
    MPI_Aint wbytes = (MPI_Aint)(2 * blk * sizeof(double));
    void *base;
    kp_win win;
    if (kp_win_create(wbytes, MPI_COMM_WORLD, &base, &win) != KP_SUCCESS) {
        fprintf(stderr, "srumma: %s\n", kp_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *A = base, *B = A + blk;
    for (long i = 0; i < g.br; i++)
        for (long j = 0; j < g.bc; j++) {
            A[i * g.bc + j] = aval(g.gi * g.br + i, g.gj * g.bc + j);
            B[i * g.bc + j] = bval(g.gi * g.br + i, g.gj * g.bc + j);
        }
    kp_win_barrier(win);
    void **armci_base = NULL;
#ifdef KPORT_HAVE_ARMCI
    ARMCI_Init();
    armci_base = malloc(sizeof(void *) * (size_t)g.P);
    ARMCI_Malloc(armci_base, (armci_size_t)wbytes);
    ARMCI_Access_begin(armci_base[g.rank]);
    memcpy(armci_base[g.rank], base, (size_t)wbytes);
    ARMCI_Access_end(armci_base[g.rank]);
    ARMCI_Barrier();
#endif
    /* the serial product of my C block */
    double *ref = calloc(blk, sizeof(double)), *c = malloc(sizeof(double) * blk);
    for (long i = 0; i < g.br; i++)
        for (long k = 0; k < g.n; k++) {
            double x = aval(g.gi * g.br + i, k);
            for (long j = 0; j < g.bc; j++)
                ref[i * g.bc + j] += x * bval(k, g.gj * g.bc + j);
        }
    double *buf[2][2];
    for (int p = 0; p < 2; p++)
        for (int q = 0; q < 2; q++)
            buf[p][q] = malloc(sizeof(double) * (size_t)(g.kb * (g.br > g.bc ? g.br : g.bc)));
    int fail = 0;
    char list[256];
    snprintf(list, sizeof(list), "%s", methods);
    for (char *m = strtok(list, ","); m; m = strtok(NULL, ",")) {
        int armci = !strcmp(m, "armci");
#ifndef KPORT_HAVE_ARMCI
        if (armci) {
            if (g.rank == 0)
                printf("srumma N=%ld P=%d method=armci skipped (built without ARMCI-MPI)\n", g.n, g.P);
            continue;
        }
#endif
        if (!armci && kp_strided_set_method(m) != KP_SUCCESS) {
            if (g.rank == 0)
                fprintf(stderr, "srumma: %s\n", kp_last_error());
            fail = 1;
            continue;
        }
        double *times = malloc(sizeof(double) * (size_t)reps);
        long errors = 0;
        int rc = KP_SUCCESS;
        for (int r = 0; r < reps; r++) {
            if (armci) {
#ifdef KPORT_HAVE_ARMCI
                ARMCI_Barrier();
#endif
            } else {
                kp_win_barrier(win);
            }
            double t0 = MPI_Wtime();
            int rr = multiply(&g, win, armci_base, armci, c, buf);
            double t = MPI_Wtime() - t0;
            if (rr != KP_SUCCESS)
                rc = rr;
            /* other ranks may still be getting from this one: with the pack
             * method that needs this rank's agent, so synchronise through
             * kport (or ARMCI) before a plain MPI collective */
            if (armci) {
#ifdef KPORT_HAVE_ARMCI
                ARMCI_Barrier();
#endif
            } else {
                kp_win_barrier(win);
            }
            MPI_Allreduce(&t, &times[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            for (size_t e = 0; e < blk; e++)
                errors += c[e] != ref[e];
        }
        if (!armci)
            kp_win_barrier(win); /* everyone done reading before the next method */
        long all = 0;
        MPI_Allreduce(&errors, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        int anyrc = 0;
        MPI_Allreduce(&rc, &anyrc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        qsort(times, (size_t)reps, sizeof(double), cmp_double);
        double med = times[reps / 2];
        if (g.rank == 0)
            printf("srumma N=%ld P=%d grid=%dx%d method=%s time_ms=%.3f gflops=%.3f errors=%ld%s\n", g.n, g.P, g.pr,
                   g.pc, m, med * 1e3, 2.0 * (double)g.n * (double)g.n * (double)g.n / med / 1e9, all,
                   anyrc ? " (a call failed)" : "");
        if (all || anyrc)
            fail = 1;
        free(times);
    }
    if (g.rank == 0)
        printf("srumma: %s\n", fail ? "FAIL" : "OK");
#ifdef KPORT_HAVE_ARMCI
    ARMCI_Free(armci_base[g.rank]);
    free(armci_base);
    ARMCI_Finalize();
#endif
    kp_win_free(&win);
    for (int p = 0; p < 2; p++)
        for (int q = 0; q < 2; q++)
            free(buf[p][q]);
    free(ref);
    free(c);
    MPI_Finalize();
    return fail;
}
