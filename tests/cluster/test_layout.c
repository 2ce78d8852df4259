/*
 * test_layout: the node layout kport sees, beside the one MPI and the host
 * names give (issue 40: real hosts as namespaces, scripts/cluster.sh).
 *
 * usage: test_layout [--expect ID,ID,...] [--hosts-are-nodes] [--win ok|refused|any] [--bench]
 *
 * Rank 0 prints
 *   hosts: kp-h0,kp-h0,kp-h1,kp-h1          every world rank's host name
 *   mpi: 0,0,1,1                            MPI_Comm_split_type(SHARED) nodes
 *   layout world=0,0,1,1/0,1,0,1/2,2,2,2 reversed=... odd=... even=...
 * where each communicator's entry is kp_node_info's node, local index and
 * node size of its ranks in rank order (world, the world in reversed order,
 * the odd and the even world ranks), so that two runs with the same
 * placement, one across real hosts and one emulated on one machine
 * (KPORT_NODE_MAP), can be compared by their "layout" line.
 * Checks (exit 1 on a failure, "test_layout: N passed, M failed"):
 *   - every rank agrees on its own entries (kp_node_info vs. the gathered);
 *   - ranks with the same host name are exactly those MPI puts on one shared
 *     node (MPI's node ids numbered by lowest world rank);
 *   - without KPORT_NODE_SIZE / KPORT_NODE_MAP, kport's world layout is MPI's
 *     (--hosts-are-nodes additionally asks that there be more than one host);
 *   - every node's ranks have local indices 0..size-1 in rank order and the
 *     size kp_node_info reports;
 *   - --expect: the world layout's node ids are the given list.
 * --win: kp_win_create of a strided window on MPI_COMM_WORLD must return
 * the same code on every rank, never abort: KP_SUCCESS (then every rank puts
 * 3 rows of 5 bytes, strided, into the next rank's window and reads them
 * back after kp_win_barrier) or KP_ERR_UNSUPPORTED (MPI made no window);
 * "ok" or "refused" asks for one of them. Rank 0 prints
 * "kp_win_create: CODE_NAME".
 * --bench (for the report, not the tests): 8-byte ping-pong between world
 * rank 0 and a rank of its host and a rank of another host, and the 8-byte
 * all-gather natively and through kport (median of 200 calls, max over ranks).
 */
#include "kport.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long passed, failed;
static int me, P;

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond)                                                                                                      \
            passed++;                                                                                                  \
        else {                                                                                                         \
            failed++;                                                                                                  \
            fprintf(stderr, "test_layout: rank %d: FAIL: ", me);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

/* comm's layout as "node,node,.../local,.../size,..." on rank 0 of comm (into out) */
static void layout_of(MPI_Comm comm, char *out, size_t outlen)
{
    int n, rk, mine[4], nnodes, node, local, size;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &rk);
    int rc = kp_node_info(comm, &nnodes, &node, &local, &size);
    CHECK(rc == KP_SUCCESS, "kp_node_info: %s (%s)", kp_strerror(rc), kp_last_error());
    mine[0] = node;
    mine[1] = local;
    mine[2] = size;
    mine[3] = nnodes;
    int *all = malloc(sizeof(int) * 4 * (size_t)n);
    MPI_Allgather(mine, 4, MPI_INT, all, 4, MPI_INT, comm);
    /* every node's ranks: local 0..size-1 in rank order, the same size; node
       ids numbered by lowest rank (0, then the next new one, ...) */
    int next = 0, *count = calloc((size_t)n, sizeof(int));
    for (int r = 0; r < n; r++) {
        int nd = all[4 * r];
        CHECK(nd >= 0 && nd < n, "node id %d of rank %d", nd, r);
        if (nd < 0 || nd >= n)
            continue;
        if (nd == next)
            next++;
        CHECK(nd < next, "node id %d of rank %d not numbered by lowest rank", nd, r);
        CHECK(all[4 * r + 1] == count[nd], "rank %d: local index %d, expected %d", r, all[4 * r + 1], count[nd]);
        count[nd]++;
        CHECK(all[4 * r + 3] == all[3], "rank %d: %d nodes, rank 0 says %d", r, all[4 * r + 3], all[3]);
    }
    CHECK(next == all[3], "%d node ids, kp_node_info says %d nodes", next, all[3]);
    for (int r = 0; r < n; r++)
        if (all[4 * r] >= 0 && all[4 * r] < n)
            CHECK(all[4 * r + 2] == count[all[4 * r]], "rank %d: node size %d, counted %d", r, all[4 * r + 2],
                  count[all[4 * r]]);
    size_t o = 0;
    for (int f = 0; f < 3; f++)
        for (int r = 0; r < n; r++)
            o += (size_t)snprintf(out + o, o < outlen ? outlen - o : 0, "%d%s", all[4 * r + f],
                                  r + 1 < n ? "," : (f < 2 ? "/" : ""));
    (void)rk;
    free(all);
    free(count);
}

