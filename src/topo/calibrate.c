/*
 * Calibration: what the default choice inside a node depends on, measured
 * on the node it runs on, when its tier comes up (topo.c). The choice made
 * with it is src/select/calibrate.c's.
 *
 * Why: the crossovers between kport's shared-memory algorithms (two copies
 * through the segment, single-copy reads with process_vm_readv) move with
 * the machine: on this project's virtual machine the fixed cost of a
 * cross-memory-attach call moved from well under 1 us to about 2 us between
 * days, and a fixed 8 KiB crossover became a 2x loss (issue 12). So the
 * first time a process brings up a node tier (src/topo/topo.c,
 * kp_topo_node), the node's local ranks 0 and 1 measure, together, what
 * src/model/model.c charges for shared-memory operations:
 *   flag        half the round trip of two flags in the segment;
 *   copy_in     both ranks copy s bytes from a private buffer into the
 *               segment at once;
 *   copy_out    both copy the block the other one just wrote out of it;
 *   memcpy      a private copy;
 *   peer_read   process_vm_readv of s bytes of the peer's private buffer,
 *               both ranks reading each other at once (as the single-copy
 *               all-gather and all-to-all do; alone it costs less)
 *   peer_write  process_vm_writev of s bytes into it, one writer,
 * each at three sizes: KP_CAL_S1 and KP_CAL_S2 fitted as fixed + per byte
 * (the median of KP_CAL_REPS repetitions); the single-copy reads and
 * writes also at KP_CAL_S3 (512 KiB, the median of KP_CAL_REPS3) for their
 * slope above KP_CAL_S2 (large_per_byte): a process_vm_readv of 1 MiB costs
 * about twice per byte what one of 32 KiB does (0.105 against 0.051 ns/B
 * here), and with one slope the model chose single-copy reads for gathers
 * and all-gathers of 128 KiB-1 MiB that the two copies through the segment
 * run 1.2-2x faster. The copies keep one slope: a two-copy gather of 1 MiB
 * runs its copies at their 32 KiB cost per byte (63 us for two copies of
 * 1 MiB), while this function's own copies of 1 MiB measured 2.4x that
 * (70-85 us each, whether interleaved with the other operations or not; not
 * explained), so a measured copy slope above 32 KiB would mislead the
 * choice it is for. Local rank 0 publishes the results in
 * the segment; every rank of the node copies them; the values are cached
 * for the process. Every rank of the communicator then agrees on one set:
 * an allreduce (MPI_MAX: the slower node's costs) of the vector, merged
 * with the one that agrees on whether cross-memory attach works, so
 * selection is identical on every rank even where nodes measured
 * differently. Ranks other than 0 and 1 wait in a barrier; a node of one
 * rank, or one whose ranks outnumber its cores (its timings would measure
 * the scheduler), keeps the built-in defaults (KP_CAL_DEFAULT_*), and so
 * does KPORT_CALIBRATE=0. KPORT_CALIBRATE=force measures at every new node
 * tier instead of once per process. Cost: see docs/PERFORMANCE.md,
 * "Calibrated defaults" (well under 1 ms here).
 *
 */
#define _GNU_SOURCE
#include "topo/topo.h"
#include "util/clock.h"
#include "util/env.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define KP_CAL_S1 256
#define KP_CAL_S2 32768
#define KP_CAL_S3 (512 << 10)
#define KP_CAL_REPS 15
#define KP_CAL_REPS3 3
#define KP_CAL_FLAG_REPS 200

/* the vector the ranks agree on: per operation fixed, per_byte and
 * large_per_byte (above KP_CAL_S2), in this order */
enum { CAL_FLAG, CAL_COPY_IN, CAL_COPY_OUT, CAL_MEMCPY, CAL_PEER_READ, CAL_PEER_WRITE, CAL_N };
#define CAL_W 3
#define CAL_WORDS (CAL_W * CAL_N)

static struct {
    int have;
    double v[CAL_WORDS];
    double cost_ns; /* what measuring took on this rank */
} cal;

/* defaults: this project's 2-core VM on a quiet day (docs/PERFORMANCE.md) */
static const double cal_default[CAL_WORDS] = {
    60.0, 0.0, 0.0,     /* flag */
    20.0, 0.04, 0.04,   /* copy_in */
    20.0, 0.035, 0.035, /* copy_out */
    10.0, 0.015, 0.015, /* memcpy */
    500.0, 0.06, 0.06,  /* peer_read */
    500.0, 0.06, 0.06,  /* peer_write */
};

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return v[n / 2];
}

