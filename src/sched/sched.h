/*
 * Schedule IR: one rank's part of a collective as ordered rounds of
 * send / recv / local copy on regions (buffer id, offset, length).
 *
 * Semantics (shared by the MPI executor, the checker and the GOAL export):
 *  - Operations of one round may all be in flight at once; round r+1 starts
 *    only when every operation of round r has completed.
 *  - Sends from rank a to rank b are matched, in the order they are posted,
 *    with b's receives from a (MPI's non-overtaking rule); sizes must agree.
 *  - No region may be written by one operation of a round while another
 *    operation of the same round reads or writes it (the checker enforces).
 *  - Zero-length operations are never stored: the helpers drop them, so a
 *    schedule for 0 bytes is empty and needs no communication.
 *
 * Shared memory (ranks of one node, see kp_layout):
 *  - KP_BUF_SHM is the node's shared segment: every rank of the node sees the
 *    same bytes at the same offsets. The executor alternates two halves of
 *    the segment between consecutive calls (call parity), so a schedule
 *    describes one call's half (sched.shm_bytes, equal on a node's ranks).
 *  - POST publishes "every operation of my earlier rounds is complete" as
 *    this rank's n-th post of the call (n = 1, 2, ... in order); WAIT(q, n)
 *    completes once rank q (same node) has made its n-th post of this call.
 *    Posts are single-writer flags with release/acquire ordering, in the
 *    rank's slot or at the head of its line (KP_BUF_LINE, post_line).
 *  - PEER_READ copies from a region of a peer's (same node) send, receive
 *    or scratch buffer into one of this rank's buffers, PEER_WRITE from one
 *    of this rank's buffers into a peer's receive or scratch buffer (Linux
 *    cross-memory attach). The peer's buffer addresses are published with
 *    its first post of the call.
 *  - Only calls that put data in the segment (KP_USES_SEGMENT) alternate
 *    its halves; calls that only synchronise (KP_USES_FLAGS) do not.
 *  - The checker simulates three consecutive calls of such schedules and
 *    reports any pair of accesses by different ranks to shared bytes (or to
 *    a buffer a peer reads) that is not ordered by posts/waits or messages,
 *    including accesses after the owner returned from the call.
 *
 * Builders are pure functions of (rank, P, bytes, parameters): they never
 * call MPI and never see a pointer.
 */
#ifndef KP_SCHED_H
#define KP_SCHED_H

#include <stdint.h>
#include <stdio.h>

enum kp_buf {
    KP_BUF_SEND = 0,    /* the user's send buffer (bytes long) */
    KP_BUF_RECV = 1,    /* the user's receive buffer (P * bytes long) */
    KP_BUF_SCRATCH = 2, /* scratch owned by the plan (sched.scratch_bytes) */
    KP_BUF_SHM = 3,     /* the node's shared segment (sched.shm_bytes per call) */
    KP_BUF_LINE = 4,    /* the node's flag lines: KP_LINE bytes per rank of the node (by local
                         * index); bytes 0..7 of each line are that rank's line flag, which
                         * only posts/waits touch; the rest carries small data */
    KP_BUF_COUNT
};

typedef struct kp_region {
    int buf;     /* enum kp_buf */
    int64_t off; /* byte offset into the buffer */
    int64_t len; /* byte length (> 0 in a stored operation) */
} kp_region;

enum kp_opkind {
    KP_OP_SEND = 0,
    KP_OP_RECV = 1,
    KP_OP_COPY = 2,
    KP_OP_POST = 3,     /* shared memory: publish my n-th post of the call */
    KP_OP_WAIT = 4,     /* shared memory: wait for peer's n-th post */
    KP_OP_PEER_READ = 5, /* single copy from a peer's buffer into mine */
    KP_OP_PEER_WRITE = 6, /* single copy from my buffer into a peer's */
    KP_OP_REDUCE = 7     /* combine: dst = a (op) b, element by element */
};

typedef struct kp_op {
    int kind; /* enum kp_opkind */
    int round;
    union {
        struct { int peer; kp_region src; } send;
        struct { int peer; kp_region dst; } recv;
        struct { kp_region src; kp_region dst; } copy;
        struct { int n; int line; } post;          /* line: flag in my line (1) or my slot (0) */
        struct { int peer; int n; int line; } wait; /* line: the peer's line flag (1) or slot (0) */
        struct { int peer; kp_region src; kp_region dst; } peer_read;  /* src in the peer's buffers */
        struct { int peer; kp_region src; kp_region dst; } peer_write; /* dst in the peer's buffers */
        struct { kp_region a; kp_region b; kp_region dst; } reduce;    /* see kp_sched_reduce */
    } u;
} kp_op;

