/*
 * The shared path of kp_allgather, kp_gather and kp_alltoall: argument
 * checks with MPI's semantics, datatype handling, plan selection and
 * execution (see args.h).
 *
 * Datatypes: a type whose data is one gap-free run per element and whose
 * extent equals its size (every builtin type, MPI_Type_contiguous of those,
 * ...) is moved in place as bytes. A side (send or receive) whose type is
 * anything else is staged: its blocks are packed with MPI_Pack into kport's
 * staging buffer (per block, so each MPI_Pack call stays within int counts),
 * the plan runs on the packed bytes, and received blocks are unpacked one by
 * one with MPI_Unpack, so the gaps of the receive buffer are never touched.
 * Under MPI_IN_PLACE with a staged receive side, the blocks the send buffer
 * aliases (the own block; for all-to-all the whole buffer) are packed first.
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

/* MPI_Pack_size must say exactly `bytes`, or packing could overrun a block */
static int pack_size_ok(const kp_call *k, MPI_Comm comm, const char *which, MPI_Count count, MPI_Datatype t,
                        int64_t bytes)
{
    int psize = -1;
    if (MPI_Pack_size((int)count, t, comm, &psize) != MPI_SUCCESS)
        return kp_error(KP_ERR_DATATYPE, "%s: MPI_Pack_size failed for the %s datatype", k->fn, which);
    if (psize != bytes)
        return kp_error(KP_ERR_DATATYPE, "%s: packed size %d of the %s data differs from its type size %lld", k->fn,
                        psize, which, (long long)bytes);
    return KP_SUCCESS;
}

static int pack(const kp_call *k, MPI_Comm comm, const void *in, MPI_Count count, MPI_Datatype t, char *out,
                int64_t bytes)
{
    int pos = 0;
    if (MPI_Pack(in, (int)count, t, out, (int)bytes, &pos, comm) != MPI_SUCCESS)
        return kp_error(KP_ERR_DATATYPE, "%s: MPI_Pack failed", k->fn);
    if (pos != bytes)
        return kp_error(KP_ERR_DATATYPE, "%s: packing gave %d bytes, expected %lld", k->fn, pos, (long long)bytes);
    return KP_SUCCESS;
}

static int unpack(const kp_call *k, MPI_Comm comm, const char *in, int64_t bytes, void *out, MPI_Count count,
                  MPI_Datatype t)
{
    int pos = 0;
    if (MPI_Unpack(in, (int)bytes, &pos, out, (int)count, t, comm) != MPI_SUCCESS)
        return kp_error(KP_ERR_DATATYPE, "%s: MPI_Unpack failed", k->fn);
    if (pos != bytes)
        return kp_error(KP_ERR_DATATYPE, "%s: unpacking used %d bytes, expected %lld", k->fn, pos, (long long)bytes);
    return KP_SUCCESS;
}

/* Run pl with the non-contiguous side(s) staged. */
static int run_packed(kp_comm *c, kp_plan *pl, const kp_call *k, const kp_tinfo *st, const kp_tinfo *rt,
                      int inplace, int has_recv, int64_t bytes)
{
    const int P = c->size, me = c->rank, a2a = k->coll == KP_COLL_ALLTOALL;
    const int stage_r = has_recv && !rt->contiguous, stage_s = !inplace && !st->contiguous;
    const int64_t nsblk = a2a ? P : 1;
    int rc;
    /* bytes > 0 here, so each staged count is at most bytes too */
    if (bytes > INT_MAX)
        return kp_error(KP_ERR_COUNT, "%s: a block of a non-contiguous datatype is limited to %d bytes (got %lld)",
                        k->fn, INT_MAX, (long long)bytes);
    if (stage_r) {
        if (rt->extent != 0 && (int64_t)k->rcount > INT64_MAX / 4 / P / (rt->extent < 0 ? -rt->extent : rt->extent))
            return kp_error(KP_ERR_COUNT, "%s: receive buffer extent overflows", k->fn);
        if ((rc = pack_size_ok(k, c->user, "receive", k->rcount, k->rtype, bytes)))
            return rc;
    }
    if (stage_s) {
        if (st->extent != 0 && (int64_t)k->scount > INT64_MAX / 4 / P / (st->extent < 0 ? -st->extent : st->extent))
            return kp_error(KP_ERR_COUNT, "%s: send buffer extent overflows", k->fn);
        if ((rc = pack_size_ok(k, c->user, "send", k->scount, k->stype, bytes)))
            return rc;
    }
    const int64_t rlen = stage_r ? (int64_t)P * bytes : 0, slen = stage_s ? nsblk * bytes : 0;
    void *stage;
    if ((rc = kp_comm_stage(c, rlen + slen, &stage)))
        return rc;

    char *rimg = NULL;
    const char *simg;
    if (has_recv)
        rimg = stage_r ? (char *)stage : (char *)k->rbuf + rt->true_lb;
    if (inplace) {
        simg = rimg + (a2a ? 0 : (int64_t)me * bytes);
        if (stage_r)
            for (int64_t j = a2a ? 0 : me; j < (a2a ? P : me + 1); j++)
                if ((rc = pack(k, c->user, ublock(k->rbuf, j, k->rcount, rt), k->rcount, k->rtype, rimg + j * bytes,
                               bytes)))
                    return rc;
    } else if (stage_s) {
        char *s = (char *)stage + rlen;
        for (int64_t j = 0; j < nsblk; j++)
            if ((rc = pack(k, c->user, ublock(k->sbuf, j, k->scount, st), k->scount, k->stype, s + j * bytes,
                           bytes)))
                return rc;
        simg = s;
    } else {
        simg = (const char *)k->sbuf + st->true_lb;
    }

    if ((rc = kp_exec_run(pl, simg, rimg)))
        return rc;

    if (stage_r)
        for (int64_t j = 0; j < P; j++) {
            if (inplace && !a2a && j == me) /* the own block was not changed */
                continue;
            if ((rc = unpack(k, c->user, rimg + j * bytes, bytes, ublock(k->rbuf, j, k->rcount, rt), k->rcount,
                             k->rtype)))
                return rc;
        }
    return KP_SUCCESS;
}

