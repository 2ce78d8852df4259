/*
 * Forced algorithms on small communicators (issue 7): every algorithm of
 * every collective with every parameter value 1..8 (tree: 1 and 2, the only
 * values it has), P = 1..8, on five node layouts (every rank its own node;
 * one node; one node without cross-memory attach; nodes of 2; nodes of 3
 * ranks), bytes 0 and 5 (barrier: 0), every root (gather), with and without
 * MPI_IN_PLACE (not for the barrier).
 *
 * Each combination must pass the checker, or be refused for a reason that is
 * not the size of its parameter. The rules below are written from the
 * documentation, independently of the registry:
 *  - a parameter beyond P's range runs as the largest value that applies:
 *    k or n >= the ranks it counts (P; the nodes for smp_*) runs as that
 *    count - 1 (at least 1); C > P runs as P (concurrent_exchange) or as 2,
 *    or P when P <= 2 (concurrent_exchange_split);
 *  - refusals left: one-node algorithms (shm_*) on several nodes or, for
 *    single copy, without cross-memory attach; concurrent_exchange with a
 *    C <= P that does not divide P into a power of two; the split variant
 *    on a P that is no power of two, or with C <= P other than 2 on P > 2.
 * So at P = 1 nothing is refused, and at P = 2 only one-node algorithms on
 * two nodes or without cross-memory attach.
 *
 * Also: the plan name (kp_algo_format_on) is "name:k=<value that runs>",
 * followed by " (k=<given> clamped: P=<P>)" (or ": <n> nodes") exactly when
 * the value was clamped; and a clamped build is the very schedule of the
 * value it names (compared rank by rank through kp_sched_dump).
 */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long passed, failed, refused;

static void result(int good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int good, const char *fmt, ...)
{
    if (good) {
        passed++;
        return;
    }
    if (failed++ < 30) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "FAIL ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
}

static int pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }

#define collname(c) kp_coll_name(c)

/* which parameter the algorithm takes ("" for none) */
static const char *param_of(const kp_algo *a)
{
    return a->params & KP_PARAM_K       ? "k"
           : a->params & KP_PARAM_N     ? "n"
           : a->params & KP_PARAM_C     ? "C"
           : a->params & KP_PARAM_TREE  ? "tree"
           : a->params & KP_PARAM_CHUNK ? "chunk_kb"
                                        : "";
}

static kp_params with_value(const char *pn, int v)
{
    kp_params p = {0};
    if (!strcmp(pn, "k"))
        p.k = v;
    else if (!strcmp(pn, "n"))
        p.n = v;
    else if (!strcmp(pn, "C"))
        p.C = v;
    else if (!strcmp(pn, "tree"))
        p.tree = v;
    else if (!strcmp(pn, "chunk_kb"))
        p.chunk_kb = v;
    return p;
}

static int is_smp(const char *name) { return !strncmp(name, "smp", 3); }

/* the value that runs for given value v (0: the parameter takes no part) */
static int runs_as(const kp_algo *a, const char *pn, int v, int P, int nnodes)
{
    if (!strcmp(pn, "k") || !strcmp(pn, "n")) {
        int count = is_smp(a->name) ? nnodes : P;
        int most = count > 1 ? count - 1 : 1;
        return v > most ? most : v;
    }
    if (!strcmp(pn, "C") && v > P)
        return !strcmp(a->name, "concurrent_exchange_split") && P > 2 ? 2 : P;
    return v;
}

/* expected refusal code, 0 when the combination must run */
static int must_refuse(const kp_algo *a, int v, int P, int nnodes, int cma)
{
    const char *nm = a->name;
    if (!strncmp(nm, "shm_", 4))
        return P > 1 && (nnodes > 1 || (!cma && !strcmp(nm, "shm_single_copy"))) ? KP_ERR_UNSUPPORTED : 0;
    if (a->coll == KP_COLL_ALLGATHER && !strcmp(nm, "concurrent_exchange"))
        return v <= P && !(P % v == 0 && pow2(P / v)) ? KP_ERR_UNSUPPORTED : 0;
    if (a->coll == KP_COLL_ALLGATHER && !strcmp(nm, "concurrent_exchange_split"))
        return !pow2(P) ? KP_ERR_UNSUPPORTED : (v <= P && v != 2 && P > 2) ? KP_ERR_UNSUPPORTED : 0;
    return 0;
}

/* "name", "name:k=3" or "name:k=1 (k=8 clamped: P=2)" / "(... : 2 nodes)" */
static void expected_name(const kp_algo *a, const char *pn, int v, int P, int nnodes, char *out, size_t len)
{
    if (!*pn) {
        snprintf(out, len, "%s", a->name);
        return;
    }
    int e = runs_as(a, pn, v, P, nnodes);
    int n = snprintf(out, len, "%s:%s=%d", a->name, pn, e);
    if (strcmp(pn, "chunk_kb") && (a->params & KP_PARAM_CHUNK)) /* a second parameter (bcast smp): its default */
        n += snprintf(out + n, len - (size_t)n, ",chunk_kb=%d", a->defaults.chunk_kb);
    if (e == v)
        return;
    if (is_smp(a->name))
        snprintf(out + n, len - (size_t)n, " (%s=%d clamped: %d node%s)", pn, v, nnodes, nnodes == 1 ? "" : "s");
    else
        snprintf(out + n, len - (size_t)n, " (%s=%d clamped: P=%d)", pn, v, P);
}

