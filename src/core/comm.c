/*
 * Per-communicator state, kept as an attribute of the user's communicator
 * and freed when the user frees it (or at MPI_Finalize, through an attribute
 * on MPI_COMM_SELF, whose attributes MPI deletes first).
 *
 * Set-up is paid in tiers, each when a call first needs it:
 *   - the node layout, at the first call (topo.c: derived from the world's
 *     node keys by translating ranks, without communication, once a
 *     communicator spanning MPI_COMM_WORLD has learnt them);
 *   - kport's private duplicate of the communicator, which keeps kport's
 *     point-to-point traffic from ever matching the application's, when the
 *     first plan of an algorithm that sends MPI messages is built;
 *   - the node tier (node communicator, shared segment, cross-memory attach
 *     probe), when the first plan of a shared-memory algorithm is built.
 * Which algorithms need what follows from their names: "shm_*" algorithms
 * work inside one node through shared memory and send no MPI message;
 * "smp*" algorithms use shared memory inside nodes and messages between
 * them; all others only send messages. kp_exec_run reports a plan that
 * needs more than its class promised, so a new algorithm breaking the
 * convention fails its tests instead of hanging.
 *
 * Reuse. When the user frees a communicator, its resources (layout, private
 * duplicate, node communicator, segment with its call counters) go to a
 * pool keyed by the group, and the next communicator with the same ranks in
 * the same order (MPI_Group_compare: MPI_IDENT) takes them without any
 * communication: a loop of MPI_Comm_dup / one call / MPI_Comm_free pays the
 * set-up once. Taking and returning are decided identically on every rank
 * without communication because each is part of a collective over exactly
 * the group's ranks (the first kport call on a communicator, MPI_Comm_free),
 * and a correct MPI program issues collectives on communicators that share
 * ranks in the same order on all of them (else it could deadlock when
 * collectives synchronise). Reusing the private duplicate is as safe as two
 * consecutive calls on one communicator: every message of a call is
 * received within that call, and MPI's non-overtaking order keeps a late
 * rank's last messages ahead of an early rank's next ones. A segment carries
 * its flag counters with it, so no old flag value can satisfy a new wait.
 *
 * Plans travel with the resources (they depend only on the group, the
 * layout and the settings). The pool holds at most one entry per group and
 * KP_POOL_ORDERS per set of processes: pooling a communicator's resources
 * first releases (collectively: every rank of those groups is in this
 * MPI_Comm_free) the pooled entries of the same group, the oldest beyond
 * that number of the same set, and those of proper subsets of the freed
 * communicator's group, so a loop over the same communicators stays at one
 * set of resources each. Everything is released at MPI_Finalize or by
 * kp_release_caches(). The pool and the derived layouts are off under
 * MPI_THREAD_MULTIPLE (communicators created by concurrent threads could
 * be paired differently on different ranks) and with KPORT_COMM_POOL=0.
 *
 * KPORT_SETUP_STATS=1 prints, at MPI_Finalize on rank 0 of MPI_COMM_WORLD,
 * how often each part of the set-up ran and what it cost.
 */
#include "core/core.h"
#include "exec/onesided.h"
#include "topo/topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;
static int hooked; /* finalize hook registered on MPI_COMM_SELF */
static int finalizing; /* release for good, pool nothing */
static kp_comm *live; /* every live state, to release at finalize */
/* one-entry cache in front of MPI_Comm_get_attr: most programs call
 * collectives on one communicator; cleared when that state is freed */
static MPI_Comm hot_comm = MPI_COMM_NULL;
static kp_comm *hot_state;

/* ---- the pool ------------------------------------------------------------------ */

typedef struct pooled {
    struct pooled *next; /* most recently pooled first */
    kp_comm res;         /* the resource fields of a freed state (group, layout, comm, node, shm, ...) */
} pooled;

static pooled *pool;

/* reuse allowed: 1 yes, 0 no (decided once, from the thread level and KPORT_COMM_POOL) */
static int reuse_allowed(void)
{
    static int v = -1;
    if (v < 0) {
        int level = MPI_THREAD_SINGLE;
        MPI_Query_thread(&level);
        const char *e = getenv("KPORT_COMM_POOL");
        v = level != MPI_THREAD_MULTIPLE && !(e && strcmp(e, "0") == 0);
    }
    return v;
}

