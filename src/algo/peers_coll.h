/*
 * Peer arithmetic of the barrier, gather and all-to-all algorithms: small
 * pure functions with no schedule and no MPI, implemented next to the
 * builders that use them and tested exhaustively without communication.
 * Each collective's functions live in their own block below.
 */
#ifndef KP_ALGO_PEERS_COLL_H
#define KP_ALGO_PEERS_COLL_H

/* ==== barrier and gather (kp_diss_*, kp_nway_*, kp_binom_*) ================
 * Implemented in src/algo/barrier/dissemination.c,
 * src/algo/barrier/nway_dissemination.c and src/algo/gather/binomial.c;
 * tested by tests/unit/test_peers_barrier_gather.c.
 * Conventions: P >= 1 ranks, 0 <= p < P, rounds r counted from 0. A function
 * that names a peer returns -1 when there is none. */

/* ---- dissemination barrier ------------------------------------------------
 * Round r: p signals (p + 2^r) mod P and waits for (p - 2^r) mod P. */

/* number of rounds: ceil(log2 P), 0 for P = 1 */
int kp_diss_nrounds(int P);
/* the rank p signals in round r, -1 if r is not a round */
int kp_diss_send_peer(int p, int P, int r);
/* the rank p waits for in round r, -1 if r is not a round */
int kp_diss_recv_peer(int p, int P, int r);

/* ---- n-way dissemination barrier -------------------------------------------
 * Round r, peer i = 1..n: p signals (p + i*(n+1)^r) mod P and waits for
 * (p - i*(n+1)^r) mod P. Skip rule: peer i is used only while its distance
 * i*(n+1)^r is below P. Only the last round can hit the rule (earlier
 * distances are at most n*(n+1)^r < (n+1)^(r+1) <= (n+1)^(nrounds-1) < P).
 * The skipped signals are redundant: with D = (n+1)^r, after round r a rank
 * has heard from every rank at distance x + i*D behind it, 0 <= x < D, for
 * the unskipped i and i = 0, which already covers every distance 0 .. P-1;
 * a skipped distance would wrap around to p itself, to a rank another
 * peer signals in the same round, or to a distance already covered.
 * The rule depends only on (P, n, r, i), not on p: p skips signalling q
 * exactly when q skips waiting for p. The active peers of a round are
 * i = 1 .. kp_nway_npeers(P, n, r). n = 1 is the dissemination barrier. */

/* number of rounds: ceil(log_{n+1} P), 0 for P = 1 (n >= 1) */
int kp_nway_nrounds(int P, int n);
/* active peers in round r: min(n, floor((P-1) / (n+1)^r)); 0 if r is not a round */
int kp_nway_npeers(int P, int n, int r);
/* distance i*(n+1)^r of peer i in round r, 0 if that peer is skipped */
int kp_nway_dist(int P, int n, int r, int i);
/* the rank p signals as peer i in round r, -1 if skipped */
int kp_nway_send_peer(int p, int P, int n, int r, int i);
/* the rank p waits for as peer i in round r, -1 if skipped */
int kp_nway_recv_peer(int p, int P, int n, int r, int i);

/* ---- binomial tree (gather) ------------------------------------------------
 * On relative ranks rel = (p - root) mod P: the parent of rel > 0 is rel with
 * its lowest set bit cleared; the children of rel are rel + 2^j for every
 * j below rel's lowest set bit (every j for rel = 0) with rel + 2^j < P. The
 * subtree of rel is the contiguous range [rel, rel + kp_binom_subtree(rel, P)).
 * Child rel + 2^j sends its whole subtree to rel in step j. */

/* relative rank of p for root, and back */
int kp_binom_rel(int p, int root, int P);
int kp_binom_abs(int rel, int root, int P);
/* number of steps: ceil(log2 P), 0 for P = 1 */
int kp_binom_nsteps(int P);
/* parent of rel, -1 for rel = 0 */
int kp_binom_parent(int rel, int P);
/* step in which rel sends to its parent (index of its lowest set bit);
 * -1 for rel = 0 */
int kp_binom_send_step(int rel);
/* the child of rel that sends to it in step j, -1 if none */
int kp_binom_child(int rel, int P, int j);
/* blocks in the subtree of rel: min(lowest set bit of rel, P - rel); P for rel = 0 */
int kp_binom_subtree(int rel, int P);
/* the relative range [lo, lo + cnt) lands at absolute blocks (root + lo) mod P
 * ...; it wraps past block P-1 at most once: the number of its blocks before
 * the wrap (cnt when it does not wrap) */
int kp_binom_first_piece(int lo, int cnt, int root, int P);

/* ==== end of barrier and gather ============================================ */

#endif /* KP_ALGO_PEERS_COLL_H */
