/*
 * The shared path of kp_allgather, kp_gather, kp_alltoall, kp_scatter and
 * kp_bcast: argument checks with MPI's semantics, datatype handling, plan
 * selection and execution (see args.h).
 *
 * A call's buffers are blocks of `bytes` (its shape): the send side has
 * nsblk blocks (all-gather and gather 1, all-to-all P, scatter P at the
 * root, broadcast none), the receive side nrblk (all-gather P, gather P at
 * the root, all-to-all P, scatter 1 except at an in-place root, broadcast 1:
 * the buffer). Some receive blocks hold input when the call starts (under
 * MPI_IN_PLACE the own block, for all-to-all every block; the broadcast
 * root's buffer) and some are left as they were (the own block in place,
 * the broadcast root's buffer).
 *
 * Datatypes: a type whose data is one gap-free run per element and whose
 * extent equals its size (every builtin type, MPI_Type_contiguous of those,
 * ...) is moved in place as bytes. A side (send or receive) whose type is
 * anything else is staged: its blocks are packed with MPI_Pack into kport's
 * staging buffer (pack.c: in pieces within MPI's int counts), the plan runs
 * on the packed bytes, and received blocks are unpacked one by one with
 * MPI_Unpack, so the gaps of the receive buffer are never touched. The
 * receive blocks that hold input are packed first.
 */
#include "core/args.h"
#include "exec/exec.h"
#include "util/clock.h"

#include <limits.h>
#include <stdint.h>

static int side_info(const char *fn, const char *which, MPI_Datatype t, MPI_Count count, kp_tinfo *ti,
                     int64_t *bytes)
{
    int rc = kp_type_info(t, fn, which, ti);
    return rc ? rc : kp_check_count(fn, which, count, ti, bytes);
}

/* address of block j (count elements each) of a user buffer */
static char *ublock(const void *buf, int64_t j, MPI_Count count, const kp_tinfo *ti)
{
    return (char *)buf + (MPI_Aint)(j * (int64_t)count * (int64_t)ti->extent);
}

/* which blocks a call of this rank has (see the top of the file) */
typedef struct shape {
    int64_t nsblk, nrblk;
    int64_t in_lo, in_hi; /* receive blocks [in_lo, in_hi) hold input */
    int64_t keep;         /* a receive block left unchanged (-1: none) */
    int64_t alias;        /* the send image is the receive image from block alias (-1: its own) */
} shape;

static shape shape_of(int coll, int P, int me, int root, int inplace)
{
    shape h = {0, 0, 0, 0, -1, -1};
    switch (coll) {
    case KP_COLL_ALLGATHER:
    case KP_COLL_GATHER:
        h.nsblk = inplace ? 0 : 1;
        h.nrblk = coll == KP_COLL_GATHER && me != root ? 0 : P;
        if (inplace)
            h = (shape){0, P, me, me + 1, me, me};
        break;
    case KP_COLL_ALLTOALL:
        h = inplace ? (shape){0, P, 0, P, -1, 0} : (shape){P, P, 0, 0, -1, -1};
        break;
    case KP_COLL_SCATTER:
        h.nsblk = me == root ? P : 0;
        h.nrblk = me == root && inplace ? 0 : 1;
        break;
    case KP_COLL_BCAST:
        h.nrblk = 1;
        if (me == root)
            h.in_hi = 1, h.keep = 0;
        break;
    }
    return h;
}

/* Run pl with the non-contiguous side(s) staged. */
static int run_packed(kp_comm *c, kp_plan *pl, const kp_call *k, const kp_tinfo *st, const kp_tinfo *rt,
                      const shape *h, int64_t bytes)
{
    const int stage_r = h->nrblk > 0 && !rt->contiguous, stage_s = h->nsblk > 0 && !st->contiguous;
    int rc;
    if (stage_r && (rc = kp_pack_size_ok(k->fn, c->user, "receive", k->rcount * h->nrblk, k->rtype, rt)))
        return rc;
    if (stage_s && (rc = kp_pack_size_ok(k->fn, c->user, "send", k->scount * h->nsblk, k->stype, st)))
        return rc;
    const int64_t rlen = stage_r ? h->nrblk * bytes : 0, slen = stage_s ? h->nsblk * bytes : 0;
    void *stage;
    if ((rc = kp_comm_stage(c, rlen + slen, &stage)))
        return rc;

    char *rimg = NULL;
    const char *simg = NULL;
    if (h->nrblk > 0)
        rimg = stage_r ? (char *)stage : (char *)k->rbuf + rt->true_lb;
    if (stage_r)
        for (int64_t j = h->in_lo; j < h->in_hi; j++)
            if ((rc = kp_pack_n(k->fn, c->user, ublock(k->rbuf, j, k->rcount, rt), k->rcount, k->rtype, rt,
                                rimg + j * bytes)))
                return rc;
    if (h->alias >= 0) {
        simg = rimg + h->alias * bytes;
    } else if (stage_s) {
        char *s = (char *)stage + rlen;
        for (int64_t j = 0; j < h->nsblk; j++)
            if ((rc = kp_pack_n(k->fn, c->user, ublock(k->sbuf, j, k->scount, st), k->scount, k->stype, st,
                                s + j * bytes)))
                return rc;
        simg = s;
    } else if (h->nsblk > 0) {
        simg = (const char *)k->sbuf + st->true_lb;
    }

    if ((rc = kp_exec_run(pl, simg, rimg)))
        return rc;

    if (stage_r)
        for (int64_t j = 0; j < h->nrblk; j++) {
            if (j == h->keep) /* not changed by the call */
                continue;
            if ((rc = kp_unpack_n(k->fn, c->user, rimg + j * bytes, k->rcount, ublock(k->rbuf, j, k->rcount, rt),
                                  k->rtype, rt)))
                return rc;
        }
    return KP_SUCCESS;
}

