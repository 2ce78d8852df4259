/*
 * kport-bench's harness: what every subcommand shares.
 *
 *   mpirun -np P kport-bench SUBCOMMAND [options]      (kport-bench -h lists them)
 *
 * The program is this harness plus one file per subcommand:
 *
 *   harness.c     main() and the table of subcommands; option parsing
 *                 helpers; the measured environment (MPI library, hosts,
 *                 kport's node layout); the validation pattern; statistics
 *                 (median of per-iteration maxima over ranks); JSON strings
 *   fit.c, probe.c  fits and message sizes (fit.h); the machine's probes:
 *                 clock, spin, shared segment, start line (probe.h)
 *   collective.c  the collective runner (its manual; collective.h lists its
 *                 files: options, measurement, report): OSU options, every
 *                 algorithm interleaved size by size, isolated calls or
 *                 back-to-back batches (--b2b), text and JSON output
 *   allgather.c, barrier.c, gather.c, alltoall.c, bcast.c, scatter.c,
 *   reduce.c, allreduce.c, reduce_scatter_block.c, reduce_scatter.c
 *                 one collective each: its buffers, one call (native or
 *                 kport), how -c fills and checks; its main is a call of
 *                 the runner; the file's header is the subcommand's manual
 *   reduction.c   the reductions' --type and --op, the values -c writes
 *                 and the fold it checks against, a plain combine loop
 *   churn.c       communicator churn: create, call, free
 *   loggp.c, fanout.c, concurrency.c, strided.c, rma.c
 *                 the machine's measurements (loggp.h lists loggp's files)
 *
 * main() looks argv[1] up in kb_commands[] and calls that entry's main: the
 * harness knows no subcommand's code, and no subcommand's code is called
 * from here but through that pointer.
 *
 * Timing rules every subcommand follows (ReproMPI's lesson: averages over
 * ranks hide stragglers): a measured interval starts after an MPI_Barrier
 * on a communicator of the harness (never the measured one), each rank
 * keeps its local times, kb_reduce_max() takes the maximum over ranks per
 * iteration after the loop (no communication inside it), and kb_stats()
 * reports the median over iterations (min, average and max too). Where
 * several variants are compared, alternate them (size by size, or cycle
 * by cycle) so drift of the machine hits all of them alike.
 *
 * Adding a subcommand (loggp, fanout, concurrency, strided, ...):
 *
 *   1. Write tools/bench/NAME.c, headed by a comment that is its manual
 *      (synopsis, what one measured interval contains, what -c checks, the
 *      output), ending with
 *          const kb_command kb_cmd_NAME = {"NAME", "one-line summary", NULL, NAME_main};
 *      NAME_main(argc, argv) runs after MPI_Init (argv[1] is NAME); parse
 *      with kb_parse_size / kb_parse_int, report bad input with
 *      kb_bad_usage (exit 2), print on rank 0 only, return the exit code
 *      (0, or 1 when validation failed).
 *   2. Declare it in the list below and add &kb_cmd_NAME to kb_commands[]
 *      in harness.c.
 *   3. Add NAME.c to add_executable(kport-bench ...) in CMakeLists.txt.
 *
 * A new collective that is "buffers, one call, fill, check" needs no
 * runner of its own: define a kb_coll (see allgather.c, the shortest), and
 *     static int NAME_main(int argc, char **argv) { return kb_coll_main(&kb_coll_NAME, argc, argv); }
 *     const kb_command kb_cmd_NAME = {"NAME", "summary", &kb_coll_NAME, NAME_main};
 * (collective.h) and it gets every option of the collective runner (-m -i
 * -x -f -c -a --b2b --format json) and a place in scripts/bench_report.py's
 * tables.
 */
#ifndef KPORT_BENCH_HARNESS_H
#define KPORT_BENCH_HARNESS_H

#include "kport.h"

#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KB_NAME_LEN 160
#define KB_ERR_LEN 512
#define KB_GUARD 64      /* bytes after the used part of a receive buffer */
#define KB_MAX_REPORTS 5 /* mismatches printed per rank, algorithm and size */

/* ------------------------------------------------------------------------- */
/* Subcommands                                                               */
/* ------------------------------------------------------------------------- */

typedef struct kb_coll kb_coll;

typedef struct kb_command {
    const char *name;    /* argv[1] */
    const char *summary; /* one line for kport-bench -h */
    const kb_coll *coll; /* a collective (its main runs the collective runner), else NULL */
    int (*main)(int argc, char **argv); /* the subcommand: after MPI_Init, argv[1] its name */
} kb_command;

