/*
 * The floor of the house (src/util): room in the node's shared-memory file
 * system. Both MPIs here back shared windows with files in /dev/shm, and
 * neither refuses cleanly when it is full: Open MPI 4.1's
 * MPI_Win_allocate_shared fails on the allocating rank only and leaves the
 * node's other ranks blocked inside the call; MPICH 4.0.2 succeeds and the
 * first store into a page the file system cannot supply kills the process
 * (SIGBUS). So kport asks before it allocates.
 */
#ifndef KP_UTIL_SHMSPACE_H
#define KP_UTIL_SHMSPACE_H

#include <stdint.h>
#include <sys/statvfs.h>

/* 1 when /dev/shm has room for `bytes` more (with MPI's own bookkeeping:
 * 1 MiB and 1/16 more), or when it cannot be told (no /dev/shm: the MPI
 * uses something else); 0 when it has not. */
static inline int kp_shm_space_ok(int64_t bytes)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0 || v.f_frsize == 0)
        return 1;
    const double room = (double)v.f_bavail * (double)v.f_frsize;
    return room >= (double)bytes * (17.0 / 16.0) + (double)(1 << 20);
}

#endif
