/*
 * The broadcast builders' arithmetic (src/algo/bcast/peers_bcast.h and the
 * piece helpers of bcast_common.h), checked exhaustively without any
 * schedule: every P 1..300, every k 1..9, every relative rank.
 *  - k-nomial tree: the parent lies below the rank and names it as a child;
 *    the children's subtrees tile the rank's subtree (minus itself) in
 *    order, highest level first; a child's level is its j; the root's
 *    subtree is everything; the depth is ceil(log_{k+1} P); k = 1 is the
 *    gather's binomial tree (kp_binom_*).
 *  - pieces: offsets from 0 to bytes, non-decreasing, lengths differing by
 *    at most one byte.
 *  - kp_bcast_pieces_known against a brute-force membership count.
 */
#include "algo/bcast/bcast_common.h"
#include "algo/peers_coll.h"
#include "check.h"

static int ceil_log(int P, int b)
{
    int s = 0;
    for (long long x = 1; x < P; x *= b)
        s++;
    return s;
}

static void tree(int P, int k)
{
    CHECK(kp_knom_nlevels(P, k) == ceil_log(P, k + 1), "P=%d k=%d: %d levels", P, k, kp_knom_nlevels(P, k));
    CHECK(kp_knom_subtree(0, P, k) == P && kp_knom_parent(0, P, k) == -1, "P=%d k=%d: root", P, k);
    for (int rel = 0; rel < P; rel++) {
        const int par = kp_knom_parent(rel, P, k), sub = kp_knom_subtree(rel, P, k);
        if (rel > 0) {
            int found = 0;
            for (int j = 0; j < kp_knom_level(par, P, k); j++)
                for (int d = 1; d <= k; d++)
                    found += kp_knom_child(par, P, k, j, d) == rel;
            CHECK(par >= 0 && par < rel && found == 1, "P=%d k=%d rel=%d: parent %d names it %d times", P, k, rel,
                  par, found);
        }
        /* children, highest level first, tile [rel + 1, rel + sub) from the top down */
        int hi = rel + sub;
        for (int j = kp_knom_level(rel, P, k) - 1; j >= 0; j--)
            for (int d = k; d >= 1; d--) {
                const int c = kp_knom_child(rel, P, k, j, d);
                if (c < 0)
                    continue;
                CHECK(kp_knom_level(c, P, k) == j && c + kp_knom_subtree(c, P, k) == hi,
                      "P=%d k=%d rel=%d: child %d (level %d, subtree %d) does not end at %d", P, k, rel, c,
                      kp_knom_level(c, P, k), kp_knom_subtree(c, P, k), hi);
                hi = c;
            }
        CHECK(hi == rel + 1, "P=%d k=%d rel=%d: the children's subtrees leave [%d, %d) uncovered", P, k, rel, rel + 1,
              hi);
        if (k == 1)
            CHECK(par == kp_binom_parent(rel, P) && sub == kp_binom_subtree(rel, P),
                  "P=%d rel=%d: k = 1 is not the binomial tree", P, rel);
    }
    CHECK(kp_knom_child(0, P, k, 0, k + 1) == -1 && kp_knom_child(P, P, k, 0, 1) == -1, "P=%d k=%d: range", P, k);
}

static void pieces(int P)
{
    static const int64_t sizes[] = {0, 1, 7, 8, 1000, 65539, 1000003};
    for (int b = 0; b < 7; b++) {
        const int64_t m = sizes[b], lo = m / P;
        CHECK(kp_piece_off(m, P, 0) == 0 && kp_piece_off(m, P, P) == m, "P=%d m=%lld: ends", P, (long long)m);
        for (int i = 0; i < P; i++) {
            const int64_t len = kp_piece_off(m, P, i + 1) - kp_piece_off(m, P, i);
            CHECK(len == lo || len == lo + 1, "P=%d m=%lld: piece %d is %lld bytes", P, (long long)m, i,
                  (long long)len);
        }
    }
    for (int q = 0; q < P; q++) {
        const int held = kp_knom_subtree(q, P, 1);
        for (int a = 0; a < P; a++)
            for (int cnt = 0; cnt <= P - kp_mod((int64_t)a - q, P); cnt++) {
                int brute = 0, prefix = 0; /* pieces q holds; how many of them lead the range */
                for (int x = 0; x < cnt; x++) {
                    const int in = kp_mod((int64_t)a + x - q, P) < held;
                    prefix += in && prefix == x;
                    brute += in;
                }
                const int got = kp_bcast_pieces_known(q, P, a, cnt);
                CHECK(got == brute && got == prefix, "P=%d q=%d a=%d cnt=%d: known %d, brute force %d (prefix %d)", P,
                      q, a, cnt, got, brute, prefix);
            }
    }
}

int main(void)
{
    for (int P = 1; P <= 300; P++) {
        for (int k = 1; k <= 9; k++)
            tree(P, k);
        if (P <= 40)
            pieces(P);
    }
    printf("%ld checks, %ld failed\n", checks, fails);
    return fails != 0;
}
