/*
 * The one path shared by the data-moving entry points (kp_allgather,
 * kp_gather, kp_alltoall): argument checks, datatype handling (in place for
 * gap-free types, packed staging through MPI_Pack / MPI_Unpack otherwise),
 * plan selection and execution. Not part of the API.
 */
#ifndef KP_ARGS_H
#define KP_ARGS_H

#include "core/core.h"

typedef struct kp_call {
    const char *fn; /* entry point, named in error messages */
    int coll;       /* KP_COLL_ALLGATHER, KP_COLL_GATHER or KP_COLL_ALLTOALL */
    const void *sbuf; /* may be MPI_IN_PLACE */
    MPI_Count scount;
    MPI_Datatype stype;
    void *rbuf;
    MPI_Count rcount;
    MPI_Datatype rtype;
    int root; /* gather only */
    MPI_Comm comm;
} kp_call;

/* Check the arguments with MPI's semantics and run the call:
 *  - send count/type/buffer ignored under MPI_IN_PLACE; for gather the
 *    receive side is significant only at the root, MPI_IN_PLACE only valid
 *    at the root, a root outside [0, P) is KP_ERR_ARG;
 *  - MPI_COMM_NULL / inter-communicator -> KP_ERR_COMM; MPI_DATATYPE_NULL or
 *    an invalid type -> KP_ERR_DATATYPE; negative / overflowing counts or
 *    send size != receive size (where both are significant) -> KP_ERR_COUNT;
 *    then a zero-byte call succeeds at once; then a NULL buffer -> KP_ERR_ARG;
 *  - the plan is selected (kp_select_plan) and recorded with
 *    kp_set_last_algorithm, then executed on kport's private communicator.
 * A block of a type that is not one gap-free run is packed into the
 * communicator's staging buffer and unpacked block by block afterwards, so
 * gaps in the user's buffers are never written. */
int kp_call_run(const kp_call *k);

#endif /* KP_ARGS_H */
