/*
 * The one-sided transport's windows (onesided.c's header describes the
 * transport): their flavour, creation and agreement, the attach path's
 * dynamic windows and its probe, and their release. Collective over the
 * private duplicate.
 */
#define _GNU_SOURCE
#include "exec/onesided_int.h"
#include "util/env.h"
#include "util/error.h"
#include "util/shmspace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long kp_osc_attach_calls, kp_osc_detach_calls;

void kp_rma_attach_stats(long *attaches, long *detaches)
{
    *attaches = kp_osc_attach_calls;
    *detaches = kp_osc_detach_calls;
}

static int live_windows;

int kp_rma_live_windows(void)
{
    return live_windows;
}

static void link_free(rma_link *L)
{
    if (!L)
        return;
    for (int j = 0; j < L->rails; j++)
        if (L->win[j] != MPI_WIN_NULL) {
            MPI_Win_unlock_all(L->win[j]);
            MPI_Win_free(&L->win[j]);
            live_windows--;
        }
    for (int j = 0; j < L->rails; j++) {
        if (L->dyn && L->att)
            for (int e = 0; e < KP_RMA_ATT; e++)
                if (L->att[e].len) {
                    MPI_Win_detach(L->dwin[j], L->att[e].lo);
                    kp_osc_detach_calls += j == 0;
                }
        if (L->dwin[j] != MPI_WIN_NULL) {
            MPI_Win_unlock_all(L->dwin[j]);
            MPI_Win_free(&L->dwin[j]);
            live_windows--;
        }
    }
    free(L->att);
    free(L->dsent);
    free(L->sent);
    free(L->note);
    free(L->flags);
    free(L->rails_used);
    free(L);
}

void kp_rma_release(kp_comm *c)
{
    kp_rma *R = c->rma;
    if (!R)
        return;
    int fin = 0;
    MPI_Finalized(&fin);
    for (int r = 0; r <= KP_RAILS_MAX; r++)
        if (!fin)
            link_free(R->link[r]);
    free(R->msgs);
    free(R);
    c->rma = NULL;
}

/* Make L's rails' windows of `bytes` each, of L's flavour. R->comm (kport's
 * private duplicate) returns errors: a window MPI will not make (Open MPI's
 * osc/pt2pt makes no shared window, no component makes one over TCP) comes
 * back here, and every rank learns it in an agreement per rail, which also
 * keeps anyone from notifying before every rank has zeroed its counters.
 * On a refusal R->refused and R->why are set and the rails every rank made
 * stay in L for link_free (collective); a window only some ranks made
 * cannot be freed collectively and is dropped. */
static int link_windows(kp_rma *R, rma_link *L, MPI_Aint bytes)
{
    int rc = KP_SUCCESS;
    const int shared = L->shared, rails = L->rails;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ops", "same_op_no_op");
    if (shared)
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    for (int j = 0; j < rails && !rc; j++) {
        /* room in /dev/shm for this machine's windows, agreed before MPI
         * is asked (util/shmspace.h: neither MPI refuses a full one cleanly) */
        int room = kp_shm_space_ok((int64_t)bytes * L->nlocal);
        if (PMPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS || !room) {
            rc = kp_error(KP_ERR_UNSUPPORTED, "transport=rma: %d windows of %lld bytes do not fit in /dev/shm",
                          L->nlocal, (long long)bytes);
            break;
        }
        const int mrc = shared ? MPI_Win_allocate_shared(bytes, 1, info, R->comm, &L->base[j], &L->win[j])
                               : MPI_Win_allocate(bytes, 1, info, R->comm, &L->base[j], &L->win[j]);
        if (mrc != MPI_SUCCESS) {
            L->win[j] = MPI_WIN_NULL;
            char why[MPI_MAX_ERROR_STRING];
            rc = kp_error(KP_ERR_UNSUPPORTED, "transport=rma: %s of %lld bytes (rail %d of %d) failed: %s",
                          shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate", (long long)bytes, j, rails,
                          kp_mpi_reason(mrc, why));
        } else {
            live_windows++;
            MPI_Win_set_errhandler(L->win[j], MPI_ERRORS_RETURN);
            memset(L->base[j], 0, (size_t)L->ctrl);
            MPI_Win_lock_all(MPI_MODE_NOCHECK, L->win[j]);
        }
        int ok = rc == KP_SUCCESS, all = 0;
        if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS)
            all = 0;
        if (!all && rc == KP_SUCCESS) { /* refused on another rank only */
            L->win[j] = MPI_WIN_NULL;
            live_windows--;
            rc = kp_error(KP_ERR_UNSUPPORTED, "transport=rma: MPI refused the windows on another rank");
        }
    }
    MPI_Info_free(&info);
    if (rc) { /* every rank leaves the loop with the refusal: both checks above are agreed */
        snprintf(R->why, sizeof(R->why), "%s", kp_last_error());
        R->refused = 1;
    }
    return rc;
}

