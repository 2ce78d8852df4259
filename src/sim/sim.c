/*
 * kport-sim's front end (sim.h): the configuration checked, every rank's
 * schedule built through the registry (kp_algo_build_on: kport's defaults
 * and clamping) and appended to the timing engine's streams one rank at a
 * time (src/timing/stream.c), then the engine run under the chosen rules
 * (src/timing/des.c: LogGOPSim's, the default; src/timing/walk.c: the cost
 * model's executor rules), and the results: each rank's time, min, median
 * and max, the critical path (LogGOPSim's rules). docs/SIMULATOR.md is the
 * user's account.
 */
#include "sim/sim.h"

#include "timing/engine.h"

#include "kport.h"

#include <unistd.h>

/* ---- the node layout ------------------------------------------------------ */

int kp_sim_block_layout(kp_layout *L, int P, int n)
{
    return kp_layout_block(L, P, n, 1);
}

void kp_sim_split_blocks(int P, int64_t bytes, int64_t elem, int uneven, int64_t *off)
{
    const int64_t n = bytes / elem;
    int64_t total = 0, acc = 0;
    for (int j = 0; j < P; j++)
        total += uneven ? j % 3 : 1;
    off[0] = 0;
    for (int j = 0; j < P; j++) { /* n * acc fits: n < 2^50, acc <= 2 P <= 2^31 */
        acc += uneven ? j % 3 : 1;
        off[j + 1] = (total ? n * acc / total : j == P - 1 ? n : 0) * elem;
    }
}

/* ---- building the streams, rank by rank ----------------------------------------- */

static int build_one(const kp_sim_config *c, const kp_layout *L, int rank, int P, kp_sched *sc)
{
    return kp_algo_build_red_on(c->algo, &c->prm, L, rank, P, c->bytes, c->root, c->inplace, c->elem > 0 ? c->elem : 1,
                                !c->noncommutative, c->block_off, sc);
}

