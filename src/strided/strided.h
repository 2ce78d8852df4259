/*
 * One-sided strided transfers: internal interfaces (not part of the API).
 *
 *   desc.c      the strided descriptor: validation, sizes, chunk offsets,
 *               packing and unpacking any byte range of the packed stream
 *               (pure, no MPI; tests/unit/test_strided_desc.c)
 *   win.c       kport windows: the data window, the slot pool, fences,
 *               barriers, the helper thread, the registry of live windows
 *               (every window's agent runs from a call on any window)
 *   direct.c    method "direct": one MPI operation per contiguous chunk, or
 *               one copy per chunk into or out of a shared window
 *   datatype.c  method "datatype": one MPI operation with derived datatypes
 *   pack.c      method "pack": bounce buffers, slot pool, progress agent
 *   auto.c      the cost model and the method choice, the "rma" parameters
 *   api.c       entry points: validation, issue order (pending operations
 *               a later conflicting one waits for), requests, kp_wait / kp_test
 */
#ifndef KP_STRIDED_INT_H
#define KP_STRIDED_INT_H

#include "util/copy.h"
#include "kport.h"

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define KP_SD_MAXL KP_STRIDED_MAX_LEVELS
#define KP_SD_LIMIT ((int64_t)1 << 62)

/* ---- the descriptor (desc.c) ---------------------------------------------- */

typedef struct kp_sd_side { /* one side's layout */
    int64_t stride[KP_SD_MAXL];
    int64_t extent; /* bytes from the first to past the last byte */
} kp_sd_side;

typedef struct kp_sd {
    int levels;
    int64_t count[KP_SD_MAXL + 1];
    int64_t nchunks; /* count[1] * ... * count[levels] (0 if N = 0) */
    int64_t total;   /* N = count[0] * nchunks */
} kp_sd;

/* Validate counts (sd filled) and one side's strides (side filled; `what`
 * names it in messages: "source", "target"). KP_SUCCESS or a KP_ERR_* code
 * with kp_last_error() set. Strides are only read when total > 0. */
int kp_sd_counts(kp_sd *sd, const MPI_Aint count[], int levels);
int kp_sd_strides(const kp_sd *sd, kp_sd_side *side, const MPI_Aint stride[], const char *what);
/* Byte offset of chunk index c (0 .. nchunks-1, level 1 fastest). */
int64_t kp_sd_chunk_offset(const kp_sd *sd, const kp_sd_side *side, int64_t c);
/* Copy bytes [off, off+len) of the packed stream from the strided layout at
 * base into stream (pack) / from stream into the layout (unpack). */
void kp_sd_pack_range(const kp_sd *sd, const kp_sd_side *side, const char *base, int64_t off, int64_t len,
                      char *stream);
void kp_sd_unpack_range(const kp_sd *sd, const kp_sd_side *side, char *base, int64_t off, int64_t len,
                        const char *stream);
/* Contiguous runs of bytes [off, off+len) of the stream: calls fn(layout
 * offset, stream offset, bytes, arg) per run; stops at a nonzero return. */
int kp_sd_runs(const kp_sd *sd, const kp_sd_side *side, int64_t off, int64_t len,
               int (*fn)(int64_t where, int64_t soff, int64_t n, void *arg), void *arg);

