/*
 * Method "pack": host packing into pipelined bounce buffers, written into a
 * target-side pool of slots with flow control, unpacked at the target by
 * its progress agent (the paper's host-based NIC-assisted method, section
 * 5.1, with MPI atomics doing what the Elan thread processor did).
 *
 * Put / accumulate of N bytes to target T (S slots of B data bytes each):
 *
 *   1. reserve n = ceil(N / B) consecutive tickets t0..t0+n-1 with one
 *      MPI_Fetch_and_op(+n) on T's reserve counter; ticket t uses slot
 *      t mod S;
 *   2. for piece i: pack bytes [iB, iB+B) of the section into bounce buffer
 *      i mod 2, behind a header (the descriptor: kind, element type, target
 *      displacement, counts, target strides, the piece's stream range) -
 *      while piece i-1's MPI_Put is in flight; then flush piece i-1 and
 *      publish it (ready[s] = t+1, an atomic replace); wait until slot s is
 *      free for ticket t (turn[s] == t, polled with MPI_NO_OP fetches while
 *      running this rank's own agent and pending gets, so two ranks filling
 *      each other's pools never deadlock); put header + data in ONE
 *      MPI_Put: the descriptor travels with the data, the ready word
 *      follows only after the flush, as the paper's chained descriptor
 *      DMA follows the data;
 *   3. return: the origin buffer is reusable (ARMCI's local completion);
 *      kp_win_fence waits for turn[s] >= t+S of the last ticket (processed).
 *
 * The agent (target side) processes tickets strictly in order: when
 * ready[next mod S] == next+1 it unpacks the slot into its window memory
 * (put), or applies it with MPI_Accumulate(MPI_SUM) into its own window
 * (accumulate: the same element-wise atomicity as every other method's
 * accumulates; on a shared window it adds by load/store under its own
 * accumulate lock, win.c), and frees the slot: turn = next+S. Accumulate
 * data are scaled at the origin while packing.
 *
 * Get mirrors it: the origin writes header-only requests into reserved
 * slots; the agent packs the requested bytes into the slot and sets ready
 * to (t+1) | REPLY; the origin reads the slot (MPI_Get), unpacks locally and
 * frees the slot itself. Gets are state machines advanced by kp_wait,
 * kp_test and every other kport call on any window (kp_strided_progress).
 *
 * Every waiting loop here (a slot's turn, the fence) runs the progress of
 * every live window of the process (win.c, kp_strided_progress), not only this
 * one's: the rank it waits for may itself be waiting, inside a call on
 * another window, for this rank's agent of that window.
 *
 * Cost (the paper's equation 2, per piece of B bytes): T_pack = n * tp +
 * tpn * N + 2 * tc * k, with tp the slot protocol (fetch-add, turn poll,
 * flush, ready write), tpn the cost per byte as the caller waits for it
 * (packing, the slot writes, what of the target's unpacking the pipeline
 * does not hide) and tc per chunk (packing and unpacking k chunks); a get
 * pays tpg per slot and tpgn per byte (auto.c). Memory: two bounce
 * buffers per window at the origin; S * (256 + B) bytes of pool per rank.
 * Flow control: at most S pieces are in any rank's pool; an origin with
 * more pieces than free slots waits for the target's agent.
 */
#include "strided/strided.h"

#include "util/env.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static void fill_hdr(kp_win w, const kp_strided_op *op, kp_slot_hdr *h, int64_t t, int64_t off, int64_t len)
{
    memset(h, 0, sizeof(*h));
    h->kind = op->kind;
    h->acc_type = op->acc_type;
    h->levels = op->sd.levels;
    h->origin = w->rank;
    h->disp = op->rdisp;
    for (int i = 0; i <= op->sd.levels; i++)
        h->count[i] = op->sd.count[i];
    for (int i = 0; i < op->sd.levels; i++)
        h->stride[i] = op->rside.stride[i];
    h->off = off;
    h->len = len;
    h->ticket = t;
}

/* Wait until slot of ticket t at target is free, running local progress. */
static int wait_turn(kp_win w, int target, int64_t t)
{
    int s = (int)(t % w->nslots);
    unsigned spins = 0;
    for (;;) {
        int64_t turn;
        int rc = kp_pool_read(w, target, kp_ctrl_turn(s), &turn);
        if (rc)
            return rc;
        if (turn == t)
            return KP_SUCCESS;
        if (turn > t)
            return kp_error(KP_ERR_INTERNAL, "strided pack: slot %d at rank %d is at turn %lld past ticket %lld", s,
                            target, (long long)turn, (long long)t);
        rc = kp_strided_progress(w);
        if (rc)
            return rc;
        kp_strided_idle(w, &spins);
    }
}

