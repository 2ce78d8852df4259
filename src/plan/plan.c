/*
 * Plans: a schedule plus what running it needs (scratch, request array),
 * cached per communicator and keyed by (collective, algorithm, parameters,
 * bytes), most recently used first, at most KP_PLAN_CACHE_MAX entries. A
 * repeated call finds its plan at the front of the list: it builds and
 * allocates nothing. A builder's refusal is cached too, so a forced
 * algorithm that cannot apply is not rebuilt on every call.
 */
#include "plan/plan.h"
#include "exec/onesided.h"
#include "topo/topo.h"
#include "util/error.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* messages above this are sent as several MPI messages (int counts) */
#define KP_CHUNK ((int64_t)1 << 30)

static int64_t nchunks(int64_t len)
{
    return len == 0 ? 1 : (len + KP_CHUNK - 1) / KP_CHUNK; /* a signal is one message */
}

void kp_plan_free(kp_plan *pl)
{
    if (!pl)
        return;
    kp_sched_free(&pl->sched);
    free(pl->scratch);
    free(pl->reqs);
    free(pl->block_off);
    free(pl);
}

int kp_coll_is_reduction(int coll)
{
    return coll == KP_COLL_REDUCE || coll == KP_COLL_ALLREDUCE || coll == KP_COLL_REDUCE_SCATTER_BLOCK ||
           coll == KP_COLL_REDUCE_SCATTER;
}

/* the reduction key of a call of coll on c: c->red for reductions */
static kp_red red_of(const kp_comm *c, int coll)
{
    if (!kp_coll_is_reduction(coll))
        return (kp_red){1, 1, NULL};
    kp_red r = c->red;
    if (coll != KP_COLL_REDUCE_SCATTER)
        r.block_off = NULL;
    return r;
}

int kp_plan_red_matches(const kp_comm *c, const kp_plan *pl)
{
    const kp_red r = red_of(c, pl->coll);
    if (pl->elem != r.elem || pl->commute != r.commute || !pl->block_off != !r.block_off)
        return 0;
    return !r.block_off || memcmp(pl->block_off, r.block_off, (size_t)(c->size + 1) * sizeof(int64_t)) == 0;
}

/* ---- what a plan needs, brought up when it is built ---- */

static long cold_calls;

void kp_set_cold_calls(long n)
{
    cold_calls = n > 0 ? n : 0;
}

/* the cold policy says: serve this call with MPI, set nothing up yet */
int kp_plan_cold(const kp_comm *c)
{
    return cold_calls > 0 && c->calls <= cold_calls && c->user != MPI_COMM_WORLD;
}

int kp_plan_ready(kp_comm *c, const kp_algo *a)
{
    int rc;
    const int need_node = kp_algo_is_node(a) && !c->node_ready;
    const int need_dup = !kp_algo_is_shm(a) && c->size > 1 && c->comm == MPI_COMM_NULL;
    if (kp_algo_is_node(a) && c->shm_refused) /* known on every rank alike */
        return kp_error(KP_ERR_UNSUPPORTED, "%s", c->refused);
    if ((need_node || need_dup) && kp_plan_cold(c))
        return KP_COLD;
    if (need_node && (rc = kp_topo_node(c)))
        return rc;
    return need_dup ? kp_topo_private(c) : KP_SUCCESS;
}

/* a plan MPI cannot serve: cached as refused (code, kp_last_error's text) */
static int refuse(kp_plan *pl, int code, kp_plan **out)
{
    pl->refused = pl->resource = 1;
    pl->refuse_code = code;
    snprintf(pl->errmsg, sizeof(pl->errmsg), "%s", kp_last_error());
    *out = pl;
    return KP_SUCCESS;
}

/* The segment a plan needs, reserved as the plan is built, and a refusal
 * agreed so that the plan is refused on every rank alike (a node whose
 * segment could not grow must not be left alone while the others run the
 * plan). Plans are built per rank, not per call: the root of a rooted
 * call builds its in-place plan when the others find theirs cached. What
 * is uniform is the call's class (collective, algorithm, parameters,
 * bytes, root: the same on every rank of the call), so:
 *   - on one node every rank sees the same segment and the plans of a
 *     class need the same halves: a plan that needs no growth is admitted
 *     at once, one that does grows and agrees (every rank of the class
 *     needs it in this call);
 *   - across nodes the halves differ per node: the first plan of each
 *     class agrees, every rank, and the outcome is kept per class
 *     (c->segc, never evicted, so every rank finds the same entries). */
