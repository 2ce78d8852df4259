/*
 * kport windows for strided one-sided transfers: the data window (kport's
 * own, or the user's), the slot pool of the pack
 * method (a window of its own), passive-target epochs (MPI_Win_lock_all
 * for the window's life), fences, barriers and the helper thread.
 *
 * The pool (per rank): control words, then nslots slots.
 *   offset 0            reserve: the next free ticket (origins fetch-and-add)
 *   64 + 16 s           turn[s]: the ticket allowed to write slot s next
 *                       (initially s; set to t + nslots when ticket t is done)
 *   64 + 16 s + 8       ready[s]: t + 1 once ticket t's header and data are
 *                       in slot s; (t + 1) | KP_READY_REPLY once the agent
 *                       has packed a get's reply into it
 *   ctrl_bytes + s * (KP_SLOT_HDR + slot_bytes)   slot s: header, data
 * Control words are changed only with MPI atomics (MPI_Fetch_and_op on
 * MPI_INT64_T) and flushed; see pack.c for the protocol.
 *
 * kport's data window: MPI_Win_allocate_shared (info alloc_shared_noncontig)
 * when every rank of the communicator is on one machine, else
 * MPI_Win_allocate; KPORT_STRIDED_SHARED=0 keeps MPI_Win_allocate. On a
 * shared window in the unified memory model (kport's, or the program's own
 * from MPI_Win_allocate_shared) every rank maps every other rank's memory
 * (MPI_Win_shared_query) and the direct method's puts, gets and
 * accumulates copy or add by load/store (direct.c); everything else goes
 * through MPI operations as on any window. Such a window also gets a tiny
 * shared window of accumulate locks, one int per rank (kp_acc_lock):
 * load/store accumulates are atomic with each other only under a lock, and
 * the datatype method's and the agent's accumulates take the same lock, so
 * origins choosing different methods stay element-wise atomic.
 */
#include "rma/rma.h"

