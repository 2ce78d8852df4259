/*
 * Schedule checker: executes all P schedules of a collective symbolically,
 * with no MPI, and reports the first problem found:
 *  - an operation whose region lies outside its buffer;
 *  - a send with no matching receive, or matched with a receive of another size;
 *  - a deadlock (the ranks and operations that are stuck);
 *  - a region written by one operation of a round while another operation of
 *    the same round may read or write it (MPI_IN_PLACE aliasing included);
 *  - a final receive buffer that does not hold block j from rank j;
 *  - shared memory (and peer-read buffers) touched by two ranks without
 *    ordering through posts/waits or messages, within a call or across
 *    three consecutive calls.
 */
#ifndef KP_CHECK_H
#define KP_CHECK_H

#include "sched/sched.h"

typedef struct kp_check_result {
    int ok;            /* 1: schedules are correct */
    int refused;       /* 1: the builder refused (see msg) */
    int refuse_code;   /* its KP_ERR_* code */
    int max_rounds;    /* over all ranks */
    int max_ops;       /* over all ranks */
    int64_t max_scratch;
    char msg[1024];    /* the problem found, or the refusal */
} kp_check_result;

/* Any collective: schedules carry their shape (collective, root, bytes,
 * MPI_IN_PLACE). Barriers are checked by causality: no rank may finish
 * before a chain of messages links every rank's entry to it. */
void kp_check_scheds(kp_sched *scheds, int P, kp_check_result *res);
/* An algorithm's schedules, built for every rank and checked: src/algo
 * (algo.h, kp_check_algo_on). */

/* Check already-built all-gather schedules (scheds[r] is rank r's). */
void kp_check_allgather_scheds(kp_sched *scheds, int P, int64_t bytes, int inplace,
                               kp_check_result *res);

#endif /* KP_CHECK_H */
