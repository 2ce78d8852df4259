/* GOAL (LogGOPSim) text export of a collective's P schedules. */
#ifndef KP_GOAL_H
#define KP_GOAL_H

#include "sched/sched.h"

#include <stdio.h>

/* Combines (KP_OP_REDUCE) as calc <bytes> (1 ns per byte, like copies). */
void kp_goal_write(const kp_sched *scheds, int P, FILE *out);
/* ... as calc <bytes * gamma> (gamma: ns per byte, compute.reduce.per_byte;
 * rounded to whole ns; not finite or negative: 0). */
void kp_goal_write_gamma(const kp_sched *scheds, int P, double gamma, FILE *out);

#endif /* KP_GOAL_H */
