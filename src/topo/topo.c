/*
 * Topology: which ranks of a communicator share a node.
 *
 * Real nodes come from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). Emulated
 * nodes split them further, like MPICH's MPIR_CVAR_NUM_CLIQUES, so that
 * multi-node code paths run on one machine (real shared memory inside an
 * emulated node, MPI between emulated nodes). Emulated node ids are a
 * function of the rank in MPI_COMM_WORLD, so every communicator sees the
 * same machine:
 *   KPORT_NODE_SIZE=n            blocks of n ranks: node = world rank / n
 *   KPORT_NODE_MAP=cyclic        with KPORT_NODE_SIZE=n: ceil(W/n) nodes,
 *                                node = world rank mod ceil(W/n)
 *   KPORT_NODE_MAP=0,0,1,2,2,... explicit node id of every world rank
 *   KPORT_CMA=0                  pretend cross-memory attach is unavailable
 * The result is a kp_layout (node of every rank, local index, leaders), the
 * node communicator (ordered by rank), the leaders' communicator, and the
 * node's shared segment. Whether single-copy peer reads work is tested
 * once, here, and agreed on by all ranks (builders must see the same).
 */
#define _GNU_SOURCE
#include "core/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static int env_node_id(int wrank, int wsize, long *id)
{
    const char *sz = getenv("KPORT_NODE_SIZE"), *map = getenv("KPORT_NODE_MAP");
    long n = 0;
    *id = 0;
    if (sz && *sz) {
        char *end;
        n = strtol(sz, &end, 10);
        if (*end || n < 1)
            return kp_error(KP_ERR_PARAM, "KPORT_NODE_SIZE=\"%s\": expected an integer >= 1", sz);
    }
    if (!map || !*map || strcmp(map, "block") == 0) {
        *id = n ? wrank / n : 0;
        return KP_SUCCESS;
    }
    if (strcmp(map, "cyclic") == 0) {
        if (!n)
            return kp_error(KP_ERR_PARAM, "KPORT_NODE_MAP=cyclic needs KPORT_NODE_SIZE");
        long nnodes = (wsize + n - 1) / n;
        *id = wrank % nnodes;
        return KP_SUCCESS;
    }
    /* explicit list: one id per world rank */
    const char *p = map;
    for (int r = 0; r <= wrank; r++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0)
            return kp_error(KP_ERR_PARAM,
                            "KPORT_NODE_MAP: expected block, cyclic or a list of %d node ids >= 0, got \"%s\"", wsize,
                            map);
        if (r == wrank)
            *id = v;
        p = end;
        if (*p == ',')
            p++;
        else if (r < wsize - 1)
            return kp_error(KP_ERR_PARAM, "KPORT_NODE_MAP: %d node ids given, %d ranks", r + 1, wsize);
    }
    return KP_SUCCESS;
}

/* can this rank read its node neighbour's memory with process_vm_readv? */
static int cma_probe(kp_comm *c)
{
    static volatile uint64_t magic = 0x6b706f7274434d41ull; /* "kportCMA" */
    const char *e = getenv("KPORT_CMA");
    if (e && strcmp(e, "0") == 0)
        return 0;
    if (c->node_size == 1)
        return 1;
    kp_shm_slot *me = &c->shm.slots[c->local];
    me->addr[0] = (uint64_t)(uintptr_t)&magic;
    PMPI_Barrier(c->node);
    kp_shm_slot *peer = &c->shm.slots[(c->local + 1) % c->node_size];
    uint64_t got = 0;
    struct iovec l = {&got, sizeof(got)}, r = {(void *)(uintptr_t)peer->addr[0], sizeof(got)};
    ssize_t n = process_vm_readv((pid_t)peer->pid, &l, 1, &r, 1, 0);
    PMPI_Barrier(c->node);
    return n == (ssize_t)sizeof(got) && got == magic;
}

int kp_topo_init(kp_comm *c)
{
    int rc, wrank, wsize;
    MPI_Comm real = MPI_COMM_NULL;
    long emu;
    long long *pairs = NULL;
    int *ids = NULL;
    c->node = c->leaders = MPI_COMM_NULL;
    c->shm.win = MPI_WIN_NULL;

    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    /* every rank parses the same environment; agree on errors so none hangs */
    int bad = env_node_id(wrank, wsize, &emu), anybad;
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", kp_last_error());
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, c->comm);
    if (anybad)
        return kp_error(KP_ERR_PARAM, "%s", bad ? msg : "node emulation variables rejected on another rank");

    if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &real) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
    int realid, realsize;
    MPI_Comm_size(real, &realsize);
    PMPI_Allreduce(&c->rank, &realid, 1, MPI_INT, MPI_MIN, real);
    long procs = sysconf(_SC_NPROCESSORS_ONLN);
    c->oversub = procs > 0 && realsize > procs;
    MPI_Comm_free(&real);

    pairs = malloc(2 * (size_t)c->size * sizeof(long long));
    ids = malloc((size_t)c->size * sizeof(int));
    if (!pairs || !ids) {
        rc = kp_error(KP_ERR_NOMEM, "out of memory for the node layout");
        goto out;
    }
    long long mine[2] = {realid, emu};
    PMPI_Allgather(mine, 2, MPI_LONG_LONG, pairs, 2, MPI_LONG_LONG, c->comm);
    /* the node id of a rank: the lowest rank with the same (real, emulated) pair */
    for (int r = 0; r < c->size; r++) {
        ids[r] = r;
        for (int q = 0; q < r; q++)
            if (pairs[2 * q] == pairs[2 * r] && pairs[2 * q + 1] == pairs[2 * r + 1]) {
                ids[r] = ids[q];
                break;
            }
    }
    if (kp_layout_init(&c->layout, c->size, ids, 0)) {
        rc = kp_error(KP_ERR_NOMEM, "out of memory for the node layout");
        goto out;
    }
    c->local = c->layout.local[c->rank];
    c->node_size = kp_layout_node_size(&c->layout, c->layout.node_of[c->rank]);
    if (MPI_Comm_split(c->comm, c->layout.node_of[c->rank], c->rank, &c->node) != MPI_SUCCESS ||
        MPI_Comm_split(c->comm, c->local == 0 ? 0 : MPI_UNDEFINED, c->rank, &c->leaders) != MPI_SUCCESS) {
        rc = kp_error(KP_ERR_MPI, "MPI_Comm_split for the node / leaders' communicator failed");
        goto out;
    }
    if ((rc = kp_shm_reserve(c, 0)))
        goto out;
    int cma = cma_probe(c), allcma;
    PMPI_Allreduce(&cma, &allcma, 1, MPI_INT, MPI_MIN, c->comm);
    c->layout.cma = allcma;
    int anyover;
    PMPI_Allreduce(&c->oversub, &anyover, 1, MPI_INT, MPI_MAX, c->comm);
    c->layout.oversub = anyover;
    rc = KP_SUCCESS;
out:
    free(pairs);
    free(ids);
    return rc;
}

void kp_topo_free(kp_comm *c)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) {
        if (c->shm.win != MPI_WIN_NULL)
            MPI_Win_free(&c->shm.win);
        if (c->node != MPI_COMM_NULL)
            MPI_Comm_free(&c->node);
        if (c->leaders != MPI_COMM_NULL)
            MPI_Comm_free(&c->leaders);
    }
    kp_layout_free(&c->layout);
}