/* ---- the cost model's parameters (auto.c; "rma" in the parameter file) ---- */
enum kp_strided_param {
    KP_SP_T0,   /* ns: a direct put/get's fixed cost (validation, flush) */
    KP_SP_TS,   /* ns per put/get operation (chunk) */
    KP_SP_TN,   /* ns per byte put or got */
    KP_SP_TM,   /* ns per byte copied (pack, unpack) */
    KP_SP_TC,   /* ns per chunk copied */
    KP_SP_TP,   /* ns per pack-method slot (its protocol) */
    KP_SP_TD0,  /* ns: a datatype put/get's fixed cost */
    KP_SP_TD1,  /* ns per chunk the datatype walks */
    KP_SP_TA0,  /* ns: a direct accumulate's fixed cost */
    KP_SP_TSA,  /* ns per accumulate operation (chunk) */
    KP_SP_TNA,  /* ns per byte accumulated (scaling included) */
    KP_SP_TDA0, /* ns: a datatype accumulate's fixed cost */
    KP_SP_TDA1, /* ns per chunk a datatype accumulate walks */
    KP_SP_TDN,  /* ns per byte a datatype put/get moves (MPICH packs it: 17x tn) */
    KP_SP_TDNA, /* ns per byte a datatype accumulate moves */
    KP_SP_TDNB, /* ns per byte a datatype accumulate moves beyond KP_SD_KNEE */
    KP_SP_TPN,  /* ns per byte of a pack-method put, as its caller waits for it */
    KP_SP_TPG,  /* ns per pack-method get slot (request, reply, its protocol) */
    KP_SP_TPGN, /* ns per byte of a pack-method get */
    KP_SP_TPC,  /* ns per chunk of a pack-method put or get, as its caller waits for it */
    KP_SP_TL0,  /* ns: a direct put/get's fixed cost by load/store (shared windows) */
    KP_SP_TLS,  /* ns per further chunk copied by load/store */
    KP_SP_TLN,  /* ns per byte copied by load/store */
    KP_SP_TLA0, /* ns: a direct accumulate's fixed cost by load/store (lock, syncs) */
    KP_SP_TLAS, /* ns per further chunk accumulated by load/store */
    KP_SP_TLAN, /* ns per byte accumulated by load/store (scaling included) */
    KP_SP_COUNT
};
extern const char *const kp_strided_param_names[KP_SP_COUNT];
/* bytes beyond which a datatype accumulate pays tdnb more per byte: MPICH
 * 4.0 ran rows of 4 KiB at 0.28 ns/B up to 512 KiB and at 0.65-1.0 from
 * 1 MiB (2.6 with two origins); its temporary buffers come from mmap and
 * are faulted in per call (with glibc's MALLOC_MMAP_THRESHOLD_ at 1 GiB,
 * 1 MiB ran 2.5x faster) */
#define KP_SD_KNEE ((int64_t)1 << 20)

/* ---- windows (win.c) ---------------------------------------------------- */

enum kp_strided_kind { KP_SD_PUT = 0, KP_SD_GET = 1, KP_SD_ACC = 2 };
enum kp_strided_method { KP_M_AUTO = 0, KP_M_DIRECT = 1, KP_M_DATATYPE = 2, KP_M_PACK = 3, KP_M_COUNT };

/* The header of a pool slot: the descriptor that travels with the data. */
typedef struct kp_slot_hdr {
    int32_t kind, acc_type, levels, origin;
    int64_t disp;                   /* target displacement of the section */
    int64_t count[KP_SD_MAXL + 1];
    int64_t stride[KP_SD_MAXL];     /* target strides */
    int64_t off, len;               /* this part: bytes [off, off+len) of the stream */
    int64_t ticket;
} kp_slot_hdr;
#define KP_SLOT_HDR 256 /* bytes reserved for the header in a slot (>= sizeof) */
#define KP_DT_CACHE 16  /* committed datatypes kept per window */

/* One pending operation of this rank whose effect at its target is not yet
 * ordered with what this rank issues next (api.c, "issue order"): a class
 * (KP_PD_*), the target and the bytes [lo, hi) of its window it may touch. */
enum kp_pend_class {
    KP_PD_MPI_PUT = 1, /* nonblocking direct / datatype put: MPI operation not yet flushed */
    KP_PD_MPI_ACC = 2, /* the same, accumulate */
    KP_PD_MPI_GET = 4, /* the same, get */
    KP_PD_PACK_PUT = 8,  /* pack put in the target's pool, not yet unpacked (kp_pack_fence) */
    KP_PD_PACK_ACC = 16, /* the same, accumulate */
};
#define KP_PD_MPI (KP_PD_MPI_PUT | KP_PD_MPI_ACC | KP_PD_MPI_GET)
#define KP_PD_PACK (KP_PD_PACK_PUT | KP_PD_PACK_ACC)
#define KP_PEND_MERGE 8 /* entries of one (target, class) beyond which they merge into one */
typedef struct kp_pend {
    int target, cls;
    int64_t lo, hi;
} kp_pend;

