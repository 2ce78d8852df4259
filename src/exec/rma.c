/*
 * The one-sided transport: any kport schedule's messages as MPI_Put into
 * the receiver's memory plus a completion notification (transport=rma, a
 * parameter every algorithm takes; the schedule itself does not change, so
 * the checker's proofs hold). The papers' collectives were written this way
 * on Quadrics RDMA writes (Qian and Afsahi, ICPP 2007 section 6.1.4 and
 * Cluster Computing 11, 2008): data written into the target's memory, an
 * event per rail telling it the data is there, several writes in flight,
 * messages above a threshold striped over the rails.
 *
 * Windows. Per communicator and rails count r, r windows on kport's
 * private duplicate: under Open MPI, MPI_Win_allocate_shared when every
 * rank is on one machine (MPI_Comm_split_type; info
 * alloc_shared_noncontig), else MPI_Win_allocate (KPORT_RMA_SHARED=0 / 1
 * forces one; MPICH's default is MPI_Win_allocate, as its puts into shared
 * windows above 128 KiB are 8x slower: kport-bench rma). Why:
 * Open MPI 4.1 serves MPI_Win_allocate on one node with osc/rdma, which
 * names its shared-memory backing file after the communicator's id alone
 * (osc_rdma.HOST.JOBID.CID), and ids are agreed only among a
 * communicator's members: disjoint communicators (the halves of a split,
 * emulated nodes) have the same id and, creating windows at once, unlink
 * or reuse each other's file (open(2)/unlink(2) ENOENT, abort; 6 of 8 runs
 * of test_rma at P=4 with KPORT_NODE_SIZE=2). Shared windows go to
 * osc/sm, whose file names carry the creator's rank: 0 of 20. Created when the first
 * plan with transport=rma and r rails is built (collective: every rank
 * builds the same plan in the same call), locked with MPI_Win_lock_all for
 * their whole life (passive target), moved with the communicator's other
 * resources into the pool when the user frees it and freed with them
 * (comm.c). Rank r's window j:
 *
 *   [ arrived[s], s < P | consumed[q], q < P | ring of s = 0 | ... | ring of s = P-1 ]
 *     64 bytes each       64 bytes each        nslots slots of sb bytes each
 *
 * arrived[s] (window 0): pieces rank s has put into its ring in r's memory;
 * consumed[q]: pieces of r's that rank q has copied out of r's ring in q's
 * memory (r's credits). Both count from 0 for the windows' life; with
 * shared windows they are written by MPI_Put after a flush and read from
 * memory after MPI_Win_sync, elsewhere by MPI atomics (MPI_Accumulate with
 * MPI_REPLACE, read with MPI_Fetch_and_op MPI_NO_OP: info
 * accumulate_ops=same_op_no_op); read_ctrl says why. The rings
 * of the other rails' windows hold the other stripes of a slot.
 *
 * Data path (rma_path): staging the receiver copies out of, or (attach)
 * the user's receive buffer itself; auto: staging below
 * KPORT_RMA_ATTACH_KB, attach from there (DESIGN.md, "One-sided
 * transport"). Staging: A message of len bytes goes as pieces of one slot
 * each (sb bytes, or r * sb when len > stripe_kb KiB and r > 1: then each
 * piece is split into r stripes, stripe j put through window j, all in
 * flight at once). Piece n from s to q goes to slot n mod nslots of s's
 * ring in q's windows. The sender puts it only when n - consumed < nslots
 * (flow control: a slot the receiver has not copied out is never
 * overwritten, however far ahead the sender runs, across calls too), and
 * after the round's puts, MPI_Win_flush (data complete at the target) then
 * the notification arrived[s] = n + 1. The receiver waits until arrived
 * exceeds the pieces it has consumed, MPI_Win_sync, copies the piece out
 * and returns the credit consumed = n + 1. Since pieces between a pair
 * travel one FIFO ring, a's sends to b match b's receives from a in
 * posting order, as the IR says; zero-byte signals are one empty piece.
 *
 * Rounds. p2p.c walks the schedule; per round it adds the message ops
 * here, then kp_rma_poll puts every send of the round (up to the ring's
 * room: the k puts of a k-port round are in flight together), flushes each
 * target once and notifies, consumes whatever has arrived for the round's
 * receives, and returns credits; the round ends when all its sends are put
 * and all its receives copied out. Sends complete when put (like an eager
 * send) or, for messages larger than a ring, as the receiver drains it:
 * never later than a rendezvous send, so schedules the checker proved free
 * of deadlock under rendezvous stay so. While waiting for a shared-memory
 * flag (smp_* algorithms' node-local parts) the round keeps progressing.
 *
 * The attach path. Each rails count's link also has one dynamic window
 * per rail (MPI_Win_create_dynamic, locked for its life; a probe put at
 * creation must arrive, else every message stays on staging). Three more
 * control lines per peer: posted[q] (receive addresses q has published in
 * my mailbox), darrived[s] (direct messages s has completed into my
 * buffers) and mailbox[q] (MBOX = 8 addresses q publishes, a ring). A
 * direct message is numbered among the pair's direct messages on both
 * sides (same decision: plan parameter, length, link). The receiver, in
 * the round's first sweep, covers the buffers of its direct receives with
 * attachments (the whole receive buffer or scratch, cached by address
 * range: see att_lookup), then for each, in order, once the sender has
 * finished the message MBOX before it (its entry is free), puts
 * MPI_Get_address of the destination into mailbox slot n mod MBOX at the
 * sender, flushes, and writes posted = n + 1. The sender, once posted
 * exceeds n, reads the address from its own memory (after MPI_Win_sync),
 * puts the message into the dynamic window(s), striped like staging,
 * flushes and writes darrived = n + 1; the receiver sees it and the bytes
 * are in place (one copy fewer; a send completes only when the receiver
 * has posted: a rendezvous). Under Open MPI 4.1, dynamic windows are
 * osc/rdma's, whose backing file names collide between disjoint
 * communicators (above): they are made only on communicators with every
 * rank of MPI_COMM_WORLD (KPORT_RMA_DYNAMIC=1 / 0 forces).
 *
 * Sizes: nslots = KPORT_RMA_SLOTS (default 4); a slot holds S bytes in all,
 * S = KPORT_RMA_SLOT_KB KiB (0: 64 bytes, for tests) or by default
 * 2 MiB / P clamped to 16..256 KiB; each rail's window holds S / r of it.
 * Window bytes per rank: 128 P + P * nslots * S for each rails count used.
 * Both variables must be equal on every rank (checked at creation).
 */
