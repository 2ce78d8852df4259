/*
 * kp_barrier: MPI_Barrier semantics. The plan is a schedule of zero-byte
 * signals (no buffers); it runs on kport's private communicator.
 */
#include "core/core.h"
#include "exec/exec.h"

int kp_barrier(MPI_Comm comm)
{
    static const char fn[] = "kp_barrier";
    int rc;
    kp_comm *c = kp_comm_peek(comm); /* a communicator kport already checked */
    if ((rc = kp_settings_load()) || (!c && (rc = kp_check_comm(fn, comm))))
        return rc;
    if (!c && (rc = kp_comm_get(comm, &c)))
        return rc;
    c->calls++;
    kp_plan *pl;
    if ((rc = kp_select_plan(c, KP_COLL_BARRIER, 0, 0, 0, &pl)))
        return rc;
    kp_set_last_algorithm(KP_COLL_BARRIER, pl);
    return kp_exec_run(pl, NULL, NULL);
}
