/* Internal glue shared by the public entry points: per-communicator state,
 * plans, selection, errors. Not part of the API. */
#ifndef KP_CORE_H
#define KP_CORE_H

#include "algo/algo.h"
#include "kport.h"
#include "model/params.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (calibration, the choice's check) */
static inline double kp_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ---- errors (error.c) ---- */
/* Record the detailed message for kp_last_error() and return code. */
int kp_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kp_clear_error(void);

/* ---- arguments (dtype.c) ---- */
typedef struct kp_tinfo {
    MPI_Count size, extent, true_lb, true_extent;
    int contiguous; /* count elements are one gap-free run of count*size bytes */
} kp_tinfo;
/* fn names the entry point in messages, which says "send"/"receive". */
int kp_type_info(MPI_Datatype t, const char *fn, const char *which, kp_tinfo *ti);
/* Negative or overflowing count -> KP_ERR_COUNT; else *bytes = count * size. */
int kp_check_count(const char *fn, const char *which, MPI_Count count, const kp_tinfo *ti, int64_t *bytes);
/* MPI_COMM_NULL, invalid or inter-communicator -> KP_ERR_COMM. */
int kp_check_comm(const char *fn, MPI_Comm comm);

/* ---- plans (plan.c) ---- */
typedef struct kp_plan {
    struct kp_plan *next;  /* in the communicator's MRU list */
    int coll;
    const kp_algo *algo;   /* the algorithm asked for */
    kp_params prm;
    int64_t bytes;
    int root, inplace;     /* part of the key: rooted / in-place schedules differ */
    int refused;           /* the builder refused: errmsg says why */
    int resource;          /* ... or MPI refused a resource it needs (segment, windows) */
    int announced;         /* KPORT_VERBOSE / fallback warning printed */
    int refuse_code;
    char errmsg[256];
    char name[128];        /* "bruck:k=2", "ring:transport=rma,rails=2,stripe_kb=64" */
    kp_sched sched;
    void *scratch;
    MPI_Request *reqs;
    int maxreq;            /* requests one round may need */
    int uses_flags;        /* posts/waits/peer copies: a counted call (flag values) */
    int uses_segment;      /* data in the segment: the call flips its halves */
    struct kp_comm *owner;
    uint64_t serial;       /* unique per plan ever built (starts at 1) */
} kp_plan;

/* a call class whose segment every rank agreed on (exec/plan.c) */
typedef struct kp_seg_class {
    int coll, root, ok;
    const struct kp_algo *algo;
    kp_params prm;
    int64_t bytes;
} kp_seg_class;

/* ---- shared memory (exec/shm.c) ---- */
typedef struct kp_shm_slot { /* one per rank of the node, own cache lines */
    _Atomic uint64_t flag;   /* (call sequence << 20) | post number; single writer */
    uint64_t pid;
    uint64_t addr[3];        /* this call's send, receive and scratch addresses */
    char pad[128 - 5 * sizeof(uint64_t)];
} kp_shm_slot;

typedef struct kp_shm {
    MPI_Win win;
    char *base;              /* segment: slots, then two halves of data */
    kp_shm_slot *slots;      /* [node size] */
    char *lines;             /* 2 halves of node size * KP_LINE bytes: flag + small data per rank */
    char *data;              /* 2 * half bytes */
    int64_t half;
    /* the segment's call counters travel with it (a pooled segment keeps
     * counting where its previous communicator stopped, so old flag values
     * can never satisfy a new wait) */
    uint64_t seq;            /* calls that used its flags (flag values) */
    uint64_t parity;         /* calls that put data in it (selects the half) */
} kp_shm;

/* ---- per-communicator state (comm.c) ---- */
/*
 * A communicator's state is set up in tiers, each when a call first needs
 * it (see comm.c): the node layout always (derived without communication
 * where possible); kport's private duplicate only for plans that send MPI
 * messages; the node tier (node communicator, shared segment, cross-memory
 * attach probe) only for shared-memory plans. When the user frees the
 * communicator, these resources go to a pool keyed by the group and serve
 * the next communicator of the same ranks in the same order.
 */
