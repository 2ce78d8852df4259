/*
 * Ring allreduce: ring reduce-scatter, then ring all-gather (any P).
 *
 * The vector is cut into P pieces of whole elements (kp_ar_cut: floor or
 * ceil(elements / P) each, empty ones when there are fewer elements than
 * ranks). Reduce-scatter, P - 1 steps: in step s rank p sends piece
 * (p - s - 1) mod P to p + 1 (from the send buffer in step 0, then the
 * partial it combined in step s - 1) and receives piece (p - s - 2) mod P
 * from p - 1 into scratch, then combines received (op) own input into that
 * piece of the receive buffer. After step P - 2 rank p holds piece p
 * reduced over all ranks. All-gather, P - 1 steps: in step s rank p sends
 * piece (p - s) mod P to p + 1 and receives piece (p - s - 1) mod P from
 * p - 1 straight into place.
 *
 * Every piece is combined once, by the ranks along the ring from p + 1 to
 * p, and then only copied: every rank gets bitwise the same vector. The
 * combine order of piece b is the ring's, b + 1, b + 2, ..., b (mod P),
 * which is rank order only for b = P - 1: non-commutative operations are
 * refused (KP_ERR_UNSUPPORTED).
 *
 * Under MPI_IN_PLACE the send buffer is the receive buffer: each piece's
 * input is read once (sent in step 0, or combined into itself), before the
 * all-gather overwrites it.
 *
 * Paper: P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms
 * for clusters of workstations", JPDC 69(2), 2009; the reduce-scatter +
 * all-gather scheme of R. Rabenseifner (2004) on a ring. For large vectors.
 *
 * Cost (Hockney; n = vector bytes, gamma = combine time per byte):
 *   T = 2 (P-1) ts + 2 (P-1)/P n tau + (P-1)/P n gamma   (P | elements)
 *   Rounds: 2 per reduce-scatter step (exchange, combine), 1 per
 *   all-gather step. Bandwidth-optimal; latency linear in P.
 * Memory: scratch of one piece, ceil(elements / P) elements.
 * Restrictions: commutative operations only. Parameters: none.
 *
 * Example, P = 3, pieces A B C (x_i^A: rank i's piece A; (a b) = a (op) b):
 *   RS step 0  0 -> 1: C0; 1 -> 2: A1; 2 -> 0: B2
 *              0: B = (B2 B0); 1: C = (C0 C1); 2: A = (A1 A2)
 *   RS step 1  0 -> 1: B; 1 -> 2: C; 2 -> 0: A
 *              0: A = ((A1 A2) A0); 1: B = ((B2 B0) B1); 2: C = ((C0 C1) C2)
 *   AG step 0  0 -> 1: A; 1 -> 2: B; 2 -> 0: C
 *   AG step 1  0 -> 1: C; 1 -> 2: A; 2 -> 0: B: everyone holds A B C
 */
#include "algo/allreduce/ar_common.h"

int kp_allreduce_ring_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    int rc;
    if (kp_ar_begin(s, "ring", 1, &rc))
        return rc;
    const int P = s->P, p = s->rank, right = (p + 1) % P, left = (p + P - 1) % P;
    const int64_t n = s->bytes;
#define OFF(b) kp_ar_cut(s, n, P, (b))
#define LEN(b) (OFF((b) + 1) - OFF(b))
    kp_sched_need_scratch(s, LEN(P - 1)); /* the last piece is a largest one */
    for (int st = 0; st < P - 1; st++) {
        const int sb = kp_mod((int64_t)p - st - 1, P), rb = kp_mod((int64_t)p - st - 2, P);
        kp_sched_send(s, right, st == 0 ? KP_BUF_SEND : KP_BUF_RECV, OFF(sb), LEN(sb));
        kp_sched_recv(s, left, KP_BUF_SCRATCH, 0, LEN(rb));
        kp_sched_next_round(s);
        kp_sched_reduce(s, KP_BUF_SCRATCH, 0, KP_BUF_SEND, OFF(rb), KP_BUF_RECV, OFF(rb), LEN(rb));
        kp_sched_next_round(s);
    }
    for (int st = 0; st < P - 1; st++) {
        const int sb = kp_mod((int64_t)p - st, P), rb = kp_mod((int64_t)p - st - 1, P);
        kp_sched_send(s, right, KP_BUF_RECV, OFF(sb), LEN(sb));
        kp_sched_recv(s, left, KP_BUF_RECV, OFF(rb), LEN(rb));
        kp_sched_next_round(s);
    }
#undef OFF
#undef LEN
    return kp_sched_finish(s);
}