int kp_call_enter(const char *fn, MPI_Comm comm, kp_comm **c, int *P, int *me)
{
    int rc;
    *c = kp_comm_peek(comm); /* a communicator kport already checked */
    if ((rc = kp_settings_load()) || (!*c && (rc = kp_check_comm(fn, comm))))
        return rc;
    if (*c) {
        *P = (*c)->size;
        *me = (*c)->rank;
    } else {
        MPI_Comm_size(comm, P);
        MPI_Comm_rank(comm, me);
    }
    return KP_SUCCESS;
}

int kp_run_begin(kp_comm *c, int coll, int64_t bytes, int root, int inplace, int key_inplace, kp_run *r)
{
    int rc;
    *r = (kp_run){0};
    if ((rc = kp_select_plan(c, coll, bytes, root, key_inplace, &r->pl)))
        return rc;
    /* the calibrated choice, checked by measurement (select/verify.c) */
    r->pick = r->pl->algo; /* not the plan: getting the other one may evict it */
    if (kp_verify_applies(c, coll, bytes) &&
        (rc = kp_verify_begin(c, coll, bytes, root, inplace, &r->pl, &r->vt, &r->side)))
        return rc;
    kp_set_last_algorithm(coll, r->pl);
    r->t0 = r->vt ? kp_now_ns() : 0;
    return KP_SUCCESS;
}

int kp_run_end(kp_comm *c, int coll, const kp_run *r, int rc)
{
    if (r->vt && !rc)
        rc = kp_verify_end(c, coll, r->pick, r->vt, r->side, kp_now_ns() - r->t0);
    return rc;
}

int kp_call_run(const kp_call *k)
{
    const char *fn = k->fn;
    int rc, P, me;
    kp_comm *c;
    if ((rc = kp_call_enter(fn, k->comm, &c, &P, &me)))
        return rc;
    const int rooted = k->coll == KP_COLL_GATHER || k->coll == KP_COLL_SCATTER || k->coll == KP_COLL_BCAST;
    const int root = rooted ? k->root : 0;
    if (rooted && (root < 0 || root >= P))
        return kp_error(KP_ERR_ARG, "%s: root %d is not a rank of the communicator (size %d)", fn, root, P);
    /* MPI_IN_PLACE: the send buffer (scatter: the receive buffer) */
    const int inplace = k->coll == KP_COLL_SCATTER ? k->rbuf == MPI_IN_PLACE : k->sbuf == MPI_IN_PLACE;
    if (inplace && rooted && me != root)
        return kp_error(KP_ERR_ARG, "%s: MPI_IN_PLACE is only valid at the root (this is rank %d, root %d)", fn, me,
                        root);
    const shape h = shape_of(k->coll, P, me, root, inplace);

    kp_tinfo st = {0}, rt = {0};
    int64_t sbytes = 0, rbytes = 0;
    if (h.nrblk > 0 && (rc = side_info(fn, "receive", k->rtype, k->rcount, &rt, &rbytes)))
        return rc;
    if (h.nsblk > 0 && (rc = side_info(fn, "send", k->stype, k->scount, &st, &sbytes)))
        return rc;
    if (h.nrblk > 0 && h.nsblk > 0 && sbytes != rbytes)
        return kp_error(KP_ERR_COUNT,
                        "%s: send size %lld bytes (%lld elements of %lld) differs from receive size %lld bytes "
                        "(%lld elements of %lld)",
                        fn, (long long)sbytes, (long long)k->scount, (long long)st.size, (long long)rbytes,
                        (long long)k->rcount, (long long)rt.size);
    const int64_t bytes = h.nrblk > 0 ? rbytes : sbytes;
    if (bytes == 0)
        return KP_SUCCESS;
    if (h.nrblk > 0 && k->rbuf == NULL && rt.true_lb == 0)
        return kp_error(KP_ERR_ARG, "%s: %s is NULL with %s=%lld", fn, k->coll == KP_COLL_BCAST ? "buffer" : "recvbuf",
                        k->coll == KP_COLL_BCAST ? "count" : "rcount", (long long)k->rcount);
    if (h.nsblk > 0 && k->sbuf == NULL && st.true_lb == 0)
        return kp_error(KP_ERR_ARG, "%s: sendbuf is NULL with scount=%lld", fn, (long long)k->scount);
    if ((int64_t)P > INT64_MAX / 4 / bytes)
        return kp_error(KP_ERR_COUNT, "%s: P * bytes overflows", fn);

    if (!c && (rc = kp_comm_get(k->comm, &c)))
        return rc;
    c->calls++;
    kp_run run;
    /* all-gather schedules do not depend on MPI_IN_PLACE: one plan for both */
    if ((rc = kp_run_begin(c, k->coll, bytes, root, inplace, k->coll == KP_COLL_ALLGATHER ? 0 : inplace, &run)))
        return rc;
    if ((h.nrblk > 0 && !rt.contiguous) || (h.nsblk > 0 && !st.contiguous)) {
        rc = run_packed(c, run.pl, k, &st, &rt, &h, bytes);
    } else {
        char *rimg = h.nrblk > 0 ? (char *)k->rbuf + rt.true_lb : NULL;
        const char *simg = h.alias >= 0 ? rimg + h.alias * bytes
                           : h.nsblk > 0 ? (const char *)k->sbuf + st.true_lb
                                         : NULL;
        rc = kp_exec_run(run.pl, simg, rimg);
    }
    return kp_run_end(c, k->coll, &run, rc);
}