/* a flag word of the calibration area: rank r's, in a cache line of its own */
static _Atomic uint64_t *cal_flag(char *area, int r)
{
    return (_Atomic uint64_t *)(void *)(area + 128 * r);
}

static void post(char *area, int me, uint64_t v)
{
    atomic_store_explicit(cal_flag(area, me), v, memory_order_release);
}

static void await(char *area, int peer, uint64_t v)
{
    unsigned spins = 0;
    while (atomic_load_explicit(cal_flag(area, peer), memory_order_acquire) < v)
        if (++spins > 4096) /* the peer lost its core (a loaded machine): let it run */
            sched_yield();
}

/* the two measuring ranks (me = 0 or 1) meet: both have posted `v` */
static void meet(char *area, int me, uint64_t v)
{
    post(area, me, v);
    await(area, 1 - me, v);
}

/* fixed + per_byte through (S1, t1), (S2, t2), large_per_byte from (S2,
 * t2) to (S3, t3); never negative */
static void fit3(double t1, double t2, double t3, double *w)
{
    double b = (t2 - t1) / (double)(KP_CAL_S2 - KP_CAL_S1);
    if (b < 0)
        b = 0;
    double a = t1 - b * KP_CAL_S1;
    w[0] = a > 0 ? a : 0;
    w[1] = b;
    /* from the fitted line's value at S2, so the two pieces meet */
    const double c = (t3 - (w[0] + b * KP_CAL_S2)) / (double)(KP_CAL_S3 - KP_CAL_S2);
    w[2] = c > 0 ? c : 0;
}

