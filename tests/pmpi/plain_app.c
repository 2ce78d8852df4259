/*
 * plain_app: an ordinary MPI program (it knows nothing of kport) that checks
 * MPI_Allgather, MPI_Gather, MPI_Alltoall and MPI_Barrier against formulas.
 * tests/pmpi/test_preload.sh runs it as is and with
 * LD_PRELOAD=libkport-pmpi.so; both runs must pass.
 *
 * Covered: MPI_COMM_WORLD, a split communicator in reversed rank order,
 * singleton communicators, an inter-communicator (kport passes it to PMPI_),
 * MPI_IN_PLACE, every gather root, zero counts, small and large counts, a
 * non-contiguous vector datatype on either side (gaps must stay untouched)
 * and ranks using different type maps of the same signature.
 *
 * Prints "plain_app: N passed, M failed" on rank 0; exits 1 on any failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define JUNK (-1)

static int wrank, wsize, npass, nfail;

/* the value element i of the data that src sends to dst in test `tag` */
static int V(int tag, int src, int dst, int i)
{
    long long v = (long long)tag * 7919 + (long long)src * 104729 + (long long)dst * 1299709 + (long long)i * 31;
    return (int)(v % 1000000007LL);
}

static int *ialloc(long n, int fill)
{
    int *p = malloc((size_t)(n + 1) * sizeof(int));
    if (!p) {
        fprintf(stderr, "plain_app: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i <= n; i++)
        p[i] = fill;
    return p;
}

/* one test: every rank calls it in the same order; bad = wrong values here */
static void check(const char *name, long bad)
{
    long gbad = 0;
    MPI_Allreduce(&bad, &gbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (gbad) {
        nfail++;
        if (wrank == 0)
            printf("plain_app: FAIL %s: %ld wrong values\n", name, gbad);
    } else {
        npass++;
    }
}

/* compare one value; print the first few mismatches of this rank */
static long expect(const char *name, int got, int want, long where)
{
    static int printed;
    if (got == want)
        return 0;
    if (printed++ < 5)
        fprintf(stderr, "plain_app: rank %d: %s: element %ld is %d, expected %d\n", wrank, name, where, got, want);
    return 1;
}

/* ---- layouts of one block of 3 ints: plain ints or a strided vector ------- */

typedef struct {
    MPI_Datatype type;
    int count; /* of type per block */
    int ext;   /* ints per block in the buffer */
    int pos[3];
    const char *name;
} layout;

static layout L_INT, L_VEC;

static void put_block(int *buf, const layout *l, int j, int tag, int src, int dst)
{
    for (int i = 0; i < 3; i++)
        buf[(long)j * l->ext + l->pos[i]] = V(tag, src, dst, i);
}

/* the data of block j, and JUNK in its gaps */
static long check_block(const char *name, const int *buf, const layout *l, int j, int tag, int src, int dst)
{
    long bad = 0;
    for (int k = 0, i = 0; k < l->ext; k++) {
        long at = (long)j * l->ext + k;
        if (i < 3 && l->pos[i] == k) {
            bad += expect(name, buf[at], V(tag, src, dst, i), at);
            i++;
        } else {
            bad += expect(name, buf[at], JUNK, at);
        }
    }
    return bad;
}

/* ---- all-gather ---------------------------------------------------------- */

static void t_allgather(MPI_Comm comm, const char *cname, int count, int inplace, int tag)
{
    int P, me;
    char name[160];
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    snprintf(name, sizeof(name), "MPI_Allgather %s count=%d%s", cname, count, inplace ? " in-place" : "");
    int *s = ialloc(count, JUNK), *r = ialloc((long)P * count, JUNK);
    for (int i = 0; i < count; i++)
        (inplace ? r + (long)me * count : s)[i] = V(tag, me, 0, i);
    long bad = 0;
    int rc = MPI_Allgather(inplace ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT, comm);
    bad += rc != MPI_SUCCESS;
    for (int j = 0; j < P; j++)
        for (int i = 0; i < count; i++)
            bad += expect(name, r[(long)j * count + i], V(tag, j, 0, i), (long)j * count + i);
    bad += expect(name, r[(long)P * count], JUNK, (long)P * count); /* nothing written past the end */
    check(name, bad);
    free(s);
    free(r);
}

static void t_allgather_typed(MPI_Comm comm, const char *cname, const layout *sl, const layout *rl, int inplace,
                              int tag)
{
    int P, me;
    char name[160];
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    snprintf(name, sizeof(name), "MPI_Allgather %s send=%s recv=%s%s", cname, inplace ? "-" : sl->name, rl->name,
             inplace ? " in-place" : "");
    int *s = ialloc(sl->ext, JUNK), *r = ialloc((long)P * rl->ext, JUNK);
    if (inplace)
        put_block(r, rl, me, tag, me, 0);
    else
        put_block(s, sl, 0, tag, me, 0);
    long bad = MPI_Allgather(inplace ? MPI_IN_PLACE : s, sl->count, sl->type, r, rl->count, rl->type, comm) !=
               MPI_SUCCESS;
    for (int j = 0; j < P; j++)
        bad += check_block(name, r, rl, j, tag, j, 0);
    check(name, bad);
    free(s);
    free(r);
}

/* ---- gather ---------------------------------------------------------------- */

static void t_gather(MPI_Comm comm, const char *cname, int count, int root, int inplace, int tag)
{
    int P, me;
    char name[160];
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    snprintf(name, sizeof(name), "MPI_Gather %s count=%d root=%d%s", cname, count, root, inplace ? " in-place" : "");
    const int am_root = me == root, ip = inplace && am_root;
    int *s = ialloc(count, JUNK), *r = am_root ? ialloc((long)P * count, JUNK) : NULL;
    for (int i = 0; i < count; i++)
        (ip ? r + (long)me * count : s)[i] = V(tag, me, root, i);
    long bad;
    if (am_root)
        bad = MPI_Gather(ip ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT, root, comm) != MPI_SUCCESS;
    else /* the receive arguments are not significant away from the root */
        bad = MPI_Gather(s, count, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, comm) != MPI_SUCCESS;
    if (am_root) {
        for (int j = 0; j < P; j++)
            for (int i = 0; i < count; i++)
                bad += expect(name, r[(long)j * count + i], V(tag, j, root, i), (long)j * count + i);
        bad += expect(name, r[(long)P * count], JUNK, (long)P * count);
    }
    check(name, bad);
    free(s);
    free(r);
}

static void t_gather_typed(MPI_Comm comm, const char *cname, const layout *sl, const layout *rl, int root,
                           int inplace, int tag)
{
    int P, me;
    char name[160];
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    snprintf(name, sizeof(name), "MPI_Gather %s send=%s recv=%s root=%d%s", cname, sl->name, rl->name, root,
             inplace ? " in-place" : "");
    const int am_root = me == root, ip = inplace && am_root;
    int *s = ialloc(sl->ext, JUNK), *r = am_root ? ialloc((long)P * rl->ext, JUNK) : NULL;
    if (ip)
        put_block(r, rl, me, tag, me, root);
    else
        put_block(s, sl, 0, tag, me, root);
    long bad =
        MPI_Gather(ip ? MPI_IN_PLACE : s, sl->count, sl->type, r, rl->count, rl->type, root, comm) != MPI_SUCCESS;
    if (am_root)
        for (int j = 0; j < P; j++)
            bad += check_block(name, r, rl, j, tag, j, root);
    check(name, bad);
    free(s);
    free(r);
}

/* ---- all-to-all -------------------------------------------------------------- */

static void t_alltoall(MPI_Comm comm, const char *cname, int count, int inplace, int tag)
{
    int P, me;
    char name[160];
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    snprintf(name, sizeof(name), "MPI_Alltoall %s count=%d%s", cname, count, inplace ? " in-place" : "");
    int *s = ialloc((long)P * count, JUNK), *r = ialloc((long)P * count, JUNK);
    for (int j = 0; j < P; j++)
        for (int i = 0; i < count; i++)
            (inplace ? r : s)[(long)j * count + i] = V(tag, me, j, i);
    long bad = MPI_Alltoall(inplace ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT, comm) != MPI_SUCCESS;
    for (int j = 0; j < P; j++)
        for (int i = 0; i < count; i++)
            bad += expect(name, r[(long)j * count + i], V(tag, j, me, i), (long)j * count + i);
    bad += expect(name, r[(long)P * count], JUNK, (long)P * count);
    check(name, bad);
    free(s);
    free(r);
}

static void t_alltoall_typed(MPI_Comm comm, const char *cname, const layout *sl, const layout *rl, int inplace,
                             int tag)
{
    int P, me;
    char name[160];
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    snprintf(name, sizeof(name), "MPI_Alltoall %s send=%s recv=%s%s", cname, inplace ? "-" : sl->name, rl->name,
             inplace ? " in-place" : "");
    int *s = ialloc((long)P * sl->ext, JUNK), *r = ialloc((long)P * rl->ext, JUNK);
    for (int j = 0; j < P; j++) {
        if (inplace)
            put_block(r, rl, j, tag, me, j);
        else
            put_block(s, sl, j, tag, me, j);
    }
    long bad = MPI_Alltoall(inplace ? MPI_IN_PLACE : s, sl->count, sl->type, r, rl->count, rl->type, comm) !=
               MPI_SUCCESS;
    for (int j = 0; j < P; j++)
        bad += check_block(name, r, rl, j, tag, j, me);
    check(name, bad);
    free(s);
    free(r);
}

/* ---- barrier ----------------------------------------------------------------- */

/* For each rank L in turn: every other rank tells L it is about to enter the
 * barrier (after starting its clock), L waits 50 ms more and enters. No rank
 * may leave the barrier before L entered, i.e. less than 50 ms after its
 * clock started. */
static void t_barrier(MPI_Comm comm, const char *cname)
{
    const double delay = 0.05;
    int P, me;
    char name[160];
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    snprintf(name, sizeof(name), "MPI_Barrier %s", cname);
    long bad = 0;
    for (int late = 0; late < P; late++) {
        if (me == late) {
            for (int j = 0; j < P - 1; j++)
                MPI_Recv(NULL, 0, MPI_INT, MPI_ANY_SOURCE, 77, comm, MPI_STATUS_IGNORE);
            struct timespec ts = {0, (long)(delay * 1e9)};
            nanosleep(&ts, NULL);
            bad += MPI_Barrier(comm) != MPI_SUCCESS;
        } else {
            double t0 = MPI_Wtime();
            MPI_Send(NULL, 0, MPI_INT, late, 77, comm);
            bad += MPI_Barrier(comm) != MPI_SUCCESS;
            double t = MPI_Wtime() - t0;
            if (t < delay * 0.98) {
                fprintf(stderr, "plain_app: rank %d: %s left the barrier %.1f ms after the start, before rank %d entered\n",
                        wrank, name, t * 1e3, late);
                bad++;
            }
        }
    }
    check(name, bad);
}

/* ---- inter-communicator (kport passes these to PMPI_) ------------------------- */

static void t_inter(MPI_Comm inter, int group, int tag)
{
    int me, R;
    MPI_Comm_rank(inter, &me);
    MPI_Comm_remote_size(inter, &R);
    const int other = 1 - group, n = 2;
    long bad;

    /* all-gather: each side receives the other side's blocks */
    int *s = ialloc((long)R * n, JUNK), *r = ialloc((long)R * n, JUNK);
    for (int i = 0; i < n; i++)
        s[i] = V(tag, me, group, i);
    bad = MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, inter) != MPI_SUCCESS;
    for (int j = 0; j < R; j++)
        for (int i = 0; i < n; i++)
            bad += expect("MPI_Allgather inter", r[j * n + i], V(tag, j, other, i), j * n + i);
    check("MPI_Allgather inter-communicator", bad);

    /* all-to-all: block j goes to remote rank j */
    for (int j = 0; j < R; j++)
        for (int i = 0; i < n; i++)
            s[j * n + i] = V(tag + 1, me + 100 * group, j, i);
    bad = MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, inter) != MPI_SUCCESS;
    for (int j = 0; j < R; j++)
        for (int i = 0; i < n; i++)
            bad += expect("MPI_Alltoall inter", r[j * n + i], V(tag + 1, j + 100 * other, me, i), j * n + i);
    check("MPI_Alltoall inter-communicator", bad);

    /* gather to rank 0 of group 0 from all of group 1 */
    int root = group == 0 ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    for (int i = 0; i < n; i++)
        s[i] = V(tag + 2, me, 0, i);
    for (long i = 0; i < (long)R * n; i++)
        r[i] = JUNK;
    bad = MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, root, inter) != MPI_SUCCESS;
    if (root == MPI_ROOT)
        for (int j = 0; j < R; j++)
            for (int i = 0; i < n; i++)
                bad += expect("MPI_Gather inter", r[j * n + i], V(tag + 2, j, 0, i), j * n + i);
    check("MPI_Gather inter-communicator", bad);

    bad = MPI_Barrier(inter) != MPI_SUCCESS;
    check("MPI_Barrier inter-communicator", bad);
    free(s);
    free(r);
}