#define _GNU_SOURCE
#include "core/core.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define CTRL 64 /* bytes per control word (own cache line) */
/* control lines per peer: arrived, consumed, posted, darrived, mailbox */
#define NCTRL 5
#define C_ARRIVED 0
#define C_CONSUMED 1
#define C_POSTED 2
#define C_DARRIVED 3
#define C_MBOX 4
#define MBOX (CTRL / 8) /* mailbox entries per peer: addresses of direct receives */
#define CDISP(L, kind, peer) (((MPI_Aint)(kind) * (L)->P + (peer)) * CTRL)
/* rma_path=auto: messages of at least this many KiB go straight into the
 * receive buffer, -1: none (KPORT_RMA_ATTACH_KB overrides). Measured in
 * commit 5a2ded8 (git show 5a2ded8:docs/bench/rma-paths/): under Open MPI attach is
 * even at 8 KiB and 0.41-0.74x of staging from 16 KiB for ring-like
 * algorithms (bruck loses 1.1-1.6x); under MPICH 4.0 it loses at every
 * size. */
#ifdef OPEN_MPI
#define KP_RMA_ATTACH_KB_DEFAULT 16
#else
#define KP_RMA_ATTACH_KB_DEFAULT (-1)
#endif

typedef struct rma_msg {
    char *p;         /* the message's bytes in this rank's buffers */
    int64_t len;
    int peer;
    int send;
    int direct;      /* attach path: put straight into the receive buffer */
    int64_t dseq;    /* direct: its number among the pair's direct messages */
    int published;   /* direct receive: its address is in the sender's mailbox */
    int entry;       /* direct receive: the attachment cache entry covering it */
    int64_t addr;    /* direct receive: MPI_Get_address of p (origin of the mailbox put) */
    char *blo, *bhi; /* direct receive: the buffer p lies in (attached whole) */
    int64_t cap;     /* bytes per piece */
    int64_t npieces; /* at least 1 (a zero-byte signal is one empty piece) */
    int64_t done;    /* pieces put (send) or copied out (receive) */
} rma_msg;

