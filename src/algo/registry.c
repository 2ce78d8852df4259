/*
 * The registry: one table of every algorithm, its collective, parameters,
 * defaults and builder (like MPICH's coll_algorithms.txt), plus parsing of
 * "name[:k=3,C=2]" specifications.
 */
#include "algo/algo.h"
#include "algo/allgather/peers_ce.h"
#include "kport.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kp_algo registry[] = {
    /* all-gather */
    {"ring", KP_COLL_ALLGATHER, kp_allgather_ring_build, 0, {0},
     "P-1 neighbour steps; bandwidth-optimal baseline", KP_SPAN_RANKS, NULL},
    {"recursive_doubling", KP_COLL_ALLGATHER, kp_allgather_recursive_doubling_build, 0, {0},
     "pairwise exchange, log2 P steps (+2 when P is not a power of two)", KP_SPAN_RANKS, NULL},
    {"direct", KP_COLL_ALLGATHER, kp_allgather_direct_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: own block to k ranks per step, ceil((P-1)/k) steps", KP_SPAN_RANKS, NULL},
    {"standard_exchange", KP_COLL_ALLGATHER, kp_allgather_standard_exchange_build, KP_PARAM_K, {.k = 2},
     "k-port recursive doubling in groups of k+1", KP_SPAN_RANKS, NULL},
    {"bruck", KP_COLL_ALLGATHER, kp_allgather_bruck_build, KP_PARAM_K, {.k = 2},
     "k-port Bruck, ceil(log_{k+1} P) steps, any P", KP_SPAN_RANKS, NULL},
    {"concurrent_exchange", KP_COLL_ALLGATHER, kp_allgather_concurrent_exchange_build, KP_PARAM_C, {.C = 2},
     "C groups, log2(P/C) pairwise steps plus sends to the peer-of-pair in every other group", KP_SPAN_RANKS,
     kp_ce_valid},
    {"concurrent_exchange_split", KP_COLL_ALLGATHER, kp_allgather_concurrent_exchange_split_build, KP_PARAM_C,
     {.C = 2}, "C = 2: half of every exchange to the pair, half to the co-pair", KP_SPAN_RANKS,
     kp_ce_split_c_applies},
    {"shm_flat", KP_COLL_ALLGATHER, kp_allgather_shm_flat_build, KP_PARAM_CHUNK, {.chunk_kb = 0},
     "one node: blocks through the shared segment, pipelined in chunks (chunk_kb=0: automatic)", KP_SPAN_RANKS, NULL},
    {"shm_single_copy", KP_COLL_ALLGATHER, kp_allgather_shm_single_copy_build, 0, {0},
     "one node: every rank reads its peers' send buffers directly (cross-memory attach)", KP_SPAN_RANKS, NULL},
    {"smp_gather_bcast", KP_COLL_ALLGATHER, kp_allgather_smp_gather_bcast_build, KP_PARAM_TREE, {.tree = 1},
     "shared-memory gather per node, leaders gather (tree=1 binomial, tree=2 direct), broadcast", KP_SPAN_RANKS, NULL},
    {"smp_direct", KP_COLL_ALLGATHER, kp_allgather_smp_direct_build, KP_PARAM_K, {.k = 2},
     "shared-memory gather, leaders' k-port Direct, shared-memory broadcast, copy-out overlapped", KP_SPAN_NODES,
     NULL},
    {"smp_bruck", KP_COLL_ALLGATHER, kp_allgather_smp_bruck_build, KP_PARAM_K, {.k = 2},
     "shared-memory gather, leaders' k-port Bruck placing blocks directly, shared-memory broadcast", KP_SPAN_NODES,
     NULL},
    /* barrier */
    {"dissemination", KP_COLL_BARRIER, kp_barrier_dissemination_build, 0, {0},
     "ceil(log2 P) rounds, peer (p + 2^r) mod P", KP_SPAN_RANKS, NULL},
    {"nway_dissemination", KP_COLL_BARRIER, kp_barrier_nway_dissemination_build, KP_PARAM_N, {.n = 2},
     "ceil(log_{n+1} P) rounds, n peers (p + i (n+1)^r) mod P", KP_SPAN_RANKS, NULL},
    {"smp", KP_COLL_BARRIER, kp_barrier_smp_build, KP_PARAM_N, {.n = 2},
     "shared-memory arrival/release per node, n-way dissemination among leaders", KP_SPAN_NODES, NULL},
    {"shm_flat", KP_COLL_BARRIER, kp_barrier_shm_flat_build, 0, {0},
     "one node: every rank posts on its flag line and waits for all the others", KP_SPAN_RANKS, NULL},
    /* gather */
    {"binomial", KP_COLL_GATHER, kp_gather_binomial_build, 0, {0}, "binomial tree towards the root, log2 P steps", KP_SPAN_RANKS, NULL},
    {"direct", KP_COLL_GATHER, kp_gather_direct_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: every rank sends to the root, k in flight at the root", KP_SPAN_RANKS, NULL},
    {"smp", KP_COLL_GATHER, kp_gather_smp_build, 0, {0},
     "shared-memory gather per node, leaders send node blocks to the root", KP_SPAN_RANKS, NULL},
    {"shm_single_copy", KP_COLL_GATHER, kp_gather_shm_single_copy_build, 0, {0},
     "one node: every rank writes its block into the root's buffer (cross-memory attach)", KP_SPAN_RANKS, NULL},
    /* all-to-all */
    {"pairwise", KP_COLL_ALLTOALL, kp_alltoall_pairwise_build, 0, {0}, "P-1 steps of pairwise exchange", KP_SPAN_RANKS, NULL},
    {"direct", KP_COLL_ALLTOALL, kp_alltoall_direct_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: k exchanges in flight, wrap-around peers", KP_SPAN_RANKS, NULL},
    {"bruck", KP_COLL_ALLTOALL, kp_alltoall_bruck_build, KP_PARAM_K, {.k = 1},
     "k-port Bruck for small messages, ceil(log_{k+1} P) steps", KP_SPAN_RANKS, NULL},
    {"shm_flat", KP_COLL_ALLTOALL, kp_alltoall_shm_flat_build, KP_PARAM_CHUNK, {.chunk_kb = 0},
     "one node: every rank's blocks through the shared segment, two copies, pipelined in chunks (chunk_kb=0: "
     "automatic)", KP_SPAN_RANKS, NULL},
    {"shm_single_copy", KP_COLL_ALLTOALL, kp_alltoall_shm_single_copy_build, 0, {0},
     "one node: every rank reads its blocks from the peers' send buffers (cross-memory attach)", KP_SPAN_RANKS, NULL},
    /* bcast */
    {"binomial", KP_COLL_BCAST, kp_bcast_binomial_build, 0, {0},
     "binomial tree from the root, ceil(log2 P) steps of the whole message", KP_SPAN_RANKS, NULL},
    {"knomial", KP_COLL_BCAST, kp_bcast_knomial_build, KP_PARAM_K, {.k = 2},
     "k-nomial tree (radix k+1): k children per level at once, ceil(log_{k+1} P) levels", KP_SPAN_RANKS, NULL},
    {"scatter_allgather", KP_COLL_BCAST, kp_bcast_scatter_allgather_build, KP_PARAM_K, {.k = 1},
     "van de Geijn: binomial scatter of P pieces, k-port Bruck all-gather of the pieces (long messages)",
     KP_SPAN_RANKS, NULL},
    {"scatter_ring", KP_COLL_BCAST, kp_bcast_scatter_ring_build, 0, {0},
     "binomial scatter of P pieces, ring all-gather of the pieces (long messages)", KP_SPAN_RANKS, NULL},
    {"chain", KP_COLL_BCAST, kp_bcast_chain_build, KP_PARAM_CHUNK, {.chunk_kb = 0},
     "pipelined chain from the root in chunks (chunk_kb=0: automatic)", KP_SPAN_RANKS, NULL},
    {"shm_flat", KP_COLL_BCAST, kp_bcast_shm_flat_build, KP_PARAM_CHUNK, {.chunk_kb = 0},
     "one node: the root copies into the segment in chunks, the others copy out behind it (chunk_kb=0: "
     "automatic)", KP_SPAN_RANKS, NULL},
    {"smp", KP_COLL_BCAST, kp_bcast_smp_build, KP_PARAM_K | KP_PARAM_CHUNK, {.k = 2, .chunk_kb = 0},
     "leaders' k-nomial tree, shared-memory broadcast per node pipelined behind it in chunks", KP_SPAN_NODES,
     NULL},
    {"shm_single_copy", KP_COLL_BCAST, kp_bcast_shm_single_copy_build, 0, {0},
     "one node: every rank reads the root's buffer directly (cross-memory attach)", KP_SPAN_RANKS, NULL},
    /* scatter */
    {"binomial", KP_COLL_SCATTER, kp_scatter_binomial_build, 0, {0},
     "binomial tree from the root, subtrees' blocks forwarded through scratch", KP_SPAN_RANKS, NULL},
    {"direct", KP_COLL_SCATTER, kp_scatter_direct_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: the root sends every block, k in flight", KP_SPAN_RANKS, NULL},
    {"smp", KP_COLL_SCATTER, kp_scatter_smp_build, 0, {0},
     "one message per node to its leader, blocks handed out through the node's segment", KP_SPAN_RANKS, NULL},
    {"shm_single_copy", KP_COLL_SCATTER, kp_scatter_shm_single_copy_build, 0, {0},
     "one node: every rank reads its block from the root's send buffer (cross-memory attach)", KP_SPAN_RANKS,
     NULL},
    /* reduce */
    {"knomial", KP_COLL_REDUCE, kp_reduce_knomial_build, KP_PARAM_K, {.k = 2},
     "k-nomial tree, radix k+1, ceil(log_{k+1} P) steps, rank order kept", KP_SPAN_RANKS, NULL},
    {"rabenseifner", KP_COLL_REDUCE, kp_reduce_rabenseifner_build, 0, {0},
     "recursive-halving reduce-scatter + binomial gather to the root (commutative)", KP_SPAN_RANKS, NULL},
    {"smp", KP_COLL_REDUCE, kp_reduce_smp_build, KP_PARAM_K, {.k = 2},
     "shared-memory reduce per node (slices in parallel), k-nomial tree among node masters", KP_SPAN_NODES, NULL},
    {"shm_flat", KP_COLL_REDUCE, kp_reduce_shm_flat_build, KP_PARAM_CHUNK, {.chunk_kb = 0},
     "one node: every rank reduces its slice over all slots, root copies out, pipelined (chunk_kb=0: automatic)",
     KP_SPAN_RANKS, NULL},
    /* allreduce */
    {"recursive_doubling", KP_COLL_ALLREDUCE, kp_allreduce_recursive_doubling_build, 0, {0},
     "pairwise exchange of whole vectors, log2 P steps (+2 folding when P is not a power of two); any operation",
     KP_SPAN_RANKS, NULL},
    {"recursive_multiplying", KP_COLL_ALLREDUCE, kp_allreduce_recursive_multiplying_build, KP_PARAM_K, {.k = 2},
     "radix k+1 exchange of whole vectors with k peers per step, any P; any operation", KP_SPAN_RANKS, NULL},
    {"rabenseifner", KP_COLL_ALLREDUCE, kp_allreduce_rabenseifner_build, KP_PARAM_K, {.k = 1},
     "recursive-halving reduce-scatter + k-port Bruck all-gather; commutative operations", KP_SPAN_RANKS, NULL},
    {"ring", KP_COLL_ALLREDUCE, kp_allreduce_ring_build, 0, {0},
     "ring reduce-scatter + ring all-gather, 2(P-1) steps, bandwidth-optimal; commutative operations",
     KP_SPAN_RANKS, NULL},
    {"shm_flat", KP_COLL_ALLREDUCE, kp_allreduce_shm_flat_build, KP_PARAM_CHUNK, {.chunk_kb = 0},
     "one node: every rank combines its slice over all inputs in the segment, then copies the result out, "
     "pipelined in chunks (chunk_kb=0: automatic)", KP_SPAN_RANKS, NULL},
    {"smp", KP_COLL_ALLREDUCE, kp_allreduce_smp_build, KP_PARAM_K, {.k = 1},
     "shared-memory reduce per node, radix k+1 recursive multiplying among leaders, shared-memory broadcast",
     KP_SPAN_NODES, NULL},
    /* reduce_scatter_block */
    {"pairwise", KP_COLL_REDUCE_SCATTER_BLOCK, kp_reduce_scatter_pairwise_build, 0, {0},
     "P-1 exchange steps, combines in rank order (any operation)", KP_SPAN_RANKS, NULL},
    {"recursive_halving", KP_COLL_REDUCE_SCATTER_BLOCK, kp_reduce_scatter_recursive_halving_build, 0, {0},
     "log2 P halving steps, folding for any P (commutative)", KP_SPAN_RANKS, NULL},
    {"kport", KP_COLL_REDUCE_SCATTER_BLOCK, kp_reduce_scatter_kport_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: k exchanges in flight per step, ceil((P-1)/k) steps (commutative)", KP_SPAN_RANKS, NULL},
    {"smp", KP_COLL_REDUCE_SCATTER_BLOCK, kp_reduce_scatter_smp_build, 0, {0},
     "shared-memory reduce per node, leaders' pairwise reduce-scatter, blocks copied out of the segment",
     KP_SPAN_RANKS, NULL},
    {"shm_flat", KP_COLL_REDUCE_SCATTER_BLOCK, kp_reduce_scatter_shm_flat_build, 0, {0},
     "one node: every rank reduces its block over all slots of the segment in rank order", KP_SPAN_RANKS, NULL},
    /* reduce_scatter */
    {"pairwise", KP_COLL_REDUCE_SCATTER, kp_reduce_scatter_pairwise_build, 0, {0},
     "P-1 exchange steps, combines in rank order (any operation)", KP_SPAN_RANKS, NULL},
    {"recursive_halving", KP_COLL_REDUCE_SCATTER, kp_reduce_scatter_recursive_halving_build, 0, {0},
     "log2 P halving steps, folding for any P (commutative)", KP_SPAN_RANKS, NULL},
    {"kport", KP_COLL_REDUCE_SCATTER, kp_reduce_scatter_kport_build, KP_PARAM_K, {.k = 2},
     "k-port Direct: k exchanges in flight per step, ceil((P-1)/k) steps (commutative)", KP_SPAN_RANKS, NULL},
    {"smp", KP_COLL_REDUCE_SCATTER, kp_reduce_scatter_smp_build, 0, {0},
     "shared-memory reduce per node, leaders' pairwise reduce-scatter, blocks copied out of the segment",
     KP_SPAN_RANKS, NULL},
    {"shm_flat", KP_COLL_REDUCE_SCATTER, kp_reduce_scatter_shm_flat_build, 0, {0},
     "one node: every rank reduces its block over all slots of the segment in rank order", KP_SPAN_RANKS, NULL},
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
        } else if (strcmp(tok, "transport") == 0) { /* every algorithm takes the transport's parameters */
            if (strcmp(eq + 1, "p2p") != 0 && strcmp(eq + 1, "rma") != 0) {
                snprintf(err, (size_t)errlen, "%s: transport=\"%s\" must be p2p or rma", a->name, eq + 1);
                return KP_ERR_PARAM;
            }
            prm->transport = strcmp(eq + 1, "rma") == 0 ? KP_TRANSPORT_RMA : KP_TRANSPORT_P2P;
            continue;
        } else if (strcmp(tok, "rails") == 0 || strcmp(tok, "stripe_kb") == 0) {
            const int rails = tok[0] == 'r';
            const int hi = rails ? KP_RAILS_MAX : 1048576;
            if (parse_int(eq + 1, &v) || v < 1 || v > hi) {
                snprintf(err, (size_t)errlen, "%s: %s=\"%s\" must be an integer in 1..%d", a->name, tok, eq + 1, hi);
                return KP_ERR_PARAM;
            }
            *(rails ? &prm->rails : &prm->stripe_kb) = v;
            continue;
        } else if (strcmp(tok, "rma_path") == 0) {
            static const char *paths[] = {"auto", "staging", "attach"};
            int p = 0;
            while (p < 3 && strcmp(eq + 1, paths[p]) != 0)
                p++;
            if (p == 3) {
                snprintf(err, (size_t)errlen, "%s: rma_path=\"%s\" must be staging, attach or auto", a->name, eq + 1);
                return KP_ERR_PARAM;
            }
            prm->rma_path = p;
            continue;
        }
        if (!slot || !(a->params & bit)) {
            static const char *pname[] = {"k", "C", "n", "tree", "chunk_kb"};
            char takes[64] = "";
            for (int b = 0, n = 0; b < 5; b++)
                if (a->params & (1u << b))
                    n += snprintf(takes + n, sizeof(takes) - (size_t)n, "%s%s", n ? ", " : "", pname[b]);
            snprintf(err, (size_t)errlen,
                     "%s takes no parameter \"%s\" (it takes %s%stransport, rails, stripe_kb, rma_path)",
                     a->name, tok, takes, takes[0] ? ", " : "");
            return KP_ERR_PARAM;
        }
        int lo = bit == KP_PARAM_CHUNK ? 0 : 1, hi = bit == KP_PARAM_TREE ? 2 : 1000000;
        if (parse_int(eq + 1, &v) || v < lo || v > hi) {
            snprintf(err, (size_t)errlen, "%s: %s=\"%s\" must be an integer in %d..%d", a->name, tok, eq + 1, lo, hi);
            return KP_ERR_PARAM;
        }
        *slot = v;
    }
    if (prm->transport != KP_TRANSPORT_RMA && (prm->rails || prm->stripe_kb || prm->rma_path)) {
        snprintf(err, (size_t)errlen, "%s: rails, stripe_kb and rma_path apply to transport=rma only", a->name);
        return KP_ERR_PARAM;
    }
    kp_transport_normalize(prm);
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
        n += snprintf(out + n, (size_t)(outlen - n), "%schunk_kb=%d", (a->params & 15u) ? "," : ":", prm->chunk_kb);
    /* the transport shows only when it is not point-to-point, so names of
     * point-to-point plans stay what they were */
    if (prm->transport == KP_TRANSPORT_RMA && n < outlen)
        n += snprintf(out + n, (size_t)(outlen - n), "%stransport=rma,rails=%d,stripe_kb=%d", a->params ? "," : ":",
                      prm->rails ? prm->rails : 1, prm->stripe_kb ? prm->stripe_kb : KP_STRIPE_KB_DEFAULT);
    /* the data path shows only when forced (auto, the default, decides by size) */
    if (prm->transport == KP_TRANSPORT_RMA && prm->rma_path && n < outlen)
        snprintf(out + n, (size_t)(outlen - n), ",rma_path=%s",
                 prm->rma_path == KP_RMA_PATH_ATTACH ? "attach" : "staging");
}

void kp_transport_normalize(kp_params *p)
{
    if (p->transport == KP_TRANSPORT_RMA) {
        if (!p->rails)
            p->rails = 1;
        if (!p->stripe_kb)
            p->stripe_kb = KP_STRIPE_KB_DEFAULT;
    } else {
        p->transport = KP_TRANSPORT_P2P;
        p->rails = p->stripe_kb = p->rma_path = 0;
    }
}

/* prm with every parameter a does not take, or that is 0 ("not given"),
 * replaced by a's default */
static kp_params with_defaults(const kp_algo *a, const kp_params *prm)
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
        p.transport = prm->transport;
        p.rails = prm->rails;
        p.stripe_kb = prm->stripe_kb;
        p.rma_path = prm->rma_path;
    }
    kp_transport_normalize(&p);
    return p;
}

