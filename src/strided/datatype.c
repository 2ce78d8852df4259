/*
 * Method "datatype": one MPI operation whose origin and target layouts are
 * derived datatypes built from the strided descriptor (nested
 * MPI_Type_create_hvector over a contiguous row), the paper's NIC-based
 * method as today's MPI expresses it: the whole descriptor goes to the MPI
 * library (and, on RDMA networks that support it, to the network), which
 * walks it. Completion: MPI_Rput / MPI_Rget / MPI_Raccumulate's request;
 * on a shared window an accumulate is MPI_Accumulate and its flush under
 * the target's accumulate lock (win.c), complete when it returns.
 *
 * Cost: T_datatype = td0 + td1 * k + tdn * N: a fixed cost (one operation
 * and its request) plus what the library spends per chunk walking the
 * types and per byte copying through them (Open MPI's osc/sm copies with
 * its convertor, slower per byte than the direct method's memcpy); all
 * three measured (kport-bench strided --calibrate).
 *
 * The committed types are cached per window (KP_DT_CACHE layouts, least
 * recently used evicted): building and committing two types costs about
 * 1 us under Open MPI, more than the whole operation on a small section,
 * and programs repeat their sections (faces of a halo, blocks of a
 * matrix).
 *
 * Restriction: counts must fit an int (count[0] bytes, or elements for
 * accumulate, and every count[i]); otherwise KP_ERR_UNSUPPORTED (auto
 * never picks this method then).
 */
#include "strided/strided.h"

#include "util/env.h"
#include "util/error.h"

#include <limits.h>
#include <stdlib.h>

static int build(const kp_sd *sd, const kp_sd_side *side, MPI_Datatype base, int64_t n0, MPI_Datatype *out)
{
    MPI_Datatype t;
    if (MPI_Type_contiguous((int)n0, base, &t) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "strided datatype: MPI_Type_contiguous failed");
    for (int i = 1; i <= sd->levels; i++) {
        MPI_Datatype t2;
        if (MPI_Type_create_hvector((int)sd->count[i], 1, (MPI_Aint)side->stride[i - 1], t, &t2) != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "strided datatype: MPI_Type_create_hvector failed");
        MPI_Type_free(&t);
        t = t2;
    }
    MPI_Type_commit(&t);
    *out = t;
    return KP_SUCCESS;
}

/* The committed type of a layout: from the window's cache, or built and
 * cached (evicting the least recently used). The cache owns every type. */
static int lookup(kp_win w, const kp_sd *sd, const kp_sd_side *side, MPI_Datatype base, int64_t n0,
                  MPI_Datatype *out)
{
    struct kp_dt_entry *victim = &w->dtc[0];
    for (int e = 0; e < KP_DT_CACHE; e++) {
        struct kp_dt_entry *c = &w->dtc[e];
        if (c->type != MPI_DATATYPE_NULL && c->base == base && c->levels == sd->levels && c->n0 == n0) {
            int same = 1;
            for (int i = 0; same && i < sd->levels; i++)
                same = c->count[i] == sd->count[i + 1] && c->stride[i] == side->stride[i];
            if (same) {
                c->used = ++w->dtc_clock;
                *out = c->type;
                return KP_SUCCESS;
            }
        }
        if (c->used < victim->used)
            victim = c;
    }
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = build(sd, side, base, n0, &t);
    if (rc)
        return rc;
    if (victim->type != MPI_DATATYPE_NULL)
        MPI_Type_free(&victim->type);
    victim->type = t;
    victim->base = base;
    victim->levels = sd->levels;
    victim->n0 = n0;
    for (int i = 0; i < sd->levels; i++) {
        victim->count[i] = sd->count[i + 1];
        victim->stride[i] = side->stride[i];
    }
    victim->used = ++w->dtc_clock;
    *out = t;
    return KP_SUCCESS;
}

void kp_datatype_cache_free(kp_win w)
{
    for (int e = 0; e < KP_DT_CACHE; e++)
        if (w->dtc[e].type != MPI_DATATYPE_NULL)
            MPI_Type_free(&w->dtc[e].type);
}

int kp_datatype_start(kp_win w, const kp_strided_op *op, struct kp_request_s *req)
{
    const kp_sd *sd = &op->sd;
    for (int i = 0; i <= sd->levels; i++)
        if (sd->count[i] > INT_MAX)
            return kp_error(KP_ERR_UNSUPPORTED, "strided datatype: count[%d] = %lld does not fit an MPI count", i,
                            (long long)sd->count[i]);
    MPI_Datatype base = MPI_BYTE;
    int64_t n0 = sd->count[0];
    if (op->kind == KP_SD_ACC) {
        base = op->etype;
        n0 /= op->esize;
    }
    const void *src = op->lbase;
    MPI_Datatype lt = MPI_DATATYPE_NULL, rt = MPI_DATATYPE_NULL;
    int lcount = 1;
    int rc = KP_SUCCESS;
    if (op->kind == KP_SD_ACC) {
        char *tmp = NULL;
        rc = kp_acc_scaled_stream(op, &tmp);
        if (rc)
            return rc;
        if (tmp) {
            if (sd->total / op->esize > INT_MAX) {
                free(tmp);
                return kp_error(KP_ERR_UNSUPPORTED, "strided datatype: %lld elements do not fit an MPI count",
                                (long long)(sd->total / op->esize));
            }
            req->tmp = tmp;
            src = tmp;
            lt = base;
            lcount = (int)(sd->total / op->esize);
        }
    }
    if (lt == MPI_DATATYPE_NULL)
        rc = lookup(w, sd, &op->lside, base, n0, &lt);
    if (rc == KP_SUCCESS)
        rc = lookup(w, sd, &op->rside, base, n0, &rt);
    if (rc == KP_SUCCESS) {
        int e;
        w->cnt.data_ops++;
        if (op->kind == KP_SD_PUT)
            e = MPI_Rput(src, lcount, lt, op->target, (MPI_Aint)op->rdisp, 1, rt, w->win, &req->mreq);
        else if (op->kind == KP_SD_GET)
            e = MPI_Rget((void *)src, lcount, lt, op->target, (MPI_Aint)op->rdisp, 1, rt, w->win, &req->mreq);
        else if (!w->loadstore)
            e = MPI_Raccumulate(src, lcount, lt, op->target, (MPI_Aint)op->rdisp, 1, rt, MPI_SUM, w->win,
                                &req->mreq);
        else { /* a shared window: completed at the target under its accumulate lock (win.c) */
            kp_acc_lock(w, op->target);
            w->cnt.data_flushes++;
            e = MPI_Accumulate(src, lcount, lt, op->target, (MPI_Aint)op->rdisp, 1, rt, MPI_SUM, w->win);
            if (e == MPI_SUCCESS)
                e = MPI_Win_flush(op->target, w->win);
            kp_acc_unlock(w, op->target);
            req->copied = 1;
        }
        if (e != MPI_SUCCESS)
            rc = kp_error(KP_ERR_MPI, "strided datatype: MPI operation to rank %d failed", op->target);
    }
    return rc; /* the types stay in the cache */
}
