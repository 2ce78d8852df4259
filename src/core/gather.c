/*
 * kp_gather: MPI_Gather semantics (any root; recvbuf, rcount and rtype
 * significant only at the root; MPI_IN_PLACE only at the root, where the
 * root's block is already in place). Shared path: see args.c.
 */
#include "core/args.h"

int kp_gather(const void *sendbuf, MPI_Count scount, MPI_Datatype stype, void *recvbuf, MPI_Count rcount,
              MPI_Datatype rtype, int root, MPI_Comm comm)
{
    const kp_call k = {.fn = "kp_gather", .coll = KP_COLL_GATHER, .sbuf = sendbuf, .scount = scount,
                       .stype = stype, .rbuf = recvbuf, .rcount = rcount, .rtype = rtype, .root = root, .comm = comm};
    return kp_call_run(&k);
}
