/*
 * Helpers shared by the one-node shared-memory builders (shm_flat,
 * shm_single_copy of every collective).
 */
#ifndef KP_SHM_COMMON_H
#define KP_SHM_COMMON_H

#include "algo/algo.h"
#include "kport.h"

/* Refuse unless all ranks share one node (and, for single-copy builders,
 * cross-memory attach works there). Returns 0 or the refusal code. */
static inline int kp_shm_one_node(kp_sched *s, const char *what, int need_cma)
{
    const kp_layout *L = s->layout;
    if (s->P == 1)
        return 0;
    if (!L || L->nnodes != 1)
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED, "%s needs all %d ranks on one node (%d nodes)", what, s->P,
                               L ? L->nnodes : s->P);
    if (need_cma && !L->cma)
        return kp_sched_refuse(s, KP_ERR_UNSUPPORTED,
                               "%s: cross-memory attach (process_vm_readv) is not permitted here", what);
    return 0;
}

/* Wait for post n of every other rank (one node: rank = local index); on
 * line flags when `line`. */
static inline void kp_shm_wait_all(kp_sched *s, int n, int line)
{
    for (int q = 0; q < s->P; q++)
        if (q != s->rank) {
            if (line)
                kp_sched_wait_line(s, q, n);
            else
                kp_sched_wait(s, q, n);
        }
}

/* An all-gather on one node whose blocks (at most KP_LINE - 8 bytes) ride
 * in their writers' flag lines (KP_BUF_LINE, post_line / wait_line): a
 * waiting rank gets flag and data with one cache-line transfer (one node:
 * local index = rank). shm_flat's small blocks; the SMP all-gathers' on
 * one node (algo/smp_common.h). */
static inline int kp_shm_allgather_lines(kp_sched *s)
{
    const int P = s->P, me = s->rank;
    const int64_t m = s->bytes;
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_LINE, (int64_t)me * KP_LINE + 8, m);
    kp_sched_copy(s, KP_BUF_SEND, 0, KP_BUF_RECV, (int64_t)me * m, m);
    kp_sched_next_round(s);
    kp_shm_wait_all(s, kp_sched_post_line(s), 1);
    kp_sched_next_round(s);
    for (int q = 0; q < P; q++)
        if (q != me)
            kp_sched_copy(s, KP_BUF_LINE, (int64_t)q * KP_LINE + 8, KP_BUF_RECV, (int64_t)q * m, m);
    return kp_sched_finish(s);
}

#endif /* KP_SHM_COMMON_H */
