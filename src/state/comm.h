/*
 * The per-communicator state every runtime layer reads (topo, exec, plan,
 * select, core): what a communicator's set-up has brought up, and the
 * shared segment's layout. Only data and the few helpers every layer
 * needs (state.c); each resource is set up by its own layer, and the
 * state's life (creation, the pool, freeing) is core's (core/comm.c).
 */
#ifndef KP_STATE_COMM_H
#define KP_STATE_COMM_H

#include "algo/algo.h"
#include "params/params.h"
#include "kport.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdint.h>

struct kp_rma;
struct kp_verify;
struct kp_choice_memo;

/* A plan: a schedule plus what running it needs, cached per communicator
 * (src/plan builds and caches them, src/exec runs them). */
/* The shape of a reduction call beyond its bytes (sched.h: sched.elem,
 * sched.commute, sched.block_off): part of a reduction plan's key. */
typedef struct kp_red {
    int64_t elem;             /* bytes of one element (1 for the data collectives) */
    int commute;              /* the operation commutes */
    const int64_t *block_off; /* reduce_scatter: [P + 1] result block offsets; else NULL */
} kp_red;

typedef struct kp_plan {
    struct kp_plan *next;  /* in the communicator's MRU list */
    int coll;
    const kp_algo *algo;   /* the algorithm asked for */
    kp_params prm;
    int64_t bytes;
    int root, inplace;     /* part of the key: rooted / in-place schedules differ */
    int64_t elem;          /* reductions (part of the key): kp_red, with block_off owned */
    int commute;
    int64_t *block_off;
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

/* a call class whose segment every rank agreed on (plan/plan.c) */
typedef struct kp_seg_class {
    int coll, root, ok;
    const struct kp_algo *algo;
    kp_params prm;
    int64_t bytes;
} kp_seg_class;

/* ---- shared memory (topo/segment.c) ---- */
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

/* ---- per-communicator state  ---- */
/*
 * A communicator's state is set up in tiers, each when a call first needs
 * it (see core/comm.c): the node layout always (derived without communication
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
    struct kp_plan *plans;  /* most recently used first */
    int nplans;
    /* the reduction shape of the call being selected: core sets it before
     * kp_select_plan for reductions; plans of other collectives ignore it */
    kp_red red;
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
    unsigned warned;    /* collectives (bits) whose forced algorithm KPORT_FALLBACK=warn reported */
    /* across nodes: the segment's outcome per call class (plan/plan.c) */
    struct kp_seg_class *segc;
    int nsegc, capsegc;
    struct kp_choice_memo *memo; /* the automatic choices made so far , pooled with the plans */
    struct kp_machine *mach; /* the agreed calibrated costs (topo/calibrate.c), with the node tier */
    int calibrated;     /* mach holds this node's measurements (not the defaults) */
    long calls;         /* kport calls made on it and on the freed communicators of
                           the same group whose resources it took (cold policy) */
    MPI_Comm node;      /* ranks of my node, ordered by rank (MPI_COMM_NULL until needed) */
    kp_shm shm;
    struct kp_rma *rma; /* one-sided transport's windows (exec/onesided.c), NULL until a plan uses them */
    /* the plan the previous call of each collective ran, for the fast path */
    struct kp_plan *last[KP_COLL_COUNT];
    unsigned last_gen[KP_COLL_COUNT];
    /* the calibrated choice's other candidate for that call (NULL: none,
     * or not the calibrated choice), and the check of the choice by
     * measurement (select/verify.c) */
    const struct kp_algo *alt[KP_COLL_COUNT];
    kp_params alt_prm[KP_COLL_COUNT];
    struct kp_verify *verify;
} kp_comm;

/* Agree on a set-up outcome: 1 when ok is nonzero on every rank of c, else
 * 0 (PMPI_Allreduce on the user's communicator: every rank is in the same
 * kport call). One rank: ok itself. */
int kp_comm_agree(kp_comm *c, int ok);
/* Say once per communicator and kind (rank 0, KPORT_VERBOSE=1) what MPI
 * refused and what runs instead. */
enum { KP_REFUSED_NODE = 1, KP_REFUSED_SEGMENT = 2, KP_REFUSED_RMA = 4, KP_REFUSED_CMA = 8 };
void kp_comm_refusal_note(kp_comm *c, unsigned kind, const char *what);

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
    KP_SETUP_CALIBRATE,    /* calibration measured + costs agreed (topo/calibrate.c) */
    KP_SETUP_POOL_PUT,     /* a freed communicator's resources pooled */
    KP_SETUP_RELEASE,      /* resources released (collective frees) */
    KP_SETUP_NPARTS
};
void kp_setup_account(int part, double seconds);
/* segments allocated and not yet freed, this process (tests; the segment's
 * code counts them with kp_setup_segments(+1 / -1)) */
int kp_setup_live_segments(void);
void kp_setup_segments(int delta);
/* print the accounting (KPORT_SETUP_STATS=1, rank 0 of MPI_COMM_WORLD) */
void kp_setup_print(void);


/* MPI_STATUSES_IGNORE through a variable defined in another file (state.c): GCC 12's
 * access attributes on MPICH's MPI_Waitall/Testall otherwise warn that
 * (MPI_Status *)1 is "a region of size 0". */
extern MPI_Status *const kp_statuses_ignore;

#endif
