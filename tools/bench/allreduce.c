/*
 * kport-bench allreduce: MPI_Allreduce beside kp_allreduce, and the
 * memory-bandwidth limit of any allreduce on one node.
 *
 *   mpirun -np P kport-bench allreduce [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c]
 *                                      [--type double|float|int|...] [--op sum|max|...]
 *                                      [-a native,auto,ring,...,memcpy,bw_limit] [--b2b N] [--format json]
 *
 * Size: bytes of the vector, count = size / element size elements of
 * --type (default double) combined with --op (default sum); every rank
 * receives the result. One call: MPI_Allreduce(sbuf, rbuf, count, type, op,
 * comm), or kp_allreduce with the same arguments. The memcpy reference
 * copies size bytes per rank.
 *
 * bw_limit (a reference column, in the default list): the copies and the
 * combines that any allreduce must make when the P ranks share the work,
 * timed like the algorithms (the same start line, every rank at once, the
 * maximum over ranks, the median) in the same run. The vector is split
 * into P slices of ceil(count / P) elements; one iteration on rank r is
 *     P - 1 combines c = a op b over slice r (a plain loop in the type and
 *     op of the run; the first reads the rank's input and a second vector,
 *     the others the running result and that vector; the result goes to
 *     slice r of the receive buffer), then
 *     P - 1 copies (memcpy) of the other slices into the receive buffer.
 * So every input is read once, every output written once, and every slice
 * of the result read once more by each of the other ranks: at P = 2 each
 * rank reads both inputs' halves and writes its half of the result, then
 * copies the other half. Every operand lies in the rank's own buffers,
 * where a real allreduce reads the other ranks' data from their caches or
 * memory (dearer than its own), and nothing waits for another rank: the
 * limit is a floor, not a prediction. Text output adds a table of every
 * column's median over bw_limit per size; JSON records carry "bw_limit_us"
 * and "bw_limit_ratio" (median / bw_limit).
 *
 * -c: as for reduce (reduce.c), with the result checked on every rank.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

#include <string.h>

static int allreduce_buffers(size_t size, int P, size_t *sbytes, size_t *rbytes)
{
    return kb_block_buffers(size, P, 1, 1, sbytes, rbytes);
}

static int allreduce_run(kb_ctx *cx)
{
    const size_t n = cx->size / cx->elem;
    if (cx->native)
        return MPI_Allreduce(cx->sbuf, cx->rbuf, (int)n, cx->mtype, cx->mop, cx->comm) == MPI_SUCCESS ? KP_SUCCESS
                                                                                                     : KP_ERR_MPI;
    return kp_allreduce(cx->sbuf, cx->rbuf, (MPI_Count)n, cx->mtype, cx->mop, cx->comm);
}

static void allreduce_write(kb_ctx *cx, int iter) { kb_red_write(cx, cx->size / cx->elem, iter); }

static void allreduce_poison(kb_ctx *cx, int iter) { kb_red_poison(cx, cx->size, iter); }

static long long allreduce_check(kb_ctx *cx, int iter)
{
    const size_t n = cx->size / cx->elem;
    return kb_red_check_call(cx, 0, n, cx->size, n, iter);
}

/* Slice j of a vector of n elements in P slices of ceil(n / P): its first
 * element and length (0 past the end). */
static size_t slice(size_t n, int P, int j, size_t *len)
{
    const size_t m = (n + (size_t)P - 1) / (size_t)P, first = m * (size_t)j;
    *len = first >= n ? 0 : n - first < m ? n - first : m;
    return first;
}

/* One iteration of bw_limit on this rank (the header says what it counts). */
static void allreduce_limit(kb_ctx *cx)
{
    const size_t n = cx->size / cx->elem, e = cx->elem;
    size_t len;
    const size_t mine = slice(n, cx->P, cx->rank, &len) * e;
    if (cx->P > 1)
        kb_red_combine(cx->type, cx->op, cx->sbuf + mine, cx->aux + mine, cx->rbuf + mine, len);
    else
        memcpy(cx->rbuf, cx->sbuf, len * e);
    for (int k = 2; k < cx->P; k++)
        kb_red_combine(cx->type, cx->op, cx->rbuf + mine, cx->aux + mine, cx->rbuf + mine, len);
    for (int j = 0; j < cx->P; j++) {
        if (j == cx->rank)
            continue;
        const size_t off = slice(n, cx->P, j, &len) * e;
        memcpy(cx->rbuf + off, cx->aux + off, len * e);
    }
}

static const kb_coll kb_coll_allreduce = {
    .name = "allreduce", .kcoll = KP_COLL_ALLREDUCE, .native_call = "MPI_Allreduce", .sizes = KB_SIZED,
    .reduction = 1, .size_desc = "bytes of the vector (size / element size elements; every rank receives the result)",
    .bad_unit = KB_BYTES_BAD, .buffers = allreduce_buffers, .run = allreduce_run, .write_send = allreduce_write,
    .poison_recv = allreduce_poison, .check = allreduce_check, .check_note = KB_RED_NOTE,
    .copy_bytes = kb_copy_block, .limit = allreduce_limit,
    .limit_desc = "memory-bandwidth limit: per rank P-1 combines over its slice of size/P bytes\n"
                  "#                              and P-1 copies of the other slices (allreduce.c's header)"};

static int allreduce_main(int argc, char **argv) { return kb_coll_main(&kb_coll_allreduce, argc, argv); }

const kb_command kb_cmd_allreduce = {"allreduce",
                                     "MPI_Allreduce beside every kport allreduce algorithm and the bandwidth limit",
                                     &kb_coll_allreduce, allreduce_main};
