/*
 * Concurrent-exchange all-gather with message splitting (concurrency index 2).
 *
 * Paper: the MPI_Allgather concurrent-exchange paper (kport paper 004),
 * section 3.2 "Concurrent Exchange with Message Splitting", Figure 4,
 * Equation 5.
 *
 * Every block is split in two halves: A = its first ceil(m/2) bytes and
 * B = the last floor(m/2) bytes (m = bytes per block; for m = 1 half B is
 * empty and its operations are dropped). log2(P) steps, as pairwise
 * exchange; in step i (distance d = 2^i) rank p
 *  - swaps every A half it holds with its pair p XOR d (recursive doubling
 *    on the A halves: it holds those of blocks p & ~(d-1) .. +d), and
 *  - swaps every B half it holds with its co-pair, the rank at the same
 *    distance d in the opposite direction, mod P: the pair is p + d when bit
 *    i of p is 0 and p - d when it is 1, so the co-pair is p - d or p + d.
 * Both exchanges run at once on two links, which is the point of the method.
 *
 * Why the literal co-pair rule covers everything: the co-pair relation is
 * symmetric (p - d has bit i set and its co-pair is p), and the co-pair has
 * the same low i bits as p. By induction p holds, before step i, the B
 * halves of the 2^i consecutive blocks (mod P) that start at
 * p - (~p mod 2^i): a rank whose bit i is 0 receives the window just below
 * its own, a rank whose bit i is 1 the window just above, and the two
 * windows are disjoint. After log2(P) steps p holds the P blocks from
 * 2p + 1 (mod P) on, each once. (tests/unit/test_peers_ce.c checks this for
 * every power of two P <= 64 and more.) In the last step p + d = p - d mod P,
 * so pair and co-pair coincide: two messages to one rank, matched in order.
 *
 * Staging: the halves of a range of blocks are strided in the receive
 * buffer, so one message per half would cost 2*(P-1) messages per rank.
 * Instead the halves are staged in scratch so that what a rank holds is
 * always contiguous, which gives one message per half per step:
 *   scratch[0, P*hA)          A half of block j in slot j;
 *   scratch[P*hA, P*m)        B half of block j in slot (j - 2p - 1) mod P.
 * In B slots, p holds slots (P-1-p) & ~(d-1) .. +d before step i, i.e. the
 * B halves do recursive doubling on the "mirrored" rank P-1-p, and the
 * window received from the co-pair is the adjacent aligned range. Round 0
 * copies the own halves into scratch while step 0 sends them from the send
 * buffer; the halves received in step i are unpacked into the receive
 * buffer during step i+1 (overlapping it), the last step's after it, and
 * the own block is copied from the send buffer in round 1, when nothing
 * reads the send buffer any more (so MPI_IN_PLACE needs no special case).
 *
 * Cost (Hockney, the two halves of a step travelling concurrently to
 * distinct peers, as concurrency index 2 assumes):
 *   T = log2(P) * ts + (P-1) * (m/2) * tau  +  ~P * m * gamma (local copies,
 *   the last P/2 blocks' unpacking not overlapped), gamma = copy cost/byte.
 * With no network concurrency the halves serialise:
 *   T = 2*log2(P) * ts + (P-1) * m * tau.
 * Every rank sends 2*log2(P) messages (log2(P) when m = 1) and (P-1)*m bytes.
 * Memory: P * m bytes of scratch.
 * Parameters: C, the concurrency index; only C = 2 exists (else
 * KP_ERR_UNSUPPORTED; C < 1: KP_ERR_PARAM), except that with P <= 2 any
 * C <= P applies: a rank has at most one peer,
 * both pair and co-pair, so the schedule is the same whatever C says. A C
 * larger than P is clamped by the registry (kp_algo_effective) to the
 * largest value that applies: 2, or P when P <= 2.
 * Restrictions: P a power of two (else KP_ERR_UNSUPPORTED, checked before
 * C); P = 1 only copies its block.
 *
 * Example, P = 8, B halves held (A halves as in recursive doubling):
 *   step 0  co-pairs 0-7 1-2 3-4 5-6
 *           0:{7,0}  1:{1,2}  2:{1,2}  3:{3,4}  4:{3,4}  5:{5,6}  6:{5,6}  7:{7,0}
 *   step 1  co-pairs 0-6 1-7 2-4 3-5  (pairs 0-2 1-3 4-6 5-7)
 *           0:{5,6,7,0}  1:{7,0,1,2}  2:{1,2,3,4}  3:{3,4,5,6}
 *           4:{1,2,3,4}  5:{3,4,5,6}  6:{5,6,7,0}  7:{7,0,1,2}
 *   step 2  co-pairs = pairs 0-4 1-5 2-6 3-7: everyone holds all eight
 */
#include "algo/algo.h"
#include "algo/allgather/peers_ce.h"
#include "kport.h"

int kp_ce_split_valid(int P) { return kp_is_pow2(P); }

int kp_ce_split_c_applies(int P, int C) { return C == 2 || (P <= 2 && C >= 1 && C <= P); }

int kp_ce_split_nsteps(int P) { return kp_ilog(P, 2); }

int64_t kp_ce_split_half_a(int64_t bytes) { return bytes - bytes / 2; }

