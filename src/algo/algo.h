/*
 * Algorithm registry: every algorithm kport can run, its collective, the
 * parameters it takes and its builder. One table (src/algo/registry.c),
 * one builder per file under src/algo/<collective>/.
 */
#ifndef KP_ALGO_H
#define KP_ALGO_H

#include "sched/check.h"
#include "sched/sched.h"

/* Which parameters an algorithm takes (bit mask). */
#define KP_PARAM_K 0x1u
#define KP_PARAM_C 0x2u
#define KP_PARAM_N 0x4u
#define KP_PARAM_TREE 0x8u
#define KP_PARAM_CHUNK 0x10u

/* A builder appends rank s->rank's operations for (s->P, s->bytes) to s,
 * which the caller has initialised with kp_sched_init. Parameters arrive
 * with defaults already filled in. Returns KP_SUCCESS, or refuses with
 * kp_sched_refuse(s, KP_ERR_PARAM / KP_ERR_UNSUPPORTED, "why"). */
typedef int (*kp_build_fn)(kp_sched *s, const kp_params *prm);

/* What a count parameter (k, n) counts: the peers a rank can address
 * among all P ranks, or among the node leaders (SMP-aware algorithms). */
#define KP_SPAN_RANKS 0
#define KP_SPAN_NODES 1

typedef struct kp_algo {
    const char *name;
    int coll;           /* enum kp_coll */
    kp_build_fn build;
    unsigned params;    /* KP_PARAM_* it accepts */
    kp_params defaults; /* values used when a parameter is not given */
    const char *summary;
    int span;           /* KP_SPAN_*: the peers k or n counts (default: ranks) */
    int (*c_applies)(int P, int C); /* KP_PARAM_C: does C apply to P ranks? */
} kp_algo;

/* All-gather builders (src/algo/allgather/<name>.c). */
int kp_allgather_ring_build(kp_sched *s, const kp_params *prm);
int kp_allgather_recursive_doubling_build(kp_sched *s, const kp_params *prm);
int kp_allgather_direct_build(kp_sched *s, const kp_params *prm);
int kp_allgather_standard_exchange_build(kp_sched *s, const kp_params *prm);
int kp_allgather_bruck_build(kp_sched *s, const kp_params *prm);
int kp_allgather_concurrent_exchange_build(kp_sched *s, const kp_params *prm);
int kp_allgather_concurrent_exchange_split_build(kp_sched *s, const kp_params *prm);

/* Shared-memory and hierarchical (SMP-aware) all-gather builders; they use
 * s->layout (NULL means every rank is its own node). */
int kp_allgather_shm_flat_build(kp_sched *s, const kp_params *prm);
int64_t kp_shm_flat_chunk(int64_t bytes, const kp_params *prm); /* the pipelining chunk it uses */
int kp_allgather_shm_single_copy_build(kp_sched *s, const kp_params *prm);
int kp_allgather_smp_gather_bcast_build(kp_sched *s, const kp_params *prm);
int kp_allgather_smp_direct_build(kp_sched *s, const kp_params *prm);
int kp_allgather_smp_bruck_build(kp_sched *s, const kp_params *prm);

/* Barrier builders (src/algo/barrier/<name>.c): zero-byte signals only. */
int kp_barrier_dissemination_build(kp_sched *s, const kp_params *prm);
int kp_barrier_nway_dissemination_build(kp_sched *s, const kp_params *prm);
int kp_barrier_smp_build(kp_sched *s, const kp_params *prm);
int kp_barrier_shm_flat_build(kp_sched *s, const kp_params *prm);

/* Gather builders (src/algo/gather/<name>.c); s->root is the root. */
int kp_gather_binomial_build(kp_sched *s, const kp_params *prm);
int kp_gather_direct_build(kp_sched *s, const kp_params *prm);
int kp_gather_smp_build(kp_sched *s, const kp_params *prm);
int kp_gather_shm_single_copy_build(kp_sched *s, const kp_params *prm);

/* All-to-all builders (src/algo/alltoall/<name>.c); send and receive
 * buffers are P * bytes; s->inplace: the send buffer IS the receive buffer. */