/*
 * Node layout: which ranks share a node (real or emulated). Built from a
 * node id per rank; nodes are numbered in order of their lowest rank, and a
 * node's ranks are ordered by rank (local index 0 is the leader).
 */
typedef struct kp_layout {
    int P, nnodes;
    int *node_of;    /* [P] node of each rank */
    int *local;      /* [P] index of each rank within its node */
    int *node_start; /* [nnodes + 1] offsets into node_ranks */
    int *node_ranks; /* [P] ranks of node n: node_ranks[node_start[n] .. node_start[n+1]) */
    int cma;         /* 1: single-copy peer reads work between a node's ranks */
    int oversub;     /* 1: more ranks than cores on some machine (selection only) */
} kp_layout;

/* Build a layout from node ids (any integers; equal id = same node).
 * Returns 0, or -1 when out of memory. */
int kp_layout_init(kp_layout *L, int P, const int *node_id, int cma);
/* The same for blocks of n consecutive ranks per node (the last possibly
 * smaller), in O(P) without sorting ids (kport-sim's millions of ranks). */
int kp_layout_block(kp_layout *L, int P, int n, int cma);
void kp_layout_free(kp_layout *L);
static inline int kp_layout_node_size(const kp_layout *L, int node)
{
    return L->node_start[node + 1] - L->node_start[node];
}
static inline int kp_layout_rank(const kp_layout *L, int node, int local)
{
    return L->node_ranks[L->node_start[node] + local];
}
static inline int kp_layout_leader(const kp_layout *L, int node)
{
    return L->node_ranks[L->node_start[node]];
}

/* Algorithm parameters; 0 means "not given" and lets the builder choose
 * its documented default. */
typedef struct kp_params {
    int k; /* ports: messages in flight per step */
    int C; /* concurrency index */
    int n; /* peers per round (n-way dissemination) */
    int tree;     /* hierarchical gathers: 1 = binomial tree among leaders, 2 = direct */
    int chunk_kb; /* shared-memory pipelining: chunk size in KiB */
    /* Transport of the schedule's messages, taken by every algorithm (it
     * never changes the schedule; src/exec/onesided.c): */
    int transport; /* KP_TRANSPORT_P2P (0: MPI point-to-point) or KP_TRANSPORT_RMA */
    int rails;     /* rma: windows a message above stripe_kb is striped over (0: 1) */
    int stripe_kb; /* rma: striping threshold in KiB (0: KP_STRIPE_KB_DEFAULT) */
    int rma_path;  /* rma: how data reaches the receive buffer: KP_RMA_PATH_AUTO (0: by size),
                    * _STAGING (put into staging, copied out) or _ATTACH (put straight into the
                    * receive buffer, attached to a dynamic window); src/exec/onesided.c */
} kp_params;
#define KP_RMA_PATH_AUTO 0
#define KP_RMA_PATH_STAGING 1
#define KP_RMA_PATH_ATTACH 2
#define KP_TRANSPORT_P2P 0
#define KP_TRANSPORT_RMA 1
#define KP_RAILS_MAX 8
#define KP_STRIPE_KB_DEFAULT 64

typedef struct kp_sched {
    int coll;              /* enum kp_coll: decides the buffers' sizes */
    int rank, P;
    int root;              /* rooted collectives (gather) */
    int inplace;           /* MPI_IN_PLACE: the send buffer aliases the receive
                            * buffer (all-gather: the own block; gather: the
                            * root's block; all-to-all: the whole buffer) */
    int64_t bytes;         /* per-rank block size (see kp_sched_bufsize) */
    /* Reductions (reduce, allreduce, reduce_scatter[_block]); 1, 1, NULL otherwise: */
    int64_t elem;          /* bytes of one element: every KP_OP_REDUCE region's offset and
                            * length are multiples of it (the executor combines whole
                            * elements; builders split vectors only at elem boundaries) */
    int commute;           /* 1: the operation is commutative; 0: a combine must join its
                            * operands in rank order (a holds lower ranks than b) */
    const int64_t *block_off; /* reduce_scatter: [P + 1] byte offsets of each rank's result
                               * block in the vector (block_off[P] = bytes); NULL for the
                               * regular collectives (block j at j * bytes) */
    int64_t scratch_bytes; /* scratch the plan must provide */
    int64_t shm_bytes;     /* node segment bytes one call uses (same on a node) */
    const kp_layout *layout; /* node layout (NULL: every rank its own node) */
    int nposts;            /* posts emitted so far */
    int nrounds;           /* rounds 0 .. nrounds-1 (some may be empty) */
    int cur_round;         /* round new operations go into */
    int nops, cap;
    kp_op *ops;            /* ordered by round */
    int err;               /* first error a helper hit (KP_ERR_*), sticky */
    char errmsg[256];      /* why a builder refused, for the user */
} kp_sched;

