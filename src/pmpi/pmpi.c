/*
 * libkport-pmpi.so: run an unmodified MPI program's collectives through kport.
 *
 *   mpirun -np 4 env LD_PRELOAD=/path/to/libkport-pmpi.so ./app
 *
 * Defines MPI_Allgather, MPI_Gather, MPI_Alltoall, MPI_Barrier, MPI_Bcast,
 * MPI_Scatter, MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block and
 * MPI_Reduce_scatter through the MPI profiling interface: the preloaded definitions take precedence over
 * the MPI library's, and whatever kport does not handle goes unchanged to
 * the PMPI_ function of the same name. Only these MPI_ symbols are
 * exported (pmpi.map): the kport copy inside this library is private to it.
 * kport's internals should call PMPI_ for these collectives; should one call
 * MPI_Barrier & co. anyway while a kport call runs on this thread, the
 * wrapper sees it (a thread-local flag) and sends it straight to PMPI_
 * instead of recursing into kport.
 *
 * Routing, decided identically on every rank of the communicator (from the
 * environment, which mpirun gives every rank, and from arguments MPI requires
 * to be consistent):
 *   - KPORT_DISABLE=alltoall,gather,... (comma list of allgather, barrier,
 *     gather, alltoall, bcast, scatter, reduce, allreduce,
 *     reduce_scatter_block, reduce_scatter, or "all"; the MPI_ names work
 *     too)                               -> PMPI_
 *   - an inter-communicator              -> PMPI_
 *   - kport refuses the call: a datatype it cannot move (KP_ERR_DATATYPE),
 *     an operation and datatype it does not reduce (a user-defined
 *     operation on a type with gaps, a type outside MPI's table:
 *     KP_ERR_UNSUPPORTED), no algorithm for the call (KP_ERR_UNSUPPORTED),
 *     a forced algorithm that cannot apply (KP_ERR_UNSUPPORTED; also when
 *     MPI refused the segment or windows it needs, agreed by every rank
 *     before the call communicates: kport.h), a bad
 *     KPORT_<COLL>/KPORT_FALLBACK setting (KP_ERR_PARAM), or a user error
 *     (KP_ERR_ARG, KP_ERR_COUNT, KP_ERR_COMM)
 *                                        -> PMPI_ with the same arguments, so
 *     MPI's own error handling reports a user error as MPI would. kport
 *     detects all of these before it communicates.
 *   - a cold communicator: one other than MPI_COMM_WORLD that has made at
 *     most KPORT_COLD_CALLS calls (default 16; 0 turns the policy off;
 *     calls on freed communicators of the same ranks count too)
 *     while the call would be the first to need kport's set-up on it (the
 *     node's shared segment, the private duplicate: tens to hundreds of
 *     microseconds, docs/PERFORMANCE.md) -> PMPI_. Communicators used for
 *     a handful of calls never pay the set-up; a communicator whose
 *     resources kport kept from a freed one of the same ranks (comm.c) is
 *     never cold. Decided identically on every rank.
 *   - kport fails after communication started (KP_ERR_MPI, KP_ERR_NOMEM,
 *     KP_ERR_INTERNAL): MPI gives no way to recover, so the wrapper prints
 *     the reason and calls MPI_Abort.
 *
 * KPORT_VERBOSE=1: rank 0 of the communicator prints, the first time, one
 * line per (collective, algorithm) kport serves and per (collective, reason)
 * a call goes to PMPI_:
 *   kport-pmpi: MPI_Allgather served by kport (bruck:k=2)
 *   kport-pmpi: MPI_Alltoall -> PMPI_Alltoall (disabled by KPORT_DISABLE)
 */
#include "core/core.h" /* kp_set_cold_calls, KP_COLD (plan.h, through it) */
#include "kport.h"