static int link_create(kp_rma *R, int rails, rma_link **out)
{
    const int P = R->P;
    const int nslots = kp_env_int("KPORT_RMA_SLOTS", 4, 1, 1024);
    const int slot_kb = kp_env_int("KPORT_RMA_SLOT_KB", -1, 0, 65536);
    if (nslots < 0 || slot_kb < -1)
        return kp_error(KP_ERR_PARAM, "KPORT_RMA_SLOTS must be 1..1024 and KPORT_RMA_SLOT_KB 0..65536 "
                                      "(0: 64-byte slots, for tests)");
    int64_t S = slot_kb > 0 ? (int64_t)slot_kb * 1024 : slot_kb == 0 ? 64 : (2 << 20) / P;
    if (slot_kb < 0)
        S = S < (16 << 10) ? 16 << 10 : S > (256 << 10) ? 256 << 10 : S;
    int64_t sb = S / rails / 64 * 64;
    if (sb < 64)
        sb = 64;
    /* rma_path=auto's threshold (KiB, -1: never) */
    const char *ev = getenv("KPORT_RMA_ATTACH_KB");
    const int kb = ev && !strcmp(ev, "-1") ? -1 : kp_env_int("KPORT_RMA_ATTACH_KB", KP_RMA_ATTACH_KB_DEFAULT, 0, 1 << 20);
    /* the geometry must be the same everywhere, or the protocol breaks */
    int64_t mine[3] = {nslots, sb, kb}, lo[3], hi[3];
    if (PMPI_Allreduce(mine, lo, 3, MPI_INT64_T, MPI_MIN, R->comm) != MPI_SUCCESS ||
        PMPI_Allreduce(mine, hi, 3, MPI_INT64_T, MPI_MAX, R->comm) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "transport=rma: MPI_Allreduce of the window geometry failed");
    if (lo[2] < -1)
        return kp_error(KP_ERR_PARAM, "KPORT_RMA_ATTACH_KB must be -1 (never) or 0..1048576 (KiB)");
    if (lo[0] != hi[0] || lo[1] != hi[1] || lo[2] != hi[2])
        return kp_error(KP_ERR_PARAM,
                        "transport=rma: KPORT_RMA_SLOTS / KPORT_RMA_SLOT_KB / KPORT_RMA_ATTACH_KB differ between ranks");
    rma_link *L = calloc(1, sizeof(*L));
    if (!L)
        return kp_error(KP_ERR_NOMEM, "out of memory for transport=rma state");
    for (int j = 0; j < KP_RAILS_MAX; j++)
        L->win[j] = L->dwin[j] = MPI_WIN_NULL;
    L->P = P;
    L->attach_bytes = kb < 0 ? INT64_MAX : (int64_t)kb * 1024;
    L->rails = rails;
    L->nslots = nslots;
    L->sb = sb;
    L->ctrl = NCTRL * (MPI_Aint)P * CTRL;
    L->sent = calloc(4 * (size_t)P, sizeof(int64_t));
    L->note = calloc(4 * (size_t)P, sizeof(int64_t));
    L->flags = calloc((size_t)P, 1);
    L->rails_used = calloc((size_t)P, sizeof(unsigned));
    int rc = KP_SUCCESS;
    if (!L->sent || !L->note || !L->flags || !L->rails_used) {
        link_free(L);
        return kp_error(KP_ERR_NOMEM, "out of memory for transport=rma state");
    }
    L->credit = L->sent + P;
    L->recvd = L->sent + 2 * P;
    L->arrived = L->sent + 3 * P;
    /* a multiple of 16: MPICH 4.0.2's MPI_Win_allocate on one node places
     * the next rank's memory 8 bytes off when a size is 8 mod 16 */
    const MPI_Aint bytes = (L->ctrl + (MPI_Aint)P * nslots * (MPI_Aint)sb + 15) / 16 * 16;
    /* the window flavour: shared when every rank is on this machine (see
     * the header); the same answer everywhere, as MPI_Comm_split_type is */
    int shared = 0;
#ifdef OPEN_MPI
    const int want_shared = kp_env_int("KPORT_RMA_SHARED", 1, 0, 1);
#else
    const int want_shared = kp_env_int("KPORT_RMA_SHARED", 0, 0, 1);
#endif
    if (want_shared < 0) {
        link_free(L);
        return kp_error(KP_ERR_PARAM, "KPORT_RMA_SHARED must be 0 or 1");
    }
    {   /* collective whatever this rank's KPORT_RMA_SHARED says */
        MPI_Comm node;
        int nsize = 0;
        if (MPI_Comm_split_type(R->comm, MPI_COMM_TYPE_SHARED, R->me, MPI_INFO_NULL, &node) != MPI_SUCCESS) {
            link_free(L);
            return kp_error(KP_ERR_MPI, "transport=rma: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
        }
        MPI_Comm_size(node, &nsize);
        MPI_Comm_free(&node);
        L->nlocal = nsize;
        const int one = want_shared && nsize == P;
        if (PMPI_Allreduce(&one, &shared, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS) {
            link_free(L);
            return kp_error(KP_ERR_MPI, "transport=rma: MPI_Allreduce of the window flavour failed");
        }
    }
    L->shared = shared;
    {
        const char *nv = getenv("KPORT_RMA_NOTIFY");
        if (nv && *nv && strcmp(nv, "acc") && strcmp(nv, "auto")) {
            link_free(L);
            return kp_error(KP_ERR_PARAM, "KPORT_RMA_NOTIFY must be acc or auto");
        }
#ifdef OPEN_MPI
        int put = shared && !(nv && !strcmp(nv, "acc")), all = 0;
#else
        int put = 0, all = 0; /* MPICH moves even shared windows' puts in its progress: never seen by polling */
#endif
        if (PMPI_Allreduce(&put, &all, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS) {
            link_free(L);
            return kp_error(KP_ERR_MPI, "transport=rma: MPI_Allreduce of the notification failed");
        }
        L->putflag = all;
    }
    rc = link_windows(R, L, bytes);
    if (rc == KP_ERR_UNSUPPORTED && L->shared) {
        /* no shared window (Open MPI's osc/pt2pt makes none): the plain
         * flavour, whose notification is the atomics' (agreed: every
         * rank saw the same refusal) */
        for (int j = 0; j < L->rails; j++) /* the rails every rank made (collective) */
            if (L->win[j] != MPI_WIN_NULL) {
                MPI_Win_unlock_all(L->win[j]);
                MPI_Win_free(&L->win[j]);
                live_windows--;
            }
        R->refused = 0;
        L->shared = 0;
        L->putflag = 0;
        rc = link_windows(R, L, bytes);
    }
    if (rc) {
        link_free(L); /* the rails every rank made (collective) */
        return rc;
    }
    *out = L;
    return KP_SUCCESS;
}

/* The attach path's windows: one dynamic window per rail, locked for their
 * life like the others, and a probe that MPI really delivers a put into
 * memory attached to them (every rank attaches a word, publishes its
 * address, its left neighbour puts into it): if creating fails or the
 * probe does not arrive, L->dyn stays 0 on every rank and every message
 * takes the staging path (KPORT_VERBOSE says so). Collective. */
static int link_dynamic(kp_rma *R, rma_link *L, int rma_path)
{
    const int P = R->P;
    if (rma_path == KP_RMA_PATH_AUTO && L->attach_bytes == INT64_MAX)
        return KP_SUCCESS; /* auto never attaches: no dynamic windows until a plan forces attach */
    L->att = calloc(KP_RMA_ATT, sizeof(*L->att));
    L->dsent = calloc(7 * (size_t)P, sizeof(int64_t));
    if (!L->att || !L->dsent)
        return kp_error(KP_ERR_NOMEM, "out of memory for transport=rma state");
    L->dseen = L->dsent + P;
    L->dsend_n = L->dsent + 2 * P;
    L->drecv_n = L->dsent + 3 * P;
    L->dposted = L->dsent + 4 * P;
    L->ddone = L->dsent + 5 * P;
    L->darrived = L->dsent + 6 * P;
    /* Open MPI 4.1 serves dynamic windows with osc/rdma, whose backing
     * files collide between disjoint communicators creating windows at
     * once (the header); a communicator with every rank of MPI_COMM_WORLD
     * has no disjoint one in the job, so there it is safe. Elsewhere
     * KPORT_RMA_DYNAMIC=1 forces them (0: never, under any MPI). */
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
#ifdef OPEN_MPI
    const int want0 = kp_env_int("KPORT_RMA_DYNAMIC", P == world, 0, 1);
#else
    const int want0 = kp_env_int("KPORT_RMA_DYNAMIC", 1, 0, 1);
#endif
    int want = want0 < 0 ? 0 : want0;
    if (PMPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "transport=rma: MPI_Allreduce of KPORT_RMA_DYNAMIC failed");
    if (want0 < 0)
        return kp_error(KP_ERR_PARAM, "KPORT_RMA_DYNAMIC must be 0 or 1");
    if (!want) {
        L->dyn = 0;
        return KP_SUCCESS;
    }
    int ok = 1;
    for (int j = 0; j < L->rails; j++) {
        if (ok && MPI_Win_create_dynamic(MPI_INFO_NULL, R->comm, &L->dwin[j]) == MPI_SUCCESS) {
            live_windows++;
            MPI_Win_set_errhandler(L->dwin[j], MPI_ERRORS_RETURN);
            MPI_Win_lock_all(MPI_MODE_NOCHECK, L->dwin[j]);
        } else {
            L->dwin[j] = MPI_WIN_NULL;
            ok = 0;
        }
    }
    /* the probe, on every rail */
    static volatile int64_t probe[KP_RAILS_MAX];
    const int64_t magic = 0x6b706f7274LL * 16 + R->me;
    MPI_Aint *addr = malloc((size_t)P * sizeof(MPI_Aint));
    if (!addr)
        return kp_error(KP_ERR_NOMEM, "out of memory for transport=rma state");
    for (int j = 0; j < L->rails && ok; j++) {
        probe[j] = 0;
        MPI_Aint a;
        ok = MPI_Win_attach(L->dwin[j], (void *)&probe[j], sizeof(int64_t)) == MPI_SUCCESS;
        MPI_Get_address((void *)&probe[j], &a);
        if (PMPI_Allgather(&a, 1, MPI_AINT, addr, 1, MPI_AINT, R->comm) != MPI_SUCCESS)
            ok = 0;
        const int right = (R->me + 1) % P;
        const int64_t v = magic;
        if (ok && (MPI_Put(&v, 1, MPI_INT64_T, right, addr[right], 1, MPI_INT64_T, L->dwin[j]) != MPI_SUCCESS ||
                   MPI_Win_flush(right, L->dwin[j]) != MPI_SUCCESS))
            ok = 0;
        PMPI_Barrier(R->comm);
        MPI_Win_sync(L->dwin[j]);
        const int left = (R->me + P - 1) % P;
        if (probe[j] != 0x6b706f7274LL * 16 + left)
            ok = 0;
        MPI_Win_detach(L->dwin[j], (void *)&probe[j]);
    }
    free(addr);
    int all = 0;
    if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "transport=rma: MPI_Allreduce after the dynamic windows' probe failed");
    L->dyn = all;
    if (!all) {
        if (R->me == 0 && getenv("KPORT_VERBOSE") && atoi(getenv("KPORT_VERBOSE")) > 0)
            fprintf(stderr, "kport: transport=rma: this MPI's dynamic windows fail the probe; rma_path=attach "
                            "falls back to staging\n");
        for (int j = 0; j < L->rails; j++)
            if (L->dwin[j] != MPI_WIN_NULL) {
                MPI_Win_unlock_all(L->dwin[j]);
                MPI_Win_free(&L->dwin[j]);
                live_windows--;
            }
    }
    return KP_SUCCESS;
}

int kp_rma_attach_ready(kp_comm *c, int rails)
{
    return c->rma && rails >= 1 && rails <= KP_RAILS_MAX && c->rma->link[rails] ? c->rma->link[rails]->dyn : -1;
}

int kp_rma_ready(kp_comm *c, int rails, int rma_path)
{
    if (c->size < 2 || c->comm == MPI_COMM_NULL)
        return KP_SUCCESS; /* nothing to send to */
    if (rails < 1 || rails > KP_RAILS_MAX)
        return kp_error(KP_ERR_PARAM, "transport=rma: rails=%d must be 1..%d", rails, KP_RAILS_MAX);
    if (!c->rma) {
        kp_rma *R = calloc(1, sizeof(*R));
        if (!R)
            return kp_error(KP_ERR_NOMEM, "out of memory for transport=rma state");
        R->P = c->size;
        R->me = c->rank;
        R->comm = c->comm;
        c->rma = R;
    }
    c->rma->oversub = c->oversub;
    if (c->rma->refused) /* agreed once: every later plan with this transport is refused alike */
        return kp_error(KP_ERR_UNSUPPORTED, "%s", c->rma->why);
    int rc = KP_SUCCESS;
    if (!c->rma->link[rails]) {
        rc = link_create(c->rma, rails, &c->rma->link[rails]);
        if (rc == KP_ERR_UNSUPPORTED && c->rma->refused) {
            char note[300];
            snprintf(note, sizeof(note), "%s; plans with transport=rma are refused", c->rma->why);
            kp_comm_refusal_note(c, KP_REFUSED_RMA, note);
            return kp_error(KP_ERR_UNSUPPORTED, "%s", c->rma->why);
        }
    }
    rma_link *L = c->rma->link[rails];
    if (!rc && rma_path != KP_RMA_PATH_STAGING && !L->att && (rc = link_dynamic(c->rma, L, rma_path))) {
        /* collective failure (bad KPORT_RMA_ATTACH_KB, no memory): no attach path */
        free(L->att);
        L->att = NULL;
    }
    return rc;
}

