/*
 * Ring all-gather (baseline).
 *
 * P-1 steps; in step s rank p sends block (p - s) mod P to p+1 and receives
 * block (p - s - 1) mod P from p-1, straight into the receive buffer. Step 0
 * sends the own block from the send buffer and copies it into place in the
 * same round, so MPI_IN_PLACE needs no special case.
 *
 * Cost (Hockney): T = (P-1) * (ts + m * tau), m = bytes per block.
 * Memory: no scratch. Restrictions: none (any P >= 1). Parameters: none.
 *
 * Example, P = 4, who holds which block after each step:
 *   start   0:{0}       1:{1}       2:{2}       3:{3}
 *   step 0  0:{0,3}     1:{1,0}     2:{2,1}     3:{3,2}
 *   step 1  0:{0,3,2}   1:{1,0,3}   2:{2,1,0}   3:{3,2,1}
 *   step 2  everyone holds all four
 */
#include "algo/algo.h"

int kp_allgather_ring_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    const int P = s->P, p = s->rank;
    const int64_t m = s->bytes;
    const int right = kp_mod(p + 1, P), left = kp_mod(p - 1, P);

    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
    for (int step = 0; step < P - 1; step++) {
        int sblk = kp_mod(p - step, P), rblk = kp_mod(p - step - 1, P);
        if (step == 0)
            kp_sched_send(s, right, KP_BUF_SEND, 0, m);
        else
            kp_sched_send(s, right, KP_BUF_RECV, (int64_t)sblk * m, m);
        kp_sched_recv(s, left, KP_BUF_RECV, (int64_t)rblk * m, m);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}