#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const mpi_name[KP_COLL_COUNT] = {
    "MPI_Allgather", "MPI_Barrier",   "MPI_Gather",               "MPI_Alltoall",      "MPI_Bcast",
    "MPI_Scatter",   "MPI_Reduce",    "MPI_Allreduce",            "MPI_Reduce_scatter_block", "MPI_Reduce_scatter"};

/* ---- settings, read once ------------------------------------------------ */

static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static int disabled[KP_COLL_COUNT];
static int verbose;
static char bad_disable[128]; /* unknown KPORT_DISABLE entries, warned about once */

#define COLD_CALLS_DEFAULT 16

static void settings_init(void)
{
    const char *v = getenv("KPORT_VERBOSE");
    verbose = v && *v && strcmp(v, "0") != 0;
    long cold = COLD_CALLS_DEFAULT;
    v = getenv("KPORT_COLD_CALLS");
    if (v && *v) {
        char *end;
        long x = strtol(v, &end, 10);
        if (*end || x < 0 || x > 1000000000L) {
            int rank = 0;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            if (rank == 0)
                fprintf(stderr, "kport-pmpi: warning: KPORT_COLD_CALLS=\"%s\": expected an integer in 0..1000000000; "
                                "using %d\n", v, COLD_CALLS_DEFAULT);
        } else {
            cold = x;
        }
    }
    kp_set_cold_calls(cold);
    v = getenv("KPORT_DISABLE");
    if (!v)
        return;
    char list[256];
    snprintf(list, sizeof(list), "%s", v);
    char *save = NULL;
    for (char *tok = strtok_r(list, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
        int found = 0;
        if (strcasecmp(tok, "all") == 0) {
            for (int c = 0; c < KP_COLL_COUNT; c++)
                disabled[c] = 1;
            found = 1;
        }
        for (int c = 0; c < KP_COLL_COUNT && !found; c++)
            if (strcasecmp(tok, kp_coll_name(c)) == 0 || strcasecmp(tok, mpi_name[c]) == 0)
                disabled[c] = found = 1;
        if (!found) {
            size_t n = strlen(bad_disable);
            snprintf(bad_disable + n, sizeof(bad_disable) - n, "%s%s", n ? "," : "", tok);
        }
    }
    if (bad_disable[0]) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr,
                    "kport-pmpi: warning: KPORT_DISABLE: ignoring unknown \"%s\" "
                    "(expected a comma list of allgather, barrier, gather, alltoall, bcast, scatter, reduce, "
                    "allreduce, reduce_scatter_block, reduce_scatter or all)\n",
                    bad_disable);
    }
}

/* ---- KPORT_VERBOSE announcements ----------------------------------------- */

#define SEEN_MAX 128
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int coll;
    char key[80];
} seen[SEEN_MAX];
static int nseen;

/* 1 the first time (coll, key) is seen by this process, else 0 */
static int first_time(int coll, const char *key)
{
    int first = 1;
    pthread_mutex_lock(&seen_lock);
    for (int i = 0; i < nseen && first; i++)
        if (seen[i].coll == coll && strncmp(seen[i].key, key, sizeof(seen[i].key) - 1) == 0)
            first = 0;
    if (first && nseen < SEEN_MAX) {
        seen[nseen].coll = coll;
        snprintf(seen[nseen].key, sizeof(seen[nseen].key), "%s", key);
        nseen++;
    } else if (first) {
        first = 0; /* table full: stay quiet rather than repeat */
    }
    pthread_mutex_unlock(&seen_lock);
    return first;
}

