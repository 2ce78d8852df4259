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
 * them; all others only send messages. kp_exec_p2p reports a plan that
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

/* ---- set-up accounting ----------------------------------------------------- */

static struct {
    long count[KP_SETUP_NPARTS];
    double secs[KP_SETUP_NPARTS];
} acct;

void kp_setup_account(int part, double seconds)
{
    acct.count[part]++;
    acct.secs[part] += seconds;
}

static void print_stats(void)
{
    static const char *names[KP_SETUP_NPARTS] = {
        "communicator states", "  from the pool", "  layout derived", "  layout communicated",
        "private duplicates",  "node communicators", "segments allocated", "cma probes",
        "calibrations",
        "pooled at free",      "releases"};
    const char *e = getenv("KPORT_SETUP_STATS");
    int wrank = 0;
    if (!e || !*e || strcmp(e, "0") == 0)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (wrank != 0)
        return;
    fprintf(stderr, "kport: set-up on rank 0 (count, total us, us each):\n");
    for (int i = 0; i < KP_SETUP_NPARTS; i++)
        fprintf(stderr, "kport:   %-22s %8ld %10.1f %8.2f\n", names[i], acct.count[i], acct.secs[i] * 1e6,
                acct.count[i] ? acct.secs[i] * 1e6 / (double)acct.count[i] : 0.0);
    fprintf(stderr, "kport:   segments live at exit %d\n", kp_setup_live_segments());
    fflush(stderr);
}

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
    print_stats();
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

/* ---- tiers -------------------------------------------------------------------- */

static int is_shm_algo(const kp_algo *a)
{
    return strncmp(a->name, "shm_", 4) == 0;
}

static int is_node_algo(const kp_algo *a)
{
    return is_shm_algo(a) || strncmp(a->name, "smp", 3) == 0;
}

static long cold_calls;

void kp_set_cold_calls(long n)
{
    cold_calls = n > 0 ? n : 0;
}

/* the cold policy says: serve this call with MPI, set nothing up yet */
static int cold(const kp_comm *c)
{
    return cold_calls > 0 && c->calls <= cold_calls && c->user != MPI_COMM_WORLD;
}

int kp_comm_ready(kp_comm *c, const kp_algo *a)
{
    int rc;
    const int need_node = is_node_algo(a) && !c->node_ready;
    const int need_dup = !is_shm_algo(a) && c->size > 1 && c->comm == MPI_COMM_NULL;
    if (is_node_algo(a) && c->shm_refused) /* known on every rank alike */
        return kp_error(KP_ERR_UNSUPPORTED, "%s", c->refused);
    if ((need_node || need_dup) && cold(c))
        return KP_COLD;
    if (need_node && (rc = kp_topo_node(c)))
        return rc;
    return need_dup ? kp_comm_private(c) : KP_SUCCESS;
}

int kp_comm_private(kp_comm *c)
{
    if (c->comm != MPI_COMM_NULL)
        return KP_SUCCESS;
    const double t0 = MPI_Wtime();
    if (MPI_Comm_dup(c->user, &c->comm) != MPI_SUCCESS) {
        c->comm = MPI_COMM_NULL;
        return kp_error(KP_ERR_MPI, "MPI_Comm_dup failed");
    }
    MPI_Comm_set_name(c->comm, "kport private");
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    kp_setup_account(KP_SETUP_DUP, MPI_Wtime() - t0);
    return KP_SUCCESS;
}

int kp_comm_agree(kp_comm *c, int ok)
{
    int all = ok != 0;
    if (c->size > 1 && PMPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, c->user) != MPI_SUCCESS)
        all = 0; /* not reached under a fatal handler; under another, MPI is broken anyway */
    return all;
}

void kp_comm_refusal_note(kp_comm *c, unsigned kind, const char *what)
{
    if (c->noted & kind)
        return;
    c->noted |= kind;
    if (c->rank == 0 && kp_verbose()) {
        fprintf(stderr, "kport: P=%d: %s\n", c->size, what);
        fflush(stderr);
    }
}

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
        int coll, root, inplace;
        int64_t bytes;
        kp_choice ch;
    } e[KP_MEMO];
} kp_choice_memo;

static int choose_auto(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch);

int kp_comm_select_auto(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch)
{
    kp_choice_memo *m = c->memo;
    for (int i = 0; m && i < m->n; i++)
        if (m->e[i].coll == coll && m->e[i].bytes == bytes && m->e[i].root == root && m->e[i].inplace == inplace) {
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
    m->e[i].ch = *ch;
    m->next = (i + 1) % KP_MEMO;
    if (m->n < KP_MEMO)
        m->n++;
    return KP_SUCCESS;
}

static int choose_auto(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch)
{
    kp_select_auto(coll, c->shm_refused ? NULL : &c->layout, c->size, bytes, ch);
    if (!is_node_algo(ch->algo))
        return KP_SUCCESS;
    if (!c->node_ready) {
        /* the rules asked whether cross-memory attach works: probe (and
         * calibrate), choose again */
        if (cold(c))
            return KP_COLD;
        int rc = kp_topo_node(c);
        if (rc == KP_ERR_UNSUPPORTED && c->shm_refused) { /* MPI made no segment: the rules without one */
            kp_select_auto(coll, NULL, c->size, bytes, ch);
            return KP_SUCCESS;
        }
        if (rc)
            return rc;
        kp_select_auto(coll, &c->layout, c->size, bytes, ch);
    }
    kp_calibrated_choice(c, coll, bytes, root, inplace, ch);
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
