/*
 * kp_scatter: MPI_Scatter semantics (any root; sendbuf, scount and stype
 * significant only at the root; MPI_IN_PLACE as recvbuf only at the root,
 * whose block then stays in its send buffer). Shared path: see args.c.
 */
#include "core/args.h"

int kp_scatter(const void *sendbuf, MPI_Count scount, MPI_Datatype stype, void *recvbuf, MPI_Count rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    const kp_call k = {.fn = "kp_scatter", .coll = KP_COLL_SCATTER, .sbuf = sendbuf, .scount = scount,
                       .stype = stype, .rbuf = recvbuf, .rcount = rcount, .rtype = rtype, .root = root, .comm = comm};
    return kp_call_run(&k);
}
