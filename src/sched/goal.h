/* GOAL (LogGOPSim) text export of a collective's P schedules. */
#ifndef KP_GOAL_H
#define KP_GOAL_H

#include "sched/sched.h"

#include <stdio.h>

void kp_goal_write(const kp_sched *scheds, int P, FILE *out);

#endif /* KP_GOAL_H */
