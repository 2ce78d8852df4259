/*
 * kport: k-port, concurrent and hierarchical collectives on top of MPI.
 *
 * Public API. Every function returns KP_SUCCESS (0) or a KP_ERR_* code;
 * kp_strerror() names the code and kp_last_error() gives the detailed
 * message of the most recent failure on the calling thread.
 */
#ifndef KPORT_H
#define KPORT_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KPORT_VERSION_MAJOR 0
#define KPORT_VERSION_MINOR 1
#define KPORT_VERSION_PATCH 0

enum kp_error {
    KP_SUCCESS = 0,
    KP_ERR_ARG = 1,         /* NULL buffer with nonzero count, bad pointer argument */
    KP_ERR_COUNT = 2,       /* negative count, send/receive size mismatch */
    KP_ERR_DATATYPE = 3,    /* datatype kport cannot move correctly */
    KP_ERR_COMM = 4,        /* invalid or inter-communicator */
    KP_ERR_PARAM = 5,       /* invalid algorithm name or parameter (k, C, ...) */
    KP_ERR_UNSUPPORTED = 6, /* forced algorithm cannot apply to this call, or MPI refused
                               what it needs (a shared segment, windows) */
    KP_ERR_NOMEM = 7,       /* allocation failed */
    KP_ERR_MPI = 8,         /* an MPI call failed */
    KP_ERR_INTERNAL = 9     /* a kport bug: please report */
};

/* Collectives kport knows about (used to force algorithms). */
enum kp_coll {
    KP_COLL_ALLGATHER = 0,
    KP_COLL_BARRIER = 1,
    KP_COLL_GATHER = 2,
    KP_COLL_ALLTOALL = 3,
    KP_COLL_BCAST = 4,
    KP_COLL_SCATTER = 5,
    KP_COLL_REDUCE = 6,
    KP_COLL_ALLREDUCE = 7,
    KP_COLL_REDUCE_SCATTER_BLOCK = 8,
    KP_COLL_REDUCE_SCATTER = 9,
    KP_COLL_COUNT
};

/* What to do when a forced algorithm cannot apply (KPORT_FALLBACK).
 *
 * Resources MPI or the system refuses. kport makes its own communicators
 * and windows with MPI_ERRORS_RETURN (the program's error handlers are
 * never changed), so when MPI will not make the node's shared segment (no
 * shared windows: Open MPI's osc/pt2pt, every osc component excluded; a
 * full /dev/shm) or the one-sided transport's windows (none over TCP under
 * Open MPI's defaults), every rank learns it together and kport carries
 * on without them: the automatic choice leaves out the shared-memory
 * algorithms (for the whole communicator, or above the segment size MPI
 * still granted) and remembers that per communicator; a forced algorithm
 * that needs them cannot apply, and the policy below decides; the drop-in
 * library then hands the call to MPI. transport=rma falls back to plain
 * MPI_Win_allocate windows where shared ones are refused. Cross-memory
 * attach that the kernel refuses is probed and left out the same way.
 * KPORT_VERBOSE=1 says once per communicator what was refused. */
enum kp_fallback {
    KP_FALLBACK_ERROR = 0,  /* return KP_ERR_UNSUPPORTED (default) */
    KP_FALLBACK_WARN = 1,   /* print a warning on rank 0 (once per communicator and
                               collective), use the automatic choice */
    KP_FALLBACK_SILENT = 2  /* use the automatic choice quietly */
};

/* All-gather with MPI_Allgather semantics (MPI_IN_PLACE, any
 * intra-communicator, builtin and derived datatypes). */
int kp_allgather(const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
                 void *recvbuf, MPI_Count rcount, MPI_Datatype rtype,
                 MPI_Comm comm);

/* Barrier with MPI_Barrier semantics. */
int kp_barrier(MPI_Comm comm);

/* Gather with MPI_Gather semantics (any root; MPI_IN_PLACE as sendbuf at
 * the root; recvbuf, rcount and rtype significant only at the root). */
int kp_gather(const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
              void *recvbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
              MPI_Comm comm);

/* All-to-all with MPI_Alltoall semantics (MPI_IN_PLACE as sendbuf). */
int kp_alltoall(const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
                void *recvbuf, MPI_Count rcount, MPI_Datatype rtype,
                MPI_Comm comm);

