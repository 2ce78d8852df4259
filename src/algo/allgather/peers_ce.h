/*
 * Peer and offset arithmetic of the concurrent-exchange all-gathers
 * (Mamidala et al., paper 004, section 3), kept pure so that
 * tests/unit/test_peers_ce.c can check it for every rank without MPI.
 *
 * Baseline (concurrent_exchange.c; defined there): P ranks in C contiguous
 * groups of G = P / C. Rank p is in group p / G with local index l = p % G.
 *
 * Split variant (concurrent_exchange_split.c; defined there): P a power of
 * two; step i exchanges half A with the pair p XOR 2^i and half B with the
 * co-pair, the rank 2^i away in the other direction (mod P).
 *
 * "step" is 0-based everywhere; d = 2^step is the distance of that step.
 */
#ifndef KP_PEERS_CE_H
#define KP_PEERS_CE_H

#include <stdint.h>

/* ---- baseline ---------------------------------------------------------- */

/* 1 if the baseline applies: C >= 1, P >= 1, C divides P and P / C is a
 * power of two (P = 1 only with C = 1). */
int kp_ce_valid(int P, int C);
/* ranks per group, G = P / C */
int kp_ce_group_size(int P, int C);
/* group of rank p, p / G */
int kp_ce_group(int p, int P, int C);
/* local index of rank p in its group, p % G */
int kp_ce_local(int p, int P, int C);
/* peer of rank p in group h: h * G + local(p) (p itself when h is p's group) */
int kp_ce_peer(int p, int h, int P, int C);
/* number of in-group exchange steps, log2(P / C) */
int kp_ce_nsteps(int P, int C);
/* pair of rank p in the step: the group-mate with local index l XOR 2^step */
int kp_ce_pair(int p, int step, int P, int C);
/* peer-of-pair of rank p in group h: h * G + (l XOR 2^step); for h equal to
 * p's group this is the pair */
int kp_ce_peer_of_pair(int p, int h, int step, int P, int C);
/* before the step, p holds of every group h the 2^step blocks
 * h * G + first .. h * G + first + 2^step - 1; returns first = l & ~(2^step - 1) */
int kp_ce_held_first(int p, int step, int P, int C);

/* ---- split variant (concurrency index 2) --------------------------------- */

/* 1 if the split variant applies: P >= 1 a power of two */
int kp_ce_split_valid(int P);
/* 1 if concurrency index C applies to the split variant on P ranks: C = 2;
 * with P <= 2 also any C <= P (a rank has at most one peer, which is both
 * pair and co-pair, so the schedule is the same whatever C says). */
int kp_ce_split_c_applies(int P, int C);
/* number of steps, log2(P) */
int kp_ce_split_nsteps(int P);
/* bytes of half A (the first ceil(bytes/2) bytes of a block); half B is the
 * remaining floor(bytes/2) bytes, starting at offset kp_ce_split_half_a */
int64_t kp_ce_split_half_a(int64_t bytes);
int64_t kp_ce_split_half_b(int64_t bytes);
/* pair p XOR 2^step (half A goes there) */
int kp_ce_split_pair(int p, int step, int P);
/* co-pair (half B goes there): the pair is p + d if bit `step` of p is 0,
 * else p - d; the co-pair is d away in the opposite direction, mod P:
 * p - d if bit `step` of p is 0, else p + d. */
int kp_ce_split_copair(int p, int step, int P);
/* A halves p holds before the step: blocks first .. first + 2^step - 1 with
 * first = p & ~(2^step - 1) (recursive doubling) */
int kp_ce_split_a_first(int p, int step, int P);
/* B halves p holds before the step: the 2^step consecutive blocks (mod P)
 * starting at block p - (~p mod 2^step), mod P */
int kp_ce_split_b_first_block(int p, int step, int P);
/* rank p stages B halves in scratch slot (j - 2p - 1) mod P for block j, so
 * that everything it holds is contiguous; slot <-> block */
int kp_ce_split_b_slot(int p, int block, int P);
int kp_ce_split_b_block(int p, int slot, int P);
/* first slot of the B halves p holds before the step:
 * (P - 1 - p) & ~(2^step - 1); they fill slots first .. first + 2^step - 1 */
int kp_ce_split_b_first_slot(int p, int step, int P);

#endif /* KP_PEERS_CE_H */
