/*
 * kport-bench alltoall: MPI_Alltoall beside kp_alltoall.
 *
 *   mpirun -np P kport-bench alltoall [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c]
 *                                     [-a native,auto,pairwise,...] [--b2b N] [--format json]
 *
 * Size: bytes per (source, destination) pair (MPI_BYTE); each rank sends
 * and receives P*size. One call: MPI_Alltoall(sbuf, size, MPI_BYTE, rbuf,
 * size, MPI_BYTE, comm), or kp_alltoall with the same arguments.
 *
 * -c: block d of rank s's send buffer is the pattern of the pair (s, d)
 * for that call, so it depends on source, destination, byte and call;
 * after the call block s of rank d's receive buffer must hold it, the send
 * buffer must be unchanged and the guard after the receive buffer intact.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

static int alltoall_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, P, P, sbytes, rbytes);
}

static int alltoall_run(kb_ctx *cx)
{
    if (cx->native)
        return MPI_Alltoall(cx->sbuf, (int)cx->size, MPI_BYTE, cx->rbuf, (int)cx->size, MPI_BYTE, cx->comm) ==
                       MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_alltoall(cx->sbuf, (MPI_Count)cx->size, MPI_BYTE, cx->rbuf, (MPI_Count)cx->size, MPI_BYTE, cx->comm);
}

static void alltoall_write(kb_ctx *cx, int iter)
{
    for (int r = 0; r < cx->P; r++)
        kb_fill_pattern(cx->sbuf + (size_t)r * cx->size, cx->size, kb_pair_id(cx->rank, r), iter, 0);
}

static void alltoall_poison(kb_ctx *cx, int iter)
{
    for (int r = 0; r < cx->P; r++)
        kb_fill_pattern(cx->rbuf + (size_t)r * cx->size, cx->size, kb_pair_id(r, cx->rank), iter, 1);
    kb_guard_fill(cx, cx->size * (size_t)cx->P);
}

static long long alltoall_check(kb_ctx *cx, int iter)
{
    long long bad = 0;
    for (int r = 0; r < cx->P; r++) {
        char origin[64];
        snprintf(origin, sizeof(origin), "rank %d's block for rank %d,", r, cx->rank);
        bad += kb_check_id(cx, cx->rbuf + (size_t)r * cx->size, cx->size, kb_pair_id(r, cx->rank), iter, 0,
                           "recvbuf", (size_t)r * cx->size, origin);
        snprintf(origin, sizeof(origin), "rank %d's block for rank %d,", cx->rank, r);
        bad += kb_check_id(cx, cx->sbuf + (size_t)r * cx->size, cx->size, kb_pair_id(cx->rank, r), iter, 0,
                           "sendbuf modified:", (size_t)r * cx->size, origin);
    }
    bad += kb_guard_check(cx, cx->size * (size_t)cx->P, iter);
    return bad;
}

static const kb_coll kb_coll_alltoall = {
    .name = "alltoall", .kcoll = KP_COLL_ALLTOALL, .native_call = "MPI_Alltoall", .sizes = KB_SIZED,
    .size_desc = "bytes per rank pair (each rank sends and receives P*size)", .bad_unit = KB_BYTES_BAD,
    .buffers = alltoall_buffers, .run = alltoall_run, .write_send = alltoall_write,
    .poison_recv = alltoall_poison, .check = alltoall_check};

static int alltoall_main(int argc, char **argv) { return kb_coll_main(&kb_coll_alltoall, argc, argv); }

const kb_command kb_cmd_alltoall = {"alltoall", "MPI_Alltoall beside every kport all-to-all algorithm",
                                    &kb_coll_alltoall, alltoall_main};
