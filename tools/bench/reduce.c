/*
 * kport-bench reduce: MPI_Reduce beside kp_reduce.
 *
 *   mpirun -np P kport-bench reduce [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c] [-r ROOT]
 *                                   [--type double|float|int|...] [--op sum|max|...]
 *                                   [-a native,auto,knomial,...] [--b2b N] [--format json]
 *
 * Size: bytes of the vector, count = size / element size elements of
 * --type (default double) combined with --op (default sum); the root (-r,
 * default 0) receives the result. One call: MPI_Reduce(sbuf, rbuf, count,
 * type, op, root, comm), or kp_reduce with the same arguments. Every rank
 * has a receive buffer of size bytes. The memcpy reference copies size
 * bytes per rank.
 *
 * -c: each rank's send buffer holds its input for that call (the formula
 * in reduction.c's header) and its receive buffer poison plus a guard;
 * after the call the root's receive buffer must hold, element by element
 * and byte for byte, the fold of the P inputs computed from the formula;
 * every other rank's receive buffer must still hold the poison; every send
 * buffer must be unchanged and every guard intact.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

static int reduce_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, 1, 1, sbytes, rbytes);
}

static int reduce_run(kb_ctx *cx)
{
    const size_t n = cx->size / cx->elem;
    if (cx->native)
        return MPI_Reduce(cx->sbuf, cx->rbuf, (int)n, cx->mtype, cx->mop, cx->root, cx->comm) == MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_reduce(cx->sbuf, cx->rbuf, (MPI_Count)n, cx->mtype, cx->mop, cx->root, cx->comm);
}

static void reduce_write(kb_ctx *cx, int iter) { kb_red_write(cx, cx->size / cx->elem, iter); }

static void reduce_poison(kb_ctx *cx, int iter) { kb_red_poison(cx, cx->size, iter); }

static long long reduce_check(kb_ctx *cx, int iter)
{
    const size_t n = cx->size / cx->elem;
    return kb_red_check_call(cx, 0, cx->rank == cx->root ? n : 0, cx->size, n, iter);
}

static const kb_coll kb_coll_reduce = {
    .name = "reduce", .kcoll = KP_COLL_REDUCE, .native_call = "MPI_Reduce", .sizes = KB_SIZED, .rooted = 1,
    .reduction = 1, .size_desc = "bytes of the vector (size / element size elements; the root receives the result)",
    .bad_unit = KB_BYTES_BAD, .buffers = reduce_buffers, .run = reduce_run, .write_send = reduce_write,
    .poison_recv = reduce_poison, .check = reduce_check, .check_note = KB_RED_NOTE, .copy_bytes = kb_copy_block};

static int reduce_main(int argc, char **argv) { return kb_coll_main(&kb_coll_reduce, argc, argv); }

const kb_command kb_cmd_reduce = {"reduce", "MPI_Reduce beside every kport reduce algorithm (-r ROOT, --type, --op)",
                                  &kb_coll_reduce, reduce_main};
