/*
 * The calibrated choice, checked by measurement (STAR-MPI's idea: A. Faraj,
 * X. Yuan, D. Lowenthal, "STAR-MPI: self tuned adaptive routines for MPI
 * collective operations", ICS 2006: time the candidates in the running
 * program and keep the faster).
 *
 * Why: the cost model prices the two one-node candidates (two copies
 * through the segment, single copy) with costs measured once, at start-up
 * (calibrate.c). This project's virtual machine moves between states in
 * which the right answer flips: with its two cores far apart (a flag takes
 * 155-250 ns) single copy ran a 1 MiB all-gather in 166 us against 273 for
 * the two copies; with them close (55 ns), the two copies took 90 against
 * about 150. A calibration taken in one state kept its choice for the
 * process's life, and a run of `make bench` lost 1.7x at 512 KiB-1 MiB
 * (docs/PERFORMANCE.md, "Calibrated defaults"). A real machine drifts less,
 * but any start-up measurement can be unlucky.
 *
 * How: where the calibrated choice had both candidates priced (kp_choice's
 * alt) and the call moves at least KP_VERIFY_MIN bytes in all (P x block;
 * kp_verify_applies in select.h. Below, a call takes well under a
 * microsecond and the candidates differ 2x or more; at 8 KiB in all, in a
 * slow state of this machine, single copy ran 1.2-1.4x faster than the two
 * copies the model chose with its margin),
 * the communicator keeps, per (collective, block size, root), a count of
 * calls. From call KP_VERIFY_FIRST on, and then every `period` calls, a
 * trial: KP_VERIFY_SAMPLES + 1 calls of the other candidate, then as many
 * of the model's pick, the first of each untimed (each rank times its own
 * calls; the least of each candidate's times is kept), then one
 * MPI_Allreduce (MPI_MAX over ranks, on kport's private duplicate) of the
 * two times, and the communicator runs the faster from then on if it is
 * KP_VERIFY_MARGIN times faster, else keeps what it ran - a change only
 * when a second trial KP_VERIFY_CONFIRM calls later agrees (a first trial
 * at a new size measured the two copies of 1 MiB at 114 us, the next one
 * at 88, against single copy's 94-99). The period starts
 * at KP_VERIFY_PERIOD calls and doubles while the answer stays the same (up
 * to KP_VERIFY_PERIOD_MAX), back to the start when it changes. Every rank
 * counts the same calls and takes the same reduced times, so every rank
 * runs the same algorithm at every call.
 *
 * Cost: a trial is 2 x KP_VERIFY_SAMPLES + 2 calls, half of them of the
 * slower candidate, and one allreduce; with the period at 64 calls and a
 * candidate 1.7x slower, about 4 % more time for the first periods,
 * falling to 0.07 % at the longest; outside trials a lookup of the entry
 * and nothing timed. KPORT_VERIFY=0 turns the check off; KPORT_VERBOSE=1 prints every
 * trial's times and outcome (rank 0).
 *
 * Test hook: KPORT_VERIFY_FAKE="a,b[;a,b...]" replaces the measured times
 * of the model's pick and of the other candidate by a and b ns (rank r
 * uses pair r mod the number of pairs), read at every trial.
 */
#include "select/select.h"
#include "topo/topo.h"
#include "util/clock.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KP_VERIFY_N 16
#define KP_VERIFY_FIRST 16
#define KP_VERIFY_CONFIRM 8 /* calls to the trial that confirms a change */
#define KP_VERIFY_SAMPLES 3
#define KP_VERIFY_PERIOD 64
#define KP_VERIFY_PERIOD_MAX 4096
#define KP_VERIFY_MARGIN 1.05
/* trial steps: 1 .. S + 1 the other candidate, 1 untimed; S + 2 .. 2 S + 2
 * the model's pick, S + 2 untimed. In blocks, not alternately: a call
 * right after the other algorithm runs in the caches that one left (the
 * two copies of 256 KiB after single copy, both all-to-all: 24 us, against
 * 20 us one after the other; single copy 22.7 against 28.6), and the
 * program repeats one of them. */
#define KP_VERIFY_STEPS (2 * KP_VERIFY_SAMPLES + 2)
#define KP_VERIFY_SIDE(step) ((step) <= KP_VERIFY_SAMPLES + 1 ? 1 : 0)
#define KP_VERIFY_TIMED(step) ((step) != 1 && (step) != KP_VERIFY_SAMPLES + 2)

typedef struct kp_verify_entry {
    int used, coll, root;
    int64_t bytes;
    long calls;  /* calls made of this entry */
    long next;   /* call index at which the next trial starts */
    long period;
    int cur;     /* what runs outside trials: 0 the model's pick, 1 the other */
    int pending; /* the last trial said change: the next one (soon) must agree */
    int step;    /* 0 outside a trial, else 1 .. KP_VERIFY_STEPS */
    double best[2];
    unsigned long used_at;
} kp_verify_entry;

struct kp_verify {
    kp_verify_entry e[KP_VERIFY_N];
    unsigned long tick;
    kp_verify_entry *last[KP_COLL_COUNT]; /* the previous call's, tried first */
};

void kp_verify_free(kp_comm *c)
{
    free(c->verify);
    c->verify = NULL;
}

/* the entry of (coll, bytes, root), made (replacing the least recently
 * used one: the same on every rank, which make the same calls) if new */
