/*
 * The reductions' entry points, with MPI's semantics: kp_reduce (recvbuf
 * significant only at the root, MPI_IN_PLACE as sendbuf only there),
 * kp_allreduce, kp_reduce_scatter_block and kp_reduce_scatter (MPI_IN_PLACE
 * as sendbuf: the input is in recvbuf, the result at its start). Argument
 * checks, the operation and datatype, plan selection and execution are
 * shared: see redargs.c.
 */
#include "core/redargs.h"

int kp_reduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
              MPI_Comm comm)
{
    const kp_red_call k = {.fn = "kp_reduce", .coll = KP_COLL_REDUCE, .sbuf = sendbuf, .rbuf = recvbuf,
                           .count = count, .type = type, .op = op, .root = root, .comm = comm};
    return kp_red_call_run(&k);
}

int kp_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    const kp_red_call k = {.fn = "kp_allreduce", .coll = KP_COLL_ALLREDUCE, .sbuf = sendbuf, .rbuf = recvbuf,
                           .count = count, .type = type, .op = op, .comm = comm};
    return kp_red_call_run(&k);
}

int kp_reduce_scatter_block(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm)
{
    const kp_red_call k = {.fn = "kp_reduce_scatter_block", .coll = KP_COLL_REDUCE_SCATTER_BLOCK, .sbuf = sendbuf,
                           .rbuf = recvbuf, .count = recvcount, .type = type, .op = op, .comm = comm};
    return kp_red_call_run(&k);
}

int kp_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                      MPI_Comm comm)
{
    const kp_red_call k = {.fn = "kp_reduce_scatter", .coll = KP_COLL_REDUCE_SCATTER, .sbuf = sendbuf,
                           .rbuf = recvbuf, .recvcounts = recvcounts, .type = type, .op = op, .comm = comm};
    return kp_red_call_run(&k);
}
