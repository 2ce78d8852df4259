/*
 * kport-bench scatter: MPI_Scatter beside kp_scatter.
 *
 *   mpirun -np P kport-bench scatter [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c] [-r ROOT]
 *                                    [-a native,auto,binomial,...] [--b2b N] [--format json]
 *
 * Size: bytes per rank (MPI_BYTE); the root (-r, default 0) sends P*size,
 * every rank receives size. One call: MPI_Scatter(sbuf, size, MPI_BYTE,
 * rbuf, size, MPI_BYTE, root, comm), or kp_scatter with the same
 * arguments. Every rank has a P*size send buffer (only the root's is
 * read); under --b2b the root rewrites it before every call. The memcpy
 * reference copies size bytes per rank.
 *
 * -c: block r of the root's send buffer is the pattern of the pair (root,
 * r) for that call; after it rank r's receive buffer must hold it, the
 * root's send buffer must be unchanged and the guard after every receive
 * buffer intact.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

static int scatter_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, P, 1, sbytes, rbytes);
}

static int scatter_run(kb_ctx *cx)
{
    if (cx->native)
        return MPI_Scatter(cx->sbuf, (int)cx->size, MPI_BYTE, cx->rbuf, (int)cx->size, MPI_BYTE, cx->root,
                           cx->comm) == MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_scatter(cx->sbuf, (MPI_Count)cx->size, MPI_BYTE, cx->rbuf, (MPI_Count)cx->size, MPI_BYTE, cx->root,
                      cx->comm);
}

static void scatter_write(kb_ctx *cx, int iter)
{
    if (cx->rank != cx->root)
        return;
    for (int r = 0; r < cx->P; r++)
        kb_fill_pattern(cx->sbuf + (size_t)r * cx->size, cx->size, kb_pair_id(cx->root, r), iter, 0);
}

static void scatter_poison(kb_ctx *cx, int iter)
{
    kb_fill_pattern(cx->rbuf, cx->size, kb_pair_id(cx->root, cx->rank), iter, 1);
    kb_guard_fill(cx, cx->size);
}

static long long scatter_check(kb_ctx *cx, int iter)
{
    char origin[64];
    snprintf(origin, sizeof(origin), "the root's block for rank %d,", cx->rank);
    long long bad = kb_check_id(cx, cx->rbuf, cx->size, kb_pair_id(cx->root, cx->rank), iter, 0, "recvbuf", 0,
                                origin);
    if (cx->rank == cx->root)
        for (int r = 0; r < cx->P; r++) {
            snprintf(origin, sizeof(origin), "the root's block for rank %d,", r);
            bad += kb_check_id(cx, cx->sbuf + (size_t)r * cx->size, cx->size, kb_pair_id(cx->root, r), iter, 0,
                               "sendbuf modified:", (size_t)r * cx->size, origin);
        }
    return bad + kb_guard_check(cx, cx->size, iter);
}

static const kb_coll kb_coll_scatter = {
    .name = "scatter", .kcoll = KP_COLL_SCATTER, .native_call = "MPI_Scatter", .sizes = KB_SIZED, .rooted = 1,
    .size_desc = "bytes per rank (the root sends P*size)", .bad_unit = KB_BYTES_BAD,
    .buffers = scatter_buffers, .run = scatter_run, .write_send = scatter_write, .poison_recv = scatter_poison,
    .check = scatter_check, .copy_bytes = kb_copy_block};

static int scatter_main(int argc, char **argv) { return kb_coll_main(&kb_coll_scatter, argc, argv); }

const kb_command kb_cmd_scatter = {"scatter", "MPI_Scatter beside every kport scatter algorithm (-r ROOT)",
                                   &kb_coll_scatter, scatter_main};
