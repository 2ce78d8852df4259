/*
 * Export of all P schedules in LogGOPSim's GOAL text format:
 *
 *   num_ranks 4
 *   rank 0 {
 *   l0: send 8b to 1 tag 0
 *   l1: recv 8b from 3 tag 0
 *   l2: calc 0
 *   l2 requires l0
 *   ...
 *   }
 *
 * Rounds become dependencies: every operation of round r+1 requires every
 * operation of round r (through one zero-cost "calc 0" join vertex per round
 * boundary, which keeps the file linear in the number of operations). Local
 * copies and single-copy peer reads/writes become "calc <bytes>" (the
 * simulator's cost of copying those bytes); shared-memory posts and waits
 * have no GOAL equivalent and become "calc 0" (their ordering is lost).
 * A combine of a reduction (KP_OP_REDUCE) of n bytes becomes
 * "calc <n * gamma>", rounded to the nearest nanosecond (LogGOPSim's calc
 * holds the CPU that many of its time units: ns with kport's parameters);
 * its round's join makes it require the receive whose data it combines and
 * the send of its result require it, as the schedule's rounds do.
 * kp_goal_write prices it as a copy, gamma = 1 ns per byte (kport-sim's
 * default, kp_sim_machine_loggp).
 */
#include "sched/goal.h"

#include <inttypes.h>
#include <math.h>

/* a combine of n bytes at gamma ns per byte, in whole ns */
static long long calc_ns(int64_t n, double gamma)
{
    const double t = (double)n * gamma;
    return t <= 0 ? 0 : (long long)(t + 0.5);
}

static void rank_goal(const kp_sched *s, double gamma, FILE *out)
{
    fprintf(out, "rank %d {\n", s->rank);
    int label = 0, join = -1, i = 0;
    while (i < s->nops) {
        int round = s->ops[i].round, end = i, first = label;
        while (end < s->nops && s->ops[end].round == round)
            end++;
        for (int j = i; j < end; j++) {
            const kp_op *op = &s->ops[j];
            if (kp_sched_copy_is_noop(s, op))
                continue;
            if (op->kind == KP_OP_SEND)
                fprintf(out, "l%d: send %" PRId64 "b to %d tag 0\n", label, op->u.send.src.len, op->u.send.peer);
            else if (op->kind == KP_OP_RECV)
                fprintf(out, "l%d: recv %" PRId64 "b from %d tag 0\n", label, op->u.recv.dst.len, op->u.recv.peer);
            else if (op->kind == KP_OP_COPY)
                fprintf(out, "l%d: calc %" PRId64 "\n", label, op->u.copy.src.len);
            else if (op->kind == KP_OP_PEER_READ)
                fprintf(out, "l%d: calc %" PRId64 "\n", label, op->u.peer_read.src.len);
            else if (op->kind == KP_OP_PEER_WRITE)
                fprintf(out, "l%d: calc %" PRId64 "\n", label, op->u.peer_write.src.len);
            else if (op->kind == KP_OP_REDUCE)
                fprintf(out, "l%d: calc %lld\n", label, calc_ns(op->u.reduce.dst.len, gamma));
            else /* shared-memory posts and waits: no GOAL equivalent, a zero-cost vertex */
                fprintf(out, "l%d: calc 0\n", label);
            if (join >= 0)
                fprintf(out, "l%d requires l%d\n", label, join);
            label++;
        }
        if (end < s->nops && label > first) { /* join vertex before the next round */
            fprintf(out, "l%d: calc 0\n", label);
            for (int l = first; l < label; l++)
                fprintf(out, "l%d requires l%d\n", label, l);
            join = label++;
        }
        i = end;
    }
    if (label == 0) /* nothing to do (P = 1, in place): LogGOPSim crashes on a file without events */
        fprintf(out, "l0: calc 0\n");
    fprintf(out, "}\n");
}

void kp_goal_write_gamma(const kp_sched *scheds, int P, double gamma, FILE *out)
{
    fprintf(out, "num_ranks %d\n", P);
    for (int r = 0; r < P; r++)
        rank_goal(&scheds[r], isfinite(gamma) && gamma > 0 ? gamma : 0.0, out);
}

void kp_goal_write(const kp_sched *scheds, int P, FILE *out)
{
    kp_goal_write_gamma(scheds, P, 1.0, out);
}