typedef struct rma_link { /* the windows of one rails count */
    int P;
    int rails, nslots;
    int shared;    /* windows from MPI_Win_allocate_shared (every rank on this machine) */
    int putflag;   /* counters written by MPI_Put, read from memory (read_ctrl) */
    int64_t sb;    /* slot bytes in one rail's window */
    MPI_Aint ctrl; /* control bytes at the start of every window */
    MPI_Win win[KP_RAILS_MAX];
    char *base[KP_RAILS_MAX];
    int64_t *sent;    /* [P] pieces put into q's ring for me */
    int64_t *credit;  /* [P] of those, consumed by q (last read) */
    int64_t *recvd;   /* [P] pieces copied out of s's ring in my windows */
    int64_t *arrived; /* [P] pieces s has notified (last read) */
    int64_t *note;    /* [2P] origin values of notifications and credits (stable until flushed) */
    unsigned char *flags; /* [P] per sweep: bit 0 send blocked, 1 recv blocked, 2 put, 3 consumed */
    unsigned *rails_used; /* [P] rails with puts to q in this sweep */
    /* the attach path (rma_path=attach or auto above attach_bytes) */
    int dyn;          /* dynamic windows dwin[0..rails-1] exist and passed the probe */
    int64_t attach_bytes; /* auto: messages of at least this many bytes go direct */
    MPI_Win dwin[KP_RAILS_MAX];
    int64_t *dsent;   /* [P] direct messages to q put and notified */
    int64_t *dseen;   /* [P] addresses q has published to me (last read) */
    int64_t *dsend_n; /* [P] direct sends to q numbered so far */
    int64_t *drecv_n; /* [P] direct receives from s numbered so far */
    int64_t *dposted; /* [P] addresses published to s */
    int64_t *ddone;   /* [P] direct receives from s complete */
    int64_t *darrived;/* [P] direct messages s has notified (last read) */
    struct rma_att *att; /* attachment cache, KP_RMA_ATT entries */
    uint64_t stamp;
} rma_link;

/* the attachment cache: address ranges attached to every rail's dynamic
 * window, kept across calls (an RDMA registration cache's policy) */
#define KP_RMA_ATT 16
typedef struct rma_att {
    char *lo;
    int64_t len;    /* 0: free entry */
    int busy;       /* published receives into it not yet complete */
    uint64_t used;  /* last use (LRU) */
} rma_att;
static long attach_calls, detach_calls;

void kp_rma_attach_stats(long *attaches, long *detaches)
{
    *attaches = attach_calls;
    *detaches = detach_calls;
}

