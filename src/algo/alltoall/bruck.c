/*
 * k-port Bruck all-to-all (index algorithm, radix k + 1; any P).
 *
 * Phase 1, local rotation: scratch position i (i = 0 .. P-1) of rank p gets
 * send block (p + i) mod P, the block that has distance i to travel.
 * Phase 2, s = ceil(log_{k+1} P) steps: in step x, for every digit value
 * d = 1 .. k, the positions i whose base-(k+1) digit x equals d are packed
 * (in increasing i) into group d of a pack area, sent to rank
 * p + d*(k+1)^x, and replaced by the group received from rank
 * p - d*(k+1)^x, which carries the same positions. The k groups of a step go
 * out at once, one per port. A block thus travels exactly its index i and
 * never changes position, so at the end position i of rank p holds the
 * block rank p - i sent to p.
 * Phase 3, inverse rotation: position i goes to receive block (p - i) mod P.
 *
 * Rounds: round 0 rotates (two copies) and packs step 0 straight from the
 * send buffer; then each step is an exchange round followed by one local
 * round that unpacks the arrivals and packs the next step at once: an
 * arrival that moves again in the next step goes from the receive area
 * straight to the pack area, one that does not goes to its scratch
 * position, and a resting position whose next digit is nonzero is packed
 * from scratch (it cannot have been written in that round, its digit x
 * being 0). The local round after the last step is phase 3 itself, reading
 * each position from the receive area or from scratch. Runs of adjacent
 * blocks are copied as one operation.
 *
 * MPI_IN_PLACE needs no special case: the send buffer (= the receive
 * buffer) is only read, in round 0, and the receive buffer only written, in
 * the last round.
 *
 * Paper: J. Bruck, C.-T. Ho, S. Kipnis, E. Upfal and D. Weathersby,
 * "Efficient algorithms for all-to-all communications in multiport
 * message-passing systems", IEEE TPDS 8(11), 1997 (the index algorithm,
 * radix r = k + 1). For small messages.
 *
 * Cost (Hockney, k-port; m = bytes per block): with s = ceil(log_{k+1} P)
 * steps and c_x = the largest group of step x (at most ceil(P / (k+1))),
 *   T = s * ts + sum_x c_x * m * tau
 * which for P = (k+1)^s is T = s * (ts + P/(k+1) * m * tau); plus local
 * copies of about (2P + 2 * sum_x n_x) * m bytes, n_x = blocks moved in step x.
 * Memory: (P + 2 * max_x n_x) * m bytes of scratch (positions, pack area,
 * receive area; n_x <= P - 1). Restrictions: none (any P >= 1, any k >= 1;
 * k >= P-1 finishes in one step). Parameters: k (ports, >= 1; default 1).
 *
 * Example, P = 5, k = 2 (radix 3, 2 steps); "a>b" is a's block for b.
 *   digits of i = 0..4:  digit 0 = 0,1,2,0,1   digit 1 = 0,0,0,1,1
 *   step 0 (distance 1 for d = 1: positions 1,4; distance 2 for d = 2: 2)
 *   step 1 (distance 3 for d = 1: positions 3,4; d = 2 idle, 6 >= 5)
 *   rank 0 positions 0..4:
 *     rotate   0>0 0>1 0>2 0>3 0>4
 *     step 0   0>0 4>0 3>0 0>3 4>3   (1,4 from rank 4; 2 from rank 3)
 *     step 1   0>0 4>0 3>0 2>0 1>0   (3,4 from rank 2)
 *   phase 3: position i -> receive block (0 - i) mod 5 = 0,4,3,2,1.
 *
 * Digit and pack arithmetic: kp_a2a_bruck_* in algo/peers_coll.h, tested
 * exhaustively by tests/unit/test_peers_alltoall.c.
 */
#include "algo/algo.h"
#include "algo/peers_coll.h"
#include "kport.h"

/* (k+1)^x if it is below P, else 0 */
static int64_t unit(int P, int k, int x)
{
    if (k < 1 || x < 0)
        return 0;
    int64_t w = 1;
    for (int t = 0; t < x && w < P; t++)
        w *= (int64_t)k + 1;
    return w < P ? w : 0;
}

int kp_a2a_bruck_nsteps(int P, int k)
{
    int steps = 0;
    for (int64_t h = 1; k >= 1 && h < P; h *= (int64_t)k + 1)
        steps++;
    return steps;
}

int kp_a2a_bruck_digit(int i, int k, int x)
{
    if (i < 0 || k < 1 || x < 0)
        return 0;
    int64_t w = 1;
    for (int t = 0; t < x; t++) {
        w *= (int64_t)k + 1;
        if (w > i)
            return 0;
    }
    return (int)(i / w % ((int64_t)k + 1));
}

int kp_a2a_bruck_dist(int P, int k, int x, int d)
{
    const int64_t w = unit(P, k, x);
    if (d < 1 || d > k || w == 0)
        return 0;
    return (int64_t)d * w < P ? (int)(d * w) : 0;
}

int kp_a2a_bruck_send_peer(int p, int P, int k, int x, int d)
{
    const int dist = kp_a2a_bruck_dist(P, k, x, d);
    return dist ? kp_mod((int64_t)p + dist, P) : -1;
}

int kp_a2a_bruck_recv_peer(int p, int P, int k, int x, int d)
{
    const int dist = kp_a2a_bruck_dist(P, k, x, d);
    return dist ? kp_mod((int64_t)p - dist, P) : -1;
}

int kp_a2a_bruck_count(int P, int k, int x, int d)
{
    if (kp_a2a_bruck_dist(P, k, x, d) == 0)
        return 0;
    const int64_t w = unit(P, k, x), period = ((int64_t)k + 1) * w;
    int64_t rest = P % period - (int64_t)d * w; /* indices of the last, partial period */
    rest = rest < 0 ? 0 : rest > w ? w : rest;
    return (int)(P / period * w + rest);
}