struct kp_win_s {
    MPI_Comm comm;   /* kport's private duplicate of the program's (MPI_ERRORS_RETURN) */
    int rank, P;
    MPI_Win win;     /* the data */
    int own_win;     /* kport allocated it */
    int locked;      /* the data window's and the pool's lock_all epochs are open */
    char *base;      /* local base of the data window */
    /* the data window is an MPI_Win_allocate_shared one (unified model):
     * peer[r] is rank r's window memory mapped here, and direct puts and
     * gets copy by load/store (win.c, direct.c); NULL otherwise */
    char **peer;
    int loadstore;   /* direct puts and gets use peer[] (0: MPI operations) */
    /* with peer[]: every rank's accumulate lock, an int in a small shared
     * window of its own (alock_win); every kport accumulate into rank r's
     * memory, whatever its method, runs under alock[r] (win.c) */
    MPI_Win alock_win;
    int **alock;
    MPI_Aint *sizes; /* [P] every rank's window size */
    /* the slot pool: a window of its own. Layout: control words (reserve
     * counter, then per slot: turn, ready), then nslots slots of
     * KP_SLOT_HDR + slot_bytes */
    MPI_Win pool;
    char *pool_base;
    int nslots;
    int64_t slot_bytes;  /* data bytes per slot */
    MPI_Aint ctrl_bytes; /* offset of slot 0 */
    int64_t agent_next;  /* the next ticket the agent processes */
    char *bounce[2];     /* origin-side bounce buffers (KP_SLOT_HDR + slot_bytes) */
    int64_t *pack_pending; /* [P] 1 + last pack ticket this rank wrote to each target (0: none) */
    /* the helper thread */
    pthread_mutex_t lock;
    pthread_t thread;
    int thread_on, thread_stop;
    struct kp_request_s *reqs; /* pending pack gets (progressed together) */
    kp_pend *pend;             /* pending operations not yet ordered (api.c), npend of cap */
    int npend, pend_cap;
    struct kp_win_s *live_prev, *live_next; /* the process's live windows (win.c) */
    /* cost model parameters used by auto (auto.c, enum kp_strided_param) */
    double par[KP_SP_COUNT];
    struct kp_strided_memo { /* auto's recent choices: (kind, chunks, bytes) -> method */
        int64_t k, N;
        int kind, method;
    } memo[4];
    unsigned memo_next;
    int nlocal;  /* ranks of the communicator on this machine */
    int oversub; /* more ranks on this machine than cores: yield when waiting */
    int pool_unified; /* the pool window's memory model is MPI_WIN_UNIFIED */
    /* committed datatypes of recent layouts (datatype.c): a repeated
     * section skips building and committing its two types */
    struct kp_dt_entry {
        MPI_Datatype base, type;
        int levels;
        int64_t n0, count[KP_SD_MAXL], stride[KP_SD_MAXL];
        unsigned long used;
    } dtc[KP_DT_CACHE];
    unsigned long dtc_clock;
    kp_strided_counters cnt;
};

/* One round of a waiting loop that found nothing: counted; gives the CPU
 * away when the machine is oversubscribed, else pauses. */
void kp_strided_idle(kp_win w, unsigned *spins);

/* The accumulate lock of rank r (a shared window only): spins (making MPI
 * progress, yielding when oversubscribed) until this rank holds it. Held
 * only around a local loop or MPI operations this rank completes itself. */
void kp_acc_lock(kp_win w, int r);
void kp_acc_unlock(kp_win w, int r);

/* Slot control word addresses (displacements in the pool window). */
#define KP_CTRL_RESERVE 0
static inline MPI_Aint kp_ctrl_turn(int slot) { return 64 + (MPI_Aint)slot * 16; }
static inline MPI_Aint kp_ctrl_ready(int slot) { return 64 + (MPI_Aint)slot * 16 + 8; }
static inline MPI_Aint kp_slot_disp(const struct kp_win_s *w, int slot)
{
    return w->ctrl_bytes + (MPI_Aint)slot * (KP_SLOT_HDR + (MPI_Aint)w->slot_bytes);
}
#define KP_READY_REPLY ((int64_t)1 << 61)

/* Atomic 64-bit read / write of a pool control word at rank r (flushed). */
int kp_pool_read(kp_win w, int r, MPI_Aint disp, int64_t *v);
int kp_pool_write(kp_win w, int r, MPI_Aint disp, int64_t v);
/* fetch-and-add (flushed): *old = previous value */
int kp_pool_fadd(kp_win w, int r, MPI_Aint disp, int64_t add, int64_t *old);

/* The agent: process every ready slot addressed to this rank, in ticket order. */
int kp_agent_run(kp_win w);
/* Everything this rank can do on one window without waiting: its agent and
 * its pending pack gets (pack.c). The window is entered. */