typedef struct kp_comm {
    MPI_Comm user;   /* the user's communicator (attribute holder) */
    MPI_Group group; /* its group: the pool's key */
    MPI_Comm comm;   /* kport's private duplicate (MPI_COMM_NULL until a plan sends messages) */
    int rank, size;
    kp_plan *plans;  /* most recently used first */
    int nplans;
    void *stage;     /* staging for non-contiguous datatypes */
    int64_t stage_bytes;
    struct kp_comm *gnext, *gprev; /* all live states */
    /* topology (topo/topo.c) */
    kp_layout layout;   /* node of every rank (real or emulated nodes); cma valid once node_ready */
    int local, node_size;
    int oversub;        /* more ranks on this machine than cores: yield when waiting */
    int node_ready;     /* node tier up: node communicator, segment, layout.cma */
    /* MPI refused the node tier's shared segment (agreed by every rank):
     * no shared-memory algorithm runs on this group; refused says why */
    int shm_refused;
    char refused[200];
    unsigned noted;     /* kinds of refusal KPORT_VERBOSE has reported (kp_comm_refusal_note) */
    /* across nodes: the segment's outcome per call class (exec/plan.c) */
    struct kp_seg_class *segc;
    int nsegc, capsegc;
    struct kp_choice_memo *memo; /* the automatic choices made so far (comm.c), pooled with the plans */
    struct kp_machine *mach; /* the agreed calibrated costs (select/calibrate.c), with the node tier */
    int calibrated;     /* mach holds this node's measurements (not the defaults) */
    long calls;         /* kport calls made on it and on the freed communicators of
                           the same group whose resources it took (cold policy) */
    MPI_Comm node;      /* ranks of my node, ordered by rank (MPI_COMM_NULL until needed) */
    kp_shm shm;
    struct kp_rma *rma; /* one-sided transport's windows (exec/rma.c), NULL until a plan uses them */
    /* the plan the previous call of each collective ran, for the fast path */
    kp_plan *last[KP_COLL_COUNT];
    unsigned last_gen[KP_COLL_COUNT];
    /* the calibrated choice's other candidate for that call (NULL: none,
     * or not the calibrated choice), and the check of the choice by
     * measurement (select/verify.c) */
    const struct kp_algo *alt[KP_COLL_COUNT];
    kp_params alt_prm[KP_COLL_COUNT];
    struct kp_verify *verify;
} kp_comm;

/* Look up (or create on first use) kport's state for comm. Collective on
 * first use of a communicator (it may need the node layout). */
int kp_comm_get(MPI_Comm comm, kp_comm **out);
/* The state of the communicator the previous call used, if comm is it
 * (no MPI call, no creation); else NULL. */
kp_comm *kp_comm_peek(MPI_Comm comm);
/* Grow the staging buffer to at least n bytes. */
int kp_comm_stage(kp_comm *c, int64_t n, void **out);
/* Bring up what plans of algorithm a need on c: the node tier for shared-
 * memory algorithms, the private duplicate for algorithms that send MPI
 * messages. Collective: every rank of c calls it for the same a. */
int kp_comm_ready(kp_comm *c, const kp_algo *a);
/* Make c's private duplicate if it has none (collective over c). Its
 * error handler is MPI_ERRORS_RETURN, as on every communicator and window
 * kport makes for itself: a refusal comes back as an error kport handles,
 * the user's own handlers are never changed. */
int kp_comm_private(kp_comm *c);
/* Agree on a set-up outcome: 1 when ok is nonzero on every rank of c, else
 * 0 (PMPI_Allreduce on the user's communicator: every rank is in the same
 * kport call). One rank: ok itself. */
int kp_comm_agree(kp_comm *c, int ok);
/* Say once per communicator and kind (rank 0, KPORT_VERBOSE=1) what MPI
 * refused and what runs instead. */
enum { KP_REFUSED_NODE = 1, KP_REFUSED_SEGMENT = 2, KP_REFUSED_RMA = 4 };
void kp_comm_refusal_note(kp_comm *c, unsigned kind, const char *what);

/* The drop-in library's policy for cold communicators (src/pmpi/pmpi.c):
 * while a communicator other than MPI_COMM_WORLD has made at most n kport
 * calls (counting the calls on freed communicators of the same ranks whose
 * pooled resources it took: a loop of dup / call / free warms up after n
 * cycles), a call whose plan would first have to set up resources (the node
 * tier, the private duplicate) returns KP_COLD, and the drop-in serves it
 * with PMPI_. Decided identically on every rank (call counts, resource
 * state and the algorithm are). n = 0, the library's default, never does:
 * users of the C API always get kport. */
#define KP_COLD 100
void kp_set_cold_calls(long n);

/* Set-up accounting (KPORT_SETUP_STATS=1 prints it at MPI_Finalize). */
enum kp_setup_part {
    KP_SETUP_STATE,        /* a communicator's state created (any way) */
    KP_SETUP_POOL_HIT,     /* ... from a pooled entry of the same group */
    KP_SETUP_LAYOUT_DERIVED, /* node layout from the world's, no communication */
    KP_SETUP_LAYOUT_COMM,  /* node layout by communication (split_type + allgather) */
    KP_SETUP_DUP,          /* private duplicate created */
    KP_SETUP_NODE_COMM,    /* node communicator created */
    KP_SETUP_SEGMENT,      /* shared segment allocated (or grown) */
    KP_SETUP_CMA_PROBE,    /* cross-memory attach probe */
    KP_SETUP_CALIBRATE,    /* calibration measured + costs agreed (select/calibrate.c) */
    KP_SETUP_POOL_PUT,     /* a freed communicator's resources pooled */
    KP_SETUP_RELEASE,      /* resources released (collective frees) */
    KP_SETUP_NPARTS
};
void kp_setup_account(int part, double seconds);
/* segments allocated and not yet freed, this process (tests) */
int kp_setup_live_segments(void);