static int is_rank0(MPI_Comm comm)
{
    int rank = -1;
    if (comm == MPI_COMM_NULL || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return 0;
    return rank == 0;
}

/* "served by kport (<algorithm>)" */
static void announce_served(int coll, MPI_Comm comm, int moved_nothing)
{
    if (!is_rank0(comm))
        return;
    const char *algo = moved_nothing ? "0 bytes, nothing to move" : kp_last_algorithm(coll);
    if (!algo || !*algo)
        algo = "?";
    if (first_time(coll, algo))
        fprintf(stderr, "kport-pmpi: %s served by kport (%s)\n", mpi_name[coll], algo);
}

/* "-> PMPI_X (<reason>)"; key groups the calls that share a reason */
static void announce_pmpi(int coll, MPI_Comm comm, const char *key, const char *reason)
{
    if (!is_rank0(comm))
        return;
    if (first_time(coll, key))
        fprintf(stderr, "kport-pmpi: %s -> P%s (%s)\n", mpi_name[coll], mpi_name[coll], reason);
}

/* ---- routing -------------------------------------------------------------- */

/* set while this thread runs a kp_* call: nested calls go to PMPI_ */
static _Thread_local int in_kport;

enum route { ROUTE_KPORT, ROUTE_DISABLED, ROUTE_INTER, ROUTE_BADCOMM };

static enum route route(int coll, MPI_Comm comm)
{
    pthread_once(&settings_once, settings_init);
    if (disabled[coll])
        return ROUTE_DISABLED;
    if (comm == MPI_COMM_NULL)
        return ROUTE_BADCOMM;
    int inter = 0;
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return ROUTE_BADCOMM;
    return inter ? ROUTE_INTER : ROUTE_KPORT;
}

static void announce_route(int coll, MPI_Comm comm, enum route r)
{
    if (!verbose)
        return;
    switch (r) {
    case ROUTE_DISABLED:
        announce_pmpi(coll, comm, "-disabled", "disabled by KPORT_DISABLE");
        break;
    case ROUTE_INTER:
        announce_pmpi(coll, comm, "-inter", "inter-communicator");
        break;
    case ROUTE_BADCOMM:
        announce_pmpi(coll, comm, "-badcomm", "invalid communicator");
        break;
    case ROUTE_KPORT:
        break;
    }
}

/* kport returned rc != KP_SUCCESS. Return 1 when the call should go to
 * PMPI_ (kport refused it before communicating); abort otherwise. */
static int refused(int coll, MPI_Comm comm, int rc)
{
    switch (rc) {
    case KP_COLD:
        if (verbose)
            announce_pmpi(coll, comm, "-cold", "cold communicator: its first calls go to MPI (KPORT_COLD_CALLS)");
        return 1;
    case KP_ERR_ARG:
    case KP_ERR_COUNT:
    case KP_ERR_DATATYPE:
    case KP_ERR_COMM:
    case KP_ERR_PARAM:
    case KP_ERR_UNSUPPORTED:
        if (verbose) {
            char key[32], reason[400];
            snprintf(key, sizeof(key), "-refused%d", rc);
            snprintf(reason, sizeof(reason), "%s: %s", kp_strerror(rc), kp_last_error());
            announce_pmpi(coll, comm, key, reason);
        }
        return 1;
    default:
        break;
    }
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr,
            "kport-pmpi: rank %d: %s failed inside kport after communication started (%s: %s); "
            "MPI cannot recover from this, aborting\n",
            rank, mpi_name[coll], kp_strerror(rc), kp_last_error());
    fflush(stderr);
    MPI_Abort(comm, 1);
    return 0; /* not reached */
}

/* count elements of t carry no data (only asked for with KPORT_VERBOSE) */
static int no_data(int count, MPI_Datatype t)
{
    int size = 0;
    if (count == 0)
        return 1;
    if (t == MPI_DATATYPE_NULL || MPI_Type_size(t, &size) != MPI_SUCCESS)
        return 0;
    return size == 0;
}

/* ---- the collectives ------------------------------------------------------ */

/* Should this call go to kport? 1: yes, and this thread is now inside
 * kport (leave() ends it); 0: serve it with PMPI_ (announced). */
static int enter(int coll, MPI_Comm comm)
{
    if (in_kport) /* kport itself calling */
        return 0;
    enum route r = route(coll, comm);
    if (r != ROUTE_KPORT) {
        announce_route(coll, comm, r);
        return 0;
    }
    in_kport = 1;
    return 1;
}