void kp_sched_init(kp_sched *s, int rank, int P, int64_t bytes); /* all-gather */
void kp_sched_init_coll(kp_sched *s, int coll, int rank, int P, int64_t bytes, int root, int inplace);
/* Reductions: element size, commutativity and (reduce_scatter) the result
 * blocks' offsets, which the caller keeps alive while s is used. */
void kp_sched_set_reduction(kp_sched *s, int64_t elem, int commute, const int64_t *block_off);
/* Size in bytes of buffer `buf` (enum kp_buf) of this rank for its collective:
 *  all-gather       send = bytes, recv = P*bytes;
 *  gather           send = bytes, recv = P*bytes at the root, 0 elsewhere;
 *  all-to-all       send = recv = P*bytes;
 *  barrier          0;
 *  bcast            send = 0, recv = bytes on every rank (the root's holds the
 *                   data when the call starts and must hold it at the end);
 *  scatter          send = P*bytes at the root, 0 elsewhere; recv = bytes
 *                   (0 at the root under MPI_IN_PLACE: its block stays in send);
 *  reduce           send = bytes (0 at the root under MPI_IN_PLACE, which is
 *                   the root's alone); recv = bytes at the root, 0 elsewhere;
 *  allreduce        send = bytes (0 under MPI_IN_PLACE); recv = bytes;
 *  reduce_scatter_block  send = P*bytes (0 under MPI_IN_PLACE); recv = bytes
 *                   (P*bytes under MPI_IN_PLACE: the input is there, the
 *                   result goes to its first bytes);
 *  reduce_scatter   bytes is the whole vector; send = bytes (0 in place);
 *                   recv = this rank's block (bytes in place, result at 0);
 *  scratch = scratch_bytes.
 * Reductions under MPI_IN_PLACE: the input is in the receive buffer from
 * offset 0, and KP_BUF_SEND regions resolve there (kp_sched_aliased). */
int64_t kp_sched_bufsize(const kp_sched *s, int buf);
/* Does KP_BUF_SEND alias KP_BUF_RECV (MPI_IN_PLACE)? Not for bcast and
 * scatter (under MPI_IN_PLACE scatter's root simply has no receive buffer),
 * nor for a reduce's non-root (MPI_IN_PLACE is the root's alone). */
int kp_sched_aliased(const kp_sched *s);
/* Offset in the receive buffer that the send buffer aliases under MPI_IN_PLACE. */
int64_t kp_sched_inplace_offset(const kp_sched *s);
/* Reduce-scatter's blocks: offset and length of rank j's result block in the
 * vector (regular: j * bytes, bytes; reduce_scatter: from block_off). */
int64_t kp_sched_block_off(const kp_sched *s, int j);
int64_t kp_sched_block_len(const kp_sched *s, int j);
/* A copy the executors skip: under MPI_IN_PLACE its source and destination
 * are the same bytes (the send buffer aliases the receive buffer at
 * kp_sched_inplace_offset). The cost model, the simulator and the GOAL
 * export leave such copies out as the executor does. */
int kp_sched_copy_is_noop(const kp_sched *s, const kp_op *op);
void kp_sched_free(kp_sched *s);
void kp_sched_reset(kp_sched *s); /* keep storage, drop operations */

