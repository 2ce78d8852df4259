/*
 * kport-bench loggp, between its files (the manual is the header of
 * loggp.c):
 *
 *   loggp.c         the manual, the options, main: which ranks measure,
 *                   in which order, and what goes into the parameter file
 *   loggp_p2p.c     MPI point to point: PRTT(n, d, s), the receive
 *                   overhead, the exchanges, -c's check
 *   loggp_shm.c     kport's shared-memory operations (flag, data_line,
 *                   copies, memcpy, single copy), kport's cost per call
 *                   and the start line's skew, and the combine of
 *                   reductions (compute.reduce)
 *   loggp_fit.c     the fits: a channel's LogGP pieces, the shared-memory
 *                   lines
 *   loggp_output.c  text and JSON output, the machine's load, the
 *                   parameter file
 */
#ifndef KPORT_BENCH_LOGGP_H
#define KPORT_BENCH_LOGGP_H

#include "fit.h"
#include "harness.h"
#include "params/params.h"
#include "probe.h"

#define LG_MAX_SIZES 32
#define TAG 77

typedef struct lg_opts {
    size_t sizes[LG_MAX_SIZES];
    int nsizes, iters, warmup, n, check, json;
    const char *out;
    char command[512];
} lg_opts;

/* measured per size of one channel (ns) */
typedef struct lg_point {
    double rtt_half, gap, o_s, o_r, xchg, xchg2;
    int piece;
} lg_point;

enum { OP_FLAG, OP_COPY_IN, OP_COPY_OUT, OP_MEMCPY, OP_PEER_READ, OP_PEER_WRITE, OP_COUNT };

/* kport's shared-memory costs, measured (loggp_shm.c) and fitted (loggp_fit.c) */
typedef struct shm_result {
    double t[OP_COUNT][LG_MAX_SIZES]; /* ns per operation (flag: [0] only) */
    kp_linear fit[OP_COUNT];
    int cma; /* cross-memory attach worked */
    long long bad;
    double round_line, round_own, data_line; /* data_line: the medians of the two rounds and their difference (ns) */
} shm_result;

/* The combine of reductions (compute.reduce; loggp_shm.c): the executor's
 * own kernel timed at each size of at least one element */
typedef struct lg_reduce {
    double t[LG_MAX_SIZES]; /* ns per combine of o->sizes[i] bytes (< 0: not measured, below one element) */
    kp_linear fit;
    char kernel[96];        /* what ran: "MPI_SUM on MPI_DOUBLE (inline), dst = a" */
    int ok;                 /* measured and fitted */
} lg_reduce;

extern int lg_progress; /* rank 0 on a terminal */
extern int lg_blocking; /* --blocking */

/* Samples taken and dropped on this rank (kb_drop_outliers: more than
 * OUTLIER times the median, a descheduled process), and copy samples
 * dropped because both ranks ran on one core: how loaded the machine
 * looked, reported with the results. */
#define OUTLIER 5.0
extern long long lg_n_samples, lg_n_dropped, lg_n_same_cpu;

/* loggp.c: helpers of every measurement */
/* the median of v[0..n) after dropping descheduled samples */
double lg_robust_median(double *v, int n);
/* the 10%-trimmed mean of v[0..n) after dropping descheduled samples */
double lg_robust_mean(double *v, int n);
/* "loggp: WHAT SIZE B" on stderr when lg_progress */
void lg_show_progress(const char *what, size_t size);
/* bytes of buf[0..n) that differ from id's pattern for iter */
long long lg_count_bad(const unsigned char *buf, size_t n, uint64_t id, int iter, unsigned char *scratch);

/* loggp_p2p.c: the points of one channel between ranks 0 (A) and 1 (B) of pc */
void lg_measure_p2p(MPI_Comm pc, const lg_opts *o, const char *name, lg_point *pt, long long *bad,
                    unsigned char *buf, unsigned char *rbuf, unsigned char *scratch, double *v);

/* loggp_shm.c (lg_measure_shm fits its results with lg_fit_shm) */
void lg_measure_shm(MPI_Comm pc, const lg_opts *o, int oversub, shm_result *res, unsigned char *buf,
                    unsigned char *buf2, unsigned char *scratch);
void lg_measure_call(MPI_Comm pc, const lg_opts *o, int oversub, const shm_result *shm, kp_callcost *call,
                     double *gap, double *post_wait);
/* rank 0 alone: the combine's cost per size, fitted (buf, buf2: 2 * the largest size each) */
void lg_measure_reduce(const lg_opts *o, lg_reduce *res, unsigned char *buf, unsigned char *buf2);

/* loggp_fit.c */
/* v if it is a finite positive number, else 0 */
double lg_clamp0(double v);
void lg_fit_channel(const lg_opts *o, lg_point *pt, kp_channel *ch, kb_pieces *pcs, kp_linear *hockney,
                    double *scale, int *xs);
void lg_fit_shm(const lg_opts *o, shm_result *res);

/* loggp_output.c (rank 0 prints) */
/* the 1-minute load average (/proc/loadavg), -1 if unknown */
double lg_load_average(void);
void lg_json_tail(const char *mpi, int P, const lg_opts *o, long long bad);
void lg_report_load(double load0, const lg_opts *o, const char *mpi, int P);
void lg_print_channel(const lg_opts *o, const char *name, const lg_point *pt, const kp_channel *ch,
                      const kb_pieces *pcs, const double *scale, const int *xs, const char *mpi, int P,
                      long long bad);
void lg_print_shm(const lg_opts *o, const shm_result *r, const char *mpi, int P);
void lg_print_reduce(const lg_opts *o, const lg_reduce *r, const char *mpi, int P);
/* kport's cost per call and the start line's skew (measure_call's diagnostics beside them: < 0 none) */
void lg_print_call(const lg_opts *o, const kp_machine *m, double post_wait, double entry_gap, const char *mpi,
                   int P);
/* -o: the machine's description into m, checked and written; 0, or 1 (said on stderr) */
int lg_write_params(const lg_opts *o, kp_machine *m, const char *mpi, int P);

#endif
