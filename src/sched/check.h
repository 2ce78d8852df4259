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

#include "algo/algo.h"

typedef struct kp_check_result {
    int ok;            /* 1: schedules are correct */
    int refused;       /* 1: the builder refused (see msg) */
    int refuse_code;   /* its KP_ERR_* code */
    int max_rounds;    /* over all ranks */
    int max_ops;       /* over all ranks */
    int64_t max_scratch;
    char msg[1024];    /* the problem found, or the refusal */
} kp_check_result;

/* Check all-gather algorithm a with parameters prm (defaults applied when 0)
 * for P ranks and `bytes` per block; inplace models MPI_IN_PLACE (the send
 * buffer aliases the rank's block of the receive buffer). */
void kp_check_allgather(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int inplace,
                        kp_check_result *res);

/* Any collective: schedules carry their shape (collective, root, bytes,
 * MPI_IN_PLACE). Barriers are checked by causality: no rank may finish
 * before a chain of messages links every rank's entry to it. */
void kp_check_scheds(kp_sched *scheds, int P, kp_check_result *res);
void kp_check_algo(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int root, int inplace,
                   kp_check_result *res);
/* The same on a node layout (NULL: every rank on its own node). */
void kp_check_algo_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, int64_t bytes, int root,
                      int inplace, kp_check_result *res);

/* Check already-built all-gather schedules (scheds[r] is rank r's). */
void kp_check_allgather_scheds(kp_sched *scheds, int P, int64_t bytes, int inplace,
                               kp_check_result *res);

#endif /* KP_CHECK_H */
