/*
 * Selection: which algorithm runs a call.
 *
 *  1. A forced algorithm: kp_set_algorithm() from code, else the environment
 *     variable KPORT_<COLL> (KPORT_ALLGATHER=bruck:k=3), read once.
 *  2. If the forced algorithm refuses this call (its builder says it cannot
 *     apply to this P), the fallback policy decides: KPORT_FALLBACK=error
 *     (default: return KP_ERR_UNSUPPORTED), warn (rank 0 prints a warning,
 *     the automatic choice runs), silent (the automatic choice runs).
 *  3. Otherwise the first rule of the tuning file (KPORT_TUNING_FILE,
 *     select/tuning.c) that matches the call and applies at its P.
 *  4. Otherwise the built-in rules of kp_select_auto() (on one node with
 *     calibrated costs, the cost model's pick: calibrate.c).
 *
 * KPORT_VERBOSE=1 prints on rank 0, whenever a plan is first built, which
 * algorithm runs and why.
 */
#include "select/select.h"
#include "select/tuning.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *coll_env[KP_COLL_COUNT] = {"KPORT_ALLGATHER", "KPORT_BARRIER", "KPORT_GATHER",
                                              "KPORT_ALLTOALL", "KPORT_BCAST", "KPORT_SCATTER",
                                              "KPORT_REDUCE", "KPORT_ALLREDUCE",
                                              "KPORT_REDUCE_SCATTER_BLOCK", "KPORT_REDUCE_SCATTER"};

static struct {
    int loaded;
    int load_rc;
    char load_err[300];
    int verbose;
    int fallback;
    int64_t shm_max;                        /* thresholds, see kp_select_auto */
    int64_t single_copy_min[KP_COLL_COUNT]; /* by collective */
    int chunk_kb;
    int single_copy_min_set;                /* KPORT_SINGLE_COPY_MIN given: the fixed rule, not the model */
    int calibrate;                          /* KPORT_CALIBRATE: 0, 1 (default), 2 (force) */
    int verify;                             /* KPORT_VERIFY: 0, 1 (default) */
    int fallback_set; /* by kp_set_fallback: overrides the environment */
    unsigned gen; /* changes whenever a setting does: invalidates fast paths */
    int forced_set[KP_COLL_COUNT]; /* by kp_set_algorithm */
    const kp_algo *forced[KP_COLL_COUNT];
    kp_params forced_prm[KP_COLL_COUNT];
} st;

static _Thread_local char last_algo[KP_COLL_COUNT][128]; /* a plan's name */

/* an integer environment variable in 0..max: 1 read, 0 unset, -1 invalid
 * (recorded as the settings' error) */
static int env_count(const char *name, int64_t max, int64_t *out)
{
    const char *e = getenv(name);
    char *end;
    if (!e || !*e)
        return 0;
    long long x = strtoll(e, &end, 10);
    if (*end || x < 0 || x > max) {
        if (!st.load_rc) {
            st.load_rc = KP_ERR_PARAM;
            snprintf(st.load_err, sizeof(st.load_err), "%s=\"%s\": expected an integer in 0..%lld", name, e,
                     (long long)max);
        }
        return -1;
    }
    *out = x;
    return 1;
}

