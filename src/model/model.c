/*
 * The cost model's front end: all P schedules of a collective built as the
 * plan cache builds them (kp_algo_build_on), then timed by the timing engine
 * (src/timing/timing.h) under kport's executor rules (KP_RULES_EXECUTOR:
 * src/timing/walk.c runs a round's posts, sends, copies and then its
 * receives in arrival order, with a clock per rank; src/timing/rules.h
 * holds every formula). The collective's time is the max over ranks of
 * their completion times less their entries (what kport-bench reports).
 * Nothing here knows an algorithm: a new builder is modelled the day it
 * exists. kport-sim (src/sim/sim.c) runs the same engine on the same
 * streams; kp_model_*_rules run the model under its rules
 * (KP_RULES_LOGGOPSIM), and kport-sim --rules executor runs these.
 *
 * The parameters: docs/PARAMETERS.md. Which channel: p2p.intra when both
 * ranks are on one node of the schedules' layout, p2p.inter otherwise.
 * A combine (KP_OP_REDUCE) of n bytes holds the rank's CPU like a copy:
 * compute.reduce (n * gamma) plus a shared operand's premium
 * (kp_rule_local_cost).
 * Every rank enters at kp_timing_entry (the odd ranks call.skew after the
 * even ones when P > 1: the ranks leave a benchmark's barrier that far
 * apart) and its clock starts call.fixed later; a rank's time is its
 * completion less its entry. Hockney (out->hockney_ns) walks the same
 * schedules with alpha + beta*s per message (walk.c).
 *
 * What the model ignores: contention for memory bandwidth and caches
 * (concurrent copies and messages of several ranks, the node's shared
 * memory bus), the data's cache state (warm or cold), MPI's internal
 * copies beyond what O and G carry, progress: a rendezvous is assumed to
 * advance while the sender copies (Open MPI and MPICH progress only inside
 * MPI calls), the splitting of messages above 2^30 bytes, oversubscription
 * (more ranks than cores: a spinning waiter steals its peer's core), and
 * the NIC occupancy of a rendezvous message that departs later than it was
 * issued.
 */
#include "model/model.h"

#include "kport.h"
#include "timing/rules.h"

#include <stdlib.h>
#include <string.h>

double kp_model_entry(const kp_machine *m, int P, int r)
{
    return kp_timing_entry(m, P, r);
}

int kp_model_scheds_rules(const kp_machine *m, const kp_sched *sc, int P, kp_timing_rules rules,
                          kp_model_result *out)
{
    double *user_ranks = out->rank_ns;
    memset(out, 0, sizeof *out);
    out->rank_ns = user_ranks;
    if (P < 1 || !sc)
        return snprintf(out->msg, sizeof out->msg, "invalid P=%d", P), KP_ERR_PARAM;
    if (kp_params_check(m, out->msg, sizeof out->msg))
        return KP_ERR_PARAM;
    /* the counts, over the schedules as built (no-op copies included) */
    for (int r = 0; r < P; r++) {
        const kp_sched *s = &sc[r];
        int rounds = s->nops ? s->ops[s->nops - 1].round + 1 : 0;
        if (rounds > out->max_rounds)
            out->max_rounds = rounds;
        for (int i = 0; i < s->nops; i++) {
            const kp_op *op = &s->ops[i];
            if (op->kind == KP_OP_SEND || op->kind == KP_OP_RECV) {
                const int q = op->kind == KP_OP_SEND ? op->u.send.peer : op->u.recv.peer;
                if (q < 0 || q >= P || q == r) {
                    snprintf(out->msg, sizeof out->msg, "rank %d op %d: peer %d out of range", r, i, q);
                    return KP_ERR_INTERNAL;
                }
            }
            if (op->kind == KP_OP_SEND) {
                const kp_layout *L = s->layout;
                const int same = L && r < L->P && op->u.send.peer < L->P &&
                                 L->node_of[r] == L->node_of[op->u.send.peer];
                out->messages++;
                out->msg_bytes += op->u.send.src.len;
                out->rendezvous += kp_rule_rendezvous(same ? &m->intra : &m->inter, op->u.send.src.len);
            } else if (op->kind == KP_OP_COPY || op->kind == KP_OP_PEER_READ || op->kind == KP_OP_PEER_WRITE) {
                out->copies++;
                out->copy_bytes += op->kind == KP_OP_COPY ? op->u.copy.src.len
                                   : op->kind == KP_OP_PEER_READ ? op->u.peer_read.src.len
                                                                 : op->u.peer_write.dst.len;
            } else if (op->kind == KP_OP_REDUCE) {
                out->reduces++;
                out->reduce_bytes += op->u.reduce.dst.len;
            } else if (op->kind == KP_OP_WAIT && (op->u.wait.peer < 0 || op->u.wait.peer >= P)) {
                snprintf(out->msg, sizeof out->msg, "rank %d op %d: waits for rank %d, out of range", r, i,
                         op->u.wait.peer);
                return KP_ERR_INTERNAL;
            }
        }
    }
    kp_sim_result res;
    int rc = kp_timing_scheds(m, sc, P, rules, &out->hockney_ns, &res);
    if (rc != KP_SUCCESS) {
        snprintf(out->msg, sizeof out->msg, "%.255s", res.msg);
        return rc;
    }
    out->time_ns = res.max_ns;
    out->slowest_rank = res.slowest_rank;
    if (out->rank_ns)
        memcpy(out->rank_ns, res.rank_ns, (size_t)P * sizeof(double));
    kp_sim_result_free(&res);
    return KP_SUCCESS;
}