typedef struct kp_rma {
    int P, me;
    MPI_Comm comm;
    rma_link *link[KP_RAILS_MAX + 1];
    /* the round in progress */
    rma_link *cur;
    int64_t stripe;
    rma_msg *msgs;
    int nmsgs, cap;
    int pending; /* messages added since the last sweep */
    int path;    /* the round's plan's rma_path */
    int oversub;
    int refused; /* MPI made no window on this communicator (agreed): why */
    char why[200];
} kp_rma;

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
                    detach_calls += j == 0;
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
        const int mrc = shared ? MPI_Win_allocate_shared(bytes, 1, info, R->comm, &L->base[j], &L->win[j])
                               : MPI_Win_allocate(bytes, 1, info, R->comm, &L->base[j], &L->win[j]);
        if (mrc != MPI_SUCCESS) {
            L->win[j] = MPI_WIN_NULL;
            char why[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(mrc, why, &len);
            why[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
            rc = kp_error(KP_ERR_UNSUPPORTED, "transport=rma: %s of %lld bytes (rail %d of %d) failed: %s",
                          shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate", (long long)bytes, j, rails, why);
        } else {
            live_windows++;
            MPI_Win_set_errhandler(L->win[j], MPI_ERRORS_RETURN);
            memset(L->base[j], 0, (size_t)L->ctrl);
            MPI_Win_lock_all(MPI_MODE_NOCHECK, L->win[j]);
        }
        int ok = rc == KP_SUCCESS, all = 0;
        if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS)
            all = 0;
        if (!all) {
            if (rc == KP_SUCCESS) { /* refused on another rank only */
                L->win[j] = MPI_WIN_NULL;
                live_windows--;
                rc = kp_error(KP_ERR_UNSUPPORTED, "transport=rma: MPI refused the windows on another rank");
            }
            snprintf(R->why, sizeof(R->why), "%s", kp_last_error());
            R->refused = 1;
        }
    }
    MPI_Info_free(&info);
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
    if (MPI_Allreduce(mine, lo, 3, MPI_INT64_T, MPI_MIN, R->comm) != MPI_SUCCESS ||
        MPI_Allreduce(mine, hi, 3, MPI_INT64_T, MPI_MAX, R->comm) != MPI_SUCCESS)
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
        const int one = want_shared && nsize == P;
        if (MPI_Allreduce(&one, &shared, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS) {
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
        if (MPI_Allreduce(&put, &all, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS) {
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
    if (MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS)
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
        if (MPI_Allgather(&a, 1, MPI_AINT, addr, 1, MPI_AINT, R->comm) != MPI_SUCCESS)
            ok = 0;
        const int right = (R->me + 1) % P;
        const int64_t v = magic;
        if (ok && (MPI_Put(&v, 1, MPI_INT64_T, right, addr[right], 1, MPI_INT64_T, L->dwin[j]) != MPI_SUCCESS ||
                   MPI_Win_flush(right, L->dwin[j]) != MPI_SUCCESS))
            ok = 0;
        MPI_Barrier(R->comm);
        MPI_Win_sync(L->dwin[j]);
        const int left = (R->me + P - 1) % P;
        if (probe[j] != 0x6b706f7274LL * 16 + left)
            ok = 0;
        MPI_Win_detach(L->dwin[j], (void *)&probe[j]);
    }
    free(addr);
    int all = 0;
    if (MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, R->comm) != MPI_SUCCESS)
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

/* ---- the attachment cache ------------------------------------------------------- */

/* the entry covering [p, p + len), attaching the whole buffer [blo, bhi)
 * that holds it on a miss (so every receive of a call into it hits the
 * one entry): ranges that overlap it and are not in use are detached and
 * merged into it, the least recently used entry not in use is evicted
 * when the cache is full; -1 on error. An entry in use (a published
 * receive into it not yet complete) covers a buffer of this call, and
 * the buffers of a call are disjoint, so it never overlaps the range. */
static int att_lookup(rma_link *L, char *p, int64_t len, char *blo, char *bhi)
{
    rma_att *A = L->att;
    for (int e = 0; e < KP_RMA_ATT; e++)
        if (A[e].len && A[e].lo <= p && p + len <= A[e].lo + A[e].len) {
            A[e].used = L->stamp;
            return e;
        }
    char *lo = blo, *hi = bhi;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int e = 0; e < KP_RMA_ATT; e++)
            if (A[e].len && A[e].lo < hi && lo < A[e].lo + A[e].len) {
                if (A[e].busy) {
                    kp_error(KP_ERR_INTERNAL, "transport=rma: a receive overlaps one in flight");
                    return -1;
                }
                lo = A[e].lo < lo ? A[e].lo : lo;
                hi = A[e].lo + A[e].len > hi ? A[e].lo + A[e].len : hi;
                for (int j = 0; j < L->rails; j++)
                    MPI_Win_detach(L->dwin[j], A[e].lo);
                detach_calls++;
                A[e].len = 0;
                changed = 1;
            }
    }
    int v = -1;
    for (int e = 0; e < KP_RMA_ATT; e++)
        if (!A[e].len) {
            v = e;
            break;
        }
    if (v < 0) { /* full: evict the least recently used entry not in use */
        for (int e = 0; e < KP_RMA_ATT; e++)
            if (!A[e].busy && A[e].used != L->stamp && (v < 0 || A[e].used < A[v].used))
                v = e;
        if (v < 0) {
            kp_error(KP_ERR_INTERNAL, "transport=rma: %d attachments in use at once", KP_RMA_ATT);
            return -1;
        }
        for (int j = 0; j < L->rails; j++)
            MPI_Win_detach(L->dwin[j], A[v].lo);
        detach_calls++;
        A[v].len = 0;
    }
    for (int j = 0; j < L->rails; j++)
        if (MPI_Win_attach(L->dwin[j], lo, (MPI_Aint)(hi - lo)) != MPI_SUCCESS) {
            for (int i = 0; i < j; i++)
                MPI_Win_detach(L->dwin[i], lo);
            kp_error(KP_ERR_MPI, "transport=rma: MPI_Win_attach of %lld bytes failed", (long long)(hi - lo));
            return -1;
        }
    attach_calls++;
    A[v].lo = lo;
    A[v].len = hi - lo;
    A[v].busy = 0;
    A[v].used = L->stamp;
    return v;
}

/* ---- one round ---------------------------------------------------------------- */

static inline MPI_Aint slot_disp(const rma_link *L, int sender, int64_t n)
{
    return L->ctrl + ((MPI_Aint)sender * L->nslots + (MPI_Aint)(n % L->nslots)) * (MPI_Aint)L->sb;
}

/* A counter in my window 0 (arrived, consumed, posted, darrived). With
 * Open MPI's shared windows (osc/sm: a put is the origin's store into
 * this machine's memory, MPI moves nothing on the target's behalf) the
 * writer puts it after the data is complete (MPI_Win_flush), the reader
 * polls its own memory after MPI_Win_sync: 0.08 against 0.25 us one way
 * (kport-bench rma --notify). Other windows need MPI's progress at the
 * target (MPICH 4.0's, shared ones too: polling memory never sees the
 * put), so there the counter is an MPI_Accumulate MPI_REPLACE read by
 * MPI_Fetch_and_op MPI_NO_OP (atomic, and it drives progress).
 * KPORT_RMA_NOTIFY=acc forces the atomics under Open MPI too. */
static int read_ctrl(const kp_rma *R, const rma_link *L, MPI_Aint disp, int64_t *v)
{
    if (L->putflag) {
        MPI_Win_sync(L->win[0]);
        *v = atomic_load_explicit((_Atomic int64_t *)(void *)(L->base[0] + disp), memory_order_acquire);
        return KP_SUCCESS;
    }
    int64_t dummy = 0;
    if (MPI_Fetch_and_op(&dummy, v, MPI_INT64_T, R->me, disp, MPI_NO_OP, L->win[0]) != MPI_SUCCESS ||
        MPI_Win_flush(R->me, L->win[0]) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "transport=rma: reading a counter of my window failed");
    return KP_SUCCESS;
}

int kp_rma_round_begin(kp_plan *pl)
{
    kp_rma *R = pl->owner->rma;
    if (!R || pl->prm.rails < 1 || pl->prm.rails > KP_RAILS_MAX || !R->link[pl->prm.rails])
        return kp_error(KP_ERR_INTERNAL, "%s sends messages, but its transport=rma windows are not set up", pl->name);
    R->cur = R->link[pl->prm.rails];
    R->stripe = (int64_t)pl->prm.stripe_kb * 1024;
    R->path = pl->prm.rma_path;
    R->nmsgs = 0;
    R->pending = 0;
    return KP_SUCCESS;
}

int kp_rma_add(kp_plan *pl, const kp_op *op, char *p)
{
    kp_rma *R = pl->owner->rma;
    rma_link *L = R->cur;
    if (R->nmsgs == R->cap) {
        const int n = R->cap ? 2 * R->cap : 16;
        rma_msg *m = realloc(R->msgs, (size_t)n * sizeof(*m));
        if (!m)
            return kp_error(KP_ERR_NOMEM, "out of memory for a round of %d messages", n);
        R->msgs = m;
        R->cap = n;
    }
    rma_msg *m = &R->msgs[R->nmsgs++];
    m->send = op->kind == KP_OP_SEND;
    m->peer = m->send ? op->u.send.peer : op->u.recv.peer;
    m->len = m->send ? op->u.send.src.len : op->u.recv.dst.len;
    m->p = p;
    m->cap = L->rails > 1 && m->len > R->stripe ? L->rails * L->sb : L->sb;
    m->npieces = m->len == 0 ? 1 : (m->len + m->cap - 1) / m->cap;
    m->done = 0;
    /* the data path: the same decision on both sides (it depends on the
     * plan's parameters, the message's length and the link only) */
    m->direct = L->dyn && m->len > 0 &&
                (R->path == KP_RMA_PATH_ATTACH || (R->path == KP_RMA_PATH_AUTO && m->len >= L->attach_bytes));
    m->published = 0;
    m->entry = -1;
    if (m->direct) {
        m->npieces = 1;
        m->dseq = m->send ? L->dsend_n[m->peer]++ : L->drecv_n[m->peer]++;
        m->blo = p;
        m->bhi = p + m->len;
        const int b = m->send ? -1 : op->u.recv.dst.buf;
        if (b == KP_BUF_RECV || b == KP_BUF_SCRATCH) { /* the user's receive buffer, the plan's scratch */
            const int64_t size = kp_sched_bufsize(&pl->sched, b);
            if (op->u.recv.dst.off >= 0 && op->u.recv.dst.off + m->len <= size) {
                m->blo = p - op->u.recv.dst.off;
                m->bhi = m->blo + size;
            }
        }
    }
    R->pending = 1;
    return KP_SUCCESS;
}

/* put piece m->done of m into the next slot of my ring at q */
static int put_piece(kp_rma *R, rma_link *L, rma_msg *m)
{
    const int q = m->peer;
    const int64_t off = m->done * m->cap;
    const int64_t plen = m->len - off < m->cap ? m->len - off : m->cap;
    const MPI_Aint disp = slot_disp(L, R->me, L->sent[q]);
    const int stripes = m->cap > L->sb ? L->rails : 1;
    const int64_t w = (plen + stripes - 1) / stripes;
    for (int j = 0; j < stripes; j++) {
        const int64_t so = j * w, sl = plen - so < w ? plen - so : w;
        if (sl <= 0)
            break;
        if (MPI_Put(m->p + off + so, (int)sl, MPI_BYTE, q, disp, (int)sl, MPI_BYTE, L->win[j]) != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "transport=rma: MPI_Put of %lld bytes to rank %d (rail %d) failed",
                            (long long)sl, q, j);
        L->rails_used[q] |= 1u << j;
    }
    L->sent[q]++;
    m->done++;
    L->flags[q] |= 4;
    return KP_SUCCESS;
}

/* copy piece m->done of m out of the next slot of s's ring in my windows */
static void take_piece(rma_link *L, rma_msg *m)
{
    const int s = m->peer;
    const int64_t off = m->done * m->cap;
    const int64_t plen = m->len - off < m->cap ? m->len - off : m->cap;
    const MPI_Aint disp = slot_disp(L, s, L->recvd[s]);
    const int stripes = m->cap > L->sb ? L->rails : 1;
    const int64_t w = (plen + stripes - 1) / stripes;
    for (int j = 0; j < stripes; j++) {
        const int64_t so = j * w, sl = plen - so < w ? plen - so : w;
        if (sl <= 0)
            break;
        memcpy(m->p + off + so, L->base[j] + disp, (size_t)sl);
    }
    L->recvd[s]++;
    m->done++;
    L->flags[s] |= 8;
}

/* the counter at disp in q's window 0 = *origin (stable until flushed) */
static int write_ctrl(const rma_link *L, const int64_t *origin, int q, MPI_Aint disp)
{
    return L->putflag ? MPI_Put(origin, 1, MPI_INT64_T, q, disp, 1, MPI_INT64_T, L->win[0])
                      : MPI_Accumulate(origin, 1, MPI_INT64_T, q, disp, 1, MPI_INT64_T, MPI_REPLACE, L->win[0]);
}

/* flags bits per peer in one sweep */
#define F_SEND_BLOCKED 1u
#define F_RECV_BLOCKED 2u
#define F_PUT 4u
#define F_CONSUMED 8u
#define F_DPUT 16u          /* direct message(s) put to the peer */
#define F_PUBLISHED 32u     /* address(es) put into the peer's mailbox */
#define F_DSEND_BLOCKED 64u /* a direct send waits for its address */
#define F_DPUB_BLOCKED 128u /* a direct receive waits for a free mailbox entry */

/* the attach path, sender: put direct message m once the receiver has
 * published its address (the mailbox entry in my window); 0 when put */
static int put_direct(kp_rma *R, rma_link *L, rma_msg *m, int *blocked)
{
    const int q = m->peer;
    *blocked = 0;
    if (L->dseen[q] <= m->dseq) {
        int rc = read_ctrl(R, L, CDISP(L, C_POSTED, q), &L->dseen[q]);
        if (rc)
            return rc;
        if (L->dseen[q] <= m->dseq) {
            *blocked = 1;
            return KP_SUCCESS;
        }
        MPI_Win_sync(L->win[0]); /* the mailbox entries the counter announced, in my view */
    }
    int64_t addr;
    memcpy(&addr, L->base[0] + CDISP(L, C_MBOX, q) + (MPI_Aint)(m->dseq % MBOX) * 8, sizeof addr);
    const int stripes = L->rails > 1 && m->len > R->stripe ? L->rails : 1;
    const int64_t w = (m->len + stripes - 1) / stripes;
    for (int j = 0; j < stripes; j++) {
        const int64_t so = j * w, sl = m->len - so < w ? m->len - so : w;
        for (int64_t c = 0; c < sl; c += 1 << 30) { /* counts are int */
            const int n = (int)(sl - c < (1 << 30) ? sl - c : 1 << 30);
            if (MPI_Put(m->p + so + c, n, MPI_BYTE, q, (MPI_Aint)addr + (MPI_Aint)(so + c), n, MPI_BYTE,
                        L->dwin[j]) != MPI_SUCCESS)
                return kp_error(KP_ERR_MPI, "transport=rma: MPI_Put of %d bytes into rank %d's receive buffer "
                                            "(rail %d) failed", n, q, j);
        }
        if (sl > 0)
            L->rails_used[q] |= 1u << (8 + j);
    }
    L->dsent[q]++;
    m->done = 1;
    L->flags[q] |= F_DPUT;
    return KP_SUCCESS;
}

/* the attach path, receiver: publish m's address to its sender (in order,
 * when the sender has read the mailbox entry it reuses), then wait for
 * the notification that the data is in place */
static int recv_direct(kp_rma *R, rma_link *L, rma_msg *m, int *moved)
{
    const int s = m->peer;
    int rc;
    if (!m->published) {
        if (L->flags[s] & F_DPUB_BLOCKED)
            return KP_SUCCESS;
        if (m->dseq - L->darrived[s] >= MBOX &&
            ((rc = read_ctrl(R, L, CDISP(L, C_DARRIVED, s), &L->darrived[s])) || m->dseq - L->darrived[s] >= MBOX)) {
            L->flags[s] |= F_DPUB_BLOCKED;
            return rc;
        }
        const int e = m->entry;
        MPI_Aint a;
        MPI_Get_address(m->p, &a);
        m->addr = (int64_t)a;
        if (MPI_Put(&m->addr, 1, MPI_INT64_T, s, CDISP(L, C_MBOX, R->me) + (MPI_Aint)(m->dseq % MBOX) * 8, 1,
                    MPI_INT64_T, L->win[0]) != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "transport=rma: publishing a receive address to rank %d failed", s);
        L->att[e].busy++;
        m->entry = e;
        m->published = 1;
        L->dposted[s]++;
        L->flags[s] |= F_PUBLISHED;
        *moved = 1;
    }
    if (L->darrived[s] <= m->dseq && L->putflag) {
        /* the data comes through the dynamic window (Open MPI: osc/rdma), whose
         * large puts move in MPI's progress at this end too: polling memory
         * alone left 1 MiB messages waiting for milliseconds */
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, R->comm, &flag, MPI_STATUS_IGNORE);
    }
    if (L->darrived[s] <= m->dseq &&
        ((rc = read_ctrl(R, L, CDISP(L, C_DARRIVED, s), &L->darrived[s])) || L->darrived[s] <= m->dseq))
        return rc;
    for (int j = 0; j < L->rails; j++) /* the puts the notification announced, in my view of memory */
        MPI_Win_sync(L->dwin[j]);
    L->att[m->entry].busy--;
    m->done = 1;
    *moved = 1;
    return KP_SUCCESS;
}

