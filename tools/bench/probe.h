/*
 * Measuring primitives shared by kport-bench loggp, fanout and concurrency:
 * a nanosecond clock and its own cost, a busy delay, which ranks share a
 * host, whether a host runs more ranks than it has cores, and a shared
 * segment with kport's flag protocol (src/topo/segment.c: one single-writer
 * 64-bit flag per rank in a 128-byte slot of its own, written with release
 * and read with acquire ordering, waited for by spinning flat out, then with
 * a pause, then yielding - and yielding at once when ranks outnumber cores).
 */
#ifndef KPORT_BENCH_PROBE_H
#define KPORT_BENCH_PROBE_H

#include <mpi.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* MPI_STATUSES_IGNORE, defined in probe.c: GCC's -Wstringop-overflow
 * takes MPICH's (a null MPI_Status[0]) for a buffer too small. */
extern MPI_Status *const kb_statuses_ignore;

/* CLOCK_MONOTONIC in nanoseconds. */
double kb_now_ns(void);
/* The median cost of one kb_now_ns() pair (subtracted from short timings). */
double kb_timer_cost_ns(void);
/* Spin until ns nanoseconds have passed since start (kb_now_ns()). */
void kb_spin_until(double start, double ns);

/* host[r] = the lowest rank of comm on r's host (MPI_COMM_TYPE_SHARED);
 * host must hold the size of comm. Collective. */
void kb_host_map(MPI_Comm comm, int *host);
/* 1 on every rank if some host runs more ranks of comm than it has online
 * cores (sysconf); collective. *cores: the fewest cores of a host. */
int kb_oversubscribed(MPI_Comm comm, int *cores);

/* MPI_Barrier on comm that sleeps (200 us) between tests instead of
 * polling: ranks that wait while others measure leave them the cores. */
void kb_sleepy_barrier(MPI_Comm comm);

/* A shared segment of the ranks of comm (all on one host): a flag slot per
 * rank, then `bytes` of data. */
typedef struct kb_seg {
    MPI_Win win;
    int me, n, oversub;
    unsigned char *data;
    size_t bytes;
    unsigned char *slots; /* n slots of 128 bytes */
} kb_seg;

/* Collective over comm; 0 on success (on every rank), else -1 everywhere. */
int kb_seg_open(MPI_Comm comm, size_t bytes, int oversub, kb_seg *s);
void kb_seg_close(kb_seg *s);
static inline _Atomic uint64_t *kb_seg_flag(const kb_seg *s, int r)
{
    return (_Atomic uint64_t *)(void *)(s->slots + 128 * (size_t)r);
}
/* Store v into my flag (release). */
static inline void kb_seg_post(const kb_seg *s, uint64_t v)
{
    atomic_store_explicit(kb_seg_flag(s, s->me), v, memory_order_release);
}
/* Wait until rank r's flag is >= v (acquire), as kp_shm_wait does. */
void kb_seg_wait(const kb_seg *s, int r, uint64_t v);

/* The start line of a timed call: a barrier with the same exit skew
 * whatever MPI library kport-bench is built with. Where every rank of comm
 * shares a host: flags in a shared segment (each rank posts the barrier's
 * number and waits until every other rank has posted it; the last to
 * arrive leaves at once, the others one flag transfer later, as kport's
 * own shared-memory barrier); elsewhere, or with KPORT_BENCH_SYNC=mpi,
 * MPI_Barrier. Why: MPI_Barrier leaves the ranks as far apart as the
 * library's own message latency, and every call timed from it pays that
 * distance (a two-rank all-to-all of 8 B: 0.21 us timed from Open MPI's
 * barrier, 0.26-0.27 us from MPICH's, the same kport code), so the
 * builds' times could not be set side by side. */
typedef struct kb_sync {
    MPI_Comm comm;
    int shm; /* 1: the flags below; 0: MPI_Barrier */
    uint64_t seq;
    kb_seg seg;
} kb_sync;

/* Collective over comm (kept, not duplicated: it must outlive s). */
void kb_sync_open(MPI_Comm comm, int oversub, kb_sync *s);
void kb_sync_barrier(kb_sync *s);
void kb_sync_close(kb_sync *s);
/* "shm flags" or "MPI_Barrier", for reports */
const char *kb_sync_name(const kb_sync *s);

#endif