int kp_pack_start(kp_win w, const kp_strided_op *op, struct kp_request_s *req)
{
    int rc = KP_SUCCESS;
    const int T = op->target;
    const int64_t N = op->sd.total, B = w->slot_bytes;
    if (op->kind == KP_SD_GET) {
        req->sd = op->sd;
        req->lside = op->lside;
        req->rside = op->rside;
        req->lbase = op->lbase;
        req->rdisp = op->rdisp;
        req->npieces = ceil_div(N, B);
        req->buf = malloc((size_t)(KP_SLOT_HDR + B));
        if (!req->buf)
            return kp_error(KP_ERR_NOMEM, "strided pack get: out of memory");
        rc = kp_pool_fadd(w, T, KP_CTRL_RESERVE, req->npieces, &req->t0);
        if (rc)
            return rc;
        req->next = w->reqs;
        w->reqs = req;
        int fin;
        return kp_pack_get_step(w, req, &fin);
    }
    const int64_t n = ceil_div(N, B);
    int64_t t0;
    rc = kp_pool_fadd(w, T, KP_CTRL_RESERVE, n, &t0);
    if (rc)
        return rc;
    for (int64_t i = 0; i < n && rc == KP_SUCCESS; i++) {
        int64_t t = t0 + i, off = i * B, len = N - off < B ? N - off : B;
        char *b = w->bounce[i & 1];
        fill_hdr(w, op, (kp_slot_hdr *)(void *)b, t, off, len);
        kp_sd_pack_range(&op->sd, &op->lside, op->lbase, off, len, b + KP_SLOT_HDR);
        if (op->kind == KP_SD_ACC)
            kp_acc_scale(op->acc_type, op->scale, b + KP_SLOT_HDR, b + KP_SLOT_HDR, len);
        if (i > 0) { /* piece i-1 was in flight while we packed piece i */
            w->cnt.pool_flushes++;
            if (MPI_Win_flush(T, w->pool) != MPI_SUCCESS)
                return kp_error(KP_ERR_MPI, "strided pack: MPI_Win_flush(%d) failed", T);
            rc = kp_pool_write(w, T, kp_ctrl_ready((int)((t - 1) % w->nslots)), t);
            if (rc)
                return rc;
        }
        rc = wait_turn(w, T, t);
        if (rc)
            return rc;
        w->cnt.pool_ops++;
        if (MPI_Put(b, (int)(KP_SLOT_HDR + len), MPI_BYTE, T, kp_slot_disp(w, (int)(t % w->nslots)),
                    (int)(KP_SLOT_HDR + len), MPI_BYTE, w->pool) != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "strided pack: MPI_Put of a slot to rank %d failed", T);
    }
    if (n > 0) {
        w->cnt.pool_flushes++;
        if (MPI_Win_flush(T, w->pool) != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "strided pack: MPI_Win_flush(%d) failed", T);
        int64_t t = t0 + n - 1;
        rc = kp_pool_write(w, T, kp_ctrl_ready((int)(t % w->nslots)), t + 1);
        w->pack_pending[T] = t + 1;
    }
    req->done = 1;
    return rc;
}