/* append "what" to the note (", " between two clamps) */
static void note_add(char *note, int notelen, const char *what)
{
    if (!note || notelen <= 0)
        return;
    size_t n = strlen(note);
    snprintf(note + n, (size_t)notelen - n, "%s%s", n ? ", " : "", what);
}

/*
 * Clamping parameters that exceed what P allows (issue 7). Design:
 *  - Only a value beyond P's range is changed: k or n >= the number of
 *    ranks it counts (no rank has that many peers), C > P (no more groups
 *    than ranks). It becomes the largest value that applies, which is what
 *    the user asked for as far as P permits (k = P - 1 reaches every peer
 *    in one step; C = P is the direct exchange). A value within range that
 *    does not fit P (C = 3 on 4 ranks) is refused by the builder, not
 *    replaced: that request names a structure P does not have, and the
 *    fallback policy decides.
 *  - P = 1: every count clamps to 1 and C to 1, and every builder's schedule
 *    is the local copy (or nothing, for a barrier).
 *  - The inputs are the algorithm, the given parameters, P and the number
 *    of nodes of the layout, which every rank holds identically (it is
 *    agreed on at setup), so all ranks clamp alike and build matching
 *    schedules.
 *  - The plan's name is formatted from the clamped values with the note
 *    (kp_algo_format_on), so kp_last_algorithm() and KPORT_VERBOSE=1 name
 *    the value that runs and the one that was asked for.
 */
