/*
 * kport's one timing engine: the LogGP time of kport's schedules, used by
 * the cost model (src/model/model.c: P explicit schedules) and by kport-sim
 * (src/sim/sim.c: schedules built rank by rank for up to millions of
 * ranks). Both feed the same compact operation streams (stream.c) to the
 * same engine and price every operation with the same formulas (rules.h).
 *
 * One option, kp_timing_rules, says where the two defaults differ:
 *  - KP_RULES_EXECUTOR: kport's executor order (the cost model's default):
 *    a round's posts, sends in schedule order, copies, then its receives in
 *    arrival order once every message of the round is known (walk.c).
 *  - KP_RULES_LOGGOPSIM: LogGOPSim's order (kport-sim's default): one
 *    discrete event at a time, a message taken in when it arrives and the
 *    CPU is free (des.c, queue.h).
 * rules.h lists, formula by formula, what each rule set charges. With the
 * same rules the cost model and kport-sim give the same time on the same
 * schedules and parameters (tests/sim/test_equal.c asserts it).
 *
 * The result types keep their kp_sim_ names (kport-sim's output, which the
 * engine fills).
 */
#ifndef KP_TIMING_TIMING_H
#define KP_TIMING_TIMING_H

#include "algo/algo.h"
#include "params/params.h"

#include <stddef.h>
#include <stdint.h>

typedef enum kp_timing_rules {
    KP_RULES_LOGGOPSIM = 0, /* LogGOPSim's event order and formulas: kport-sim's default */
    KP_RULES_EXECUTOR = 1   /* kport's executor order, round by round: the cost model's default */
} kp_timing_rules;

/* "loggopsim" / "executor" */
const char *kp_timing_rules_name(kp_timing_rules r);
/* 0, or -1 when s names no rule set */
int kp_timing_rules_parse(const char *s, kp_timing_rules *r);

/* Where the critical path's time goes (kp_sim_result.cp). */
enum kp_sim_cat {
    KP_SIM_OVERHEAD = 0, /* o: CPU overhead of sends and receives */
    KP_SIM_WIRE,         /* L: latency */
    KP_SIM_BYTES,        /* (s-1)G and (s-1)O: per-byte costs */
    KP_SIM_GAP,          /* g: waiting for the NIC (port or rail) to inject or take in the next message */
    KP_SIM_COPY,         /* local copies, peer reads / writes */
    KP_SIM_WAIT,         /* shared-memory flags (flag.fixed) */
    KP_SIM_CALL,         /* call.fixed: kport's own per-call cost (parameter files only) */
    KP_SIM_COMPUTE,      /* combines of reductions (compute.reduce, gamma per byte) */
    KP_SIM_NCAT
};
extern const char *const kp_sim_cat_name[KP_SIM_NCAT];

/* One hop of the critical path's chain of operations. */
enum kp_sim_hop_kind {
    KP_SIM_HOP_SEND = 0, /* rank sends len bytes to peer (starts at t) */
    KP_SIM_HOP_TAKE,     /* rank takes in a message of len bytes from peer */
    KP_SIM_HOP_COPY,     /* rank copies len bytes (peer: itself, or the peer of a peer read / write) */
    KP_SIM_HOP_FLAG,     /* rank sees post len of peer (posted at t) */
    KP_SIM_HOP_REDUCE    /* rank combines len bytes (peer: itself) */
};
typedef struct kp_sim_hop {
    double t;
    int64_t len;
    int rank, peer, kind;
} kp_sim_hop;

typedef struct kp_sim_result {
    double *rank_ns;      /* [P] completion time of every rank (kp_sim_result_free frees it) */
    double max_ns, min_ns, median_ns;
    int slowest_rank;     /* the lowest-numbered rank that completes last */
    int64_t messages, msg_bytes, rendezvous, copies, copy_bytes, posts, waits;
    int64_t reduces, reduce_bytes; /* combines (KP_OP_REDUCE) and the bytes of one operand of each */
    int max_rounds;
    uint64_t events;      /* operations + round joins + messages (LogGOPSim's count; 0 under executor rules) */
    uint64_t pops;        /* events taken from the queue, re-insertions included */
    double cp[KP_SIM_NCAT]; /* the slowest rank's critical path by category (ns; sums to max_ns) */
    int64_t cp_messages;  /* messages on that path */
    kp_sim_hop *chain;    /* the path's hops in time order (nchain; -1: not logged: too many hops, or
                           * the executor rules, which track no critical path) */
    int nchain;
    char algorithm[192];  /* the name as run: clamped parameters and the note */
    double build_s, sim_s;/* wall time building the schedules and simulating them */
    size_t mem_bytes;     /* the engine's own peak allocation (schedules, state, queue) */
    int refused;          /* 1: the builder refused (msg says why) */
    char msg[320];        /* refusal or error */
} kp_sim_result;
void kp_sim_result_free(kp_sim_result *r);

/* A machine with one LogGP piece for every message (intra and inter node
 * alike): L, o (send and receive), g, G, O; messages of more than S bytes
 * go rendezvous (S < 0: none); local copies and peer reads/writes cost
 * 1 ns per byte (LogGOPSim's calc of the GOAL export), a combine of a
 * reduction 1 ns per byte too (compute.reduce; kport-sim --gamma changes
 * it), posts, waits and kport's call cost nothing. */
void kp_sim_machine_loggp(kp_machine *m, double L, double o, double g, double G, double O, int64_t S);

/* When rank r of P enters a call, as both rule sets time it: the odd ranks
 * call.skew after the even ones (P > 1), ns. */
double kp_timing_entry(const kp_machine *m, int P, int r);

/* Exchanges (a round that sends to a peer and receives from it), paired
 * alike by both rule sets: the k-th receive from q of a round with the
 * k-th send to q of the same round. S[0..ns) are the round's sends,
 * R[0..nr) its receives, each (peer, an index the caller chooses, increasing
 * in schedule order); both are sorted by (peer, index) and pair(arg, send's
 * index, receive's index, k) is called for every pair, k the number of
 * pairs with the same peer before it in the round (0: the first exchange
 * with that peer; from 1 on, a further exchange with it at once, priced by
 * X2 + X2G*s where the piece has them). */
typedef struct kp_xop {
    uint32_t peer, op;
} kp_xop;
void kp_pair_exchanges(kp_xop *S, size_t ns, kp_xop *R, size_t nr,
                       void (*pair)(void *arg, uint32_t s, uint32_t r, uint32_t k), void *arg);

/* The engine on P explicit schedules (sc[r] is rank r's; the node of rank r
 * is sc[r].layout->node_of[r], a node of its own without a layout), under
 * `rules`. Fills r->rank_ns (allocated; kp_sim_result_free), max_ns,
 * slowest_rank, the counts and, under LogGOPSim's rules, the critical path;
 * hockney_ns (may be NULL): the Hockney alpha-beta time of the same
 * schedules (walk.c).
 * Returns KP_SUCCESS, KP_ERR_PARAM (m fails kp_params_check, P < 1),
 * KP_ERR_NOMEM, or KP_ERR_INTERNAL with r->msg (schedules that do not match
 * or deadlock). */
int kp_timing_scheds(const kp_machine *m, const kp_sched *sc, int P, kp_timing_rules rules, double *hockney_ns,
                     kp_sim_result *r);

#endif /* KP_TIMING_TIMING_H */
