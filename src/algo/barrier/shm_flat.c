/*
 * Shared-memory barrier for ranks on one node: every rank posts on its flag
 * line and waits for every other rank's post.
 *
 * One round of flag traffic instead of an arrival and a release through a
 * leader: each rank's flag is the head of its own cache line (KP_BUF_LINE),
 * written once, and read by the others (Qian and Afsahi's lock-free flags,
 * 000_b36fdf3a016ff124.txt section 5.1). No data moves.
 *
 * Cost: T = one flag transfer + (P-1) flag reads per rank.
 * Memory: none besides the node's flag lines.
 * Restrictions: all ranks on one node (else KP_ERR_UNSUPPORTED); for many
 * ranks per node the smp barrier's leader-based arrival reads fewer flags.
 *
 * Example, P = 3: round 0 every rank posts 1 on its line;
 *                 round 1 rank r waits for post 1 of the two others.
 */
#include "algo/shm_common.h"

int kp_barrier_shm_flat_build(kp_sched *s, const kp_params *prm)
{
    (void)prm;
    int rc = kp_shm_one_node(s, "barrier shm_flat", 0);
    if (rc || s->P == 1)
        return rc ? rc : kp_sched_finish(s);
    kp_shm_wait_all(s, kp_sched_post_line(s), 1);
    return kp_sched_finish(s);
}
