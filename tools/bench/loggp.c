/*
 * kport-bench loggp: measure the machine - LogGP parameters of MPI
 * point-to-point and the costs of kport's shared-memory operations - and
 * write the parameter file (docs/PARAMETERS.md) the cost model reads.
 *
 *   mpirun -np 2 kport-bench loggp [-o params.json] [-m MIN:MAX] [-i N] [-x N] [-n N] [--blocking] [-c]
 *                                  [--format json]
 *
 * Point to point: the parameterised round trip of Kielmann et al. ("Fast
 * measurement of LogP parameters for message passing platforms", 2000), as
 * Netgauge does it. PRTT(n, d, s): rank A sends n messages of s bytes,
 * spinning d ns between them; rank B receives them and answers with one
 * message of s bytes; A's time from its first send to the answer. Every
 * message is sent and received as kport's executor does (MPI_Isend /
 * MPI_Irecv and MPI_Wait, so the overheads include a request's life; A
 * posts the answer's receive before its first send, as both sides of a
 * collective post theirs early), or with MPI_Send / MPI_Recv under
 * --blocking.
 * Per size s (-m, powers of two, default 1:1M; medians of -i runs, default
 * 30, runs more than 5x the median dropped (descheduled), after -x warm-up
 * runs, default 3, the sizes interleaved run by run -
 * up, then down, each timed run after untimed ping-pongs of its size (512
 * up to 64 KiB, LG_SETTLE, else one) so that caches and MPI's state hold
 * what a run of one size would - and a burst of load on shared cores
 * spoils one run of many sizes rather than every run of one; -n messages,
 * default 8):
 *
 *   RTT(s) = PRTT(1, 0, s)                  (one ping-pong)
 *   g(s)   = (PRTT(n, 0, s) - RTT(s)) / (n-1)   the gap at size s
 *   o_s(s) = (PRTT(n, d, s) - RTT(s)) / (n-1) - d, with d = 1.5*g(s) + 1 us,
 *            so that o_s + d exceeds the gap and the sender's overhead shows
 *   o_r(s) = the time of the receive at B when the message has been there for
 *            a while (B spins 1.5*RTT(s) + 1 us after its previous answer)
 *   x(s)   = an exchange: both ranks MPI_Irecv, MPI_Isend, MPI_Waitall (or
 *            MPI_Sendrecv) s bytes with each other, n times back to back;
 *            A's time per exchange over exchanges 2..n; up to 64 KiB
 *            after 512 untimed exchanges of s (LG_SETTLE) instead of
 *            the ping-pongs
 *   x2(s)  = the same with two messages of s bytes each way at once (two
 *            MPI_Irecv, two MPI_Isend, one MPI_Waitall: a round that sends
 *            a peer two blocks, as concurrent_exchange_split does)
 *
 * Fits (tools/bench/fit.c, least squares of relative errors): RTT(s)/2
 * over all sizes is split into pieces at protocol changes (a jump or a
 * change of slope: Open MPI's eager limit and single-copy rendezvous, a
 * cache size; kb_fit_pieces: the best split for every number of pieces,
 * the number by the Bayesian information criterion, never more than
 * needed to fit within 3%; a piece has at least 3 sizes, so -m must reach
 * 3 sizes past a change to see it); a piece's last size is its max_bytes.
 * In each piece, with a + b*s the fit of RTT(s)/2: g + G*s = the fit of
 * g(s) (G at most b: a larger slope of the gap is noise); o_s and o_r the
 * intercepts of the fits of o_s(s), o_r(s); O = b - G, so the CPU's copy
 * shows as O where the gap per byte does not explain the latency per
 * byte; X + XG*s the fit of x(s) (the exchange the cost model prices on
 * its own, docs/PARAMETERS.md); X2 + X2G*s the fit of x2(s) - x(s), what a
 * further exchange with the same peer at once adds; L = a + G - o_s - o_r, so that one message, o_s + O*s + L +
 * (s-1)*G + o_r, is RTT(s)/2 of the fit. Where o_s + o_r exceed a + G (in
 * shared memory the receiver copies while the sender's overhead runs, so
 * the two overlap), L is negative and the overheads keep their measured
 * values (the table says so); an exchange is priced by X, XG. eager_max: the first
 * piece boundary that is a jump (the next piece's fit at its first size
 * >= 1.25x the previous piece's line there), -1 without one.
 * hockney: one line through RTT(s)/2 over all sizes (alpha, beta).
 * call.fixed, call.skew: kport's own cost per call and the entry skew of a
 * barrier-timed call (measure_call below; docs/PARAMETERS.md).
 *
 * Which ranks: p2p.intra between rank 0 and the lowest rank on its host
 * (MPI_COMM_TYPE_SHARED), p2p.inter between rank 0 and the lowest rank on
 * another host; other ranks wait. With every rank on one host there is no
 * inter pair: MPI carries messages between kport's emulated nodes
 * (KPORT_NODE_SIZE) through the same shared memory, so p2p.inter is
 * written as p2p.intra's measurement, and the output says so (on hosts of
 * one rank each, the other way round, and no shared-memory costs).
 *
 * Shared memory, between rank 0 and its host peer, with the bench's own
 * copy of kport's flag protocol (tools/bench/probe.h, as src/exec/shm.c)
 * on an MPI_Win_allocate_shared segment; each operation timed alone, the
 * clock's own cost subtracted, samples more than 5x the median dropped (a
 * descheduled rank), the 10%-trimmed mean of the rest (medians for the
 * flag and memcpy):
 *   flag        half of a round trip of two flags (A posts, B waits and
 *               posts, A waits), timed one by one: a post seen by a waiter
 *   copy_in     as shm_flat on two ranks makes them, call by call after an
 *   copy_out    MPI_Barrier (as the benchmark times a call): both ranks
 *               copy their block into their slot of this call's half of
 *               the segment (copy_in: lines the peer read two calls ago),
 *               post, copy their block into their receive buffer, wait for
 *               the peer's post and copy the peer's block out (copy_out:
 *               lines the other core has just written); the next call uses
 *               the other half. The mean of the two ranks; samples taken
 *               while both ranks ran on one core (sched_getcpu: copies that
 *               look local) dropped
 *   memcpy      a copy between two private buffers of A
 *   peer_read   as shm_single_copy on two ranks makes it: after a barrier
 *               both post, copy their own block, wait for the peer and
 *               read the peer's block with process_vm_readv at the same
 *               time (contending for memory and page tables), then post and
 *               wait; the mean of the two ranks
 *   peer_write  process_vm_writev of s bytes into B's buffer by A while B
 *               waits (a two-rank gather's single copy)
 *   data_line   both ranks copy 8 B in, post, wait for the other's post and
 *               copy its 8 B out, call after call after a barrier, with the
 *               block in the flag's own line (KP_BUF_LINE) and in a line of
 *               its own (KP_BUF_SHM) alternately: the difference of the
 *               medians (the maximum over the ranks per call), a fixed cost
 *               the model adds to a copy out of the segment
 * each fitted as fixed + per_byte * s (the flag: fixed only; memcpy with a
 * second slope beyond a knee where that halves the error, kb_fit_knee_floor:
 * its buffers outgrow the first-level cache), by relative
 * errors measured against at least the flag's cost (kb_fit_line_floor): a
 * collective of shared-memory steps waits for at least one flag, so costs
 * below it cannot show, while copies of small blocks take a few ns (their
 * stores retire into the store buffer) and would bend the line away from
 * the large ones. Without cross-memory attach (ptrace rules)
 * peer_read/peer_write are written as 0 and reported as not measured:
 * kport never uses them then.
 *
 * -c: per size one untimed exchange each way with the validation pattern,
 * every byte compared; the last copy_out, peer_read and peer_write of each
 * size compared too. -o FILE: write the parameter file (kp_params_save),
 * after kp_params_check; the command line and machine go into "machine".
 *
 * Output: a table per channel (size, RTT/2, g(s), o_s(s), o_r(s), x(s), x2(s), piece)
 * and the fitted pieces; the shared-memory table and fits. --format json:
 * one object per measured point ("kind": "p2p" with "channel", "size",
 * "rtt_half_us", "gap_us", "o_s_us", "o_r_us", "xchg_us", "xchg2_us", "piece"; "kind": "shm" with
 * "op", "size", "time_us") and per fit ("kind": "fit": "channel", "piece",
 * "max_bytes", "L_ns", "o_s_ns", "o_r_ns", "g_ns", "G_ns_per_byte",
 * "O_ns_per_byte", "X_ns", "XG_ns_per_byte", "X2_ns", "X2G_ns_per_byte", "rms"; or "op", "fixed_ns",
 * "per_byte_ns", with a second slope also "large_from", "large_per_byte_ns"), each with
 * "coll": "loggp", "mpi", "P", "validated", "status", "errors". Last,
 * how loaded the machine looked (text: "# machine load", and "# LOADED"
 * when it was; JSON "kind": "load" with "load_average_start",
 * "load_average_end", "cores", "samples", "dropped", "same_core",
 * "loaded"): loaded when other processes kept at least half the cores
 * busy before the run (the 1-minute load average), more than 1% of the
 * samples were dropped as descheduled, or copies ran with both ranks on
 * one core. Progress goes to stderr, on a terminal only.
 */