int kp_algo_effective(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, kp_params *eff,
                      char *note, int notelen)
{
    kp_params p = with_defaults(a, prm);
    int clamped = 0;
    char what[96];
    if (note && notelen > 0)
        note[0] = '\0';
    if (P >= 1) {
        /* counts of peers: k (ports) and n (signals per round) */
        const int nodes = a->span == KP_SPAN_NODES && L && L->P == P ? L->nnodes : P;
        const int most = nodes > 1 ? nodes - 1 : 1;
        for (int i = 0; i < 2; i++) {
            const unsigned bit = i ? KP_PARAM_N : KP_PARAM_K;
            int *v = i ? &p.n : &p.k;
            if (!(a->params & bit) || *v <= most)
                continue;
            if (a->span == KP_SPAN_NODES)
                snprintf(what, sizeof(what), "%s=%d clamped: %d node%s", i ? "n" : "k", *v, nodes,
                         nodes == 1 ? "" : "s");
            else
                snprintf(what, sizeof(what), "%s=%d clamped: P=%d", i ? "n" : "k", *v, P);
            note_add(note, notelen, what);
            *v = most;
            clamped = 1;
        }
        /* concurrency index: the largest C' <= P that applies */
        if ((a->params & KP_PARAM_C) && p.C > P) {
            int c = P;
            while (c >= 1 && a->c_applies && !a->c_applies(P, c))
                c--;
            if (c >= 1) {
                snprintf(what, sizeof(what), "C=%d clamped: P=%d", p.C, P);
                note_add(note, notelen, what);
                p.C = c;
                clamped = 1;
            }
        }
    }
    *eff = p;
    return clamped;
}