/* Broadcast with MPI_Bcast semantics (any root, builtin and derived
 * datatypes). */
int kp_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);

/* Scatter with MPI_Scatter semantics (any root; MPI_IN_PLACE as recvbuf at
 * the root; sendbuf, scount and stype significant only at the root). */
int kp_scatter(const void *sendbuf, MPI_Count scount, MPI_Datatype stype,
               void *recvbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm);

/* Reductions with MPI semantics: every builtin operation on the types MPI
 * allows it (MPI_MAXLOC / MPI_MINLOC on the pair types), user-defined
 * operations (commutative or not: non-commutative ones are combined in rank
 * order), MPI_IN_PLACE as sendbuf (kp_reduce: at the root only). */
int kp_reduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
              MPI_Op op, int root, MPI_Comm comm);
int kp_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                 MPI_Op op, MPI_Comm comm);
int kp_reduce_scatter_block(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype type, MPI_Op op, MPI_Comm comm);
int kp_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                      MPI_Datatype type, MPI_Op op, MPI_Comm comm);

/* Force an algorithm for a collective, e.g. "bruck:k=3",
 * "concurrent_exchange:C=2", "nway_dissemination:n=3", or "auto" (or NULL)
 * to restore automatic selection. Every algorithm also takes the transport
 * of its messages: transport=p2p (MPI point-to-point, the default) or
 * transport=rma (MPI_Put into staging windows of the receiver plus a
 * notification; the schedule is the same), and with rma rails=1..8 (windows
 * a message is striped over) and stripe_kb=1.. (messages above this many
 * KiB are striped; default 64): "bruck:k=2,transport=rma,rails=2". Shared-
 * memory steps stay shared memory. Overrides KPORT_<COLL> (KPORT_ALLGATHER,
 * KPORT_BARRIER, KPORT_GATHER, KPORT_ALLTOALL). Returns KP_ERR_PARAM for an unknown
 * name or parameter. Process-wide; must be the same on every rank. */
int kp_set_algorithm(enum kp_coll coll, const char *spec);

/* Set the fallback policy (overrides KPORT_FALLBACK). */
int kp_set_fallback(enum kp_fallback policy);

/* The name and parameters of the algorithm the last kport call on this
 * thread ran for `coll`, e.g. "bruck:k=2" (empty before the first call).
 * A parameter larger than the communicator allows runs clamped and says so:
 * "bruck:k=1 (k=8 clamped: P=2)"; one-sided runs name their transport:
 * "ring:transport=rma,rails=2,stripe_kb=64". */
const char *kp_last_algorithm(enum kp_coll coll);

/* The node layout kport uses for comm (real nodes, split further by the
 * emulation variables KPORT_NODE_SIZE / KPORT_NODE_MAP): the number of
 * nodes, this rank's node (numbered by lowest rank), its index within the
 * node (0 = leader) and the node's size. Any output may be NULL. Collective
 * on the first kport use of comm. */
int kp_node_info(MPI_Comm comm, int *nnodes, int *node, int *local, int *node_size);

/* Number of registered algorithms for `coll` and the name of the i-th one. */
int kp_algorithm_count(enum kp_coll coll);
const char *kp_algorithm_name(enum kp_coll coll, int i);

const char *kp_strerror(int code);
const char *kp_last_error(void);

/* Free every cached plan, scratch buffer, shared segment and private
 * communicator (optional: a communicator's state is also freed when the
 * communicator is freed, and everything at MPI_Finalize). Collective over
 * every communicator kport has used: call it on all ranks, or not at all. */
void kp_release_caches(void);

