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
 * The result is a kp_layout (node of every rank, local index, leaders).
 *
 * What it costs, and when it is paid (docs/PERFORMANCE.md, "Communicator
 * set-up"): the first communicator that spans MPI_COMM_WORLD learns the
 * layout by communication (MPI_Comm_split_type and one allgather of every
 * rank's real node, emulated node and core count) and keeps those keys per
 * world rank. Every later communicator derives its layout from them by
 * translating its ranks to world ranks (MPI_Group_translate_ranks), with no
 * communication. Whether "the world's keys are known" is the same on every
 * rank of a communicator: they are learnt inside a kport collective on a
 * world-spanning communicator, and a correct MPI program orders collectives
 * on communicators that share ranks the same way on all of them (else it
 * could deadlock when collectives synchronise). Communicators with ranks
 * outside MPI_COMM_WORLD (dynamic processes) always communicate. Under
 * MPI_THREAD_MULTIPLE, or with KPORT_COMM_POOL=0, nothing is derived.
 *
 * The node tier (kp_topo_node: the node communicator, the shared segment,
 * and the probe of whether single-copy peer reads work, agreed on by all
 * ranks because builders must see the same) is brought up only for
 * shared-memory algorithms.
 */
#define _GNU_SOURCE
#include "topo/topo.h"
#include "util/env.h"
#include "util/error.h"

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
/* KPORT_CMA=0: cross-memory attach turned off by the user, not refused */
static int cma_off(void)
{
    const char *e = getenv("KPORT_CMA");
    return e && strcmp(e, "0") == 0;
}

static int cma_probe(kp_comm *c)
{
    static volatile uint64_t magic = 0x6b706f7274434d41ull; /* "kportCMA" */
    if (cma_off())
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

/* per world rank: real node key, emulated node id, online cores */
static struct {
    int known;
    int size;
    int *real;
    long *emu;
    int *cores;
} world;
static MPI_Group world_group = MPI_GROUP_NULL;

static double now(void)
{
    return MPI_Wtime();
}

/* ranks of c in MPI_COMM_WORLD (MPI_UNDEFINED for ranks outside it) */
static int *world_ranks(kp_comm *c)
{
    int *in = malloc((size_t)c->size * sizeof(int)), *out = malloc((size_t)c->size * sizeof(int));
    if (!in || !out) {
        free(in);
        free(out);
        return NULL;
    }
    if (world_group == MPI_GROUP_NULL)
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int r = 0; r < c->size; r++)
        in[r] = r;
    MPI_Group_translate_ranks(c->group, c->size, in, world_group, out);
    free(in);
    return out;
}

typedef struct {
    long long real, emu;
    int rank;
} key_t_;

static int key_cmp(const void *x, const void *y)
{
    const key_t_ *a = x, *b = y;
    if (a->real != b->real)
        return a->real < b->real ? -1 : 1;
    if (a->emu != b->emu)
        return a->emu < b->emu ? -1 : 1;
    return a->rank - b->rank;
}

/* c->layout, local, node_size, oversub from every rank's keys: ranks with
 * the same (real, emulated) pair share a node; a node is oversubscribed when
 * the communicator has more ranks on its real node than it has cores */
static int layout_from_keys(kp_comm *c, const long long *real, const long long *emu, const long long *cores)
{
    const int P = c->size;
    key_t_ *k = malloc((size_t)P * sizeof(*k));
    int *ids = malloc((size_t)P * sizeof(int));
    if (!k || !ids) {
        free(k);
        free(ids);
        return kp_error(KP_ERR_NOMEM, "out of memory for the node layout");
    }
    for (int r = 0; r < P; r++)
        k[r] = (key_t_){real[r], emu[r], r};
    qsort(k, (size_t)P, sizeof(*k), key_cmp);
    /* a node's id: its lowest rank; count ranks per real node on the way */
    int over = 0;
    for (int i = 0, realstart = 0, nodefirst = 0; i < P; i++) {
        if (i > 0 && k[i].real != k[i - 1].real)
            realstart = i;
        if (i == 0 || k[i].real != k[i - 1].real || k[i].emu != k[i - 1].emu)
            nodefirst = k[i].rank;
        ids[k[i].rank] = nodefirst;
        if (i + 1 == P || k[i + 1].real != k[i].real) { /* end of a real node */
            const int n = i + 1 - realstart;
            for (int j = realstart; j <= i; j++) {
                const int o = cores[k[j].rank] > 0 && n > cores[k[j].rank];
                over |= o;
                if (k[j].rank == c->rank)
                    c->oversub = o;
            }
        }
    }
    free(k);
    int rc = kp_layout_init(&c->layout, P, ids, 0);
    free(ids);
    if (rc)
        return kp_error(KP_ERR_NOMEM, "out of memory for the node layout");
    c->layout.oversub = over;
    c->local = c->layout.local[c->rank];
    c->node_size = kp_layout_node_size(&c->layout, c->layout.node_of[c->rank]);
    return KP_SUCCESS;
}

/* the layout from the world's keys; 1 if derived, 0 if c has ranks outside
 * MPI_COMM_WORLD, or an error code */
static int layout_derive(kp_comm *c)
{
    int *w = world_ranks(c);
    long long *keys = malloc(3 * (size_t)c->size * sizeof(long long));
    int rc = 1;
    if (!w || !keys) {
        rc = kp_error(KP_ERR_NOMEM, "out of memory for the node layout");
        goto out;
    }
    for (int r = 0; r < c->size && rc == 1; r++) {
        if (w[r] == MPI_UNDEFINED || w[r] < 0 || w[r] >= world.size) {
            rc = 0;
            break;
        }
        keys[r] = world.real[w[r]];
        keys[c->size + r] = world.emu[w[r]];
        keys[2 * c->size + r] = world.cores[w[r]];
    }
    if (rc == 1) {
        int e = layout_from_keys(c, keys, keys + c->size, keys + 2 * c->size);
        if (e)
            rc = e;
    }
out:
    free(w);
    free(keys);
    return rc;
}

/* the layout by communication on the user's communicator (collectives on it
 * never match its point-to-point traffic): MPI_Comm_split_type for the real
 * node, one allgather of (error, real node key, emulated id, cores) */
static int layout_communicate(kp_comm *c)
{
    int rc, wrank, wsize;
    MPI_Comm real = MPI_COMM_NULL;
    MPI_Group rg = MPI_GROUP_NULL;
    long long *all = NULL, *keys = NULL;
    int *w = NULL;
    long emu = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    /* every rank parses the same environment; the allgather agrees on errors so none hangs */
    int bad = env_node_id(wrank, wsize, &emu) != KP_SUCCESS;
    char msg[512];
    snprintf(msg, sizeof(msg), "%s", kp_last_error());

    if (MPI_Comm_split_type(c->user, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &real) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
    MPI_Comm_set_errhandler(real, MPI_ERRORS_RETURN); /* kport's own: it may become the node communicator */
    /* the real node's key: the world rank of its lowest rank (local: the
     * split's key orders it by our rank) */
    int zero = 0, realkey = 0;
    if (world_group == MPI_GROUP_NULL)
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(real, &rg);
    MPI_Group_translate_ranks(rg, 1, &zero, world_group, &realkey);
    MPI_Group_free(&rg);
    if (realkey == MPI_UNDEFINED) { /* outside the world: any rank of c's own numbering */
        MPI_Group cg;
        MPI_Comm_group(real, &rg);
        MPI_Comm_group(c->user, &cg);
        MPI_Group_translate_ranks(rg, 1, &zero, cg, &realkey);
        realkey += wsize; /* cannot collide with a world rank */
        MPI_Group_free(&rg);
        MPI_Group_free(&cg);
    }
    long procs = sysconf(_SC_NPROCESSORS_ONLN);
    long long mine[4] = {bad, realkey, emu, procs};
    const int P = c->size;
    all = malloc(4 * (size_t)P * sizeof(long long));
    keys = calloc(3 * (size_t)P, sizeof(long long));
    if (!all || !keys) {
        rc = kp_error(KP_ERR_NOMEM, "out of memory for the node layout");
        goto out;
    }
    PMPI_Allgather(mine, 4, MPI_LONG_LONG, all, 4, MPI_LONG_LONG, c->user);
    int anybad = 0, sameemu = 1;
    for (int r = 0; r < P; r++) {
        anybad |= all[4 * r] != 0;
        keys[r] = all[4 * r + 1];
        keys[P + r] = all[4 * r + 2];
        keys[2 * P + r] = all[4 * r + 3];
        sameemu &= keys[P + r] == keys[P];
    }
    if (anybad) {
        rc = kp_error(KP_ERR_PARAM, "%s", bad ? msg : "node emulation variables rejected on another rank");
        goto out;
    }
    if ((rc = layout_from_keys(c, keys, keys + P, keys + 2 * P)))
        goto out;
    if (sameemu) { /* no emulation: the real node is the node (ordered by rank) */
        c->node = real;
        real = MPI_COMM_NULL;
    }
    /* a communicator spanning the world teaches the keys of every world rank */
    if (!world.known && P == wsize && (w = world_ranks(c))) {
        int ok = 1;
        for (int r = 0; r < P; r++)
            ok &= w[r] >= 0 && w[r] < wsize;
        world.real = malloc((size_t)wsize * sizeof(int));
        world.emu = malloc((size_t)wsize * sizeof(long));
        world.cores = malloc((size_t)wsize * sizeof(int));
        if (ok && world.real && world.emu && world.cores) {
            for (int r = 0; r < P; r++) {
                world.real[w[r]] = (int)keys[r];
                world.emu[w[r]] = (long)keys[P + r];
                world.cores[w[r]] = (int)keys[2 * P + r];
            }
            world.size = wsize;
            world.known = 1;
        } else {
            kp_topo_forget_world();
        }
    }
    rc = KP_SUCCESS;
out:
    if (real != MPI_COMM_NULL)
        MPI_Comm_free(&real);
    free(all);
    free(keys);
    free(w);
    return rc;
}

void kp_topo_forget_world(void)
{
    free(world.real);
    free(world.emu);
    free(world.cores);
    memset(&world, 0, sizeof(world));
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && world_group != MPI_GROUP_NULL)
        MPI_Group_free(&world_group);
    world_group = MPI_GROUP_NULL;
}

int kp_topo_layout(kp_comm *c, int derive)
{
    double t0 = now();
    if (derive && world.known) {
        int rc = layout_derive(c);
        if (rc == 1) {
            kp_setup_account(KP_SETUP_LAYOUT_DERIVED, now() - t0);
            return KP_SUCCESS;
        }
        if (rc)
            return rc;
    }
    int rc = layout_communicate(c);
    if (rc == KP_SUCCESS)
        kp_setup_account(KP_SETUP_LAYOUT_COMM, now() - t0);
    return rc;
}

int kp_topo_private(kp_comm *c)
{
    if (c->comm != MPI_COMM_NULL)
        return KP_SUCCESS;
    const double t0 = MPI_Wtime();
    if (MPI_Comm_dup(c->user, &c->comm) != MPI_SUCCESS) {
        c->comm = MPI_COMM_NULL;
        return kp_error(KP_ERR_MPI, "MPI_Comm_dup failed");
    }
    MPI_Comm_set_name(c->comm, "kport private");
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    kp_setup_account(KP_SETUP_DUP, MPI_Wtime() - t0);
    return KP_SUCCESS;
}

int kp_topo_node(kp_comm *c)
{
    if (c->node_ready)
        return KP_SUCCESS;
    double t0 = now();
    if (c->shm_refused)
        return kp_error(KP_ERR_UNSUPPORTED, "%s", c->refused);
    if (c->node == MPI_COMM_NULL) {
        if (MPI_Comm_split(c->user, c->layout.node_of[c->rank], c->rank, &c->node) != MPI_SUCCESS) {
            c->node = MPI_COMM_NULL;
            return kp_error(KP_ERR_MPI, "MPI_Comm_split for the node communicator failed");
        }
        /* kport's own communicator: the segment's refusal returns (segment.c) */
        MPI_Comm_set_errhandler(c->node, MPI_ERRORS_RETURN);
        kp_setup_account(KP_SETUP_NODE_COMM, now() - t0);
    }
    int rc = kp_shm_reserve(c, 0);
    /* every rank of c learns whether every node made its segment: a node
     * whose MPI refused (no shared windows, a full /dev/shm) must not be
     * left out of the shared-memory plans the others would run */
    if (!kp_comm_agree(c, rc == KP_SUCCESS)) {
        snprintf(c->refused, sizeof(c->refused), "no shared-memory algorithm: %.150s",
                 rc ? kp_last_error() : "MPI refused the node's segment on another node");
        c->shm_refused = 1;
        kp_shm_free(c); /* this node's, if only another's was refused (collective on the node) */
        char note[300];
        snprintf(note, sizeof(note), "%s; the algorithms without shared memory run instead", c->refused);
        kp_comm_refusal_note(c, KP_REFUSED_NODE, note);
        return kp_error(KP_ERR_UNSUPPORTED, "%s", c->refused);
    }
    t0 = now();
    const int cma = cma_probe(c);
    kp_setup_account(KP_SETUP_CMA_PROBE, now() - t0);
    /* the probe's result is agreed with the calibrated costs, in one allreduce */
    t0 = now();
    if ((rc = kp_calibrate(c, cma)))
        return rc;
    if (!c->layout.cma && c->layout.nnodes < c->size && !cma_off())
        kp_comm_refusal_note(c, KP_REFUSED_CMA,
                             "cross-memory attach (process_vm_readv) is refused on a node: the single-copy "
                             "algorithms are left out, the two copies through the segment run instead");
    c->node_ready = 1;
    kp_setup_account(KP_SETUP_CALIBRATE, now() - t0);
    return KP_SUCCESS;
}

void kp_topo_release(kp_comm *c)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) {
        double t0 = now();
        if (c->shm.win != MPI_WIN_NULL)
            kp_shm_free(c);
        if (c->node != MPI_COMM_NULL)
            MPI_Comm_free(&c->node);
        if (c->comm != MPI_COMM_NULL)
            MPI_Comm_free(&c->comm);
        kp_setup_account(KP_SETUP_RELEASE, now() - t0);
    }
    c->node = c->comm = MPI_COMM_NULL;
    c->shm.win = MPI_WIN_NULL;
    c->node_ready = 0;
    kp_layout_free(&c->layout);
}