extern const kb_command kb_cmd_allgather, kb_cmd_barrier, kb_cmd_gather, kb_cmd_alltoall, kb_cmd_churn;
extern const kb_command kb_cmd_loggp, kb_cmd_fanout, kb_cmd_concurrency, kb_cmd_strided, kb_cmd_rma;
extern const kb_command kb_cmd_bcast, kb_cmd_scatter, kb_cmd_reduce, kb_cmd_allreduce, kb_cmd_reduce_scatter_block,
    kb_cmd_reduce_scatter;
extern const kb_command *const kb_commands[];
extern const int kb_ncommands;

/* This process's rank in MPI_COMM_WORLD (messages, rank-0-only printing). */
extern int kb_rank;

/* ------------------------------------------------------------------------- */
/* Collectives (what the collective runner, collective.h, measures)          */
/* ------------------------------------------------------------------------- */

/* What a collective's hooks see: one (algorithm, size) being measured. */
typedef struct kb_ctx {
    MPI_Comm comm;       /* the measured calls run here (not the timing barrier's) */
    int rank, P;         /* in comm */
    size_t size;         /* message size in bytes (see kb_coll.size_desc) */
    int root;            /* root of rooted collectives (gather; -r) */
    unsigned char *sbuf; /* send buffer, sbuf_len bytes */
    unsigned char *rbuf; /* receive buffer, rbuf_len bytes + KB_GUARD */
    size_t sbuf_len, rbuf_len;
    int native;          /* 1: native MPI call, 0: kport */
    const char *label;   /* algorithm being measured (for messages) */
    int reported;        /* mismatches printed so far for this (algorithm, size) */
    /* Reductions (kb_coll.reduction; --type, --op): the datatype and
     * operation of the call, the element size, and a scratch of as many
     * bytes as the send buffer (the bw_limit reference's second operand) */
    int type, op;        /* KB_T_*, KB_OP_* (reduction.c) */
    MPI_Datatype mtype;
    MPI_Op mop;
    size_t elem;         /* bytes of one element (1 for the byte collectives) */
    unsigned char *aux;
    int *counts;         /* reduce_scatter: elements of each rank's block [P], */
    int *displs;         /* their offsets in the vector [P], for the size counts_of */
    size_t counts_of;
} kb_ctx;

enum { KB_SIZED = 0, KB_SIZELESS = 1 };

struct kb_coll {
    const char *name;        /* subcommand name, "coll" in JSON */
    int kcoll;               /* enum kp_coll, or -1 if kport lacks it (native only) */
    const char *native_call; /* for the header */
    int sizes;               /* KB_SIZED, or KB_SIZELESS: one row of size 0, -m ignored */
    int rooted;              /* accepts -r ROOT */
    const char *size_desc;   /* what "size" means, for the header */
    const char *bad_unit;    /* what check/selftest count ("wrong bytes") */
    /* Send / receive bytes for a message size; nonzero on overflow. NULL: no data. */
    int (*buffers)(size_t size, int P, size_t *sbytes, size_t *rbytes);
    /* One call of the collective on cx->comm; returns a KP_* code. */
    int (*run)(kb_ctx *cx);
    /* Write call `iter`'s data into the send buffer (-c, and before every
     * call of a back-to-back batch, where it is timed). May be NULL. */
    void (*write_send)(kb_ctx *cx, int iter);
    /* Poison the receive buffer (and its guard) for call `iter` (-c,
     * untimed). May be NULL. */
    void (*poison_recv)(kb_ctx *cx, int iter);
    /* After call `iter` (-c, untimed): number of wrong bytes. May be NULL. */
    long long (*check)(kb_ctx *cx, int iter);
    /* With -c, after the timed calls of an (algorithm, size): an untimed
     * test of the collective's semantics (for a collective without data to
     * compare); returns the violations on this rank, and the first failing
     * return code in *rc. Collective over sync. May be NULL. */
    long long (*selftest)(kb_ctx *cx, MPI_Comm sync, int *rc);
    /* Extra "# ..." header lines when -c is on. May be NULL. */
    const char *check_note;
    /* A reduction: takes --type and --op; sizes are multiples of the
     * element size (size / elem elements). */
    int reduction;
    /* Bytes the reference column memcpy copies per rank for a size; NULL:
     * the receive buffer's (P*size for rooted collectives: the root's). */
    size_t (*copy_bytes)(size_t size, int P);
    /* The reference column "bw_limit" (NULL: none): the copies and
     * combines any algorithm must make, one call's worth, on this rank
     * (cx->sbuf, cx->aux -> cx->rbuf); limit_desc says what for the header. */
    void (*limit)(kb_ctx *cx);
    const char *limit_desc;
};

