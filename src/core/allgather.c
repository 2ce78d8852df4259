/*
 * kp_allgather: argument checking, datatype handling, then the selected
 * plan on kport's private communicator.
 *
 * Datatypes: a type whose data is one gap-free run per element and whose
 * extent equals its size (every builtin type, MPI_Type_contiguous of those,
 * ...) is moved in place as bytes. Any other type is packed with MPI_Pack
 * into a staging buffer, gathered as bytes and unpacked per block with
 * MPI_Unpack, so the gaps of the receive buffer are never touched.
 */
#include "core/core.h"

#include <stdint.h>
#include <string.h>

typedef struct {
    MPI_Count size, extent, true_lb, true_extent;
    int contiguous;
} tinfo;

static int type_info(MPI_Datatype t, const char *which, tinfo *ti)
{
    MPI_Count lb;
    if (t == MPI_DATATYPE_NULL)
        return kp_error(KP_ERR_DATATYPE, "kp_allgather: %s datatype is MPI_DATATYPE_NULL", which);
    if (MPI_Type_size_x(t, &ti->size) != MPI_SUCCESS || MPI_Type_get_extent_x(t, &lb, &ti->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &ti->true_lb, &ti->true_extent) != MPI_SUCCESS)
        return kp_error(KP_ERR_DATATYPE, "kp_allgather: %s datatype is not a valid (committed) datatype", which);
    if (ti->size == MPI_UNDEFINED || ti->size < 0)
        return kp_error(KP_ERR_DATATYPE, "kp_allgather: %s datatype has an undefined size", which);
    ti->contiguous = ti->size == ti->extent && ti->size == ti->true_extent;
    return KP_SUCCESS;
}

/* gather a non-contiguous datatype through packed staging */
static int allgather_packed(kp_comm *c, kp_plan *pl, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                            void *rbuf, MPI_Count rcount, MPI_Datatype rtype, const tinfo *rt, int64_t bytes)
{
    const int P = c->size, me = c->rank;
    if (scount > INT32_MAX || rcount > INT32_MAX)
        return kp_error(KP_ERR_COUNT, "kp_allgather: non-contiguous datatypes are limited to counts < 2^31");
    int psize = 0;
    MPI_Pack_size((int)rcount, rtype, c->comm, &psize);
    if (psize != bytes)
        return kp_error(KP_ERR_DATATYPE, "kp_allgather: packed size %d differs from the type size %lld", psize,
                        (long long)bytes);
    void *stage;
    int rc = kp_comm_stage(c, (int64_t)(P + 1) * bytes, &stage);
    if (rc)
        return rc;
    char *all = stage, *mine = (char *)stage + (int64_t)P * bytes;
    int pos = 0;
    if (sbuf == MPI_IN_PLACE)
        MPI_Pack((char *)rbuf + (MPI_Aint)(me * rcount * rt->extent), (int)rcount, rtype, mine, (int)bytes, &pos,
                 c->comm);
    else
        MPI_Pack(sbuf, (int)scount, stype, mine, (int)bytes, &pos, c->comm);
    if (pos != bytes)
        return kp_error(KP_ERR_DATATYPE, "kp_allgather: packing gave %d bytes, expected %lld", pos, (long long)bytes);
    rc = kp_exec_p2p(pl, c->comm, mine, all);
    if (rc)
        return rc;
    for (int j = 0; j < P; j++) {
        if (j == me && sbuf == MPI_IN_PLACE)
            continue;
        pos = 0;
        MPI_Unpack(all + (int64_t)j * bytes, (int)bytes, &pos, (char *)rbuf + (MPI_Aint)(j * rcount * rt->extent),
                   (int)rcount, rtype, c->comm);
    }
    return KP_SUCCESS;
}

int kp_allgather(const void *sendbuf, MPI_Count scount, MPI_Datatype stype, void *recvbuf, MPI_Count rcount,
                 MPI_Datatype rtype, MPI_Comm comm)
{
    int rc, inter = 0;
    tinfo st = {0}, rt;
    const int inplace = sendbuf == MPI_IN_PLACE;

    if ((rc = kp_settings_load()))
        return rc;
    if (comm == MPI_COMM_NULL)
        return kp_error(KP_ERR_COMM, "kp_allgather: communicator is MPI_COMM_NULL");
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return kp_error(KP_ERR_COMM, "kp_allgather: invalid communicator");
    if (inter)
        return kp_error(KP_ERR_COMM, "kp_allgather: inter-communicators are not supported");
    if (rcount < 0 || (!inplace && scount < 0))
        return kp_error(KP_ERR_COUNT, "kp_allgather: negative count (scount=%lld, rcount=%lld)", (long long)scount,
                        (long long)rcount);
    if ((rc = type_info(rtype, "receive", &rt)))
        return rc;
    if (!inplace && (rc = type_info(stype, "send", &st)))
        return rc;
    if (rt.size > 0 && rcount > INT64_MAX / 4 / rt.size)
        return kp_error(KP_ERR_COUNT, "kp_allgather: rcount=%lld overflows", (long long)rcount);
    const int64_t bytes = (int64_t)rcount * rt.size;
    if (!inplace && (st.size > 0 && scount > INT64_MAX / 4 / st.size))
        return kp_error(KP_ERR_COUNT, "kp_allgather: scount=%lld overflows", (long long)scount);
    if (!inplace && (int64_t)scount * st.size != bytes)
        return kp_error(KP_ERR_COUNT,
                        "kp_allgather: send size %lld bytes (%lld elements of %lld) differs from receive size %lld "
                        "bytes (%lld elements of %lld)",
                        (long long)((int64_t)scount * st.size), (long long)scount, (long long)st.size,
                        (long long)bytes, (long long)rcount, (long long)rt.size);
    if (bytes == 0)
        return KP_SUCCESS;
    if (recvbuf == NULL && rt.true_lb == 0)
        return kp_error(KP_ERR_ARG, "kp_allgather: recvbuf is NULL with rcount=%lld", (long long)rcount);
    if (!inplace && sendbuf == NULL && st.true_lb == 0)
        return kp_error(KP_ERR_ARG, "kp_allgather: sendbuf is NULL with scount=%lld", (long long)scount);

    kp_comm *c;
    if ((rc = kp_comm_get(comm, &c)))
        return rc;
    if ((int64_t)c->size > INT64_MAX / 4 / bytes)
        return kp_error(KP_ERR_COUNT, "kp_allgather: P * bytes overflows");
    kp_plan *pl;
    if ((rc = kp_select_plan(c, KP_COLL_ALLGATHER, bytes, &pl)))
        return rc;
    kp_set_last_algorithm(KP_COLL_ALLGATHER, pl->name);

    if (!rt.contiguous || (!inplace && !st.contiguous))
        return allgather_packed(c, pl, sendbuf, scount, stype, recvbuf, rcount, rtype, &rt, bytes);
    char *rbase = (char *)recvbuf + rt.true_lb;
    const char *sbase = inplace ? rbase + (int64_t)c->rank * bytes : (const char *)sendbuf + st.true_lb;
    return kp_exec_p2p(pl, c->comm, sbase, rbase);
}