int kp_call_run(const kp_call *k)
{
    const char *fn = k->fn;
    int rc, P, me;
    kp_comm *c = kp_comm_peek(k->comm); /* a communicator kport already checked */
    if ((rc = kp_settings_load()) || (!c && (rc = kp_check_comm(fn, k->comm))))
        return rc;
    if (c) {
        P = c->size;
        me = c->rank;
    } else {
        MPI_Comm_size(k->comm, &P);
        MPI_Comm_rank(k->comm, &me);
    }
    const int inplace = k->sbuf == MPI_IN_PLACE;
    int has_recv = 1, root = 0;
    if (k->coll == KP_COLL_GATHER) {
        if (k->root < 0 || k->root >= P)
            return kp_error(KP_ERR_ARG, "%s: root %d is not a rank of the communicator (size %d)", fn, k->root, P);
        root = k->root;
        has_recv = me == root;
        if (inplace && !has_recv)
            return kp_error(KP_ERR_ARG, "%s: MPI_IN_PLACE is only valid at the root (this is rank %d, root %d)", fn,
                            me, root);
    }

    kp_tinfo st = {0}, rt = {0};
    int64_t sbytes = 0, rbytes = 0;
    if (has_recv && (rc = side_info(fn, "receive", k->rtype, k->rcount, &rt, &rbytes)))
        return rc;
    if (!inplace && (rc = side_info(fn, "send", k->stype, k->scount, &st, &sbytes)))
        return rc;
    if (has_recv && !inplace && sbytes != rbytes)
        return kp_error(KP_ERR_COUNT,
                        "%s: send size %lld bytes (%lld elements of %lld) differs from receive size %lld bytes "
                        "(%lld elements of %lld)",
                        fn, (long long)sbytes, (long long)k->scount, (long long)st.size, (long long)rbytes,
                        (long long)k->rcount, (long long)rt.size);
    const int64_t bytes = has_recv ? rbytes : sbytes;
    if (bytes == 0)
        return KP_SUCCESS;
    if (has_recv && k->rbuf == NULL && rt.true_lb == 0)
        return kp_error(KP_ERR_ARG, "%s: recvbuf is NULL with rcount=%lld", fn, (long long)k->rcount);
    if (!inplace && k->sbuf == NULL && st.true_lb == 0)
        return kp_error(KP_ERR_ARG, "%s: sendbuf is NULL with scount=%lld", fn, (long long)k->scount);
    if ((int64_t)P > INT64_MAX / 4 / bytes)
        return kp_error(KP_ERR_COUNT, "%s: P * bytes overflows", fn);

    if (!c && (rc = kp_comm_get(k->comm, &c)))
        return rc;
    c->calls++;
    kp_plan *pl;
    /* all-gather schedules do not depend on MPI_IN_PLACE: one plan for both */
    if ((rc = kp_select_plan(c, k->coll, bytes, root, k->coll == KP_COLL_ALLGATHER ? 0 : inplace, &pl)))
        return rc;
    /* the calibrated choice, checked by measurement (select/verify.c) */
    const kp_algo *pick = pl->algo; /* not the plan: getting the other one may evict it */
    void *vt = NULL;
    int side = 0;
    if (kp_verify_applies(c, k->coll, bytes) &&
        (rc = kp_verify_begin(c, k->coll, bytes, root, inplace, &pl, &vt, &side)))
        return rc;
    kp_set_last_algorithm(k->coll, pl);
    const double t0 = vt ? kp_now_ns() : 0;

    if ((has_recv && !rt.contiguous) || (!inplace && !st.contiguous)) {
        rc = run_packed(c, pl, k, &st, &rt, inplace, has_recv, bytes);
    } else {
        char *rimg = has_recv ? (char *)k->rbuf + rt.true_lb : NULL;
        const char *simg = inplace ? rimg + (k->coll == KP_COLL_ALLTOALL ? 0 : (int64_t)me * bytes)
                                   : (const char *)k->sbuf + st.true_lb;
        rc = kp_exec_run(pl, simg, rimg);
    }
    if (vt && !rc)
        rc = kp_verify_end(c, k->coll, pick, vt, side, kp_now_ns() - t0);
    return rc;
}
