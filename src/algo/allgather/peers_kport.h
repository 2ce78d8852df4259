/*
 * Peer and offset arithmetic of the k-port all-gathers: Direct (direct.c),
 * Standard Exchange (standard_exchange.c) and Bruck (bruck.c). Small pure
 * functions with no schedule and no MPI, so that tests/unit/test_peers_kport.c
 * can check them exhaustively over every P, k, rank, step and port.
 *
 * Conventions: P >= 1 ranks, k >= 1 ports (any size: a k >= P - 1 simply
 * finishes in one step), ranks 0 <= p < P, steps counted from 0, ports
 * j = 1 .. k. A function that names a peer returns -1 when the port is idle
 * in that step. Receiving from a peer and sending to it in the same step and
 * port always pair up: if p sends to q in step i on port j, then q receives
 * from p in step i on port j, with the same block count.
 */
#ifndef KP_ALLGATHER_PEERS_KPORT_H
#define KP_ALLGATHER_PEERS_KPORT_H

/* ---- Direct ------------------------------------------------------------
 * Step i, port j: p sends its own block to p + d and receives block p - d
 * (from rank p - d), d = i*k + j, for every d <= P - 1. */

/* number of steps: ceil((P - 1) / k), 0 for P = 1 */
int kp_direct_nsteps(int P, int k);
/* distance i*k + j of port j in step i, or 0 if that port is idle (>= P) */
int kp_direct_dist(int P, int k, int i, int j);
/* rank p sends its own block to this rank (p + d mod P), -1: idle */
int kp_direct_send_peer(int p, int P, int k, int i, int j);
/* rank p receives that rank's own block from it (p - d mod P), -1: idle */
int kp_direct_recv_peer(int p, int P, int k, int i, int j);

/* ---- Standard Exchange ---------------------------------------------------
 * The P ranks are cut into R contiguous segments, segment q being ranks
 * [kp_se_seg_start(P, R, q), kp_se_seg_start(P, R, q + 1)); the first rank
 * of a segment is its leader, the other (at most one) are folded into it.
 * With n = floor(log_{k+1} P), Q = (k+1)^n and c = floor(P / Q) (1 <= c <= k):
 * R = c * Q leaders exchange in n steps of radix k + 1, then, if c >= 2, one
 * step of radix c. Leaders are named by their segment index q in 0 .. R-1. */

/* number of leaders R = c * (k+1)^n */
int kp_se_nleaders(int P, int k);
/* first rank of segment q (q = 0 .. R; q = R gives P): floor(q * P / R) */
int kp_se_seg_start(int P, int R, int q);
/* segment that holds rank p */
int kp_se_seg_of(int P, int R, int p);
/* number of exchange steps among the leaders: n + (c >= 2) */
int kp_se_nsteps(int P, int k);
/* radix of step i: k + 1 for i < n, c for the last step when c >= 2 */
int kp_se_radix(int P, int k, int i);
/* leaders whose blocks a leader holds before step i (= distance unit of
 * step i): the product of the radices of steps 0 .. i-1; i = nsteps gives R */
int kp_se_span(int P, int k, int i);
/* leader q sends everything it holds to this leader in step i, port j
 * (j = 1 .. radix-1; -1 otherwise): distance j*span, cyclic inside q's
 * group of radix*span leaders */
int kp_se_send_peer(int P, int k, int q, int i, int j);
/* ... and receives everything this leader holds (distance -j*span) */
int kp_se_recv_peer(int P, int k, int q, int i, int j);
/* blocks [*lo, *hi) that leader q holds before step i (one contiguous range;
 * i = nsteps gives [0, P)) */
void kp_se_held(int P, int k, int q, int i, int *lo, int *hi);

/* ---- Bruck ----------------------------------------------------------------
 * Rank p keeps blocks p, p+1, ... (mod P) in this order at the start of its
 * scratch. Step i: with h = kp_bruck_held(P, k, i) blocks held, port j sends
 * the first kp_bruck_count(P, k, i, j) of them to p - j*h and receives as many
 * from p + j*h, stored at scratch block j*h. */

/* number of steps: ceil(log_{k+1} P), 0 for P = 1 */
int kp_bruck_nsteps(int P, int k);
/* blocks held before step i: min((k+1)^i, P) */
int kp_bruck_held(int P, int k, int i);
/* blocks moved on port j in step i: min(h, P - j*h), 0 if the port is idle */
int kp_bruck_count(int P, int k, int i, int j);
/* rank p sends to p - j*h mod P in step i, port j; -1: idle */
int kp_bruck_send_peer(int p, int P, int k, int i, int j);
/* rank p receives from p + j*h mod P in step i, port j; -1: idle */
int kp_bruck_recv_peer(int p, int P, int k, int i, int j);

#endif /* KP_ALLGATHER_PEERS_KPORT_H */