/* ---- erroneous calls (the same on every rank) under MPI_ERRORS_RETURN ------ */

static void expect_error(const char *name, int rc, int want_class)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    long bad = cls != want_class;
    if (bad) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "plain_app: rank %d: %s returned class %d (%s), expected class %d\n", wrank, name, cls, msg,
                want_class);
    }
    check(name, bad);
}

static void t_errors(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int P, x[8] = {0}, *r = ialloc(8L * wsize, 0);
    MPI_Comm_size(comm, &P);
    expect_error("MPI_Allgather count=-1 fails with MPI_ERR_COUNT",
                 MPI_Allgather(x, -1, MPI_INT, r, -1, MPI_INT, comm), MPI_ERR_COUNT);
    expect_error("MPI_Gather root=P fails with MPI_ERR_ROOT", MPI_Gather(x, 1, MPI_INT, r, 1, MPI_INT, P, comm),
                 MPI_ERR_ROOT);
    expect_error("MPI_Alltoall MPI_DATATYPE_NULL fails with MPI_ERR_TYPE",
                 MPI_Alltoall(x, 1, MPI_DATATYPE_NULL, r, 1, MPI_DATATYPE_NULL, comm), MPI_ERR_TYPE);
    expect_error("MPI_Barrier MPI_COMM_NULL fails with MPI_ERR_COMM", MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    /* the communicator still works afterwards */
    t_allgather(comm, "after errors", 2, 0, 5000);
    free(r);
    MPI_Comm_free(&comm);
}

/* ---- everything on one communicator --------------------------------------- */

static void run_all(MPI_Comm comm, const char *cname, int tag)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    static const int ag_counts[] = {0, 1, 3, 1000, 20000};
    for (unsigned c = 0; c < sizeof(ag_counts) / sizeof(*ag_counts); c++) {
        t_allgather(comm, cname, ag_counts[c], 0, tag++);
        t_allgather(comm, cname, ag_counts[c], 1, tag++);
    }
    static const int g_counts[] = {0, 1, 5, 3000};
    for (int root = 0; root < P; root++)
        for (unsigned c = 0; c < sizeof(g_counts) / sizeof(*g_counts); c++) {
            t_gather(comm, cname, g_counts[c], root, 0, tag++);
            t_gather(comm, cname, g_counts[c], root, 1, tag++);
        }
    static const int a_counts[] = {0, 1, 4, 1500};
    for (unsigned c = 0; c < sizeof(a_counts) / sizeof(*a_counts); c++) {
        t_alltoall(comm, cname, a_counts[c], 0, tag++);
        t_alltoall(comm, cname, a_counts[c], 1, tag++);
    }
    t_barrier(comm, cname);

    /* the vector datatype on either side, and mixed type maps across ranks */
    const layout *odd_s = me % 2 ? &L_VEC : &L_INT, *odd_r = me % 2 ? &L_INT : &L_VEC;
    const layout *pairs[][2] = {{&L_VEC, &L_INT}, {&L_INT, &L_VEC}, {&L_VEC, &L_VEC}, {odd_s, odd_r}};
    for (int p = 0; p < 4; p++) {
        t_allgather_typed(comm, p == 3 ? "(mixed)" : cname, pairs[p][0], pairs[p][1], 0, tag++);
        t_alltoall_typed(comm, p == 3 ? "(mixed)" : cname, pairs[p][0], pairs[p][1], 0, tag++);
        for (int root = 0; root < P; root++)
            t_gather_typed(comm, p == 3 ? "(mixed)" : cname, pairs[p][0], pairs[p][1], root, 0, tag++);
    }
    t_allgather_typed(comm, cname, &L_VEC, &L_VEC, 1, tag++);
    t_alltoall_typed(comm, cname, &L_VEC, &L_VEC, 1, tag++);
    t_gather_typed(comm, cname, &L_INT, &L_VEC, P - 1, 1, tag++);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);

    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec); /* ints 0, 2, 4 of 5 */
    MPI_Type_commit(&vec);
    L_INT = (layout){MPI_INT, 3, 3, {0, 1, 2}, "int*3"};
    L_VEC = (layout){vec, 1, 5, {0, 2, 4}, "vector(3,1,2)"};

    run_all(MPI_COMM_WORLD, "world", 1000);

    /* halves by parity, in reversed rank order */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half);
    run_all(half, "split", 2000);

    /* one rank each */
    MPI_Comm self;
    MPI_Comm_split(MPI_COMM_WORLD, wrank, 0, &self);
    run_all(self, "singleton", 3000);

    if (wsize >= 2) {
        /* even ranks and odd ranks, each in rank order: leaders world 0 and 1 */
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, wrank % 2 ? 0 : 1, 99, &inter);
        t_inter(inter, wrank % 2, 4000);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* for MPI_COMM_NULL errors */
    t_errors();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Comm_free(&half);
    MPI_Comm_free(&self);
    MPI_Type_free(&vec);

    if (wrank == 0)
        printf("plain_app: %d passed, %d failed\n", npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
