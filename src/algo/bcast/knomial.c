/*
 * k-nomial tree broadcast (radix k + 1, any P, any root).
 *
 * Ranks are renumbered relative to the root, rel = (p - root) mod P. The
 * parent of rel > 0 is rel with its lowest non-zero base-(k+1) digit
 * cleared; the children of rel are rel + d (k+1)^j, d = 1 .. k, for every
 * level j below rel's own (every j for the root) with rel + d (k+1)^j < P.
 * A rank receives the whole message from its parent into its receive
 * buffer, then sends it on level by level, the highest level (the largest
 * subtrees) first, the k children of one level at once (k ports): the
 * message reaches every rank after at most ceil(log_{k+1} P) levels. The
 * root sends straight from its receive buffer, which holds the data; no
 * scratch anywhere. k = 1 is the binomial tree (binomial.c shares this
 * code).
 *
 * Paper: the k-nomial tree of J. Bruck, L. De Coster, N. Dewulf, C.-T. Ho
 * and R. Lauwereins, "On the design and implementation of broadcast and
 * global combine operations using the postal model", IEEE TPDS 7(3), 1996;
 * k-port trees in Y. Qian and A. Afsahi's multi-port collectives (ICPP
 * 2007); MPICH's MPIR_Bcast_intra_tree with tree_type knomial.
 *
 * Cost (Hockney, k-port; m = bytes): with L = ceil(log_{k+1} P) levels,
 *   T = L * (ts + m tau)           (k ports: a level's k sends at once)
 *   T = L * (ts + k m tau)         (one port: a level's sends one after another)
 * so k = 1 is best for large m on one port, larger k for small m.
 * Memory: none. Restrictions: none (any P >= 1, any root, any k >= 1;
 * k >= P - 1 sends to every rank from the root in one level).
 * Parameters: k (children per level, >= 1; default 2).
 *
 * Example, P = 10, k = 2 (radix 3, 3 levels), root 0:
 *   level 2  0 -> 9
 *   level 1  0 -> 3, 6                 (9 has no children: 9 + 3 >= 10)
 *   level 0  0 -> 1, 2;  3 -> 4, 5;  6 -> 7, 8
 * Rank 3 receives in its round 0 and sends in its round 1; with root 4 every
 * rank above is shifted by 4 (mod 10).
 *
 * Tree arithmetic: kp_knom_* here, declared in peers_bcast.h and tested by
 * tests/unit/test_peers_bcast.c.
 */
#include "algo/algo.h"
#include "algo/bcast/bcast_common.h"
#include "kport.h"

int kp_knom_nlevels(int P, int k)
{
    int j = 0;
    for (int64_t d = 1; d < P; d *= (int64_t)k + 1)
        j++;
    return j;
}

int kp_knom_level(int rel, int P, int k)
{
    if (rel <= 0)
        return kp_knom_nlevels(P, k);
    int j = 0;
    while (rel % (k + 1) == 0) {
        rel /= k + 1;
        j++;
    }
    return j;
}

int kp_knom_parent(int rel, int P, int k)
{
    if (rel <= 0 || rel >= P)
        return -1;
    const int64_t r = kp_ipow((int64_t)k + 1, kp_knom_level(rel, P, k));
    return (int)(rel - (rel / r) % ((int64_t)k + 1) * r);
}

int kp_knom_child(int rel, int P, int k, int j, int d)
{
    if (rel < 0 || rel >= P || d < 1 || d > k || j < 0 || j >= kp_knom_level(rel, P, k))
        return -1;
    const int64_t c = rel + (int64_t)d * kp_ipow((int64_t)k + 1, j);
    return c < P ? (int)c : -1;
}

int kp_knom_subtree(int rel, int P, int k)
{
    if (rel < 0 || rel >= P)
        return 0;
    if (rel == 0)
        return P;
    const int64_t r = kp_ipow((int64_t)k + 1, kp_knom_level(rel, P, k));
    return r < P - rel ? (int)r : P - rel;
}

int kp_bcast_knomial_tree(kp_sched *s, int k, const char *name)
{
    const int P = s->P, root = s->root;
    if (k < 1)
        return kp_sched_refuse(s, KP_ERR_PARAM, "bcast %s: k = %d; k must be >= 1", name, k);
    if (root < 0 || root >= P)
        return kp_sched_refuse(s, KP_ERR_ARG, "bcast %s: root %d is not a rank of 0..%d", name, root, P - 1);
    const int rel = kp_mod((int64_t)s->rank - root, P);
    if (rel > 0) {
        kp_sched_recv(s, kp_mod((int64_t)kp_knom_parent(rel, P, k) + root, P), KP_BUF_RECV, 0, s->bytes);
        kp_sched_next_round(s);
    }
    for (int j = kp_knom_level(rel, P, k) - 1; j >= 0; j--) {
        for (int d = 1, c; d <= k && (c = kp_knom_child(rel, P, k, j, d)) >= 0; d++)
            kp_sched_send(s, kp_mod((int64_t)c + root, P), KP_BUF_RECV, 0, s->bytes);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}

int kp_bcast_knomial_build(kp_sched *s, const kp_params *prm)
{
    return kp_bcast_knomial_tree(s, prm->k, "knomial");
}