int kp_settings_load(void)
{
    if (st.loaded)
        return st.load_rc ? kp_error(st.load_rc, "%s", st.load_err) : KP_SUCCESS;
    st.loaded = 1;
    st.shm_max = (int64_t)64 << 20;
    st.single_copy_min[KP_COLL_ALLGATHER] = 8192;
    st.single_copy_min[KP_COLL_GATHER] = 4096;
    st.single_copy_min[KP_COLL_ALLTOALL] = 4096;
    /* bcast and scatter: never by the rules (their single copy measured slower than shm_flat / smp at every
     * size at P = 2 here: 2.6 us floor, 10 against 5.3 us at 128 KiB, erratic above); the calibrated choice
     * still prices it */
    st.single_copy_min[KP_COLL_BCAST] = INT64_MAX;
    st.single_copy_min[KP_COLL_SCATTER] = INT64_MAX;
    st.chunk_kb = 0;
    int64_t x;
    if (env_count("KPORT_SHM_MAX", INT64_MAX, &x) > 0)
        st.shm_max = x;
    if (env_count("KPORT_SINGLE_COPY_MIN", INT64_MAX, &x) > 0) { /* one value for every collective */
        for (int k = 0; k < KP_COLL_COUNT; k++)
            st.single_copy_min[k] = x;
        st.single_copy_min_set = 1;
    }
    if (env_count("KPORT_SHM_CHUNK_KB", 1000000, &x) > 0)
        st.chunk_kb = (int)x;
    st.verbose = kp_verbose();
    st.calibrate = kp_calibrate_mode();
    if (st.calibrate < 0 && !st.load_rc) {
        st.load_rc = KP_ERR_PARAM;
        snprintf(st.load_err, sizeof(st.load_err), "KPORT_CALIBRATE=\"%s\": expected 0, 1 or force",
                 getenv("KPORT_CALIBRATE"));
    }
    const char *v = getenv("KPORT_VERIFY");
    st.verify = 1;
    if (v && *v) {
        if (strcmp(v, "0") == 0)
            st.verify = 0;
        else if (strcmp(v, "1") != 0 && !st.load_rc) {
            st.load_rc = KP_ERR_PARAM;
            snprintf(st.load_err, sizeof(st.load_err), "KPORT_VERIFY=\"%s\": expected 0 or 1", v);
        }
    }
    if (!st.fallback_set) {
        v = getenv("KPORT_FALLBACK");
        if (!v || !*v || strcmp(v, "error") == 0)
            st.fallback = KP_FALLBACK_ERROR;
        else if (strcmp(v, "warn") == 0)
            st.fallback = KP_FALLBACK_WARN;
        else if (strcmp(v, "silent") == 0)
            st.fallback = KP_FALLBACK_SILENT;
        else {
            st.load_rc = KP_ERR_PARAM;
            snprintf(st.load_err, sizeof(st.load_err), "KPORT_FALLBACK=\"%s\": expected error, warn or silent", v);
        }
    }
    for (int c = 0; c < KP_COLL_COUNT && !st.load_rc; c++) {
        if (st.forced_set[c])
            continue;
        v = getenv(coll_env[c]);
        if (!v)
            continue;
        char err[256];
        int rc = kp_algo_parse(c, v, &st.forced[c], &st.forced_prm[c], err, sizeof(err));
        if (rc) {
            st.load_rc = rc;
            snprintf(st.load_err, sizeof(st.load_err), "%s: %s", coll_env[c], err);
        }
    }
    kp_tuning_load(st.verbose); /* KPORT_TUNING_FILE: a bad file is reported and ignored, never an error here */
    return st.load_rc ? kp_error(st.load_rc, "%s", st.load_err) : KP_SUCCESS;
}

int kp_verify_mode(void)
{
    return st.verify;
}

int kp_single_copy_min_set(void)
{
    return st.single_copy_min_set;
}

int64_t kp_shm_max(void)
{
    return st.shm_max;
}

int kp_shm_chunk_kb(void)
{
    return st.chunk_kb;
}

int kp_fallback_policy(void)
{
    return st.fallback;
}

int kp_set_algorithm(enum kp_coll coll, const char *spec)
{
    if ((int)coll < 0 || coll >= KP_COLL_COUNT)
        return kp_error(KP_ERR_PARAM, "kp_set_algorithm: unknown collective %d", (int)coll);
    const kp_algo *a;
    kp_params prm;
    char err[256];
    int rc = kp_algo_parse(coll, spec, &a, &prm, err, sizeof(err));
    if (rc)
        return kp_error(rc, "kp_set_algorithm: %s", err);
    st.forced_set[coll] = 1;
    st.forced[coll] = a;
    st.forced_prm[coll] = prm;
    st.gen++;
    return KP_SUCCESS;
}

