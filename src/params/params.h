/*
 * The machine parameter file (docs/PARAMETERS.md): what `kport-bench loggp`
 * measures and the cost model, the simulator and the tuner read. Times in
 * nanoseconds, per-byte costs in nanoseconds per byte.
 */
#ifndef KP_MODEL_PARAMS_H
#define KP_MODEL_PARAMS_H

#include <stdint.h>

#define KP_PARAMS_VERSION 1
#define KP_MAX_PIECES 8

/* LogGP parameters of messages up to max_bytes (-1: no limit); with has_x,
 * also the measured time of an exchange (a rank sends s bytes to a peer and
 * receives s bytes from it at once, both ranks alike): X + XG * s; with
 * has_x2 (only with has_x), what a second such exchange with the same peer
 * at once adds (two messages of s bytes each way in flight): X2 + X2G * s */
typedef struct kp_loggp {
    int64_t max_bytes;
    double L, o_s, o_r, g, G, O;
    int has_x;
    double X, XG;
    int has_x2;
    double X2, X2G;
} kp_loggp;

/* the measured time of an exchange of s bytes with a peer (has_x): X + XG*s,
 * or, for a further one with the same peer in the round where the piece
 * has it (further && has_x2), what it adds: X2 + X2G*s */
static inline double kp_exchange_ns(const kp_loggp *p, int further, int64_t s)
{
    return further && p->has_x2 ? p->X2 + p->X2G * (double)s : p->X + p->XG * (double)s;
}

/* eager_max when the file has none: the first piece's max_bytes is the
 * eager limit (files written before eager_max existed) */
#define KP_EAGER_FIRST_PIECE (-2)

typedef struct kp_channel { /* MPI point-to-point between two ranks */
    int npieces;
    kp_loggp piece[KP_MAX_PIECES]; /* increasing max_bytes, the last -1 */
    int64_t eager_max; /* largest eager message (bytes); -1: every message eager; KP_EAGER_FIRST_PIECE */
} kp_channel;

/* fixed + per_byte * bytes; with large_from > 0, the bytes beyond
 * large_from cost large_per_byte each instead (a copy whose data no longer
 * fits the caches): fixed + per_byte * large_from + large_per_byte *
 * (bytes - large_from). large_from 0: one slope. */
typedef struct kp_linear {
    double fixed, per_byte;
    int64_t large_from;
    double large_per_byte;
} kp_linear;

/* The cost of `bytes` under l (ns). */
double kp_linear_cost(const kp_linear *l, int64_t bytes);

typedef struct kp_callcost { /* kport's own cost of a call, and how a benchmark times it (ns) */
    double fixed; /* per call: argument checks, plan lookup, the executor's set-up */
    double skew;  /* entry skew after MPI_Barrier, added once to a call of P > 1 */
} kp_callcost;

typedef struct kp_machine {
    int version;
    char host[128], cpu[128], mpi[128], date[64], command[512];
    int cores;
    kp_channel intra, inter;
    kp_linear flag, copy_in, copy_out, memcpy_, peer_read, peer_write;
    /* shm.data_line (optional, 0 when absent): what reading a block from
     * segment lines of its own costs beyond a block in the flag's line,
     * once per copy out of the segment (KP_BUF_SHM) */
    double data_line;
    kp_linear hockney_intra, hockney_inter; /* fixed = alpha, per_byte = beta */
    kp_callcost call; /* optional in the file: 0 when absent */
    /* compute.reduce (optional): the combine of a reduction (KP_OP_REDUCE,
     * dst = a op b over n bytes: two operands read, one written), ns and
     * ns per byte of one operand (gamma). Absent from the file (files
     * written before it existed): kp_params_reduce_default, reduce_given 0. */
    kp_linear reduce;
    int reduce_given;       /* 1: the file (or its writer) gave compute.reduce; save writes it then,
                             * or when reduce is not the default */
    char reduce_kernel[96]; /* what was timed (compute.kernel, free text; "" when absent) */
} kp_machine;

/* The default combine cost of a file without compute.reduce: its memcpy
 * with every per-byte cost KP_REDUCE_DEFAULT_SCALE times larger (a combine
 * streams three operands where a copy streams two), the same fixed cost
 * and knee. */
#define KP_REDUCE_DEFAULT_SCALE 1.5
kp_linear kp_params_reduce_default(const kp_machine *m);

/* The eager limit of ch: eager_max, or the first piece's max_bytes when
 * the file has none (-1: every message is eager). */
int64_t kp_channel_eager_max(const kp_channel *ch);

/* 1 when a piece of either channel of m has a measured exchange (has_x):
 * only then do the cost model and kport-sim pair a round's exchanges. */
int kp_params_has_exchange(const kp_machine *m);

/* The piece of ch that a message of `bytes` uses. */
const kp_loggp *kp_channel_piece(const kp_channel *ch, int64_t bytes);

/* Read / write a parameter file. Load returns KP_SUCCESS or KP_ERR_PARAM
 * with a message naming the file and the field in err (a file that cannot
 * be opened included); fields the reader does not know are ignored. Save
 * returns KP_SUCCESS, KP_ERR_PARAM when kp_params_check refuses m (call it
 * for the message: save never writes a file load would refuse) or
 * KP_ERR_ARG (cannot write; errno says why). Path "-" saves to stdout.
 * Numbers are written with the fewest digits that read back exactly, so
 * save -> load gives the same struct. */
int kp_params_load(const char *path, kp_machine *m, char *err, int errlen);
int kp_params_save(const char *path, const kp_machine *m);
/* The same file's optional object `key`, whose fields (all optional) are
 * the non-negative numbers names[0..n): out[i] set for each one present
 * (the strided API's "rma" costs, src/strided/auto.c). KP_SUCCESS, or
 * KP_ERR_PARAM / KP_ERR_NOMEM with the reason in err. */
int kp_params_load_costs(const char *path, const char *key, const char *const *names, int n, double *out, char *err,
                         int errlen);
/* Check a machine description as load does (after filling one by hand):
 * version, 1..KP_MAX_PIECES pieces of increasing max_bytes with the last
 * -1, every cost finite and >= 0, cores >= 0. KP_SUCCESS or KP_ERR_PARAM
 * with a message naming the field ("p2p.intra.pieces[1].G: -0.1 is negative"). */
int kp_params_check(const kp_machine *m, char *err, int errlen);
/* An empty, valid machine: version set, every cost 0, one piece per
 * channel (max_bytes -1), eager_max KP_EAGER_FIRST_PIECE, strings empty.
 * Writers fill it in. */
void kp_params_init(kp_machine *m);

#endif /* KP_MODEL_PARAMS_H */
