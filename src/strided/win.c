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
 *
 * Set-up on kport's own objects. Every MPI call kport makes on its own
 * behalf runs on a private duplicate of the program's communicator with
 * MPI_ERRORS_RETURN, and kport's windows (data, pool, locks) return errors
 * too; the program's error handlers are never changed. Each step that MPI
 * may refuse (an allocation, a window) is agreed among the ranks (one
 * MPI_Allreduce), so all take the same path and none is left in a
 * collective the others skipped. A refused MPI_Win_allocate_shared (Open
 * MPI's osc/pt2pt cannot make shared windows) falls back to
 * MPI_Win_allocate, said once per process on rank 0 under KPORT_VERBOSE=1;
 * a refused MPI_Win_allocate (or pool, or lock window) makes kp_win_create
 * return KP_ERR_UNSUPPORTED naming the call and MPI's reason, with
 * everything it had made freed. (Were a window made on some ranks and
 * refused on others, MPI would already be inconsistent: kport then leaves
 * it unfreed rather than hang in a collective MPI_Win_free.)
 *
 * Sizes: kport asks MPI_Win_allocate[_shared] for the size rounded up to a
 * multiple of 16. MPICH 4.0.2's MPI_Win_allocate on one node misplaces the
 * next rank's memory by 8 bytes when a rank's size is 8 mod 16 (a plain
 * MPI self-put with sizes 40 / 32 missed rank 1's last 8 bytes and wrote
 * into rank 0's window); the bounds kport checks are the sizes asked for
 * (w->sizes), so the padding is never addressed.
 *
 * The registry. Every live kport window of the process is on one list
 * (live_head): kp_strided_progress runs the agent and the pending pack gets of
 * each, from any call on any window, so a rank waiting inside a call on
 * window A (a fence, a barrier, a full pool, a get) still unpacks what
 * others wrote into its pool of window B, and two ranks each waiting on a
 * different window never wait for each other. Only the program's thread
 * changes or walks the list (kport is called by one thread at a time;
 * helper threads serve only their own window). A window enters the list
 * when its set-up has succeeded and leaves it in kp_win_free after the
 * final barrier (no rank can write into it any more), before it is freed.
 */
#include "strided/strided.h"

#include "util/env.h"
#include "util/error.h"
#include "util/shmspace.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static kp_win live_head; /* the process's live windows (the registry above) */

static void live_add(kp_win w)
{
    w->live_prev = NULL;
    w->live_next = live_head;
    if (live_head)
        live_head->live_prev = w;
    live_head = w;
}

static void live_remove(kp_win w)
{
    if (w->live_prev)
        w->live_prev->live_next = w->live_next;
    else if (live_head == w)
        live_head = w->live_next;
    if (w->live_next)
        w->live_next->live_prev = w->live_prev;
    w->live_prev = w->live_next = NULL;
}

int kp_strided_progress(kp_win w)
{
    int rc = kp_strided_progress_win(w);
    for (kp_win o = live_head; o; o = o->live_next) {
        if (o == w)
            continue;
        int r2;
        if (o->thread_on) { /* its helper may hold it: then the helper serves it */
            if (pthread_mutex_trylock(&o->lock) != 0)
                continue;
            r2 = kp_strided_progress_win(o);
            pthread_mutex_unlock(&o->lock);
        } else {
            r2 = kp_strided_progress_win(o);
        }
        if (rc == KP_SUCCESS)
            rc = r2;
    }
    return rc;
}

/* Agree on a set-up step: every rank learns whether it failed anywhere.
 * Returns rc where it failed here, KP_ERR_UNSUPPORTED naming `what` where
 * it failed only elsewhere, KP_SUCCESS where it failed nowhere. */
static int agree(kp_win w, int rc, const char *what)
{
    int mine = rc, worst = 0;
    if (PMPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, w->comm) != MPI_SUCCESS)
        worst = KP_ERR_MPI;
    if (rc != KP_SUCCESS || worst == KP_SUCCESS)
        return rc;
    return kp_error(worst, "strided window: %s failed on another rank", what);
}

/* A window kport asked MPI for (mrc: what MPI returned here), agreed:
 * KP_SUCCESS and errors returned on it when every rank has it, else
 * KP_ERR_UNSUPPORTED with MPI's reason in `reason` and *win NULL. A window
 * MPI made here but refused elsewhere is left unfreed (see the head of
 * this file). */
static int agree_window(kp_win w, int mrc, MPI_Win *win, char *reason)
{
    int made = mrc == MPI_SUCCESS, all = 0;
    if (PMPI_Allreduce(&made, &all, 1, MPI_INT, MPI_MIN, w->comm) != MPI_SUCCESS)
        all = 0;
    if (all) {
        MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
        return KP_SUCCESS;
    }
    if (made)
        snprintf(reason, MPI_MAX_ERROR_STRING, "refused on another rank (the window made here is left unfreed)");
    else
        kp_mpi_reason(mrc, reason);
    *win = MPI_WIN_NULL;
    return KP_ERR_UNSUPPORTED;
}

static void win_release(kp_win w)
{
    if (!w)
        return;
    if (w->pool != MPI_WIN_NULL) {
        if (w->locked)
            MPI_Win_unlock_all(w->pool);
        MPI_Win_free(&w->pool);
    }
    if (w->alock_win != MPI_WIN_NULL)
        MPI_Win_free(&w->alock_win);
    free(w->alock);
    if (w->win != MPI_WIN_NULL) {
        if (w->locked)
            MPI_Win_unlock_all(w->win);
        if (w->own_win)
            MPI_Win_free(&w->win);
    }
    kp_datatype_cache_free(w);
    if (w->comm != MPI_COMM_NULL)
        MPI_Comm_free(&w->comm);
    free(w->pend);
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
    PMPI_Allreduce(mine, lo, 3, MPI_INT, MPI_MIN, w->comm);
    PMPI_Allreduce(mine, hi, 3, MPI_INT, MPI_MAX, w->comm);
    if (lo[0] != hi[0] || lo[1] != hi[1] || lo[2] != hi[2])
        return kp_error(KP_ERR_PARAM, "KPORT_STRIDED_SLOTS / KPORT_STRIDED_SLOT_KB / KPORT_STRIDED_SHARED differ "
                                      "between ranks");
    w->sizes = malloc(sizeof(MPI_Aint) * (size_t)w->P);
    w->pack_pending = calloc((size_t)w->P, sizeof(int64_t));
    size_t bb = KP_SLOT_HDR + (size_t)w->slot_bytes;
    w->bounce[0] = malloc(bb);
    w->bounce[1] = malloc(bb);
    if (!w->sizes || !w->pack_pending || !w->bounce[0] || !w->bounce[1])
        rc = kp_error(KP_ERR_NOMEM, "strided window: out of memory");
    if ((rc = agree(w, rc, "allocating the window's state")) != KP_SUCCESS)
        return rc;
    PMPI_Allgather(&mysize, 1, MPI_AINT, w->sizes, 1, MPI_AINT, w->comm);
    MPI_Aint pool_bytes = w->ctrl_bytes + (MPI_Aint)slots * (MPI_Aint)bb;
    char why[MPI_MAX_ERROR_STRING];
    int mrc = MPI_Win_allocate(pool_bytes, 1, MPI_INFO_NULL, w->comm, &w->pool_base, &w->pool);
    if (agree_window(w, mrc, &w->pool, why) != KP_SUCCESS)
        return kp_error(KP_ERR_UNSUPPORTED, "strided window: MPI refused MPI_Win_allocate of the slot pool (%lld bytes): %s",
                        (long long)pool_bytes, why);
    int64_t *ctrl = (int64_t *)(void *)w->pool_base;
    ctrl[0] = 0;
    for (int s = 0; s < slots; s++) {
        ctrl[kp_ctrl_turn(s) / 8] = s;
        ctrl[kp_ctrl_ready(s) / 8] = 0;
    }
    PMPI_Barrier(w->comm);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, w->pool);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win);
    w->locked = 1;
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
        /* the same on every rank (the flavor and model are the window's) */
        if (f1 && f2 && *flavor == MPI_WIN_FLAVOR_SHARED && *model == MPI_WIN_UNIFIED && shenv == 1) {
            w->peer = malloc(sizeof(char *) * (size_t)w->P);
            if (!w->peer)
                rc = kp_error(KP_ERR_NOMEM, "strided window: out of memory");
            for (int r = 0; r < w->P && rc == KP_SUCCESS; r++) {
                void *b;
                rc = shared_base(w->win, r, "", &b);
                w->peer[r] = b;
            }
            if ((rc = agree(w, rc, "mapping the shared window")) != KP_SUCCESS)
                return rc;
            w->loadstore = 1;
        }
    }
    if (w->loadstore) { /* the accumulate locks: one int per rank, a cache line each */
        void *mine = NULL;
        w->alock = calloc((size_t)w->P, sizeof(int *));
        if (!w->alock)
            rc = kp_error(KP_ERR_NOMEM, "strided window: out of memory");
        if ((rc = agree(w, rc, "allocating the window's state")) != KP_SUCCESS)
            return rc;
        mrc = MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, w->comm, &mine, &w->alock_win);
        if (agree_window(w, mrc, &w->alock_win, why) != KP_SUCCESS)
            return kp_error(KP_ERR_UNSUPPORTED,
                            "strided window: MPI refused MPI_Win_allocate_shared of the accumulate locks: %s", why);
        __atomic_store_n((int *)mine, 0, __ATOMIC_RELEASE);
        for (int r = 0; r < w->P && rc == KP_SUCCESS; r++) {
            void *b;
            rc = shared_base(w->alock_win, r, " of the locks", &b);
            w->alock[r] = b;
        }
        if ((rc = agree(w, rc, "mapping the accumulate locks")) != KP_SUCCESS)
            return rc;
    }
    MPI_Win_sync(w->pool);
    PMPI_Barrier(w->comm);
    kp_strided_params_default(w);
    const char *pf = getenv("KPORT_PARAMS");
    if (pf && *pf)
        rc = kp_strided_params_load(w, pf);
    return agree(w, rc, "reading KPORT_PARAMS");
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
    w->comm = MPI_COMM_NULL;
    pthread_mutex_init(&w->lock, NULL);
    /* kport's own communicator: its errors are returned, the program's
     * handlers stay as they are (collective, as both callers are) */
    if (MPI_Comm_dup(comm, &w->comm) != MPI_SUCCESS) {
        w->comm = MPI_COMM_NULL;
        win_release(w);
        return kp_error(KP_ERR_MPI, "strided window: MPI_Comm_dup failed");
    }
    MPI_Comm_set_errhandler(w->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(w->comm, &w->rank);
    MPI_Comm_size(w->comm, &w->P);
    MPI_Comm node;
    int rc = KP_SUCCESS;
    if (MPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &w->nlocal);
        MPI_Comm_free(&node);
    } else {
        rc = kp_error(KP_ERR_MPI, "strided window: MPI_Comm_split_type failed");
    }
    if ((rc = agree(w, rc, "MPI_Comm_split_type")) != KP_SUCCESS) {
        win_release(w);
        return rc;
    }
    *out = w;
    return KP_SUCCESS;
}

