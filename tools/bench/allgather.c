/*
 * kport-bench allgather: MPI_Allgather beside kp_allgather.
 *
 *   mpirun -np P kport-bench allgather [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c]
 *                                      [-a native,auto,bruck:k=3,...] [--b2b N] [--format json]
 *
 * Size: bytes per rank (MPI_BYTE); each rank receives P*size. One call:
 * MPI_Allgather(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE, comm), or
 * kp_allgather with the same arguments under the forced algorithm.
 *
 * -c: before each checked call the send buffer holds rank r's pattern for
 * that call and the receive buffer its complement (poison) plus a guard of
 * KB_GUARD bytes; after it, block r of the receive buffer must be rank r's
 * pattern, the send buffer unchanged and the guard intact.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

static int allgather_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, 1, P, sbytes, rbytes);
}

static int allgather_run(kb_ctx *cx)
{
    if (cx->native)
        return MPI_Allgather(cx->sbuf, (int)cx->size, MPI_BYTE, cx->rbuf, (int)cx->size, MPI_BYTE, cx->comm) ==
                       MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_allgather(cx->sbuf, (MPI_Count)cx->size, MPI_BYTE, cx->rbuf, (MPI_Count)cx->size, MPI_BYTE, cx->comm);
}

static long long allgather_check(kb_ctx *cx, int iter)
{
    long long bad = 0;
    for (int r = 0; r < cx->P; r++)
        bad += kb_check_pattern(cx, cx->rbuf + (size_t)r * cx->size, cx->size, r, iter, "recvbuf",
                                (size_t)r * cx->size);
    bad += kb_check_pattern(cx, cx->sbuf, cx->size, cx->rank, iter, "sendbuf modified:", 0);
    bad += kb_guard_check(cx, cx->size * (size_t)cx->P, iter);
    return bad;
}

static const kb_coll kb_coll_allgather = {
    .name = "allgather", .kcoll = KP_COLL_ALLGATHER, .native_call = "MPI_Allgather", .sizes = KB_SIZED,
    .size_desc = "bytes per rank (each rank receives P*size)", .bad_unit = KB_BYTES_BAD,
    .buffers = allgather_buffers, .run = allgather_run, .write_send = kb_rank_block_write,
    .poison_recv = kb_rank_blocks_poison, .check = allgather_check};

static int allgather_main(int argc, char **argv) { return kb_coll_main(&kb_coll_allgather, argc, argv); }

const kb_command kb_cmd_allgather = {"allgather", "MPI_Allgather beside every kport all-gather algorithm",
                                     &kb_coll_allgather, allgather_main};
