/*
 * The registry: one table of every algorithm, its collective, parameters,
 * defaults and builder (like MPICH's coll_algorithms.txt), plus parsing of
 * "name[:k=3,C=2]" specifications.
 */
#include "algo/algo.h"
#include "kport.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kp_algo registry[] = {
    /* all-gather */
    {"ring", KP_COLL_ALLGATHER, kp_allgather_ring_build, 0, {0},
     "P-1 neighbour steps; bandwidth-optimal baseline"},
    {"recursive_doubling", KP_COLL_ALLGATHER, kp_allgather_recursive_doubling_build, 0, {0},
     "pairwise exchange, log2 P steps (+2 when P is not a power of two)"},
    {"direct", KP_COLL_ALLGATHER, kp_allgather_direct_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: own block to k ranks per step, ceil((P-1)/k) steps"},
    {"standard_exchange", KP_COLL_ALLGATHER, kp_allgather_standard_exchange_build, KP_PARAM_K, {.k = 2},
     "k-port recursive doubling in groups of k+1"},
    {"bruck", KP_COLL_ALLGATHER, kp_allgather_bruck_build, KP_PARAM_K, {.k = 2},
     "k-port Bruck, ceil(log_{k+1} P) steps, any P"},
    {"concurrent_exchange", KP_COLL_ALLGATHER, kp_allgather_concurrent_exchange_build, KP_PARAM_C, {.C = 2},
     "C groups, log2(P/C) pairwise steps plus sends to the peer-of-pair in every other group"},
    {"concurrent_exchange_split", KP_COLL_ALLGATHER, kp_allgather_concurrent_exchange_split_build, KP_PARAM_C,
     {.C = 2}, "C = 2: half of every exchange to the pair, half to the co-pair"},
    {"shm_flat", KP_COLL_ALLGATHER, kp_allgather_shm_flat_build, KP_PARAM_CHUNK, {.chunk_kb = 0},
     "one node: blocks through the shared segment, pipelined in chunks (chunk_kb=0: automatic)"},
    {"shm_single_copy", KP_COLL_ALLGATHER, kp_allgather_shm_single_copy_build, 0, {0},
     "one node: every rank reads its peers' send buffers directly (cross-memory attach)"},
    {"smp_gather_bcast", KP_COLL_ALLGATHER, kp_allgather_smp_gather_bcast_build, KP_PARAM_TREE, {.tree = 1},
     "shared-memory gather per node, leaders gather (tree=1 binomial, tree=2 direct), broadcast"},
    {"smp_direct", KP_COLL_ALLGATHER, kp_allgather_smp_direct_build, KP_PARAM_K, {.k = 2},
     "shared-memory gather, leaders' k-port Direct, shared-memory broadcast, copy-out overlapped"},
    {"smp_bruck", KP_COLL_ALLGATHER, kp_allgather_smp_bruck_build, KP_PARAM_K, {.k = 2},
     "shared-memory gather, leaders' k-port Bruck placing blocks directly, shared-memory broadcast"},
    /* barrier */
    {"dissemination", KP_COLL_BARRIER, kp_barrier_dissemination_build, 0, {0},
     "ceil(log2 P) rounds, peer (p + 2^r) mod P"},
    {"nway_dissemination", KP_COLL_BARRIER, kp_barrier_nway_dissemination_build, KP_PARAM_N, {.n = 2},
     "ceil(log_{n+1} P) rounds, n peers (p + i (n+1)^r) mod P"},
    {"smp", KP_COLL_BARRIER, kp_barrier_smp_build, KP_PARAM_N, {.n = 2},
     "shared-memory arrival/release per node, n-way dissemination among leaders"},
    {"shm_flat", KP_COLL_BARRIER, kp_barrier_shm_flat_build, 0, {0},
     "one node: every rank posts on its flag line and waits for all the others"},
    /* gather */
    {"binomial", KP_COLL_GATHER, kp_gather_binomial_build, 0, {0}, "binomial tree towards the root, log2 P steps"},
    {"direct", KP_COLL_GATHER, kp_gather_direct_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: every rank sends to the root, k in flight at the root"},
    {"smp", KP_COLL_GATHER, kp_gather_smp_build, 0, {0},
     "shared-memory gather per node, leaders send node blocks to the root"},
    {"shm_single_copy", KP_COLL_GATHER, kp_gather_shm_single_copy_build, 0, {0},
     "one node: every rank writes its block into the root's buffer (cross-memory attach)"},
    /* all-to-all */
    {"pairwise", KP_COLL_ALLTOALL, kp_alltoall_pairwise_build, 0, {0}, "P-1 steps of pairwise exchange"},
    {"direct", KP_COLL_ALLTOALL, kp_alltoall_direct_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: k exchanges in flight, wrap-around peers"},
    {"bruck", KP_COLL_ALLTOALL, kp_alltoall_bruck_build, KP_PARAM_K, {.k = 1},
     "k-port Bruck for small messages, ceil(log_{k+1} P) steps"},
    {"shm_flat", KP_COLL_ALLTOALL, kp_alltoall_shm_flat_build, 0, {0},
     "one node: every rank's blocks through the shared segment, two copies"},
    {"shm_single_copy", KP_COLL_ALLTOALL, kp_alltoall_shm_single_copy_build, 0, {0},
     "one node: every rank reads its blocks from the peers' send buffers (cross-memory attach)"},
};

#define NREG ((int)(sizeof(registry) / sizeof(registry[0])))

int kp_algo_count(int coll)
{
    int n = 0;
    for (int i = 0; i < NREG; i++)
        n += registry[i].coll == coll;
    return n;
}

const kp_algo *kp_algo_at(int coll, int idx)
{
    for (int i = 0; i < NREG; i++)
        if (registry[i].coll == coll && idx-- == 0)
            return &registry[i];
    return NULL;
}

const kp_algo *kp_algo_find(int coll, const char *name)
{
    for (int i = 0; i < NREG; i++)
        if (registry[i].coll == coll && strcmp(registry[i].name, name) == 0)
            return &registry[i];
    return NULL;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < -1000000 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

int kp_algo_parse(int coll, const char *spec, const kp_algo **algo, kp_params *prm, char *err, int errlen)
{
    char buf[256];
    *algo = NULL;
    memset(prm, 0, sizeof(*prm));
    if (!spec) {
        return KP_SUCCESS;
    }
    while (isspace((unsigned char)*spec))
        spec++;
    if (strlen(spec) >= sizeof(buf)) {
        snprintf(err, (size_t)errlen, "algorithm specification too long");
        return KP_ERR_PARAM;
    }
    strcpy(buf, spec);
    for (char *e = buf + strlen(buf); e > buf && isspace((unsigned char)e[-1]);)
        *--e = '\0';
    char *params = strchr(buf, ':');
    if (params)
        *params++ = '\0';
    if (buf[0] == '\0' || strcmp(buf, "auto") == 0) {
        if (params && *params) {
            snprintf(err, (size_t)errlen, "\"auto\" takes no parameters (got \"%s\")", params);
            return KP_ERR_PARAM;
        }
        return KP_SUCCESS;
    }
    const kp_algo *a = kp_algo_find(coll, buf);
    if (!a) {
        int n = snprintf(err, (size_t)errlen, "unknown algorithm \"%s\"; known:", buf);
        for (int i = 0; i < kp_algo_count(coll) && n < errlen; i++)
            n += snprintf(err + n, (size_t)(errlen - n), " %s", kp_algo_at(coll, i)->name);
        return KP_ERR_PARAM;
    }
    *prm = a->defaults;
    for (char *tok = params ? strtok(params, ",") : NULL; tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            snprintf(err, (size_t)errlen, "%s: parameter \"%s\" is not name=value", a->name, tok);
            return KP_ERR_PARAM;
        }
        *eq = '\0';
        int v;
        int *slot = NULL;
        unsigned bit = 0;
        if (strcmp(tok, "k") == 0) {
            slot = &prm->k;
            bit = KP_PARAM_K;
        } else if (strcmp(tok, "C") == 0 || strcmp(tok, "c") == 0) {
            slot = &prm->C;
            bit = KP_PARAM_C;
        } else if (strcmp(tok, "n") == 0) {
            slot = &prm->n;
            bit = KP_PARAM_N;
        } else if (strcmp(tok, "tree") == 0) {
            slot = &prm->tree;
            bit = KP_PARAM_TREE;
        } else if (strcmp(tok, "chunk_kb") == 0) {
            slot = &prm->chunk_kb;
            bit = KP_PARAM_CHUNK;
        }
        if (!slot || !(a->params & bit)) {
            static const char *pname[] = {"k", "C", "n", "tree", "chunk_kb"};
            char takes[64] = "";
            for (int b = 0, n = 0; b < 5; b++)
                if (a->params & (1u << b))
                    n += snprintf(takes + n, sizeof(takes) - (size_t)n, "%s%s", n ? ", " : "", pname[b]);
            snprintf(err, (size_t)errlen, "%s takes no parameter \"%s\" (it takes %s)", a->name, tok,
                     takes[0] ? takes : "none");
            return KP_ERR_PARAM;
        }
        int lo = bit == KP_PARAM_CHUNK ? 0 : 1, hi = bit == KP_PARAM_TREE ? 2 : 1000000;
        if (parse_int(eq + 1, &v) || v < lo || v > hi) {
            snprintf(err, (size_t)errlen, "%s: %s=\"%s\" must be an integer in %d..%d", a->name, tok, eq + 1, lo, hi);
            return KP_ERR_PARAM;
        }
        *slot = v;
    }
    *algo = a;
    return KP_SUCCESS;
}

void kp_algo_format(const kp_algo *a, const kp_params *prm, char *out, int outlen)
{
    if (!a) {
        snprintf(out, (size_t)outlen, "auto");
        return;
    }
    int n = snprintf(out, (size_t)outlen, "%s", a->name);
    if ((a->params & KP_PARAM_K) && n < outlen)
        n += snprintf(out + n, (size_t)(outlen - n), ":k=%d", prm->k);
    if ((a->params & KP_PARAM_C) && n < outlen)
        n += snprintf(out + n, (size_t)(outlen - n), "%sC=%d", (a->params & KP_PARAM_K) ? "," : ":", prm->C);
    if ((a->params & KP_PARAM_N) && n < outlen)
        n += snprintf(out + n, (size_t)(outlen - n), "%sn=%d", (a->params & (KP_PARAM_K | KP_PARAM_C)) ? "," : ":",
                      prm->n);
    if ((a->params & KP_PARAM_TREE) && n < outlen)
        n += snprintf(out + n, (size_t)(outlen - n), "%stree=%d", (a->params & 7u) ? "," : ":", prm->tree);
    if ((a->params & KP_PARAM_CHUNK) && n < outlen)
        snprintf(out + n, (size_t)(outlen - n), "%schunk_kb=%d", (a->params & 15u) ? "," : ":", prm->chunk_kb);
}

int kp_algo_build(const kp_algo *a, const kp_params *prm, int rank, int P, int64_t bytes, kp_sched *s)
{
    return kp_algo_build_ex(a, prm, rank, P, bytes, 0, 0, s);
}

int kp_algo_build_ex(const kp_algo *a, const kp_params *prm, int rank, int P, int64_t bytes, int root, int inplace,
                     kp_sched *s)
{
    return kp_algo_build_on(a, prm, NULL, rank, P, bytes, root, inplace, s);
}

int kp_algo_build_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int rank, int P, int64_t bytes,
                     int root, int inplace, kp_sched *s)
{
    kp_params p = a->defaults;
    if (prm) {
        if ((a->params & KP_PARAM_K) && prm->k)
            p.k = prm->k;
        if ((a->params & KP_PARAM_C) && prm->C)
            p.C = prm->C;
        if ((a->params & KP_PARAM_N) && prm->n)
            p.n = prm->n;
        if ((a->params & KP_PARAM_TREE) && prm->tree)
            p.tree = prm->tree;
        if ((a->params & KP_PARAM_CHUNK) && prm->chunk_kb)
            p.chunk_kb = prm->chunk_kb;
    }
    kp_sched_init_coll(s, a->coll, rank, P, bytes, root, inplace);
    s->layout = L;
    if (((a->params & KP_PARAM_K) && p.k < 1) || ((a->params & KP_PARAM_C) && p.C < 1) ||
        ((a->params & KP_PARAM_N) && p.n < 1) || ((a->params & KP_PARAM_TREE) && (p.tree < 1 || p.tree > 2)) ||
        ((a->params & KP_PARAM_CHUNK) && p.chunk_kb < 0))
        return kp_sched_refuse(s, KP_ERR_PARAM,
                               "%s: invalid parameters (k=%d, C=%d, n=%d >= 1; tree=%d in 1..2; chunk_kb=%d >= 0)",
                               a->name, p.k, p.C, p.n, p.tree, p.chunk_kb);
    int rc = a->build(s, &p);
    if (rc == KP_SUCCESS && s->err)
        rc = s->err;
    return rc;
}