/* kport returned rc: 1 served, 0 refused before communicating (serve it
 * with PMPI_), -1 failed after communication started (MPI_Abort was called) */
static int leave(int coll, MPI_Comm comm, int rc, int moved_nothing)
{
    in_kport = 0;
    if (rc == KP_SUCCESS) {
        if (verbose)
            announce_served(coll, comm, moved_nothing);
        return 1;
    }
    return refused(coll, comm, rc) ? 0 : -1;
}

/* what leave() said, as the MPI_ function returns it (0: go to PMPI_) */
#define SERVED(x) ((x) > 0 ? MPI_SUCCESS : MPI_ERR_INTERN)

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    const int coll = KP_COLL_ALLGATHER;
    int x;
    if (enter(coll, comm) && (x = leave(coll, comm,
                                        kp_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                                        verbose && no_data(recvcount, recvtype))))
        return SERVED(x);
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const int coll = KP_COLL_GATHER;
    int x;
    if (enter(coll, comm) &&
        (x = leave(coll, comm, kp_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                   verbose && (sendbuf == MPI_IN_PLACE ? no_data(recvcount, recvtype) : no_data(sendcount, sendtype)))))
        return SERVED(x);
    return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm)
{
    const int coll = KP_COLL_ALLTOALL;
    int x;
    if (enter(coll, comm) && (x = leave(coll, comm,
                                        kp_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                                        verbose && no_data(recvcount, recvtype))))
        return SERVED(x);
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    const int coll = KP_COLL_BARRIER;
    int x;
    if (enter(coll, comm) && (x = leave(coll, comm, kp_barrier(comm), 0)))
        return SERVED(x);
    return PMPI_Barrier(comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    const int coll = KP_COLL_BCAST;
    int x;
    if (enter(coll, comm) &&
        (x = leave(coll, comm, kp_bcast(buffer, count, datatype, root, comm), verbose && no_data(count, datatype))))
        return SERVED(x);
    return PMPI_Bcast(buffer, count, datatype, root, comm);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    const int coll = KP_COLL_SCATTER;
    int x;
    if (enter(coll, comm) &&
        (x = leave(coll, comm, kp_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                   verbose && (recvbuf == MPI_IN_PLACE ? no_data(sendcount, sendtype) : no_data(recvcount, recvtype)))))
        return SERVED(x);
    return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm)
{
    const int coll = KP_COLL_REDUCE;
    int x;
    if (enter(coll, comm) && (x = leave(coll, comm, kp_reduce(sendbuf, recvbuf, count, datatype, op, root, comm),
                                        verbose && no_data(count, datatype))))
        return SERVED(x);
    return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    const int coll = KP_COLL_ALLREDUCE;
    int x;
    if (enter(coll, comm) && (x = leave(coll, comm, kp_allreduce(sendbuf, recvbuf, count, datatype, op, comm),
                                        verbose && no_data(count, datatype))))
        return SERVED(x);
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm)
{
    const int coll = KP_COLL_REDUCE_SCATTER_BLOCK;
    int x;
    if (enter(coll, comm) &&
        (x = leave(coll, comm, kp_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm),
                   verbose && no_data(recvcount, datatype))))
        return SERVED(x);
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

/* the vector's elements in all (only asked for with KPORT_VERBOSE) */
static int no_data_counts(const int *counts, MPI_Datatype t, MPI_Comm comm)
{
    int P = 0;
    long total = 0;
    if (!counts || MPI_Comm_size(comm, &P) != MPI_SUCCESS)
        return 0;
    for (int j = 0; j < P; j++)
        total += counts[j];
    return total == 0 || no_data(1, t);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm)
{
    const int coll = KP_COLL_REDUCE_SCATTER;
    int x;
    if (enter(coll, comm) &&
        (x = leave(coll, comm, kp_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm),
                   verbose && no_data_counts(recvcounts, datatype, comm))))
        return SERVED(x);
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