int kp_pack_get_step(kp_win w, struct kp_request_s *req, int *finished)
{
    int rc = KP_SUCCESS, progress = 1;
    const int T = req->target;
    const int64_t N = req->sd.total, B = w->slot_bytes, S = w->nslots;
    while (progress && rc == KP_SUCCESS) {
        progress = 0;
        if (req->sent < req->npieces && req->sent - req->harvested < S) {
            int64_t t = req->t0 + req->sent;
            int s = (int)(t % S);
            int64_t turn;
            rc = kp_pool_read(w, T, kp_ctrl_turn(s), &turn);
            if (rc == KP_SUCCESS && turn == t) {
                kp_strided_op op;
                memset(&op, 0, sizeof(op));
                op.kind = KP_SD_GET;
                op.sd = req->sd;
                op.rside = req->rside;
                op.rdisp = req->rdisp;
                int64_t off = req->sent * B, len = N - off < B ? N - off : B;
                kp_slot_hdr h;
                fill_hdr(w, &op, &h, t, off, len);
                w->cnt.pool_ops++;
                w->cnt.pool_flushes++;
                if (MPI_Put(&h, (int)sizeof(h), MPI_BYTE, T, kp_slot_disp(w, s), (int)sizeof(h), MPI_BYTE,
                            w->pool) != MPI_SUCCESS ||
                    MPI_Win_flush(T, w->pool) != MPI_SUCCESS)
                    return kp_error(KP_ERR_MPI, "strided pack get: request to rank %d failed", T);
                rc = kp_pool_write(w, T, kp_ctrl_ready(s), t + 1);
                req->sent++;
                progress = 1;
            }
        }
        if (rc == KP_SUCCESS && req->harvested < req->sent) {
            int64_t t = req->t0 + req->harvested;
            int s = (int)(t % S);
            int64_t ready;
            rc = kp_pool_read(w, T, kp_ctrl_ready(s), &ready);
            if (rc == KP_SUCCESS && ready == ((t + 1) | KP_READY_REPLY)) {
                int64_t off = req->harvested * B, len = N - off < B ? N - off : B;
                w->cnt.pool_ops++;
                w->cnt.pool_flushes++;
                if (MPI_Get(req->buf, (int)len, MPI_BYTE, T, kp_slot_disp(w, s) + KP_SLOT_HDR, (int)len, MPI_BYTE,
                            w->pool) != MPI_SUCCESS ||
                    MPI_Win_flush(T, w->pool) != MPI_SUCCESS)
                    return kp_error(KP_ERR_MPI, "strided pack get: reading a slot of rank %d failed", T);
                kp_sd_unpack_range(&req->sd, &req->lside, req->lbase, off, len, req->buf);
                rc = kp_pool_write(w, T, kp_ctrl_turn(s), t + S);
                req->harvested++;
                progress = 1;
            }
        }
    }
    *finished = req->harvested == req->npieces;
    return rc;
}

/* ---- the agent ------------------------------------------------------------ */

typedef struct acc_arg {
    kp_win w;
    const char *data;
    int64_t off0, disp;
    MPI_Datatype etype;
    int esize;
} acc_arg;

static int acc_run(int64_t where, int64_t soff, int64_t n, void *a)
{
    acc_arg *c = a;
    const char *src = c->data + (soff - c->off0);
    while (n > 0) {
        int64_t part = n > ((int64_t)1 << 30) ? ((int64_t)1 << 30) : n;
        int cnt = (int)(part / c->esize);
        c->w->cnt.data_ops++;
        if (MPI_Accumulate(src, cnt, c->etype, c->w->rank, c->disp + where, cnt, c->etype, MPI_SUM, c->w->win) !=
            MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "strided pack: MPI_Accumulate into the own window failed");
        src += part;
        where += part;
        n -= part;
    }
    return 0;
}

typedef struct add_arg {
    kp_win w;
    const char *data;
    int64_t off0, disp;
    int type;
} add_arg;

/* one run by load/store (the data were scaled at the origin) */
static int add_run(int64_t where, int64_t soff, int64_t n, void *a)
{
    add_arg *c = a;
    static const int i1 = 1;
    static const long l1 = 1;
    static const float f1 = 1;
    static const double d1 = 1;
    const void *one = c->type == KP_ACC_INT ? (const void *)&i1
                      : c->type == KP_ACC_LONG ? (const void *)&l1
                      : c->type == KP_ACC_FLOAT ? (const void *)&f1
                                                : (const void *)&d1;
    kp_acc_add_rows(c->type, one, c->w->base + c->disp + where, c->data + (soff - c->off0), n, 1, 0, 0);
    c->w->cnt.shm_chunks++;
    return 0;
}

static MPI_Datatype acc_mpi_type(int t, int *esize)
{
    switch (t) {
    case KP_ACC_INT: *esize = (int)sizeof(int); return MPI_INT;
    case KP_ACC_LONG: *esize = (int)sizeof(long); return MPI_LONG;
    case KP_ACC_FLOAT: *esize = (int)sizeof(float); return MPI_FLOAT;
    default: *esize = (int)sizeof(double); return MPI_DOUBLE;
    }
}

