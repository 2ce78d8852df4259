/*
 * kport-sim's engine: a discrete-event LogGP simulator that executes the
 * schedules kport's own builders produce (through the registry, with the
 * defaults and clamping kport applies), for P up to millions of ranks.
 *
 * The rules (when a send's CPU and NIC are busy, when a receive completes,
 * rendezvous, nodes, rails, ports, shared-memory operations, the order in
 * which simultaneous events run) are in docs/SIMULATOR.md and at the top of
 * sim.c. They follow LogGOPSim (Hoefler, Schneider, Lumsdaine, HPDC'10) for
 * messages, and the cost model (src/model/model.c) for what LogGOPSim lacks.
 */
#ifndef KP_SIM_SIM_H
#define KP_SIM_SIM_H

#include "algo/algo.h"
#include "model/params.h"

#include <stddef.h>
#include <stdint.h>

/* Where the critical path's time goes (kp_sim_result.cp). */
enum kp_sim_cat {
    KP_SIM_OVERHEAD = 0, /* o: CPU overhead of sends and receives */
    KP_SIM_WIRE,         /* L: latency */
    KP_SIM_BYTES,        /* (s-1)G and (s-1)O: per-byte costs */
    KP_SIM_GAP,          /* g: waiting for the NIC (port or rail) to inject or take in the next message */
    KP_SIM_COPY,         /* local copies, peer reads / writes */
    KP_SIM_WAIT,         /* shared-memory flags (flag.fixed) */
    KP_SIM_CALL,         /* call.fixed: kport's own per-call cost (parameter files only) */
    KP_SIM_NCAT
};
extern const char *const kp_sim_cat_name[KP_SIM_NCAT];

/* One hop of the critical path's chain of operations. */
enum kp_sim_hop_kind {
    KP_SIM_HOP_SEND = 0, /* rank sends len bytes to peer (starts at t) */
    KP_SIM_HOP_TAKE,     /* rank takes in a message of len bytes from peer */
    KP_SIM_HOP_COPY,     /* rank copies len bytes (peer: itself, or the peer of a peer read / write) */
    KP_SIM_HOP_FLAG      /* rank sees post len of peer (posted at t) */
};
typedef struct kp_sim_hop {
    double t;
    int64_t len;
    int rank, peer, kind;
} kp_sim_hop;

typedef struct kp_sim_config {
    int coll;              /* enum kp_coll */
    const kp_algo *algo;   /* from kp_algo_parse */
    kp_params prm;         /* as parsed (defaults and clamping are applied here) */
    int P;
    int64_t bytes;         /* per-rank block */
    int node_size;         /* ranks r*n .. r*n+n-1 form a node; <= 1: every rank its own node */
    int root, inplace;
    kp_machine m;          /* costs: kp_sim_machine_loggp, or a parameter file */
    int rails;             /* 0: no per-node NIC sharing; r: a node's inter-node messages share r NICs */
    int ports;             /* messages a rank injects (and takes in) at once; >= 1 */
    int zero_wrap;         /* 1: 0-byte messages cost as in LogGOPSim, whose unsigned s - 1 wraps:
                            * (s-1)G = -G and (s-1)O = -O (0: s - 1 counts as 0) */
    /* progress, called about once a second after the first two seconds of
     * a run (phase "build" or "simulate"); may be NULL */
    void (*progress)(void *arg, const char *phase, double sim_ns, uint64_t done, uint64_t total, double wall_s);
    void *progress_arg;
} kp_sim_config;

typedef struct kp_sim_result {
    double *rank_ns;      /* [P] completion time of every rank (kp_sim_result_free frees it) */
    double max_ns, min_ns, median_ns;
    int slowest_rank;     /* the lowest-numbered rank that completes last */
    int64_t messages, msg_bytes, rendezvous, copies, copy_bytes, posts, waits;
    int max_rounds;
    uint64_t events;      /* operations + round joins + messages (LogGOPSim's count) */
    uint64_t pops;        /* events taken from the queue, re-insertions included */
    double cp[KP_SIM_NCAT]; /* the slowest rank's critical path by category (ns; sums to max_ns) */
    int64_t cp_messages;  /* messages on that path */
    kp_sim_hop *chain;    /* the path's hops in time order (nchain; -1: too many hops to log) */
    int nchain;
    char algorithm[192];  /* the name as run: clamped parameters and the note */
    double build_s, sim_s;/* wall time building the schedules and simulating them */
    size_t mem_bytes;     /* the engine's own peak allocation (schedules, state, queue) */
    int refused;          /* 1: the builder refused (msg says why) */
    char msg[320];        /* refusal or error */
} kp_sim_result;

/* A machine with one LogGP piece for every message (intra and inter node
 * alike): L, o (send and receive), g, G, O; messages of more than S bytes
 * go rendezvous (S < 0: none); local copies and peer reads/writes cost
 * 1 ns per byte (LogGOPSim's calc of the GOAL export), posts, waits and
 * kport's call cost nothing. */
void kp_sim_machine_loggp(kp_machine *m, double L, double o, double g, double G, double O, int64_t S);

/* Run the simulation. Returns KP_SUCCESS (r->refused set when the builder
 * refused), KP_ERR_PARAM (bad configuration, r->msg), KP_ERR_NOMEM, or
 * KP_ERR_INTERNAL (schedules that do not match or deadlock, r->msg). */
int kp_sim_run(const kp_sim_config *c, kp_sim_result *r);
void kp_sim_result_free(kp_sim_result *r);

/* The node layout of --node-size n (ranks r*n .. r*n+n-1, the last node
 * possibly smaller), the same kp_layout_init builds from ids r / n but in
 * O(P) time. Returns 0 or -1 (out of memory). */
int kp_sim_block_layout(kp_layout *L, int P, int node_size);

#endif /* KP_SIM_SIM_H */
