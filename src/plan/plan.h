/*
 * Plans (src/plan): a schedule plus what running it needs (scratch, the
 * request array; the struct is in state/comm.h), cached per communicator;
 * building one brings up the resources its algorithm needs (the node tier,
 * the private duplicate, the one-sided transport's windows, the segment's
 * size) through the layers below. Below select and core; above exec and
 * topo.
 */
#ifndef KP_PLAN_H
#define KP_PLAN_H

#include "state/comm.h"

#define KP_PLAN_CACHE_MAX 16
/* Find or build the plan of (coll, algo, prm, bytes) for this communicator. */
int kp_plan_get(kp_comm *c, int coll, const kp_algo *a, const kp_params *prm, int64_t bytes, int root, int inplace,
                kp_plan **out);
void kp_plan_free(kp_plan *pl);
/* Reductions: reduce, allreduce, reduce_scatter_block, reduce_scatter. Their
 * plans are keyed also by c->red (element size, commutativity, block
 * offsets), which the caller sets before asking for a plan. */
int kp_coll_is_reduction(int coll);
/* Does plan pl (of c) have the reduction shape c->red asks for? */
int kp_plan_red_matches(const kp_comm *c, const kp_plan *pl);

/* Bring up what plans of algorithm a need on c: the node tier for shared-
 * memory algorithms, the private duplicate for algorithms that send MPI
 * messages. Collective: every rank of c calls it for the same a. */
int kp_plan_ready(kp_comm *c, const kp_algo *a);

/* The drop-in library's policy for cold communicators (src/pmpi/pmpi.c):
 * while a communicator other than MPI_COMM_WORLD has made at most n kport
 * calls (counting the calls on freed communicators of the same ranks whose
 * pooled resources it took: a loop of dup / call / free warms up after n
 * cycles), a call whose plan would first have to set up resources (the node
 * tier, the private duplicate) returns KP_COLD, and the drop-in serves it
 * with PMPI_. Decided identically on every rank (call counts, resource
 * state and the algorithm are). n = 0, the library's default, never does:
 * users of the C API always get kport. */
#define KP_COLD 100
void kp_set_cold_calls(long n);
/* the cold policy says: serve this call with MPI, set nothing up yet */
int kp_plan_cold(const kp_comm *c);

#endif