/* ========================================================================= */
/* One-sided strided transfers (ARMCI's strided convention)                  */
/* ========================================================================= */
/*
 * A strided section is described as in ARMCI_PutS / ARMCI_GetS / ARMCI_AccS:
 *
 *   count[0]            contiguous bytes per chunk (a "row");
 *   count[1..levels]    how many blocks at each stride level;
 *   stride[0..levels-1] distance in BYTES between consecutive blocks of
 *                       level i+1 (stride[0]: between rows), one array for
 *                       the origin buffer and one for the target region.
 *
 * Chunk (i1, ..., iL) starts at sum_j i_j * stride[j-1]; there are
 * count[1] * ... * count[levels] chunks of count[0] bytes, N bytes in all.
 * levels is 0 .. KP_STRIDED_MAX_LEVELS (0: one contiguous block). Example:
 * a 3 x 5 block of doubles of a row-major 100 x 100 matrix is count =
 * {5*8, 3}, stride = {100*8}, levels = 1.
 *
 * The target region is addressed by a displacement in bytes from the
 * target rank's window base (every window here has disp_unit 1).
 *
 * Validation, before anything is sent or written (KP_ERR_* code and
 * kp_last_error() saying which argument and why): levels outside 0..8
 * (KP_ERR_ARG); a negative count or a total N (or extent) that overflows
 * 2^62 (KP_ERR_COUNT); a negative stride, or a stride smaller than what it
 * strides over (stride[0] < count[0], stride[i] < stride[i-1] * count[i],
 * when count[i+1] > 1: the blocks would overlap) (KP_ERR_ARG); a NULL
 * buffer, count or stride array while N > 0 (KP_ERR_ARG); a target rank
 * outside the window's communicator or a target region [disp, disp +
 * extent) outside the target's window (KP_ERR_ARG); for accumulate an
 * unknown type, a NULL scale, count[0] not a multiple of the element size
 * (KP_ERR_DATATYPE / KP_ERR_ARG / KP_ERR_COUNT). N = 0 (a zero count) is a
 * valid no-op. The same checks apply to every method.
 *
 * Windows. kp_win_create allocates `bytes` of window memory per rank
 * (sizes may differ between ranks) and returns its local base: with
 * MPI_Win_allocate_shared when every rank of comm is on one machine (then
 * the direct method's puts and gets are copies by load/store into the
 * peers' memory, complete at the target when they return; see "Methods"),
 * else, or with KPORT_STRIDED_SHARED=0 (read at kp_win_create, the same on
 * every rank), MPI_Win_allocate. Where MPI refuses the shared window
 * (Open MPI's osc/pt2pt) kp_win_create falls back to MPI_Win_allocate
 * (KPORT_VERBOSE=1: rank 0 says so once); where MPI refuses every window
 * it returns KP_ERR_UNSUPPORTED on every rank, naming what MPI refused
 * and why, with nothing left allocated. kport makes these calls on a
 * private duplicate of comm and on its own windows, all with
 * MPI_ERRORS_RETURN: the program's error handlers are never changed, and a
 * refusal does not abort. MPI is asked for the size rounded up to a
 * multiple of 16 (MPICH 4.0.2 misplaces windows of 8 mod 16 bytes); the
 * window's size for kport's bounds checks stays `bytes`. kp_win_from_mpi
 * wraps the user's own
 * window (disp_unit 1, created with MPI_Win_create or
 * MPI_Win_allocate[_shared], the latter used by load/store as kport's
 * own; dynamic windows are refused with KP_ERR_UNSUPPORTED). Both are collective over comm. kport
 * uses passive target only: it opens MPI_Win_lock_all on the window when
 * it wraps or creates it and closes it in kp_win_free, so the program must
 * not start epochs of its own on that window in between. Each kport window
 * also creates a small window of its own: the pool of slots the pack
 * method writes into (KPORT_STRIDED_SLOTS slots, default 8, of
 * KPORT_STRIDED_SLOT_KB KiB, default 64; read at kp_win_create, the same on
 * every rank).
 *
 * Completion (as ARMCI's): a blocking put or accumulate returns when the
 * origin buffer may be reused; a blocking get when the data are in the
 * origin buffer. Operations of one origin to one target take effect in the
 * order they were issued, whatever their methods and whether blocking or
 * not: before an operation starts, this rank's earlier operations to the
 * same target whose bytes it overlaps (one of the two writing; two
 * accumulates commute) have taken effect - a pending get has read its
 * bytes before a later put or accumulate lands, a pending put or
 * accumulate has landed before a later get reads (an MPI flush of that
 * target, the target's agent unpacking a pack write, or a pending pack get
 * completed; src/strided/api.c). Operations to other bytes are not held back,
 * and with nothing pending to the target this costs no MPI call.
 * kp_win_fence(win, target) returns when every put
 * and accumulate of this rank to target (-1: to every rank) is complete at
 * the target (ARMCI_Fence / ARMCI_AllFence); kp_win_barrier(win) is
 * collective: every rank's operations complete everywhere, then a barrier
 * (ARMCI_Barrier). Read data written by others only after one of these.
 *
 * Nonblocking variants (kp_iput_strided, ...) return a request that
 * kp_wait or kp_test complete, in any order; a completed request is set to
 * KP_REQUEST_NULL. Until then the origin buffer must not be touched.
 *
 * Methods (each documented at the head of its file, the files of src/strided):
 *   direct    one MPI_Put / MPI_Get / MPI_Accumulate per contiguous chunk,
 *             all completed together by one flush; on a shared window
 *             (above) puts and gets copy each chunk, and accumulates add
 *             into it, by load/store between two MPI_Win_sync instead (no
 *             MPI operation, no flush);
 *   datatype  one MPI operation with a derived datatype describing the
 *             section on each side (the network walks the descriptor); the
 *             committed types of recent layouts are cached per window;
 *   pack      the origin packs the section into bounce buffers (pipelined)
 *             and writes them, each with the descriptor of its part, into
 *             free slots of the target's pool (a slot is reserved with an
 *             atomic fetch-and-op before it is written); the target's
 *             progress agent unpacks them. A get asks the target to pack
 *             into its slots and reads them back;
 *   auto      (default) the cheapest by the cost model T_direct = t0 +
 *             (k-1)*ts + tn*N (by load/store tl0 + (k-1)*tls + tln*N,
 *             an accumulate tla0 + (k-1)*tlas + tlan*N), T_pack = n*tp + tpn*N + tpc*k (a get
 *             has its own tpg, tpgn), T_datatype = td0 +
 *             (k-1)*td1 + tdn*N, accumulate with its own costs; parameters from the "rma" object of the
 *             parameter file named by KPORT_PARAMS (docs/PARAMETERS.md,
 *             written by kport-bench strided --calibrate), else built-in
 *             defaults.
 * KPORT_STRIDED_METHOD=direct|datatype|pack|auto or kp_strided_set_method
 * forces one.
 *
 * The progress agent. Pack-method data sent to a rank are unpacked by that
 * rank, for every kport window of the process, inside any kport strided
 * call, kp_wait/kp_test, kp_win_fence, kp_win_barrier and kp_win_progress
 * on any window (a rank waiting on window A serves window B: two ranks
 * waiting on different windows for each other do not hang), or by a
 * helper thread started with kp_win_progress_thread(win, 1) (needs
 * MPI_THREAD_MULTIPLE), which serves its own window; a call on another
 * window serves that one too while its helper is not at it. A rank that
 * computes for long without calling kport delays origins that wait for its
 * slots (fence, barrier, a full pool, a get) but never corrupts them. So,
 * as with ARMCI: do not enter a blocking MPI call that waits for other
 * ranks (MPI_Barrier, MPI_Allreduce, ...) while they may still be waiting
 * for this rank's agent; synchronise with kp_win_barrier first (or run the
 * helper thread).
 *
 * Accumulate: target += scale * source, element-wise, for int, long, float
 * and double (integers wrap around on overflow). Concurrent accumulates
 * from any origins and methods to the same elements are element-wise
 * atomic. Every method applies it with MPI_Accumulate (MPI_SUM), the pack
 * method from the target's own agent into its own window, except on a
 * shared window: there every kport accumulate into a rank runs under that
 * rank's accumulate lock (kport's own, in shared memory), the direct
 * method's by load/store, the others' MPI operations completed inside it.
 * kport's accumulates are then atomic with each other, not with the
 * program's own MPI_Accumulate calls to the same elements at the same
 * time (separate them with a barrier, or set KPORT_STRIDED_SHARED=0).
 *
 * Threads: as the collectives (one thread calls kport at a time), plus the
 * optional helper thread, which kport serialises with the caller.
 */