#include "core/core.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void win_release(kp_win w)
{
    if (!w)
        return;
    if (w->pool != MPI_WIN_NULL) {
        MPI_Win_unlock_all(w->pool);
        MPI_Win_free(&w->pool);
    }
    if (w->alock_win != MPI_WIN_NULL)
        MPI_Win_free(&w->alock_win);
    free(w->alock);
    if (w->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(w->win);
        if (w->own_win)
            MPI_Win_free(&w->win);
    }
    kp_datatype_cache_free(w);
    free(w->peer);
    free(w->sizes);
    free(w->bounce[0]);
    free(w->bounce[1]);
    free(w->pack_pending);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

/* rank r's memory of a shared window, mapped here (`what` names the window
 * in the message) */
static int shared_base(MPI_Win win, int r, const char *what, void **base)
{
    MPI_Aint sz = 0;
    int unit = 0;
    *base = NULL;
    if (MPI_Win_shared_query(win, r, &sz, &unit, base) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "strided window: MPI_Win_shared_query(%d)%s failed", r, what);
    return KP_SUCCESS;
}

/* everything but the data window, which the caller set */
static int win_setup(kp_win w, MPI_Aint mysize)
{
    int rc = KP_SUCCESS;
    int slots = kp_env_int("KPORT_STRIDED_SLOTS", 8, 1, 1 << 16);
    int slot_kb = kp_env_int("KPORT_STRIDED_SLOT_KB", 64, 0, 1 << 20);
    int shenv = kp_env_int("KPORT_STRIDED_SHARED", 1, 0, 1);
    if (slots < 0 || slot_kb < 0)
        return kp_error(KP_ERR_PARAM, "KPORT_STRIDED_SLOTS must be 1..65536 and KPORT_STRIDED_SLOT_KB 0..1048576 "
                                      "(0: 64-byte slots, for tests)");
    if (shenv < 0)
        return kp_error(KP_ERR_PARAM, "KPORT_STRIDED_SHARED=\"%s\": expected 0 or 1",
                        getenv("KPORT_STRIDED_SHARED"));
    w->nslots = slots;
    w->slot_bytes = slot_kb ? (int64_t)slot_kb * 1024 : 64;
    w->ctrl_bytes = (64 + (MPI_Aint)slots * 16 + 63) / 64 * 64;
    /* the same on every rank, or the protocol breaks */
    int mine[3] = {slots, slot_kb, shenv}, lo[3], hi[3];
    MPI_Allreduce(mine, lo, 3, MPI_INT, MPI_MIN, w->comm);
    MPI_Allreduce(mine, hi, 3, MPI_INT, MPI_MAX, w->comm);
    if (lo[0] != hi[0] || lo[1] != hi[1] || lo[2] != hi[2])
        return kp_error(KP_ERR_PARAM, "KPORT_STRIDED_SLOTS / KPORT_STRIDED_SLOT_KB / KPORT_STRIDED_SHARED differ "
                                      "between ranks");
    w->sizes = malloc(sizeof(MPI_Aint) * (size_t)w->P);
    w->pack_pending = calloc((size_t)w->P, sizeof(int64_t));
    size_t bb = KP_SLOT_HDR + (size_t)w->slot_bytes;
    w->bounce[0] = malloc(bb);
    w->bounce[1] = malloc(bb);
    if (!w->sizes || !w->pack_pending || !w->bounce[0] || !w->bounce[1])
        return kp_error(KP_ERR_NOMEM, "strided window: out of memory");
    MPI_Allgather(&mysize, 1, MPI_AINT, w->sizes, 1, MPI_AINT, w->comm);
    MPI_Aint pool_bytes = w->ctrl_bytes + (MPI_Aint)slots * (MPI_Aint)bb;
    if (MPI_Win_allocate(pool_bytes, 1, MPI_INFO_NULL, w->comm, &w->pool_base, &w->pool) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "strided window: MPI_Win_allocate of the slot pool (%lld bytes) failed",
                        (long long)pool_bytes);
    int64_t *ctrl = (int64_t *)(void *)w->pool_base;
    ctrl[0] = 0;
    for (int s = 0; s < slots; s++) {
        ctrl[kp_ctrl_turn(s) / 8] = s;
        ctrl[kp_ctrl_ready(s) / 8] = 0;
    }
    MPI_Barrier(w->comm);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, w->pool);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win);
    w->cnt.locks += 2; /* both epochs stay open for the window's life */
    {
        int *model = NULL, flag = 0;
        MPI_Win_get_attr(w->pool, MPI_WIN_MODEL, &model, &flag);
        w->pool_unified = flag && model && *model == MPI_WIN_UNIFIED;
    }
    {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        w->oversub = ncpu > 0 && w->nlocal > ncpu;
    }
    {
        /* load/store on a shared window in the unified model */
        int *flavor = NULL, *model = NULL, f1 = 0, f2 = 0;
        MPI_Win_get_attr(w->win, MPI_WIN_CREATE_FLAVOR, &flavor, &f1);
        MPI_Win_get_attr(w->win, MPI_WIN_MODEL, &model, &f2);
        if (f1 && f2 && *flavor == MPI_WIN_FLAVOR_SHARED && *model == MPI_WIN_UNIFIED && shenv == 1) {
            w->peer = malloc(sizeof(char *) * (size_t)w->P);
            if (!w->peer)
                return kp_error(KP_ERR_NOMEM, "strided window: out of memory");
            for (int r = 0; r < w->P; r++) {
                void *b;
                if ((rc = shared_base(w->win, r, "", &b)) != KP_SUCCESS)
                    return rc;
                w->peer[r] = b;
            }
            w->loadstore = 1;
        }
    }
    if (w->loadstore) { /* the accumulate locks: one int per rank, a cache line each */
        void *mine = NULL;
        w->alock = calloc((size_t)w->P, sizeof(int *));
        if (!w->alock)
            return kp_error(KP_ERR_NOMEM, "strided window: out of memory");
        if (MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, w->comm, &mine, &w->alock_win) != MPI_SUCCESS) {
            w->alock_win = MPI_WIN_NULL;
            return kp_error(KP_ERR_MPI, "strided window: MPI_Win_allocate_shared of the accumulate locks failed");
        }
        __atomic_store_n((int *)mine, 0, __ATOMIC_RELEASE);
        for (int r = 0; r < w->P; r++) {
            void *b;
            if ((rc = shared_base(w->alock_win, r, " of the locks", &b)) != KP_SUCCESS)
                return rc;
            w->alock[r] = b;
        }
    }
    MPI_Win_sync(w->pool);
    MPI_Barrier(w->comm);
    kp_rma_params_default(w);
    const char *pf = getenv("KPORT_PARAMS");
    if (pf && *pf)
        rc = kp_rma_params_load(w, pf);
    return rc;
}

