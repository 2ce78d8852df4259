/*
 * kport-bench reduce_scatter: MPI_Reduce_scatter (counts per rank) beside
 * kp_reduce_scatter.
 *
 *   mpirun -np P kport-bench reduce_scatter [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c]
 *                                      [--type double|float|int|...] [--op sum|max|...]
 *                                      [-a native,auto,pairwise,...] [--b2b N] [--format json]
 *
 * Size: bytes of the whole vector, n = size / element size elements of
 * --type (default double) combined with --op (default sum), as OSU's
 * osu_reduce_scatter counts it. The counts are uneven on purpose (what
 * sets MPI_Reduce_scatter apart from its _block form): with b = n / P,
 * ranks 2j and 2j+1 (a pair below P) receive b + b/2 and b - b/2
 * elements, an odd P's last rank b, and the last rank the n - P*b left
 * over; at n = 8 P = 2: 6 and 2 elements. Block r starts at the sum of
 * the counts before it. One call: MPI_Reduce_scatter(sbuf, rbuf, counts,
 * type, op, comm), or kp_reduce_scatter with the same arguments. The
 * memcpy reference copies size / P bytes per rank.
 *
 * -c: as for reduce (reduce.c): rank r's receive buffer must hold its
 * block of the fold of the P inputs.
 *
 * --predict: the cost model prices the call with these counts (its blocks'
 * byte offsets).
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

#include <stdlib.h>

static int rs_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, 1, 1, sbytes, rbytes);
}

static size_t rs_copy(size_t size, int P) { return size / (size_t)P; }

/* cx->counts and cx->displs for cx->size (the header's rule,
 * kb_rs_counts); 1 when they cannot be allocated. */
static int rs_counts(kb_ctx *cx)
{
    if (cx->counts && cx->counts_of == cx->size)
        return 0;
    if (!cx->counts) {
        cx->counts = malloc((size_t)cx->P * sizeof(int));
        cx->displs = malloc((size_t)cx->P * sizeof(int));
        if (!cx->counts || !cx->displs)
            return 1;
    }
    const int P = cx->P;
    kb_rs_counts((int)(cx->size / cx->elem), P, cx->counts);
    for (int r = 0, off = 0; r < P; off += cx->counts[r++])
        cx->displs[r] = off;
    cx->counts_of = cx->size;
    return 0;
}

static int rs_run(kb_ctx *cx)
{
    if (rs_counts(cx))
        return KP_ERR_NOMEM;
    if (cx->native)
        return MPI_Reduce_scatter(cx->sbuf, cx->rbuf, cx->counts, cx->mtype, cx->mop, cx->comm) == MPI_SUCCESS
                   ? KP_SUCCESS
                   : KP_ERR_MPI;
    return kp_reduce_scatter(cx->sbuf, cx->rbuf, cx->counts, cx->mtype, cx->mop, cx->comm);
}

static void rs_write(kb_ctx *cx, int iter) { kb_red_write(cx, cx->size / cx->elem, iter); }

/* the receive buffer is this rank's block (poisoned in full when the
 * counts cannot be had: the call fails then) */
static size_t rs_block_bytes(kb_ctx *cx)
{
    return rs_counts(cx) ? cx->size : (size_t)cx->counts[cx->rank] * cx->elem;
}

static void rs_poison(kb_ctx *cx, int iter) { kb_red_poison(cx, rs_block_bytes(cx), iter); }

static long long rs_check(kb_ctx *cx, int iter)
{
    if (rs_counts(cx))
        return 0; /* the call failed: out of memory */
    const size_t rb = rs_block_bytes(cx);
    return kb_red_check_call(cx, (size_t)cx->displs[cx->rank], rb / cx->elem, rb, cx->size / cx->elem, iter);
}

static const kb_coll kb_coll_rs = {
    .name = "reduce_scatter", .kcoll = KP_COLL_REDUCE_SCATTER, .native_call = "MPI_Reduce_scatter",
    .sizes = KB_SIZED, .reduction = 1,
    .size_desc = "bytes of the whole vector (size / element size elements, uneven counts per rank)",
    .bad_unit = KB_BYTES_BAD, .buffers = rs_buffers, .run = rs_run, .write_send = rs_write,
    .poison_recv = rs_poison, .check = rs_check, .check_note = KB_RED_NOTE, .copy_bytes = rs_copy};

static int rs_main(int argc, char **argv) { return kb_coll_main(&kb_coll_rs, argc, argv); }

const kb_command kb_cmd_reduce_scatter = {"reduce_scatter",
                                          "MPI_Reduce_scatter (uneven counts) beside every kport algorithm",
                                          &kb_coll_rs, rs_main};