int64_t kp_ce_split_half_b(int64_t bytes) { return bytes / 2; }

int kp_ce_split_pair(int p, int step, int P)
{
    (void)P;
    return p ^ (1 << step);
}

int kp_ce_split_copair(int p, int step, int P)
{
    const int d = 1 << step;
    return (p & d) ? kp_mod(p + d, P) : kp_mod(p - d, P);
}

int kp_ce_split_a_first(int p, int step, int P)
{
    (void)P;
    return p & ~((1 << step) - 1);
}

int kp_ce_split_b_first_block(int p, int step, int P)
{
    return kp_mod(p - (~p & ((1 << step) - 1)), P);
}

int kp_ce_split_b_slot(int p, int block, int P) { return kp_mod(block - 2 * p - 1, P); }

int kp_ce_split_b_block(int p, int slot, int P) { return kp_mod(slot + 2 * p + 1, P); }

int kp_ce_split_b_first_slot(int p, int step, int P)
{
    return (P - 1 - p) & ~((1 << step) - 1);
}

/* copy the halves received in step i from scratch into the receive buffer */
static void unpack(kp_sched *s, int step, int64_t ha, int64_t hb)
{
    const int P = s->P, p = s->rank, d = 1 << step;
    const int64_t m = s->bytes, sb = (int64_t)P * ha;
    const int a0 = kp_ce_split_a_first(kp_ce_split_pair(p, step, P), step, P);
    const int b0 = kp_ce_split_b_first_slot(p, step, P) ^ d;
    for (int k = 0; k < d; k++) {
        int j = a0 + k;
        kp_sched_copy(s, KP_BUF_SCRATCH, (int64_t)j * ha, KP_BUF_RECV, (int64_t)j * m, ha);
        j = kp_ce_split_b_block(p, b0 + k, P);
        kp_sched_copy(s, KP_BUF_SCRATCH, sb + (int64_t)(b0 + k) * hb, KP_BUF_RECV,
                      (int64_t)j * m + ha, hb);
    }
}

int kp_allgather_concurrent_exchange_split_build(kp_sched *s, const kp_params *prm)
{
    const int P = s->P, p = s->rank;
    const int64_t m = s->bytes;
    const int C = prm ? prm->C : 0;

    if (!kp_ce_split_valid(P))
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "concurrent_exchange_split: P = %d ranks, needs P to be a power "
                               "of two",
                               P);
    if (!kp_ce_split_c_applies(P, C))
        return kp_sched_refuse(s, C < 1 ? KP_ERR_PARAM : KP_ERR_UNSUPPORTED,
                               "concurrent_exchange_split: concurrency index C = %d on P = %d ranks: only "
                               "C = 2 (one half to the pair, one to the co-pair) is defined for P > 2",
                               C, P);
    if (P == 1) {
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, 0, m);
        return kp_sched_finish(s);
    }

    const int64_t ha = kp_ce_split_half_a(m), hb = kp_ce_split_half_b(m);
    const int64_t sb = (int64_t)P * ha; /* scratch offset of the B slots */
    const int nsteps = kp_ce_split_nsteps(P);
    kp_sched_need_scratch(s, (int64_t)P * m);

    /* round 0: stage the own halves (step 0 sends them from the send buffer) */
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_SCRATCH, (int64_t)p * ha, ha);
    kp_sched_copy(s, KP_BUF_SEND, ha, KP_BUF_SCRATCH,
                  sb + (int64_t)kp_ce_split_b_slot(p, p, P) * hb, hb);
    for (int i = 0; i < nsteps; i++) {
        const int d = 1 << i;
        const int pair = kp_ce_split_pair(p, i, P), copair = kp_ce_split_copair(p, i, P);
        const int a_mine = kp_ce_split_a_first(p, i, P);
        const int a_theirs = kp_ce_split_a_first(pair, i, P);
        const int b_mine = kp_ce_split_b_first_slot(p, i, P);
        const int b_theirs = b_mine ^ d; /* the adjacent window, in p's slots */
        /* the A message before the B message on both sides: when pair and
         * co-pair coincide (last step) they match in posting order */
        if (i == 0) {
            kp_sched_send(s, pair, KP_BUF_SEND, 0, ha);
            kp_sched_send(s, copair, KP_BUF_SEND, ha, hb);
        } else {
            kp_sched_send(s, pair, KP_BUF_SCRATCH, (int64_t)a_mine * ha, (int64_t)d * ha);
            kp_sched_send(s, copair, KP_BUF_SCRATCH, sb + (int64_t)b_mine * hb, (int64_t)d * hb);
            unpack(s, i - 1, ha, hb);
        }
        if (i == 1)
            kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
        kp_sched_recv(s, pair, KP_BUF_SCRATCH, (int64_t)a_theirs * ha, (int64_t)d * ha);
        kp_sched_recv(s, copair, KP_BUF_SCRATCH, sb + (int64_t)b_theirs * hb, (int64_t)d * hb);
        kp_sched_next_round(s);
    }
    unpack(s, nsteps - 1, ha, hb);
    if (nsteps == 1)
        kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)p * m, m);
    return kp_sched_finish(s);
}
