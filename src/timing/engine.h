/*
 * The timing engine's state and its small shared helpers (internal to
 * src/timing and the two front ends, src/model/model.c and src/sim/sim.c).
 *
 * Streams (stream.c). Every rank's schedule is converted to a compact
 * stream of 8-byte operations (sop: kind, peer, length or post number,
 * "last of its round"; lengths above 32 MiB in a side table) and freed, so
 * P full kp_sched structs never need to exist at once. Copies that
 * MPI_IN_PLACE makes no-ops are dropped (the executor skips them). Both rule
 * sets run on these streams: des.c (LogGOPSim's order) and walk.c (kport's
 * executor order); the formulas they apply are in rules.h.
 *
 * Clocks (clk) carry the critical path's vector (where their time came
 * from) and the chain's last hop; the executor walk uses only their t.
 */
#ifndef KP_TIMING_ENGINE_H
#define KP_TIMING_ENGINE_H

#include "timing/rules.h"
#include "timing/timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- compact operations ------------------------------------------------ */

enum { S_SEND = 0, S_RECV, S_COPY, S_POST, S_WAIT, S_PREAD, S_PWRITE, S_REDUCE };
#define M_KIND 0x7u
#define M_END 0x8u
#define M_CLS_SHIFT 4 /* copy: 0 memcpy, 1 copy_in, 2 copy_out (flag line), 3 copy_out (segment lines);
                       * combine: kp_rule_reduce_class */
#define M_SENT 0x10u /* send: it has started (set only when exchanges are priced, xpair) */
#define XP_FURTHER 0x80000000u /* xpair: a further exchange with the same peer in the round (X2 + X2G*s) */
#define M_BIG 0x40u
#define M_VAL_SHIFT 7
#define M_VAL_MAX ((1u << 25) - 1)

typedef struct sop {
    uint32_t peer;
    uint32_t meta;
} sop;

/* ---- vectors (critical path) ------------------------------------------- */

#define NV (KP_SIM_NCAT + 1) /* + messages on the path */
typedef struct clk {
    double t;
    float v[NV];
    uint32_t who; /* the chain's last hop that set it (index + 1 in the hop log; 0: none) */
} clk;

/* one hop of a chain of operations (the critical path's log) */
typedef struct hop {
    double t;      /* when it started */
    int64_t len;   /* bytes (wait: the post's number) */
    uint32_t rank, peer, pred;
    int kind;      /* KP_SIM_HOP_* */
} hop;
#define HOP_LOG_MAX (4u << 20)

/* ---- events ------------------------------------------------------------ */

enum { E_POST = 0, E_SEND, E_RECV, E_LOCOP, E_JOIN, E_MSG, E_WAITDONE };

typedef struct ev {
    double t;
    uint64_t k; /* first-queued order << 3 | type */
    uint32_t host;
    uint32_t x; /* op index (relative to the rank's stream) or record index */
} ev;

typedef struct evb { /* a bucket of the queue */
    ev *e;
    size_t n, cap;
} evb;

/* a message in flight or unexpected, or a wait's completion */
typedef struct rec {
    clk c;          /* arrival time (or wait completion) and its vector */
    uint32_t src;   /* sender */
    uint32_t op;    /* sender's op index (message) or waiter's op (wait) */
    uint32_t next;  /* unexpected queue / free list (index + 1, 0 = none) */
    uint32_t rcv;   /* a parked message whose receive is now posted: that receive's op + 1 (0: none) */
    uint8_t port;   /* sender's port */
    uint8_t parked; /* unexpected and not taken in yet (exchanges only: see will_pair) */
} rec;

/* a posted receive */
typedef struct prq {
    uint32_t src, op, next;
} prq;

/* a wait registered before its post */
typedef struct wnode {
    uint32_t rank, op, n, next;
} wnode;

typedef struct srank {
    clk cpu;
    uint32_t cur;     /* first op of the current round (relative) */
    uint32_t pending; /* ops of the current round not complete */
    uint32_t rposted; /* receives below this op index are posted */
    uint32_t rq, rq_tail, uq, uq_tail;
} srank;