static int win_new(MPI_Comm comm, kp_win *out)
{
    *out = NULL;
    if (comm == MPI_COMM_NULL)
        return kp_error(KP_ERR_COMM, "strided window: communicator is MPI_COMM_NULL");
    int inter = 0;
    MPI_Comm_test_inter(comm, &inter);
    if (inter)
        return kp_error(KP_ERR_COMM, "strided window: inter-communicators are not supported");
    kp_win w = calloc(1, sizeof(*w));
    if (!w)
        return kp_error(KP_ERR_NOMEM, "strided window: out of memory");
    w->win = MPI_WIN_NULL;
    w->pool = MPI_WIN_NULL;
    w->alock_win = MPI_WIN_NULL;
    for (int e = 0; e < KP_DT_CACHE; e++)
        w->dtc[e].type = MPI_DATATYPE_NULL;
    w->comm = comm;
    pthread_mutex_init(&w->lock, NULL);
    MPI_Comm_rank(comm, &w->rank);
    MPI_Comm_size(comm, &w->P);
    { /* collective, as both callers are */
        MPI_Comm node;
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &w->nlocal);
        MPI_Comm_free(&node);
    }
    *out = w;
    return KP_SUCCESS;
}

int kp_win_create(MPI_Aint bytes, MPI_Comm comm, void **base, kp_win *win)
{
    if (!win)
        return kp_error(KP_ERR_ARG, "kp_win_create: win is NULL");
    *win = NULL;
    if (bytes < 0)
        return kp_error(KP_ERR_COUNT, "kp_win_create: bytes = %lld is negative", (long long)bytes);
    kp_win w;
    int rc = win_new(comm, &w);
    if (rc)
        return rc;
    w->own_win = 1;
    /* shared when every rank is on this machine and KPORT_STRIDED_SHARED is
     * not 0 on any rank (all must call the same allocation) */
    int want = kp_env_int("KPORT_STRIDED_SHARED", 1, 0, 1);
    if (want > 0)
        want = w->nlocal == w->P;
    int shared = 0;
    MPI_Allreduce(&want, &shared, 1, MPI_INT, MPI_MIN, comm);
    if (shared < 0) {
        win_release(w);
        return kp_error(KP_ERR_PARAM, "KPORT_STRIDED_SHARED must be 0 or 1 (on some rank it is not)");
    }
    int mrc;
    if (shared) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        mrc = MPI_Win_allocate_shared(bytes, 1, info, comm, &w->base, &w->win);
        MPI_Info_free(&info);
    } else {
        mrc = MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &w->base, &w->win);
    }
    if (mrc != MPI_SUCCESS) {
        w->win = MPI_WIN_NULL;
        win_release(w);
        return kp_error(KP_ERR_MPI, "kp_win_create: %s(%lld bytes) failed",
                        shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate", (long long)bytes);
    }
    rc = win_setup(w, bytes);
    if (rc) {
        win_release(w);
        return rc;
    }
    if (base)
        *base = w->base;
    *win = w;
    return KP_SUCCESS;
}

int kp_win_from_mpi(MPI_Win mwin, MPI_Comm comm, kp_win *win)
{
    if (!win)
        return kp_error(KP_ERR_ARG, "kp_win_from_mpi: win is NULL");
    *win = NULL;
    if (mwin == MPI_WIN_NULL)
        return kp_error(KP_ERR_ARG, "kp_win_from_mpi: MPI_WIN_NULL");
    int *flavor = NULL, *unit = NULL, flag1 = 0, flag2 = 0, flag3 = 0;
    MPI_Aint *size = NULL;
    void *base = NULL;
    MPI_Win_get_attr(mwin, MPI_WIN_CREATE_FLAVOR, &flavor, &flag1);
    MPI_Win_get_attr(mwin, MPI_WIN_DISP_UNIT, &unit, &flag2);
    MPI_Win_get_attr(mwin, MPI_WIN_SIZE, &size, &flag3);
    MPI_Win_get_attr(mwin, MPI_WIN_BASE, &base, &flag3);
    int bad = 0;
    if (flag1 && *flavor == MPI_WIN_FLAVOR_DYNAMIC)
        bad = 1;
    else if (!flag2 || *unit != 1)
        bad = 2;
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (anybad == 1)
        return kp_error(KP_ERR_UNSUPPORTED, "kp_win_from_mpi: dynamic windows are not supported");
    if (anybad == 2)
        return kp_error(KP_ERR_UNSUPPORTED, "kp_win_from_mpi: the window's disp_unit must be 1 on every rank");
    kp_win w;
    int rc = win_new(comm, &w);
    if (rc)
        return rc;
    w->win = mwin;
    w->base = base;
    rc = win_setup(w, *size);
    if (rc) {
        win_release(w);
        return rc;
    }
    *win = w;
    return KP_SUCCESS;
}