/* --win: a strided window across the communicator, or a clean refusal */
static void win_probe(const char *want)
{
    void *base = NULL;
    kp_win win = NULL;
    int rc = kp_win_create(4096, MPI_COMM_WORLD, &base, &win), lo, hi;
    MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi, "kp_win_create returned %d here, codes %d..%d over the ranks", rc, lo, hi);
    CHECK(rc == KP_SUCCESS || rc == KP_ERR_UNSUPPORTED, "kp_win_create: %s (%s)", kp_strerror(rc), kp_last_error());
    if (!strcmp(want, "ok"))
        CHECK(rc == KP_SUCCESS, "kp_win_create: %s (%s), a window was expected", kp_strerror(rc), kp_last_error());
    else if (!strcmp(want, "refused"))
        CHECK(rc == KP_ERR_UNSUPPORTED, "kp_win_create: %s, KP_ERR_UNSUPPORTED was expected", kp_strerror(rc));
    if (me == 0)
        printf("kp_win_create: %s%s%s\n", kp_strerror(rc), rc ? ": " : "", rc ? kp_last_error() : "");
    if (rc != KP_SUCCESS || lo != hi)
        return;
    unsigned char src[3 * 8], *w = base;
    memset(w, 0, 4096);
    for (int i = 0; i < 24; i++)
        src[i] = (unsigned char)(me * 31 + i);
    MPI_Aint count[2] = {5, 3}, sst[1] = {8}, dst[1] = {100};
    kp_win_barrier(win);
    rc = kp_put_strided(src, sst, 10, dst, count, 1, (me + 1) % P, win);
    CHECK(rc == KP_SUCCESS, "kp_put_strided: %s (%s)", kp_strerror(rc), kp_last_error());
    rc = kp_win_barrier(win);
    CHECK(rc == KP_SUCCESS, "kp_win_barrier: %s (%s)", kp_strerror(rc), kp_last_error());
    const int from = (me + P - 1) % P;
    for (int r = 0; r < 3; r++)
        for (int j = 0; j < 5; j++)
            CHECK(w[10 + 100 * r + j] == (unsigned char)(from * 31 + 8 * r + j), "window byte %d of row %d from rank %d",
                  j, r, from);
    CHECK(w[15] == 0 && w[9] == 0, "bytes around the first row touched");
    rc = kp_win_free(&win);
    CHECK(rc == KP_SUCCESS, "kp_win_free: %s (%s)", kp_strerror(rc), kp_last_error());
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define NITER 200
static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return t[n / 2];
}

