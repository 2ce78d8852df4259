/*
 * kp_alltoall: MPI_Alltoall semantics (scount elements of stype to every
 * rank, block j of the send buffer to rank j; MPI_IN_PLACE: the receive
 * buffer is also the send buffer, scount and stype are ignored). Shared
 * path: see args.c.
 */
#include "core/args.h"

int kp_alltoall(const void *sendbuf, MPI_Count scount, MPI_Datatype stype, void *recvbuf, MPI_Count rcount,
                MPI_Datatype rtype, MPI_Comm comm)
{
    const kp_call k = {.fn = "kp_alltoall", .coll = KP_COLL_ALLTOALL, .sbuf = sendbuf, .scount = scount,
                       .stype = stype, .rbuf = recvbuf, .rcount = rcount, .rtype = rtype, .root = 0, .comm = comm};
    return kp_call_run(&k);
}
