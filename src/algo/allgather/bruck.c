/*
 * k-port Bruck all-gather (any P).
 *
 * Phase 1 works in scratch, where rank p keeps blocks p, p+1, p+2, ...
 * (mod P) in this order; it starts with its own block. Before step i it
 * holds h = (k+1)^i blocks; on port j (j = 1..k) it sends the first
 * min(h, P - j*h) of them to rank p - j*h and receives as many from rank
 * p + j*h, which are blocks p + j*h, ..., and stores them at scratch block
 * j*h, i.e. appends them. After the step it holds min((k+1) h, P) blocks.
 * When P is not a power of k+1 the last step is partial: the P - h blocks
 * still missing are split over the ports, port j carrying min(h, P - j*h)
 * and ports with j*h >= P staying idle. Phase 2 is one local rotation into
 * the receive buffer: scratch blocks 0 .. P-p-1 go to blocks p .. P-1 and
 * scratch blocks P-p .. P-1 to blocks 0 .. p-1 (two copies). Step 0 sends
 * the own block from the send buffer while it is being copied to scratch,
 * and the receive buffer is written only by the final rotation, so
 * MPI_IN_PLACE needs no special case.
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007, section 6.1.3,
 * after J. Bruck et al., "Efficient algorithms for all-to-all communications
 * in multiport message-passing systems", IEEE TPDS 8(11), 1997. For small
 * messages.
 *
 * Cost (Hockney, k-port; m = bytes per block): with s = ceil(log_{k+1} P)
 * steps and h = (k+1)^(s-1) blocks held before the last step,
 *   T = s * ts + ((h - 1)/k + min(h, P - h)) * m * tau
 * which for P = (k+1)^s is T = log_{k+1}(P) * ts + (P-1)/k * m * tau (eq. 2),
 * plus the local copies of (P + 1) * m bytes (own block in, rotation out).
 * Memory: P * m bytes of scratch. Restrictions: none (any P >= 1, any
 * k >= 1; k >= P-1 finishes in one step). Parameters: k (ports, >= 1).
 *
 * Example, P = 5, k = 2 (2 steps), scratch of each rank after each step:
 *   start   0:[0]          1:[1]          2:[2]          3:[3]          4:[4]
 *   step 0  0:[0,1,2]      1:[1,2,3]      2:[2,3,4]      3:[3,4,0]      4:[4,0,1]
 *           (h = 1: port 1 from p+1, port 2 from p+2, one block each)
 *   step 1  0:[0,1,2,3,4]  1:[1,2,3,4,0]  2:[2,3,4,0,1]  3:[3,4,0,1,2]  4:[4,0,1,2,3]
 *           (h = 3, partial: port 1 brings 2 blocks from p+3, port 2 idle)
 *   rotate  rank 3: scratch[0..2) -> recv blocks 3,4; scratch[2..5) -> 0,1,2
 *
 * Peer arithmetic: kp_bruck_* in peers_kport.h, tested exhaustively by
 * tests/unit/test_peers_kport.c.
 */
#include "algo/algo.h"
#include "algo/allgather/peers_kport.h"
#include "kport.h"

int kp_bruck_nsteps(int P, int k)
{
    int steps = 0;
    for (int64_t h = 1; h < P; h *= (int64_t)k + 1)
        steps++;
    return steps;
}

int kp_bruck_held(int P, int k, int i)
{
    int64_t h = 1;
    for (int t = 0; t < i && h < P; t++)
        h *= (int64_t)k + 1;
    return h < P ? (int)h : P;
}

int kp_bruck_count(int P, int k, int i, int j)
{
    const int64_t h = kp_bruck_held(P, k, i);
    if (i < 0 || j < 1 || j > k || h >= P)
        return 0;
    const int64_t left = P - j * h;
    return left <= 0 ? 0 : (int)(left < h ? left : h);
}

int kp_bruck_send_peer(int p, int P, int k, int i, int j)
{
    if (kp_bruck_count(P, k, i, j) == 0)
        return -1;
    return kp_mod((int64_t)p - (int64_t)j * kp_bruck_held(P, k, i), P);
}

int kp_bruck_recv_peer(int p, int P, int k, int i, int j)
{
    if (kp_bruck_count(P, k, i, j) == 0)
        return -1;
    return kp_mod((int64_t)p + (int64_t)j * kp_bruck_held(P, k, i), P);
}

int kp_allgather_bruck_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank, k = prm->k;
    const int64_t m = s->bytes;

    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "bruck: k = %d ports; k must be >= 1", k);
    if (P == 1) { /* nothing to exchange, no scratch needed */
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, m);
        return kp_sched_finish(s);
    }

    /* phase 1: gather blocks p, p+1, ... into scratch */
    kp_sched_need_scratch(s, (int64_t)P * m);
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SCRATCH, 0, m);
    const int nsteps = kp_bruck_nsteps(P, k);
    for (int i = 0; i < nsteps; i++) {
        const int64_t h = kp_bruck_held(P, k, i);
        /* step 0 sends the own block from the send buffer: the copy into
         * scratch is still in flight */
        const int sbuf = i == 0 ? KP_BUF_SEND : KP_BUF_SCRATCH;
        int cnt;
        for (int j = 1; j <= k && (cnt = kp_bruck_count(P, k, i, j)) > 0; j++) {
            kp_sched_send(s, kp_bruck_send_peer(p, P, k, i, j), sbuf, 0, (int64_t)cnt * m);
            kp_sched_recv(s, kp_bruck_recv_peer(p, P, k, i, j), KP_BUF_SCRATCH, j * h * m,
                          (int64_t)cnt * m);
        }
        kp_sched_next_round(s);
    }

    /* phase 2: scratch block t holds block (p + t) mod P */
    kp_sched_copy(s, KP_BUF_SCRATCH, 0, KP_BUF_RECV, (int64_t)p * m, (int64_t)(P - p) * m);
    kp_sched_copy(s, KP_BUF_SCRATCH, (int64_t)(P - p) * m, KP_BUF_RECV, 0, (int64_t)p * m);
    return kp_sched_finish(s);
}