/* local ranks 0 and 1 of c's node measure; rank 0's results in out */
static void measure(kp_comm *c, int cma, double *out)
{
    const int me = c->local;
    char *area = c->shm.data; /* half 0, unused between calls */
    char *blk = area + 256;   /* [0, S2): rank 0's block, [S2, 2 S2): rank 1's */
    /* priv: the source of the copies and of the peer's single-copy reads
     * (KP_CAL_S3 bytes), priv2: their destination */
    char *priv = malloc(KP_CAL_S3), *priv2 = malloc(KP_CAL_S3);
    const int ok = priv && priv2;
    if (ok) {
        memset(priv, me + 1, KP_CAL_S3);
        memset(priv2, 0, KP_CAL_S3);
    }
    /* the peer's private buffer, for single copy: through the slots */
    c->shm.slots[me].addr[0] = (uint64_t)(uintptr_t)priv;
    c->shm.slots[me].pid = (uint64_t)getpid();
    uint64_t step = 1;
    post(area, me, 0);
    meet(area, me, step++);
    const kp_shm_slot *peer = &c->shm.slots[1 - me];
    double t[KP_CAL_FLAG_REPS];
    /* flag: A posts, B answers */
    for (int i = 0; i < KP_CAL_FLAG_REPS; i++) {
        const double t0 = kp_now_ns();
        if (me == 0) {
            post(area, 0, step);
            await(area, 1, step);
        } else {
            await(area, 0, step);
            post(area, 1, step);
        }
        t[i] = (kp_now_ns() - t0) / 2;
        step++;
    }
    out[CAL_W * CAL_FLAG] = median(t, KP_CAL_FLAG_REPS);
    out[CAL_W * CAL_FLAG + 1] = out[CAL_W * CAL_FLAG + 2] = 0;
    const int sizes[3] = {KP_CAL_S1, KP_CAL_S2, KP_CAL_S3}, reps[3] = {KP_CAL_REPS, KP_CAL_REPS, KP_CAL_REPS3};
    double tt[CAL_N][3];
    for (int z = 0; z < 3; z++) {
        const int s = sizes[z], nrep = reps[z];
        double tin[KP_CAL_REPS], tout[KP_CAL_REPS], tmem[KP_CAL_REPS], trd[KP_CAL_REPS], twr[KP_CAL_REPS];
        /* each operation repeated back to back, as a benchmark's calls
         * repeat one collective; copy_in and copy_out alternate as a
         * two-copy call makes them; the copies at the two small sizes only */
        for (int i = 0; i < nrep && s <= KP_CAL_S2; i++) {
            meet(area, me, step++);
            double t0 = kp_now_ns();
            if (ok)
                memcpy(blk + me * KP_CAL_S2, priv, (size_t)s);
            tin[i] = kp_now_ns() - t0;
            meet(area, me, step++);
            t0 = kp_now_ns();
            if (ok)
                memcpy(priv2, blk + (1 - me) * KP_CAL_S2, (size_t)s);
            tout[i] = kp_now_ns() - t0;
        }
        for (int i = 0; i < nrep && s <= KP_CAL_S2; i++) {
            meet(area, me, step++);
            double t0 = kp_now_ns();
            if (ok)
                memcpy(priv + KP_CAL_S2, priv2, (size_t)s);
            tmem[i] = kp_now_ns() - t0;
        }
        struct iovec l = {priv2, (size_t)s}, r = {(void *)(uintptr_t)peer->addr[0], (size_t)s};
        for (int i = 0; i < nrep; i++) {
            meet(area, me, step++);
            trd[i] = 0;
            if (ok && cma) { /* both read each other at once, as the single-copy all-gather does */
                const double t0 = kp_now_ns();
                process_vm_readv((pid_t)peer->pid, &l, 1, &r, 1, 0);
                trd[i] = kp_now_ns() - t0;
            }
        }
        for (int i = 0; i < nrep; i++) {
            meet(area, me, step++);
            twr[i] = 0;
            if (me == 0 && ok && cma) { /* one writer, as a gather's sender; the peer waits */
                const double t0 = kp_now_ns();
                process_vm_writev((pid_t)peer->pid, &l, 1, &r, 1, 0);
                twr[i] = kp_now_ns() - t0;
            }
        }
        if (s <= KP_CAL_S2) {
            tt[CAL_COPY_IN][z] = median(tin, nrep);
            tt[CAL_COPY_OUT][z] = median(tout, nrep);
            tt[CAL_MEMCPY][z] = median(tmem, nrep);
        }
        tt[CAL_PEER_READ][z] = median(trd, nrep);
        tt[CAL_PEER_WRITE][z] = median(twr, nrep);
    }
    meet(area, me, step++);
    for (int k = CAL_COPY_IN; k < CAL_N; k++) {
        const int big = k == CAL_PEER_READ || k == CAL_PEER_WRITE; /* measured at S3 */
        fit3(tt[k][0], tt[k][1], big ? tt[k][2] : 0, &out[CAL_W * k]);
        if (!big)
            out[CAL_W * k + 2] = out[CAL_W * k + 1]; /* one slope */
    }
    if (!cma) /* not measurable: keep the defaults (no candidate uses them) */
        for (int k = CAL_PEER_READ; k <= CAL_PEER_WRITE; k++)
            for (int w = 0; w < CAL_W; w++)
                out[CAL_W * k + w] = cal_default[CAL_W * k + w];
    free(priv);
    free(priv2);
}

/* test hook: KPORT_CALIBRATE_SKEW=f scales this rank's measured costs by
 * (1 + f * world rank), so ranks hold different local measurements */
static void skew(double *v)
{
    const char *e = getenv("KPORT_CALIBRATE_SKEW");
    if (!e || !*e)
        return;
    int wr = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    const double f = 1.0 + atof(e) * wr;
    for (int i = 0; i < CAL_WORDS; i++)
        v[i] *= f;
}

