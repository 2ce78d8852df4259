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
 * memory (r's credits). Both count from 0 for the windows' life and are
 * touched only by MPI atomics (MPI_Accumulate with MPI_REPLACE, read with
 * MPI_Fetch_and_op MPI_NO_OP: info accumulate_ops=same_op_no_op). The rings
 * of the other rails' windows hold the other stripes of a slot.
 *
 * Data path: staging the receiver copies out of (chosen; see DESIGN.md,
 * "One-sided transport"). A message of len bytes goes as pieces of one slot
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

typedef struct rma_msg {
    char *p;         /* the message's bytes in this rank's buffers */
    int64_t len;
    int peer;
    int send;
    int64_t cap;     /* bytes per piece */
    int64_t npieces; /* at least 1 (a zero-byte signal is one empty piece) */
    int64_t done;    /* pieces put (send) or copied out (receive) */
} rma_msg;

typedef struct rma_link { /* the windows of one rails count */
    int rails, nslots;
    int shared;    /* windows from MPI_Win_allocate_shared (every rank on this machine) */
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
} rma_link;

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
    int oversub;
} kp_rma;

static int live_windows;

int kp_rma_live_windows(void)
{
    return live_windows;
}

static int env_int(const char *name, int def, int lo, int hi)
{
    const char *e = getenv(name);
    if (!e || !*e)
        return def;
    char *end;
    long v = strtol(e, &end, 10);
    if (*end || v < lo || v > hi)
        return -2;
    return (int)v;
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

static int link_create(kp_rma *R, int rails, rma_link **out)
{
    const int P = R->P;
    const int nslots = env_int("KPORT_RMA_SLOTS", 4, 1, 1024);
    const int slot_kb = env_int("KPORT_RMA_SLOT_KB", -1, 0, 65536);
    if (nslots < 0 || slot_kb < -1)
        return kp_error(KP_ERR_PARAM, "KPORT_RMA_SLOTS must be 1..1024 and KPORT_RMA_SLOT_KB 0..65536 "
                                      "(0: 64-byte slots, for tests)");
    int64_t S = slot_kb > 0 ? (int64_t)slot_kb * 1024 : slot_kb == 0 ? 64 : (2 << 20) / P;
    if (slot_kb < 0)
        S = S < (16 << 10) ? 16 << 10 : S > (256 << 10) ? 256 << 10 : S;
    int64_t sb = S / rails / 64 * 64;
    if (sb < 64)
        sb = 64;
    /* the geometry must be the same everywhere, or the protocol breaks */
    int64_t mine[2] = {nslots, sb}, lo[2], hi[2];
    if (MPI_Allreduce(mine, lo, 2, MPI_INT64_T, MPI_MIN, R->comm) != MPI_SUCCESS ||
        MPI_Allreduce(mine, hi, 2, MPI_INT64_T, MPI_MAX, R->comm) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "transport=rma: MPI_Allreduce of the window geometry failed");
    if (lo[0] != hi[0] || lo[1] != hi[1])
        return kp_error(KP_ERR_PARAM, "transport=rma: KPORT_RMA_SLOTS / KPORT_RMA_SLOT_KB differ between ranks");
    rma_link *L = calloc(1, sizeof(*L));
    if (!L)
        return kp_error(KP_ERR_NOMEM, "out of memory for transport=rma state");
    for (int j = 0; j < KP_RAILS_MAX; j++)
        L->win[j] = MPI_WIN_NULL;
    L->rails = rails;
    L->nslots = nslots;
    L->sb = sb;
    L->ctrl = 2 * (MPI_Aint)P * CTRL;
    L->sent = calloc(4 * (size_t)P, sizeof(int64_t));
    L->note = calloc(2 * (size_t)P, sizeof(int64_t));
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
    const MPI_Aint bytes = L->ctrl + (MPI_Aint)P * nslots * (MPI_Aint)sb;
    /* the window flavour: shared when every rank is on this machine (see
     * the header); the same answer everywhere, as MPI_Comm_split_type is */
    int shared = 0;
#ifdef OPEN_MPI
    const int want_shared = env_int("KPORT_RMA_SHARED", 1, 0, 1);
#else
    const int want_shared = env_int("KPORT_RMA_SHARED", 0, 0, 1);
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
            rc = kp_error(KP_ERR_MPI, "transport=rma: %s of %lld bytes (rail %d of %d) failed",
                          shared ? "MPI_Win_allocate_shared" : "MPI_Win_allocate", (long long)bytes, j, rails);
            break;
        }
        live_windows++;
        memset(L->base[j], 0, (size_t)L->ctrl);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, L->win[j]);
    }
    MPI_Info_free(&info);
    /* nobody notifies before every rank has zeroed its counters */
    if (!rc && MPI_Barrier(R->comm) != MPI_SUCCESS)
        rc = kp_error(KP_ERR_MPI, "transport=rma: MPI_Barrier after creating the windows failed");
    if (rc) {
        link_free(L); /* collective: every rank failed alike, or MPI is broken anyway */
        return rc;
    }
    *out = L;
    return KP_SUCCESS;
}

