/*
 * k-port Direct all-gather.
 *
 * Every rank sends its own block straight to every other rank, k at a time:
 * in step i rank p sends its block (from the send buffer) to p + i*k + 1,
 * ..., p + i*k + k and receives the blocks of p - i*k - 1, ..., p - i*k - k
 * (all mod P) straight into their places in the receive buffer. The last
 * step has fewer ports busy when k does not divide P - 1. The own block is
 * copied into place in step 0; with MPI_IN_PLACE that copy is a no-op and
 * nothing ever writes the own block, so no special case is needed.
 *
 * Paper: Y. Qian and A. Afsahi, "RDMA-based and SMP-aware multi-port
 * all-gather on multi-rail QsNetII SMP clusters", ICPP 2007, section 6.1.1
 * (k-port extension of the sequential tree algorithm; for large messages).
 *
 * Cost (Hockney, k-port): T = ceil((P-1)/k) * (ts + m * tau), m = bytes per
 * block. Each step moves one block per port.
 * Memory: no scratch. Restrictions: none (any P >= 1, any k >= 1; k >= P-1
 * finishes in one step). Parameters: k (ports, >= 1).
 *
 * Example, P = 5, k = 2 (2 steps), who holds which block after each step:
 *   start   0:{0}          1:{1}          2:{2}          3:{3}          4:{4}
 *   step 0  0:{0,4,3}      1:{1,0,4}      2:{2,1,0}      3:{3,2,1}      4:{4,3,2}
 *   step 1  everyone holds all five (rank 0 gets 2 from 2 and 1 from 1)
 *
 * Peer arithmetic: kp_direct_* in peers_kport.h, tested exhaustively by
 * tests/unit/test_peers_kport.c.
 */
#include "algo/algo.h"
#include "algo/allgather/peers_kport.h"
#include "kport.h"

int kp_direct_nsteps(int P, int k)
{
    if (P <= 1)
        return 0;
    return (int)(((int64_t)P - 1 + k - 1) / k);
}

int kp_direct_dist(int P, int k, int i, int j)
{
    int64_t d = (int64_t)i * k + j;
    return (i < 0 || j < 1 || j > k || d >= P) ? 0 : (int)d;
}

int kp_direct_send_peer(int p, int P, int k, int i, int j)
{
    int d = kp_direct_dist(P, k, i, j);
    return d ? kp_mod((int64_t)p + d, P) : -1;
}

int kp_direct_recv_peer(int p, int P, int k, int i, int j)
{
    int d = kp_direct_dist(P, k, i, j);
    return d ? kp_mod((int64_t)p - d, P) : -1;
}

int kp_allgather_direct_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank, k = prm->k;
    const int64_t m = s->bytes;

    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "direct: k = %d ports; k must be >= 1", k);

    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
    const int nsteps = kp_direct_nsteps(P, k);
    for (int i = 0; i < nsteps; i++) {
        for (int j = 1; j <= k && kp_direct_dist(P, k, i, j) > 0; j++) {
            int to = kp_direct_send_peer(p, P, k, i, j);
            int from = kp_direct_recv_peer(p, P, k, i, j);
            kp_sched_send(s, to, KP_BUF_SEND, 0, m);
            kp_sched_recv(s, from, KP_BUF_RECV, (int64_t)from * m, m);
        }
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