int kp_calibrate(kp_comm *c, int cma)
{
    const int m = kp_calibrate_mode();
    double v[CAL_WORDS + 1];
    int measured = 0;
    /* the node decides together whether to measure (the calibration is
     * per process, and a node's ranks may hold different histories) */
    if (m && c->node_size >= 2 && !c->layout.oversub) {
        int mine = m == 2 ? 0 : cal.have, all = 0;
        PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, c->node);
        if (!all) {
            /* a segment large enough to measure in; where MPI refuses it
             * (a small /dev/shm) the node keeps the defaults */
            int ok = kp_shm_reserve(c, 256 + 2 * KP_CAL_S2) == KP_SUCCESS;
            PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, c->node);
            all = !ok;
        }
        if (!all) {
            const double t0 = kp_now_ns();
            double res[CAL_WORDS];
            /* single copy measured only where both measuring ranks can */
            int pair = c->local < 2 ? cma : 1, paircma = 0;
            PMPI_Allreduce(&pair, &paircma, 1, MPI_INT, MPI_MIN, c->node);
            if (c->local < 2)
                measure(c, paircma, res);
            if (c->local == 0) /* publish for the node, after the data blocks */
                memcpy(c->shm.data + 256 + 2 * KP_CAL_S2 - sizeof(res), res, sizeof(res));
            PMPI_Barrier(c->node);
            memcpy(cal.v, c->shm.data + 256 + 2 * KP_CAL_S2 - sizeof(res), sizeof(res));
            PMPI_Barrier(c->node); /* read before the segment's next use */
            cal.have = 1;
            cal.cost_ns = kp_now_ns() - t0;
            measured = 1;
        }
    }
    if (m && cal.have && c->node_size >= 2 && !c->layout.oversub)
        memcpy(v, cal.v, sizeof(cal.v));
    else
        memcpy(v, cal_default, sizeof(cal_default));
    skew(v);
    v[CAL_WORDS] = cma ? 0.0 : 1.0; /* agreed with the costs: MPI_MAX of "cannot" */
    double agreed[CAL_WORDS + 1];
    PMPI_Allreduce(v, agreed, CAL_WORDS + 1, MPI_DOUBLE, MPI_MAX, c->user);
    c->layout.cma = agreed[CAL_WORDS] == 0.0;
    if (!c->mach && !(c->mach = malloc(sizeof(*c->mach))))
        return kp_error(KP_ERR_NOMEM, "out of memory for the machine parameters");
    kp_machine *mc = c->mach;
    kp_params_init(mc);
    /* point-to-point: no candidate priced here sends messages; plausible
     * values keep the description valid (docs/PARAMETERS.md) */
    mc->intra.piece[0] = (kp_loggp){.max_bytes = -1, .L = 0, .o_s = 100, .o_r = 120, .g = 120, .G = 0.05, .O = 0};
    mc->inter = mc->intra;
    kp_linear *f[CAL_N] = {&mc->flag, &mc->copy_in, &mc->copy_out, &mc->memcpy_, &mc->peer_read, &mc->peer_write};
    for (int k = 0; k < CAL_N; k++) {
        const double *w = &agreed[CAL_W * k];
        *f[k] = (kp_linear){.fixed = w[0], .per_byte = w[1], .large_from = k == CAL_PEER_READ || k == CAL_PEER_WRITE ? KP_CAL_S2 : 0,
                            .large_per_byte = w[2]};
    }
    mc->hockney_intra = mc->hockney_inter = (kp_linear){.fixed = 500, .per_byte = 0.05};
    c->calibrated = m && (measured || cal.have) && c->node_size >= 2 && !c->layout.oversub;
    if (measured && kp_verbose() && c->rank == 0) {
        fprintf(stderr,
                "kport: calibrated in %.0f us (agreed, ns + ns/B, above %d B ns/B): flag %.0f, copy_in %.0f + %.4f "
                "(%.4f), copy_out %.0f + %.4f (%.4f), memcpy %.0f + %.4f (%.4f), peer_read %.0f + %.4f (%.4f), "
                "peer_write %.0f + %.4f (%.4f)\n",
                cal.cost_ns / 1000, KP_CAL_S2, agreed[0], agreed[3], agreed[4], agreed[5], agreed[6], agreed[7],
                agreed[8], agreed[9], agreed[10], agreed[11], agreed[12], agreed[13], agreed[14], agreed[15],
                agreed[16], agreed[17]);
        fflush(stderr);
    }
    return KP_SUCCESS;
}

/* the agreed vector (tests): CAL_WORDS doubles */
int kp_calibration_words(const kp_comm *c, double *out, int n)
{
    if (!c->mach || n < CAL_WORDS)
        return 0;
    const kp_linear *f[CAL_N] = {&c->mach->flag,     &c->mach->copy_in,   &c->mach->copy_out,
                                 &c->mach->memcpy_,  &c->mach->peer_read, &c->mach->peer_write};
    for (int k = 0; k < CAL_N; k++) {
        out[CAL_W * k] = f[k]->fixed;
        out[CAL_W * k + 1] = f[k]->per_byte;
        out[CAL_W * k + 2] = f[k]->large_per_byte;
    }
    return CAL_WORDS;
}

double kp_calibration_cost_ns(void)
{
    return cal.cost_ns;
}