int kp_rma_ready(kp_comm *c, int rails)
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
    if (c->rma->link[rails])
        return KP_SUCCESS;
    return link_create(c->rma, rails, &c->rma->link[rails]);
}

/* ---- one round ---------------------------------------------------------------- */

static inline MPI_Aint slot_disp(const rma_link *L, int sender, int64_t n)
{
    return L->ctrl + ((MPI_Aint)sender * L->nslots + (MPI_Aint)(n % L->nslots)) * (MPI_Aint)L->sb;
}

static int read_ctrl(const kp_rma *R, const rma_link *L, MPI_Aint disp, int64_t *v)
{
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
    R->nmsgs = 0;
    R->pending = 0;
    return KP_SUCCESS;
}

int kp_rma_add(kp_plan *pl, const kp_op *op, char *p)
{
    kp_rma *R = pl->owner->rma;
    const rma_link *L = R->cur;
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

/* one sweep: put what the rings have room for, notify, copy out what has
 * arrived, return credits; *left = messages not finished */
static int sweep(kp_rma *R, int *left, int *moved)
{
    rma_link *L = R->cur;
    const int P = R->P;
    int rc = KP_SUCCESS;
    memset(L->flags, 0, (size_t)P);
    *left = 0;
    *moved = 0;
    /* sends, in order per target (a blocked one blocks later ones to it) */
    for (int i = 0; i < R->nmsgs && !rc; i++) {
        rma_msg *m = &R->msgs[i];
        if (!m->send || m->done == m->npieces)
            continue;
        const int q = m->peer;
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
        if (!(L->flags[q] & 4))
            continue;
        for (int j = 0; j < L->rails && !rc; j++)
            if ((L->rails_used[q] >> j & 1u) && MPI_Win_flush(q, L->win[j]) != MPI_SUCCESS)
                rc = kp_error(KP_ERR_MPI, "transport=rma: MPI_Win_flush to rank %d failed", q);
        L->rails_used[q] = 0;
        L->note[q] = L->sent[q];
        if (!rc && MPI_Accumulate(&L->note[q], 1, MPI_INT64_T, q, (MPI_Aint)R->me * CTRL, 1, MPI_INT64_T,
                                  MPI_REPLACE, L->win[0]) != MPI_SUCCESS)
            rc = kp_error(KP_ERR_MPI, "transport=rma: notifying rank %d failed", q);
        *moved = 1;
    }
    /* receives, in order per origin */
    int synced = 0;
    for (int i = 0; i < R->nmsgs && !rc; i++) {
        rma_msg *m = &R->msgs[i];
        if (m->send || m->done == m->npieces)
            continue;
        const int s = m->peer;
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
        if (MPI_Accumulate(&L->note[P + s], 1, MPI_INT64_T, s, (MPI_Aint)(P + R->me) * CTRL, 1, MPI_INT64_T,
                           MPI_REPLACE, L->win[0]) != MPI_SUCCESS)
            rc = kp_error(KP_ERR_MPI, "transport=rma: returning credits to rank %d failed", s);
        *moved = 1;
    }
    /* notifications and credits complete before their values may change */
    for (int q = 0; q < P && !rc; q++)
        if ((L->flags[q] & 12) && MPI_Win_flush(q, L->win[0]) != MPI_SUCCESS)
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
