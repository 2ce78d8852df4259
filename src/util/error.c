/* Error codes, their names and the last detailed message (per thread). */
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_msg[512];

int kp_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
    va_end(ap);
    return code;
}

void kp_err_vappend(char *buf, int len, int *n, const char *fmt, va_list ap)
{
    if (!buf || *n < 0 || *n >= len)
        return;
    const int k = vsnprintf(buf + *n, (size_t)(len - *n), fmt, ap);
    *n = k < 0 ? len : *n + k;
}

void kp_err_append(char *buf, int len, int *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kp_err_vappend(buf, len, n, fmt, ap);
    va_end(ap);
}

const char *kp_mpi_reason(int e, char *buf)
{
    int len = 0;
    if (MPI_Error_string(e, buf, &len) != MPI_SUCCESS)
        snprintf(buf, MPI_MAX_ERROR_STRING, "MPI error %d", e);
    return buf;
}

void kp_clear_error(void)
{
    last_msg[0] = '\0';
}

const char *kp_last_error(void)
{
    return last_msg;
}

const char *kp_strerror(int code)
{
    switch (code) {
    case KP_SUCCESS: return "KP_SUCCESS: no error";
    case KP_ERR_ARG: return "KP_ERR_ARG: invalid argument (NULL buffer with nonzero count?)";
    case KP_ERR_COUNT: return "KP_ERR_COUNT: invalid count (negative, or send and receive sizes differ)";
    case KP_ERR_DATATYPE: return "KP_ERR_DATATYPE: datatype not supported";
    case KP_ERR_COMM: return "KP_ERR_COMM: invalid communicator (null or inter-communicator)";
    case KP_ERR_PARAM: return "KP_ERR_PARAM: invalid algorithm name or parameter";
    case KP_ERR_UNSUPPORTED: return "KP_ERR_UNSUPPORTED: kport cannot serve this call (a forced algorithm that cannot apply, a resource MPI refused, or an operation and datatype kport leaves to MPI)";
    case KP_ERR_NOMEM: return "KP_ERR_NOMEM: out of memory";
    case KP_ERR_MPI: return "KP_ERR_MPI: an MPI call failed";
    case KP_ERR_INTERNAL: return "KP_ERR_INTERNAL: internal error (a kport bug)";
    default: return "unknown kport error code";
    }
}