#define _GNU_SOURCE
#include "fit.h"
#include "harness.h"
#include "model/params.h"
#include "probe.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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
static const char *const op_names[OP_COUNT] = {"flag", "copy_in", "copy_out", "memcpy", "peer_read", "peer_write"};

static int progress; /* rank 0 on a terminal */
static int blocking; /* --blocking */

/* Samples taken and dropped on this rank (kb_drop_outliers: more than
 * OUTLIER times the median, a descheduled process), and copy samples
 * dropped because both ranks ran on one core: how loaded the machine
 * looked, reported with the results. */
#define OUTLIER 5.0
static long long n_samples, n_dropped, n_same_cpu;

/* the 1-minute load average (/proc/loadavg), -1 if unknown */
static double load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

/* the median of v[0..n) after dropping descheduled samples */
static double robust_median(double *v, int n)
{
    int k = kb_drop_outliers(v, n, OUTLIER, 20.0);
    n_samples += n;
    n_dropped += n - k;
    return kb_median(v, k);
}

/* the 10%-trimmed mean of v[0..n) after dropping descheduled samples (short
 * copies: a clock of 10-20 ns steps needs the mean of many samples) */
static double robust_mean(double *v, int n)
{
    int k = kb_drop_outliers(v, n, OUTLIER, 20.0);
    n_samples += n;
    n_dropped += n - k;
    return kb_trimmed_mean(v, k, 0.1);
}

static void usage(FILE *f, const void *arg)
{
    (void)arg;
    if (kb_rank != 0)
        return;
    fprintf(f, "Usage: kport-bench loggp [-o params.json] [-m MIN:MAX] [-i N] [-x N] [-n N] [--blocking] [-c]\n"
               "                         [--format json]\n"
               "Measures LogGP parameters (L, o_s, o_r, g, G, O) of MPI point-to-point between rank 0 and\n"
               "a rank of its host (and of another host, if any) by parameterised round trips, and\n"
               "kport's shared-memory costs (flag, copies, single copy); fits them and writes the\n"
               "parameter file (docs/PARAMETERS.md) with -o. -m: sizes (default 1:1M, powers of two);\n"
               "-i / -x: timed / warm-up runs per point (default 30 / 3); -n: messages per train\n"
               "(default 8); --blocking: MPI_Send/MPI_Recv instead of kport's MPI_Isend/MPI_Irecv and\n"
               "a wait; -c: validate the data of every size.\n");
}

static void parse(int argc, char **argv, lg_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->iters = 30;
    o->warmup = 3;
    o->n = 8;
    const char *m = "1:1M";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val;
        if (kb_common_option(argc, argv, &i, usage, NULL, &o->json, &o->check))
            continue;
        if (strcmp(a, "--blocking") == 0) {
            blocking = 1;
        } else if (strcmp(a, "-m") == 0 || strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0 || strcmp(a, "-n") == 0 ||
                   strcmp(a, "-o") == 0) {
            if (i + 1 >= argc)
                kb_bad_usage(usage, NULL, "option \"%s\" needs a value", a);
            val = argv[++i];
            if (a[1] == 'm')
                m = val;
            else if (a[1] == 'o')
                o->out = val;
            else if (a[1] == 'i' && (kb_parse_int(val, 1, &o->iters) || o->iters > 100000))
                kb_bad_usage(usage, NULL, "bad -i \"%s\" (an integer 1..100000)", val);
            else if (a[1] == 'x' && (kb_parse_int(val, 0, &o->warmup) || o->warmup > 100000))
                kb_bad_usage(usage, NULL, "bad -x \"%s\" (an integer 0..100000)", val);
            else if (a[1] == 'n' && (kb_parse_int(val, 2, &o->n) || o->n > 1000))
                kb_bad_usage(usage, NULL, "bad -n \"%s\" (an integer 2..1000)", val);
        } else {
            kb_bad_usage(usage, NULL, "unknown option \"%s\"", a);
        }
    }
    o->nsizes = kb_size_option(m, o->sizes, LG_MAX_SIZES, usage, NULL);
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof(o->command); i++) {
        int w = snprintf(o->command + used, sizeof(o->command) - used, "%s%s", i ? " " : "",
                         i == 0 ? "kport-bench" : argv[i]);
        if (w < 0 || (size_t)w >= sizeof(o->command) - used)
            break;
        used += (size_t)w;
    }
}

static void show_progress(const char *what, size_t size)
{
    if (progress) {
        fprintf(stderr, "\rloggp: %-10s %8zu B   ", what, size);
        fflush(stderr);
    }
}

/* bytes of buf[0..n) that differ from id's pattern for iter */
static long long count_bad(const unsigned char *buf, size_t n, uint64_t id, int iter, unsigned char *scratch)
{
    kb_fill_pattern(scratch, n, id, iter, 0);
    long long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += buf[i] != scratch[i];
    return bad;
}

/* ------------------------------------------------------------------------- */
/* MPI point to point: PRTT(n, d, s) between ranks 0 (A) and 1 (B) of pc     */
/* ------------------------------------------------------------------------- */

/* One message as kport's executor moves it (MPI_Isend / MPI_Irecv and a
 * wait: src/exec/p2p.c), or with MPI_Send / MPI_Recv (--blocking). */

