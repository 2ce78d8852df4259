/*
 * Shared-memory allreduce for ranks on one node: every rank combines its
 * slice of the vector over everyone's copy in the segment, then every rank
 * copies the whole result out (pipelined in chunks).
 *
 * Split mode. The vector is cut into chunks of ch bytes (whole elements),
 * and each chunk into P slices (kp_ar_cut). The segment holds, per chunk
 * parity (two sets when there is more than one chunk), a slot per rank of P
 * sub-slots, one per slice, each rounded up to a cache line (and to the
 * element):
 *  - rank q copies slice j (j != q) of its input chunk into sub-slot j of
 *    its slot and posts; it never copies its own slice in;
 *  - once every rank has posted, rank q combines slice q over all P inputs
 *    LEFT TO RIGHT IN RANK ORDER, (((x0 (op) x1) (op) x2) ...), reading its
 *    own from its send buffer and the others from their slots, straight into
 *    sub-slot q of its own slot (which holds no input: the result area costs
 *    no extra segment), and posts;
 *  - once every rank has posted again, every rank copies the P result slices
 *    of the chunk into its receive buffer (its own in the round of its
 *    post, while it waits for the others).
 * Pipelined: the post after chunk i's combine also says "chunk i+1's input
 * is in", so one post per chunk (nchunks + 1 in all); in the round after it
 * a rank copies chunk i's results out, copies chunk i+2's input in (into the
 * set of chunk i, whose inputs everyone has combined: their posts said so;
 * the result sub-slots are never written by a copy in) and combines chunk
 * i+1. Sub-slots are fixed per slice, so a short last chunk never moves a
 * slice onto bytes a peer still reads.
 *
 * Replicated mode, when (P - 1) * bytes <= KP_AR_REPLICATED_MAX (8 KiB):
 * the same pipeline with one slice per chunk that every rank copies in whole
 * and combines whole, all P inputs in rank order from the slots straight
 * into its receive buffer: no copy out and one synchronisation per chunk
 * for (P - 1) n gamma of combines per rank. At P = 2 it equals the split
 * mode at 2-8 KiB (0.24 against 0.25 us at 2 KiB) and loses above it (16
 * KiB 1.3 against 0.9 us, 64 KiB 5.6 against 3.4: every rank combining the
 * whole vector costs more than the second synchronisation and the copy out).
 * Small vectors (at most KP_LINE - max(8, elem) bytes, elem dividing KP_LINE)
 * take the replicated way through the flag lines (KP_BUF_LINE, ar_common.h):
 * the vector shares the cache line of its flag, so at P = 2 a call is one
 * flag transfer and one combine.
 *
 * Every slice's value is one expression in rank order, computed once (split)
 * or identically by every rank (replicated), and then copied: every rank
 * gets bitwise the same result, correct for non-commutative operations.
 * Every rank waits for every other's first post, made on entry: the node
 * fence of algo/smp_common.h, so calls that reuse a half of the segment
 * (the executor alternates halves) cannot race.
 * Under MPI_IN_PLACE the input is in the receive buffer: a chunk's slices
 * are copied in or combined before its results are written over them (the
 * replicated mode reads its own input from its slot, not the receive
 * buffer it is writing).
 *
 * Paper: none for this exact form; every rank reducing a slice of the
 * node's vectors in shared memory is what Open MPI's coll/xhc and coll/acoll
 * and MPICH's release_gather allreduce do within a node (issue 37), and the
 * flags and the pipelining are shm_flat's all-gather's
 * (000_b36fdf3a016ff124.txt section 5.1: concurrent copies into sections of
 * a shared region, flags instead of locks).
 *
 * Cost (n bytes, c = copy time per byte, gamma = combine time per byte,
 * sync = one post/wait): split T = (P-1)/P n c (copy in) + (P-1)/P n gamma
 * (slice combine, P - 1 rounds of n/P) + n c (copy out) + 2 sync with one
 * chunk, and with nchunks, copy in and copy out of neighbouring chunks in
 * the same rounds and nchunks + 1 syncs; replicated T = n c + (P-1) n gamma
 * + nchunks syncs; lines (P-1) n gamma + n c + sync.
 * At P = 2 the split mode moves 4 half-vectors per rank (copy in, combine,
 * own slice out, the peer's slice out), two of them read from the other
 * rank's cache; kport-bench's bw_limit counts 2 (combine, copy), local:
 * without single-copy reads (slower here than the segment: all-gather
 * shm_single_copy 6.3 us against shm_flat's 3.3 at 64 KiB) that is the
 * floor of this design, about 2x bw_limit.
 * Memory: a segment of sets * P * S * sub bytes (S = P slices, or 1 when
 * replicated; sub = ceil(ch / S) rounded up to a cache line): about 2 P ch
 * (P ch with one chunk); no scratch.
 * Restrictions: all ranks on one node (else KP_ERR_UNSUPPORTED).
 * Parameter chunk_kb: chunk size in KiB (0: automatic, kp_ar_shm_chunk).
 *
 * Example, split mode, P = 2, one chunk, slices A and B:
 *   round 0  0: copy B0 -> slot0.B           1: copy A1 -> slot1.A
 *   round 1  post 1, wait the other's post 1
 *   round 2  0: slot0.A = (A0 (op) slot1.A)  1: slot1.B = (slot0.B (op) B1)
 *   round 3  post 2 and copy the own result slice out; wait
 *   round 4  0: copy slot1.B -> B            1: copy slot0.A -> A
 */
