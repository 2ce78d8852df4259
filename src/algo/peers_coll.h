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

/* ==== all-to-all (kp_a2a_*) ==================================================
 * Implemented in src/algo/alltoall/pairwise.c, direct.c and bruck.c; tested
 * by tests/unit/test_peers_alltoall.c.
 * Conventions: P >= 1 ranks, 0 <= p < P, k >= 1 ports (any size), rounds and
 * steps counted from 0, ports j (digit values d) = 1 .. k. A function that
 * names a peer returns -1 when there is none (idle port or step). Block j of
 * a rank's send buffer goes to rank j; block j of its receive buffer comes
 * from rank j. */

/* ---- shift pattern (Direct; pairwise when P is not a power of two) ---------
 * Round i, port j, distance d = i*k + j: p sends its block for p + d to
 * p + d and receives from p - d that rank's block for p (all mod P), for
 * every d <= P - 1. k = 1 is the classic pairwise exchange. */

/* number of rounds: ceil((P - 1) / k), 0 for P = 1 */
int kp_a2a_shift_nrounds(int P, int k);
/* distance i*k + j of port j in round i, 0 if that port is idle (>= P) */
int kp_a2a_shift_dist(int P, int k, int i, int j);
/* p sends block (p + d) mod P to this rank, -1: idle */
int kp_a2a_shift_send_peer(int p, int P, int k, int i, int j);
/* p receives block p of this rank (p - d mod P), -1: idle */
int kp_a2a_shift_recv_peer(int p, int P, int k, int i, int j);

/* ---- exchange pairing (pairwise; everything under MPI_IN_PLACE) -------------
 * A 1-factorisation of the complete graph on the P ranks: in step t each
 * rank has at most one partner, the relation is symmetric, and over all
 * steps every pair of distinct ranks meets exactly once, so each meeting is
 * a swap (p sends block q to q and receives q's block p from q).
 *  - P a power of two: P - 1 steps, partner p XOR (t + 1), never idle;
 *  - P odd: P steps, partner (t - p) mod P, idle when 2p = t (mod P): every
 *    rank is idle in exactly one step;
 *  - P even, not a power of two: P - 1 steps; ranks 0 .. P-2 pair as
 *    (t - p) mod (P - 1), and the one that would meet itself (2p = t mod
 *    P - 1) meets rank P - 1 instead (the circle method).
 * Each rank numbers its own meetings e = 0 .. P-2 in step order, skipping
 * its idle step. Builders run them k at a time (round i: e = i*k ..
 * i*k + k - 1); both sides of a meeting reach it in global step order, so
 * any such grouping is deadlock-free. */

/* number of steps t (see above); 0 for P = 1 */
int kp_a2a_swap_nsteps(int P);
/* partner of p in step t, -1 if p is idle (or t is not a step) */
int kp_a2a_swap_peer(int p, int P, int t);
/* the step of p's e-th meeting (e = 0 .. P-2), -1 otherwise */
int kp_a2a_swap_step(int p, int P, int e);
/* p's e-th partner: kp_a2a_swap_peer(p, P, kp_a2a_swap_step(p, P, e)) */
int kp_a2a_swap_partner(int p, int P, int e);
/* MPI_IN_PLACE staging: meeting e (in round e / k) receives into scratch
 * block kp_a2a_swap_slot(P, k, e), which is copied into place one round
 * later; slots alternate between two sets of k, so min(2k, P-1) blocks
 * (kp_a2a_swap_nslots) suffice and the meetings of two consecutive rounds
 * never share a slot. -1 if e is not a meeting. */
int kp_a2a_swap_slot(int P, int k, int e);
int kp_a2a_swap_nslots(int P, int k);

/* ---- Bruck index algorithm (radix k + 1) --------------------------------------
 * After a local rotation, scratch position i (0 <= i < P) of rank p holds
 * the block that travels distance i, from p - (distance already travelled)
 * to its destination. Step x (x = 0 .. nsteps-1), digit value d = 1 .. k:
 * the positions whose base-(k+1) digit x equals d are packed (in increasing
 * i) into group d of the step's pack area, sent to p + d*(k+1)^x and
 * replaced by the group received from p - d*(k+1)^x. A block thus moves
 * by exactly its index i and ends at position i of rank (source + i); a
 * port is idle when d*(k+1)^x >= P (no index has that digit). */

/* number of steps: ceil(log_{k+1} P), 0 for P = 1 */
int kp_a2a_bruck_nsteps(int P, int k);
/* digit x of i >= 0 in base k + 1 */
int kp_a2a_bruck_digit(int i, int k, int x);
/* distance d*(k+1)^x of digit value d in step x, 0 if idle (>= P) */
int kp_a2a_bruck_dist(int P, int k, int x, int d);
/* p sends group d of step x to this rank (p + dist mod P), -1: idle */
int kp_a2a_bruck_send_peer(int p, int P, int k, int x, int d);
/* p receives group d of step x from this rank (p - dist mod P), -1: idle */
int kp_a2a_bruck_recv_peer(int p, int P, int k, int x, int d);
/* blocks in group d of step x: indices i in [0, P) with digit x equal to d */
int kp_a2a_bruck_count(int P, int k, int x, int d);
/* first block of group d in step x's pack area: sum of the counts of
 * groups 1 .. d-1; d = k + 1 gives the blocks moved in step x */
int kp_a2a_bruck_group_off(int P, int k, int x, int d);
/* block of the pack area that holds index i in step x, -1 if digit x of i
 * is 0 (i does not move in step x) */
int kp_a2a_bruck_slot(int P, int k, int x, int i);
/* pack area size in blocks: the most blocks moved in any step */
int kp_a2a_bruck_max_packed(int P, int k);

/* ==== end of all-to-all ======================================================= */

#endif /* KP_ALGO_PEERS_COLL_H */
