/* Datatype facts the entry points need: size, extent, and whether the data
 * of `count` elements is one gap-free run of count * size bytes. */
#include "core/core.h"

int kp_type_info(MPI_Datatype t, const char *fn, const char *which, kp_tinfo *ti)
{
    MPI_Count lb;
    if (t == MPI_DATATYPE_NULL)
        return kp_error(KP_ERR_DATATYPE, "%s: %s datatype is MPI_DATATYPE_NULL", fn, which);
    if (MPI_Type_size_x(t, &ti->size) != MPI_SUCCESS || MPI_Type_get_extent_x(t, &lb, &ti->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &ti->true_lb, &ti->true_extent) != MPI_SUCCESS)
        return kp_error(KP_ERR_DATATYPE, "%s: %s datatype is not a valid (committed) datatype", fn, which);
    if (ti->size == MPI_UNDEFINED || ti->size < 0)
        return kp_error(KP_ERR_DATATYPE, "%s: %s datatype has an undefined size", fn, which);
    ti->contiguous = ti->size == ti->extent && ti->size == ti->true_extent;
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