int kp_model_scheds(const kp_machine *m, const kp_sched *sc, int P, kp_model_result *out)
{
    return kp_model_scheds_rules(m, sc, P, KP_RULES_EXECUTOR, out);
}

int kp_model_predict_rules(const kp_machine *m, const kp_algo *a, const kp_params *prm, const kp_layout *L, int P,
                           int64_t bytes, int root, int inplace, kp_timing_rules rules, kp_model_result *out)
{
    return kp_model_predict_red(m, a, prm, L, P, bytes, root, inplace, 1, 1, NULL, rules, out);
}

int kp_model_predict_red(const kp_machine *m, const kp_algo *a, const kp_params *prm, const kp_layout *L, int P,
                         int64_t bytes, int root, int inplace, int64_t elem, int commute, const int64_t *block_off,
                         kp_timing_rules rules, kp_model_result *out)
{
    double *user_ranks = out->rank_ns;
    memset(out, 0, sizeof *out);
    out->rank_ns = user_ranks;
    if (!a || P < 1 || P > (1 << 24))
        return snprintf(out->msg, sizeof out->msg, "invalid algorithm or P=%d", P), KP_ERR_PARAM;
    kp_sched *sc = calloc((size_t)P, sizeof *sc);
    if (!sc)
        return snprintf(out->msg, sizeof out->msg, "out of memory for %d schedules", P), KP_ERR_NOMEM;
    int built = 0, rc = KP_SUCCESS;
    for (; built < P; built++) {
        rc = kp_algo_build_red_on(a, prm, L, built, P, bytes, root, inplace, elem, commute, block_off, &sc[built]);
        if (rc != KP_SUCCESS) {
            snprintf(out->msg, sizeof out->msg, "%s", sc[built].errmsg);
            built++;
            break;
        }
    }
    if (rc == KP_SUCCESS)
        rc = kp_model_scheds_rules(m, sc, P, rules, out);
    else if (rc == KP_ERR_PARAM || rc == KP_ERR_UNSUPPORTED) {
        out->refused = 1;
        out->refuse_code = rc;
        rc = KP_SUCCESS;
    }
    for (int r = 0; r < built; r++)
        kp_sched_free(&sc[r]);
    free(sc);
    return rc;
}

int kp_model_predict(const kp_machine *m, const kp_algo *a, const kp_params *prm, const kp_layout *L, int P,
                     int64_t bytes, int root, int inplace, kp_model_result *out)
{
    return kp_model_predict_rules(m, a, prm, L, P, bytes, root, inplace, KP_RULES_EXECUTOR, out);
}
