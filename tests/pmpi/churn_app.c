/*
 * churn_app: an ordinary MPI program (it knows nothing of kport) that does
 * what libraries built on MPI do all the time: create a communicator, call a
 * collective or two on it, free it. Run it as is and under
 * LD_PRELOAD=libkport-pmpi.so to compare (tests/pmpi/test_churn.sh).
 *
 *   churn_app [-n CYCLES] [-k CALLS] [-m INTS] [-w WARMUP] [--how dup|split|create|all]
 *             [--coll allgather|alltoall|gather|barrier|mix] [--hold N]
 *
 * A cycle: create a communicator from MPI_COMM_WORLD (MPI_Comm_dup;
 * MPI_Comm_split with one colour and keys that reverse the rank order;
 * MPI_Comm_create from a rotated group; "all" cycles through them and through
 * MPI_Comm_split with two colours), make CALLS calls of the collective with
 * INTS ints per block (values that depend on cycle, call, sender and
 * receiver), check every received int, free the communicator. --hold N keeps
 * N communicators alive at once and frees them in an order other than their
 * creation (the oldest last), as libraries holding several do.
 *
 * Prints on rank 0:
 *   churn_app: how=dup coll=allgather calls=1 ints=2 cycles=N us_per_cycle=X
 *   churn_app: growth: maps_shared=A->B rss_kb=C->D
 *   churn_app: N passed, M failed
 * us_per_cycle is the median over 5 batches of the max over ranks. The
 * growth line counts this process's shared mappings (/proc/self/maps lines
 * with 's' in the permissions: shared-memory segments) and its resident
 * memory after the warm-up and after the timed cycles: a library that leaks
 * segments or memory per communicator shows it there.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize;
static long nbad;

static int V(long cycle, int call, int src, int dst, int i)
{
    long long v = cycle * 7919LL + call * 104729LL + src * 1299709LL + dst * 15485863LL + i * 31LL;
    return (int)(v % 1000000007LL);
}

static int count_shared_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof(line), f)) {
        char perm[8] = "";
        if (sscanf(line, "%*s %7s", perm) == 1 && perm[3] == 's')
            n++;
    }
    fclose(f);
    return n;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld %ld", &pages, &res) != 2)
        res = -1;
    fclose(f);
    return res * 4;
}

enum { HOW_DUP, HOW_SPLIT, HOW_CREATE, HOW_SPLIT2, HOW_ALL };
enum { C_ALLGATHER, C_ALLTOALL, C_GATHER, C_BARRIER, C_MIX };

static MPI_Comm make_comm(int how, long cycle)
{
    MPI_Comm c = MPI_COMM_NULL;
    if (how == HOW_ALL)
        how = (int)(cycle % 4);
    switch (how) {
    case HOW_DUP:
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        break;
    case HOW_SPLIT: /* one colour, reversed order */
        MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &c);
        break;
    case HOW_SPLIT2: /* two colours (odd / even ranks), rotated order */
        MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, (wrank + (int)cycle) % wsize, &c);
        break;
    case HOW_CREATE: { /* every rank, rotated by the cycle */
        MPI_Group wg, g;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        int *r = malloc((size_t)wsize * sizeof(int));
        for (int i = 0; i < wsize; i++)
            r[i] = (i + (int)cycle) % wsize;
        MPI_Group_incl(wg, wsize, r, &g);
        MPI_Comm_create(MPI_COMM_WORLD, g, &c);
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        free(r);
        break;
    }
    }
    return c;
}

static void calls(MPI_Comm c, int coll, int ncalls, int m, long cycle, int *sb, int *rb)
{
    int me, P;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &P);
    for (int k = 0; k < ncalls; k++) {
        int cl = coll == C_MIX ? (int)((cycle + k) % 4) : coll;
        int root = (int)((cycle + k) % P);
        for (int d = 0; d < P; d++)
            for (int i = 0; i < m; i++)
                sb[d * m + i] = V(cycle, k, me, cl == C_ALLTOALL ? d : 0, i);
        for (int i = 0; i < P * m; i++)
            rb[i] = -1;
        switch (cl) {
        case C_ALLGATHER:
            MPI_Allgather(sb, m, MPI_INT, rb, m, MPI_INT, c);
            break;
        case C_ALLTOALL:
            MPI_Alltoall(sb, m, MPI_INT, rb, m, MPI_INT, c);
            break;
        case C_GATHER:
            MPI_Gather(sb, m, MPI_INT, rb, m, MPI_INT, root, c);
            break;
        default:
            MPI_Barrier(c);
            continue;
        }
        if (cl == C_GATHER && me != root)
            continue;
        for (int s = 0; s < P; s++)
            for (int i = 0; i < m; i++)
                if (rb[s * m + i] != V(cycle, k, s, cl == C_ALLTOALL ? me : 0, i) && nbad++ < 5)
                    fprintf(stderr, "churn_app: rank %d cycle %ld call %d: block %d int %d is %d, expected %d\n",
                            wrank, cycle, k, s, i, rb[s * m + i], V(cycle, k, s, cl == C_ALLTOALL ? me : 0, i));
    }
}

