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

/* gather a non-contiguous datatype through packed staging */
static int allgather_packed(kp_comm *c, kp_plan *pl, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                            void *rbuf, MPI_Count rcount, MPI_Datatype rtype, const kp_tinfo *rt, int64_t bytes)
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
    int rc;
    kp_tinfo st = {0}, rt;
    const int inplace = sendbuf == MPI_IN_PLACE;

    static const char fn[] = "kp_allgather";
    int64_t bytes, sbytes;
    if ((rc = kp_settings_load()) || (rc = kp_check_comm(fn, comm)))
        return rc;
    if ((rc = kp_type_info(rtype, fn, "receive", &rt)) || (rc = kp_check_count(fn, "receive", rcount, &rt, &bytes)))
        return rc;
    if (!inplace) {
        if ((rc = kp_type_info(stype, fn, "send", &st)) || (rc = kp_check_count(fn, "send", scount, &st, &sbytes)))
            return rc;
        if (sbytes != bytes)
            return kp_error(KP_ERR_COUNT,
                            "%s: send size %lld bytes (%lld elements of %lld) differs from receive size %lld bytes "
                            "(%lld elements of %lld)",
                            fn, (long long)sbytes, (long long)scount, (long long)st.size, (long long)bytes,
                            (long long)rcount, (long long)rt.size);
    }
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
    if ((rc = kp_select_plan(c, KP_COLL_ALLGATHER, bytes, 0, 0, &pl)))
        return rc;
    kp_set_last_algorithm(KP_COLL_ALLGATHER, pl->name);

    if (!rt.contiguous || (!inplace && !st.contiguous))
        return allgather_packed(c, pl, sendbuf, scount, stype, recvbuf, rcount, rtype, &rt, bytes);
    char *rbase = (char *)recvbuf + rt.true_lb;
    const char *sbase = inplace ? rbase + (int64_t)c->rank * bytes : (const char *)sendbuf + st.true_lb;
    return kp_exec_p2p(pl, c->comm, sbase, rbase);
}
