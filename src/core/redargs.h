/*
 * The one path shared by the reductions' entry points (kp_reduce,
 * kp_allreduce, kp_reduce_scatter_block, kp_reduce_scatter): argument
 * checks with MPI's semantics, the operation and datatype (which combine
 * kernel, which element size, staging), plan selection and execution. Not
 * part of the API.
 */
#ifndef KP_REDARGS_H
#define KP_REDARGS_H

#include "core/core.h"

typedef struct kp_red_call {
    const char *fn;        /* entry point, named in error messages */
    int coll;              /* KP_COLL_REDUCE, _ALLREDUCE, _REDUCE_SCATTER_BLOCK, _REDUCE_SCATTER */
    const void *sbuf;      /* may be MPI_IN_PLACE (reduce: at the root only) */
    void *rbuf;            /* reduce: significant at the root only */
    MPI_Count count;       /* elements (reduce_scatter_block: per rank's block) */
    const int *recvcounts; /* reduce_scatter: [P] elements per rank's block */
    MPI_Datatype type;
    MPI_Op op;
    int root;              /* reduce only */
    MPI_Comm comm;
} kp_red_call;

/* Check the arguments and run the call (redargs.c says how):
 *  - MPI_COMM_NULL / inter-communicator -> KP_ERR_COMM; a root outside
 *    [0, P) or MPI_IN_PLACE at a reduce's non-root -> KP_ERR_ARG;
 *  - MPI_OP_NULL, MPI_REPLACE, MPI_NO_OP -> KP_ERR_ARG; MPI_DATATYPE_NULL,
 *    an invalid type or a builtin operation MPI does not define on the type
 *    -> KP_ERR_DATATYPE; a type kport cannot reduce (a user operation on a
 *    type with gaps, a derived type of several basic types under a builtin
 *    operation, a predefined type outside MPI's table) -> KP_ERR_UNSUPPORTED;
 *    all decided identically on every rank before any communication;
 *  - negative counts -> KP_ERR_COUNT, a NULL recvcounts -> KP_ERR_ARG;
 *    then a zero-element call succeeds at once; then NULL buffers where
 *    data are -> KP_ERR_ARG. */
int kp_red_call_run(const kp_red_call *k);

#endif /* KP_REDARGS_H */