static int segment(kp_comm *c, const kp_plan *pl, int uses)
{
    const int64_t half = pl->sched.shm_bytes;
    int i = 0;
    if (c->layout.nnodes == 1) {
        if (!uses || (c->shm.win != MPI_WIN_NULL && half <= c->shm.half))
            return KP_SUCCESS;
    } else {
        for (; i < c->nsegc; i++) {
            const kp_seg_class *e = &c->segc[i];
            if (e->coll == pl->coll && e->algo == pl->algo && e->bytes == pl->bytes && e->root == pl->root &&
                memcmp(&e->prm, &pl->prm, sizeof(e->prm)) == 0)
                break;
        }
        if (i < c->nsegc && c->segc[i].ok && (!uses || half <= c->shm.half))
            return KP_SUCCESS;
    }
    int rc = KP_SUCCESS, ok;
    if (i < c->nsegc && !c->segc[i].ok) {
        ok = 0; /* refused for this class before: known alike everywhere */
        rc = kp_error(KP_ERR_UNSUPPORTED, "MPI refused the segment this call needs");
    } else {
        /* across nodes the outcome is kept on every rank: room for it
         * first (out of memory is an error, as for the plan's own arrays) */
        if (c->layout.nnodes > 1 && c->nsegc == c->capsegc) {
            const int cap = c->capsegc ? 2 * c->capsegc : 8;
            kp_seg_class *n = realloc(c->segc, (size_t)cap * sizeof(*n));
            if (!n)
                return kp_error(KP_ERR_NOMEM, "out of memory for the segment's record");
            c->segc = n;
            c->capsegc = cap;
        }
        rc = uses ? kp_shm_reserve(c, half) : KP_SUCCESS;
        if (rc != KP_SUCCESS && rc != KP_ERR_UNSUPPORTED)
            rc = KP_ERR_UNSUPPORTED; /* whatever failed, the others must hear of it */
        ok = kp_comm_agree(c, rc == KP_SUCCESS);
        if (c->layout.nnodes > 1)
            c->segc[c->nsegc++] = (kp_seg_class){.coll = pl->coll, .root = pl->root, .ok = ok, .algo = pl->algo,
                                                  .prm = pl->prm, .bytes = pl->bytes};
    }
    if (ok)
        return KP_SUCCESS;
    char msg[256], note[400];
    snprintf(msg, sizeof(msg), "%s", rc ? kp_last_error() : "MPI refused the segment on another node");
    snprintf(note, sizeof(note), "shared-memory plans needing a larger segment than MPI grants are refused (%s)",
             msg);
    kp_comm_refusal_note(c, KP_REFUSED_SEGMENT, note);
    return kp_error(KP_ERR_UNSUPPORTED, "%s", msg);
}

