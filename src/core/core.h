/* Internal glue shared by the public entry points: per-communicator state,
 * plans, selection, errors. Not part of the API. */
#ifndef KP_CORE_H
#define KP_CORE_H

#include "algo/algo.h"
#include "kport.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

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
    int announced;         /* KPORT_VERBOSE / fallback warning printed */
    int refuse_code;
    char errmsg[256];
    char name[64];         /* "bruck:k=2" */
    kp_sched sched;
    void *scratch;
    MPI_Request *reqs;
    int maxreq;            /* requests one round may need */
    int uses_flags;        /* posts/waits/peer copies: a counted call (flag values) */
    int uses_segment;      /* data in the segment: the call flips its halves */
    struct kp_comm *owner;
    uint64_t serial;       /* unique per plan ever built (starts at 1) */
} kp_plan;

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
} kp_shm;

/* ---- per-communicator state (comm.c) ---- */
typedef struct kp_comm {
    MPI_Comm user;   /* the user's communicator (attribute holder) */
    MPI_Comm comm;   /* kport's private duplicate */
    int rank, size;
    kp_plan *plans;  /* most recently used first */
    int nplans;
    void *stage;     /* staging for non-contiguous datatypes */
    int64_t stage_bytes;
    struct kp_comm *gnext, *gprev; /* all live states */
    /* topology (topo/topo.c) */
    kp_layout layout;   /* node of every rank (real or emulated nodes) */
    MPI_Comm node;      /* ranks of my node, ordered by rank */
    MPI_Comm leaders;   /* node leaders (MPI_COMM_NULL on other ranks) */
    int local, node_size;
    int oversub;        /* more ranks on this machine than cores: yield when waiting */
    kp_shm shm;
    uint64_t seq;       /* calls that used shared-memory flags on this communicator */
    uint64_t parity;    /* calls that put data in the segment (selects the half) */
    /* the plan the previous call of each collective ran, for the fast path */
    kp_plan *last[KP_COLL_COUNT];
    unsigned last_gen[KP_COLL_COUNT];
} kp_comm;

/* Look up (or create on first use) kport's state for comm. Collective on
 * first use of a communicator (it duplicates it). */
int kp_comm_get(MPI_Comm comm, kp_comm **out);
/* The state of the communicator the previous call used, if comm is it
 * (no MPI call, no creation); else NULL. */
kp_comm *kp_comm_peek(MPI_Comm comm);
/* Grow the staging buffer to at least n bytes. */
int kp_comm_stage(kp_comm *c, int64_t n, void **out);

#define KP_PLAN_CACHE_MAX 16
/* Find or build the plan of (coll, algo, prm, bytes) for this communicator. */
int kp_plan_get(kp_comm *c, int coll, const kp_algo *a, const kp_params *prm, int64_t bytes, int root, int inplace,
                kp_plan **out);
void kp_plan_free(kp_plan *pl);

/* ---- topology (topo/topo.c) and shared memory (exec/shm.c) ---- */
/* Node layout from MPI_COMM_TYPE_SHARED and the emulation variables
 * KPORT_NODE_SIZE, KPORT_NODE_MAP (block | cyclic | explicit list of node
 * ids, one per rank of MPI_COMM_WORLD), KPORT_CMA; creates the node and
 * leaders' communicators and the shared segment. Collective. */
int kp_topo_init(kp_comm *c);
void kp_topo_free(kp_comm *c);
/* Make the segment's halves at least `half` bytes (collective on the node). */
int kp_shm_reserve(kp_comm *c, int64_t half);
/* Spin, then back off and yield, until *flag >= target; progresses the
 * requests reqs[0..n) meanwhile. */
void kp_shm_wait(kp_comm *c, _Atomic uint64_t *flag, uint64_t target, MPI_Request *reqs, int n);

/* MPI_STATUSES_IGNORE through a variable defined in another file: GCC 12's
 * access attributes on MPICH's MPI_Waitall/Testall otherwise warn that
 * (MPI_Status *)1 is "a region of size 0". */
extern MPI_Status *const kp_statuses_ignore;

/* ---- executor (exec/p2p.c) ---- */
/* Run a plan: sbuf is the send buffer's first byte (for MPI_IN_PLACE pass
 * rbuf + rank * bytes), rbuf the receive buffer's. */
int kp_exec_p2p(kp_plan *pl, MPI_Comm comm, const void *sbuf, void *rbuf);

/* ---- selection (select/select.c) ---- */
typedef struct kp_choice {
    const kp_algo *algo;
    kp_params prm;
    int forced;        /* 1 when forced by kp_set_algorithm or the environment */
    char why[160];
} kp_choice;

/* Settings from the environment, read once (KPORT_<COLL>, KPORT_FALLBACK,
 * KPORT_VERBOSE). Returns KP_ERR_PARAM (with message) on a bad variable. */
int kp_settings_load(void);
int kp_verbose(void);
int kp_fallback_policy(void);
/* The forced choice for coll, if any (algo NULL = auto). */
int kp_select_forced(int coll, kp_choice *ch);
/* Built-in automatic rules. */
void kp_select_auto(int coll, const kp_layout *L, int P, int64_t bytes, kp_choice *ch);
/* Resolve the plan to run: forced plan, or auto plan (falling back as the
 * policy says when the forced algorithm refuses). */
int kp_select_plan(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **out);
void kp_set_last_algorithm(int coll, const kp_plan *pl);

#endif /* KP_CORE_H */
