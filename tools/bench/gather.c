/*
 * kport-bench gather: MPI_Gather beside kp_gather.
 *
 *   mpirun -np P kport-bench gather [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c] [-r ROOT]
 *                                   [-a native,auto,binomial,...] [--b2b N] [--format json]
 *
 * Size: bytes per rank (MPI_BYTE); the root (-r, default 0) receives
 * P*size. One call: MPI_Gather(sbuf, size, MPI_BYTE, rbuf, size, MPI_BYTE,
 * root, comm), or kp_gather with the same arguments. Every rank has a
 * P*size receive buffer.
 *
 * -c: as for allgather at the root (block r holds rank r's pattern, send
 * buffer unchanged, guard intact); on every other rank the poisoned
 * receive buffer and its guard must stay untouched.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

static int gather_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, 1, P, sbytes, rbytes);
}

static int gather_run(kb_ctx *cx)
{
    if (cx->native)
        return MPI_Gather(cx->sbuf, (int)cx->size, MPI_BYTE, cx->rbuf, (int)cx->size, MPI_BYTE, cx->root,
                          cx->comm) == MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_gather(cx->sbuf, (MPI_Count)cx->size, MPI_BYTE, cx->rbuf, (MPI_Count)cx->size, MPI_BYTE, cx->root,
                     cx->comm);
}

static long long gather_check(kb_ctx *cx, int iter)
{
    long long bad = 0;
    const int at_root = cx->rank == cx->root;
    for (int r = 0; r < cx->P; r++) {
        char origin[48];
        snprintf(origin, sizeof(origin), at_root ? "rank %d's" : "poison in block %d,", r);
        bad += kb_check_id(cx, cx->rbuf + (size_t)r * cx->size, cx->size, kb_rank_id(r), iter, !at_root,
                           at_root ? "recvbuf" : "recvbuf of a non-root rank modified:", (size_t)r * cx->size,
                           origin);
    }
    bad += kb_check_pattern(cx, cx->sbuf, cx->size, cx->rank, iter, "sendbuf modified:", 0);
    bad += kb_guard_check(cx, cx->size * (size_t)cx->P, iter);
    return bad;
}

static const kb_coll kb_coll_gather = {
    .name = "gather", .kcoll = KP_COLL_GATHER, .native_call = "MPI_Gather", .sizes = KB_SIZED, .rooted = 1,
    .size_desc = "bytes per rank (the root receives P*size)", .bad_unit = KB_BYTES_BAD,
    .buffers = gather_buffers, .run = gather_run, .write_send = kb_rank_block_write,
    .poison_recv = kb_rank_blocks_poison, .check = gather_check};

static int gather_main(int argc, char **argv) { return kb_coll_main(&kb_coll_gather, argc, argv); }

const kb_command kb_cmd_gather = {"gather", "MPI_Gather beside every kport gather algorithm (-r ROOT)",
                                  &kb_coll_gather, gather_main};