#define KP_PLAN_CACHE_MAX 16
/* Find or build the plan of (coll, algo, prm, bytes) for this communicator. */
int kp_plan_get(kp_comm *c, int coll, const kp_algo *a, const kp_params *prm, int64_t bytes, int root, int inplace,
                kp_plan **out);
void kp_plan_free(kp_plan *pl);

/* ---- topology (topo/topo.c) and shared memory (exec/shm.c) ---- */
/* Node layout (c->layout, local, node_size, oversub) from
 * MPI_COMM_TYPE_SHARED and the emulation variables KPORT_NODE_SIZE,
 * KPORT_NODE_MAP (block | cyclic | explicit list of node ids, one per rank
 * of MPI_COMM_WORLD): derived from the world's layout when it is known and
 * reuse is allowed (no communication), else by communication on c->user.
 * Collective. */
int kp_topo_layout(kp_comm *c, int derive);
/* The node tier: node communicator, shared segment, cross-memory attach
 * probe agreed by every rank (sets layout.cma, node_ready). Collective. */
int kp_topo_node(kp_comm *c);
/* Release the node tier and the private duplicate (collective frees). */
void kp_topo_release(kp_comm *c);
/* Forget the world's node keys (kp_release_caches, MPI_Finalize). */
void kp_topo_forget_world(void);
/* Make the segment's halves at least `half` bytes (collective on the node). */
int kp_shm_reserve(kp_comm *c, int64_t half);
/* Free the segment (collective on the node). */
void kp_shm_free(kp_comm *c);
/* Spin, then back off and yield, until *flag >= target; progresses the
 * requests reqs[0..n) meanwhile. */
void kp_shm_wait(kp_comm *c, _Atomic uint64_t *flag, uint64_t target, MPI_Request *reqs, int n);

/* MPI_STATUSES_IGNORE through a variable defined in another file: GCC 12's
 * access attributes on MPICH's MPI_Waitall/Testall otherwise warn that
 * (MPI_Status *)1 is "a region of size 0". */
extern MPI_Status *const kp_statuses_ignore;

/* ---- executor (exec/p2p.c) ---- */
/* Run a plan on its communicator (pl->owner): sbuf is the send buffer's
 * first byte (for MPI_IN_PLACE pass rbuf + rank * bytes), rbuf the receive
 * buffer's. */
int kp_exec_p2p(kp_plan *pl, const void *sbuf, void *rbuf);

/* ---- one-sided transport (exec/rma.c) ---- */
/* Bring up the windows plans with transport=rma and pl->prm.rails rails
 * use on c, and the dynamic ones unless rma_path is KP_RMA_PATH_STAGING
 * (collective over c->comm; every rank builds the same plan). */
int kp_rma_ready(kp_comm *c, int rails, int rma_path);
/* Free c's windows (collective) and set c->rma NULL. */
void kp_rma_release(kp_comm *c);
/* windows created and not yet freed, this process (tests) */
int kp_rma_live_windows(void);
/* the attach path (tests): MPI_Win_attach / MPI_Win_detach calls of the
 * attachment cache so far, this process; whether c's rails-rail link has
 * working dynamic windows (1), fell back to staging (0) or has none (-1) */
void kp_rma_attach_stats(long *attaches, long *detaches);
int kp_rma_attach_ready(kp_comm *c, int rails);
/* The executor's hooks (p2p.c walks the schedule): a round's message
 * operations are added as they come (p points at the op's bytes), started
 * (every send of the round put, up to the ring's room: k puts in flight)
 * before the round's copies, polled while waiting for a shared-memory flag,
 * and completed at the end of the round. */
int kp_rma_round_begin(kp_plan *pl);
int kp_rma_add(kp_plan *pl, const kp_op *op, char *p);
int kp_rma_poll(kp_plan *pl);
int kp_rma_round_end(kp_plan *pl);
/* Wait until *flag >= target while progressing the round's transfers. */
int kp_rma_wait_flag(kp_plan *pl, _Atomic uint64_t *flag, uint64_t target);

/* ---- selection (select/select.c) ---- */
typedef struct kp_choice {
    const kp_algo *algo;
    kp_params prm;
    const kp_algo *alt; /* the calibrated choice's other priced candidate, else NULL */
    kp_params alt_prm;
    int forced;        /* 1 when forced by kp_set_algorithm or the environment */
    char why[160];
} kp_choice;