int kp_alltoall_pairwise_build(kp_sched *s, const kp_params *prm);
int kp_alltoall_direct_build(kp_sched *s, const kp_params *prm);
int kp_alltoall_bruck_build(kp_sched *s, const kp_params *prm);
int kp_alltoall_shm_flat_build(kp_sched *s, const kp_params *prm);
int kp_alltoall_shm_single_copy_build(kp_sched *s, const kp_params *prm);

/* Broadcast builders (src/algo/bcast/<name>.c); s->root is the root, whose
 * KP_BUF_RECV holds the data; every rank's KP_BUF_RECV is bytes long. */
/* (bcast builders) */
int kp_bcast_binomial_build(kp_sched *s, const kp_params *prm);
int kp_bcast_knomial_build(kp_sched *s, const kp_params *prm);
int kp_bcast_scatter_allgather_build(kp_sched *s, const kp_params *prm);
int kp_bcast_scatter_ring_build(kp_sched *s, const kp_params *prm);
int kp_bcast_chain_build(kp_sched *s, const kp_params *prm);
int kp_bcast_shm_flat_build(kp_sched *s, const kp_params *prm);
int kp_bcast_smp_build(kp_sched *s, const kp_params *prm);
int kp_bcast_shm_single_copy_build(kp_sched *s, const kp_params *prm);

/* Scatter builders (src/algo/scatter/<name>.c); the root's KP_BUF_SEND is
 * P * bytes; under MPI_IN_PLACE the root has no receive buffer. */
/* (scatter builders) */
int kp_scatter_binomial_build(kp_sched *s, const kp_params *prm);
int kp_scatter_direct_build(kp_sched *s, const kp_params *prm);
int kp_scatter_smp_build(kp_sched *s, const kp_params *prm);
int kp_scatter_shm_single_copy_build(kp_sched *s, const kp_params *prm);

/* Reduction builders: s->elem, s->commute (sched.h); combines through
 * kp_sched_reduce. A builder that needs a commutative operation refuses
 * a non-commutative one with KP_ERR_UNSUPPORTED. */
/* Reduce (src/algo/reduce/<name>.c). */
/* (reduce builders) */
int kp_reduce_knomial_build(kp_sched *s, const kp_params *prm);
int kp_reduce_rabenseifner_build(kp_sched *s, const kp_params *prm);
int kp_reduce_smp_build(kp_sched *s, const kp_params *prm);
int kp_reduce_shm_flat_build(kp_sched *s, const kp_params *prm);
/* Allreduce (src/algo/allreduce/<name>.c). */
/* (allreduce builders) */
int kp_allreduce_recursive_doubling_build(kp_sched *s, const kp_params *prm);
int kp_allreduce_recursive_multiplying_build(kp_sched *s, const kp_params *prm);
int kp_allreduce_rabenseifner_build(kp_sched *s, const kp_params *prm);
int kp_allreduce_ring_build(kp_sched *s, const kp_params *prm);
int kp_allreduce_shm_flat_build(kp_sched *s, const kp_params *prm);
int kp_allreduce_smp_build(kp_sched *s, const kp_params *prm);
int64_t kp_ar_shm_chunk(int64_t bytes, int64_t elem, const kp_params *prm); /* shm_flat's pipelining chunk */
/* Reduce-scatter, regular and with counts per rank (src/algo/reduce_scatter/<name>.c). */
/* (reduce_scatter builders) */
int kp_reduce_scatter_pairwise_build(kp_sched *s, const kp_params *prm);
int kp_reduce_scatter_recursive_halving_build(kp_sched *s, const kp_params *prm);
int kp_reduce_scatter_kport_build(kp_sched *s, const kp_params *prm);
int kp_reduce_scatter_smp_build(kp_sched *s, const kp_params *prm);
int kp_reduce_scatter_shm_flat_build(kp_sched *s, const kp_params *prm);

/* Registry queries. */
int kp_algo_count(int coll);
const kp_algo *kp_algo_at(int coll, int i);
const kp_algo *kp_algo_find(int coll, const char *name);

/* Parse "name[:k=3,C=2]" into an algorithm and its parameters (defaults
 * filled in). Returns KP_SUCCESS or KP_ERR_PARAM with a message in err. */
int kp_algo_parse(int coll, const char *spec, const kp_algo **algo, kp_params *prm,
                  char *err, int errlen);
/* Format "name:k=3" (only parameters the algorithm takes; the transport's
 * as ",transport=rma,rails=R,stripe_kb=S" when it is rma). */
