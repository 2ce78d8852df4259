/*
 * Shared-memory broadcast for ranks on one node (two copies, pipelined).
 *
 * The root copies the message from its receive buffer into the node's
 * shared segment chunk by chunk and posts after each chunk; every other rank
 * waits for the post of chunk i and copies it out to its receive buffer
 * while the root copies chunk i + 1 in. The segment is a ring of at most
 * KP_NBC_SLOTS chunk slots: before the root puts chunk i + S into the slot
 * of chunk i it waits for every rank's post that it has copied chunk i out.
 * A message of at most KP_LINE - 8 = 248 bytes travels in the root's flag
 * line (the reader gets flag and data with one cache-line transfer). Posts,
 * waits and the node fence: algo/bcast/bcast_common.h.
 *
 * Paper: the shared-buffer broadcast of Y. Qian and A. Afsahi's SMP-aware
 * collectives (ICPP 2007, section 5.1: concurrent memcpy through a shared
 * region, flags instead of locks), pipelined as MPICH's release_gather
 * broadcast and Open MPI's xhc do.
 *
 * Cost (m = bytes, ch = chunk, nch = ceil(m / ch), tc = copy time per byte,
 * sync = one post/wait): T = (m + ch) tc + nch * sync (the root's copy-in
 * of chunk i + 1 overlaps the copies out of chunk i; the P - 1 readers copy
 * in parallel, bounded by memory bandwidth) + the readers' entry posts the
 * root waits for at the end.
 * Memory: shared min(nch, 8) * ch bytes per call (none besides the flag
 * lines for m <= 248). Restrictions: all ranks on one node (else
 * KP_ERR_UNSUPPORTED). Parameter chunk_kb: chunk size in KiB (0: automatic,
 * kp_bcast_node_chunk: the whole message up to 32 KiB, else 32 KiB chunks,
 * so the copy-out of a chunk starts after 32 KiB of copy-in, about 3 us,
 * for a per-chunk sync of a fraction of a microsecond).
 *
 * Example, P = 3, root 1, m = 80 KiB (chunks of 32, 32, 16 KiB; 3 slots):
 *   root 1   round 0 copy chunk 0 -> slot 0
 *            round 1 post 1; copy chunk 1 -> slot 1
 *            round 2 post 2; copy chunk 2 -> slot 2
 *            round 3 post 3; wait for post 1 (entry) of ranks 0 and 2
 *   rank 0,2 round 0 post 1 (entry); wait for 1's post 1
 *            round 1 copy slot 0 -> recv[0, 32K); wait for post 2
 *            round 2 copy slot 1 -> recv[32K, 64K); wait for post 3
 *            round 3 copy slot 2 -> recv[64K, 80K)
 */
#include "algo/bcast/bcast_common.h"

int64_t kp_bcast_node_chunk(int64_t bytes, const kp_params *prm)
{
    const int64_t dflt = (int64_t)32 << 10;
    if (prm->chunk_kb > 0)
        return (int64_t)prm->chunk_kb << 10;
    return bytes <= dflt ? bytes : dflt;
}

int kp_bcast_shm_flat_build(kp_sched *s, const kp_params *prm)
{
    const int root = s->root;
    if (root < 0 || root >= s->P)
        return kp_sched_refuse(s, KP_ERR_ARG, "bcast shm_flat: root %d is not a rank of 0..%d", root, s->P - 1);
    int rc = kp_shm_one_node(s, "bcast shm_flat", 0);
    if (rc)
        return rc;
    if (s->bytes == 0 || s->P == 1)
        return kp_sched_finish(s);
    const kp_smp v = kp_smp_view(s);
    const kp_nbc b = kp_nbc_make(&v, root, s->bytes, kp_bcast_node_chunk(s->bytes, prm));
    kp_nbc_need(s, &b);
    if (s->rank != root)
        return kp_nbc_reader(s, &v, &b);
    for (int i = 0; i <= b.c.nch; i++) {
        if (i < b.c.nch)
            kp_sched_copy(s, KP_BUF_RECV, kp_chunk_off(&b.c, i), kp_nbc_buf(&b), kp_nbc_off(&b, i),
                          kp_chunk_len(&b.c, i));
        if (i >= 1)
            kp_nbc_publish(s, &b);
        kp_nbc_wait_slot(s, &v, &b, i);
        if (i == b.c.nch)
            kp_nbc_fence(s, &v, &b);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