static void send_msg(const void *buf, size_t s, int to, MPI_Comm pc)
{
    if (blocking) {
        MPI_Send(buf, (int)s, MPI_BYTE, to, TAG, pc);
    } else {
        MPI_Request r;
        MPI_Isend(buf, (int)s, MPI_BYTE, to, TAG, pc, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

static void recv_msg(void *buf, size_t s, int from, MPI_Comm pc)
{
    if (blocking) {
        MPI_Recv(buf, (int)s, MPI_BYTE, from, TAG, pc, MPI_STATUS_IGNORE);
    } else {
        MPI_Request r;
        MPI_Irecv(buf, (int)s, MPI_BYTE, from, TAG, pc, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

/* Untimed messages of s bytes before each timed run of s <= 64 KiB.
 * The collectives' medians are taken in a settled state: kport-bench runs
 * a size's 100 calls per algorithm and round, every algorithm in turn,
 * the sizes ascending, so thousands of calls of smaller sizes stand
 * between a round's 1 MiB calls and the next round's 8 KiB ones. Right
 * after large messages MPICH 4.0's exchanges of 2-16 KiB run 1.3-1.5x
 * slower, for some hundreds of exchanges: with the sizes interleaved (a
 * train of 8 KiB right after those of 16 KiB-1 MiB) loggp's 8 KiB
 * exchange took 1.45-1.55 us where the all-gather's ring took 1.15 whole
 * and loggp over 512 B-16 KiB alone 0.98-1.12; 32 untimed exchanges
 * first gave 1.44-1.61, 128 gave 1.02 and 1.41, 512 gave 0.98-1.03 (two
 * runs each, docs/PERFORMANCE.md, "Session 28"). Its round trips move
 * less and settle sooner: after 1 MiB ones, half a 512 B round trip took
 * 0.39 us in the first 4, 0.34 in the next 60, 0.31-0.32 from the 64th
 * on (8 KiB: 0.95, 0.85, 0.79; "Session 29"); the timed round trips of
 * loggp's descending passes, one warm-up each, came out 1.1-1.4x those
 * of the exchanges in some runs (RTT/2 at 512 B 0.47 us, o_s(128-512 B)
 * 0.30-0.33 against 0.21-0.22) and made the cost model overcharge every
 * send of that piece. So round trips and exchanges alike follow
 * LG_SETTLE untimed ones of their size. Open MPI's do not move. */
#define LG_SETTLE 512
#define LG_SETTLE_MAX 65536

/* Untimed ping-pongs of s bytes (LG_SETTLE for s <= LG_SETTLE_MAX, else
 * one): the buffers and MPI's state are those of this size again, as in a
 * run of one size (an all-gather benchmark's), not those of the size
 * before it. */
static void warm(MPI_Comm pc, int me, size_t s, unsigned char *buf, unsigned char *rbuf)
{
    for (int k = s <= LG_SETTLE_MAX ? LG_SETTLE : 1; k > 0; k--) {
        if (me == 0) {
            send_msg(buf, s, 1, pc);
            recv_msg(rbuf, s, 1, pc);
        } else {
            recv_msg(buf, s, 0, pc);
            send_msg(buf, s, 0, pc);
        }
    }
}

/* PRTT(n, d[i], sizes[i]) for every size, run by run with the sizes
 * interleaved (a burst of load on the shared cores then spoils one run of
 * many sizes, not every run of one); med[i] = the median over runs (on A).
 * v holds nsizes * iters values. */
static void prtt_all(MPI_Comm pc, int me, int n, const double *d, unsigned char *buf, unsigned char *rbuf,
                     const lg_opts *o, double *v, double *med)
{
    for (int r = 0; r < o->warmup + o->iters; r++)
        for (int j = 0; j < o->nsizes; j++) {
            int i = r % 2 ? o->nsizes - 1 - j : j; /* up, then down: each size follows its neighbours */
            size_t s = o->sizes[i];
            double di = d ? d[i] : 0;
            warm(pc, me, s, buf, rbuf);
            if (me == 0) {
                double t0 = kb_now_ns();
                MPI_Request rr = MPI_REQUEST_NULL;
                if (!blocking) /* the answer's receive is posted first, as a collective's is */
                    MPI_Irecv(rbuf, (int)s, MPI_BYTE, 1, TAG, pc, &rr);
                for (int k = 0; k < n; k++) {
                    send_msg(buf, s, 1, pc);
                    if (di > 0 && k + 1 < n) /* between messages, not after the last */
                        kb_spin_until(kb_now_ns(), di);
                }
                if (blocking)
                    recv_msg(rbuf, s, 1, pc);
                else
                    MPI_Wait(&rr, MPI_STATUS_IGNORE);
                if (r >= o->warmup)
                    v[(size_t)i * o->iters + (r - o->warmup)] = kb_now_ns() - t0;
            } else {
                for (int k = 0; k < n; k++)
                    recv_msg(buf, s, 0, pc);
                send_msg(buf, s, 0, pc);
            }
        }
    for (int i = 0; i < o->nsizes && me == 0; i++)
        med[i] = robust_median(v + (size_t)i * o->iters, o->iters);
}

/* The time of the receive at B for a message that has been there a while
 * (B spins wait[i] after its previous acknowledgement), sizes interleaved;
 * med[i] = the median over runs, on both ranks. */
static void recv_overhead_all(MPI_Comm pc, int me, const double *wait, unsigned char *buf, unsigned char *rbuf,
                              const lg_opts *o, double *v, double *med)
{
    double last = 0;
    for (int r = 0; r < o->warmup + o->iters; r++)
        for (int j = 0; j < o->nsizes; j++) {
            int i = r % 2 ? o->nsizes - 1 - j : j;
            size_t s = o->sizes[i];
            warm(pc, me, s, buf, rbuf);
            if (me == 1)
                last = kb_now_ns(); /* B spins wait[i] from here: the message is there by then */
            if (me == 0) {
                send_msg(buf, s, 1, pc);
                MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG, pc, MPI_STATUS_IGNORE);
            } else {
                kb_spin_until(last, wait[i]);
                double t0 = kb_now_ns();
                recv_msg(buf, s, 0, pc);
                double t1 = kb_now_ns();
                if (r >= o->warmup)
                    v[(size_t)i * o->iters + (r - o->warmup)] = t1 - t0;
                MPI_Send(NULL, 0, MPI_BYTE, 0, TAG, pc);
            }
        }
    for (int i = 0; i < o->nsizes && me == 1; i++)
        med[i] = robust_median(v + (size_t)i * o->iters, o->iters);
    MPI_Bcast(med, o->nsizes, MPI_DOUBLE, 1, pc);
}

/* XCH_m(s): both ranks exchange s bytes with each other n times back to
 * back, each exchange as the executor makes one (MPI_Irecv, MPI_Isend,
 * MPI_Waitall; --blocking: MPI_Sendrecv); with m = 2, two messages of s
 * bytes each way at once (MPI_Irecv x 2, MPI_Isend x 2 from buf and buf + s,
 * MPI_Waitall of the four: a round that sends a peer two blocks, as
 * concurrent_exchange_split's halves; --blocking: two MPI_Sendrecv). A's
 * time per exchange over exchanges 2..n (the first absorbs the ranks'
 * different starting times), after LG_SETTLE untimed ones for s up to
 * LG_SETTLE_MAX, sizes interleaved; med[i] = the median over runs (on
 * A). buf and rbuf hold m * the largest size. */
static void xchg_all(MPI_Comm pc, int me, int n, int m, unsigned char *buf, unsigned char *rbuf, const lg_opts *o,
                     double *v, double *med)
{
    const int peer = 1 - me;
    for (int r = 0; r < o->warmup + o->iters; r++)
        for (int j = 0; j < o->nsizes; j++) {
            int i = r % 2 ? o->nsizes - 1 - j : j;
            size_t s = o->sizes[i];
            if (s > LG_SETTLE_MAX) /* else the untimed exchanges below */
                warm(pc, me, s, buf, rbuf);
            double t1 = 0;
            for (int k = s <= LG_SETTLE_MAX ? -LG_SETTLE : 0; k < n; k++) {
                if (blocking) {
                    for (int q = 0; q < m; q++)
                        MPI_Sendrecv(buf + (size_t)q * s, (int)s, MPI_BYTE, peer, TAG, rbuf + (size_t)q * s, (int)s,
                                     MPI_BYTE, peer, TAG, pc, MPI_STATUS_IGNORE);
                } else {
                    MPI_Request rq[4];
                    for (int q = 0; q < m; q++)
                        MPI_Irecv(rbuf + (size_t)q * s, (int)s, MPI_BYTE, peer, TAG, pc, &rq[q]);
                    for (int q = 0; q < m; q++)
                        MPI_Isend(buf + (size_t)q * s, (int)s, MPI_BYTE, peer, TAG, pc, &rq[m + q]);
                    MPI_Waitall(2 * m, rq, kb_statuses_ignore);
                }
                if (k == 0)
                    t1 = kb_now_ns();
            }
            if (me == 0 && r >= o->warmup)
                v[(size_t)i * o->iters + (r - o->warmup)] = (kb_now_ns() - t1) / (n - 1);
        }
    for (int i = 0; i < o->nsizes && me == 0; i++)
        med[i] = robust_median(v + (size_t)i * o->iters, o->iters);
}

/* One untimed exchange each way with the pattern; wrong bytes (on A). */
static long long p2p_check(MPI_Comm pc, int me, size_t s, int iter, unsigned char *buf, unsigned char *scratch)
{
    long long bad = 0;
    if (me == 0) {
        kb_fill_pattern(buf, s, kb_pair_id(0, 1), iter, 0);
        MPI_Send(buf, (int)s, MPI_BYTE, 1, TAG, pc);
        memset(buf, 0, s);
        MPI_Recv(buf, (int)s, MPI_BYTE, 1, TAG, pc, MPI_STATUS_IGNORE);
        bad += count_bad(buf, s, kb_pair_id(1, 0), iter, scratch);
    } else {
        memset(buf, 0, s);
        MPI_Recv(buf, (int)s, MPI_BYTE, 0, TAG, pc, MPI_STATUS_IGNORE);
        bad += count_bad(buf, s, kb_pair_id(0, 1), iter, scratch);
        kb_fill_pattern(buf, s, kb_pair_id(1, 0), iter, 0);
        MPI_Send(buf, (int)s, MPI_BYTE, 0, TAG, pc);
    }
    long long all;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG_LONG, MPI_SUM, pc);
    return all;
}

static void measure_p2p(MPI_Comm pc, const lg_opts *o, const char *name, lg_point *pt, long long *bad,
                        unsigned char *buf, unsigned char *rbuf, unsigned char *scratch, double *v)
{
    int me;
    MPI_Comm_rank(pc, &me);
    double rtt[LG_MAX_SIZES], trn[LG_MAX_SIZES], trd[LG_MAX_SIZES], orr[LG_MAX_SIZES], d[LG_MAX_SIZES],
        wait[LG_MAX_SIZES], xch[LG_MAX_SIZES], xch2[LG_MAX_SIZES];
    if (me == 0)
        show_progress(name, o->sizes[0]);
    prtt_all(pc, me, 1, NULL, buf, rbuf, o, v, rtt);
    prtt_all(pc, me, o->n, NULL, buf, rbuf, o, v, trn);
    for (int i = 0; i < o->nsizes; i++) {
        double g = (trn[i] - rtt[i]) / (o->n - 1);
        d[i] = 1.5 * (g > 0 ? g : 0) + 1000.0;
        wait[i] = 1.5 * rtt[i] + 1000.0;
    }
    MPI_Bcast(d, o->nsizes, MPI_DOUBLE, 0, pc);
    MPI_Bcast(wait, o->nsizes, MPI_DOUBLE, 0, pc);
    if (me == 0)
        show_progress(name, o->sizes[o->nsizes - 1]);
    prtt_all(pc, me, o->n, d, buf, rbuf, o, v, trd);
    recv_overhead_all(pc, me, wait, buf, rbuf, o, v, orr);
    xchg_all(pc, me, o->n, 1, buf, rbuf, o, v, xch);
    xchg_all(pc, me, o->n, 2, buf, rbuf, o, v, xch2);
    for (int i = 0; i < o->nsizes; i++) {
        double g = (trn[i] - rtt[i]) / (o->n - 1);
        pt[i].rtt_half = rtt[i] / 2;
        pt[i].gap = g > 0 ? g : 0;
        pt[i].o_s = (trd[i] - rtt[i]) / (o->n - 1) - d[i];
        if (pt[i].o_s < 0)
            pt[i].o_s = 0;
        pt[i].o_r = orr[i];
        pt[i].xchg = xch[i];
        pt[i].xchg2 = xch2[i];
        if (o->check)
            *bad += p2p_check(pc, me, o->sizes[i], i, buf, scratch);
    }
}

/* src truncated to dst[0..n) */
static void copy_str(char *dst, size_t n, const char *src)
{
    size_t l = strnlen(src, n - 1);
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static double clamp0(double v)
{
    return v > 0 && isfinite(v) ? v : 0.0;
}

/* The LogGP pieces of a channel from its points (on A). */
static void fit_channel(const lg_opts *o, lg_point *pt, kp_channel *ch, kb_pieces *pcs, kp_linear *hockney,
                        double *scale, int *xs)
{
    double x[LG_MAX_SIZES], y[LG_MAX_SIZES], yg[LG_MAX_SIZES], ys[LG_MAX_SIZES], yr[LG_MAX_SIZES],
        yx[LG_MAX_SIZES], y2[LG_MAX_SIZES];
    int n = o->nsizes;
    for (int i = 0; i < n; i++) {
        x[i] = (double)o->sizes[i];
        y[i] = pt[i].rtt_half;
        yg[i] = pt[i].gap;
        ys[i] = pt[i].o_s;
        yr[i] = pt[i].o_r;
        yx[i] = pt[i].xchg;
        y2[i] = pt[i].xchg2 - pt[i].xchg; /* what the second message each way adds */
    }
    /* the pieces fit RTT/2, the exchange, the sender's overhead and the
     * gap together: Open MPI's fast boxes end at 256 B, where o_s and g
     * triple and the exchange grows 1.4x while RTT/2 moves 8 %; pieces of
     * RTT/2 alone put that boundary at 64, 128 or 256 B from run to run,
     * and a 256 B message was priced by the 512 B-2 KiB regime's lines in
     * some (a 256 B exchange 1.15x, two of them 1.38x the measurement) */
    const double *series[] = {y, yx, ys, yg};
    kb_fit_pieces_multi(x, series, 4, n, 3, 3.0, 0.03, KP_MAX_PIECES < KB_MAX_PIECES ? KP_MAX_PIECES : KB_MAX_PIECES,
                        pcs);
    /* the exchange may change slope where RTT/2 does not (MPICH: a
     * 16 KiB-1 MiB piece whose exchange runs 0.06 ns/B up to 64 KiB and
     * 0.14 above): split such a piece for it */
    kb_split_pieces_for(x, y, yx, n, 3, 0.05, KP_MAX_PIECES < KB_MAX_PIECES ? KP_MAX_PIECES : KB_MAX_PIECES, pcs, xs);
    kb_line h;
    kb_fit_line(x, y, n, &h);
    hockney->fixed = clamp0(h.a);
    hockney->per_byte = clamp0(h.b);
    memset(ch, 0, sizeof(*ch));
    ch->npieces = pcs->npieces;
    for (int p = 0; p < pcs->npieces; p++) {
        int lo = pcs->start[p], hi = pcs->start[p + 1];
        kb_line lg, ls, lr, lx, l2;
        kb_fit_line(x + lo, yx + lo, hi - lo, &lx);
        kb_fit_line(x + lo, y2 + lo, hi - lo, &l2);
        kb_fit_line(x + lo, yg + lo, hi - lo, &lg);
        kb_fit_line(x + lo, ys + lo, hi - lo, &ls);
        kb_fit_line(x + lo, yr + lo, hi - lo, &lr);
        kp_loggp *q = &ch->piece[p];
        q->max_bytes = p + 1 < pcs->npieces ? (int64_t)o->sizes[hi - 1] : -1;
        q->g = clamp0(lg.a);
        /* G at most the latency's slope b: a message is never cheaper per
         * byte than a stream of them (a larger G from the gap's fit is noise) */
        q->G = clamp0(lg.b) < clamp0(pcs->piece[p].b) ? clamp0(lg.b) : clamp0(pcs->piece[p].b);
        q->o_s = clamp0(ls.a);
        q->o_r = clamp0(lr.a);
        q->O = clamp0(pcs->piece[p].b - q->G);
        /* the exchange, measured: what a round that sends to and receives
         * from one peer costs (the model's exchange rule) */
        q->has_x = 1;
        q->X = clamp0(lx.a);
        q->XG = clamp0(lx.b);
        /* and what a second exchange with the same peer in that round adds
         * (two messages each way in flight: MPI overlaps them) */
        q->has_x2 = 1;
        q->X2 = clamp0(l2.a);
        q->X2G = clamp0(l2.b);
        /* one message, o_s + O*s + L + (s-1)*G + o_r, is the fit of RTT(s)/2.
         * Overheads measured larger than that keep their values and L goes
         * negative: the sender's overhead overlaps the transfer (Open MPI's
         * shared-memory sends wait until the receiver has taken the
         * fragment, so o_s holds most of a round trip); a rank that sends
         * and receives at once pays both, as the exchange's time shows.
         * Only where even the overheads alone would make the fit's time
         * negative (never in practice) are they scaled down to it. */
        double a = clamp0(pcs->piece[p].a + q->G);
        scale[p] = 1.0;
        q->L = a - q->o_s - q->o_r;
        if (q->L < -(q->o_s + q->o_r)) {
            scale[p] = 0.0;
            q->o_s = q->o_r = q->L = 0.0;
        }
        for (int i = lo; i < hi; i++)
            pt[i].piece = p;
    }
    /* the eager limit: the first change that is a jump (the next piece's
     * fit at its first size at least 25% above the previous piece's line
     * there: a rendezvous' handshake), not just a change of slope; no
     * jump: every message eager */
    ch->eager_max = -1;
    for (int p = 1; p < pcs->npieces; p++) {
        double xs = x[pcs->start[p]];
        double before = pcs->piece[p - 1].a + pcs->piece[p - 1].b * xs, after = pcs->piece[p].a + pcs->piece[p].b * xs;
        if (before > 0 && after > 1.25 * before) {
            ch->eager_max = (int64_t)o->sizes[pcs->start[p] - 1];
            break;
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Shared memory                                                              */
/* ------------------------------------------------------------------------- */

typedef struct shm_result {
    double t[OP_COUNT][LG_MAX_SIZES]; /* ns per operation (flag: [0] only) */
    kp_linear fit[OP_COUNT];
    int cma; /* cross-memory attach worked */
    long long bad;
    double round_line, round_own, data_line; /* data_line: the medians of the two rounds and their difference (ns) */
} shm_result;

static int reps_for(size_t s, int iters)
{
    size_t r = ((size_t)8 << 20) / (s ? s : 1);
    if (r > 1000)
        r = 1000;
    if (r < (size_t)iters)
        r = (size_t)iters;
    return (int)r;
}

/* Drops, on both ranks alike, the samples v[0..n) during which the two
 * ranks ran on one core (cpu[] this rank's core per sample, peer[] the
 * other's; < 0: it moved during the sample): copies between them then look
 * local. Returns how many are kept (all of them if none ran apart). */
static int drop_same_cpu(double *v, const int *cpu, const int *peer, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (cpu[i] < 0 || peer[i] < 0 || cpu[i] != peer[i])
            v[k++] = v[i];
    return k ? k : n;
}

static void measure_shm(MPI_Comm pc, const lg_opts *o, int oversub, shm_result *res, unsigned char *buf,
                        unsigned char *buf2, unsigned char *scratch)
{
    int me;
    MPI_Comm_rank(pc, &me);
    size_t maxs = o->sizes[o->nsizes - 1], stride = (maxs + 127) / 128 * 128;
    memset(res, 0, sizeof(*res));
    kb_seg seg;
    /* two halves of one slot per rank, as kport's segment alternates them by call */
    if (kb_seg_open(pc, 4 * stride, oversub, &seg)) {
        if (me == 0)
            fprintf(stderr, "kport-bench: loggp: cannot allocate a shared segment of %zu bytes\n", 4 * stride);
        res->bad = -1;
        return;
    }
    const double tc = kb_timer_cost_ns();
    uint64_t seq = 0;
    int maxreps = reps_for(1, o->iters);
    /* the receive buffer of a two-rank all-gather (2 blocks), samples and cores */
    unsigned char *rbuf = malloc(2 * maxs);
    double *vv = malloc(2 * (size_t)maxreps * sizeof(double));
    int *cpu = malloc(2 * (size_t)maxreps * sizeof(int));
    if (!rbuf || !vv || !cpu)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(rbuf, 0, 2 * maxs);

    /* flag: half of each round trip, timed one by one (a descheduled rank
     * spoils one sample, dropped, not a batch) */
    if (me == 0)
        show_progress("flag", 8);
    int nflag = (o->warmup + o->iters) * (oversub ? 10 : 100);
    if (nflag > maxreps)
        nflag = maxreps;
    MPI_Barrier(pc);
    for (int k = -100; k < nflag; k++) {
        seq++;
        double t0 = kb_now_ns();
        if (me == 0) {
            kb_seg_post(&seg, seq);
            kb_seg_wait(&seg, 1, seq);
        } else {
            kb_seg_wait(&seg, 0, seq);
            kb_seg_post(&seg, seq);
        }
        if (k >= 0)
            vv[k] = (kb_now_ns() - t0 - tc) / 2.0;
    }
    res->t[OP_FLAG][0] = me == 0 ? robust_median(vv, nflag) : 0;
    MPI_Bcast(&res->t[OP_FLAG][0], 1, MPI_DOUBLE, 0, pc);

    /* data_line: the round a two-rank shared-memory call makes - copy 8 B
     * in, post, wait for the peer's post, copy its 8 B out - with the block
     * in the flag's own line (kport's KP_BUF_LINE: a waiting peer gets flag
     * and block in one transfer) and in a line of its own (KP_BUF_SHM, the
     * segment's halves alternating by call), the two alternating call by
     * call after a barrier; the maximum over the ranks per call, the
     * difference of the medians */
    {
        const int nr = nflag / 2 > 50 ? nflag / 2 : 50;
        double *vr = malloc(2 * (size_t)nr * sizeof(double)), *mr = malloc(2 * (size_t)nr * sizeof(double));
        if (!vr || !mr)
            MPI_Abort(MPI_COMM_WORLD, 1);
        unsigned char in[8] = {1, 2, 3, 4, 5, 6, 7, (unsigned char)me}, out[8];
        kb_sync start; /* the benchmark's start line of a call (probe.h) */
        kb_sync_open(pc, oversub, &start);
        for (int k = -20; k < 2 * nr; k++) {
            const int own = k & 1, h = (k >> 1) & 1;
            unsigned char *mine = own ? seg.data + (2 * (size_t)h + (size_t)me) * stride
                                      : (unsigned char *)kb_seg_flag(&seg, me) + 8,
                          *theirs = own ? seg.data + (2 * (size_t)h + 1 - (size_t)me) * stride
                                        : (unsigned char *)kb_seg_flag(&seg, 1 - me) + 8;
            kb_sync_barrier(&start);
            double t0 = kb_now_ns();
            memcpy(mine, in, sizeof in);
            kb_seg_post(&seg, ++seq);
            kb_seg_wait(&seg, 1 - me, seq);
            memcpy(out, theirs, sizeof out);
            double t1 = kb_now_ns();
            if (k >= 0)
                vr[(size_t)own * nr + (size_t)(k >> 1)] = t1 - t0;
            if (out[7] != (unsigned char)(1 - me))
                res->bad++;
        }
        kb_sync_close(&start);
        kb_reduce_max(vr, mr, 2 * nr, pc);
        if (me == 0) {
            res->round_line = robust_median(mr, nr);
            res->round_own = robust_median(mr + nr, nr);
            res->data_line = clamp0(res->round_own - res->round_line);
        }
        MPI_Bcast(&res->data_line, 1, MPI_DOUBLE, 0, pc);
        free(vr);
        free(mr);
    }

    /* copy_in / copy_out as shm_flat on two ranks does them
     * (src/algo/allgather/shm_flat.c), call by call after a barrier as the
     * benchmark times a call: both ranks copy their block into their slot
     * of this call's half of the segment (lines the peer read two calls
     * ago), post, copy their block into their own receive buffer, wait for
     * the peer's post and copy its block out (lines the peer's core has
     * just written); the next call uses the other half. The mean of the
     * two ranks. */
    for (int i = 0; i < o->nsizes; i++) {
        size_t s = o->sizes[i];
        if (me == 0)
            show_progress("copies", s);
        kb_fill_pattern(buf, s, kb_pair_id(me, 1 - me), i, 0);
        int reps = reps_for(s, o->iters);
        double *vin = vv, *vout = vv + reps;
        int *cpeer = cpu + reps;
        for (int r = -o->warmup; r < reps; r++) {
            MPI_Barrier(pc);
            const size_t h = (size_t)(r & 1);
            unsigned char *mine = seg.data + (2 * h + (size_t)me) * stride,
                          *theirs = seg.data + (2 * h + 1 - (size_t)me) * stride;
            int c = sched_getcpu();
            double t0 = kb_now_ns();
            memcpy(mine, buf, s);
            double t1 = kb_now_ns();
            kb_seg_post(&seg, ++seq);
            memcpy(rbuf + (size_t)me * s, buf, s);
            kb_seg_wait(&seg, 1 - me, seq);
            double t2 = kb_now_ns();
            memcpy(rbuf + (size_t)(1 - me) * s, theirs, s);
            double t3 = kb_now_ns();
            if (r >= 0) {
                vin[r] = t1 - t0 - tc;
                vout[r] = t3 - t2 - tc;
                cpu[r] = c == sched_getcpu() ? c : -1; /* moved during the sample */
            }
        }
        MPI_Sendrecv(cpu, reps, MPI_INT, 1 - me, TAG, cpeer, reps, MPI_INT, 1 - me, TAG, pc, MPI_STATUS_IGNORE);
        int kin = drop_same_cpu(vin, cpu, cpeer, reps), kout = drop_same_cpu(vout, cpu, cpeer, reps);
        if (me == 0)
            n_same_cpu += reps - kin;
        double mine[2] = {robust_mean(vin, kin), robust_mean(vout, kout)}, both[2];
        MPI_Allreduce(mine, both, 2, MPI_DOUBLE, MPI_SUM, pc);
        res->t[OP_COPY_IN][i] = both[0] / 2; /* the mean of the two ranks */
        res->t[OP_COPY_OUT][i] = both[1] / 2;
        if (o->check)
            res->bad += count_bad(rbuf + (size_t)(1 - me) * s, s, kb_pair_id(1 - me, me), i, scratch);
        if (me == 0)
            kb_fill_pattern(buf, s, kb_pair_id(0, 1), i, 0);

        /* memcpy: A alone, batches of copies between two private buffers */
        if (me == 0) {
            int per = reps < 100 ? 10 : 100, nb = reps / 10 > o->iters ? o->iters : reps / 10;
            if (nb < 3)
                nb = 3;
            for (int b = -o->warmup; b < nb; b++) {
                double t0 = kb_now_ns();
                for (int k = 0; k < per; k++)
                    memcpy(k % 2 ? buf : buf2, k % 2 ? buf2 : buf, s);
                double t1 = kb_now_ns();
                if (b >= 0)
                    vv[b] = (t1 - t0 - tc) / per;
            }
            res->t[OP_MEMCPY][i] = robust_median(vv, nb);
        }
        MPI_Barrier(pc);
    }

    /* peer_read as shm_single_copy on two ranks does it: after a barrier
     * both ranks post, copy their own block, wait for the peer's post and
     * read the peer's block from its buffer at the same time (the two
     * system calls contend for the same memory and page tables), then post
     * and wait (done reading); the mean of the two ranks. peer_write as a
     * two-rank gather does it: A alone writes into B's buffer while B waits. */
    unsigned long long where[2] = {(unsigned long long)(uintptr_t)buf, (unsigned long long)getpid()}, peer[2];
    MPI_Sendrecv(where, 2, MPI_UNSIGNED_LONG_LONG, 1 - me, TAG, peer, 2, MPI_UNSIGNED_LONG_LONG, 1 - me, TAG, pc,
                 MPI_STATUS_IGNORE);
    unsigned long long where_b[2] = {(unsigned long long)(uintptr_t)buf2, (unsigned long long)getpid()};
    MPI_Bcast(where_b, 2, MPI_UNSIGNED_LONG_LONG, 1, pc);
    int cma = 1;
    for (int i = 0; i < o->nsizes && cma; i++) {
        size_t s = o->sizes[i];
        kb_fill_pattern(buf, s, kb_pair_id(me, 1 - me), i + 2000, 0);
        if (me == 0)
            show_progress("single copy", s);
        int reps = reps_for(s, o->iters), ok = 1;
        for (int r = -o->warmup; r < reps; r++) {
            MPI_Barrier(pc);
            kb_seg_post(&seg, ++seq);
            memcpy(rbuf + (size_t)me * s, buf, s);
            kb_seg_wait(&seg, 1 - me, seq);
            struct iovec l = {rbuf + (size_t)(1 - me) * s, s}, rr = {(void *)(uintptr_t)peer[0], s};
            double t0 = kb_now_ns();
            ssize_t got = ok ? process_vm_readv((pid_t)peer[1], &l, 1, &rr, 1, 0) : (ssize_t)s;
            double t1 = kb_now_ns();
            if (got != (ssize_t)s)
                ok = 0;
            if (r >= 0)
                vv[r] = t1 - t0 - tc;
            kb_seg_post(&seg, ++seq);
            kb_seg_wait(&seg, 1 - me, seq);
        }
        MPI_Allreduce(&ok, &cma, 1, MPI_INT, MPI_MIN, pc);
        if (!cma)
            break;
        double mine = robust_mean(vv, reps), both;
        MPI_Allreduce(&mine, &both, 1, MPI_DOUBLE, MPI_SUM, pc);
        res->t[OP_PEER_READ][i] = both / 2;
        if (o->check)
            res->bad += count_bad(rbuf + (size_t)(1 - me) * s, s, kb_pair_id(1 - me, me), i + 2000, scratch);

        if (me == 0) {
            kb_fill_pattern(buf, s, kb_pair_id(0, 1), i + 1000, 0);
            for (int r = -o->warmup; r < reps && cma; r++) {
                struct iovec l = {buf, s}, rr = {(void *)(uintptr_t)where_b[0], s};
                double t0 = kb_now_ns();
                ssize_t got = process_vm_writev((pid_t)where_b[1], &l, 1, &rr, 1, 0);
                double t1 = kb_now_ns();
                if (got != (ssize_t)s)
                    cma = 0;
                else if (r >= 0)
                    vv[r] = t1 - t0 - tc;
            }
            if (cma)
                res->t[OP_PEER_WRITE][i] = robust_mean(vv, reps);
        }
        MPI_Bcast(&cma, 1, MPI_INT, 0, pc);
        if (cma && o->check && me == 1)
            res->bad += count_bad(buf2, s, kb_pair_id(0, 1), i + 1000, scratch);
    }
    kb_seg_close(&seg);
    free(rbuf);
    free(vv);
    free(cpu);
    res->cma = cma;
    long long all;
    MPI_Allreduce(&res->bad, &all, 1, MPI_LONG_LONG, MPI_SUM, pc);
    res->bad = all;

    /* fits (A) */
    double x[LG_MAX_SIZES];
    for (int i = 0; i < o->nsizes; i++)
        x[i] = (double)o->sizes[i];
    res->fit[OP_FLAG].fixed = clamp0(res->t[OP_FLAG][0]);
    for (int op = OP_COPY_IN; op < OP_COUNT; op++) {
        if ((op == OP_PEER_READ || op == OP_PEER_WRITE) && !cma)
            continue;
        kb_line l;
        double y[LG_MAX_SIZES];
        memcpy(y, res->t[op], sizeof(y));
        /* relative errors, each measured against at least one flag: a
         * collective of shared-memory steps waits for at least one, so a
         * cost below it cannot matter, while a line through the few-ns
         * copies of small blocks (stores retired into the store buffer,
         * their cache-line transfers paid later) misses the large ones by
         * half; never below 20 ns, about the clock's resolution */
        double fl = res->t[OP_FLAG][0] > 20.0 ? res->t[OP_FLAG][0] : 20.0;
        if (op == OP_MEMCPY) {
            /* a private copy changes slope where its two buffers outgrow
             * the first-level cache: here 0.011 ns/B up to 16 KiB, 0.020
             * at 32-128 KiB, 0.024-0.026 beyond; one line (0.017) priced
             * a 128 KiB copy 13 % under its measured cost and 4-8 KiB ones
             * 30-50 % over (docs/PARAMETERS.md) */
            kb_knee k;
            kb_fit_knee_floor(x, y, o->nsizes, fl, 3, &k);
            res->fit[op].fixed = clamp0(k.a);
            res->fit[op].per_byte = clamp0(k.b);
            if (k.knee > 0) {
                res->fit[op].large_from = (int64_t)k.knee;
                res->fit[op].large_per_byte = k.c;
            }
            continue;
        }
        kb_fit_line_floor(x, y, o->nsizes, fl, &l);
        res->fit[op].fixed = clamp0(l.a);
        res->fit[op].per_byte = clamp0(l.b);
    }
}

/* ------------------------------------------------------------------------- */
/* kport's own cost per call, and the entry skew of a benchmark's barrier     */
/* ------------------------------------------------------------------------- */

/* call.fixed: kp_allgather of 8 bytes on MPI_COMM_SELF (ring forced: one
 * local copy), per call in batches of 100, minus that copy (memcpy's fit):
 * the argument checks, the plan lookup and the executor's own work, what
 * every kport call pays whatever its schedule. A (rank 0) only; B sleeps.
 * call.skew: the benchmark's way of timing a call (its start line kb_sync:
 * shared-memory flags on one host, else MPI_Barrier; t0, call,
 * t1, the max over ranks per iteration, the median) applied to the
 * smallest dependent call there is, a post and a wait for the peer's post:
 * what that takes beyond shm.flag is how far apart the ranks leave the
 * barrier, at most one flag with the shared-memory start line (below).
 * Both in ns. */
static void measure_call(MPI_Comm pc, const lg_opts *o, int oversub, const shm_result *shm, kp_callcost *call,
                         double *gap, double *post_wait)
{
    int me;
    MPI_Comm_rank(pc, &me);
    memset(call, 0, sizeof(*call));
    if (me == 0)
        show_progress("call", 8);
    const int n = 1000;
    double *v = malloc((size_t)(o->iters > n ? o->iters : n) * sizeof(double)), *mx = malloc(n * sizeof(double)),
           *e = malloc(2 * (size_t)n * sizeof(double));
    *gap = *post_wait = -1;
    if (!v || !mx || !e)
        MPI_Abort(MPI_COMM_WORLD, 1);
    if (me == 0) {
        unsigned char sb[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rb[8];
        int rc = kp_set_algorithm(KP_COLL_ALLGATHER, "ring");
        const int per = 100;
        for (int b = -o->warmup; b < o->iters && rc == KP_SUCCESS; b++) {
            double t0 = kb_now_ns();
            for (int k = 0; k < per && rc == KP_SUCCESS; k++)
                rc = kp_allgather(sb, 8, MPI_BYTE, rb, 8, MPI_BYTE, MPI_COMM_SELF);
            double t1 = kb_now_ns();
            if (b >= 0)
                v[b] = (t1 - t0) / per;
        }
        kp_set_algorithm(KP_COLL_ALLGATHER, NULL);
        if (rc == KP_SUCCESS)
            call->fixed = clamp0(kb_median(v, o->iters) - kp_linear_cost(&shm->fit[OP_MEMCPY], 8));
        else
            fprintf(stderr, "kport-bench: loggp: call.fixed not measured: %s\n", kp_last_error());
    }
    kb_sleepy_barrier(pc);
    kb_seg seg;
    if (kb_seg_open(pc, 64, oversub, &seg) == 0) {
        uint64_t seq = 0;
        kb_sync start; /* the benchmark's start line of a call (probe.h) */
        kb_sync_open(pc, oversub, &start);
        for (int it = -o->warmup; it < n; it++) {
            kb_sync_barrier(&start);
            double t0 = kb_now_ns();
            kb_seg_post(&seg, ++seq);
            kb_seg_wait(&seg, 1 - me, seq);
            double t1 = kb_now_ns();
            if (it >= 0) {
                v[it] = t1 - t0;
                e[it] = t0;
            }
        }
        kb_reduce_max(v, mx, n, pc);
        if (me == 0) {
            /* the clock's own cost stays in: the bench's times hold it too */
            const double flag = shm->t[OP_FLAG][0];
            *post_wait = clamp0(kb_median(mx, n) - flag);
            /* A start line of flags lets the ranks go at most one flag
             * apart: the last rank in leaves at once, the others when its
             * post reaches them. What a post and wait right after it take
             * beyond that is not an entry delay, and the collectives timed
             * after the same start line do not pay it: in the machine's
             * slow phase (flag 150-180 ns) a post and wait took 226-311 ns
             * beyond a flag, while loggp's own copy-in, post, wait,
             * copy-out round (data_line) took 341-401 ns in all, less than
             * the post and wait alone (401-461). So with that start line
             * skew is at most shm.flag (docs/PARAMETERS.md); post_wait,
             * printed beside it, is the uncapped value. */
            call->skew = start.shm && *post_wait > flag ? flag : *post_wait;
        }
        /* a diagnostic beside it: how far apart the ranks left the start
         * line, read off one clock (CLOCK_MONOTONIC is the host's: only
         * with the shared-memory start line, all ranks on one host) */
        if (start.shm) {
            if (me == 1)
                MPI_Send(e, n, MPI_DOUBLE, 0, 7, pc);
            else if (me == 0) {
                MPI_Recv(e + n, n, MPI_DOUBLE, 1, 7, pc, MPI_STATUS_IGNORE);
                for (int i = 0; i < n; i++)
                    e[i] = fabs(e[i] - e[n + i]);
                *gap = kb_median(e, n);
            }
        }
        kb_sync_close(&start);
        kb_seg_close(&seg);
    }
    free(v);
    free(mx);
    free(e);
}

/* ------------------------------------------------------------------------- */
/* Output                                                                     */
/* ------------------------------------------------------------------------- */

static void json_tail(const char *mpi, int P, const lg_opts *o, long long bad)
{
    printf(",\"mpi\":");
    kb_json_string(stdout, mpi);
    printf(",\"P\":%d,\"iterations\":%d,\"validated\":%s,\"status\":\"%s\"", P, o->iters,
           o->check && bad == 0 ? "true" : "false", bad ? "invalid" : "ok");
    if (o->check)
        printf(",\"errors\":%lld", bad);
    printf("}\n");
}

/* How loaded the machine looked (rank 0 prints; collective over
 * MPI_COMM_WORLD): the load average before and after, on how many cores,
 * and the samples dropped as descheduled or with both ranks on one core.
 * Loaded: other processes kept at least half the cores busy before the
 * run (our P ranks want cores of their own), or more than 1% of the
 * samples were dropped, or any ran with both ranks on one core. */
static void report_load(double load0, const lg_opts *o, const char *mpi, int P)
{
    long long mine[2] = {n_samples, n_dropped}, all[2];
    MPI_Reduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (kb_rank != 0)
        return;
    double load1 = load_average();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int loaded = (load0 >= 0 && cores > 0 && load0 >= 0.5 * (double)cores) || all[1] * 100 > all[0] ||
                 n_same_cpu > 0;
    if (o->json) {
        printf("{\"coll\":\"loggp\",\"kind\":\"load\",\"load_average_start\":%.2f,\"load_average_end\":%.2f,"
               "\"cores\":%ld,\"samples\":%lld,\"dropped\":%lld,\"same_core\":%lld,\"loaded\":%s",
               load0, load1, cores, all[0], all[1], n_same_cpu, loaded ? "true" : "false");
        json_tail(mpi, P, o, 0);
        return;
    }
    printf("# machine load: 1-minute load average %.2f before, %.2f after, %ld cores; %lld of %lld samples\n"
           "#   dropped (> %.0fx the median: descheduled), %lld copy samples with both ranks on one core\n",
           load0, load1, cores, all[1], all[0], OUTLIER, n_same_cpu);
    if (loaded)
        printf("# LOADED: other work shared the cores; the parameters may be high (rerun when quiet)\n");
}

static void print_channel(const lg_opts *o, const char *name, const lg_point *pt, const kp_channel *ch,
                          const kb_pieces *pcs, const double *scale, const int *xs, const char *mpi, int P,
                          long long bad)
{
    if (o->json) {
        for (int i = 0; i < o->nsizes; i++) {
            printf("{\"coll\":\"loggp\",\"kind\":\"p2p\",\"channel\":\"%s\",\"size\":%zu,\"rtt_half_us\":%.4f,"
                   "\"gap_us\":%.4f,\"o_s_us\":%.4f,\"o_r_us\":%.4f,\"xchg_us\":%.4f,\"xchg2_us\":%.4f,"
                   "\"piece\":%d",
                   name, o->sizes[i], pt[i].rtt_half * 1e-3, pt[i].gap * 1e-3, pt[i].o_s * 1e-3, pt[i].o_r * 1e-3,
                   pt[i].xchg * 1e-3, pt[i].xchg2 * 1e-3, pt[i].piece);
            json_tail(mpi, P, o, bad);
        }
        for (int p = 0; p < ch->npieces; p++) {
            const kp_loggp *q = &ch->piece[p];
            printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"channel\":\"%s\",\"piece\":%d,\"max_bytes\":%lld,"
                   "\"L_ns\":%.2f,\"o_s_ns\":%.2f,\"o_r_ns\":%.2f,\"g_ns\":%.2f,\"G_ns_per_byte\":%.5f,"
                   "\"O_ns_per_byte\":%.5f,\"X_ns\":%.2f,\"XG_ns_per_byte\":%.5f,\"X2_ns\":%.2f,"
                   "\"X2G_ns_per_byte\":%.5f,\"rms\":%.4f",
                   name, p, (long long)q->max_bytes, q->L, q->o_s, q->o_r, q->g, q->G, q->O, q->X, q->XG, q->X2,
                   q->X2G, pcs->piece[p].rms);
            json_tail(mpi, P, o, bad);
        }
        return;
    }
    printf("%-12s%14s%12s%12s%12s%12s%12s%7s\n", "# size(B)", "RTT/2(us)", "g(s)(us)", "o_s(us)", "o_r(us)",
           "xchg(us)", "xchg2(us)", "piece");
    for (int i = 0; i < o->nsizes; i++)
        printf("%-12zu%14.3f%12.3f%12.3f%12.3f%12.3f%12.3f%7d\n", o->sizes[i], pt[i].rtt_half * 1e-3,
               pt[i].gap * 1e-3, pt[i].o_s * 1e-3, pt[i].o_r * 1e-3, pt[i].xchg * 1e-3, pt[i].xchg2 * 1e-3,
               pt[i].piece);
    printf("# p2p.%s: %d piece%s (rms error of RTT/2: one line %.1f%%", name, pcs->npieces,
           pcs->npieces == 1 ? "" : "s", 100 * pcs->rms_one);
    for (int p = 0; p < pcs->npieces && pcs->npieces > 1; p++)
        printf("%s%.1f%%", p == 0 ? "; pieces " : ", ", 100 * pcs->piece[p].rms);
    printf(")\n");
    for (int p = 1; p < pcs->npieces; p++)
        printf("#   %s between %zu and %zu bytes\n",
               xs[p] ? "the exchange's slope changes" : "a protocol change", o->sizes[pcs->start[p] - 1],
               o->sizes[pcs->start[p]]);
    if (ch->eager_max >= 0)
        printf("#   eager limit: %lld bytes (the first jump; larger messages rendezvous)\n", (long long)ch->eager_max);
    else
        printf("#   eager limit: none found (no jump between pieces: every message eager)\n");
    printf("%-9s%11s%10s%10s%10s%10s%12s%12s%10s%12s%10s%12s\n", "# piece", "max_bytes", "L(ns)", "o_s(ns)",
           "o_r(ns)", "g(ns)", "G(ns/B)", "O(ns/B)", "X(ns)", "XG(ns/B)", "X2(ns)", "X2G(ns/B)");
    for (int p = 0; p < ch->npieces; p++) {
        const kp_loggp *q = &ch->piece[p];
        printf("# %-7d%11lld%10.1f%10.1f%10.1f%10.1f%12.5f%12.5f%10.1f%12.5f%10.1f%12.5f", p, (long long)q->max_bytes,
               q->L, q->o_s, q->o_r, q->g, q->G, q->O, q->X, q->XG, q->X2, q->X2G);
        if (scale[p] <= 0.0)
            printf("  (RTT/2's line starts below 0: fixed costs 0)");
        else if (q->L < 0)
            printf("  (L < 0: the overheads overlap the transfer)");
        printf("\n");
    }
}

static void print_shm(const lg_opts *o, const shm_result *r, const char *mpi, int P)
{
    if (o->json) {
        for (int op = 0; op < OP_COUNT; op++) {
            if ((op == OP_PEER_READ || op == OP_PEER_WRITE) && !r->cma)
                continue;
            for (int i = 0; i < (op == OP_FLAG ? 1 : o->nsizes); i++) {
                printf("{\"coll\":\"loggp\",\"kind\":\"shm\",\"op\":\"%s\",\"size\":%zu,\"time_us\":%.5f",
                       op_names[op], op == OP_FLAG ? (size_t)8 : o->sizes[i], r->t[op][i] * 1e-3);
                json_tail(mpi, P, o, r->bad);
            }
            printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"op\":\"%s\",\"fixed_ns\":%.3f,\"per_byte_ns\":%.6f",
                   op_names[op], r->fit[op].fixed, r->fit[op].per_byte);
            if (r->fit[op].large_from > 0)
                printf(",\"large_from\":%lld,\"large_per_byte_ns\":%.6f", (long long)r->fit[op].large_from,
                       r->fit[op].large_per_byte);
            json_tail(mpi, P, o, r->bad);
        }
        printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"op\":\"data_line\",\"fixed_ns\":%.3f,\"per_byte_ns\":0,"
               "\"round_flag_line_us\":%.5f,\"round_own_line_us\":%.5f",
               r->data_line, r->round_line * 1e-3, r->round_own * 1e-3);
        json_tail(mpi, P, o, r->bad);
        return;
    }
    printf("# shm: kport's shared-memory operations (ns per operation, medians)\n");
    printf("# flag: a post seen by a waiting peer: %.1f ns\n", r->t[OP_FLAG][0]);
    printf("# data_line: a copy-in, post, wait, copy-out round of 8 B takes %.1f ns with the block in the\n"
           "#   flag's line, %.1f ns in a line of its own: %.1f ns more\n",
           r->round_line, r->round_own, r->data_line);
    printf("%-12s%12s%12s%12s%12s%12s\n", "# size(B)", "copy_in", "copy_out", "memcpy", "peer_read", "peer_write");
    for (int i = 0; i < o->nsizes; i++) {
        printf("%-12zu%12.1f%12.1f%12.1f", o->sizes[i], r->t[OP_COPY_IN][i], r->t[OP_COPY_OUT][i],
               r->t[OP_MEMCPY][i]);
        if (r->cma)
            printf("%12.1f%12.1f\n", r->t[OP_PEER_READ][i], r->t[OP_PEER_WRITE][i]);
        else
            printf("%12s%12s\n", "-", "-");
    }
    printf("%-12s%12s%14s\n", "# op", "fixed(ns)", "per_byte(ns)");
    for (int op = 0; op < OP_COUNT; op++) {
        if ((op == OP_PEER_READ || op == OP_PEER_WRITE) && !r->cma) {
            printf("# %-10s%12s%14s  (cross-memory attach not permitted: not measured, written as 0)\n",
                   op_names[op], "-", "-");
            continue;
        }
        printf("# %-10s%12.1f%14.5f", op_names[op], r->fit[op].fixed, r->fit[op].per_byte);
        if (r->fit[op].large_from > 0)
            printf("  beyond %lld B: %.5f ns/B", (long long)r->fit[op].large_from, r->fit[op].large_per_byte);
        printf("\n");
    }
}

/* ------------------------------------------------------------------------- */
/* main                                                                       */
/* ------------------------------------------------------------------------- */

static int loggp_main(int argc, char **argv)
{
    lg_opts o;
    parse(argc, argv, &o);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P < 2)
        kb_bad_usage(usage, NULL, "loggp needs at least 2 ranks%s", "");
    progress = kb_rank == 0 && isatty(STDERR_FILENO);

    int *host = malloc((size_t)P * sizeof(int));
    if (!host)
        MPI_Abort(MPI_COMM_WORLD, 1);
    kb_host_map(MPI_COMM_WORLD, host);
    int intra_peer = -1, inter_peer = -1;
    for (int r = P - 1; r >= 1; r--) {
        if (host[r] == host[0])
            intra_peer = r;
        else
            inter_peer = r;
    }
    free(host);
    int cores, oversub = kb_oversubscribed(MPI_COMM_WORLD, &cores);

    size_t maxs = o.sizes[o.nsizes - 1];
    /* two messages of the largest size at once (the exchange of two) */
    unsigned char *buf = malloc(2 * maxs), *buf2 = malloc(2 * maxs), *scratch = malloc(maxs);
    int vn = o.iters * o.nsizes > 1000 ? o.iters * o.nsizes : 1000;
    double *v = malloc((size_t)vn * sizeof(double));
    int ok = buf && buf2 && scratch && v, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!gok) {
        if (kb_rank == 0)
            fprintf(stderr, "kport-bench: loggp: cannot allocate buffers of %zu bytes\n", maxs);
        return 1;
    }
    memset(buf, 0, 2 * maxs);
    memset(buf2, 0, 2 * maxs);

    char mpi[256], knodes[256];
    kb_mpi_library_name(mpi, sizeof(mpi));
    kb_kport_layout(MPI_COMM_WORLD, knodes, sizeof(knodes));
    int hosts, rmin, rmax;
    kb_node_layout(MPI_COMM_WORLD, &hosts, &rmin, &rmax);

    const double load0 = load_average();
    kp_machine m;
    double entry_gap = -1; /* measure_call's diagnostic: how far apart the ranks left the start line (ns) */
    double post_wait = -1; /* and the skew before its cap at one flag (ns) */
    kp_params_init(&m);
    m.cores = cores;
    if (kb_rank == 0 && !o.json) {
        printf("# kport-bench loggp\n# MPI: %s\n# P = %d, %d host%s; kport node layout: %s\n", mpi, P, hosts,
               hosts == 1 ? "" : "s", knodes);
        printf("# sizes %zu..%zu B, %d timed runs (+%d warm-up) per point, trains of %d messages%s\n", o.sizes[0],
               maxs, o.iters, o.warmup, o.n, oversub ? "; OVERSUBSCRIBED (ranks > cores)" : "");
        printf("# messages: %s\n", blocking ? "MPI_Send / MPI_Recv (--blocking)"
                                              : "MPI_Isend / MPI_Irecv + MPI_Wait, as kport's executor");
        printf("# PRTT(n,d,s) (Kielmann et al.): RTT = PRTT(1,0,s); g(s) = (PRTT(n,0,s)-RTT)/(n-1);\n"
               "#   o_s(s) = (PRTT(n,d,s)-RTT)/(n-1) - d; o_r(s) = the receive of a message already there\n");
        fflush(stdout);
    }

    int failures = 0;
    const int peers[2] = {intra_peer, inter_peer};
    kp_channel *chs[2] = {&m.intra, &m.inter};
    kp_linear *hock[2] = {&m.hockney_intra, &m.hockney_inter};
    int measured[2] = {0, 0};
    shm_result shm;
    memset(&shm, 0, sizeof(shm));
    for (int c = 0; c < 2; c++) {
        if (peers[c] < 0)
            continue;
        int color = kb_rank == 0 || kb_rank == peers[c] ? 1 : MPI_UNDEFINED;
        MPI_Comm pc;
        MPI_Comm_split(MPI_COMM_WORLD, color, kb_rank, &pc);
        lg_point pt[LG_MAX_SIZES];
        kb_pieces pcs;
        memset(pt, 0, sizeof(pt));
        memset(&pcs, 0, sizeof(pcs));
        long long bad = 0;
        double scale[KB_MAX_PIECES];
        int xs[KB_MAX_PIECES + 1] = {0};
        for (int p = 0; p < KB_MAX_PIECES; p++)
            scale[p] = 1.0;
        if (pc != MPI_COMM_NULL) {
            measure_p2p(pc, &o, c == 0 ? "intra" : "inter", pt, &bad, buf, buf2, scratch, v);
            if (kb_rank == 0)
                fit_channel(&o, pt, chs[c], &pcs, hock[c], scale, xs);
            if (c == 0) {
                measure_shm(pc, &o, oversub, &shm, buf, buf2, scratch);
                measure_call(pc, &o, oversub, &shm, &m.call, &entry_gap, &post_wait);
            }
            MPI_Comm_free(&pc);
        }
        kb_sleepy_barrier(MPI_COMM_WORLD); /* the other ranks wait here without polling */
        measured[c] = 1;
        if (kb_rank != 0)
            continue;
        if (progress)
            fprintf(stderr, "\r%40s\r", "");
        if (bad) {
            failures++;
            fprintf(stderr, "kport-bench: loggp: p2p.%s: %lld wrong bytes\n", c == 0 ? "intra" : "inter", bad);
        }
        if (!o.json)
            printf("# p2p.%s: MPI point-to-point between world ranks 0 and %d (%s host)\n", c == 0 ? "intra" : "inter",
                   peers[c], c == 0 ? "one" : "two hosts: another");
        print_channel(&o, c == 0 ? "intra" : "inter", pt, chs[c], &pcs, scale, xs, mpi, P, bad);
        fflush(stdout);
    }
    if (kb_rank == 0) {
        if (!measured[1]) {
            m.inter = m.intra;
            m.hockney_inter = m.hockney_intra;
            if (!o.json)
                printf("# p2p.inter = p2p.intra: every rank is on one host, where MPI carries messages between\n"
                       "#   kport's (emulated) nodes through the same shared memory\n");
        } else if (!measured[0]) {
            m.intra = m.inter;
            m.hockney_intra = m.hockney_inter;
            if (!o.json)
                printf("# p2p.intra = p2p.inter: no two ranks share a host; shared-memory costs not measured\n");
        }
        if (measured[0]) {
            if (shm.bad) {
                failures++;
                fprintf(stderr, "kport-bench: loggp: shm: %s\n",
                        shm.bad < 0 ? "not measured" : "wrong bytes after copies or single copies");
            }
            if (shm.bad >= 0)
                print_shm(&o, &shm, mpi, P);
            if (o.json) {
                printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"op\":\"call\",\"fixed_ns\":%.3f,\"skew_ns\":%.3f",
                       m.call.fixed, m.call.skew);
                if (post_wait >= 0)
                    printf(",\"post_wait_skew_ns\":%.3f", post_wait);
                if (entry_gap >= 0)
                    printf(",\"entry_gap_ns\":%.3f", entry_gap);
                json_tail(mpi, P, &o, 0);
            } else {
                printf("# call: kport's own cost per call %.1f ns (kp_allgather on MPI_COMM_SELF less its copy);\n"
                       "#   entry skew after the start line %.1f ns (a timed post and wait, max over ranks, less the "
                       "flag;\n#   the clock's cost included)\n",
                       m.call.fixed, m.call.skew);
                if (post_wait > m.call.skew)
                    printf("#   (capped at one flag, as a start line of flags lets the ranks go at most one flag "
                           "apart: %.1f ns uncapped)\n",
                           post_wait);
                if (entry_gap >= 0)
                    printf("#   the ranks left the start line %.1f ns apart (median, one clock; not used by the model)\n",
                           entry_gap);
            }
            m.flag = shm.fit[OP_FLAG];
            m.copy_in = shm.fit[OP_COPY_IN];
            m.copy_out = shm.fit[OP_COPY_OUT];
            m.memcpy_ = shm.fit[OP_MEMCPY];
            m.peer_read = shm.fit[OP_PEER_READ];
            m.peer_write = shm.fit[OP_PEER_WRITE];
            m.data_line = shm.data_line;
        }
        if (!o.json && oversub)
            printf("# OVERSUBSCRIBED: %d cores, more ranks on a host: waiting ranks yield, times include "
                   "scheduling\n",
                   cores);
    }

    report_load(load0, &o, mpi, P);
    if (o.out && kb_rank == 0) {
        char err[KB_ERR_LEN];
        char hostname[MPI_MAX_PROCESSOR_NAME];
        int len = 0;
        MPI_Get_processor_name(hostname, &len);
        copy_str(m.host, sizeof(m.host), hostname);
        copy_str(m.mpi, sizeof(m.mpi), mpi);
        char cmd[sizeof(m.command) + 32];
        snprintf(cmd, sizeof(cmd), "mpirun -np %d ", P);
        copy_str(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), o.command);
        copy_str(m.command, sizeof(m.command), cmd);
        FILE *f = fopen("/proc/cpuinfo", "r");
        if (f) {
            char line[256];
            while (fgets(line, sizeof(line), f))
                if (strncmp(line, "model name", 10) == 0) {
                    const char *c = strchr(line, ':');
                    copy_str(m.cpu, sizeof(m.cpu), c ? c + 2 : "");
                    m.cpu[strcspn(m.cpu, "\n")] = '\0';
                    break;
                }
            fclose(f);
        }
        time_t now = time(NULL);
        struct tm tmv;
        strftime(m.date, sizeof(m.date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
        if (kp_params_check(&m, err, (int)sizeof(err)) != KP_SUCCESS) {
            fprintf(stderr, "kport-bench: loggp: the measured parameters are refused: %s\n", err);
            failures++;
        } else if (kp_params_save(o.out, &m) != KP_SUCCESS) {
            fprintf(stderr, "kport-bench: loggp: cannot write %s: %s\n", o.out, strerror(errno));
            failures++;
        } else if (!o.json) {
            printf("# written: %s\n", o.out);
        }
    }
    if (kb_rank == 0 && !o.json && o.check)
        printf("# Validation: %s\n", failures ? "FAILED" : "passed");
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(buf);
    free(buf2);
    free(scratch);
    free(v);
    return failures ? 1 : 0;
}

const kb_command kb_cmd_loggp = {"loggp", "LogGP parameters and shared-memory costs; writes the parameter file", NULL,
                                 loggp_main};