static int build(sim *s, const kp_sim_config *c, const kp_layout *L, double t0)
{
    kp_sim_result *r = s->r;
    double last = t0;
    for (int rank = 0; rank < s->P; rank++) {
        kp_sched sc;
        int rc = build_one(c, L, rank, s->P, &sc);
        if (rc != KP_SUCCESS) {
            snprintf(r->msg, sizeof r->msg, "%s", sc.errmsg[0] ? sc.errmsg : "the builder failed");
            kp_sched_free(&sc);
            if (rc == KP_ERR_PARAM || rc == KP_ERR_UNSUPPORTED) {
                r->refused = 1;
                return s->err = -1;
            }
            return s->err = rc;
        }
        if (rank == 0 && s->limit) {
            /* schedules that cannot fit: say so at once. The sample is the smaller of ranks 0 and
             * P/2, so a root's P operations in a gather do not count for every rank. */
            uint64_t est = (uint64_t)sc.nops;
            kp_sched mid;
            if (s->P > 1 && build_one(c, L, s->P / 2, s->P, &mid) == KP_SUCCESS &&
                (uint64_t)mid.nops < est)
                est = (uint64_t)mid.nops;
            if (s->P > 1)
                kp_sched_free(&mid);
            if ((double)est * (double)s->P * sizeof(sop) > (double)s->limit) {
                snprintf(r->msg, sizeof r->msg,
                         "the schedules need about %.1f GiB (%llu operations per rank, 8 bytes each), more than "
                         "the %.1f GiB available",
                         (double)est * (double)s->P * sizeof(sop) / (1 << 30), (unsigned long long)est,
                         (double)s->limit / (1 << 30));
                kp_sched_free(&sc);
                return s->err = KP_ERR_NOMEM;
            }
        }
        rc = kp_eng_add(s, &sc, rank);
        if (rc) {
            kp_sched_free(&sc);
            return s->err = rc;
        }
        kp_sched_free(&sc);
        if (c->progress && (rank & 0xffff) == 0) {
            double w = kp_eng_now();
            if (w - t0 > 2.0 && w - last >= 1.0) {
                last = w;
                c->progress(c->progress_arg, "build", 0.0, (uint64_t)rank, (uint64_t)s->P, w - t0);
            }
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int kp_sim_run(const kp_sim_config *c, kp_sim_result *r)
{
    memset(r, 0, sizeof *r);
    sim S = {0};
    sim *s = &S;
    s->m = &c->m;
    s->r = r;
    s->P = c->P;
    s->ports = c->ports < 1 ? 1 : c->ports;
    s->rails = c->rails < 0 ? 0 : c->rails;
    s->nsize = c->node_size > 1 ? c->node_size : 1;
    s->zero_wrap = c->zero_wrap;
    s->progress = c->progress;
    s->progress_arg = c->progress_arg;
    /* 90% of the memory available when the run starts */
    const long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    s->limit = pages > 0 && psize > 0 ? (size_t)pages / 10 * 9 * (size_t)psize : 0;
    if (!c->algo || c->P < 1 || c->P > (1 << 30) || c->bytes < 0 || c->ports > 64 || c->rails > 64 ||
        c->root < 0 || c->root >= c->P) {
        snprintf(r->msg, sizeof r->msg, "invalid configuration (algorithm, P = %d, bytes, ports, rails or root)",
                 c->P);
        return KP_ERR_PARAM;
    }
    if (c->rules == KP_RULES_EXECUTOR && (s->ports > 1 || s->rails || c->zero_wrap)) {
        snprintf(r->msg, sizeof r->msg,
                 "ports, rails and LogGOPSim's zero-byte costs are LogGOPSim's rules only (not the executor's)");
        return KP_ERR_PARAM;
    }
    if (kp_params_check(&c->m, r->msg, sizeof r->msg))
        return KP_ERR_PARAM;
    s->nnodes = (c->P + s->nsize - 1) / s->nsize;
    kp_algo_format_on(c->algo, &c->prm, NULL, c->P, r->algorithm, sizeof r->algorithm);
    kp_layout L, *Lp = NULL;
    if (s->nsize > 1) {
        if (kp_sim_block_layout(&L, c->P, s->nsize)) {
            snprintf(r->msg, sizeof r->msg, "out of memory for the node layout");
            return KP_ERR_NOMEM;
        }
        Lp = &L;
        s->mem += (size_t)c->P * 4 * sizeof(int);
        kp_algo_format_on(c->algo, &c->prm, Lp, c->P, r->algorithm, sizeof r->algorithm);
    }
    const double t0 = kp_eng_now();
    int rc = kp_eng_begin(s);
    if (rc)
        goto out;
    if (build(s, c, Lp, t0)) {
        rc = s->err < 0 ? KP_SUCCESS : s->err; /* a refusal is reported, not an error */
        goto out;
    }
    if (Lp) {
        kp_layout_free(Lp);
        Lp = NULL;
        s->mem -= (size_t)c->P * 4 * sizeof(int);
    }
    if ((rc = kp_eng_end(s)))
        goto out;
    const double t1 = kp_eng_now();
    r->build_s = t1 - t0;
    if ((rc = kp_eng_run(s, c->rules, 0, t0)))
        goto out;
    r->sim_s = kp_eng_now() - t1;
    /* min and median from a sorted copy (the schedules are gone by now) */
    free(s->ops);
    s->ops = NULL;
    double *sorted = malloc((size_t)c->P * sizeof(double));
    if (sorted) {
        memcpy(sorted, r->rank_ns, (size_t)c->P * sizeof(double));
        qsort(sorted, (size_t)c->P, sizeof(double), cmp_double);
        r->min_ns = sorted[0];
        r->median_ns = c->P % 2 ? sorted[c->P / 2] : 0.5 * (sorted[c->P / 2 - 1] + sorted[c->P / 2]);
        free(sorted);
    } else {
        rc = kp_eng_nomem(s);
    }
out:
    if (Lp)
        kp_layout_free(Lp);
    r->mem_bytes = s->peak;
    kp_eng_free(s);
    if (rc != KP_SUCCESS)
        kp_sim_result_free(r);
    return rc;
}
