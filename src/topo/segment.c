/*
 * The node's shared segment (part of the node tier, src/topo): one MPI_Win_allocate_shared window per
 * communicator and node, created when the communicator's first shared-memory
 * plan needs it, grown (collectively on the node) when a plan needs larger
 * halves, and pooled with the communicator's other resources when the user
 * frees it (core/comm.c).
 *
 *   [ slot 0 | ... | slot n-1 | lines, half 0 | lines, half 1 | data half 0 | data half 1 ]
 *
 * A slot is 128 bytes (two cache lines, so adjacent-line prefetch never
 * shares one between writers) holding a single-writer flag - the rank's
 * (call sequence << 20 | post number), written with release and read with
 * acquire ordering - its pid and this call's buffer addresses for peer
 * reads. Calls alternate between the two halves by sequence parity; see
 * sched.h for the rules and check.c for the proof obligations.
 */
#define _GNU_SOURCE
#include "topo/topo.h"
#include "util/error.h"
#include "util/shmspace.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

void kp_shm_free(kp_comm *c)
{
    if (c->shm.win == MPI_WIN_NULL)
        return;
    MPI_Win_free(&c->shm.win);
    c->shm.win = MPI_WIN_NULL;
    c->shm.half = 0;
    kp_setup_segments(-1);
}

int kp_shm_reserve(kp_comm *c, int64_t half)
{
    if (c->shm.win != MPI_WIN_NULL && half <= c->shm.half)
        return KP_SUCCESS;
    const double t0 = MPI_Wtime();
    int64_t nh = c->shm.half ? c->shm.half : 4096;
    while (nh < half)
        nh *= 2;
    const MPI_Aint slots = (MPI_Aint)c->node_size * (MPI_Aint)sizeof(kp_shm_slot);
    const MPI_Aint lines = 2 * (MPI_Aint)c->node_size * KP_LINE;
    const MPI_Aint total = slots + lines + 2 * (MPI_Aint)nh;
    if (c->shm.win != MPI_WIN_NULL) /* every rank of the node is here, done with the previous call */
        PMPI_Barrier(c->node);
    /* room for it in /dev/shm, asked by the allocating rank and agreed by
     * the node before MPI is (util/shmspace.h: neither MPI refuses a full
     * file system cleanly) */
    int room = c->local == 0 ? kp_shm_space_ok((int64_t)total) : 1;
    if (c->node_size > 1)
        PMPI_Allreduce(MPI_IN_PLACE, &room, 1, MPI_INT, MPI_MIN, c->node);
    if (!room)
        return kp_error(KP_ERR_UNSUPPORTED,
                        "the node's segment of %lld bytes does not fit in /dev/shm (not enough free space)",
                        (long long)total);
    /* the new segment before the old one goes: when MPI refuses it (a
     * full /dev/shm, no shared windows), the old one still serves the
     * plans that fit it. c->node returns errors (topo.c), so a refusal
     * comes back here instead of aborting. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "false");
    char *mybase;
    MPI_Win win = MPI_WIN_NULL;
    int rc = MPI_Win_allocate_shared(c->local == 0 ? total : 0, 1, info, c->node, &mybase, &win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        char why[MPI_MAX_ERROR_STRING];
        return kp_error(KP_ERR_UNSUPPORTED, "MPI_Win_allocate_shared of %lld bytes for the node's segment failed: %s",
                        (long long)total, kp_mpi_reason(rc, why));
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    kp_shm_free(c);
    c->shm.win = win;
    MPI_Aint sz;
    int du;
    kp_setup_segments(+1);
    MPI_Win_shared_query(c->shm.win, 0, &sz, &du, &c->shm.base);
    if (c->local == 0) /* line flags start at 0 */
        memset(c->shm.base + slots, 0, (size_t)lines);
    c->shm.slots = (kp_shm_slot *)c->shm.base;
    c->shm.lines = c->shm.base + slots;
    c->shm.data = c->shm.base + slots + lines;
    c->shm.half = nh;
    kp_shm_slot *me = &c->shm.slots[c->local];
    memset(me, 0, sizeof(*me));
    atomic_store_explicit(&me->flag, 0, memory_order_release);
    me->pid = (uint64_t)getpid();
    PMPI_Barrier(c->node); /* slots initialised before anyone reads them */
    kp_setup_account(KP_SETUP_SEGMENT, MPI_Wtime() - t0);
    return KP_SUCCESS;
}

