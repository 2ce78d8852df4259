/* Datatype facts the entry points need: size, extent, and whether the data
 * of `count` elements is one gap-free run of count * size bytes. */
#include "core/core.h"

/* Is the type's data laid out in order (element i of the type map before
 * element i+1)? Predefined types are; so are duplicates and contiguous
 * repetitions of such types. Anything else (vector, indexed, struct,
 * resized, ...) is treated as out of order and goes through MPI_Pack, which
 * is always correct: e.g. an indexed type {disp 1, disp 0} is gap-free with
 * size == extent, yet its bytes are permuted. */
static int in_order(MPI_Datatype t, int depth)
{
    int ni, na, nd, comb;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return 0;
    if (comb == MPI_COMBINER_NAMED)
        return 1;
    if (depth > 16 || (comb != MPI_COMBINER_DUP && comb != MPI_COMBINER_CONTIGUOUS) || nd != 1 || ni > 1 || na > 0)
        return 0;
    int ints[1];
    MPI_Aint addrs[1];
    MPI_Datatype inner;
    if (MPI_Type_get_contents(t, ni, na, nd, ints, addrs, &inner) != MPI_SUCCESS)
        return 0;
    int ok = in_order(inner, depth + 1);
    int ni2, na2, nd2, comb2;
    MPI_Type_get_envelope(inner, &ni2, &na2, &nd2, &comb2);
    if (comb2 != MPI_COMBINER_NAMED)
        MPI_Type_free(&inner);
    return ok;
}

/* predefined types never change or go away: remember a few */
#define KP_TCACHE 8
static struct {
    MPI_Datatype t;
    kp_tinfo ti;
} tcache[KP_TCACHE];
static int tcache_n;

int kp_type_info(MPI_Datatype t, const char *fn, const char *which, kp_tinfo *ti)
{
    MPI_Count lb;
    if (t == MPI_DATATYPE_NULL)
        return kp_error(KP_ERR_DATATYPE, "%s: %s datatype is MPI_DATATYPE_NULL", fn, which);
    for (int i = 0; i < tcache_n; i++)
        if (tcache[i].t == t) {
            *ti = tcache[i].ti;
            return KP_SUCCESS;
        }
    if (MPI_Type_size_x(t, &ti->size) != MPI_SUCCESS || MPI_Type_get_extent_x(t, &lb, &ti->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &ti->true_lb, &ti->true_extent) != MPI_SUCCESS)
        return kp_error(KP_ERR_DATATYPE, "%s: %s datatype is not a valid (committed) datatype", fn, which);
    if (ti->size == MPI_UNDEFINED || ti->size < 0)
        return kp_error(KP_ERR_DATATYPE, "%s: %s datatype has an undefined size", fn, which);
    ti->contiguous = ti->size == ti->extent && ti->size == ti->true_extent && in_order(t, 0);
    int ni, na, nd, comb;
    if (tcache_n < KP_TCACHE && MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
        comb == MPI_COMBINER_NAMED) {
        tcache[tcache_n].t = t;
        tcache[tcache_n].ti = *ti;
        tcache_n++;
    }
    return KP_SUCCESS;
}

int kp_check_count(const char *fn, const char *which, MPI_Count count, const kp_tinfo *ti, int64_t *bytes)
{
    if (count < 0)
        return kp_error(KP_ERR_COUNT, "%s: negative %s count %lld", fn, which, (long long)count);
    if (ti->size > 0 && count > INT64_MAX / 4 / ti->size)
        return kp_error(KP_ERR_COUNT, "%s: %s count %lld overflows", fn, which, (long long)count);
    *bytes = (int64_t)count * ti->size;
    return KP_SUCCESS;
}

int kp_check_comm(const char *fn, MPI_Comm comm)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL)
        return kp_error(KP_ERR_COMM, "%s: communicator is MPI_COMM_NULL", fn);
    if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
        return kp_error(KP_ERR_COMM, "%s: invalid communicator", fn);
    if (inter)
        return kp_error(KP_ERR_COMM, "%s: inter-communicators are not supported", fn);
    return KP_SUCCESS;
}
