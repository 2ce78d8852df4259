/*
 * The executor (src/exec): runs a plan's schedule on its communicator:
 * MPI point-to-point messages, the node's shared memory (flags, copies
 * through the segment), single-copy peer reads and writes, and the
 * one-sided transport (onesided.h). It sets nothing up: what a plan needs
 * was brought up when it was built (src/plan).
 */
#ifndef KP_EXEC_H
#define KP_EXEC_H

#include "exec/reduce.h"
#include "state/comm.h"

/* Run a plan on its communicator (pl->owner): sbuf is the send buffer's
 * first byte (for MPI_IN_PLACE pass rbuf + rank * bytes), rbuf the receive
 * buffer's. */
int kp_exec_run(kp_plan *pl, const void *sbuf, void *rbuf);
/* The same for a reduction's plan: its KP_OP_REDUCE operations combine with
 * red (chosen per call from the operation and datatype; exec/reduce.h).
 * Under MPI_IN_PLACE pass sbuf = rbuf (the input is in the receive buffer
 * from offset 0). kp_exec_run is this with red NULL (a plan that combines
 * then fails with KP_ERR_INTERNAL). */
int kp_exec_run_red(kp_plan *pl, const void *sbuf, void *rbuf, const kp_reducer *red);

/* Spin, then back off and yield, until *flag >= target; progresses the
 * requests reqs[0..n) meanwhile. */
void kp_shm_wait(kp_comm *c, _Atomic uint64_t *flag, uint64_t target, MPI_Request *reqs, int n);


#endif
