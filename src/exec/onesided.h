/*
 * The one-sided transport of the collectives (src/exec/onesided.c): a
 * plan's messages as MPI_Put into the receiver's staging slots (or straight
 * into its attached receive buffer), with credits and counters; its
 * windows live on the private duplicate. Not the strided one-sided API
 * (src/strided).
 */
#ifndef KP_EXEC_ONESIDED_H
#define KP_EXEC_ONESIDED_H

#include "state/comm.h"

/* Bring up the windows plans with transport=rma and pl->prm.rails rails
 * use on c, and the dynamic ones unless rma_path is KP_RMA_PATH_STAGING
 * (collective over c->comm; every rank builds the same plan). */
int kp_rma_ready(kp_comm *c, int rails, int rma_path);
/* Free c's windows (collective) and set c->rma NULL. */
void kp_rma_release(kp_comm *c);
/* windows created and not yet freed, this process (tests) */
int kp_rma_live_windows(void);
/* the attach path (tests): MPI_Win_attach / MPI_Win_detach calls of the
 * attachment cache so far, this process; whether c's rails-rail link has
 * working dynamic windows (1), fell back to staging (0) or has none (-1) */
void kp_rma_attach_stats(long *attaches, long *detaches);
int kp_rma_attach_ready(kp_comm *c, int rails);
/* The executor's hooks (run.c walks the schedule): a round's message
 * operations are added as they come (p points at the op's bytes), started
 * (every send of the round put, up to the ring's room: k puts in flight)
 * before the round's copies, polled while waiting for a shared-memory flag,
 * and completed at the end of the round. */
int kp_rma_round_begin(kp_plan *pl);
int kp_rma_add(kp_plan *pl, const kp_op *op, char *p);
int kp_rma_poll(kp_plan *pl);
int kp_rma_round_end(kp_plan *pl);
/* Wait until *flag >= target while progressing the round's transfers. */
int kp_rma_wait_flag(kp_plan *pl, _Atomic uint64_t *flag, uint64_t target);

#endif