#define KP_STRIDED_MAX_LEVELS 8

typedef struct kp_win_s *kp_win;
typedef struct kp_request_s *kp_request;
#define KP_REQUEST_NULL ((kp_request)0)

enum kp_acc_type { KP_ACC_INT = 0, KP_ACC_LONG = 1, KP_ACC_FLOAT = 2, KP_ACC_DOUBLE = 3 };

/* Windows (collective over comm). base may be NULL. */
int kp_win_create(MPI_Aint bytes, MPI_Comm comm, void **base, kp_win *win);
int kp_win_from_mpi(MPI_Win mpi_win, MPI_Comm comm, kp_win *win);
/* Collective; completes everything first; *win = NULL. A window from
 * kp_win_from_mpi stays the user's (kport only unlocks it). */
int kp_win_free(kp_win *win);
/* The MPI window the data live in (for MPI calls outside epochs). */
MPI_Win kp_win_mpi(kp_win win);
int kp_win_fence(kp_win win, int target);
int kp_win_barrier(kp_win win);
/* Run the progress agent once (unpack what has arrived, on every window). */
int kp_win_progress(kp_win win);
/* Start (on = 1) or stop (0) a helper thread running the agent; needs
 * MPI_THREAD_MULTIPLE (KP_ERR_UNSUPPORTED otherwise). */