typedef struct sim {
    const kp_machine *m;  /* the costs */
    kp_sim_result *r;     /* counts, messages, results */
    int P, ports, rails, nsize, nnodes;
    const int *node_of;   /* [P] node of every rank, or NULL: blocks of nsize ranks (nsize <= 1: a node each) */
    int zero_wrap;        /* LogGOPSim's unsigned s - 1 for 0-byte messages (kp_sim_config.zero_wrap) */
    /* progress, about once a second after the first two seconds (may be NULL) */
    void (*progress)(void *arg, const char *phase, double sim_ns, uint64_t done, uint64_t total, double wall_s);
    void *progress_arg;
    sop *ops;
    uint64_t *base; /* [P+1] */
    uint32_t *xpair; /* [nops] or NULL: a receive's paired send of its round (relative index + 1; 0: none),
                      * and a send's paired receive,
                      * with XP_FURTHER when it is not the first exchange with that peer in the round (a
                      * rank's operations stay below 2^31: the memory limit holds far fewer) */
    int64_t *big;
    size_t nbig, capbig;
    size_t nops, capops;
    srank *rk;
    clk *gs, *gr;         /* [P*ports] */
    clk *rgs, *rgr;       /* [nnodes*rails] */
    /* posts */
    uint32_t *pbase;      /* [P+1] or NULL */
    uint64_t nposts;      /* posts over all ranks */
    clk *post;            /* [total posts], t < 0 unknown */
    uint32_t *whead;      /* [P] waiters' lists */
    wnode *wpool;
    size_t nw, capw;
    uint32_t wfree;
    /* pools */
    rec *recs;
    size_t nrecs, caprecs;
    uint32_t recfree;
    prq *prqs;
    size_t nprq, capprq;
    uint32_t prqfree;
    /* queue */
    evb bk[65];
    size_t nheap, zpos;
    uint64_t last; /* key of the current time */
    double now;
    uint64_t ts;
    /* hosts touched by the current event */
    uint32_t touch[4];
    int ntouch;
    int64_t finished;
    hop *log;
    size_t nlog, caplog;
    int log_on;
    int err;
    size_t mem, peak;
    size_t limit; /* the machine's physical memory: beyond it, fail instead of meeting the OOM killer */
} sim;


/* ---- memory (stream.c) ----------------------------------------------------
 * Every allocation of the engine counts against s->limit (90% of the memory
 * available when kport-sim starts; 0: none), so a run fails with a message
 * instead of meeting the OOM killer. */
int kp_eng_grow(sim *s, void **p, size_t *cap, size_t need, size_t elem);
void *kp_eng_alloc0(sim *s, size_t n, size_t elem);
int kp_eng_nomem(sim *s);
double kp_eng_now(void);

/* ---- streams (stream.c) ---------------------------------------------------- */

/* Set up s for P ranks (s zeroed by the caller, m, r, P, node layout and
 * options set): allocates base. 0 or an error code. */
int kp_eng_begin(sim *s);
/* Append rank `rank`'s schedule (ranks in order 0..P-1); counts messages,
 * copies, posts into s->r. 0 or an error code (s->r->msg). */
int kp_eng_add(sim *s, const kp_sched *sc, int rank);
/* After the last rank: the post table, the stream shrunk to size, the
 * exchange pairing (when the machine has a measured exchange). */
int kp_eng_end(sim *s);
void kp_eng_free(sim *s);

/* ---- the two orders ---------------------------------------------------------
 * Both fill s->r->rank_ns[P] with each rank's completion less its entry
 * (allocated by the caller), s->r->max_ns and slowest_rank. */
int kp_eng_des(sim *s, double t0);           /* des.c: LogGOPSim's rules, the critical path too */
int kp_eng_walk(sim *s, int hockney);        /* walk.c: the executor's rules (hockney: Hockney instead) */
/* Run under rules (allocates r->rank_ns); 0 or an error code. */
int kp_eng_run(sim *s, kp_timing_rules rules, int hockney, double t0);

/* ---- helpers ---------------------------------------------------------------- */

static inline uint32_t node_id(const sim *s, uint32_t a)
{
    return s->node_of ? (uint32_t)s->node_of[a] : s->nsize > 1 ? a / (uint32_t)s->nsize : a;
}

static inline int same_node(const sim *s, uint32_t a, uint32_t b)
{
    if (s->node_of)
        return s->node_of[a] == s->node_of[b];
    return s->nsize > 1 && a / (uint32_t)s->nsize == b / (uint32_t)s->nsize;
}

static inline const kp_channel *chan(const sim *s, uint32_t a, uint32_t b)
{
    return same_node(s, a, b) ? &s->m->intra : &s->m->inter;
}

static inline int64_t op_len(const sim *s, sop o)
{
    const uint32_t v = o.meta >> M_VAL_SHIFT;
    return (o.meta & M_BIG) ? s->big[v] : (int64_t)v;
}

static inline sop *rop(const sim *s, uint32_t r, uint32_t i)
{
    return &s->ops[s->base[r] + i];
}

/* one past the last op of the round that op `from` of rank h is in */
static inline uint32_t round_end(const sim *s, uint32_t h, uint32_t from)
{
    const uint32_t n = (uint32_t)(s->base[h + 1] - s->base[h]);
    uint32_t e = from;
    while (e < n && !(rop(s, h, e)->meta & M_END))
        e++;
    return e < n ? e + 1 : n;
}

/* a local operation's CPU time (copy or combine by its class, peer read / write) */
static inline double locop_cost(const sim *s, sop o)
{
    const unsigned k = o.meta & M_KIND;
    const int kind = k == S_COPY     ? KP_OP_COPY
                     : k == S_PREAD  ? KP_OP_PEER_READ
                     : k == S_PWRITE ? KP_OP_PEER_WRITE
                     : k == S_REDUCE ? KP_OP_REDUCE
                                     : -1;
    return kind < 0 ? 0.0 : kp_rule_local_cost(s->m, kind, (o.meta >> M_CLS_SHIFT) & 3u, op_len(s, o));
}

/* the rank's entry into the call (odd ranks call.skew late, P > 1) */
static inline double entry(const sim *s, uint32_t r)
{
    return kp_rule_entry(s->m, s->P, (int)r);
}

#endif /* KP_TIMING_ENGINE_H */