static kp_verify_entry *entry(kp_comm *c, int coll, int64_t bytes, int root)
{
    if (!c->verify && !(c->verify = calloc(1, sizeof(*c->verify))))
        return NULL;
    struct kp_verify *v = c->verify;
    v->tick++;
    kp_verify_entry *e = v->last[coll];
    if (e && e->used && e->coll == coll && e->bytes == bytes && e->root == root) {
        e->used_at = v->tick;
        return e;
    }
    kp_verify_entry *old = &v->e[0];
    for (int i = 0; i < KP_VERIFY_N; i++) {
        e = &v->e[i];
        if (e->used && e->coll == coll && e->bytes == bytes && e->root == root) {
            e->used_at = v->tick;
            return v->last[coll] = e;
        }
        if (!e->used || (old->used && e->used_at < old->used_at))
            old = e;
    }
    for (int k = 0; k < KP_COLL_COUNT; k++)
        if (v->last[k] == old)
            v->last[k] = NULL;
    memset(old, 0, sizeof(*old));
    old->used = 1;
    old->coll = coll;
    old->bytes = bytes;
    old->root = root;
    old->next = KP_VERIFY_FIRST;
    old->period = KP_VERIFY_PERIOD;
    old->used_at = v->tick;
    return v->last[coll] = old;
}

int kp_verify_begin(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **pl, void **token,
                    int *side)
{
    *token = NULL;
    *side = 0;
    const kp_algo *alt = c->alt[coll]; /* set: the caller asked kp_verify_applies */
    if (!kp_verify_mode())
        return KP_SUCCESS;
    kp_verify_entry *e = entry(c, coll, bytes, root);
    if (!e) /* an error, not a skipped check: the other ranks would wait in the trial's allreduce */
        return kp_error(KP_ERR_NOMEM, "out of memory for the calibrated choice's check");
    const long i = e->calls++;
    if (!e->step && i >= e->next) {
        e->step = 1;
        e->best[0] = e->best[1] = DBL_MAX;
    }
    const int s = e->step ? KP_VERIFY_SIDE(e->step) : e->cur;
    if (s == 1) {
        kp_plan *p2 = NULL;
        int rc = kp_plan_get(c, coll, alt, &c->alt_prm[coll], bytes, root, inplace, &p2);
        if (rc)
            return rc;
        if (p2->refused && p2->resource) { /* MPI refused its resources (agreed): no check, the pick runs */
            c->alt[coll] = NULL;
            return KP_SUCCESS;
        }
        if (p2->refused)
            return kp_error(KP_ERR_INTERNAL, "verifying the calibrated choice: %s refused: %s", p2->name,
                            p2->errmsg);
        *pl = p2;
    }
    *token = e->step ? e : NULL; /* outside trials nothing is timed */
    *side = s;
    return KP_SUCCESS;
}

/* KPORT_VERIFY_FAKE's pair for this rank, if set */
static int fake(double *t)
{
    const char *e = getenv("KPORT_VERIFY_FAKE");
    if (!e || !*e)
        return 0;
    int n = 1, wr = 0;
    for (const char *p = e; *p; p++)
        n += *p == ';';
    MPI_Comm_rank(MPI_COMM_WORLD, &wr);
    const char *p = e;
    for (int k = wr % n; k > 0; k--)
        p = strchr(p, ';') + 1;
    return sscanf(p, "%lf,%lf", &t[0], &t[1]) == 2;
}

int kp_verify_end(kp_comm *c, int coll, const kp_algo *pick, void *token, int side, double ns)
{
    kp_verify_entry *e = token;
    if (!e || !e->step)
        return KP_SUCCESS;
    if (KP_VERIFY_TIMED(e->step) && ns < e->best[side])
        e->best[side] = ns;
    if (++e->step <= KP_VERIFY_STEPS)
        return KP_SUCCESS;
    /* the trial's last call: agree and decide */
    double mine[2] = {e->best[0], e->best[1]}, all[2];
    double f[2];
    if (fake(f)) {
        mine[0] = f[0];
        mine[1] = f[1];
    }
    int rc = kp_topo_private(c);
    if (rc)
        return rc;
    if (PMPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, c->comm) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "verifying the calibrated choice: MPI_Allreduce failed");
    const int was = e->cur;
    int want = was;
    if (all[1] * KP_VERIFY_MARGIN < all[0])
        want = 1;
    else if (all[0] * KP_VERIFY_MARGIN < all[1])
        want = 0;
    const char *what;
    if (want != was && !e->pending) { /* one trial is not enough: confirm soon */
        e->pending = 1;
        e->next = e->calls + KP_VERIFY_CONFIRM;
        what = "to be confirmed";
    } else {
        if (want != was) {
            e->cur = want;
            e->period = KP_VERIFY_PERIOD;
            what = "changed";
        } else {
            e->period = e->period * 2 > KP_VERIFY_PERIOD_MAX ? KP_VERIFY_PERIOD_MAX : e->period * 2;
            what = "kept";
        }
        e->pending = 0;
        e->next = e->calls + e->period;
    }
    e->step = 0;
    if (kp_verbose() && c->rank == 0) {
        const kp_algo *alt = c->alt[coll];
        fprintf(stderr,
                "kport: %s P=%d bytes=%lld: measured %s %.2f us, %s %.2f us (least of %d, max over ranks): "
                "runs %s (%s); next check in %ld calls\n",
                kp_coll_name(coll), c->size, (long long)e->bytes, pick->name, all[0] / 1000, alt->name,
                all[1] / 1000, KP_VERIFY_SAMPLES, e->cur ? alt->name : pick->name, what, e->next - e->calls);
        fflush(stderr);
    }
    return KP_SUCCESS;
}