/* move the resource fields from src to dst (src keeps none) */
static void move_resources(kp_comm *dst, kp_comm *src)
{
    dst->group = src->group;
    dst->layout = src->layout;
    dst->local = src->local;
    dst->node_size = src->node_size;
    dst->oversub = src->oversub;
    dst->node_ready = src->node_ready;
    dst->shm_refused = src->shm_refused; /* a refusal holds for the group */
    memcpy(dst->refused, src->refused, sizeof(dst->refused));
    dst->segc = src->segc; /* agreed per group, as the plans */
    dst->nsegc = src->nsegc;
    dst->capsegc = src->capsegc;
    src->segc = NULL;
    src->nsegc = src->capsegc = 0;
    dst->calls = src->calls; /* the cold policy counts calls per group */
    dst->mach = src->mach;
    dst->calibrated = src->calibrated;
    dst->memo = src->memo;
    dst->verify = src->verify; /* per group and call sequence, as the memo */
    dst->comm = src->comm;
    dst->node = src->node;
    dst->shm = src->shm;
    dst->rma = src->rma; /* windows on the private duplicate: as reusable as it */
    src->rma = NULL;
    /* plans depend on nothing but the group, the layout and the settings */
    dst->plans = src->plans;
    dst->nplans = src->nplans;
    for (kp_plan *pl = dst->plans; pl; pl = pl->next)
        pl->owner = dst;
    memset(dst->last, 0, sizeof(dst->last));
    src->plans = NULL;
    src->nplans = 0;
    memset(src->last, 0, sizeof(src->last));
    src->group = MPI_GROUP_NULL;
    memset(&src->layout, 0, sizeof(src->layout));
    src->comm = src->node = MPI_COMM_NULL;
    memset(&src->shm, 0, sizeof(src->shm));
    src->shm.win = MPI_WIN_NULL;
    src->node_ready = 0;
    src->shm_refused = 0;
    src->calls = 0;
    src->mach = NULL;
    src->calibrated = 0;
    src->memo = NULL;
    src->verify = NULL;
}

static void release_resources(kp_comm *r)
{
    while (r->plans) {
        kp_plan *n = r->plans->next;
        kp_plan_free(r->plans);
        r->plans = n;
    }
    r->nplans = 0;
    kp_rma_release(r); /* collective, before the duplicate it lives on */
    free(r->mach);
    r->mach = NULL;
    free(r->memo);
    r->memo = NULL;
    free(r->segc);
    r->segc = NULL;
    r->nsegc = r->capsegc = 0;
    kp_verify_free(r);
    kp_topo_release(r);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && r->group != MPI_GROUP_NULL)
        MPI_Group_free(&r->group);
    r->group = MPI_GROUP_NULL;
}

/* take the pooled resources of c's group, if any: 1 taken, 0 none */
static int pool_take(kp_comm *c)
{
    for (pooled **pp = &pool; *pp; pp = &(*pp)->next) {
        int same = MPI_UNEQUAL;
        MPI_Group_compare((*pp)->res.group, c->group, &same);
        if (same != MPI_IDENT)
            continue;
        pooled *e = *pp;
        *pp = e->next;
        MPI_Group mine = c->group;
        move_resources(c, &e->res);
        MPI_Group_free(&c->group); /* the same ranks: keep the caller's handle */
        c->group = mine;
        free(e);
        return 1;
    }
    return 0;
}

/* how h relates to g as sets of processes: 0 unrelated, 1 a proper subset,
 * 2 the same set (in any order) */
static int set_relation(MPI_Group h, MPI_Group g)
{
    MPI_Group d;
    int n = 1, hs = 0, gs = 0;
    if (MPI_Group_difference(h, g, &d) != MPI_SUCCESS)
        return 0;
    MPI_Group_size(d, &n);
    MPI_Group_free(&d);
    if (n != 0)
        return 0;
    MPI_Group_size(h, &hs);
    MPI_Group_size(g, &gs);
    return hs == gs ? 2 : 1;
}

/* the user freed c's communicator: keep its resources for the next one.
 * Kept per set of processes: the KP_POOL_ORDERS most recently pooled rank
 * orders (a program that rotates or reverses its ranks keeps them all);
 * entries of proper subsets are released. */
#define KP_POOL_ORDERS 4
static void pool_put(kp_comm *c)
{
    const double t0 = MPI_Wtime();
    int same_set = 0;
    for (pooled **pp = &pool; *pp;) {
        pooled *e = *pp;
        const int rel = set_relation(e->res.group, c->group);
        int same = MPI_UNEQUAL;
        if (rel == 2)
            MPI_Group_compare(e->res.group, c->group, &same);
        if (rel == 1 || same == MPI_IDENT || (rel == 2 && ++same_set >= KP_POOL_ORDERS)) {
            *pp = e->next;
            release_resources(&e->res);
            free(e);
        } else {
            pp = &e->next;
        }
    }
    pooled *e = calloc(1, sizeof(*e));
    if (!e) { /* nothing kept: release now */
        release_resources(c);
        return;
    }
    move_resources(&e->res, c);
    e->next = pool;
    pool = e;
    kp_setup_account(KP_SETUP_POOL_PUT, MPI_Wtime() - t0);
}

static void pool_drain(void)
{
    /* oldest first, the order the entries were pooled in on every rank */
    while (pool) {
        pooled **pp = &pool;
        while ((*pp)->next)
            pp = &(*pp)->next;
        pooled *e = *pp;
        *pp = NULL;
        release_resources(&e->res);
        free(e);
    }
}

/* ---- states ----------------------------------------------------------------- */

