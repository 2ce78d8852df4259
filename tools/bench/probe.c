/*
 * Measuring primitives shared by kport-bench loggp, fanout and concurrency;
 * the manual is probe.h.
 */
#define _GNU_SOURCE
#include "probe.h"
#include "util/spin.h"
#include "fit.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

MPI_Status *const kb_statuses_ignore = MPI_STATUSES_IGNORE;

double kb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double kb_timer_cost_ns(void)
{
    double v[101];
    for (int i = 0; i < 101; i++) {
        double a = kb_now_ns();
        v[i] = kb_now_ns() - a;
    }
    return kb_median(v, 101);
}

void kb_spin_until(double start, double ns)
{
    while (kb_now_ns() - start < ns)
        ;
}

void kb_host_map(MPI_Comm comm, int *host)
{
    int rank, lowest;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm shared;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, shared);
    MPI_Comm_free(&shared);
    MPI_Allgather(&lowest, 1, MPI_INT, host, 1, MPI_INT, comm);
}

int kb_oversubscribed(MPI_Comm comm, int *cores)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm shared;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
    MPI_Comm_size(shared, &n);
    MPI_Comm_free(&shared);
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    int mine[2] = {n > c ? 1 : 0, -(int)(c > 0 ? c : 1)}, all[2];
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, comm);
    if (cores)
        *cores = -all[1];
    return all[0];
}

void kb_sleepy_barrier(MPI_Comm comm)
{
    MPI_Request req;
    int done = 0;
    MPI_Ibarrier(comm, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            break;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

int kb_seg_open(MPI_Comm comm, size_t bytes, int oversub, kb_seg *s)
{
    memset(s, 0, sizeof(*s));
    s->win = MPI_WIN_NULL;
    MPI_Comm_rank(comm, &s->me);
    MPI_Comm_size(comm, &s->n);
    s->oversub = oversub;
    s->bytes = bytes;
    const MPI_Aint total = (MPI_Aint)(128 * (size_t)s->n + bytes);
    unsigned char *mine = NULL;
    int ok = MPI_Win_allocate_shared(s->me == 0 ? total : 0, 1, MPI_INFO_NULL, comm, &mine, &s->win) == MPI_SUCCESS,
        all;
    if (ok) {
        MPI_Aint sz;
        int du;
        unsigned char *base = NULL;
        MPI_Win_shared_query(s->win, 0, &sz, &du, &base);
        ok = base != NULL && sz >= total;
        s->slots = base;
        s->data = base ? base + 128 * (size_t)s->n : NULL;
    }
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all) {
        kb_seg_close(s);
        return -1;
    }
    atomic_store_explicit(kb_seg_flag(s, s->me), 0, memory_order_release);
    MPI_Barrier(comm); /* flags zeroed before anyone waits on them */
    return 0;
}

void kb_seg_close(kb_seg *s)
{
    if (s->win != MPI_WIN_NULL)
        MPI_Win_free(&s->win);
    s->win = MPI_WIN_NULL;
    s->data = s->slots = NULL;
}

/* kb_seg_wait; with progress != MPI_COMM_NULL a long wait also calls
 * MPI_Iprobe on it (drives MPI's progress engine) */
static void seg_wait(const kb_seg *s, int r, uint64_t v, MPI_Comm progress)
{
    _Atomic uint64_t *f = kb_seg_flag(s, r);
    unsigned spins = 0;
    while (atomic_load_explicit(f, memory_order_acquire) < v) {
        spins++;
        if (progress != MPI_COMM_NULL && spins > 256 && (spins & 63) == 0) {
            int flag = 0;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, progress, &flag, MPI_STATUS_IGNORE);
        }
        if (s->oversub || spins > 4096)
            sched_yield();
        else if (spins > 128)
            kp_cpu_relax();
    }
}

void kb_seg_wait(const kb_seg *s, int r, uint64_t v)
{
    seg_wait(s, r, v, MPI_COMM_NULL);
}

void kb_sync_open(MPI_Comm comm, int oversub, kb_sync *s)
{
    memset(s, 0, sizeof(*s));
    s->comm = comm;
    s->seg.win = MPI_WIN_NULL;
    const char *e = getenv("KPORT_BENCH_SYNC");
    int n, hn, want = !(e && strcmp(e, "mpi") == 0), all = 0;
    MPI_Comm host;
    MPI_Comm_size(comm, &n);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &hn);
    MPI_Comm_free(&host);
    want = want && hn == n && n > 1;
    MPI_Allreduce(&want, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all && kb_seg_open(comm, 0, oversub, &s->seg) == 0)
        s->shm = 1;
}

void kb_sync_barrier(kb_sync *s)
{
    if (!s->shm) {
        MPI_Barrier(s->comm);
        return;
    }
    kb_seg_post(&s->seg, ++s->seq);
    /* a long wait also drives MPI's progress engine: a rank may still be
     * inside the previous call, in a one-sided flush that MPICH completes
     * only while the target makes MPI calls (kport's RMA transport), and
     * MPI_Barrier, the start line before, made them */
    for (int r = 0; r < s->seg.n; r++)
        if (r != s->seg.me)
            seg_wait(&s->seg, r, s->seq, s->comm);
}

void kb_sync_close(kb_sync *s)
{
    if (s->shm)
        kb_seg_close(&s->seg);
    s->shm = 0;
}

const char *kb_sync_name(const kb_sync *s)
{
    return s->shm ? "shm flags" : "MPI_Barrier";
}