int kp_a2a_bruck_group_off(int P, int k, int x, int d)
{
    int64_t off = 0;
    for (int64_t e = 1; e < d && e <= k && kp_a2a_bruck_dist(P, k, x, (int)e); e++)
        off += kp_a2a_bruck_count(P, k, x, (int)e);
    return (int)off;
}

int kp_a2a_bruck_slot(int P, int k, int x, int i)
{
    if (i < 0 || i >= P)
        return -1;
    const int d = kp_a2a_bruck_digit(i, k, x);
    if (d == 0)
        return -1;
    const int64_t w = unit(P, k, x), period = ((int64_t)k + 1) * w;
    return kp_a2a_bruck_group_off(P, k, x, d) + (int)(i / period * w + i % w);
}

int kp_a2a_bruck_max_packed(int P, int k)
{
    int most = 0;
    for (int x = 0; x < kp_a2a_bruck_nsteps(P, k); x++) {
        int n = kp_a2a_bruck_group_off(P, k, x, k < P ? k + 1 : P);
        most = n > most ? n : most;
    }
    return most;
}

/* a local copy that extends the previous operation when both regions
 * continue it (same round), so that runs of blocks are one operation */
static void copy_run(kp_sched *s, int sbuf, int64_t soff, int dbuf, int64_t doff, int64_t len)
{
    kp_op *last = s->nops > 0 ? &s->ops[s->nops - 1] : NULL;
    if (len > 0 && !s->err && last && last->kind == KP_OP_COPY && last->round == s->cur_round &&
        last->u.copy.src.buf == sbuf && last->u.copy.dst.buf == dbuf &&
        last->u.copy.src.off + last->u.copy.src.len == soff && last->u.copy.dst.off + last->u.copy.dst.len == doff) {
        last->u.copy.src.len += len;
        last->u.copy.dst.len += len;
        return;
    }
    kp_sched_copy(s, sbuf, soff, dbuf, doff, len);
}

int kp_alltoall_bruck_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank, k = prm->k;
    const int64_t m = s->bytes;

    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "alltoall bruck: k = %d ports; k must be >= 1", k);
    if (P == 1) { /* only the own block; in place it is already there */
        if (!s->inplace)
            kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, m);
        return kp_sched_finish(s);
    }

    const int ns = kp_a2a_bruck_nsteps(P, k);
    const int64_t npk = kp_a2a_bruck_max_packed(P, k);
    const int64_t pos = 0, pack = (int64_t)P * m, arrive = pack + npk * m; /* scratch areas */
    kp_sched_need_scratch(s, arrive + npk * m);

    /* round 0: rotate into the positions; pack step 0 from the send buffer */
    kp_sched_copy(s, KP_BUF_SEND, (int64_t)p * m, KP_BUF_SCRATCH, pos, (int64_t)(P - p) * m);
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SCRATCH, pos + (int64_t)(P - p) * m, (int64_t)p * m);
    for (int i = 1; i < P; i++) {
        const int sl = kp_a2a_bruck_slot(P, k, 0, i);
        if (sl >= 0)
            copy_run(s, KP_BUF_SEND, (int64_t)kp_mod((int64_t)p + i, P) * m, KP_BUF_SCRATCH, pack + sl * m, m);
    }
    kp_sched_next_round(s);

    for (int x = 0; x < ns; x++) {
        for (int d = 1; d <= k && kp_a2a_bruck_dist(P, k, x, d); d++) {
            const int64_t off = (int64_t)kp_a2a_bruck_group_off(P, k, x, d) * m;
            const int64_t len = (int64_t)kp_a2a_bruck_count(P, k, x, d) * m;
            kp_sched_send(s, kp_a2a_bruck_send_peer(p, P, k, x, d), KP_BUF_SCRATCH, pack + off, len);
            kp_sched_recv(s, kp_a2a_bruck_recv_peer(p, P, k, x, d), KP_BUF_SCRATCH, arrive + off, len);
        }
        kp_sched_next_round(s);

        if (x == ns - 1)
            break;
        /* unpack step x and pack step x+1; three passes keep runs adjacent */
        for (int pass = 0; pass < 3; pass++) {
            for (int i = 1; i < P; i++) {
                const int in = kp_a2a_bruck_slot(P, k, x, i), out = kp_a2a_bruck_slot(P, k, x + 1, i);
                if (pass == 0 && in >= 0 && out >= 0) /* arrived, moves on */
                    copy_run(s, KP_BUF_SCRATCH, arrive + in * m, KP_BUF_SCRATCH, pack + out * m, m);
                else if (pass == 1 && in >= 0 && out < 0) /* arrived, rests */
                    copy_run(s, KP_BUF_SCRATCH, arrive + in * m, KP_BUF_SCRATCH, pos + i * m, m);
                else if (pass == 2 && in < 0 && out >= 0) /* rested, moves */
                    copy_run(s, KP_BUF_SCRATCH, pos + i * m, KP_BUF_SCRATCH, pack + out * m, m);
            }
        }
        kp_sched_next_round(s);
    }

    /* phase 3: position i (in the receive area if it moved in the last
     * step) -> receive block p - i; descending i gives ascending blocks */
    for (int i = P - 1; i >= 0; i--) {
        const int in = kp_a2a_bruck_slot(P, k, ns - 1, i);
        const int64_t src = in >= 0 ? arrive + in * m : pos + i * m;
        copy_run(s, KP_BUF_SCRATCH, src, KP_BUF_RECV, (int64_t)kp_mod((int64_t)p - i, P) * m, m);
    }
    return kp_sched_finish(s);
}
