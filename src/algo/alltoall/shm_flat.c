/*
 * Shared-memory all-to-all for ranks on one node.
 *
 * Every rank copies the P - 1 blocks of its send buffer meant for its
 * peers into its row of the node's shared segment and its own block
 * straight into its receive buffer, posts, waits for every peer's post and
 * copies block [q][me] of every other row q into its receive buffer. (Its
 * own block through the segment cost a copy in and a copy out: at P = 2
 * half of the data moved twice for nothing.) Consecutive calls
 * use the segment's two halves; waiting for every peer's post in each call
 * is what makes the reuse safe (see check.c, the node-sync rule).
 *
 * Cost: T = (P-1)*m*gamma (copy in) + m*gamma' (own block) + post/wait +
 * (P-1)*m*gamma (copy out), m = bytes per block: two copies of the peers'
 * data, one of the own block, no MPI message.
 * Memory: P*P*m shared bytes per call (rows rounded up to 128 bytes);
 * pipelined, 2*P*P*chunk.
 * Restrictions: all ranks on one node (else KP_ERR_UNSUPPORTED).
 * MPI_IN_PLACE: the send buffer is the receive buffer; it is read (copy in)
 * two rounds before it is written (copy out), so no special case.
 *
 * Rows of at most KP_LINE - 8 = 248 bytes travel in the rank's flag line
 * (KP_BUF_LINE), so a waiting peer fetches flag and data together.
 *
 * Blocks larger than the chunk (kp_shm_flat_chunk: 128 KiB above 512 KiB,
 * or chunk_kb) are pipelined as the all-gather's are: chunk i of every
 * peer block goes through slot set i%2 of the rank's row, and chunk i+1 is
 * copied in right after chunk i was copied out, so the working set stays
 * in cache. At P = 2 with 1 MiB blocks: 92-95 us pipelined, 134-142 us
 * whole (three copies of 1 MiB leave the caches; the memcpy reference
 * moves 2 MiB in 51-57 us), native 157-168 us (Open MPI and MPICH). A rank writes slot set i%2 again
 * (chunk i+2) only after every peer posted chunk i+1, which it does after
 * reading chunk i.
 *
 * Example, P = 2, rank 0 (blocks above 124 bytes):
 *   round 0 copy send[m..2m) -> shm row 0 at m, send[0..m) -> recv[0..m)
 *   round 1 post 1 and wait for rank 1's post 1
 *   round 2 copy shm row 1 at 0 (its block for rank 0) -> recv[m..2m)
 */
#include "algo/shm_common.h"

/* Blocks above the chunk: chunk i of block [me][t] goes to offset t*ch of
 * the rank's row in slot set i%2 (rows of P chunks, 128-byte aligned). */
static int build_pipelined(kp_sched *s, int64_t ch)
{
    const int P = s->P, me = s->rank;
    const int64_t m = s->bytes, nch = (m + ch - 1) / ch;
    const int64_t stride = ((int64_t)P * ch + 127) / 128 * 128;
    kp_sched_need_shm(s, 2 * (int64_t)P * stride);
#define ROW(q, i) ((((int64_t)(i) % 2) * P + (q)) * stride)
#define LEN(i) ((i) == nch - 1 ? m - (i) * ch : ch)
    for (int t = 0; t < P; t++)
        if (t != me)
            kp_sched_copy(s, KP_BUF_SEND, (int64_t)t * m, KP_BUF_SHM, ROW(me, 0) + (int64_t)t * ch, LEN(0));
    kp_sched_next_round(s);
    for (int64_t i = 0; i < nch; i++) {
        int n = kp_sched_post(s);
        if (i == 0) /* the own block straight into the receive buffer (a no-op in place) */
            kp_sched_copy(s, KP_BUF_SEND, (int64_t)me * m, KP_BUF_RECV, (int64_t)me * m, m);
        kp_sched_next_round(s);
        kp_shm_wait_all(s, n, 0);
        kp_sched_next_round(s);
        for (int q = 0; q < P; q++)
            if (q != me)
                kp_sched_copy(s, KP_BUF_SHM, ROW(q, i) + (int64_t)me * ch, KP_BUF_RECV, (int64_t)q * m + i * ch,
                              LEN(i));
        if (i + 1 < nch)
            for (int t = 0; t < P; t++)
                if (t != me)
                    kp_sched_copy(s, KP_BUF_SEND, (int64_t)t * m + (i + 1) * ch, KP_BUF_SHM,
                                  ROW(me, i + 1) + (int64_t)t * ch, LEN(i + 1));
        kp_sched_next_round(s);
    }
#undef ROW
#undef LEN
    return kp_sched_finish(s);
}

int kp_alltoall_shm_flat_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, me = s->rank;
    const int64_t m = s->bytes, row = (int64_t)P * m;
    const int64_t stride = (row + 127) / 128 * 128; /* rows never share a cache line */
    int rc = kp_shm_one_node(s, "alltoall shm_flat", 0);
    if (rc)
        return rc;
    if (m == 0)
        return kp_sched_finish(s);
    if (row <= KP_LINE - 8) {
        /* small: the whole row rides in the rank's flag line, so a waiting
         * peer gets flag and data together (one node: local = rank) */
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_LINE, (int64_t)me * KP_LINE + 8, row);
        kp_sched_next_round(s);
        kp_shm_wait_all(s, kp_sched_post_line(s), 1);
        kp_sched_next_round(s);
        for (int q = 0; q < P; q++)
            kp_sched_copy(s, KP_BUF_LINE, (int64_t)q * KP_LINE + 8 + (int64_t)me * m, KP_BUF_RECV, (int64_t)q * m, m);
        return kp_sched_finish(s);
    }
    const int64_t ch = kp_shm_flat_chunk(m, prm);
    if (ch < m)
        return build_pipelined(s, ch);
    kp_sched_need_shm(s, (int64_t)P * stride);
    /* the peers' blocks into the row (the own block's place stays unused);
     * the own block straight into the receive buffer (a no-op in place) */
    const int64_t mine = (int64_t)me * stride;
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SHM, mine, (int64_t)me * m);
    kp_sched_copy(s, KP_BUF_SEND, (int64_t)(me + 1) * m, KP_BUF_SHM, mine + (int64_t)(me + 1) * m,
                  (int64_t)(P - 1 - me) * m);
    kp_sched_copy(s, KP_BUF_SEND, (int64_t)me * m, KP_BUF_RECV, (int64_t)me * m, m);
    kp_sched_next_round(s);
    kp_shm_wait_all(s, kp_sched_post(s), 0);
    kp_sched_next_round(s);
    for (int q = 0; q < P; q++)
        if (q != me)
            kp_sched_copy(s, KP_BUF_SHM, (int64_t)q * stride + (int64_t)me * m, KP_BUF_RECV, (int64_t)q * m, m);
    return kp_sched_finish(s);
}