/* Settings from the environment, read once (KPORT_<COLL>, KPORT_FALLBACK,
 * KPORT_VERBOSE). Returns KP_ERR_PARAM (with message) on a bad variable. */
int kp_settings_load(void);
int kp_verbose(void);
/* An integer environment variable the transports read when they set up:
 * def when unset or empty, KP_ENV_BAD when it is not an integer in lo..hi
 * (lo >= -1, so the two never meet); the caller reports it. */
#define KP_ENV_BAD (-2)
int kp_env_int(const char *name, int def, int lo, int hi);
int kp_fallback_policy(void);
/* The forced choice for coll, if any (algo NULL = auto). */
int kp_select_forced(int coll, kp_choice *ch);
/* Built-in automatic rules. */
void kp_select_auto(int coll, const kp_layout *L, int P, int64_t bytes, kp_choice *ch);
/* kp_select_auto on c's layout, bringing up the node tier first when the
 * rules pick a shared-memory algorithm (their choice depends on whether
 * cross-memory attach works, which the node tier probes); then, on one
 * node with calibrated costs, the cost model's choice among the candidates
 * the rules allow (select/calibrate.c). */
int kp_comm_select_auto(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch);
/* Thresholds of the rules (select.c), for the calibrated choice. */
int kp_single_copy_min_set(void); /* KPORT_SINGLE_COPY_MIN given: keep the fixed rule */
int64_t kp_shm_max(void);
int kp_shm_chunk_kb(void);

/* ---- calibration (select/calibrate.c) ---- */
/* Measure the node's shared-memory costs (once per process, by the node's
 * local ranks 0 and 1) and agree on one set across c (MPI_MAX), together
 * with whether cross-memory attach works (cma: this rank's probe); sets
 * c->mach, c->calibrated, c->layout.cma (what measuring took:
 * kp_calibration_cost_ns). Collective over c. */
int kp_calibrate(kp_comm *c, int cma);
/* Price the rules' one-node candidates with the model; 1 and *ch set when
 * the model chose, 0 when the rules decide. */
int kp_calibrated_choice(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch);
/* The model's pick among the one-node candidates of coll on layout L with
 * machine m (kp_calibrated_choice's core, pure: tests call it with fixed
 * machines): 1 and *ch set, or 0 when no candidate applies. The
 * single-copy candidate runs only when predicted KP_PICK_MARGIN times
 * cheaper than the two-copy one (calibrate.c says why). */
#define KP_PICK_MARGIN 1.15
int kp_model_pick(const kp_machine *m, int coll, const kp_layout *L, int P, int64_t bytes, int root, int inplace,
                  kp_choice *ch);
/* KPORT_CALIBRATE (select.c): 0 never, 1 once per process (default), 2 force. */
int kp_calibrate_mode(void);
/* KPORT_VERIFY (select.c): 0 the model's choice stays, 1 checked by
 * measurement (default; select/verify.c). */
int kp_verify_mode(void);
/* The agreed costs as a vector (tests): returns the number of words. */
int kp_calibration_words(const kp_comm *c, double *out, int n);
double kp_calibration_cost_ns(void);
/* Resolve the plan to run: forced plan, or auto plan (falling back as the
 * policy says when the forced algorithm refuses). */
int kp_select_plan(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **out);
void kp_set_last_algorithm(int coll, const kp_plan *pl);

/* ---- the calibrated choice checked by measurement (select/verify.c) ---- */
/* calls moving fewer bytes in all (P x block) are never checked */
#define KP_VERIFY_MIN ((int64_t)8192)
/* whether a call's choice may be checked: the calibrated choice (c->alt
 * set) and at least KP_VERIFY_MIN bytes in all; inline, so that the other
 * calls do not call into verify.c to find out (that call cost ~40
 * instructions, ~10 ns, on every `auto` all-gather of 8 B) */
static inline int kp_verify_applies(const kp_comm *c, int coll, int64_t bytes)
{
    return c->alt[coll] && (int64_t)c->size * bytes >= KP_VERIFY_MIN;
}
/* Before a call for which kp_verify_applies: *pl becomes the plan to run
 * (the other candidate where a trial or an earlier trial says so); *token
 * and *side to pass to kp_verify_end
 * (token NULL: nothing to do). Every rank must make the same calls. */
int kp_verify_begin(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **pl, void **token,
                    int *side);
/* After it: ns is what the call took on this rank; the trial's last call
 * agrees (MPI_Allreduce on c's private duplicate) and decides. */
int kp_verify_end(kp_comm *c, int coll, const kp_algo *pick, void *token, int side, double ns);
void kp_verify_free(kp_comm *c);

#endif /* KP_CORE_H */
