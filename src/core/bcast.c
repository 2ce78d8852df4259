/*
 * kp_bcast: MPI_Bcast semantics (any root; one buffer, the root's data in
 * it). Argument checks, datatype handling (packed staging for
 * non-contiguous types: the root packs its buffer first, the others unpack
 * afterwards), plan selection and execution are shared: see args.c.
 */
#include "core/args.h"

int kp_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)
{
    const kp_call k = {.fn = "kp_bcast", .coll = KP_COLL_BCAST, .sbuf = NULL, .scount = 0, .stype = MPI_DATATYPE_NULL,
                       .rbuf = buf, .rcount = count, .rtype = type, .root = root, .comm = comm};
    return kp_call_run(&k);
}
