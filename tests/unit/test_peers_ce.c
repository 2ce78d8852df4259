/*
 * Exhaustive test of the concurrent-exchange peer arithmetic (peers_ce.h),
 * no MPI: for every P in 1..64 and every valid concurrency index C (powers
 * of two dividing P with P/C a power of two), every rank and every step,
 * run the exchange on sets of blocks and check that
 *  - the pair relation is symmetric and stays inside the group, the peers
 *    in the other groups are the right ranks, and the peer-of-pair of my
 *    peer-of-pair is me (sends and receives match);
 *  - what a rank sends it holds, and what the helpers say it holds is what
 *    it holds;
 *  - every block reaches every rank exactly once; steps = log2(P/C).
 * For the split variant (P a power of two <= 1024): pair and co-pair are
 * symmetric, at distance 2^i in opposite directions, every A and every B
 * half reaches every rank exactly once, and the B staging slots keep what a
 * rank holds contiguous, with a sent window landing on the right slots.
 * Prints every failure and "N passed, M failed"; exits 1 on any failure.
 */
#include "algo/allgather/peers_ce.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

static int log2i(int x)
{
    int e = 0;
    while (x > 1) {
        x >>= 1;
        e++;
    }
    return e;
}

static int mod(int a, int m) { return ((a % m) + m) % m; }

/* held[r * P + j]: how many times rank r has received block j (own = 1) */
static void test_baseline(int P, int C)
{
    const int G = P / C, nsteps = log2i(G);
    unsigned char *held = calloc((size_t)P * P, 1);
    unsigned char *next = calloc((size_t)P * P, 1);

    CHECK(kp_ce_valid(P, C), "P=%d C=%d should be valid", P, C);
    CHECK(kp_ce_group_size(P, C) == G, "P=%d C=%d group size %d", P, C, kp_ce_group_size(P, C));
    CHECK(kp_ce_nsteps(P, C) == nsteps, "P=%d C=%d nsteps %d, want %d", P, C, kp_ce_nsteps(P, C),
          nsteps);

    for (int p = 0; p < P; p++) {
        int g = kp_ce_group(p, P, C), l = kp_ce_local(p, P, C);
        CHECK(g == p / G && l == p % G && g * G + l == p, "P=%d C=%d p=%d: group %d local %d", P, C,
              p, g, l);
        for (int h = 0; h < C; h++) {
            int q = kp_ce_peer(p, h, P, C);
            CHECK(q >= 0 && q < P && kp_ce_group(q, P, C) == h && kp_ce_local(q, P, C) == l,
                  "P=%d C=%d p=%d: peer in group %d is %d", P, C, p, h, q);
            CHECK(kp_ce_peer(q, g, P, C) == p, "P=%d C=%d p=%d h=%d: peer not symmetric", P, C, p, h);
        }
        held[p * P + p] = 1;
    }
    /* pre-step: each rank sends its block to its peer in every other group */
    if (C > 1) {
        memcpy(next, held, (size_t)P * P);
        for (int p = 0; p < P; p++)
            for (int h = 0; h < C; h++)
                if (h != kp_ce_group(p, P, C))
                    next[kp_ce_peer(p, h, P, C) * P + p]++;
        memcpy(held, next, (size_t)P * P);
    }
    for (int i = 0; i < nsteps; i++) {
        const int d = 1 << i;
        memcpy(next, held, (size_t)P * P);
        for (int p = 0; p < P; p++) {
            int g = kp_ce_group(p, P, C), l = kp_ce_local(p, P, C);
            int first = kp_ce_held_first(p, i, P, C);
            CHECK(first == (l & ~(d - 1)), "P=%d C=%d p=%d step %d: held first %d", P, C, p, i, first);
            /* what the helpers say p holds is exactly what it holds */
            for (int j = 0; j < P; j++) {
                int lj = j % G;
                int want = lj >= first && lj < first + d;
                CHECK(held[p * P + j] == want, "P=%d C=%d p=%d step %d: holds block %d %d times, want %d",
                      P, C, p, i, j, held[p * P + j], want);
            }
            int pair = kp_ce_pair(p, i, P, C);
            CHECK(pair != p && kp_ce_group(pair, P, C) == g && kp_ce_pair(pair, i, P, C) == p &&
                      kp_ce_local(pair, P, C) == (l ^ d),
                  "P=%d C=%d p=%d step %d: pair %d", P, C, p, i, pair);
            for (int h = 0; h < C; h++) {
                int q = kp_ce_peer_of_pair(p, h, i, P, C);
                CHECK(q >= 0 && q < P && kp_ce_group(q, P, C) == h && kp_ce_local(q, P, C) == (l ^ d),
                      "P=%d C=%d p=%d step %d: peer-of-pair in group %d is %d", P, C, p, i, h, q);
                CHECK(kp_ce_peer_of_pair(q, g, i, P, C) == p,
                      "P=%d C=%d p=%d step %d: peer-of-pair %d does not receive from p", P, C, p, i, q);
                if (h == g)
                    CHECK(q == pair, "P=%d C=%d p=%d step %d: own group's peer-of-pair %d != pair %d",
                          P, C, p, i, q, pair);
                /* p sends its own group's range to q */
                for (int k = 0; k < d; k++) {
                    int blk = g * G + first + k;
                    CHECK(held[p * P + blk] == 1, "P=%d C=%d p=%d step %d sends block %d it lacks", P,
                          C, p, i, blk);
                    next[q * P + blk]++;
                }
            }
        }
        memcpy(held, next, (size_t)P * P);
    }
    for (int p = 0; p < P; p++)
        for (int j = 0; j < P; j++)
            CHECK(held[p * P + j] == 1, "P=%d C=%d: rank %d got block %d %d times", P, C, p, j,
                  held[p * P + j]);
    free(held);
    free(next);
}