int kp_agent_run(kp_win w)
{
    int rc = KP_SUCCESS;
    int64_t *ctrl = (int64_t *)(void *)w->pool_base;
    for (;;) {
        int64_t t = w->agent_next;
        int s = (int)(t % w->nslots);
        int64_t *rp = &ctrl[kp_ctrl_ready(s) / 8];
        /* unified memory: origins' atomics reach this memory without a
         * call here, so an empty slot costs one load (every kport call
         * polls; MPI_Win_sync is a third of a small put's instructions);
         * the sync runs before the slot is read */
        if (w->pool_unified && __atomic_load_n(rp, __ATOMIC_ACQUIRE) != t + 1)
            break;
        MPI_Win_sync(w->pool);
        int64_t ready = __atomic_load_n(rp, __ATOMIC_ACQUIRE);
        if (ready != t + 1)
            break;
        kp_slot_hdr h;
        char *slot = w->pool_base + kp_slot_disp(w, s);
        memcpy(&h, slot, sizeof(h));
        char *data = slot + KP_SLOT_HDR;
        kp_sd sd;
        kp_sd_side side;
        memset(&sd, 0, sizeof(sd));
        memset(&side, 0, sizeof(side));
        sd.levels = h.levels;
        for (int i = 0; i <= h.levels; i++)
            sd.count[i] = h.count[i];
        for (int i = 0; i < h.levels; i++)
            side.stride[i] = h.stride[i];
        if (h.ticket != t || h.levels < 0 || h.levels > KP_SD_MAXL || h.len < 0 || h.len > w->slot_bytes)
            return kp_error(KP_ERR_INTERNAL, "strided agent: slot %d holds a corrupt header (ticket %lld, expected %lld)",
                            s, (long long)h.ticket, (long long)t);
        if (h.kind == KP_SD_PUT) {
            MPI_Win_sync(w->win);
            kp_sd_unpack_range(&sd, &side, w->base + h.disp, h.off, h.len, data);
            MPI_Win_sync(w->win);
            rc = kp_pool_write(w, w->rank, kp_ctrl_turn(s), t + w->nslots);
        } else if (h.kind == KP_SD_ACC && w->loadstore) {
            /* a shared window: added here under this rank's accumulate lock (win.c) */
            add_arg a = {w, data, h.off, h.disp, h.acc_type};
            kp_acc_lock(w, w->rank);
            MPI_Win_sync(w->win);
            kp_sd_runs(&sd, &side, h.off, h.len, add_run, &a);
            MPI_Win_sync(w->win);
            kp_acc_unlock(w, w->rank);
            rc = kp_pool_write(w, w->rank, kp_ctrl_turn(s), t + w->nslots);
        } else if (h.kind == KP_SD_ACC) {
            acc_arg a = {w, data, h.off, h.disp, MPI_DATATYPE_NULL, 0};
            a.etype = acc_mpi_type(h.acc_type, &a.esize);
            rc = kp_sd_runs(&sd, &side, h.off, h.len, acc_run, &a);
            w->cnt.data_flushes++;
            if (rc == KP_SUCCESS && MPI_Win_flush(w->rank, w->win) != MPI_SUCCESS)
                rc = kp_error(KP_ERR_MPI, "strided agent: MPI_Win_flush(self) failed");
            if (rc == KP_SUCCESS)
                rc = kp_pool_write(w, w->rank, kp_ctrl_turn(s), t + w->nslots);
        } else { /* get: pack the reply into the slot; the origin frees it */
            MPI_Win_sync(w->win);
            kp_sd_pack_range(&sd, &side, w->base + h.disp, h.off, h.len, data);
            MPI_Win_sync(w->pool);
            rc = kp_pool_write(w, w->rank, kp_ctrl_ready(s), (t + 1) | KP_READY_REPLY);
        }
        if (rc)
            return rc;
        w->agent_next = t + 1;
    }
    return rc;
}

int kp_strided_progress_win(kp_win w)
{
    int rc = kp_agent_run(w);
    struct kp_request_s **pp = &w->reqs;
    while (rc == KP_SUCCESS && *pp) {
        struct kp_request_s *r = *pp;
        int fin = 0;
        rc = kp_pack_get_step(w, r, &fin);
        if (fin) {
            r->done = 1;
            free(r->buf);
            r->buf = NULL;
            *pp = r->next;
        } else {
            pp = &r->next;
        }
    }
    return rc;
}

int kp_pack_fence(kp_win w, int target)
{
    int64_t last = w->pack_pending[target];
    if (last == 0)
        return KP_SUCCESS;
    int64_t t = last - 1;
    int s = (int)(t % w->nslots);
    unsigned spins = 0;
    for (;;) {
        int64_t turn;
        int rc = kp_pool_read(w, target, kp_ctrl_turn(s), &turn);
        if (rc)
            return rc;
        if (turn >= t + w->nslots)
            break;
        rc = kp_strided_progress(w);
        if (rc)
            return rc;
        kp_strided_idle(w, &spins);
    }
    w->pack_pending[target] = 0;
    kp_pend_clear(w, target, KP_PD_PACK);
    return KP_SUCCESS;
}
