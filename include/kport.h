/*
 * kport: k-port, concurrent and hierarchical collectives on top of MPI.
 *
 * Public API. Every function returns KP_SUCCESS (0) or a KP_ERR_* code;
 * kp_strerror() names the code and kp_last_error() gives the detailed
 * message of the most recent failure on the calling thread.
 */
#ifndef KPORT_H
#define KPORT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KPORT_VERSION_MAJOR 0
#define KPORT_VERSION_MINOR 1
#define KPORT_VERSION_PATCH 0

enum kp_error {
    KP_SUCCESS = 0,
    KP_ERR_ARG = 1,         /* NULL buffer with nonzero count, bad pointer argument */
    KP_ERR_COUNT = 2,       /* negative count, send/receive size mismatch */
    KP_ERR_DATATYPE = 3,    /* datatype kport cannot move correctly */
    KP_ERR_COMM = 4,        /* invalid or inter-communicator */
    KP_ERR_PARAM = 5,       /* invalid algorithm name or parameter (k, C, ...) */
    KP_ERR_UNSUPPORTED = 6, /* forced algorithm cannot apply to this call */
    KP_ERR_NOMEM = 7,       /* allocation failed */
    KP_ERR_MPI = 8,         /* an MPI call failed */
    KP_ERR_INTERNAL = 9     /* a kport bug: please report */
};

/* Collectives kport knows about (used to force algorithms). */
enum kp_coll {
    KP_COLL_ALLGATHER = 0,
    KP_COLL_BARRIER = 1,
    KP_COLL_GATHER = 2,
    KP_COLL_ALLTOALL = 3,
    KP_COLL_COUNT
};

/* What to do when a forced algorithm cannot apply (KPORT_FALLBACK). */
enum kp_fallback {
    KP_FALLBACK_ERROR = 0,  /* return KP_ERR_UNSUPPORTED (default) */
    KP_FALLBACK_WARN = 1,   /* print a warning on rank 0, use the automatic choice */
    KP_FALLBACK_SILENT = 2  /* use the automatic choice quietly */
};

/* All-gather with MPI_Allgather semantics (MPI_IN_PLACE, any
 * intra-communicator, builtin and derived datatypes). */
int kp_allgather(const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
                 void *recvbuf, MPI_Count rcount, MPI_Datatype rtype,
                 MPI_Comm comm);

/* Barrier with MPI_Barrier semantics. */
int kp_barrier(MPI_Comm comm);

/* Gather with MPI_Gather semantics (any root; MPI_IN_PLACE as sendbuf at
 * the root; recvbuf, rcount and rtype significant only at the root). */
int kp_gather(const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
              void *recvbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
              MPI_Comm comm);

/* All-to-all with MPI_Alltoall semantics (MPI_IN_PLACE as sendbuf). */
int kp_alltoall(const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
                void *recvbuf, MPI_Count rcount, MPI_Datatype rtype,
                MPI_Comm comm);

/* Force an algorithm for a collective, e.g. "bruck:k=3",
 * "concurrent_exchange:C=2", "nway_dissemination:n=3", or "auto" (or NULL)
 * to restore automatic selection. Overrides KPORT_<COLL> (KPORT_ALLGATHER,
 * KPORT_BARRIER, KPORT_GATHER, KPORT_ALLTOALL). Returns KP_ERR_PARAM for an unknown
 * name or parameter. Process-wide; must be the same on every rank. */
int kp_set_algorithm(enum kp_coll coll, const char *spec);

/* Set the fallback policy (overrides KPORT_FALLBACK). */
int kp_set_fallback(enum kp_fallback policy);

/* The name and parameters of the algorithm the last kport call on this
 * thread ran for `coll`, e.g. "bruck:k=2" (empty before the first call). */
const char *kp_last_algorithm(enum kp_coll coll);

/* The node layout kport uses for comm (real nodes, split further by the
 * emulation variables KPORT_NODE_SIZE / KPORT_NODE_MAP): the number of
 * nodes, this rank's node (numbered by lowest rank), its index within the
 * node (0 = leader) and the node's size. Any output may be NULL. Collective
 * on the first kport use of comm. */
int kp_node_info(MPI_Comm comm, int *nnodes, int *node, int *local, int *node_size);

/* Number of registered algorithms for `coll` and the name of the i-th one. */
int kp_algorithm_count(enum kp_coll coll);
const char *kp_algorithm_name(enum kp_coll coll, int i);

const char *kp_strerror(int code);
const char *kp_last_error(void);

/* Free every cached plan, scratch buffer, shared segment and private
 * communicator (optional: a communicator's state is also freed when the
 * communicator is freed, and everything at MPI_Finalize). Collective over
 * every communicator kport has used: call it on all ranks, or not at all. */
void kp_release_caches(void);

#ifdef __cplusplus
}
#endif
#endif /* KPORT_H */