/* ------------------------------------------------------------------------- */
/* Options                                                                    */
/* ------------------------------------------------------------------------- */

/* Print "kport-bench: <fmt with arg>" and the subcommand's usage on rank 0
 * (usage may be NULL), leave MPI, exit 2. */
_Noreturn void kb_bad_usage(void (*usage)(FILE *f, const void *arg), const void *usage_arg, const char *fmt,
                  const char *arg);
/* Non-negative decimal integer with an optional K/M/G suffix (binary); 0 on success. */
int kb_parse_size(const char *s, size_t *out);
/* Decimal integer >= minv; 0 on success. */
int kb_parse_int(const char *s, int minv, int *out);
/* --name VALUE / --name=VALUE at argv[*i]: the value (and *i advanced), or
 * NULL if argv[*i] is not --name. Missing value: kb_bad_usage. */
const char *kb_long_option(int argc, char **argv, int *i, const char *name,
                           void (*usage)(FILE *f, const void *arg), const void *usage_arg);
/* -m SIZES as kb_size_list reads it (no 0): the number of sizes stored in
 * sizes[max]; a bad list: kb_bad_usage naming it and why. */
int kb_size_option(const char *m, size_t *sizes, int max, void (*usage)(FILE *f, const void *arg),
                   const void *usage_arg);
/* The options every measuring subcommand shares, at argv[*i]: -h/--help
 * (usage on stdout, exit 0), --format text|json (*json), -c (*check).
 * 1 when argv[*i] was one of them (and *i advanced past its value). */
int kb_common_option(int argc, char **argv, int *i, void (*usage)(FILE *f, const void *arg), const void *usage_arg,
                     int *json, int *check);

/* ------------------------------------------------------------------------- */
/* The measured environment                                                   */
/* ------------------------------------------------------------------------- */

/* "Open MPI 4.1.4", "MPICH 4.0.2", else the first line of the library version. */
void kb_mpi_library_name(char *out, size_t outlen);
/* Distinct hosts (MPI_Get_processor_name) and ranks per host; collective. */
void kb_node_layout(MPI_Comm comm, int *hosts, int *rmin, int *rmax);
/* kport's node layout, "2 nodes of 2,2 ranks (emulated: ...)"; collective. */
void kb_kport_layout(MPI_Comm comm, char *out, size_t len);

/* ------------------------------------------------------------------------- */
/* Validation pattern                                                         */
/* ------------------------------------------------------------------------- */

/* The data of `id` in call `iter`: 64-bit words seed(id, iter) + (w+1)*step,
 * stored in the machine's byte order, the tail from the next word. A
 * misplaced block, a stale call, data from the wrong rank or a shifted
 * offset all differ; writing it costs about a memset (it is timed in
 * back-to-back batches). complement: its bitwise complement (poison). */
void kb_fill_pattern(unsigned char *dst, size_t n, uint64_t id, int iter, int complement);
/* id of rank r's data (allgather, gather) */
uint64_t kb_rank_id(int rank);
/* id of the block rank src sends to rank dst (alltoall); never a rank id */
uint64_t kb_pair_id(int src, int dst);
/* Bytes of src[0..n) that differ from id's pattern (complemented: a
 * poisoned buffer that must stay untouched); the first KB_MAX_REPORTS per
 * (algorithm, size) are printed: "<where> byte <base+j> (<origin> byte j)". */
long long kb_check_id(kb_ctx *cx, const unsigned char *src, size_t n, uint64_t id, int iter, int complement,
                      const char *where, size_t base, const char *origin);
/* The same for rank's data ("rank 3's"). */
long long kb_check_pattern(kb_ctx *cx, const unsigned char *src, size_t n, int rank, int iter, const char *where,
                           size_t base);
/* Rank-block collectives (allgather, gather): the send buffer is one block
 * of cx->rank's pattern; the receive buffer's block r is poisoned with the
 * complement of rank r's, followed by the guard. */
void kb_rank_block_write(kb_ctx *cx, int iter);
void kb_rank_blocks_poison(kb_ctx *cx, int iter);
/* Buffers of sblocks / rblocks blocks of size bytes (rbytes leaves room for
 * KB_GUARD); nonzero if size exceeds an int count or the bytes overflow. */
int kb_block_buffers(size_t size, int P, int sblocks, int rblocks, size_t *sbytes, size_t *rbytes);
#define KB_BYTES_BAD "wrong bytes (summed over ranks and iterations)"
/* kb_coll.copy_bytes of collectives whose memcpy reference copies one
 * block of size bytes per rank (bcast, scatter, the reductions) */