#include "algo/allreduce/ar_common.h"

/* Vectors with (P - 1) * bytes up to this take the replicated way: one
 * synchronisation per chunk, every rank combines every input (header). */
#define KP_AR_REPLICATED_MAX ((int64_t)8 << 10)

/* the pipelining chunk: chunk_kb, else the whole vector up to 256 KiB, else
 * 128 KiB; whole elements. At P = 2 (Open MPI, one run, medians of 101):
 * 64 KiB took 3.2 us whole against 3.4 / 3.6 / 3.9 in chunks of 64 / 32 /
 * 16 KiB, 256 KiB 10.8-11.2 whole against 11.2-12.5 in 128 KiB chunks,
 * 512 KiB 23-26 in 128 KiB chunks against 28-30 in 64 KiB ones. */
int64_t kp_ar_shm_chunk(int64_t n, int64_t elem, const kp_params *prm)
{
    int64_t ch = prm->chunk_kb > 0 ? (int64_t)prm->chunk_kb << 10 : n <= ((int64_t)256 << 10) ? n : (int64_t)128 << 10;
    ch = ch / elem * elem;
    return ch < elem ? elem : ch;
}

/* replicated (every rank combines every input) or split (every rank its
 * slice, then copies out)? */
static int replicated(int P, int64_t n)
{
    return (int64_t)(P - 1) * n <= KP_AR_REPLICATED_MAX;
}

int kp_allreduce_shm_flat_build(kp_sched *s, const kp_params *prm)
{
    int rc = kp_shm_one_node(s, "shm_flat", 0);
    if (rc)
        return rc;
    if (kp_ar_begin(s, "shm_flat", 0, &rc))
        return rc;
    const int P = s->P, me = s->rank;
    const int64_t n = s->bytes, e = s->elem > 0 ? s->elem : 1;
    if (kp_ar_lines_fit(s))
        return kp_ar_by_lines(s);

    const int repl = replicated(P, n), S = repl ? 1 : P; /* slices per chunk */
    const int64_t ch = kp_ar_shm_chunk(n, e, prm), nch = (n + ch - 1) / ch, A = kp_ar_align(e);
    const int sets = nch > 1 ? 2 : 1;
    const int64_t sub = ((ch / e + S - 1) / S * e + A - 1) / A * A;
    kp_sched_need_shm(s, (int64_t)sets * P * S * sub);
#define CLEN(i) ((i) == nch - 1 ? n - (i) * ch : ch)
#define SOFF(i, j) ((i) * ch + kp_ar_cut(s, CLEN(i), S, (j)))
#define SLEN(i, j) (kp_ar_cut(s, CLEN(i), S, (j) + 1) - kp_ar_cut(s, CLEN(i), S, (j)))
#define SLOT(q, i, j) ((((int64_t)((i) % sets) * P + (q)) * S + (j)) * sub)
#define COPY_IN(i)                                                                                                     \
    for (int j = 0; j < S; j++)                                                                                        \
        if (repl || j != me)                                                                                           \
            kp_sched_copy(s, KP_BUF_SEND, SOFF(i, j), KP_BUF_SHM, SLOT(me, i, j), SLEN(i, j));

    COPY_IN(0);
    kp_sched_next_round(s);
    for (int64_t t = 0; t <= nch - repl; t++) {
        kp_shm_wait_all(s, kp_sched_post(s), 0);
        if (t >= 1 && !repl) /* the own result slice, while the others' posts come in */
            kp_sched_copy(s, KP_BUF_SHM, SLOT(me, t - 1, me), KP_BUF_RECV, SOFF(t - 1, me), SLEN(t - 1, me));
        kp_sched_next_round(s);
        if (t >= 1 && !repl)
            for (int j = 0; j < P; j++)
                if (j != me)
                    kp_sched_copy(s, KP_BUF_SHM, SLOT(j, t - 1, j), KP_BUF_RECV, SOFF(t - 1, j), SLEN(t - 1, j));
        if (t + 1 < nch)
            COPY_IN(t + 1);
        if (t < nch) { /* slice j of chunk t over all inputs, rank order */
            const int j = repl ? 0 : me;
            const int64_t len = SLEN(t, j);
            const int db = repl ? KP_BUF_RECV : KP_BUF_SHM;
            const int64_t dst = repl ? SOFF(t, 0) : SLOT(me, t, me);
            for (int q = 1; q < P; q++) { /* mine: from the send buffer (split) or my slot (replicated) */
                const int a0 = q == 1 && me == 0 && !repl, bq = q == me && !repl;
                kp_sched_reduce(s, q > 1 ? db : a0 ? KP_BUF_SEND : KP_BUF_SHM, q > 1 ? dst : a0 ? SOFF(t, j) : SLOT(0, t, j),
                                bq ? KP_BUF_SEND : KP_BUF_SHM, bq ? SOFF(t, j) : SLOT(q, t, j), db, dst, len);
                kp_sched_next_round(s);
            }
        }
        kp_sched_next_round(s);
    }
#undef COPY_IN
#undef SLOT
#undef SLEN
#undef SOFF
#undef CLEN
    return kp_sched_finish(s);
}