/* 8-byte ping-pong between world rank 0 and `peer` (half round trip, us) */
static double pingpong(int peer)
{
    char b[8] = {0};
    double t[NITER];
    for (int i = -10; i < NITER; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (me == 0) {
            MPI_Send(b, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(b, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me == peer) {
            MPI_Recv(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(b, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
        if (i >= 0)
            t[i] = (MPI_Wtime() - t0) * 1e6 / 2;
    }
    return median(t, NITER);
}

static double allgather8(int kport)
{
    char s[8], *r = malloc(8 * (size_t)P);
    double t[NITER];
    memset(s, me, sizeof(s));
    for (int i = -10; i < NITER; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (kport)
            kp_allgather(s, 8, MPI_BYTE, r, 8, MPI_BYTE, MPI_COMM_WORLD);
        else
            MPI_Allgather(s, 8, MPI_BYTE, r, 8, MPI_BYTE, MPI_COMM_WORLD);
        double dt = (MPI_Wtime() - t0) * 1e6, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (i >= 0)
            t[i] = mx;
    }
    for (int q = 0; q < P; q++)
        CHECK(r[8 * q] == (char)q && r[8 * q + 7] == (char)q, "all-gather block %d wrong", q);
    free(r);
    return median(t, NITER);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *expect = NULL, *win = NULL;
    int hosts_are_nodes = 0, bench = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc)
            expect = argv[++i];
        else if (strcmp(argv[i], "--hosts-are-nodes") == 0)
            hosts_are_nodes = 1;
        else if (strcmp(argv[i], "--bench") == 0)
            bench = 1;
        else if (strcmp(argv[i], "--win") == 0 && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "ok") || !strcmp(argv[i + 1], "refused") || !strcmp(argv[i + 1], "any")))
            win = argv[++i];
        else {
            if (me == 0)
                fprintf(stderr,
                        "usage: test_layout [--expect ID,ID,...] [--hosts-are-nodes] [--win ok|refused|any] [--bench]\n");
            MPI_Finalize();
            return 2;
        }
    }
    const int emulated = getenv("KPORT_NODE_SIZE") || getenv("KPORT_NODE_MAP");

    /* host names and MPI's shared-memory nodes */
    char host[64] = {0}, *hosts = malloc(64 * (size_t)P);
    gethostname(host, sizeof(host) - 1);
    MPI_Allgather(host, 64, MPI_CHAR, hosts, 64, MPI_CHAR, MPI_COMM_WORLD);
    MPI_Comm shm;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &shm);
    int lead, *leads = malloc(sizeof(int) * (size_t)P), *mpinode = malloc(sizeof(int) * (size_t)P);
    lead = me; /* the node's lowest world rank: its local rank 0 (key = world rank) */
    MPI_Bcast(&lead, 1, MPI_INT, 0, shm);
    MPI_Allgather(&lead, 1, MPI_INT, leads, 1, MPI_INT, MPI_COMM_WORLD);
    int nmpi = 0, nhosts = 0;
    for (int r = 0; r < P; r++) {
        if (leads[r] == r)
            mpinode[r] = nmpi++;
        else
            mpinode[r] = mpinode[leads[r]];
        int first = 1;
        for (int q = 0; q < r; q++)
            if (strcmp(hosts + 64 * q, hosts + 64 * r) == 0)
                first = 0;
        nhosts += first;
        for (int q = 0; q < P; q++) /* same host <=> same MPI node */
            CHECK((strcmp(hosts + 64 * q, hosts + 64 * r) == 0) == (leads[q] == leads[r]),
                  "ranks %d (%s) and %d (%s): MPI's shared node %s", q, hosts + 64 * q, r, hosts + 64 * r,
                  leads[q] == leads[r] ? "joins them" : "separates them");
    }
    CHECK(nhosts == nmpi, "%d host names, %d MPI nodes", nhosts, nmpi);
    if (hosts_are_nodes)
        CHECK(nhosts > 1, "one host only (%s): not a cluster run", host);

    /* kport's layouts */
    static char world[4096], rev[4096], odd[4096], even[4096];
    layout_of(MPI_COMM_WORLD, world, sizeof(world));
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - me, &c);
    layout_of(c, rev, sizeof(rev));
    MPI_Comm_free(&c);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &c);
    layout_of(c, me % 2 ? odd : even, sizeof(odd));
    MPI_Comm_free(&c);
    if (P > 1) { /* rank 1 (the first odd rank) sends the odd layout to rank 0 */
        if (me == 1)
            MPI_Send(odd, (int)sizeof(odd), MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        else if (me == 0)
            MPI_Recv(odd, (int)sizeof(odd), MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else
        strcpy(odd, "-");

    if (me == 0) {
        char mpi[4096], ids[4096];
        size_t o = 0, k = 0;
        printf("hosts: ");
        for (int r = 0; r < P; r++)
            printf("%s%s", hosts + 64 * r, r + 1 < P ? "," : "\n");
        for (int r = 0; r < P; r++)
            o += (size_t)snprintf(mpi + o, sizeof(mpi) - o, "%d%s", mpinode[r], r + 1 < P ? "," : "");
        printf("mpi: %s\n", mpi);
        printf("layout world=%s reversed=%s odd=%s even=%s\n", world, rev, odd, even);
        while (world[k] && world[k] != '/')
            k++;
        memcpy(ids, world, k);
        ids[k] = '\0';
        if (!emulated)
            CHECK(strcmp(ids, mpi) == 0, "kport's world nodes %s, MPI's %s", ids, mpi);
        if (expect)
            CHECK(strcmp(ids, expect) == 0, "kport's world nodes %s, expected %s", ids, expect);
    }

    if (win)
        win_probe(win);

    if (bench) {
        int near = -1, far = -1;
        for (int r = 1; r < P; r++) {
            if (near < 0 && leads[r] == leads[0])
                near = r;
            if (far < 0 && leads[r] != leads[0])
                far = r;
        }
        double tn = near > 0 ? pingpong(near) : -1, tf = far > 0 ? pingpong(far) : -1;
        double an = allgather8(0), ak = allgather8(1);
        if (me == 0) {
            printf("bench: ping-pong 8 B within a host %.2f us (rank %d), across hosts %.2f us (rank %d)\n", tn, near,
                   tf, far);
            printf("bench: allgather 8 B P=%d native %.1f us, kport %.1f us (%s)\n", P, an, ak,
                   kp_last_algorithm(KP_COLL_ALLGATHER));
        }
    }
    long tot[2] = {passed, failed}, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("test_layout: %ld passed, %ld failed\n", sum[0], sum[1]);
    int bad = failed > 0, anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Comm_free(&shm);
    free(hosts);
    free(leads);
    free(mpinode);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
