/*
 * kp_allgather: MPI_Allgather semantics. Argument checks, datatype handling
 * (packed staging for non-contiguous types), plan selection and execution
 * are shared with kp_gather and kp_alltoall: see args.c.
 */
#include "core/args.h"

int kp_allgather(const void *sendbuf, MPI_Count scount, MPI_Datatype stype, void *recvbuf, MPI_Count rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    const kp_call k = {.fn = "kp_allgather", .coll = KP_COLL_ALLGATHER, .sbuf = sendbuf, .scount = scount,
                       .stype = stype, .rbuf = recvbuf, .rcount = rcount, .rtype = rtype, .root = 0, .comm = comm};
    return kp_call_run(&k);
}