int kp_win_progress_thread(kp_win win, int on);

int kp_put_strided(const void *src, const MPI_Aint src_stride[], MPI_Aint dst_disp, const MPI_Aint dst_stride[],
                   const MPI_Aint count[], int levels, int target, kp_win win);
int kp_get_strided(void *dst, const MPI_Aint dst_stride[], MPI_Aint src_disp, const MPI_Aint src_stride[],
                   const MPI_Aint count[], int levels, int target, kp_win win);
/* target += (*scale) * src; scale points to a value of the element type */
int kp_acc_strided(enum kp_acc_type type, const void *scale, const void *src, const MPI_Aint src_stride[],
                   MPI_Aint dst_disp, const MPI_Aint dst_stride[], const MPI_Aint count[], int levels, int target,
                   kp_win win);
int kp_iput_strided(const void *src, const MPI_Aint src_stride[], MPI_Aint dst_disp, const MPI_Aint dst_stride[],
                    const MPI_Aint count[], int levels, int target, kp_win win, kp_request *req);
int kp_iget_strided(void *dst, const MPI_Aint dst_stride[], MPI_Aint src_disp, const MPI_Aint src_stride[],
                    const MPI_Aint count[], int levels, int target, kp_win win, kp_request *req);
int kp_iacc_strided(enum kp_acc_type type, const void *scale, const void *src, const MPI_Aint src_stride[],
                    MPI_Aint dst_disp, const MPI_Aint dst_stride[], const MPI_Aint count[], int levels, int target,
                    kp_win win, kp_request *req);
/* Complete a request (KP_REQUEST_NULL: nothing to do). kp_test sets *done. */
int kp_wait(kp_request *req);
int kp_test(kp_request *req, int *done);

/* Force a method for this process: "direct", "datatype", "pack", "auto"
 * (NULL: back to KPORT_STRIDED_METHOD, else auto). KP_ERR_PARAM otherwise. */
int kp_strided_set_method(const char *name);
/* The method the last strided call of this thread used ("pack", ...). */
const char *kp_strided_last_method(void);

/* What a window's strided calls cost in MPI calls, counted since the window
 * was created or the counters were last reset (for tests and tuning; the
 * counts are this rank's). */
typedef struct kp_strided_counters {
    long long calls;        /* strided calls started (blocking or not) */
    long long data_ops;     /* MPI put / get / accumulate on the data window */
    long long data_flushes; /* MPI_Win_flush / flush_all on the data window */
    long long pool_ops;     /* MPI operations on the pack method's slot pool */
    long long pool_flushes; /* MPI_Win_flush on the slot pool */
    long long locks;        /* MPI_Win_lock / lock_all / unlock / unlock_all */
    long long polls;        /* rounds of a waiting loop (a poll found nothing) */
    long long yields;       /* of which gave the CPU away (sched_yield) */
    long long shm_chunks;   /* chunks a direct put, get or accumulate did by load/store (shared window) */
    long long acc_locks;    /* kport's accumulate lock taken (shared window: every accumulate, any method) */
} kp_strided_counters;
int kp_strided_counters_get(kp_win win, kp_strided_counters *out);
int kp_strided_counters_reset(kp_win win);

#ifdef __cplusplus
}
#endif
#endif /* KPORT_H */