static void test_split(int P)
{
    const int nsteps = log2i(P);
    unsigned char *ha = calloc((size_t)P * P, 1), *hb = calloc((size_t)P * P, 1);
    unsigned char *na = calloc((size_t)P * P, 1), *nb = calloc((size_t)P * P, 1);

    CHECK(kp_ce_split_valid(P), "split P=%d should be valid", P);
    CHECK(kp_ce_split_nsteps(P) == nsteps, "split P=%d nsteps %d", P, kp_ce_split_nsteps(P));
    for (int p = 0; p < P; p++) {
        ha[p * P + p] = hb[p * P + p] = 1;
        for (int j = 0; j < P; j++) {
            int sl = kp_ce_split_b_slot(p, j, P);
            CHECK(sl >= 0 && sl < P && kp_ce_split_b_block(p, sl, P) == j,
                  "split P=%d p=%d: slot of block %d is %d", P, p, j, sl);
        }
    }
    for (int i = 0; i < nsteps; i++) {
        const int d = 1 << i;
        memcpy(na, ha, (size_t)P * P);
        memcpy(nb, hb, (size_t)P * P);
        for (int p = 0; p < P; p++) {
            int pair = kp_ce_split_pair(p, i, P), cp = kp_ce_split_copair(p, i, P);
            CHECK(pair >= 0 && pair < P && kp_ce_split_pair(pair, i, P) == p && pair != p,
                  "split P=%d p=%d step %d: pair %d", P, p, i, pair);
            CHECK(cp >= 0 && cp < P && kp_ce_split_copair(cp, i, P) == p,
                  "split P=%d p=%d step %d: co-pair %d not symmetric", P, p, i, cp);
            /* same distance, opposite direction */
            int dir = mod(pair - p, P) == d ? 1 : -1;
            CHECK(mod(pair - p, P) == mod(dir * d, P) && mod(cp - p, P) == mod(-dir * d, P),
                  "split P=%d p=%d step %d: pair %d co-pair %d not at +-%d", P, p, i, pair, cp, d);
            /* A halves: aligned range */
            int a0 = kp_ce_split_a_first(p, i, P);
            for (int j = 0; j < P; j++) {
                int want = j >= a0 && j < a0 + d;
                CHECK(ha[p * P + j] == want, "split P=%d p=%d step %d: holds A%d %d times, want %d", P,
                      p, i, j, ha[p * P + j], want);
            }
            for (int k = 0; k < d; k++)
                na[pair * P + a0 + k]++;
            /* B halves: cyclic window, contiguous in slots */
            int b0 = kp_ce_split_b_first_block(p, i, P), s0 = kp_ce_split_b_first_slot(p, i, P);
            CHECK(s0 >= 0 && s0 + d <= P && kp_ce_split_b_block(p, s0, P) == b0,
                  "split P=%d p=%d step %d: first B slot %d (block %d)", P, p, i, s0, b0);
            for (int j = 0; j < P; j++) {
                int want = mod(j - b0, P) < d;
                CHECK(hb[p * P + j] == want, "split P=%d p=%d step %d: holds B%d %d times, want %d", P,
                      p, i, j, hb[p * P + j], want);
            }
            /* the co-pair receives slots s0.. into its slots (its first) ^ d */
            int r0 = kp_ce_split_b_first_slot(cp, i, P) ^ d;
            for (int k = 0; k < d; k++) {
                int blk = kp_ce_split_b_block(p, s0 + k, P);
                CHECK(kp_ce_split_b_block(cp, r0 + k, P) == blk,
                      "split P=%d p=%d step %d: B%d lands in co-pair %d's slot %d (block %d)", P, p, i,
                      blk, cp, r0 + k, kp_ce_split_b_block(cp, r0 + k, P));
                nb[cp * P + blk]++;
            }
        }
        memcpy(ha, na, (size_t)P * P);
        memcpy(hb, nb, (size_t)P * P);
    }
    for (int p = 0; p < P; p++)
        for (int j = 0; j < P; j++) {
            CHECK(ha[p * P + j] == 1, "split P=%d: rank %d got A%d %d times", P, p, j, ha[p * P + j]);
            CHECK(hb[p * P + j] == 1, "split P=%d: rank %d got B%d %d times", P, p, j, hb[p * P + j]);
        }
    free(ha);
    free(hb);
    free(na);
    free(nb);
}