void kp_algo_format_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, char *out, int outlen)
{
    if (!a) {
        kp_algo_format(a, prm, out, outlen);
        return;
    }
    kp_params eff;
    char note[192];
    kp_algo_effective(a, prm, L, P, &eff, note, sizeof(note));
    kp_algo_format(a, &eff, out, outlen);
    const size_t n = strlen(out);
    if (note[0] && n + 1 < (size_t)outlen)
        snprintf(out + n, (size_t)outlen - n, " (%s)", note);
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
    return kp_algo_build_red_on(a, prm, L, rank, P, bytes, root, inplace, 1, 1, NULL, s);
}

int kp_algo_build_red_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int rank, int P, int64_t bytes,
                         int root, int inplace, int64_t elem, int commute, const int64_t *block_off, kp_sched *s)
{
    kp_params p = with_defaults(a, prm);
    kp_sched_init_coll(s, a->coll, rank, P, bytes, root, inplace);
    kp_sched_set_reduction(s, elem, commute, block_off);
    s->layout = L;
    if (((a->params & KP_PARAM_K) && p.k < 1) || ((a->params & KP_PARAM_C) && p.C < 1) ||
        ((a->params & KP_PARAM_N) && p.n < 1) || ((a->params & KP_PARAM_TREE) && (p.tree < 1 || p.tree > 2)) ||
        ((a->params & KP_PARAM_CHUNK) && p.chunk_kb < 0) ||
        (p.transport == KP_TRANSPORT_RMA && (p.rails < 1 || p.rails > KP_RAILS_MAX || p.stripe_kb < 1)))
        return kp_sched_refuse(s, KP_ERR_PARAM,
                               "%s: invalid parameters (k=%d, C=%d, n=%d >= 1; tree=%d in 1..2; chunk_kb=%d >= 0; "
                               "rails=%d in 1..%d, stripe_kb=%d >= 1)",
                               a->name, p.k, p.C, p.n, p.tree, p.chunk_kb, p.rails, KP_RAILS_MAX, p.stripe_kb);
    kp_algo_effective(a, &p, L, P, &p, NULL, 0); /* valid values: clamp what exceeds P */
    int rc = a->build(s, &p);
    if (rc == KP_SUCCESS && s->err)
        rc = s->err;
    return rc;
}