/* KPORT_VERBOSE=1, read as the collectives read it (set and not "0") */
static int verbose(void)
{
    const char *v = getenv("KPORT_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

int kp_win_create(MPI_Aint bytes, MPI_Comm comm, void **base, kp_win *win)
{
    static int fallback_said; /* the fallback to MPI_Win_allocate, said once per process */
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
    PMPI_Allreduce(&want, &shared, 1, MPI_INT, MPI_MIN, w->comm);
    if (shared < 0) {
        win_release(w);
        return kp_error(KP_ERR_PARAM, "KPORT_STRIDED_SHARED must be 0 or 1 (on some rank it is not)");
    }
    /* a multiple of 16 (the head of this file: MPICH 4.0.2, sizes 8 mod 16) */
    const MPI_Aint alloc = bytes > 0 ? (bytes + 15) / 16 * 16 : 0;
    char why_shared[MPI_MAX_ERROR_STRING] = "", why[MPI_MAX_ERROR_STRING] = "";
    /* room in /dev/shm for this machine's windows, agreed before MPI is
     * asked (util/shmspace.h: MPICH 4.0.2 grants a window that does not
     * fit and the first store into it is a SIGBUS) */
    int room = kp_shm_space_ok((int64_t)alloc * w->nlocal), all_room = 0;
    PMPI_Allreduce(&room, &all_room, 1, MPI_INT, MPI_MIN, w->comm);
    if (!all_room) {
        win_release(w);
        return kp_error(KP_ERR_UNSUPPORTED, "kp_win_create: %d windows of %lld bytes do not fit in /dev/shm", w->nlocal,
                        (long long)bytes);
    }
    if (shared) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
        int mrc = MPI_Win_allocate_shared(alloc, 1, info, w->comm, &w->base, &w->win);
        MPI_Info_free(&info);
        if (agree_window(w, mrc, &w->win, why_shared) != KP_SUCCESS) {
            shared = 0;
            if (w->rank == 0 && verbose() && !fallback_said) {
                fprintf(stderr,
                        "kport: kp_win_create: MPI refused MPI_Win_allocate_shared (%s); strided windows use "
                        "MPI_Win_allocate (direct puts and gets by MPI operations)\n",
                        why_shared);
                fflush(stderr);
            }
            fallback_said = 1;
        } else {
            shared = 1;
        }
        if (!shared) {
            int mrc2 = MPI_Win_allocate(alloc, 1, MPI_INFO_NULL, w->comm, &w->base, &w->win);
            if (agree_window(w, mrc2, &w->win, why) != KP_SUCCESS) {
                win_release(w);
                return kp_error(KP_ERR_UNSUPPORTED,
                                "kp_win_create: MPI refused MPI_Win_allocate_shared (%s) and MPI_Win_allocate "
                                "(%lld bytes: %s)",
                                why_shared, (long long)bytes, why);
            }
        }
    } else {
        int mrc = MPI_Win_allocate(alloc, 1, MPI_INFO_NULL, w->comm, &w->base, &w->win);
        if (agree_window(w, mrc, &w->win, why) != KP_SUCCESS) {
            win_release(w);
            return kp_error(KP_ERR_UNSUPPORTED, "kp_win_create: MPI refused MPI_Win_allocate (%lld bytes): %s",
                            (long long)bytes, why);
        }
    }
    rc = win_setup(w, bytes);
    if (rc) {
        win_release(w);
        return rc;
    }
    live_add(w);
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
    kp_win w;
    int rc = win_new(comm, &w);
    if (rc)
        return rc;
    int anybad = 0;
    PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, w->comm);
    if (anybad) {
        win_release(w);
        return kp_error(KP_ERR_UNSUPPORTED, anybad == 1 ? "kp_win_from_mpi: dynamic windows are not supported"
                                                         : "kp_win_from_mpi: the window's disp_unit must be 1 on "
                                                           "every rank");
    }
    w->win = mwin;
    w->base = base;
    rc = win_setup(w, *size);
    if (rc) {
        win_release(w);
        return rc;
    }
    live_add(w);
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
        /* blocking operations were flushed when they completed; nonblocking
         * MPI ones are pending until a flush (api.c) */
        if (rc == KP_SUCCESS && w->npend > 0 && kp_pend_overlaps(w, r, KP_PD_MPI, 0, INT64_MAX))
            rc = kp_data_flush(w, r, "kp_win_fence");
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
    int rc = kp_strided_progress(win);
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
    int rc = kp_strided_progress(win);
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
            int r2 = kp_strided_progress(win);
            if (rc == KP_SUCCESS)
                rc = r2;
            kp_strided_idle(win, &spins);
        }
    }
    MPI_Win_sync(win->win);
    kp_win_leave(win);
    return rc;
}

void kp_strided_idle(kp_win w, unsigned *spins)
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
            kp_strided_idle(w, &spins);
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
    int rc = kp_strided_progress(win);
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
    live_remove(w); /* after the barrier nothing can arrive in its pool */
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
