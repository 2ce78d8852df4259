/*
 * The cost model: the LogGP (and Hockney alpha-beta) time of any kport
 * schedule, computed by running the P schedules themselves through the
 * timing engine (src/timing/timing.h) under kport's executor rules, never
 * from a per-algorithm formula, so every algorithm present and future is
 * modelled. The rules are in src/timing/rules.h and walk.c and in
 * docs/DESIGN.md, "The cost model"; the parameters in docs/PARAMETERS.md.
 */
#ifndef KP_MODEL_MODEL_H
#define KP_MODEL_MODEL_H

#include "algo/algo.h"
#include "params/params.h"
#include "timing/timing.h"

typedef struct kp_model_result {
    int refused;        /* 1: the builder refused (msg says why); no times */
    int refuse_code;    /* its KP_ERR_* code */
    double time_ns;     /* LogGP: the max over ranks of the completion times */
    double hockney_ns;  /* Hockney alpha-beta of the same walk */
    int slowest_rank;   /* the rank that completes last (LogGP) */
    int64_t messages;   /* sends over all ranks (a zero-byte signal counts) */
    int64_t msg_bytes;  /* bytes those sends carry */
    int64_t rendezvous; /* sends above the eager limit of their channel */
    int64_t copies;     /* local copies, peer reads and peer writes over all ranks */
    int64_t copy_bytes;
    int64_t reduces;    /* combines (KP_OP_REDUCE) over all ranks */
    int64_t reduce_bytes; /* bytes of one operand of each */
    int max_rounds;     /* over all ranks */
    double *rank_ns;    /* optional, set by the caller: [P] LogGP completion time of each rank */
    char msg[256];      /* the refusal, or the error */
} kp_model_result;

/* Predict algorithm a with parameters prm (defaults applied and clamped as
 * kport runs it) on P ranks of layout L (NULL: every rank on its own node,
 * so every message uses p2p.inter), `bytes` per block, root, MPI_IN_PLACE.
 * Returns KP_SUCCESS (out->refused says whether the builder refused),
 * KP_ERR_PARAM (m fails kp_params_check, or P < 1), KP_ERR_NOMEM, or
 * KP_ERR_INTERNAL with out->msg (schedules that do not match or deadlock:
 * kport-check reports those). Keep out->rank_ns (NULL or an array of P). */
int kp_model_predict(const kp_machine *m, const kp_algo *a, const kp_params *prm, const kp_layout *L, int P,
                     int64_t bytes, int root, int inplace, kp_model_result *out);

/* The same walk over already-built schedules (sc[r] is rank r's; their
 * layout field decides intra or inter node). */
int kp_model_scheds(const kp_machine *m, const kp_sched *sc, int P, kp_model_result *out);

/* When rank r of P enters a call, as the cost model and kport-sim time it:
 * the odd ranks call.skew after the even ones (P > 1), ns
 * (kp_timing_entry). */
double kp_model_entry(const kp_machine *m, int P, int r);

/* kp_model_predict and kp_model_scheds under the timing engine's other
 * rules: KP_RULES_EXECUTOR is theirs, KP_RULES_LOGGOPSIM kport-sim's
 * (src/timing/timing.h); with the same rules kport-sim gives the same time.
 * hockney_ns is the Hockney walk's under either. */
int kp_model_predict_rules(const kp_machine *m, const kp_algo *a, const kp_params *prm, const kp_layout *L, int P,
                           int64_t bytes, int root, int inplace, kp_timing_rules rules, kp_model_result *out);
int kp_model_scheds_rules(const kp_machine *m, const kp_sched *sc, int P, kp_timing_rules rules,
                          kp_model_result *out);

/* A reduction (reduce, allreduce, reduce_scatter[_block]): the schedules
 * built with kp_algo_build_red_on's element size, commutativity and
 * (reduce_scatter) result blocks' offsets [P + 1] (NULL: regular blocks);
 * every combine costs compute.reduce (gamma per byte, src/timing/rules.h).
 * kp_model_predict_rules is this with 1, 1, NULL. */
int kp_model_predict_red(const kp_machine *m, const kp_algo *a, const kp_params *prm, const kp_layout *L, int P,
                         int64_t bytes, int root, int inplace, int64_t elem, int commute, const int64_t *block_off,
                         kp_timing_rules rules, kp_model_result *out);

#endif /* KP_MODEL_MODEL_H */