MPI_Win kp_win_mpi(kp_win win)
{
    return win ? win->win : MPI_WIN_NULL;
}

/* The lock only matters while the helper thread runs: the program's
 * thread is the only one to call kport otherwise (include/kport.h,
 * "Threads"), and only it starts and stops the helper, outside any call,
 * so thread_on cannot change between its enter and its leave (the
 * mutex pair is 110 of a small put's 1990 instructions) */
void kp_win_enter(kp_win w)
{
    if (w->thread_on)
        pthread_mutex_lock(&w->lock);
}

void kp_win_leave(kp_win w)
{
    if (w->thread_on)
        pthread_mutex_unlock(&w->lock);
}

int kp_pool_read(kp_win w, int r, MPI_Aint disp, int64_t *v)
{
    int64_t dummy = 0;
    w->cnt.pool_ops++;
    w->cnt.pool_flushes++;
    if (MPI_Fetch_and_op(&dummy, v, MPI_INT64_T, r, disp, MPI_NO_OP, w->pool) != MPI_SUCCESS ||
        MPI_Win_flush(r, w->pool) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "strided: reading a slot control word at rank %d failed", r);
    return KP_SUCCESS;
}

int kp_pool_write(kp_win w, int r, MPI_Aint disp, int64_t v)
{
    int64_t old;
    w->cnt.pool_ops++;
    w->cnt.pool_flushes++;
    if (MPI_Fetch_and_op(&v, &old, MPI_INT64_T, r, disp, MPI_REPLACE, w->pool) != MPI_SUCCESS ||
        MPI_Win_flush(r, w->pool) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "strided: writing a slot control word at rank %d failed", r);
    return KP_SUCCESS;
}

int kp_pool_fadd(kp_win w, int r, MPI_Aint disp, int64_t add, int64_t *old)
{
    w->cnt.pool_ops++;
    w->cnt.pool_flushes++;
    if (MPI_Fetch_and_op(&add, old, MPI_INT64_T, r, disp, MPI_SUM, w->pool) != MPI_SUCCESS ||
        MPI_Win_flush(r, w->pool) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "strided: fetch-and-add at rank %d failed", r);
    return KP_SUCCESS;
}

static int fence_locked(kp_win w, int target)
{
    int rc = KP_SUCCESS;
    int lo = target < 0 ? 0 : target, hi = target < 0 ? w->P : target + 1;
    for (int r = lo; r < hi && rc == KP_SUCCESS; r++) {
        rc = kp_pack_fence(w, r);
        /* blocking operations were flushed when they completed */
        if (rc == KP_SUCCESS && w->outstanding > 0) {
            w->cnt.data_flushes++;
            if (MPI_Win_flush(r, w->win) != MPI_SUCCESS)
                rc = kp_error(KP_ERR_MPI, "kp_win_fence: MPI_Win_flush(%d) failed", r);
        }
    }
    return rc;
}

int kp_win_fence(kp_win win, int target)
{
    if (!win)
        return kp_error(KP_ERR_ARG, "kp_win_fence: win is NULL");
    if (target < -1 || target >= win->P)
        return kp_error(KP_ERR_ARG, "kp_win_fence: target %d is not -1 or a rank of the window's %d", target,
                        win->P);
    kp_win_enter(win);
    int rc = kp_rma_progress(win);
    if (rc == KP_SUCCESS)
        rc = fence_locked(win, target);
    kp_win_leave(win);
    return rc;
}

int kp_win_barrier(kp_win win)
{
    if (!win)
        return kp_error(KP_ERR_ARG, "kp_win_barrier: win is NULL");
    kp_win_enter(win);
    MPI_Win_sync(win->win); /* the program's own stores before the barrier */
    int rc = kp_rma_progress(win);
    if (rc == KP_SUCCESS)
        rc = fence_locked(win, -1);
    /* every rank's writes are unpacked once every rank has fenced; keep
     * the agent running meanwhile, others may wait for this rank's */
    MPI_Request br;
    MPI_Ibarrier(win->comm, &br);
    int done = 0;
    unsigned spins = 0;
    while (!done) {
        MPI_Test(&br, &done, MPI_STATUS_IGNORE);
        if (!done) {
            int r2 = kp_rma_progress(win);
            if (rc == KP_SUCCESS)
                rc = r2;
            kp_rma_idle(win, &spins);
        }
    }
    MPI_Win_sync(win->win);
    kp_win_leave(win);
    return rc;
}

