/*
 * The automatic choice on a communicator: the built-in rules (select.c) on
 * its layout, the node tier brought up when they ask whether cross-memory
 * attach works, the cost model's pick on one node with calibrated costs
 * (calibrate.c), all remembered per group.
 */
#include "select/select.h"
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

/* The automatic choices made on a communicator's group, most recent first:
 * the calibrated choice prices candidates with the cost model (it builds
 * every rank's schedule), too slow to repeat for every new communicator
 * that takes pooled plans (tens of microseconds against a call's one). A
 * choice depends only on the call's shape, the layout and the agreed
 * costs, all of which travel with the memo. */
#define KP_MEMO 16
typedef struct kp_choice_memo {
    int n, next;
    struct {
        int coll, root, inplace, commute;
        int64_t bytes;
        kp_choice ch;
    } e[KP_MEMO];
} kp_choice_memo;

static int choose_auto(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch);

/* the choice of a reduction depends on whether its operation commutes */
static int commute_of(const kp_comm *c, int coll)
{
    return kp_coll_is_reduction(coll) ? c->red.commute : 1;
}

int kp_select_auto_on(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch)
{
    kp_choice_memo *m = c->memo;
    for (int i = 0; m && i < m->n; i++)
        if (m->e[i].coll == coll && m->e[i].bytes == bytes && m->e[i].root == root && m->e[i].inplace == inplace &&
            m->e[i].commute == commute_of(c, coll)) {
            *ch = m->e[i].ch;
            return KP_SUCCESS;
        }
    int rc = choose_auto(c, coll, bytes, root, inplace, ch);
    if (rc || !c->node_ready) /* decided without the node tier: may change once it is up */
        return rc;
    if (!m && !(m = c->memo = calloc(1, sizeof(*m))))
        return KP_SUCCESS; /* no memo: decide again next time */
    const int i = m->next;
    m->e[i].coll = coll;
    m->e[i].bytes = bytes;
    m->e[i].root = root;
    m->e[i].inplace = inplace;
    m->e[i].commute = commute_of(c, coll);
    m->e[i].ch = *ch;
    m->next = (i + 1) % KP_MEMO;
    if (m->n < KP_MEMO)
        m->n++;
    return KP_SUCCESS;
}

static int choose_auto(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch)
{
    const int commute = commute_of(c, coll);
    kp_select_auto_red(coll, c->shm_refused ? NULL : &c->layout, c->size, bytes, commute, ch);
    if (!ch->algo)
        return kp_error(KP_ERR_UNSUPPORTED, "%s: %s", kp_coll_name(coll), ch->why);
    if (!kp_algo_is_node(ch->algo))
        return KP_SUCCESS;
    if (!c->node_ready) {
        /* the rules asked whether cross-memory attach works: probe (and
         * calibrate), choose again */
        if (kp_plan_cold(c))
            return KP_COLD;
        int rc = kp_topo_node(c);
        if (rc == KP_ERR_UNSUPPORTED && c->shm_refused) { /* MPI made no segment: the rules without one */
            kp_select_auto_red(coll, NULL, c->size, bytes, commute, ch);
            return ch->algo ? KP_SUCCESS : kp_error(KP_ERR_UNSUPPORTED, "%s: %s", kp_coll_name(coll), ch->why);
        }
        if (rc)
            return rc;
        kp_select_auto_red(coll, &c->layout, c->size, bytes, commute, ch);
        if (!ch->algo)
            return kp_error(KP_ERR_UNSUPPORTED, "%s: %s", kp_coll_name(coll), ch->why);
    }
    kp_calibrated_choice(c, coll, bytes, root, inplace, ch);
    return KP_SUCCESS;
}