static void state_free(kp_comm *c)
{
    if (hot_state == c) {
        hot_state = NULL;
        hot_comm = MPI_COMM_NULL;
    }
    free(c->stage);
    int fin = 0;
    MPI_Finalized(&fin);
    if (!finalizing && !fin && reuse_allowed())
        pool_put(c);
    else
        release_resources(c);
    if (c->gprev)
        c->gprev->gnext = c->gnext;
    else if (live == c)
        live = c->gnext;
    if (c->gnext)
        c->gnext->gprev = c->gprev;
    free(c);
}

static int delete_fn(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm; (void)kv; (void)extra;
    state_free(attr);
    return MPI_SUCCESS;
}

/* copying a communicator does not copy kport's state (the copy's resources
 * come from the pool or its own first call) */
static int finalize_fn(MPI_Comm comm, int kv, void *attr, void *extra)
{
    (void)comm; (void)kv; (void)attr; (void)extra;
    kp_release_caches();
    kp_setup_print();
    if (keyval != MPI_KEYVAL_INVALID)
        MPI_Comm_free_keyval(&keyval);
    hooked = 0;
    return MPI_SUCCESS;
}

void kp_release_caches(void)
{
    finalizing = 1;
    while (live) {
        kp_comm *c = live;
        /* deleting the attribute runs delete_fn, which frees c */
        if (MPI_Comm_delete_attr(c->user, keyval) != MPI_SUCCESS)
            state_free(c);
    }
    pool_drain();
    kp_topo_forget_world();
    finalizing = 0;
}

static int init_keyvals(void)
{
    if (keyval == MPI_KEYVAL_INVALID &&
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "MPI_Comm_create_keyval failed");
    if (!hooked) {
        int self_keyval;
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_fn, &self_keyval, NULL) != MPI_SUCCESS ||
            MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL) != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "cannot register kport's finalize hook on MPI_COMM_SELF");
        MPI_Comm_free_keyval(&self_keyval); /* the attribute keeps it alive */
        hooked = 1;
    }
    return KP_SUCCESS;
}

kp_comm *kp_comm_peek(MPI_Comm comm)
{
    if (hot_state && comm == hot_comm)
        return hot_state;
    return NULL;
}

int kp_comm_get(MPI_Comm comm, kp_comm **out)
{
    void *attr;
    int found = 0;
    if (hot_state && comm == hot_comm) {
        *out = hot_state;
        return KP_SUCCESS;
    }
    if (keyval != MPI_KEYVAL_INVALID) {
        MPI_Comm_get_attr(comm, keyval, &attr, &found);
        if (found) {
            *out = hot_state = attr;
            hot_comm = comm;
            return KP_SUCCESS;
        }
    }
    int rc = init_keyvals();
    if (rc)
        return rc;
    const double t0 = MPI_Wtime();
    kp_comm *c = calloc(1, sizeof(*c));
    if (!c)
        return kp_error(KP_ERR_NOMEM, "out of memory for communicator state");
    c->user = comm;
    c->comm = c->node = MPI_COMM_NULL;
    c->shm.win = MPI_WIN_NULL;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    MPI_Comm_group(comm, &c->group);
    const int reuse = reuse_allowed();
    if (reuse && pool_take(c)) {
        kp_setup_account(KP_SETUP_POOL_HIT, 0);
    } else if ((rc = kp_topo_layout(c, reuse))) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", kp_last_error());
        release_resources(c);
        free(c);
        return kp_error(rc, "%s", msg);
    }
    c->gnext = live;
    if (live)
        live->gprev = c;
    live = c;
    if (MPI_Comm_set_attr(comm, keyval, c) != MPI_SUCCESS) {
        state_free(c);
        return kp_error(KP_ERR_MPI, "MPI_Comm_set_attr failed");
    }
    kp_setup_account(KP_SETUP_STATE, MPI_Wtime() - t0);
    *out = hot_state = c;
    hot_comm = comm;
    return KP_SUCCESS;
}

int kp_comm_stage(kp_comm *c, int64_t n, void **out)
{
    if (n > c->stage_bytes) {
        void *p = realloc(c->stage, (size_t)n);
        if (!p)
            return kp_error(KP_ERR_NOMEM, "out of memory for %lld staging bytes", (long long)n);
        c->stage = p;
        c->stage_bytes = n;
    }
    *out = c->stage;
    return KP_SUCCESS;
}

int kp_node_info(MPI_Comm comm, int *nnodes, int *node, int *local, int *node_size)
{
    int rc;
    kp_comm *c;
    if ((rc = kp_settings_load()) || (rc = kp_check_comm("kp_node_info", comm)) || (rc = kp_comm_get(comm, &c)))
        return rc;
    if (nnodes)
        *nnodes = c->layout.nnodes;
    if (node)
        *node = c->layout.node_of[c->rank];
    if (local)
        *local = c->local;
    if (node_size)
        *node_size = c->node_size;
    return KP_SUCCESS;
}
