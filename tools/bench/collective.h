/*
 * kport-bench's collective runner, between its files (the runner's manual
 * is the header of collective.c):
 *
 *   collective.c          kb_coll_main: the sizes, the buffers, the rounds
 *                         (every algorithm interleaved size by size), the
 *                         rows as they are ready
 *   collective_options.c  the options (OSU's -m -i -x -f -c, -r, -a, --b2b,
 *                         --rounds, --transports, --sendrecv, --format,
 *                         --predict, --type, --op) and the runner's usage
 *   collective_measure.c  the timed loops: isolated calls, back-to-back
 *                         batches, the memcpy, sendrecv and bw_limit
 *                         references, the
 *                         statistics of an (algorithm, size)
 *   collective_report.c   the output: the text table, its header and footer,
 *                         JSON lines, and the cost model's predictions
 *
 * A collective's own file (allgather.c, ...) needs only kb_coll_main.
 */
#ifndef KPORT_BENCH_COLLECTIVE_H
#define KPORT_BENCH_COLLECTIVE_H

#include "harness.h"
#include "probe.h"

#include "model/model.h"

/* The collective runner: kport-bench COLL [options]; returns the exit code.
 * A collective's subcommand main is one call of it with its kb_coll. */
int kb_coll_main(const kb_coll *bc, int argc, char **argv);

/* ------------------------------------------------------------------------- */
/* Between the runner's files                                                 */
/* ------------------------------------------------------------------------- */

#define KB_LARGE_MSG 65536 /* above this: fewer iterations (OSU's "large") */
#define KB_DEF_ITERS 1000
#define KB_DEF_ITERS_LARGE 100
#define KB_DEF_WARMUP 100
#define KB_DEF_WARMUP_LARGE 10
#define KB_DEF_ROUNDS 10
#define KB_DEF_MIN 1
#define KB_DEF_MAX 1048576
#define KB_MAX_SIZES 80
#define KB_MAX_TRANSPORTS 8

typedef struct alg_entry {
    char spec[KB_NAME_LEN];  /* as given to -a (or the registry name) */
    char label[KB_NAME_LEN]; /* column header: what ran (kp_last_algorithm) */
    int native;
    int is_auto;
    int is_memcpy;           /* reference: one memcpy of the receive buffer's bytes */
    int is_sendrecv;         /* reference: one exchange of size bytes with rank ^ 1 (Irecv, Isend, Waitall) */
    int is_limit;            /* reference: the collective's bw_limit (kb_coll.limit) */
    int is_ref;              /* any reference: not an MPI collective, not kport */
    int tagged;              /* --transports: the column name carries the transport */
    char na_msg[KB_ERR_LEN]; /* first refusal */
    int na_noted;            /* refusal printed in the header */
} alg_entry;

typedef struct options {
    const kb_coll *coll;
    size_t min_size, max_size;
    int iters, iters_large, warmup, warmup_large;
    int full, check, json;
    int b2b;            /* --b2b N: calls per back-to-back batch; 0: isolated calls */
    int rounds;         /* --rounds R: the sizes and algorithms take turns, R rounds */
    int root, root_set; /* -r (rooted collectives) */
    int type, op;       /* --type, --op (reductions; KB_T_*, KB_OP_*) */
    int nalgs, cap;
    alg_entry *algs;
    char transports[KB_MAX_TRANSPORTS][KB_NAME_LEN]; /* --transports: "" (p2p) or "transport=rma,..." */
    int ntransports;
    const char *predict; /* --predict FILE */
    kp_machine machine;  /* its parameters (when predict) */
} options;

enum { RES_OK = 0, RES_NA, RES_ERR, RES_INVALID };

typedef struct result {
    int status;
    kb_stat t;             /* per call, seconds */
    int iters;
    long long bad;         /* wrong bytes, summed over ranks (-c) */
    char ran[KB_NAME_LEN]; /* kp_last_algorithm (or "native") */
    int ran_known;         /* ran is what kport reported (not just the request) */
    char msg[KB_ERR_LEN];  /* why n/a or failed */
    int has_pred;          /* --predict: the model's time (rank 0) */
    double pred, pred_hockney; /* seconds */
    int has_limit;         /* the bw_limit column ran at this size (not size 0): */
    double limit;          /* its median (seconds; back to back it may be <= 0 when below the noise) */
} result;

typedef struct run_state {
    int done;              /* iterations (batches) timed so far */
    int calls;             /* iterations (batches) run so far, warm-up included: the next one's data pattern */
    int stop;              /* refused or failed at its first call, or out of memory: no more rounds */
    int moves;             /* the call moves data (kport records what it ran) */
    int failed;            /* this rank's first failing return code */
    long long bad;         /* wrong bytes (-c) */
    char errmsg[KB_ERR_LEN];
    char ran[KB_NAME_LEN - 8]; /* auto: what kport ran, right after its calls ("auto(...)" fits in a result) */
} run_state;

typedef struct run_env {
    char mpi[256];
    int P, hosts, rmin, rmax;
    char kport_nodes[256];
} run_env;


/* collective_options.c */
/* The options of argv (argv[1] is the collective's name) into o; bad
 * usage: the message and the usage on rank 0, exit 2. */
void kbc_parse_options(const kb_coll *coll, int argc, char **argv, options *o);
_Noreturn void kbc_bad_usage(const options *o, const char *fmt, const char *arg);

/* collective_measure.c */
/* the start line of every timed call or batch (probe.h: kb_sync) */
extern kb_sync kbc_start;
double kbc_measure_rewrite(const options *o, kb_ctx *cx, int wbatches, int batches, double *times, double *maxes,
                           MPI_Comm sync);
void kbc_run_round(const options *o, kb_ctx *cx, alg_entry *a, int k, int warm, int iters, double *times,
                   run_state *st, result *r, MPI_Comm sync);
void kbc_finish_alg(const options *o, kb_ctx *cx, alg_entry *a, double rewrite, double *times, double *maxes,
                    run_state *st, result *r, MPI_Comm sync);

/* collective_report.c */
void kbc_json_line(const options *o, const char *mpi, int P, int hosts, size_t size, const alg_entry *a,
                   const result *r, double rewrite);
void kbc_text_cell(const alg_entry *a, const result *r);
void kbc_print_header(options *o, const run_env *e);
void kbc_print_footer(const options *o, const size_t *sizes, int nsizes, const result *res, int failures);
int kbc_kport_layout(MPI_Comm comm, kp_layout *L);
void kbc_predict_row(const options *o, const kp_layout *L, int P, size_t size, const alg_entry *a, result *r);
void kbc_print_limits(const options *o, const size_t *sizes, int nsizes, const result *res);

#endif
