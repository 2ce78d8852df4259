/*
 * kport-bench bcast: MPI_Bcast beside kp_bcast.
 *
 *   mpirun -np P kport-bench bcast [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c] [-r ROOT]
 *                                  [-a native,auto,binomial,...] [--b2b N] [--format json]
 *
 * Size: bytes of the message (MPI_BYTE); every rank ends with them. One
 * call: MPI_Bcast(buf, size, MPI_BYTE, root, comm), or kp_bcast with the
 * same arguments; buf is each rank's receive buffer. Under --b2b the root
 * rewrites its message before every call (the other ranks write nothing).
 * The memcpy reference copies size bytes per rank.
 *
 * -c: before each checked call the root's buffer holds the root's pattern
 * for that call, every other rank's its complement (poison), each followed
 * by a guard of KB_GUARD bytes; after it every rank's buffer must hold the
 * root's pattern and every guard must be intact.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

static int bcast_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, 0, 1, sbytes, rbytes);
}

static int bcast_run(kb_ctx *cx)
{
    if (cx->native)
        return MPI_Bcast(cx->rbuf, (int)cx->size, MPI_BYTE, cx->root, cx->comm) == MPI_SUCCESS ? KP_SUCCESS
                                                                                              : KP_ERR_MPI;
    return kp_bcast(cx->rbuf, (MPI_Count)cx->size, MPI_BYTE, cx->root, cx->comm);
}

/* the root's message for call iter (the data the call moves) */
static void bcast_write(kb_ctx *cx, int iter)
{
    if (cx->rank == cx->root)
        kb_fill_pattern(cx->rbuf, cx->size, kb_rank_id(cx->root), iter, 0);
}

static void bcast_poison(kb_ctx *cx, int iter)
{
    if (cx->rank != cx->root)
        kb_fill_pattern(cx->rbuf, cx->size, kb_rank_id(cx->root), iter, 1);
    kb_guard_fill(cx, cx->size);
}

static long long bcast_check(kb_ctx *cx, int iter)
{
    return kb_check_pattern(cx, cx->rbuf, cx->size, cx->root, iter,
                            cx->rank == cx->root ? "buffer of the root modified:" : "buffer", 0) +
           kb_guard_check(cx, cx->size, iter);
}

static const kb_coll kb_coll_bcast = {
    .name = "bcast", .kcoll = KP_COLL_BCAST, .native_call = "MPI_Bcast", .sizes = KB_SIZED, .rooted = 1,
    .size_desc = "bytes of the message (every rank ends with them)", .bad_unit = KB_BYTES_BAD,
    .buffers = bcast_buffers, .run = bcast_run, .write_send = bcast_write, .poison_recv = bcast_poison,
    .check = bcast_check, .copy_bytes = kb_copy_block};

static int bcast_main(int argc, char **argv) { return kb_coll_main(&kb_coll_bcast, argc, argv); }

const kb_command kb_cmd_bcast = {"bcast", "MPI_Bcast beside every kport broadcast algorithm (-r ROOT)",
                                 &kb_coll_bcast, bcast_main};
