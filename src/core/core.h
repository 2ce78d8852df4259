/*
 * The API's own layer (src/core): the kp_* entry points, their argument
 * checks and datatypes, and the life of a communicator's state (created at
 * its first call, pooled when the user frees it). It sequences the layers
 * below: topology, choice (which brings up what the plan needs, and
 * calibration), execution. Not part of the API.
 */
#ifndef KP_CORE_H
#define KP_CORE_H

#include "select/select.h"
#include "util/error.h"

/* ---- arguments (dtype.c) ---- */
typedef struct kp_tinfo {
    MPI_Count size, extent, true_lb, true_extent;
    int contiguous; /* count elements are one gap-free run of count*size bytes */
} kp_tinfo;
/* fn names the entry point in messages, which says "send"/"receive". */
int kp_type_info(MPI_Datatype t, const char *fn, const char *which, kp_tinfo *ti);
/* Negative or overflowing count -> KP_ERR_COUNT; else *bytes = count * size. */
int kp_check_count(const char *fn, const char *which, MPI_Count count, const kp_tinfo *ti, int64_t *bytes);
/* MPI_COMM_NULL, invalid or inter-communicator -> KP_ERR_COMM. */
int kp_check_comm(const char *fn, MPI_Comm comm);

/* ---- per-communicator state (comm.c) ---- */
/* Look up (or create on first use) kport's state for comm. Collective on
 * first use of a communicator (it may need the node layout). */
int kp_comm_get(MPI_Comm comm, kp_comm **out);
/* The state of the communicator the previous call used, if comm is it
 * (no MPI call, no creation); else NULL. */
kp_comm *kp_comm_peek(MPI_Comm comm);
/* Grow the staging buffer to at least n bytes. */
int kp_comm_stage(kp_comm *c, int64_t n, void **out);
#endif /* KP_CORE_H */
