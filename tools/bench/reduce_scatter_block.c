/*
 * kport-bench reduce_scatter_block: MPI_Reduce_scatter_block beside
 * kp_reduce_scatter_block.
 *
 *   mpirun -np P kport-bench reduce_scatter_block [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c]
 *                                      [--type double|float|int|...] [--op sum|max|...]
 *                                      [-a native,auto,pairwise,...] [--b2b N] [--format json]
 *
 * Size: bytes of each rank's result block, recvcount = size / element
 * size elements of --type (default double) combined with --op (default
 * sum); each rank's input vector is P blocks (P*size bytes) and rank r
 * receives block r of the reduction. One call:
 * MPI_Reduce_scatter_block(sbuf, rbuf, recvcount, type, op, comm), or
 * kp_reduce_scatter_block with the same arguments. The memcpy reference
 * copies size bytes per rank.
 *
 * -c: as for reduce (reduce.c): rank r's receive buffer must hold
 * elements r*recvcount .. (r+1)*recvcount - 1 of the fold of the P inputs.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

static int rsb_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, P, 1, sbytes, rbytes);
}

static int rsb_run(kb_ctx *cx)
{
    const size_t n = cx->size / cx->elem;
    if (cx->native)
        return MPI_Reduce_scatter_block(cx->sbuf, cx->rbuf, (int)n, cx->mtype, cx->mop, cx->comm) == MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_reduce_scatter_block(cx->sbuf, cx->rbuf, (MPI_Count)n, cx->mtype, cx->mop, cx->comm);
}

static void rsb_write(kb_ctx *cx, int iter) { kb_red_write(cx, (size_t)cx->P * (cx->size / cx->elem), iter); }

static void rsb_poison(kb_ctx *cx, int iter) { kb_red_poison(cx, cx->size, iter); }

static long long rsb_check(kb_ctx *cx, int iter)
{
    const size_t n = cx->size / cx->elem;
    return kb_red_check_call(cx, (size_t)cx->rank * n, n, cx->size, (size_t)cx->P * n, iter);
}

static const kb_coll kb_coll_rsb = {
    .name = "reduce_scatter_block", .kcoll = KP_COLL_REDUCE_SCATTER_BLOCK,
    .native_call = "MPI_Reduce_scatter_block", .sizes = KB_SIZED, .reduction = 1,
    .size_desc = "bytes of each rank's result block (size / element size elements; the input is P blocks)",
    .bad_unit = KB_BYTES_BAD, .buffers = rsb_buffers, .run = rsb_run, .write_send = rsb_write,
    .poison_recv = rsb_poison, .check = rsb_check, .check_note = KB_RED_NOTE, .copy_bytes = kb_copy_block};

static int rsb_main(int argc, char **argv) { return kb_coll_main(&kb_coll_rsb, argc, argv); }

const kb_command kb_cmd_reduce_scatter_block = {
    "reduce_scatter_block", "MPI_Reduce_scatter_block beside every kport algorithm (--type, --op)", &kb_coll_rsb,
    rsb_main};