/* the round's direct receives covered by attachments, before any of them
 * is published (p2p.c adds a round's messages before its first sweep, and
 * the previous round's are complete: nothing is in use, so ranges merge
 * freely); a second pass finds each one's entry, as a later attachment
 * may have merged an earlier one */
static int attach_round(kp_rma *R, rma_link *L)
{
    L->stamp++;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < R->nmsgs; i++) {
            rma_msg *m = &R->msgs[i];
            if (m->send || !m->direct || m->published)
                continue;
            if ((m->entry = att_lookup(L, m->p, m->len, m->blo, m->bhi)) < 0)
                return KP_ERR_MPI;
        }
    return KP_SUCCESS;
}

/* one sweep: put what the rings have room for, notify, copy out what has
 * arrived, return credits; *left = messages not finished */
static int sweep(kp_rma *R, int *left, int *moved)
{
    rma_link *L = R->cur;
    const int P = R->P;
    int rc = KP_SUCCESS;
    if (R->pending && L->dyn && (rc = attach_round(R, L)))
        return rc;
    memset(L->flags, 0, (size_t)P);
    *left = 0;
    *moved = 0;
    /* sends, in order per target (a blocked one blocks later ones to it) */
    for (int i = 0; i < R->nmsgs && !rc; i++) {
        rma_msg *m = &R->msgs[i];
        if (!m->send || m->done == m->npieces)
            continue;
        const int q = m->peer;
        if (m->direct) { /* in order among the pair's direct messages */
            int blocked = 0;
            if (!(L->flags[q] & F_DSEND_BLOCKED) && !(rc = put_direct(R, L, m, &blocked)) && blocked)
                L->flags[q] |= F_DSEND_BLOCKED;
            *left += m->done < m->npieces;
            continue;
        }
        while (!(L->flags[q] & 1) && m->done < m->npieces && !rc) {
            if (L->sent[q] - L->credit[q] >= L->nslots &&
                (!(rc = read_ctrl(R, L, (MPI_Aint)(P + q) * CTRL, &L->credit[q])) &&
                 L->sent[q] - L->credit[q] >= L->nslots)) {
                L->flags[q] |= 1;
                break;
            }
            if (!rc)
                rc = put_piece(R, L, m);
        }
        *left += m->done < m->npieces;
    }
    /* data complete at each target, then its notification */
    for (int q = 0; q < P && !rc; q++) {
        if (!(L->flags[q] & (F_PUT | F_DPUT)))
            continue;
        for (int j = 0; j < L->rails && !rc; j++) {
            if ((L->rails_used[q] >> j & 1u) && MPI_Win_flush(q, L->win[j]) != MPI_SUCCESS)
                rc = kp_error(KP_ERR_MPI, "transport=rma: MPI_Win_flush to rank %d failed", q);
            if (!rc && (L->rails_used[q] >> (8 + j) & 1u) && MPI_Win_flush(q, L->dwin[j]) != MPI_SUCCESS)
                rc = kp_error(KP_ERR_MPI, "transport=rma: MPI_Win_flush (dynamic window) to rank %d failed", q);
        }
        L->rails_used[q] = 0;
        L->note[q] = L->sent[q];
        if (!rc && (L->flags[q] & F_PUT) &&
            write_ctrl(L, &L->note[q], q, (MPI_Aint)R->me * CTRL) != MPI_SUCCESS)
            rc = kp_error(KP_ERR_MPI, "transport=rma: notifying rank %d failed", q);
        if (L->flags[q] & F_DPUT)
            L->note[2 * P + q] = L->dsent[q];
        if (!rc && (L->flags[q] & F_DPUT) &&
            write_ctrl(L, &L->note[2 * P + q], q, CDISP(L, C_DARRIVED, R->me)) != MPI_SUCCESS)
            rc = kp_error(KP_ERR_MPI, "transport=rma: notifying rank %d of a direct message failed", q);
        *moved = 1;
    }
    /* receives, in order per origin */
    int synced = 0;
    for (int i = 0; i < R->nmsgs && !rc; i++) {
        rma_msg *m = &R->msgs[i];
        if (m->send || m->done == m->npieces)
            continue;
        const int s = m->peer;
        if (m->direct) {
            rc = recv_direct(R, L, m, moved);
            *left += m->done < m->npieces;
            continue;
        }
        while (!(L->flags[s] & 2) && m->done < m->npieces && !rc) {
            if (L->arrived[s] <= L->recvd[s]) {
                if ((rc = read_ctrl(R, L, (MPI_Aint)s * CTRL, &L->arrived[s])))
                    break;
                if (L->arrived[s] <= L->recvd[s]) {
                    L->flags[s] |= 2;
                    break;
                }
                synced = 0;
            }
            if (!synced) { /* the puts the notification announced, in my view of memory */
                for (int j = 0; j < L->rails; j++)
                    MPI_Win_sync(L->win[j]);
                synced = 1;
            }
            take_piece(L, m);
        }
        *left += m->done < m->npieces;
    }
    /* credits */
    for (int s = 0; s < P && !rc; s++) {
        if (!(L->flags[s] & 8))
            continue;
        L->note[P + s] = L->recvd[s];
        if (write_ctrl(L, &L->note[P + s], s, (MPI_Aint)(P + R->me) * CTRL) != MPI_SUCCESS)
            rc = kp_error(KP_ERR_MPI, "transport=rma: returning credits to rank %d failed", s);
        *moved = 1;
    }
    /* published addresses complete at their senders, then the counter saying so */
    for (int s = 0; s < P && !rc; s++) {
        if (!(L->flags[s] & F_PUBLISHED))
            continue;
        L->note[3 * P + s] = L->dposted[s];
        if (MPI_Win_flush(s, L->win[0]) != MPI_SUCCESS ||
            write_ctrl(L, &L->note[3 * P + s], s, CDISP(L, C_POSTED, R->me)) != MPI_SUCCESS)
            rc = kp_error(KP_ERR_MPI, "transport=rma: publishing receive addresses to rank %d failed", s);
    }
    /* notifications and credits complete before their values may change */
    for (int q = 0; q < P && !rc; q++)
        if ((L->flags[q] & (F_PUT | F_CONSUMED | F_DPUT | F_PUBLISHED)) && MPI_Win_flush(q, L->win[0]) != MPI_SUCCESS)
            rc = kp_error(KP_ERR_MPI, "transport=rma: MPI_Win_flush to rank %d failed", q);
    R->pending = 0;
    return rc;
}

static void backoff(const kp_rma *R, int *idle)
{
    if (++*idle > (R->oversub ? 4 : 256))
        sched_yield();
}

int kp_rma_poll(kp_plan *pl)
{
    kp_rma *R = pl->owner->rma;
    int left, moved;
    return R->nmsgs ? sweep(R, &left, &moved) : KP_SUCCESS;
}

int kp_rma_round_end(kp_plan *pl)
{
    kp_rma *R = pl->owner->rma;
    int left = R->nmsgs > 0, moved, idle = 0, rc = KP_SUCCESS;
    while (left && !(rc = sweep(R, &left, &moved)))
        if (left && !moved)
            backoff(R, &idle);
        else
            idle = 0;
    R->nmsgs = 0;
    return rc;
}

int kp_rma_wait_flag(kp_plan *pl, _Atomic uint64_t *flag, uint64_t target)
{
    kp_rma *R = pl->owner->rma;
    int idle = 0, rc = KP_SUCCESS;
    while (atomic_load_explicit(flag, memory_order_acquire) < target) {
        int left = 0, moved = 0;
        if (R->nmsgs && (rc = sweep(R, &left, &moved)))
            return rc;
        if (!moved)
            backoff(R, &idle);
    }
    return rc;
}
