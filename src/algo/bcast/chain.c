/*
 * Pipelined chain broadcast.
 *
 * The ranks form a chain in relative order, rel = (p - root) mod P: the root
 * (rel 0) sends to rel 1, which forwards to rel 2, and so on. The message
 * is cut into nch chunks; in its round i a rank in the middle receives
 * chunk i from its predecessor and forwards chunk i - 1 (received in round
 * i - 1) to its successor, so all links carry chunks at once once the pipe
 * is full. The root sends chunk i in its round i; the last rank posts all
 * its receives at once. Everything is in the receive buffers: no scratch.
 *
 * Paper: the pipelined (chain) broadcast of E. Chan, M. Heimlich,
 * A. Purkayastha and R. van de Geijn, "Collective communication: theory,
 * practice, and experience", CCPE 19(13), 2007 (section 6); Open MPI's
 * ompi_coll_base_bcast_intra_chain / _pipeline. For long messages.
 *
 * Cost (Hockney; m = bytes, ch = chunk, nch = ceil(m / ch)):
 *   T = (P - 2 + nch) * (ts + ch tau),
 * minimal near ch = sqrt(m ts / ((P - 2) tau)).
 * Memory: none. Restrictions: none (any P >= 1, any root).
 * Parameter chunk_kb: chunk size in KiB; 0 = automatic (kp_bcast_chain_chunk):
 * one chunk for P <= 2 (nothing to pipeline), else the optimum above with
 * ts / tau taken as 16 KiB (1 us at 16 GB/s), at least 8 KiB, rounded up to
 * whole KiB: 1 MiB at P = 4 gives 91 KiB chunks (12 chunks).
 *
 * Example, P = 4, root 1, 3 chunks (chain 1 -> 2 -> 3 -> 0):
 *   round  rank 1     rank 2            rank 3            rank 0
 *   0      send c0    recv c0           recv c0            recv c0, c1, c2
 *   1      send c1    recv c1, send c0  recv c1
 *   2      send c2    recv c2, send c1  recv c2, send c0
 *   3                 send c2           send c1
 *   4                                   send c2
 * (rounds are per rank: rank 3's round 1 starts once c0 has arrived.)
 */
#include "algo/bcast/bcast_common.h"

/* floor(sqrt(x)) for x >= 0 */
static int64_t isqrt(int64_t x)
{
    int64_t r = 0;
    for (int64_t b = (int64_t)1 << 31; b > 0; b >>= 1)
        if ((r + b) <= x / (r + b))
            r += b;
    return r;
}

int64_t kp_bcast_chain_chunk(int64_t bytes, int P, const kp_params *prm)
{
    if (prm->chunk_kb > 0)
        return (int64_t)prm->chunk_kb << 10;
    if (P <= 2 || bytes <= 0)
        return bytes;
    int64_t ch = isqrt(bytes / (P - 2) * ((int64_t)16 << 10));
    ch = (ch + 1023) / 1024 * 1024;
    return ch < ((int64_t)8 << 10) ? (int64_t)8 << 10 : ch;
}

int kp_bcast_chain_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, root = s->root;
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "bcast chain: root %d is not a rank of 0..%d", root, P - 1);
    const int rel = kp_mod((int64_t)s->rank - root, P);
    const int pred = kp_mod((int64_t)s->rank - 1, P), succ = kp_mod((int64_t)s->rank + 1, P);
    const kp_chunks c = kp_chunks_of(s->bytes, kp_bcast_chain_chunk(s->bytes, P, prm));
    if (P == 1 || c.nch == 0)
        return kp_sched_finish(s);
    if (rel == P - 1) { /* the end of the chain: every receive at once */
        for (int i = 0; i < c.nch; i++)
            kp_sched_recv(s, pred, KP_BUF_RECV, kp_chunk_off(&c, i), kp_chunk_len(&c, i));
        return kp_sched_finish(s);
    }
    for (int i = 0; i <= c.nch; i++) {
        if (i < c.nch && rel > 0)
            kp_sched_recv(s, pred, KP_BUF_RECV, kp_chunk_off(&c, i), kp_chunk_len(&c, i));
        const int fwd = rel == 0 ? i : i - 1; /* the root sends what it has, the others what came */
        if (fwd >= 0 && fwd < c.nch)
            kp_sched_send(s, succ, KP_BUF_RECV, kp_chunk_off(&c, fwd), kp_chunk_len(&c, fwd));
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
