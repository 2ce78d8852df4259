/*
 * Shared-memory reduce for ranks on one node: every rank reduces a slice of
 * the vector over all ranks' slots, the root copies the result out;
 * pipelined in chunks.
 *
 * The vector is cut into chunks (chunk_kb). For chunk i every rank copies
 * its part of the chunk into its slot of slot set i mod 2 and makes post
 * A_i; once every rank has made A_i, rank r reduces slice r of the chunk
 * (1/P of it, cut at whole elements) over the P slots in rank order, x_0
 * op x_1 op ... op x_{P-1} (one combine per round), into the result area
 * of set i mod 2, and makes post B_i. The root copies chunk i out of the
 * result area into its receive buffer once every rank has made B_i, while
 * it reduces chunk i+1; every rank copies chunk i+1 into its slot while it
 * reduces chunk i. Reuse of a set two chunks later: a rank writes its slot
 * for chunk i+2 after it has seen every B_i (nobody reads chunk i any
 * more), and a slice of the result area for chunk i+2 after it has seen
 * every A_{i+2}, which the root makes after its copy-out of chunk i. Every
 * rank waits for every other's A_0, made on entering the call: the node
 * fence of algo/smp_common.h, so call c+2 (the same half of the segment)
 * never overwrites what call c still reads. Rank order holds for any
 * operation, commutative or not; MPI_IN_PLACE needs no care (the root's
 * receive buffer is read, chunk by chunk, before the result is copied over
 * the same chunk).
 *
 * Small vectors (at most KP_LINE - max(8, elem) bytes, elem dividing
 * KP_LINE) go through the flag lines instead (kp_red_node_lines): every
 * rank but the root puts its vector in its line and posts there; the root,
 * which posts on entering, combines the lines in rank order straight into
 * its receive buffer; one flag transfer each way instead of two
 * synchronisations and a copy out (P = 2, 8 B: see the report in the
 * commit).
 *
 * Paper: the "every rank reduces its slice" shared-memory reduction of
 * R. L. Graham and G. Shipman, "MPI support for multi-core architectures:
 * optimized shared memory collectives", EuroPVM/MPI 2008, and of Open MPI's
 * coll/sm; Open MPI's xhc and acoll reduce the same way (issue 37).
 *
 * Cost (m bytes, tc = copy time per byte, gamma = combine time per byte,
 * sync = post + wait through shared memory, nch = chunks):
 *   T = m tc (copy in) + (P - 1) (m / P) gamma (the slices in parallel)
 *       + m tc (the root's copy out) + 2 nch sync,
 * the copy-in of chunk i+1 and the root's copy-out of chunk i-1 overlapped
 * with the reduction of chunk i.
 * Memory: a segment of (P + 1) stride(chunk) bytes (kp_red_stride: rounded up to a
 * multiple of 128 bytes and of the element) for one chunk, or twice
 * that (pipelined) per call half; no scratch.
 * Restrictions: all ranks on one node (else KP_ERR_UNSUPPORTED).
 * Parameter chunk_kb: chunk in KiB (0: the whole vector up to 512 KiB, else
 * 128 KiB, as the all-gather's shm_flat; cut at whole elements).
 *
 * Example, P = 3, root 2, one chunk of 6 elements:
 *   round 0  ranks 0, 1, 2 copy x_r into slot r
 *   round 1  post A_0, wait for the others' A_0
 *   round 2  rank r: res[2r, 2r+2) = slot0 op slot1 (its two elements)
 *   round 3  rank r: res[2r, 2r+2) op= slot2;  then post B_0
 *   root 2   waits for B_0 of 0 and 1, copies res into its receive buffer.
 */
#include "algo/shm_common.h"
#include "algo/reduce/red_common.h"

int kp_reduce_shm_flat_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, me = s->rank, root = s->root;
    const int64_t m = s->bytes, e = s->elem;
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "reduce shm_flat: root %d is not a rank of 0..%d", root, P - 1);
    int rc = kp_shm_one_node(s, "reduce shm_flat", 0);
    if (rc)
        return rc;
    if (P == 1 || m == 0) {
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, m);
        return kp_sched_finish(s);
    }
    if (kp_red_lines_fit(s, m)) { /* small: the root combines the flag lines */
        const kp_smp v = kp_smp_view(s);
        kp_red_node_lines(s, &v, root, KP_BUF_RECV, 0);
        return kp_sched_finish(s);
    }
    int64_t ch = kp_shm_flat_chunk(m, prm) / e * e;
    if (ch < e)
        ch = e;
    const int64_t nch = (m + ch - 1) / ch;
    const int sets = nch > 1 ? 2 : 1;
    const int64_t stride = kp_red_stride(ch, e);
    kp_sched_need_shm(s, (int64_t)sets * (P + 1) * stride);
#define SLOT(q, i) ((((int64_t)(i) % sets) * (P + 1) + (q)) * stride)
#define RES(i) SLOT(P, i)
#define LEN(i) ((i) == nch - 1 ? m - (i) * ch : ch)

    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SHM, SLOT(me, 0), LEN(0));
    kp_sched_next_round(s);
    int nb = 0; /* the number of post B_{i-1} */
    for (int64_t i = 0; i < nch; i++) {
        const int na = kp_sched_post(s); /* A_i: chunk i is in my slot */
        for (int q = 0; q < P; q++)
            if (q != me) {
                if (i >= 1)
                    kp_sched_wait(s, q, nb); /* B_{i-1}: chunk i-1's slots and results are read */
                kp_sched_wait(s, q, na);
            }
        kp_sched_next_round(s);
        if (i + 1 < nch)
            kp_sched_copy(s, KP_BUF_SEND, (i + 1) * ch, KP_BUF_SHM, SLOT(me, i + 1), LEN(i + 1));
        if (me == root && i >= 1)
            kp_sched_copy(s, KP_BUF_SHM, RES(i - 1), KP_BUF_RECV, (i - 1) * ch, LEN(i - 1));
        const int64_t a = kp_red_piece(LEN(i), e, me, P), b = kp_red_piece(LEN(i), e, me + 1, P);
        kp_red_chain(s, P, KP_BUF_SHM, SLOT(0, i) + a, stride, KP_BUF_SHM, RES(i) + a, b - a);
        nb = kp_sched_post(s); /* B_i: my slice of chunk i is reduced */
    }
    if (me == root) {
        for (int q = 0; q < P; q++)
            if (q != me)
                kp_sched_wait(s, q, nb);
        kp_sched_next_round(s);
        kp_sched_copy(s, KP_BUF_SHM, RES(nch - 1), KP_BUF_RECV, (nch - 1) * ch, LEN(nch - 1));
    }
#undef SLOT
#undef RES
#undef LEN
    return kp_sched_finish(s);
}
