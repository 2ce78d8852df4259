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
 * Memory: P*P*m shared bytes per call (rows rounded up to 128 bytes).
 * Restrictions: all ranks on one node (else KP_ERR_UNSUPPORTED).
 * MPI_IN_PLACE: the send buffer is the receive buffer; it is read (copy in)
 * two rounds before it is written (copy out), so no special case.
 *
 * Rows of at most KP_LINE - 8 = 248 bytes travel in the rank's flag line
 * (KP_BUF_LINE), so a waiting peer fetches flag and data together.
 *
 * Example, P = 2, rank 0 (blocks above 124 bytes):
 *   round 0 copy send[m..2m) -> shm row 0 at m, send[0..m) -> recv[0..m)
 *   round 1 post 1 and wait for rank 1's post 1
 *   round 2 copy shm row 1 at 0 (its block for rank 0) -> recv[m..2m)
 */
#include "algo/shm_common.h"

int kp_alltoall_shm_flat_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
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