size_t kb_copy_block(size_t size, int P);
/* KB_GUARD known bytes after the first `used` bytes of the receive buffer. */
void kb_guard_fill(kb_ctx *cx, size_t used);
long long kb_guard_check(kb_ctx *cx, size_t used, int iter);
/* Print one mismatch (counts towards KB_MAX_REPORTS). */
void kb_mismatch(kb_ctx *cx, int iter, const char *what, unsigned expected, unsigned got);

/* ------------------------------------------------------------------------- */
/* Reductions (reduction.c): datatypes, operations, the values -c checks      */
/* ------------------------------------------------------------------------- */

enum { KB_T_DOUBLE, KB_T_FLOAT, KB_T_INT, KB_T_LONG, KB_T_INT8, KB_T_UINT8, KB_T_INT64, KB_T_UINT64, KB_NTYPES };
enum { KB_OP_SUM, KB_OP_PROD, KB_OP_MAX, KB_OP_MIN, KB_OP_BAND, KB_OP_BOR, KB_OP_BXOR, KB_NOPS };

/* Names ("double", "sum"), lists for usage ("double|float|..."), lookups
 * (-1: unknown); kb_red_valid: does MPI define op on type (bitwise ops:
 * integer types only). */
const char *kb_red_type_name(int type);
const char *kb_red_op_name(int op);
const char *kb_red_type_list(void);
const char *kb_red_op_list(void);
int kb_red_type_find(const char *name);
int kb_red_op_find(const char *name);
int kb_red_valid(int type, int op);
size_t kb_red_elem(int type);
MPI_Datatype kb_red_mpi_type(int type);
MPI_Op kb_red_mpi_op(int op);
/* c[i] = a[i] op b[i] for n elements of type (a plain loop; integers wrap) */
void kb_red_combine(int type, int op, const void *a, const void *b, void *c, size_t n);
/* Elements first .. first+n-1 of rank's input vector in call iter (cx's
 * type and op) into dst: integers that every combine keeps exact. */
void kb_red_fill(const kb_ctx *cx, unsigned char *dst, size_t first, size_t n, int rank, int iter);
/* Wrong bytes of got[0 .. n elements) against elements first.. of the
 * reduction over all P inputs (folded in rank order) in call iter; where
 * names the buffer in messages. */
long long kb_red_check(kb_ctx *cx, const unsigned char *got, size_t first, size_t n, int iter, const char *where);
/* Wrong bytes of got against this rank's own input (elements first..). */
long long kb_red_check_input(kb_ctx *cx, const unsigned char *got, size_t first, size_t n, int iter,
                             const char *where);
/* reduce_scatter's uneven counts of a vector of n elements over P ranks
 * (reduce_scatter.c's header): counts[P] */
void kb_rs_counts(int n, int P, int *counts);
/* The reduction collectives' -c hooks: write this rank's input of nsend
 * elements for call iter into the send buffer; poison the receive
 * buffer's first rbytes (and the guard after them); check the receive
 * buffer against the result's elements first .. first+n-1 (n = 0: it must
 * still hold the poison of rbytes bytes), the send buffer's nsend elements
 * and the guard. */
void kb_red_write(kb_ctx *cx, size_t nsend, int iter);
void kb_red_poison(kb_ctx *cx, size_t rbytes, int iter);
long long kb_red_check_call(kb_ctx *cx, size_t first, size_t n, size_t rbytes, size_t nsend, int iter);
#define KB_RED_NOTE "# Check: every element of every result against the fold of every rank's input formula\n" \
                    "#   in rank order, in the type (reduction.c); inputs unchanged; guards intact\n"

/* ------------------------------------------------------------------------- */
/* Statistics and output                                                      */
/* ------------------------------------------------------------------------- */

typedef struct kb_stat {
    double median, min, avg, max; /* seconds */
} kb_stat;

/* maxes[i] (on rank 0 of comm) = max over ranks of times[i]; collective. */
void kb_reduce_max(const double *times, double *maxes, int n, MPI_Comm comm);
/* Median, min, average, max of v[0..n) (n >= 1); sorts v. */
kb_stat kb_stats(double *v, int n);
/* Give every rank of comm the message (KB_ERR_LEN bytes) of the lowest rank with mine != 0. */
void kb_share_message(char *msg, int mine, MPI_Comm comm);
/* A JSON string literal of s. */
void kb_json_string(FILE *f, const char *s);

#endif