/* every rank's schedule as text; NULL when some rank refuses */
static char *dump_all(const kp_algo *a, const kp_params *p, const kp_layout *L, int P, int64_t bytes, int root,
                      int ip)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    int bad = 0;
    for (int r = 0; r < P; r++) {
        kp_sched s;
        if (kp_algo_build_on(a, p, L, r, P, bytes, root, ip, &s) == KP_SUCCESS)
            kp_sched_dump(&s, f);
        else
            bad = 1;
        kp_sched_free(&s);
    }
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

enum { OWN, ONE, ONE_NOCMA, N2, N3, NLAYOUTS };
static const char *lname[NLAYOUTS] = {"own nodes", "one node", "one node, no CMA", "nodes of 2", "nodes of 3"};

static void layout(int kind, int P, kp_layout *L)
{
    int ids[8];
    for (int r = 0; r < P; r++)
        ids[r] = kind == OWN ? r : kind == N2 ? r / 2 : kind == N3 ? r / 3 : 0;
    if (kp_layout_init(L, P, ids, kind != ONE_NOCMA)) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
}

int main(void)
{
    static const int64_t sizes[] = {0, 5};
    long at_small = 0; /* combinations at P <= 2, all of which must run but for shm_* across nodes */
    for (int coll = 0; coll < KP_COLL_COUNT; coll++)
        for (int i = 0; i < kp_algo_count(coll); i++) {
            const kp_algo *a = kp_algo_at(coll, i);
            const char *pn = param_of(a);
            const int vmax = !*pn ? 1 : !strcmp(pn, "tree") ? 2 : 8;
            for (int v = 1; v <= vmax; v++) {
                kp_params prm = with_value(pn, v);
                for (int P = 1; P <= 8; P++)
                    for (int lk = 0; lk < NLAYOUTS; lk++) {
                        kp_layout L;
                        layout(lk, P, &L);
                        const int want = must_refuse(a, v, P, L.nnodes, L.cma);
                        char want_name[128], name[128], given[64];
                        snprintf(given, sizeof(given), "%s%s%s=%d", a->name, *pn ? ":" : "", pn, v);
                        if (!*pn)
                            snprintf(given, sizeof(given), "%s", a->name);
                        expected_name(a, pn, v, P, L.nnodes, want_name, sizeof(want_name));
                        kp_algo_format_on(a, &prm, &L, P, name, sizeof(name));
                        result(!strcmp(name, want_name), "%s %s P=%d (%s): named \"%s\", expected \"%s\"",
                               collname(coll), given, P, lname[lk], name, want_name);
                        const int nsz = coll == KP_COLL_BARRIER ? 1 : 2;
                        const int nroot = coll == KP_COLL_GATHER ? P : 1;
                        const int nip = coll == KP_COLL_BARRIER ? 1 : 2;
                        for (int b = 0; b < nsz; b++)
                            for (int rt = 0; rt < nroot; rt++)
                                for (int ip = 0; ip < nip; ip++) {
                                    kp_check_result res;
                                    int64_t off[9]; /* reduce_scatter: the vector split evenly */
                                    for (int j = 0; j <= P; j++)
                                        off[j] = sizes[b] * j / P;
                                    kp_check_red_on(a, &prm, &L, P, sizes[b], rt, ip, 1, 1,
                                                    coll == KP_COLL_REDUCE_SCATTER ? off : NULL, &res);
                                    int good = want ? res.refused && res.refuse_code == want && res.msg[0]
                                                    : !res.refused && res.ok;
                                    result(good, "%s %s P=%d (%s) bytes=%lld root=%d%s: expected %s, got %s: %s",
                                           collname(coll), given, P, lname[lk], (long long)sizes[b], rt,
                                           ip ? " in-place" : "", want ? "a refusal" : "success",
                                           res.refused ? "a refusal" : res.ok ? "success" : "an error", res.msg);
                                    refused += good && want;
                                    at_small += P <= 2;
                                    result(P > 2 || !want || (!strncmp(a->name, "shm_", 4) && lk != ONE),
                                           "%s %s P=%d (%s): a refusal at P <= 2", collname(coll), given, P,
                                           lname[lk]);
                                }
                        /* a clamped build is the schedule of the value it names */
                        const int e = *pn ? runs_as(a, pn, v, P, L.nnodes) : v;
                        if (e != v && !want) {
                            kp_params eff = with_value(pn, e);
                            const int64_t bytes = coll == KP_COLL_BARRIER ? 0 : 5;
                            char *x = dump_all(a, &prm, &L, P, bytes, 0, 0);
                            char *y = dump_all(a, &eff, &L, P, bytes, 0, 0);
                            result(x && y && !strcmp(x, y), "%s %s P=%d (%s): the schedule is not that of %s=%d",
                                   collname(coll), given, P, lname[lk], pn, e);
                            free(x);
                            free(y);
                        }
                        kp_layout_free(&L);
                    }
            }
        }
    printf("(%ld of the passes are expected refusals; %ld combinations at P <= 2)\n", refused, at_small);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed != 0;
}
