/*
 * Staging of non-contiguous datatypes (args.h): n elements packed with
 * MPI_Pack into consecutive bytes and unpacked with MPI_Unpack, in pieces
 * whose counts and byte sizes stay within MPI's int arguments. Shared by
 * the data collectives (args.c) and the reductions (redargs.c).
 */
#include "core/args.h"

#include <limits.h>

/* elements per MPI_Pack call: count and bytes within int */
static int64_t piece_of(const kp_tinfo *ti)
{
    const int64_t by_bytes = ti->size > 0 ? INT_MAX / ti->size : INT_MAX;
    return by_bytes < INT_MAX ? (by_bytes > 0 ? by_bytes : 1) : INT_MAX;
}

static int64_t abs64(int64_t x)
{
    return x < 0 ? -x : x;
}

int kp_pack_size_ok(const char *fn, MPI_Comm comm, const char *which, MPI_Count count, MPI_Datatype t,
                    const kp_tinfo *ti)
{
    /* one element: MPI_Pack_size must say its type size, or packing could
     * overrun the staging buffer */
    int psize = -1;
    (void)count;
    if (MPI_Pack_size(1, t, comm, &psize) != MPI_SUCCESS)
        return kp_error(KP_ERR_DATATYPE, "%s: MPI_Pack_size failed for the %s datatype", fn, which);
    if (psize != ti->size)
        return kp_error(KP_ERR_DATATYPE, "%s: packed size %d of one %s element differs from its type size %lld", fn,
                        psize, which, (long long)ti->size);
    if (ti->extent != 0 && (int64_t)count > INT64_MAX / 4 / abs64((int64_t)ti->extent))
        return kp_error(KP_ERR_COUNT, "%s: %s buffer extent overflows", fn, which);
    return KP_SUCCESS;
}

int kp_pack_n(const char *fn, MPI_Comm comm, const void *in, int64_t n, MPI_Datatype t, const kp_tinfo *ti, char *out)
{
    const int64_t piece = piece_of(ti);
    for (int64_t i = 0; i < n; i += piece) {
        const int c = (int)(n - i < piece ? n - i : piece), want = (int)(c * ti->size);
        int pos = 0;
        if (MPI_Pack((const char *)in + (MPI_Aint)(i * ti->extent), c, t, out + i * ti->size, want, &pos, comm) !=
            MPI_SUCCESS)
            return kp_error(KP_ERR_DATATYPE, "%s: MPI_Pack failed", fn);
        if (pos != want)
            return kp_error(KP_ERR_DATATYPE, "%s: packing gave %d bytes, expected %d", fn, pos, want);
    }
    return KP_SUCCESS;
}

int kp_unpack_n(const char *fn, MPI_Comm comm, const char *in, int64_t n, void *out, MPI_Datatype t,
                const kp_tinfo *ti)
{
    const int64_t piece = piece_of(ti);
    for (int64_t i = 0; i < n; i += piece) {
        const int c = (int)(n - i < piece ? n - i : piece), have = (int)(c * ti->size);
        int pos = 0;
        if (MPI_Unpack(in + i * ti->size, have, &pos, (char *)out + (MPI_Aint)(i * ti->extent), c, t, comm) !=
            MPI_SUCCESS)
            return kp_error(KP_ERR_DATATYPE, "%s: MPI_Unpack failed", fn);
        if (pos != have)
            return kp_error(KP_ERR_DATATYPE, "%s: unpacking used %d bytes, expected %d", fn, pos, have);
    }
    return KP_SUCCESS;
}
