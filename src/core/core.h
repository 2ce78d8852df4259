/* Internal glue shared by the public entry points: per-communicator state,
 * plans, selection, errors. Not part of the API. */
#ifndef KP_CORE_H
#define KP_CORE_H

#include "algo/algo.h"
#include "kport.h"

#include <mpi.h>
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
} kp_plan;

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
} kp_comm;

/* Look up (or create on first use) kport's state for comm. Collective on
 * first use of a communicator (it duplicates it). */
int kp_comm_get(MPI_Comm comm, kp_comm **out);
/* Grow the staging buffer to at least n bytes. */
int kp_comm_stage(kp_comm *c, int64_t n, void **out);

#define KP_PLAN_CACHE_MAX 16
/* Find or build the plan of (coll, algo, prm, bytes) for this communicator. */
int kp_plan_get(kp_comm *c, int coll, const kp_algo *a, const kp_params *prm, int64_t bytes, int root, int inplace,
                kp_plan **out);
void kp_plan_free(kp_plan *pl);

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
void kp_select_auto(int coll, int P, int64_t bytes, kp_choice *ch);
/* Resolve the plan to run: forced plan, or auto plan (falling back as the
 * policy says when the forced algorithm refuses). */
int kp_select_plan(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **out);
void kp_set_last_algorithm(int coll, const char *name);

#endif /* KP_CORE_H */