int main(void)
{
    for (int P = 1; P <= 64; P++) {
        for (int C = 1; C <= 128; C *= 2) {
            int valid = P % C == 0 && is_pow2(P / C);
            CHECK(kp_ce_valid(P, C) == valid, "P=%d C=%d: valid says %d, want %d", P, C,
                  kp_ce_valid(P, C), valid);
            if (valid)
                test_baseline(P, C);
        }
        /* C that is not a power of two but still valid, e.g. P = 24, C = 3 */
        for (int C = 3; C <= P; C += 2)
            if (P % C == 0 && is_pow2(P / C))
                test_baseline(P, C);
        CHECK(kp_ce_valid(P, 0) == 0 && kp_ce_valid(P, -1) == 0, "P=%d: C <= 0 accepted", P);
        CHECK(kp_ce_split_valid(P) == is_pow2(P), "split P=%d: valid says %d", P, kp_ce_split_valid(P));
    }
    for (int P = 1; P <= 1024; P *= 2)
        test_split(P);
    for (int64_t m = 0; m <= 9; m++)
        CHECK(kp_ce_split_half_a(m) + kp_ce_split_half_b(m) == m &&
                  kp_ce_split_half_a(m) >= kp_ce_split_half_b(m) &&
                  kp_ce_split_half_a(m) - kp_ce_split_half_b(m) <= 1,
              "split halves of %lld bytes: %lld + %lld", (long long)m,
              (long long)kp_ce_split_half_a(m), (long long)kp_ce_split_half_b(m));
    printf("%ld passed, %ld failed\n", checks - fails, fails);
    return fails ? 1 : 0;
}