void kp_rma_idle(kp_win w, unsigned *spins)
{
    w->cnt.polls++;
    if (w->oversub) {
        w->cnt.yields++;
        sched_yield(); /* more ranks than cores: let the one we wait for run */
    } else if (++*spins > 64) {
        /* a CPU of our own: keep it (a yield on a loaded machine costs a
         * time slice, milliseconds), but pause between polls */
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
}

/* A test-and-test-and-set lock on an int in shared memory. Holders never
 * wait for another rank's kport call: a holder runs a local loop, or MPI
 * operations to one target and their flush, which the waiters' MPI
 * progress (MPI_Iprobe every 64 polls) lets complete even where the MPI
 * library needs the target's help. */
void kp_acc_lock(kp_win w, int r)
{
    int *l = w->alock[r];
    unsigned spins = 0;
    w->cnt.acc_locks++;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
            kp_rma_idle(w, &spins);
            if ((w->cnt.polls & 63) == 0) {
                int flag = 0;
                MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, w->comm, &flag, MPI_STATUS_IGNORE);
            }
        }
    }
}

void kp_acc_unlock(kp_win w, int r)
{
    __atomic_store_n(w->alock[r], 0, __ATOMIC_RELEASE);
}

int kp_strided_counters_get(kp_win win, kp_strided_counters *out)
{
    if (!win || !out)
        return kp_error(KP_ERR_ARG, "kp_strided_counters_get: win or out is NULL");
    kp_win_enter(win);
    *out = win->cnt;
    kp_win_leave(win);
    return KP_SUCCESS;
}

int kp_strided_counters_reset(kp_win win)
{
    if (!win)
        return kp_error(KP_ERR_ARG, "kp_strided_counters_reset: win is NULL");
    kp_win_enter(win);
    memset(&win->cnt, 0, sizeof(win->cnt));
    kp_win_leave(win);
    return KP_SUCCESS;
}

int kp_win_progress(kp_win win)
{
    if (!win)
        return kp_error(KP_ERR_ARG, "kp_win_progress: win is NULL");
    kp_win_enter(win);
    int rc = kp_rma_progress(win);
    kp_win_leave(win);
    return rc;
}

static void *helper(void *arg)
{
    kp_win w = arg;
    struct timespec ts = {0, 20000}; /* 20 us between rounds */
    for (;;) {
        pthread_mutex_lock(&w->lock); /* always: thread_on is set before the thread starts */
        int stop = w->thread_stop;
        if (!stop)
            kp_agent_run(w);
        pthread_mutex_unlock(&w->lock);
        if (stop)
            break;
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int kp_win_progress_thread(kp_win win, int on)
{
    if (!win)
        return kp_error(KP_ERR_ARG, "kp_win_progress_thread: win is NULL");
    if (on && !win->thread_on) {
        int level = 0;
        MPI_Query_thread(&level);
        if (level != MPI_THREAD_MULTIPLE)
            return kp_error(KP_ERR_UNSUPPORTED,
                            "kp_win_progress_thread: needs MPI_THREAD_MULTIPLE (MPI_Init_thread)");
        win->thread_stop = 0;
        win->thread_on = 1; /* before the helper exists: every call from now on locks */
        if (pthread_create(&win->thread, NULL, helper, win) != 0) {
            win->thread_on = 0;
            return kp_error(KP_ERR_NOMEM, "kp_win_progress_thread: pthread_create failed");
        }
    } else if (!on && win->thread_on) {
        pthread_mutex_lock(&win->lock);
        win->thread_stop = 1;
        pthread_mutex_unlock(&win->lock);
        pthread_join(win->thread, NULL);
        win->thread_on = 0; /* the helper has ended: no lock needed any more */
    }
    return KP_SUCCESS;
}

int kp_win_free(kp_win *win)
{
    if (!win || !*win)
        return kp_error(KP_ERR_ARG, "kp_win_free: win is NULL");
    kp_win w = *win;
    kp_win_progress_thread(w, 0);
    int rc = kp_win_barrier(w);
    while (w->reqs) { /* requests the program never completed */
        struct kp_request_s *r = w->reqs;
        w->reqs = r->next;
        free(r->buf);
        free(r);
    }
    win_release(w);
    *win = NULL;
    return rc;
}