/* Append operations to the current round (zero lengths are dropped). */
/* Zero-byte synchronisation messages (barriers): kept although empty. */
void kp_sched_signal(kp_sched *s, int peer);
void kp_sched_wait_signal(kp_sched *s, int peer);
void kp_sched_send(kp_sched *s, int peer, int buf, int64_t off, int64_t len);
void kp_sched_recv(kp_sched *s, int peer, int buf, int64_t off, int64_t len);
void kp_sched_copy(kp_sched *s, int sbuf, int64_t soff, int dbuf, int64_t doff, int64_t len);
/* Combine (reductions): dst = a (op) b over len bytes, element by element;
 * a's contributions are the left operand (lower ranks, for a non-commutative
 * op). dst is either exactly a's or b's region, or overlaps neither; a and
 * b may be anywhere (a region of the segment, a received block, ...).
 * Offsets and len must be multiples of s->elem (refused otherwise). */
void kp_sched_reduce(kp_sched *s, int abuf, int64_t aoff, int bbuf, int64_t boff, int dbuf, int64_t doff,
                     int64_t len);
/* Close the current round; later operations go into the next one. A round
 * with no operations is not counted. */
void kp_sched_next_round(kp_sched *s);
/* Scratch: make sure the plan provides at least n bytes. */
void kp_sched_need_scratch(kp_sched *s, int64_t n);
/* Shared memory: segment size, post (returns its number n), wait, peer read. */
void kp_sched_need_shm(kp_sched *s, int64_t n);
int kp_sched_post(kp_sched *s);
void kp_sched_wait(kp_sched *s, int peer, int n);
/* Posts and waits on line flags: a small block placed in the rest of the
 * poster's line (KP_BUF_LINE at local * KP_LINE + 8) shares the cache line
 * with the flag, so a waiting peer gets both with one transfer. */
int kp_sched_post_line(kp_sched *s);
void kp_sched_wait_line(kp_sched *s, int peer, int n);
#define KP_LINE 256
/* The cache line a flag shares with its line's first KP_CACHE_LINE - 8
 * bytes of data. A region of a flag line that reaches past it sits in
 * cache lines the flag's transfer does not bring: read by a peer, it costs
 * one more transfer (shm.data_line), as a block in the segment does (the
 * cost model and kport-sim; shm_flat's all-gather at P = 2 took 0.18 us
 * with 32 B blocks, 0.21-0.26 with 64 B and 128 B, and 0.24-0.26 with
 * 256 B ones in the segment, docs/PERFORMANCE.md, "Session 28"). */
#define KP_CACHE_LINE 64
static inline int kp_line_spills(const kp_region *a)
{
    return a->buf == KP_BUF_LINE && a->off % KP_LINE + a->len > KP_CACHE_LINE;
}
void kp_sched_peer_read(kp_sched *s, int peer, int sbuf, int64_t soff, int dbuf, int64_t doff, int64_t len);
void kp_sched_peer_write(kp_sched *s, int peer, int sbuf, int64_t soff, int dbuf, int64_t doff, int64_t len);

/* What a schedule needs of the node's shared memory. Both must be the same
 * on every rank of a node (the checker verifies it). */
#define KP_USES_FLAGS 0x1u   /* posts, waits, peer reads/writes: counted calls (flag values) */
#define KP_USES_SEGMENT 0x2u /* data in KP_BUF_SHM / KP_BUF_LINE: the halves alternate */
unsigned kp_sched_shm_use(const kp_sched *s);
/* Refuse: record why this algorithm cannot build (printf-like); returns code. */
int kp_sched_refuse(kp_sched *s, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Finish building: closes the last round. Returns s->err. */
int kp_sched_finish(kp_sched *s);

/* Index of the first operation of round r is found by scanning; executors
 * walk ops in order and wait whenever the round number changes. */

/* Human-readable dump of one rank's schedule. */
void kp_sched_dump(const kp_sched *s, FILE *out);

/* Small integer helpers shared by builders. */
static inline int kp_mod(int64_t a, int64_t m) { int64_t r = a % m; return (int)(r < 0 ? r + m : r); }
static inline int kp_is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }
/* floor(log_b(x)) for x >= 1, b >= 2 */
int kp_ilog(int64_t x, int64_t b);
/* b^e, saturating at INT64_MAX */
int64_t kp_ipow(int64_t b, int e);
/* is x a power of b (x = b^e, e >= 0)? */
int kp_is_pow(int64_t x, int64_t b);

/* "allgather", "barrier", "gather", "alltoall", "bcast", "scatter", "reduce",
 * "allreduce", "reduce_scatter_block", "reduce_scatter" (enum kp_coll); "?" otherwise */
const char *kp_coll_name(int coll);

#endif /* KP_SCHED_H */
