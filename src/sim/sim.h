/*
 * kport-sim's front end to the timing engine (src/timing/timing.h): it
 * builds the schedules kport's own builders produce (through the registry,
 * with the defaults and clamping kport applies) rank by rank into the
 * engine's streams, for P up to millions of ranks, and runs them under
 * LogGOPSim's rules (src/timing/des.c: a discrete-event simulation) or the
 * cost model's (KP_RULES_EXECUTOR, src/timing/walk.c).
 *
 * The rules (when a send's CPU and NIC are busy, when a receive completes,
 * rendezvous, nodes, rails, ports, shared-memory operations, the order in
 * which simultaneous events run) are in docs/SIMULATOR.md and
 * src/timing/rules.h. They follow LogGOPSim (Hoefler, Schneider, Lumsdaine,
 * HPDC'10) for messages, and the cost model for what LogGOPSim lacks.
 */
#ifndef KP_SIM_SIM_H
#define KP_SIM_SIM_H

#include "algo/algo.h"
#include "params/params.h"
#include "timing/timing.h"

#include <stddef.h>
#include <stdint.h>

typedef struct kp_sim_config {
    int coll;              /* enum kp_coll */
    const kp_algo *algo;   /* from kp_algo_parse */
    kp_params prm;         /* as parsed (defaults and clamping are applied here) */
    int P;
    int64_t bytes;         /* per-rank block */
    int node_size;         /* ranks r*n .. r*n+n-1 form a node; <= 1: every rank its own node */
    int root, inplace;
    /* reductions (kp_algo_build_red_on): element size (0: 1), a
     * non-commutative operation (0: commutative), and reduce_scatter's
     * result blocks' byte offsets [P + 1] (NULL: the other collectives) */
    int64_t elem;
    int noncommutative;
    const int64_t *block_off;
    kp_machine m;          /* costs: kp_sim_machine_loggp, or a parameter file */
    int rails;             /* 0: no per-node NIC sharing; r: a node's inter-node messages share r NICs */
    int ports;             /* messages a rank injects (and takes in) at once; >= 1 */
    int zero_wrap;         /* 1: 0-byte messages cost as in LogGOPSim, whose unsigned s - 1 wraps:
                            * (s-1)G = -G and (s-1)O = -O (0: s - 1 counts as 0) */
    kp_timing_rules rules; /* KP_RULES_LOGGOPSIM (0, the default) or the cost model's KP_RULES_EXECUTOR,
                            * which has no ports, rails or zero_wrap */
    /* progress, called about once a second after the first two seconds of
     * a run (phase "build" or "simulate"); may be NULL */
    void (*progress)(void *arg, const char *phase, double sim_ns, uint64_t done, uint64_t total, double wall_s);
    void *progress_arg;
} kp_sim_config;

/* Run the simulation. Returns KP_SUCCESS (r->refused set when the builder
 * refused), KP_ERR_PARAM (bad configuration, r->msg), KP_ERR_NOMEM, or
 * KP_ERR_INTERNAL (schedules that do not match or deadlock, r->msg). */
int kp_sim_run(const kp_sim_config *c, kp_sim_result *r);

/* reduce_scatter's result blocks of a vector of `bytes` in elements of
 * elem bytes, as kport-check splits it: off[0 .. P], rank j's share of the
 * bytes / elem elements proportional to 1 (even: floor(n (j+1) / P) - floor(n j / P)
 * elements, the later ranks one more where it does not divide) or to
 * j mod 3 (uneven: every third rank none; all to the last rank for P <= 1). */
void kp_sim_split_blocks(int P, int64_t bytes, int64_t elem, int uneven, int64_t *off);

/* The node layout of --node-size n (ranks r*n .. r*n+n-1, the last node
 * possibly smaller), the same kp_layout_init builds from ids r / n but in
 * O(P) time. Returns 0 or -1 (out of memory). */
int kp_sim_block_layout(kp_layout *L, int P, int node_size);

#endif /* KP_SIM_SIM_H */