void kp_algo_format(const kp_algo *a, const kp_params *prm, char *out, int outlen);
/* Transport parameters in canonical form (plans are keyed by memcmp):
 * rma with rails / stripe_kb 0 -> 1 / KP_STRIPE_KB_DEFAULT; p2p -> all 0. */
void kp_transport_normalize(kp_params *p);

/* The parameters that run for P ranks on layout L (NULL: every rank its own
 * node): defaults filled in, and a parameter that exceeds what P allows
 * clamped to the largest value that applies (MPICH clamps its k-nomial
 * radices the same way):
 *   k, n >= the number of ranks it counts (P, or the nodes for KP_SPAN_NODES)
 *        -> that number - 1, at least 1 (k = P - 1 already reaches every peer);
 *   C > P -> the largest C' <= P with c_applies(P, C').
 * A value within range that does not apply (C = 3 at P = 4) is not changed:
 * the builder refuses it. The decision depends on (a, prm, P, node count)
 * only, so every rank of a communicator makes the same one. Returns 1 and a
 * note such as "k=8 clamped: P=2" when it clamped, else 0 and "". */
int kp_algo_effective(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, kp_params *eff,
                      char *note, int notelen);
/* The name of what runs: "bruck:k=1 (k=8 clamped: P=2)", or "bruck:k=3" when
 * nothing is clamped. Plans carry it (kp_last_algorithm, KPORT_VERBOSE). */
void kp_algo_format_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, char *out, int outlen);

/* Build one rank's schedule of algorithm a (parameters validated, defaults
 * applied, then clamped by kp_algo_effective). s is initialised here; free with kp_sched_free.
 * kp_algo_build is kp_algo_build_ex with root 0 and no MPI_IN_PLACE. */
int kp_algo_build(const kp_algo *a, const kp_params *prm, int rank, int P, int64_t bytes,
                  kp_sched *s);
int kp_algo_build_ex(const kp_algo *a, const kp_params *prm, int rank, int P, int64_t bytes, int root,
                     int inplace, kp_sched *s);
/* ... on a node layout L (NULL: every rank on its own node). */
int kp_algo_build_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int rank, int P, int64_t bytes,
                     int root, int inplace, kp_sched *s);
/* ... for a reduction: element size, commutativity and (reduce_scatter)
 * the result blocks' byte offsets [P + 1] (sched.h, kp_sched_set_reduction);
 * kp_algo_build_on is this with 1, 1, NULL. */
int kp_algo_build_red_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int rank, int P, int64_t bytes,
                         int root, int inplace, int64_t elem, int commute, const int64_t *block_off, kp_sched *s);

/* Check algorithm a with parameters prm (defaults applied when 0) for P
 * ranks and `bytes` per block on layout L (NULL: every rank on its own
 * node): every rank's schedule built and all run through the schedule
 * checker; inplace models MPI_IN_PLACE (check.c). */
void kp_check_algo_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, int64_t bytes, int root,
                      int inplace, kp_check_result *res);
/* ... a reduction (or any collective) with element size elem, commute (0: a
 * non-commutative operation, combines must keep rank order) and, for
 * reduce_scatter, block_off[P + 1] (bytes = block_off[P]; NULL otherwise).
 * kp_check_algo_on is this with elem 1, commute 1, block_off NULL. */
void kp_check_red_on(const kp_algo *a, const kp_params *prm, const kp_layout *L, int P, int64_t bytes, int root,
                     int inplace, int64_t elem, int commute, const int64_t *block_off, kp_check_result *res);
void kp_check_algo(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int root, int inplace,
                   kp_check_result *res);
void kp_check_allgather(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int inplace,
                        kp_check_result *res);

/* The algorithm's class, by name: "shm_*" work inside one node through
 * shared memory and send no MPI message, "smp*" use shared memory inside
 * nodes and messages between them, all others only messages. What a plan
 * needs set up follows from it (src/plan). */
static inline int kp_algo_is_shm(const kp_algo *a)
{
    return a->name[0] == 's' && a->name[1] == 'h' && a->name[2] == 'm' && a->name[3] == '_';
}
static inline int kp_algo_is_node(const kp_algo *a)
{
    return kp_algo_is_shm(a) || (a->name[0] == 's' && a->name[1] == 'm' && a->name[2] == 'p');
}

#endif /* KP_ALGO_H */