int kp_set_fallback(enum kp_fallback policy)
{
    if (policy != KP_FALLBACK_ERROR && policy != KP_FALLBACK_WARN && policy != KP_FALLBACK_SILENT)
        return kp_error(KP_ERR_PARAM, "kp_set_fallback: unknown policy %d", (int)policy);
    st.fallback = policy;
    st.fallback_set = 1;
    st.gen++;
    return KP_SUCCESS;
}

int kp_select_forced(int coll, kp_choice *ch)
{
    ch->algo = st.forced[coll];
    ch->prm = st.forced_prm[coll];
    ch->forced = ch->algo != NULL;
    ch->why[0] = '\0';
    if (ch->forced && st.verbose) /* formatted only when it will be printed */
        snprintf(ch->why, sizeof(ch->why), "forced by %s", st.forced_set[coll] ? "kp_set_algorithm" : coll_env[coll]);
    return KP_SUCCESS;
}

static void pick(kp_choice *ch, int coll, const char *name, kp_params prm, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void pick(kp_choice *ch, int coll, const char *name, kp_params prm, const char *fmt, ...)
{
    ch->algo = kp_algo_find(coll, name);
    if (!ch->algo) { /* a rule naming an algorithm the registry lacks: a kport bug select_plan reports */
        snprintf(ch->why, sizeof(ch->why), "no algorithm \"%s\" for %s", name, kp_coll_name(coll));
        return;
    }
    ch->prm = prm;
    if (!ch->prm.k && !ch->prm.C && !ch->prm.n && !ch->prm.tree && !ch->prm.chunk_kb)
        ch->prm = ch->algo->defaults;
    ch->why[0] = '\0';
    if (!st.verbose) /* formatted only when it will be printed */
        return;
    int n = snprintf(ch->why, sizeof(ch->why), "auto: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ch->why + n, sizeof(ch->why) - (size_t)n, fmt, ap);
    va_end(ap);
}

/*
 * Built-in rules. The thresholds are parameters (environment variables read
 * once, defaults measured on this project's 2-core node: see
 * docs/PERFORMANCE.md, "Thresholds"):
 *   KPORT_SHM_MAX          largest block (bytes) that goes through shared
 *                          memory inside a node; above it, MPI point-to-point
 *   KPORT_SINGLE_COPY_MIN  smallest block read single-copy (cross-memory
 *                          attach) instead of the two-copy shared segment
 *   KPORT_SHM_CHUNK_KB     pipelining chunk of the two-copy path
 *
 * All-gather:
 *   one node, P > 1:   shm_single_copy from KPORT_SINGLE_COPY_MIN when cross-
 *                      memory attach works and ranks do not outnumber cores
 *                      (its two waits then cost a context switch each), else
 *                      shm_flat (up to KPORT_SHM_MAX)
 *   several nodes, some with more than one rank: smp_bruck (k = 2) up to
 *                      8 KiB per block, smp_direct (k = 2) above
 *   otherwise (one rank per node, or blocks above KPORT_SHM_MAX):
 *                      recursive doubling for power-of-two P up to 256 KiB in
 *                      total, Bruck (k = 1) for other P up to 64 KiB, the ring
 * Barrier: smp (n = 2) when some node holds several ranks, else n-way
 * dissemination (n = 2). Gather: on one node shm_single_copy from
 * KPORT_SINGLE_COPY_MIN (with cross-memory attach), else smp when some node
 * holds several ranks, else binomial. All-to-all: on one node
 * shm_single_copy from KPORT_SINGLE_COPY_MIN, else shm_flat; on several
 * nodes Bruck up to 256 B per block (P > 2), pairwise above.
 */
static void auto_allgather(const kp_layout *L, int P, int64_t bytes, kp_choice *ch)
{
    const int coll = KP_COLL_ALLGATHER;
    const int64_t total = bytes * P;
    const kp_params none = {0};
    const int hier = L && L->nnodes < P;
    if (hier && bytes <= st.shm_max) {
        if (L->nnodes == 1) {
            if (L->cma && !L->oversub && bytes >= st.single_copy_min[coll])
                pick(ch, coll, "shm_single_copy", none, "one node, bytes=%lld >= KPORT_SINGLE_COPY_MIN=%lld",
                     (long long)bytes, (long long)st.single_copy_min[coll]);
            else
                pick(ch, coll, "shm_flat", (kp_params){.chunk_kb = st.chunk_kb}, "one node, bytes=%lld%s",
                     (long long)bytes, L->cma ? "" : ", no cross-memory attach");
        } else if (bytes <= 8192) {
            pick(ch, coll, "smp_bruck", (kp_params){.k = 2}, "%d nodes, bytes=%lld <= 8 KiB", L->nnodes,
                 (long long)bytes);
        } else {
            pick(ch, coll, "smp_direct", (kp_params){.k = 2}, "%d nodes, bytes=%lld > 8 KiB", L->nnodes,
                 (long long)bytes);
        }
        return;
    }
    if (kp_is_pow2(P) && total <= ((int64_t)256 << 10))
        pick(ch, coll, "recursive_doubling", none, "P=%d is a power of two and P*bytes=%lld <= 256 KiB", P,
             (long long)total);
    else if (total <= ((int64_t)64 << 10))
        pick(ch, coll, "bruck", (kp_params){.k = 1}, "P*bytes=%lld <= 64 KiB, P=%d not a power of two",
             (long long)total, P);
    else
        pick(ch, coll, "ring", none, "P*bytes=%lld > 64 KiB", (long long)total);
}

/*
 * Broadcast, scatter and the reductions. bytes is the call's vector (bcast,
 * reduce, allreduce, reduce_scatter) or block (scatter,
 * reduce_scatter_block); the rules look at the whole vector V.
 *   one node, P > 1:  the shared-memory algorithm (shm_flat; scatter smp;
 *                     shm_single_copy only from a KPORT_SINGLE_COPY_MIN the
 *                     user sets, with cross-memory attach on cores of their
 *                     own: measured slower than the two copies at every size
 *                     here, the calibrated choice prices both);
 *   several nodes, some with several ranks: smp (shared memory inside each
 *                     node, the leaders' tree or exchange between them);
 *   one rank per node: bcast binomial up to 16 KiB or P <= 3, then scatter
 *                     + Bruck all-gather up to 512 KiB, scatter + ring
 *                     above; scatter binomial; reduce k-nomial (k = 2) up
 *                     to 64 KiB, Rabenseifner above; allreduce recursive
 *                     doubling up to 16 KiB, Rabenseifner above;
 *                     reduce-scatter recursive halving up to 64 KiB,
 *                     pairwise above.
 * Non-commutative operations (commute = 0) take the algorithm that keeps
 * rank order on any layout: k-nomial reduce, recursive-doubling allreduce,
 * pairwise reduce-scatter.
 */
static void auto_more(int coll, const kp_layout *L, int P, int64_t bytes, int commute, kp_choice *ch)
{
    const kp_params none = {0};
    const int64_t V = coll == KP_COLL_SCATTER || coll == KP_COLL_REDUCE_SCATTER_BLOCK ? bytes * P : bytes;
    const int one = L && L->nnodes == 1 && P > 1, hier = L && L->nnodes < P && L->nnodes > 1;
    const int red = coll == KP_COLL_REDUCE || coll == KP_COLL_ALLREDUCE || coll == KP_COLL_REDUCE_SCATTER_BLOCK ||
                    coll == KP_COLL_REDUCE_SCATTER;
    if (red && !commute) {
        pick(ch, coll, coll == KP_COLL_REDUCE ? "knomial" : coll == KP_COLL_ALLREDUCE ? "recursive_doubling" : "pairwise",
             none, "non-commutative operation: rank order on any layout");
        return;
    }
    if (one && V <= st.shm_max) {
        if ((coll == KP_COLL_BCAST || coll == KP_COLL_SCATTER) && L->cma && !L->oversub &&
            bytes >= st.single_copy_min[coll] && kp_algo_find(coll, "shm_single_copy"))
            pick(ch, coll, "shm_single_copy", none, "one node, bytes=%lld >= KPORT_SINGLE_COPY_MIN=%lld",
                 (long long)bytes, (long long)st.single_copy_min[coll]);
        else
            pick(ch, coll, coll == KP_COLL_SCATTER ? "smp" : "shm_flat", none, "one node, %lld bytes in all",
                 (long long)V);
        return;
    }
    if (hier && V <= st.shm_max) {
        pick(ch, coll, "smp", none, "%d ranks on %d nodes, %lld bytes in all", P, L->nnodes, (long long)V);
        return;
    }
    switch (coll) {
    case KP_COLL_BCAST:
        if (V <= 16384 || P <= 3)
            pick(ch, coll, "binomial", none, "bytes=%lld <= 16 KiB or P=%d <= 3", (long long)V, P);
        else if (V <= ((int64_t)512 << 10))
            pick(ch, coll, "scatter_allgather", (kp_params){.k = 1}, "bytes=%lld <= 512 KiB", (long long)V);
        else
            pick(ch, coll, "scatter_ring", none, "bytes=%lld > 512 KiB", (long long)V);
        break;
    case KP_COLL_SCATTER:
        pick(ch, coll, "binomial", none, "P=%d, %lld bytes in all", P, (long long)V);
        break;
    case KP_COLL_REDUCE:
        if (V <= 65536 || P <= 2)
            pick(ch, coll, "knomial", (kp_params){.k = 2}, "bytes=%lld <= 64 KiB or P=%d", (long long)V, P);
        else
            pick(ch, coll, "rabenseifner", none, "bytes=%lld > 64 KiB", (long long)V);
        break;
    case KP_COLL_ALLREDUCE:
        if (V <= 16384 || P <= 2)
            pick(ch, coll, "recursive_doubling", none, "bytes=%lld <= 16 KiB or P=%d", (long long)V, P);
        else
            pick(ch, coll, "rabenseifner", (kp_params){.k = 1}, "bytes=%lld > 16 KiB", (long long)V);
        break;
    default: /* reduce-scatter, both forms */
        if (V <= 65536)
            pick(ch, coll, "recursive_halving", none, "%lld bytes in all <= 64 KiB", (long long)V);
        else
            pick(ch, coll, "pairwise", none, "%lld bytes in all > 64 KiB", (long long)V);
        break;
    }
}

void kp_select_auto(int coll, const kp_layout *L, int P, int64_t bytes, kp_choice *ch)
{
    kp_select_auto_red(coll, L, P, bytes, 1, ch);
}

void kp_select_auto_red(int coll, const kp_layout *L, int P, int64_t bytes, int commute, kp_choice *ch)
{
    memset(ch, 0, sizeof(*ch));
    const kp_params none = {0};
    switch (coll) {
    case KP_COLL_BCAST:
    case KP_COLL_SCATTER:
    case KP_COLL_REDUCE:
    case KP_COLL_ALLREDUCE:
    case KP_COLL_REDUCE_SCATTER_BLOCK:
    case KP_COLL_REDUCE_SCATTER:
        auto_more(coll, L, P, bytes, commute, ch);
        break;
    case KP_COLL_ALLGATHER:
        auto_allgather(L, P, bytes, ch);
        break;
    case KP_COLL_BARRIER:
        if (L && L->nnodes == 1 && P > 1 && P <= 8)
            pick(ch, coll, "shm_flat", none, "P=%d on one node: one round of flags", P);
        else if (L && L->nnodes < P)
            pick(ch, coll, "smp", (kp_params){.n = 2}, "%d ranks on %d nodes: shared-memory arrival/release", P,
                 L->nnodes);
        else
            pick(ch, coll, "nway_dissemination", (kp_params){.n = 2}, L ? "P=%d, one rank per node" : "P=%d, no shared memory", P);
        break;
    case KP_COLL_GATHER:
        if (L && L->nnodes == 1 && P > 1 && L->cma && !L->oversub && bytes >= st.single_copy_min[coll])
            pick(ch, coll, "shm_single_copy", none, "one node, bytes=%lld >= KPORT_SINGLE_COPY_MIN=%lld",
                 (long long)bytes, (long long)st.single_copy_min[coll]);
        else if (L && L->nnodes < P && bytes <= st.shm_max)
            pick(ch, coll, "smp", none, "%d ranks on %d nodes, bytes=%lld", P, L->nnodes, (long long)bytes);
        else
            pick(ch, coll, "binomial", none, "P=%d, bytes=%lld", P, (long long)bytes);
        break;
    default:
        if (L && L->nnodes == 1 && P > 1 && L->cma && !L->oversub && bytes >= st.single_copy_min[coll])
            pick(ch, coll, "shm_single_copy", none, "one node, bytes=%lld >= KPORT_SINGLE_COPY_MIN=%lld",
                 (long long)bytes, (long long)st.single_copy_min[coll]);
        else if (L && L->nnodes == 1 && P > 1 && bytes * P <= st.shm_max)
            pick(ch, coll, "shm_flat", none, "one node, P*bytes=%lld", (long long)(bytes * P));
        else if (bytes <= 256 && P > 2)
            pick(ch, coll, "bruck", none, "bytes=%lld <= 256", (long long)bytes);
        else
            pick(ch, coll, "pairwise", none, "bytes=%lld", (long long)bytes);
        break;
    }
}

void kp_set_last_algorithm(int coll, const kp_plan *pl)
{
    /* cheap: most calls run the same plan as the previous one (plans have
     * unique serial numbers, so a new plan at a freed one's address is
     * still noticed) */
    static _Thread_local uint64_t last_serial[KP_COLL_COUNT];
    if (last_serial[coll] == pl->serial)
        return;
    last_serial[coll] = pl->serial;
    snprintf(last_algo[coll], sizeof(last_algo[coll]), "%s", pl->name);
}

const char *kp_last_algorithm(enum kp_coll coll)
{
    if ((int)coll < 0 || coll >= KP_COLL_COUNT)
        return "";
    return last_algo[coll];
}

int kp_algorithm_count(enum kp_coll coll)
{
    return kp_algo_count(coll);
}

const char *kp_algorithm_name(enum kp_coll coll, int i)
{
    const kp_algo *a = kp_algo_at(coll, i);
    return a ? a->name : NULL;
}

static int select_plan(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **out);

static void say(kp_comm *c, const char *what, int coll, int64_t bytes, const char *name, const char *why)
{
    if (c->rank == 0) {
        fprintf(stderr, "kport: %s %s P=%d bytes=%lld: %s (%s)\n", kp_coll_name(coll), what, c->size, (long long)bytes,
                name, why);
        fflush(stderr);
    }
}

int kp_select_plan(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **out)
{
    kp_plan *last = c->last[coll];
    if (last && last->bytes == bytes && last->root == root && last->inplace == inplace && c->last_gen[coll] == st.gen &&
        (!kp_coll_is_reduction(coll) || kp_plan_red_matches(c, last))) {
        *out = last; /* the same call as the previous one: same choice */
        return KP_SUCCESS;
    }
    int rc = select_plan(c, coll, bytes, root, inplace, out);
    if (rc == KP_SUCCESS) {
        c->last[coll] = *out;
        c->last_gen[coll] = st.gen;
    }
    return rc;
}

static int select_plan(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **out)
{
    kp_choice ch;
    memset(&ch, 0, sizeof(ch));
    c->alt[coll] = NULL; /* set below for the calibrated choice only */
    kp_plan *pl = NULL;
    const char *fell = NULL;
    int rc;
    kp_select_forced(coll, &ch);
    if (ch.forced) {
        rc = kp_plan_get(c, coll, ch.algo, &ch.prm, bytes, root, inplace, &pl);
        if (rc)
            return rc;
        if (!pl->refused) {
            if (st.verbose && !pl->announced)
                say(c, "runs", coll, bytes, pl->name, ch.why);
            pl->announced = 1;
            *out = pl;
            return KP_SUCCESS;
        }
        if (st.fallback == KP_FALLBACK_ERROR)
            return kp_error(pl->refuse_code, "%s (forced by %s) cannot apply: %s", pl->name,
                            st.forced_set[coll] ? "kp_set_algorithm" : coll_env[coll], pl->errmsg);
        /* warned once per communicator and collective: a program whose
         * forced algorithm cannot run (MPI refused its windows, say)
         * would otherwise hear of it for every new size */
        if (st.fallback == KP_FALLBACK_WARN && !pl->announced && !(c->warned & (1u << coll)) && c->rank == 0) {
            c->warned |= 1u << coll;
            fprintf(stderr, "kport: warning: %s cannot apply (%s); using the automatic choice\n", pl->name,
                    pl->errmsg);
            fflush(stderr);
        }
        pl->announced = 1;
        fell = "fallback from a forced algorithm that cannot apply";
    }
    if ((rc = kp_tuning_select(c, coll, bytes, root, inplace, &pl, ch.why, sizeof ch.why)))
        return rc;
    if (pl) { /* the tuning file's first rule that applies */
        if (st.verbose && !pl->announced)
            say(c, "runs", coll, bytes, pl->name, ch.why);
        pl->announced = 1;
        *out = pl;
        return KP_SUCCESS;
    }
    if ((rc = kp_select_auto_on(c, coll, bytes, root, inplace, &ch)))
        return rc;
    c->alt[coll] = ch.alt;
    c->alt_prm[coll] = ch.alt_prm;
    rc = kp_plan_get(c, coll, ch.algo, &ch.prm, bytes, root, inplace, &pl);
    if (rc)
        return rc;
    if (pl->refused && pl->refuse_code == KP_ERR_UNSUPPORTED && (pl->resource || coll >= KP_COLL_BCAST)) {
        /* MPI refused what the plan needs (a segment of this size), or a
         * newer collective's builder refused the layout (an SMP reduction
         * whose nodes' ranks are not consecutive): the rules without
         * shared memory, for this call; the refusal was agreed or depends
         * on the layout only, so every rank goes the same way */
        char why[sizeof ch.why];
        snprintf(why, sizeof why, "%.150s", pl->errmsg);
        kp_select_auto_red(coll, NULL, c->size, bytes, kp_coll_is_reduction(coll) ? c->red.commute : 1, &ch);
        c->alt[coll] = NULL;
        if (!ch.algo)
            return kp_error(KP_ERR_UNSUPPORTED, "%s: %s", kp_coll_name(coll), ch.why);
        if ((rc = kp_plan_get(c, coll, ch.algo, &ch.prm, bytes, root, inplace, &pl)))
            return rc;
        snprintf(ch.why, sizeof ch.why, "%.100s instead", why);
    }
    if (pl->refused) /* the rules must only pick what applies */
        return kp_error(KP_ERR_INTERNAL, "automatic choice %s refused: %s", pl->name, pl->errmsg);
    if (st.verbose && !pl->announced)
        say(c, "runs", coll, bytes, pl->name, fell ? fell : ch.why);
    pl->announced = 1;
    *out = pl;
    return KP_SUCCESS;
}
