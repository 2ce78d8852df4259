/*
 * Shared-memory all-gather for ranks on one node (two copies, pipelined).
 *
 * Paper: 000_b36fdf3a016ff124.txt section 5.1 (concurrent memcpy into
 * sections of a shared region, flags instead of locks). Every rank copies
 * its block into its slot of the node's shared segment and posts; every
 * rank waits for everyone's post and copies all blocks out. Blocks larger
 * than the chunk are pipelined: chunk i+1 is copied in while chunk i is
 * copied out, through two slot sets per rank, so the working set stays in
 * cache and copy-in overlaps copy-out. A rank writes slot set i%2 again (for
 * chunk i+2) only after every peer has posted chunk i+1, which it does after
 * reading chunk i; consecutive calls use the segment's two halves.
 *
 * Cost: T = (c-in + c-out of m bytes) + nchunks * (post + wait), with
 * copies m*gamma in and (P-1)*m*gamma out per rank, m = bytes per block,
 * nchunks = ceil(m / chunk). One post and P-1 flag reads per chunk.
 * Memory: shared P * chunk (one chunk) or 2 * P * chunk bytes per call,
 * slots rounded up to 128 bytes so no two ranks write one cache line.
 * Restrictions: all ranks on one node (else KP_ERR_UNSUPPORTED).
 * Parameter chunk_kb: chunk size in KiB (0: whole block up to 512 KiB,
 * else 128 KiB: at P = 2 a whole block of 512 KiB ran 6% faster than four
 * chunks of 128 KiB, and 1 MiB in chunks of 128 KiB 10% faster than whole).
 *
 * Blocks of at most KP_LINE - 8 = 248 bytes travel in the rank's flag line
 * (KP_BUF_LINE, post_line / wait_line): the flag and the first 56 bytes
 * share a cache line, so a waiting peer gets them with one transfer and the
 * rest right behind it.
 *
 * Example, P = 2, m = 8 (one chunk):
 *   round 0  copy send -> shm[me]          round 2  wait for the peer's post 1
 *   round 1  post 1; copy send -> recv[me] round 3  copy shm[peer] -> recv[peer]
 */
#include "algo/shm_common.h"

/* blocks up to this size travel in the same cache line as their flag */
#define KP_SHM_INLINE (KP_LINE - 8)

int64_t kp_shm_flat_chunk(int64_t m, const kp_params *prm)
{
    if (prm->chunk_kb > 0)
        return (int64_t)prm->chunk_kb << 10;
    return m <= ((int64_t)512 << 10) ? m : (int64_t)128 << 10;
}

int kp_allgather_shm_flat_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, me = s->rank;
    const int64_t m = s->bytes;
    int rc = kp_shm_one_node(s, "shm_flat", 0);
    if (rc)
        return rc;
    if (m == 0)
        return kp_sched_finish(s);
    if (m <= KP_SHM_INLINE)
        return kp_shm_allgather_lines(s);
    const int64_t ch = kp_shm_flat_chunk(m, prm);
    const int64_t nch = (m + ch - 1) / ch;
    const int sets = nch > 1 ? 2 : 1;
    const int64_t stride = (ch + 127) / 128 * 128; /* slots never share a cache line */
    kp_sched_need_shm(s, (int64_t)sets * P * stride);
#define SLOT(q, i) ((((int64_t)(i) % sets) * P + (q)) * stride)
#define LEN(i) ((i) == nch - 1 ? m - (i) * ch : ch)

    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SHM, SLOT(me, 0), LEN(0));
    kp_sched_next_round(s);
    for (int64_t i = 0; i < nch; i++) {
        int n = kp_sched_post(s);
        if (i == 0)
            kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)me * m, m);
        kp_sched_next_round(s);
        kp_shm_wait_all(s, n, 0);
        kp_sched_next_round(s);
        for (int q = 0; q < P; q++)
            if (q != me)
                kp_sched_copy(s, KP_BUF_SHM, SLOT(q, i), KP_BUF_RECV, (int64_t)q * m + i * ch, LEN(i));
        if (i + 1 < nch)
            kp_sched_copy(s, KP_BUF_SEND, (i + 1) * ch, KP_BUF_SHM, SLOT(me, i + 1), LEN(i + 1));
        kp_sched_next_round(s);
    }
#undef SLOT
#undef LEN
    return kp_sched_finish(s);
}