int kp_strided_progress_win(kp_win w);
/* The same for every live window of the process (win.c): w's (entered by
 * the caller), then every other one whose helper thread does not hold its
 * mutex (taken with trylock: the only mutex a call waits for is its own
 * window's, so no two threads wait for each other's). Every strided call,
 * wait, test, fence, barrier and progress call and every waiting loop runs
 * this, so a rank inside a call on one window serves its others. */
int kp_strided_progress(kp_win w);
void kp_win_enter(kp_win w);
void kp_win_leave(kp_win w);

/* ---- requests and methods ----------------------------------------------- */

struct kp_request_s {
    kp_win win;
    int kind, method, target;
    int done;
    int copied;              /* complete when started (load/store, or an accumulate under the lock) */
    void *tmp;               /* scaled accumulate data (direct, datatype) */
    MPI_Request mreq;        /* datatype: the request of MPI_Rput / MPI_Rget */
    /* pack get state */
    kp_sd sd;
    kp_sd_side lside, rside;
    char *lbase;
    int64_t rdisp;
    int64_t t0, npieces, sent, harvested;
    char *buf;               /* one slot's worth */
    struct kp_request_s *next;
};

typedef struct kp_strided_op {     /* one validated call */
    int kind;              /* enum kp_strided_kind */
    int acc_type;          /* enum kp_acc_type */
    MPI_Datatype etype;    /* the element type (acc) */
    int esize;
    const void *scale;
    char *lbase;           /* origin buffer */
    int64_t rdisp;         /* target displacement */
    kp_sd sd;
    kp_sd_side lside, rside;
    int target;
} kp_strided_op;

/* Each method: start the operation; *req gets what completion needs. */
int kp_direct_start(kp_win w, const kp_strided_op *op, struct kp_request_s *req);
int kp_datatype_start(kp_win w, const kp_strided_op *op, struct kp_request_s *req);
int kp_pack_start(kp_win w, const kp_strided_op *op, struct kp_request_s *req);
/* pack gets: one non-waiting step (1 when finished) */
int kp_pack_get_step(kp_win w, struct kp_request_s *req, int *finished);
/* scaled copy of the source section as a packed stream (acc), malloc'd */
int kp_acc_scaled_stream(const kp_strided_op *op, char **out);
/* dst[i] = scale * src[i] for n bytes of elements of type t */
void kp_acc_scale(int type, const void *scale, const char *src, char *dst, int64_t n);
/* dst[i] += scale * src[i] over `rows` rows of n bytes, strides ds and ss
 * (integers wrap around, as MPI_SUM's do in practice) */
void kp_acc_add_rows(int type, const void *scale, char *dst, const char *src, int64_t n, int64_t rows, int64_t ds,
                     int64_t ss);
/* free the window's cached datatypes */
void kp_datatype_cache_free(kp_win w);
/* fence to target when pack writes from this rank are still unprocessed there */
int kp_pack_fence(kp_win w, int target);

/* ---- issue order (api.c) -------------------------------------------------- */
/* Pending operations of this rank to target of the classes in mask that
 * touch bytes [lo, hi) of its window: nonzero if any. */
int kp_pend_overlaps(const kp_win w, int target, int mask, int64_t lo, int64_t hi);
/* Forget the pending operations of the classes in mask to target (-1:
 * every target): a flush of the data window completed the MPI ones, a
 * pack fence the pack ones. */
void kp_pend_clear(kp_win w, int target, int mask);
/* MPI_Win_flush(target) of the data window, counted; the MPI classes to
 * target are complete afterwards. */
int kp_data_flush(kp_win w, int target, const char *who);

/* ---- the choice (auto.c) ------------------------------------------------- */
void kp_strided_params_default(kp_win w);
int kp_strided_params_load(kp_win w, const char *path);
int kp_strided_choose(kp_win w, const kp_strided_op *op);
const char *kp_strided_method_name(int m);
/* the model's time (ns) of method m for k chunks, N bytes */
double kp_strided_cost(kp_win w, int m, int kind, int64_t k, int64_t N);
/* the same from a parameter array (KP_SP_COUNT), a slot size in bytes and
 * whether direct puts and gets copy by load/store (tl0, tls, tln) */
double kp_strided_cost_par(const double *par, int64_t slot_bytes, int loadstore, int m, int kind, int64_t k,
                       int64_t N);
int kp_strided_method_parse(const char *s);
/* the forced method (kp_strided_set_method / KPORT_STRIDED_METHOD) or KP_M_AUTO */
int kp_strided_forced(void);

#endif