static int plan_build(kp_comm *c, int coll, const kp_algo *a, const kp_params *prm, int64_t bytes, int root,
                      int inplace, kp_plan **out)
{
    kp_plan *pl = calloc(1, sizeof(*pl));
    if (!pl)
        return kp_error(KP_ERR_NOMEM, "out of memory for a plan");
    pl->coll = coll;
    pl->algo = a;
    pl->prm = *prm;
    static uint64_t serials;
    pl->serial = ++serials;
    pl->bytes = bytes;
    pl->owner = c;
    pl->root = root;
    pl->inplace = inplace;
    const kp_red red = red_of(c, coll);
    pl->elem = red.elem;
    pl->commute = red.commute;
    if (red.block_off) {
        const size_t n = (size_t)(c->size + 1) * sizeof(int64_t);
        if (!(pl->block_off = malloc(n))) {
            kp_plan_free(pl);
            return kp_error(KP_ERR_NOMEM, "out of memory for a plan's block offsets");
        }
        memcpy(pl->block_off, red.block_off, n);
    }
    /* the name of what runs: clamped parameters show with what was asked
     * ("bruck:k=1 (k=8 clamped: P=2)"), for kp_last_algorithm and KPORT_VERBOSE */
    kp_algo_format_on(a, prm, &c->layout, c->size, pl->name, sizeof(pl->name));
    /* what the algorithm needs on this communicator (collective: every rank
     * builds the same algorithm's plan in the same call) */
    int rc = kp_plan_ready(c, a);
    /* the one-sided transport's windows (collective: every rank builds
     * this plan in this call, and c->comm exists alike everywhere) */
    if (!rc && prm->transport == KP_TRANSPORT_RMA && c->size > 1 && c->comm != MPI_COMM_NULL)
        rc = kp_rma_ready(c, prm->rails, prm->rma_path);
    if (rc == KP_ERR_UNSUPPORTED) /* MPI refused what it needs, on every rank alike: remembered as a refusal */
        return refuse(pl, rc, out);
    if (rc) {
        kp_plan_free(pl);
        return rc;
    }
    rc = kp_algo_build_red_on(a, prm, &c->layout, c->rank, c->size, bytes, root, inplace, pl->elem, pl->commute,
                              pl->block_off, &pl->sched);
    if (rc == KP_ERR_NOMEM || rc == KP_ERR_INTERNAL) {
        rc = kp_error(rc, "%s: %s", pl->name, pl->sched.errmsg);
        kp_plan_free(pl);
        return rc;
    }
    if (rc != KP_SUCCESS) {
        pl->refused = 1;
        pl->refuse_code = rc;
        snprintf(pl->errmsg, sizeof(pl->errmsg), "%s", pl->sched.errmsg);
        kp_sched_free(&pl->sched);
        *out = pl;
        return KP_SUCCESS;
    }
    /* requests: the largest round, counting chunks of huge messages */
    int64_t cur = 0, best = 0;
    const unsigned use = kp_sched_shm_use(&pl->sched);
    pl->uses_flags = (use & KP_USES_FLAGS) != 0;
    pl->uses_segment = (use & KP_USES_SEGMENT) != 0;
    if (kp_algo_is_node(a) && c->node_ready && c->size > 1 &&
        (rc = segment(c, pl, pl->uses_flags || pl->uses_segment)) != KP_SUCCESS) {
        kp_sched_free(&pl->sched);
        if (rc == KP_ERR_UNSUPPORTED)
            return refuse(pl, rc, out);
        kp_plan_free(pl);
        return rc;
    }
    for (int i = 0; i < pl->sched.nops; i++) {
        const kp_op *op = &pl->sched.ops[i];
        if (i > 0 && op->round != pl->sched.ops[i - 1].round)
            cur = 0;
        if (op->kind == KP_OP_SEND)
            cur += nchunks(op->u.send.src.len);
        else if (op->kind == KP_OP_RECV)
            cur += nchunks(op->u.recv.dst.len);
        if (cur > best)
            best = cur;
    }
    if (best > INT_MAX / (int64_t)sizeof(MPI_Request)) {
        kp_plan_free(pl);
        return kp_error(KP_ERR_NOMEM, "a round needs %lld requests", (long long)best);
    }
    pl->maxreq = (int)best;
    /* the executor's order inside a round: posts, receives, sends, copies
     * and peer reads, waits (a stable sort: messages keep their order) */
    static const int rank_of[] = {[KP_OP_POST] = 0, [KP_OP_RECV] = 1, [KP_OP_SEND] = 2,
                                  [KP_OP_COPY] = 3, [KP_OP_PEER_READ] = 3, [KP_OP_PEER_WRITE] = 3,
                                  [KP_OP_REDUCE] = 3,
                                  [KP_OP_WAIT] = 4};
    kp_op *ops = pl->sched.ops;
    for (int i = 1; i < pl->sched.nops; i++) { /* insertion sort: rounds are short */
        kp_op x = ops[i];
        int j = i - 1;
        while (j >= 0 && ops[j].round == x.round && rank_of[ops[j].kind] > rank_of[x.kind]) {
            ops[j + 1] = ops[j];
            j--;
        }
        ops[j + 1] = x;
    }
    pl->reqs = malloc((size_t)(best ? best : 1) * sizeof(MPI_Request));
    if (pl->sched.scratch_bytes > 0)
        pl->scratch = malloc((size_t)pl->sched.scratch_bytes);
    if (!pl->reqs || (pl->sched.scratch_bytes > 0 && !pl->scratch)) {
        kp_plan_free(pl);
        return kp_error(KP_ERR_NOMEM, "out of memory for a plan's %lld scratch bytes",
                        (long long)pl->sched.scratch_bytes);
    }
    *out = pl;
    return KP_SUCCESS;
}

/* every field of kp_params is an int (no padding), so a new parameter can
 * never be forgotten in the key */
_Static_assert(sizeof(kp_params) % sizeof(int) == 0, "kp_params holds ints only");
static int same_params(const kp_params *x, const kp_params *y)
{
    return memcmp(x, y, sizeof(*x)) == 0;
}

int kp_plan_get(kp_comm *c, int coll, const kp_algo *a, const kp_params *prm, int64_t bytes, int root, int inplace,
                kp_plan **out)
{
    kp_plan **pp = &c->plans, *pl;
    kp_plan **last = NULL;
    for (pl = c->plans; pl; pp = &pl->next, pl = pl->next) {
        if (pl->bytes == bytes && pl->algo == a && pl->coll == coll && same_params(&pl->prm, prm) && pl->root == root &&
            pl->inplace == inplace && kp_plan_red_matches(c, pl)) {
            if (pl != c->plans) { /* move to front */
                *pp = pl->next;
                pl->next = c->plans;
                c->plans = pl;
            }
            *out = pl;
            return KP_SUCCESS;
        }
        if (!pl->next)
            last = pp;
    }
    int rc = plan_build(c, coll, a, prm, bytes, root, inplace, &pl);
    if (rc)
        return rc;
    if (c->nplans >= KP_PLAN_CACHE_MAX && last) { /* evict the least recently used */
        kp_plan *old = *last;
        *last = NULL;
        for (int k = 0; k < KP_COLL_COUNT; k++)
            if (c->last[k] == old)
                c->last[k] = NULL;
        kp_plan_free(old);
        c->nplans--;
    }
    pl->next = c->plans;
    c->plans = pl;
    c->nplans++;
    *out = pl;
    return KP_SUCCESS;
}