/* run cycles [from, to); hold communicators alive in a ring of `hold` */
static void run(int how, int coll, int ncalls, int m, int hold, long from, long to, MPI_Comm *ring, int *sb,
                int *rb)
{
    for (long cy = from; cy < to; cy++) {
        MPI_Comm c = make_comm(how, cy);
        calls(c, coll, ncalls, m, cy, sb, rb);
        if (hold <= 1) {
            MPI_Comm_free(&c);
            continue;
        }
        /* keep it; free the one created hold-1 cycles ago... but in another
         * order: slot (cy * 3) % hold, so frees do not follow creation */
        int s = (int)((cy * 3) % hold);
        if (ring[s] != MPI_COMM_NULL)
            MPI_Comm_free(&ring[s]);
        ring[s] = c;
    }
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    long cycles = 1000;
    int ncalls = 1, m = 2, warm = 20, how = HOW_DUP, coll = C_ALLGATHER, hold = 1;
    static const char *hows[] = {"dup", "split", "create", "split2", "all"};
    static const char *colls[] = {"allgather", "alltoall", "gather", "barrier", "mix"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (ok && strcmp(a, "-n") == 0)
            cycles = atol(v);
        else if (ok && strcmp(a, "-k") == 0)
            ncalls = atoi(v);
        else if (ok && strcmp(a, "-m") == 0)
            m = atoi(v);
        else if (ok && strcmp(a, "-w") == 0)
            warm = atoi(v);
        else if (ok && strcmp(a, "--hold") == 0)
            hold = atoi(v);
        else if (ok && strcmp(a, "--how") == 0) {
            for (how = 0; how < 5 && strcmp(v, hows[how]); how++)
                ;
            ok = how < 5;
        } else if (ok && strcmp(a, "--coll") == 0) {
            for (coll = 0; coll < 5 && strcmp(v, colls[coll]); coll++)
                ;
            ok = coll < 5;
        } else
            ok = 0;
        if (!ok || cycles < 5 || ncalls < 0 || m < 1 || warm < 0 || hold < 1 || hold > 64) {
            if (wrank == 0)
                fprintf(stderr, "churn_app: bad option %s\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        i++;
    }
    int *sb = malloc((size_t)wsize * (size_t)m * sizeof(int)), *rb = malloc((size_t)wsize * (size_t)m * sizeof(int));
    MPI_Comm ring[64];
    for (int i = 0; i < 64; i++)
        ring[i] = MPI_COMM_NULL;
    run(how, coll, ncalls, m, hold, 0, warm, ring, sb, rb);
    MPI_Barrier(MPI_COMM_WORLD);
    int maps0 = count_shared_maps();
    long rss0 = rss_kb();
    enum { NB = 5 };
    double t[NB];
    long per = cycles / NB;
    for (int b = 0; b < NB; b++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        run(how, coll, ncalls, m, hold, warm + b * per, warm + (b + 1) * per, ring, sb, rb);
        double dt = (MPI_Wtime() - t0) / (double)per, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[b] = mx;
    }
    for (int i = 0; i < hold; i++) /* every held one, newest first */
        if (ring[hold - 1 - i] != MPI_COMM_NULL)
            MPI_Comm_free(&ring[hold - 1 - i]);
    MPI_Barrier(MPI_COMM_WORLD);
    int maps1 = count_shared_maps();
    long rss1 = rss_kb();
    long gbad = 0;
    MPI_Allreduce(&nbad, &gbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("churn_app: how=%s coll=%s calls=%d ints=%d cycles=%ld us_per_cycle=%.2f\n", hows[how], colls[coll],
               ncalls, m, per * NB, median(t, NB) * 1e6);
        printf("churn_app: growth: maps_shared=%d->%d rss_kb=%ld->%ld\n", maps0, maps1, rss0, rss1);
        printf("churn_app: %d passed, %d failed\n", gbad ? 0 : 1, gbad ? 1 : 0);
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return gbad ? 1 : 0;
}
