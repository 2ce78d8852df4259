/*
 * Peer and offset arithmetic of the broadcast builders (and the k-nomial
 * tree of the SMP broadcast's leaders): small pure functions with no
 * schedule and no MPI, implemented in src/algo/bcast/knomial.c and
 * src/algo/bcast/scatter_allgather.c, tested exhaustively by
 * tests/unit/test_peers_bcast.c.
 *
 * Conventions: P >= 1 ranks (or nodes), k >= 1 children per level (radix
 * r = k + 1), relative ranks rel = (p - root) mod P, 0 <= rel < P. A function
 * that names a peer returns -1 when there is none.
 */
#ifndef KP_ALGO_BCAST_PEERS_H
#define KP_ALGO_BCAST_PEERS_H

#include <stdint.h>

/* ---- k-nomial tree ---------------------------------------------------------
 * The parent of rel > 0 is rel with its lowest non-zero base-r digit
 * cleared; that digit's position is rel's level. The children of rel are
 * rel + d * r^j for d = 1 .. k and every j below rel's level (every j below
 * kp_knom_nlevels for the root) with rel + d * r^j < P. The subtree of rel is
 * the contiguous relative range [rel, rel + kp_knom_subtree(rel, P, k)). A
 * broadcast sends level by level, the highest (largest subtrees) first, the
 * k children of one level at once. k = 1 is the binomial tree. */

/* number of levels: ceil(log_{k+1} P), 0 for P = 1 */
int kp_knom_nlevels(int P, int k);
/* the level at which rel receives (lowest non-zero digit position); for the
 * root (rel = 0) kp_knom_nlevels(P, k) */
int kp_knom_level(int rel, int P, int k);
/* parent of rel, -1 for rel = 0 */
int kp_knom_parent(int rel, int P, int k);
/* the child rel + d * (k+1)^j of rel, -1 if j is not below rel's level or
 * the child is >= P (or d is not in 1..k) */
int kp_knom_child(int rel, int P, int k, int j, int d);
/* ranks in the subtree of rel: P for rel = 0, else min((k+1)^level, P - rel) */
int kp_knom_subtree(int rel, int P, int k);

/* ---- pieces of a vector (scatter + all-gather broadcasts) -------------------
 * bytes split into P pieces, piece i at offset floor(i * bytes / P) (the
 * lengths differ by at most one byte; with bytes < P some are empty). */
int64_t kp_piece_off(int64_t bytes, int P, int i);

#endif /* KP_ALGO_BCAST_PEERS_H */
