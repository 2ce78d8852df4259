/*
 * Where ranks are, and what a node shares (src/topo): node layouts (real
 * and emulated nodes), kport's private duplicate, the node tier (node
 * communicator, shared segment, cross-memory attach probe) and the node's
 * measured costs (calibration). Below exec, plan, select and core.
 */
#ifndef KP_TOPO_H
#define KP_TOPO_H

#include "state/comm.h"

/* ---- layouts, the private duplicate and the node tier (topo.c) ---- */
/* Node layout (c->layout, local, node_size, oversub) from
 * MPI_COMM_TYPE_SHARED and the emulation variables KPORT_NODE_SIZE,
 * KPORT_NODE_MAP (block | cyclic | explicit list of node ids, one per rank
 * of MPI_COMM_WORLD): derived from the world's layout when it is known and
 * reuse is allowed (no communication), else by communication on c->user.
 * Collective. */
int kp_topo_layout(kp_comm *c, int derive);
/* The node tier: node communicator, shared segment, cross-memory attach
 * probe agreed by every rank (sets layout.cma, node_ready). Collective. */
int kp_topo_node(kp_comm *c);
/* Release the node tier and the private duplicate (collective frees). */
void kp_topo_release(kp_comm *c);
/* Forget the world's node keys (kp_release_caches, MPI_Finalize). */
void kp_topo_forget_world(void);
/* Make c's private duplicate if it has none (collective over c). Its
 * error handler is MPI_ERRORS_RETURN, as on every communicator and window
 * kport makes for itself: a refusal comes back as an error kport handles,
 * the user's own handlers are never changed. */
int kp_topo_private(kp_comm *c);
/* ---- the segment (segment.c) ---- */
/* Make the segment's halves at least `half` bytes (collective on the node). */
int kp_shm_reserve(kp_comm *c, int64_t half);
/* Free the segment (collective on the node). */
void kp_shm_free(kp_comm *c);

/* ---- the node's costs (calibrate.c) ---- */
/* Measure the node's shared-memory costs (once per process, by the node's
 * local ranks 0 and 1; mode: kp_calibrate_mode()) and agree on one set
 * across c (MPI_MAX), together with whether cross-memory attach works (cma:
 * this rank's probe); sets c->mach, c->calibrated, c->layout.cma (what
 * measuring took: kp_calibration_cost_ns). Collective over c. */
int kp_calibrate(kp_comm *c, int cma);
/* The agreed costs as a vector (tests): returns the number of words. */
int kp_calibration_words(const kp_comm *c, double *out, int n);
double kp_calibration_cost_ns(void);

#endif
