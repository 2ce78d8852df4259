/*
 * Schedule checker: executes all P schedules of a collective symbolically,
 * with no MPI, and reports the first problem found:
 *  - an operation whose region lies outside its buffer;
 *  - a send with no matching receive, or matched with a receive of another size;
 *  - a deadlock (the ranks and operations that are stuck);
 *  - a region written by one operation of a round while another operation of
 *    the same round may read or write it (MPI_IN_PLACE aliasing included);
 *  - a final receive buffer that does not hold what the collective
 *    defines: block j from rank j (all-gather, gather's root), rank j's
 *    block for me (all-to-all), the root's data on every rank, the root's
 *    own kept (bcast), block r of the root's send buffer (scatter);
 *  - shared memory (and peer-read buffers) touched by two ranks without
 *    ordering through posts/waits or messages, within a call or across
 *    three consecutive calls;
 *  - reductions (check_red.c): a combine (KP_OP_REDUCE, read a and b, write
 *    dst for the checks above) that splits an element, reads garbage or a
 *    part of an element, joins different calls or element positions, counts
 *    a rank twice, or (sched.commute == 0) joins operands that are not
 *    contiguous rank ranges with a's just below b's; a result element
 *    (reduce's root, every allreduce rank, rank r's block of
 *    reduce_scatter[_block]) that lacks a rank; allreduce ranks whose
 *    results are differently combined expressions (association matters,
 *    operand order of a commutative operation does not).
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
 * MPI_IN_PLACE; reductions also elem, commute, block_off, equal on every
 * rank). Barriers are checked by causality: no rank may finish before a
 * chain of messages links every rank's entry to it. Reduce's MPI_IN_PLACE
 * is the root's: the other ranks' schedules may be built without it. */
void kp_check_scheds(kp_sched *scheds, int P, kp_check_result *res);
/* An algorithm's schedules, built for every rank and checked: src/algo
 * (algo.h, kp_check_algo_on). */

/* Check already-built all-gather schedules (scheds[r] is rank r's). */
void kp_check_allgather_scheds(kp_sched *scheds, int P, int64_t bytes, int inplace,
                               kp_check_result *res);

#endif /* KP_CHECK_H */
