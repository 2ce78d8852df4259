/*
 * Control for docs/PERFORMANCE.md ("4 x 1 MiB rows against ARMCI-MPI"):
 * 4 rows of 1 MiB (stride 1 MiB + 64 B), rank 0 to rank 1, on several
 * windows and by several call sequences, in rounds (every variant: W
 * untimed repetitions, then T timed; the variants in a fixed cycle).
 *   kport@K1, kport@K2   kp_put_strided + kp_win_fence / kp_get_strided (direct
 *                        method) on two windows of kp_win_create (MPI_Win_allocate)
 *   armci@A              ARMCI_PutS + ARMCI_Fence / ARMCI_GetS on ARMCI_Malloc memory
 *   mpi-kport@K1         what kport's direct method issues, on K1: MPI_Put / MPI_Get
 *                        per row, one MPI_Win_flush
 *   mpi-armci@K1         what ARMCI-MPI issues, on K1: MPI_Accumulate(MPI_REPLACE) /
 *                        MPI_Get_accumulate(MPI_NO_OP) per row, each followed by
 *                        MPI_Win_flush_local, then MPI_Win_flush
 *   kport@create+THP     kp_win_from_mpi on MPI_Win_create over mmap'd memory with
 *   kport@create-noTHP   MADV_HUGEPAGE / MADV_NOHUGEPAGE
 * Prints per variant each round's median (min) and the median of the rounds'
 * medians and the smallest minimum, in us.
 *
 *   mpicc.openmpi -O2 -I include window_control.c build/ompi/libkport.a -larmci-openmpi -lpthread -lm
 *   mpirun -np 2 --mca btl self,vader ./a.out get|put [rounds W T]
 */
#include <armci.h>
#include <kport.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CH (1 << 20)
#define ROWS 4
#define ST (CH + 64)
#define WB ((size_t)8 << 20)

enum { V_K1, V_K2, V_ARMCI, V_MK, V_MA, V_THP, V_NOTHP, NV };
static const char *vn[NV] = {"kport@K1",     "kport@K2",         "armci@A",           "mpi-kport@K1",
                             "mpi-armci@K1", "kport@create+THP", "kport@create-noTHP"};
static int rank, isput;
static kp_win kw[4]; /* K1, K2, create+THP, create-noTHP */
static void *ab[2];
static char *lbuf;

static void mpi_calls(MPI_Win w, int armci_like)
{
    for (int i = 0; i < ROWS; i++) {
        char *l = lbuf + (size_t)i * ST;
        MPI_Aint d = (MPI_Aint)i * ST;
        if (isput && armci_like)
            MPI_Accumulate(l, CH, MPI_BYTE, 1, d, CH, MPI_BYTE, MPI_REPLACE, w);
        else if (isput)
            MPI_Put(l, CH, MPI_BYTE, 1, d, CH, MPI_BYTE, w);
        else if (armci_like)
            MPI_Get_accumulate(NULL, 0, MPI_BYTE, l, CH, MPI_BYTE, 1, d, CH, MPI_BYTE, MPI_NO_OP, w);
        else
            MPI_Get(l, CH, MPI_BYTE, 1, d, CH, MPI_BYTE, w);
        if (armci_like)
            MPI_Win_flush_local(1, w);
    }
    MPI_Win_flush(1, w);
}

static void op(int v)
{
    MPI_Aint count[2] = {CH, ROWS}, st[1] = {ST};
    int ac[2] = {CH, ROWS}, ast[1] = {ST};
    if (v == V_ARMCI) {
        if (isput) {
            ARMCI_PutS(lbuf, ast, ab[1], ast, ac, 1, 1);
            ARMCI_Fence(1);
        } else {
            ARMCI_GetS(ab[1], ast, lbuf, ast, ac, 1, 1);
        }
    } else if (v == V_MK || v == V_MA) {
        mpi_calls(kp_win_mpi(kw[0]), v == V_MA);
    } else {
        kp_win w = kw[v == V_K1 ? 0 : v == V_K2 ? 1 : v == V_THP ? 2 : 3];
        if (isput) {
            kp_put_strided(lbuf, st, 0, st, count, 1, 1, w);
            kp_win_fence(w, 1);
        } else {
            kp_get_strided(lbuf, st, 0, st, count, 1, 1, w);
        }
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    isput = argc > 1 && !strcmp(argv[1], "put");
    int rounds = argc > 2 ? atoi(argv[2]) : 8, warm = argc > 3 ? atoi(argv[3]) : 5, timed = argc > 4 ? atoi(argv[4]) : 10;
    if (rounds < 1 || rounds > 64 || warm < 0 || timed < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: get|put [rounds 1..64] [warm >= 0] [timed >= 1]\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    void *b;
    kp_win_create((MPI_Aint)WB, MPI_COMM_WORLD, &b, &kw[0]);
    ARMCI_Init();
    ARMCI_Malloc(ab, (armci_size_t)WB);
    kp_win_create((MPI_Aint)WB, MPI_COMM_WORLD, &b, &kw[1]);
    for (int h = 0; h < 2; h++) {
        size_t al = (size_t)2 << 20;
        char *m = mmap(NULL, WB + al, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        char *a = (char *)(((uintptr_t)m + al - 1) & ~(uintptr_t)(al - 1));
        madvise(a, WB, h == 0 ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
        memset(a, 0, WB);
        MPI_Win mw;
        MPI_Win_create(a, (MPI_Aint)WB, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mw);
        kp_win_from_mpi(mw, MPI_COMM_WORLD, &kw[2 + h]);
    }
    kp_strided_set_method("direct");
    lbuf = malloc(WB);
    memset(lbuf, 1, WB);
    static double med[NV][64], mn[NV][64];
    double *t = malloc(sizeof(double) * (size_t)timed);
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < NV; v++) {
            for (int it = -warm; it < timed; it++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (rank == 0)
                    op(v);
                if (it >= 0)
                    t[it] = (MPI_Wtime() - t0) * 1e6;
            }
            qsort(t, (size_t)timed, sizeof(double), cmp);
            med[v][r] = t[timed / 2];
            mn[v][r] = t[0];
        }
    if (rank == 0) {
        printf("%s, %d rounds of %d untimed + %d timed repetitions per variant; per round: median(min) us\n",
               isput ? "put" : "get", rounds, warm, timed);
        for (int v = 0; v < NV; v++) {
            printf("%-19s", vn[v]);
            for (int r = 0; r < rounds; r++)
                printf(" %4.0f(%3.0f)", med[v][r], mn[v][r]);
            qsort(med[v], (size_t)rounds, sizeof(double), cmp);
            qsort(mn[v], (size_t)rounds, sizeof(double), cmp);
            printf("  median %6.1f min %6.1f\n", med[v][rounds / 2], mn[v][0]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 3; i >= 0; i--) {
        MPI_Win mw = kp_win_mpi(kw[i]);
        kp_win_free(&kw[i]);
        if (i >= 2)
            MPI_Win_free(&mw);
    }
    ARMCI_Free(ab[rank]);
    ARMCI_Finalize();
    free(lbuf);
    free(t);
    MPI_Finalize();
    return 0;
}
