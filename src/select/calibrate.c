/*
 * The default choice on one node, made by the cost model with the node's
 * calibrated costs (measured by src/topo/calibrate.c).
 *
 * The default choice (kp_calibrated_choice): on one node, with two or more
 * ranks and cross-memory attach working, the candidates the built-in rules
 * allow (two-copy shm_flat and the single-copy algorithm of the collective)
 * are priced by the cost model on the communicator's layout and the
 * cheapest runs, except that single copy must be predicted KP_PICK_MARGIN
 * (1.15) times cheaper than the two copies: near the crossover the two
 * predictions are within 10 % of each other, the calibrated fixed cost of
 * a cross-memory-attach call moves 20-30 % between start-ups, and the
 * choice flipped between runs (all-gather and all-to-all 16 KiB, where
 * the two copies measure 1.25-1.35x faster; gather 32 KiB, 1.1x), while
 * the two copies' cost is the steadier of the two; KPORT_VERBOSE=1 prints
 * the candidates' predicted times.
 * Elsewhere (several nodes, no cross-memory attach, oversubscribed nodes:
 * one candidate or none measured; the reductions, which have no
 * single-copy candidate) the built-in rules of select.c decide.
 * A forced algorithm (KPORT_<COLL>, kp_set_algorithm) still wins, and a
 * fixed KPORT_SINGLE_COPY_MIN in the environment keeps the fixed rule.
 */
#include "select/select.h"
#include "model/model.h"

#include <stdio.h>
#include <string.h>

/* The all-gather's two-copy candidate moves blocks of up to 1 MiB whole
 * (chunk_kb = the block), not in shm_flat's automatic 128 KiB chunks above
 * 512 KiB: at P = 2 and 1 MiB the automatic choice ran shm_flat pipelined
 * in 103-107 us while the SMP schedules, which move the block whole on one
 * node, took 86-89 us in the same runs (Open MPI and MPICH,
 * docs/bench/allgather-p2: 1.17-1.21x; issue 40 saw 1.10-1.25x over three
 * runs). Eight chunks cost eight post/wait rounds that the copies do not
 * pay back on two cores, and the cost model prices both the same (105.7
 * and 106.5 us), so it could not tell them apart. KPORT_SHM_CHUNK_KB still
 * decides when given. */
static int allgather_chunk_kb(int64_t bytes)
{
    if (kp_shm_chunk_kb() > 0)
        return kp_shm_chunk_kb();
    return bytes > ((int64_t)512 << 10) && bytes <= ((int64_t)1 << 20) ? (int)((bytes + 1023) >> 10) : 0;
}

/* the single-copy algorithm of a collective */
static const char *single_copy_name(int coll)
{
    return coll == KP_COLL_BARRIER ? NULL : "shm_single_copy";
}

int kp_model_pick(const kp_machine *m, int coll, const kp_layout *L, int P, int64_t bytes, int root, int inplace,
                  kp_choice *ch)
{
    /* the candidates the rules allow on one node, with the rules' parameters */
    const char *names[2] = {"shm_flat", single_copy_name(coll)};
    kp_params prms[2] = {{0}, {0}};
    if (coll == KP_COLL_GATHER || coll == KP_COLL_SCATTER)
        names[0] = "smp"; /* gather's and scatter's two-copy path on one node */
    if (coll == KP_COLL_ALLGATHER)
        prms[0].chunk_kb = allgather_chunk_kb(bytes);
    double t[2] = {-1, -1};
    char line[120];
    int n = snprintf(line, sizeof(line), "model:");
    for (int i = 0; i < 2; i++) {
        const kp_algo *a = names[i] ? kp_algo_find(coll, names[i]) : NULL;
        if (!a)
            continue;
        kp_model_result r;
        memset(&r, 0, sizeof(r));
        const kp_params p = a->params ? prms[i] : a->defaults;
        if (kp_model_predict(m, a, &p, L, P, bytes, root, inplace, &r) || r.refused)
            continue;
        if (n < (int)sizeof(line))
            n += snprintf(line + n, sizeof(line) - (size_t)n, " %s %.2f us", names[i], r.time_ns / 1000);
        t[i] = r.time_ns;
    }
    /* the two copies unless single copy is KP_PICK_MARGIN times cheaper */
    const int pick = t[1] >= 0 && (t[0] < 0 || t[1] * KP_PICK_MARGIN < t[0]) ? 1 : t[0] >= 0 ? 0 : -1;
    if (pick < 0)
        return 0;
    const kp_algo *a = kp_algo_find(coll, names[pick]);
    ch->algo = a;
    ch->prm = a->params ? prms[pick] : a->defaults;
    /* both priced: the other one, for the check by measurement (verify.c) */
    ch->alt = t[0] >= 0 && t[1] >= 0 ? kp_algo_find(coll, names[1 - pick]) : NULL;
    if (ch->alt)
        ch->alt_prm = ch->alt->params ? prms[1 - pick] : ch->alt->defaults;
    ch->forced = 0;
    ch->why[0] = '\0';
    if (kp_verbose())
        snprintf(ch->why, sizeof(ch->why), "auto: one node, calibrated %.*s; %s", 90, line,
                 pick ? "single copy 1.15x cheaper" : "not 1.15x cheaper by single copy");
    return 1;
}

int kp_calibrated_choice(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch)
{
    if (!c->calibrated || !c->mach || c->layout.nnodes != 1 || c->size < 2 || !c->layout.cma ||
        c->layout.oversub || coll == KP_COLL_BARRIER || kp_coll_is_reduction(coll) || kp_single_copy_min_set() ||
        bytes * c->size > kp_shm_max())
        return 0;
    /* a gather's MPI_IN_PLACE is the root's alone: priced without it on
     * every rank, so the ranks cannot choose differently */
    return kp_model_pick(c->mach, coll, &c->layout, c->size, bytes, root, coll == KP_COLL_GATHER ? 0 : inplace, ch);
}
