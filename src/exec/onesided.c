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
 * (core/comm.c). Rank r's window j:
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
 * Rounds. run.c walks the schedule; per round it adds the message ops
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
#include "exec/onesided_int.h"
#include "util/error.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

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
                kp_osc_detach_calls++;
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
        kp_osc_detach_calls++;
        A[v].len = 0;
    }
    for (int j = 0; j < L->rails; j++)
        if (MPI_Win_attach(L->dwin[j], lo, (MPI_Aint)(hi - lo)) != MPI_SUCCESS) {
            for (int i = 0; i < j; i++)
                MPI_Win_detach(L->dwin[i], lo);
            kp_error(KP_ERR_MPI, "transport=rma: MPI_Win_attach of %lld bytes failed", (long long)(hi - lo));
            return -1;
        }
    kp_osc_attach_calls++;
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
 * is published (run.c adds a round's messages before its first sweep, and
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
