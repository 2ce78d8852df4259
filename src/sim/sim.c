/*
 * kport-sim's engine: discrete-event LogGP simulation of kport's schedules.
 * docs/SIMULATOR.md is the user's account of these rules; this is the
 * implementer's.
 *
 * Schedules. Every rank's schedule comes from the builder (kp_algo_build_on,
 * which applies kport's defaults and clamping), is converted to a compact
 * stream of 8-byte operations (kind, peer, length or post number, "last of
 * its round") and freed, so P full kp_sched structs never exist at once.
 * Copies that MPI_IN_PLACE makes no-ops (source and destination the same
 * bytes) are dropped, as the executor skips them.
 *
 * Events (LogGOPSim's, HPDC'10, and its source's rules). Each rank has a CPU
 * clock (cpu: when its CPU is next free), per port a send gap clock (gs) and
 * a receive gap clock (gr). A message of s bytes on a channel with L, o_s,
 * o_r, g, G, O (s1 = max(s - 1, 0)):
 *  - a send may start at t = max(cpu, gs) (the free port whose gs is
 *    earliest, the lowest port on ties); then cpu = t + o_s + s1*O,
 *    gs = t + g + s1*G, and the message reaches the receiver at t + o_s + L
 *    (G is charged at the receiver). Eager (s <= the eager limit): the send
 *    is complete at t. Rendezvous: it completes when the receiver matches
 *    the message, which raises the sender's cpu and port clock to that time.
 *  - a message that arrived at a is taken in at h = max(a, cpu, gr) of the
 *    receiver: cpu = h + o_r + max(s1*O, s1*G), gr = h + g + s1*G, and it
 *    is matched against the posted receives (first posted receive from that
 *    sender); unmatched, it waits in the unexpected queue.
 *  - a receive is posted at no cost; it matches the first unexpected
 *    message from its peer (then it is complete at once) or waits.
 *  - exchanges (only when the message's piece has a measured exchange,
 *    has_x: X + XG*s, docs/PARAMETERS.md; never with -L -o -g -G -O -S
 *    alone): the k-th receive from q of a round pairs with the k-th send to
 *    q of the same round (xpair, fixed when the schedules are built: the
 *    cost model's pairing). When a message taken in matches a paired
 *    posted receive whose send has started (M_SENT), it is taken in as an
 *    exchange (take_exchange): with hm = max(a, gr) (and the rail's clock:
 *    the message's side, not the CPU) and
 *    rest = max(0, X + XG*s - (o_s + s1'*O)) (the measured exchange less
 *    the paired send's own CPU time, s1' of the send's size, which is
 *    already on the clock),
 *        cpu = max(hm + o_r + max(s1*O, s1*G), cpu + rest), gr = hm + g + s1*G,
 *    where cpu is the CPU clock when the message is taken in: the event
 *    still waits for the CPU, so the paired send, the round's other sends,
 *    its copies and earlier receives all count before rest. Two idle ranks
 *    exchanging s bytes finish at X + XG*s; a late message still bounds it,
 *    though the exchange bounds its message's hm + o_r + by too: at most
 *    t_s + X + XG*s, t_s its send's start (its arrival less o_s + L), not
 *    before it is taken in (t); a further pair keeps the one-way bound.
 *    A further exchange with the same peer in the round (the k-th pair,
 *    k >= 2; XP_FURTHER) takes X2 + X2G*s for X + XG*s where the piece has
 *    them (has_x2: what a second message each way at once adds).
 *    A paired send (eager or rendezvous) holds the CPU o_s + (s-1)O, at most that measured
 *    exchange (X + XG*s', a further one X2 + X2G*s', s' the receive's size:
 *    send_cap); its message still leaves after o_s. A further eager one (has_x2)
 *    does not wait for its send port's gap (further_free; its port is busy
 *    g + (s-1)G after the previous message's): X2 + X2G*s, a second message
 *    each way sent at once, holds that gap. A message for a paired receive
 *    is taken in only once every send of the round has started
 *    (unsent_ready), as the executor posts them all before MPI_Waitall.
 *    Two idle ranks sending each other two messages of s bytes then finish
 *    at X + X2 + (XG+X2G)*s, as measured, also where o_s + (s-1)O exceeds
 *    X2 + X2G*s (Open MPI's 512 B-2 KiB) or the gap exceeds o_s (MPICH's
 *    8 KiB).
 *    A message that arrives before its receive is posted (the receiver is
 *    late: call.skew, a copy round before the exchange) is parked, not taken
 *    in, when the receive it will meet - the u+1-th unposted receive from
 *    its sender in the current or the next round, u its unexpected
 *    messages queued before (will_pair) - is paired; it is taken in (the
 *    same event, re-queued) when that receive is posted. An unpaired
 *    receive follows the ordinary rule above. Where the cost model differs
 *    (model.c "Exchanges"): it completes a round's receives after all its
 *    sends and local work, where here a copy runs while a send waits for
 *    its gap, and an unpaired message is taken in between two sends when
 *    the CPU is free (LogGOPSim's order); its message bound is a + o_r with
 *    a = departure + L + (s-1)G (here o_s + L, G at the receiver); its own
 *    is o_s + O*s (here o_s + (s-1)O); it pairs receives in any round,
 *    where a parked message is looked for in two rounds only.
 *  - a copy (and a peer read / write) runs on the CPU when it is free.
 *  - rounds: the next round starts with a zero-cost join that runs when the
 *    CPU is free after the round's last operation completed (LogGOPSim's
 *    "calc 0" vertex of the GOAL export); its operations are then issued in
 *    the order posts, sends, receives, local operations (LogGOPSim sorts
 *    ready operations by type), each in schedule order.
 *  - shared memory (model.c's rules): a post is a store at the time the CPU
 *    reaches it; a wait for post n of rank q completes at
 *    max(when it is issued, post time + flag.fixed) without holding the CPU,
 *    and the CPU clock moves up to that time.
 *  - a rank's completion time is its CPU clock when everything is done,
 *    less its entry: every rank's CPU starts at entry + call.fixed, entry =
 *    call.skew for the odd ranks when P > 1, else 0 (the cost model's rule:
 *    the ranks leave a benchmark's barrier that far apart and each is
 *    timed from its own entry). The critical path's "call" holds
 *    call.fixed and the skew on the path, less the slowest rank's entry.
 *  - ties: events of equal time run in the order they were first queued
 *    (a re-queued event keeps its place), initial events rank by rank.
 *  - ports k: a rank has k send and k receive gap clocks. rails r: the
 *    node's inter-node messages also need one of the node's r send (receive)
 *    rail clocks, busy g + s1*G per message like a port.
 *
 * Critical path: every clock carries a vector of where its time came from
 * (o, L, per-byte, gap, copy, wait, call; and the messages on the path);
 * an event's time is the max of some clocks and it inherits that clock's
 * vector, so the slowest rank's CPU vector at the end is the breakdown of
 * the chain of operations ending at its completion.
 */
#include "sim/sim.h"

#include "model/model.h"

#include "kport.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *const kp_sim_cat_name[KP_SIM_NCAT] = {"overhead", "wire", "bytes", "gap", "copy", "wait", "call"};

/* ---- compact operations ------------------------------------------------ */

enum { S_SEND = 0, S_RECV, S_COPY, S_POST, S_WAIT, S_PREAD, S_PWRITE };
#define M_KIND 0x7u
#define M_END 0x8u
#define M_CLS_SHIFT 4 /* copy: 0 memcpy, 1 copy_in, 2 copy_out (flag line), 3 copy_out (segment lines) */
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
    const kp_sim_config *c;
    kp_sim_result *r;
    int P, ports, rails, nsize, nnodes;
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

/* ---- memory ------------------------------------------------------------ */

static int grow(sim *s, void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 1024;
    while (n < need)
        n += n / 2;
    if (s->limit && s->mem + (n - *cap) * elem > s->limit) {
        n = need + need / 16; /* the last growth: only what is needed */
        if (s->mem + (n - *cap) * elem > s->limit)
            return -1;
    }
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    s->mem += (n - *cap) * elem;
    if (s->mem > s->peak)
        s->peak = s->mem;
    *p = q;
    *cap = n;
    return 0;
}

static void *alloc0(sim *s, size_t n, size_t elem)
{
    if (s->limit && s->mem + n * elem > s->limit)
        return NULL;
    void *p = calloc(n ? n : 1, elem);
    if (p) {
        s->mem += n * elem;
        if (s->mem > s->peak)
            s->peak = s->mem;
    }
    return p;
}

static int nomem(sim *s)
{
    snprintf(s->r->msg, sizeof s->r->msg, "out of memory (%.1f GiB allocated, %.1f GiB available)",
             (double)s->mem / (1 << 30), (double)s->limit / (1 << 30));
    return s->err = KP_ERR_NOMEM;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- costs ------------------------------------------------------------- */

void kp_sim_machine_loggp(kp_machine *m, double L, double o, double g, double G, double O, int64_t S)
{
    kp_params_init(m);
    for (int i = 0; i < 2; i++) {
        kp_channel *ch = i ? &m->inter : &m->intra;
        ch->piece[0] = (kp_loggp){-1, L, o, o, g, G, O, 0, 0, 0, 0, 0, 0};
        ch->eager_max = S < 0 ? -1 : S;
    }
    const kp_linear byte = {.fixed = 0.0, .per_byte = 1.0};
    m->copy_in = m->copy_out = m->memcpy_ = m->peer_read = m->peer_write = byte;
}

static inline int same_node(const sim *s, uint32_t a, uint32_t b)
{
    return s->nsize > 1 && a / (uint32_t)s->nsize == b / (uint32_t)s->nsize;
}

static inline const kp_channel *chan(const sim *s, uint32_t a, uint32_t b)
{
    return same_node(s, a, b) ? &s->c->m.intra : &s->c->m.inter;
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

static inline int rendezvous(const kp_channel *ch, int64_t sz)
{
    const int64_t e = kp_channel_eager_max(ch);
    return e >= 0 && sz > e;
}

static double locop_cost(const sim *s, sop o)
{
    const kp_machine *m = &s->c->m;
    const int64_t n = op_len(s, o);
    switch (o.meta & M_KIND) {
    case S_COPY: {
        const unsigned cls = (o.meta >> M_CLS_SHIFT) & 3u;
        if (cls == 3) /* out of segment or flag-line lines of their own: shm.data_line more (model.c) */
            return kp_linear_cost(&m->copy_out, n) + m->data_line;
        return kp_linear_cost(cls == 2 ? &m->copy_out : cls == 1 ? &m->copy_in : &m->memcpy_, n);
    }
    case S_PREAD: return kp_linear_cost(&m->peer_read, n);
    case S_PWRITE: return kp_linear_cost(&m->peer_write, n);
    default: return 0.0;
    }
}

static inline void vcopy(clk *d, double t, const float *v, uint32_t who)
{
    d->t = t;
    memcpy(d->v, v, sizeof d->v);
    d->who = who;
}

/* log a hop of the chain (when the log is on and not full); its index + 1 */
static uint32_t hop_log(sim *s, double t, uint32_t rank, int kind, uint32_t peer, int64_t len, uint32_t pred)
{
    if (!s->log_on || s->nlog >= HOP_LOG_MAX)
        return 0;
    if (s->nlog == s->caplog && grow(s, (void **)&s->log, &s->caplog, s->nlog + 1, sizeof(hop))) {
        s->log_on = 0;
        return 0;
    }
    s->log[s->nlog] = (hop){t, len, rank, peer, pred, kind};
    return (uint32_t)++s->nlog;
}

/* d = (t0, v) + x in category cat */
static inline void vadd(float *d, const float *v, int cat, double x)
{
    if (d != v)
        memcpy(d, v, sizeof(float) * NV);
    d[cat] += (float)x;
}

/* ---- queue ---------------------------------------------------------------
 * A radix heap (monotone priority queue): the simulation never queues an
 * event before the current time, and non-negative doubles order as their
 * bit patterns, so an event goes to bucket 64 - clz(key ^ last) of the last
 * time taken out (bucket 0: equal to it). Bucket 0 is kept sorted by the
 * first-queued order k and read from the front: events queued at the current
 * time are new, so their k is the largest yet and they are appended in order.
 * When bucket 0 runs out, the lowest non-empty bucket is spread out around
 * its smallest time, and what lands in bucket 0 is sorted by k. Every
 * operation is a sequential append: no cache-missing sift through a heap of
 * millions of events. */

#define NB 65

static inline uint64_t tkey(double t)
{
    uint64_t u;
    if (!(t > 0))
        return 0;
    memcpy(&u, &t, sizeof u);
    return u;
}

static inline int bucket_of(uint64_t key, uint64_t last)
{
    return key == last ? 0 : 64 - __builtin_clzll(key ^ last);
}

static int bpush(sim *s, int b, ev e)
{
    evb *B = &s->bk[b];
    if (B->n == B->cap && grow(s, (void **)&B->e, &B->cap, B->n + 1, sizeof(ev)))
        return nomem(s);
    B->e[B->n++] = e;
    return 0;
}

static int hpush(sim *s, ev e)
{
    uint64_t key = tkey(e.t);
    if (key < s->last) { /* never before the current time */
        key = s->last;
        e.t = s->now;
    }
    s->nheap++;
    return bpush(s, bucket_of(key, s->last), e);
}

static int ev_k_cmp(const void *a, const void *b)
{
    const uint64_t x = ((const ev *)a)->k, y = ((const ev *)b)->k;
    return x < y ? -1 : x > y;
}

/* the next event; s->nheap > 0 */
static ev hpop(sim *s)
{
    evb *Z = &s->bk[0];
    if (s->zpos == Z->n) {
        Z->n = s->zpos = 0;
        int b = 1;
        while (s->bk[b].n == 0)
            b++;
        evb *B = &s->bk[b];
        uint64_t m = UINT64_MAX;
        double mt = 0;
        for (size_t i = 0; i < B->n; i++) {
            const uint64_t k = tkey(B->e[i].t);
            if (k < m) {
                m = k;
                mt = B->e[i].t;
            }
        }
        s->last = m;
        s->now = mt;
        const size_t n = B->n;
        B->n = 0;
        for (size_t i = 0; i < n; i++) /* every element goes to a lower bucket: B is not appended to */
            bpush(s, bucket_of(tkey(B->e[i].t), m), B->e[i]);
        if (B->cap > 65536) { /* give large empty buckets back: only the live events hold memory */
            free(B->e);
            s->mem -= B->cap * sizeof(ev);
            B->e = NULL;
            B->cap = 0;
        }
        int sorted = 1;
        for (size_t i = 1; i < Z->n && sorted; i++)
            sorted = Z->e[i - 1].k < Z->e[i].k;
        if (!sorted)
            qsort(Z->e, Z->n, sizeof(ev), ev_k_cmp);
    }
    s->nheap--;
    return Z->e[s->zpos++];
}

static int qnew(sim *s, double t, int type, uint32_t host, uint32_t x)
{
    ev e = {t, (s->ts++ << 3) | (uint64_t)type, host, x};
    return hpush(s, e);
}

static int qagain(sim *s, ev e, double t)
{
    e.t = t;
    return hpush(s, e);
}

/* ---- pools ------------------------------------------------------------- */

static uint32_t rec_new(sim *s)
{
    if (s->recfree) {
        uint32_t i = s->recfree;
        s->recfree = s->recs[i - 1].next;
        return i;
    }
    if (grow(s, (void **)&s->recs, &s->caprecs, s->nrecs + 1, sizeof(rec))) {
        nomem(s);
        return 0;
    }
    return (uint32_t)++s->nrecs;
}

static void rec_free(sim *s, uint32_t i)
{
    s->recs[i - 1].next = s->recfree;
    s->recfree = i;
}

static uint32_t prq_new(sim *s)
{
    if (s->prqfree) {
        uint32_t i = s->prqfree;
        s->prqfree = s->prqs[i - 1].next;
        return i;
    }
    if (grow(s, (void **)&s->prqs, &s->capprq, s->nprq + 1, sizeof(prq))) {
        nomem(s);
        return 0;
    }
    return (uint32_t)++s->nprq;
}

/* ---- ports and rails ----------------------------------------------------- */

static inline clk *port_min(clk *a, int k)
{
    clk *b = a;
    for (int i = 1; i < k; i++)
        if (a[i].t < b->t)
            b = &a[i];
    return b;
}

/* ---- completion ---------------------------------------------------------- */

static void touch(sim *s, uint32_t h)
{
    for (int i = 0; i < s->ntouch; i++)
        if (s->touch[i] == h)
            return;
    s->touch[s->ntouch++] = h;
}

/* op i of rank h is complete */
static void done(sim *s, uint32_t h, uint32_t i)
{
    (void)i;
    srank *k = &s->rk[h];
    if (k->pending && --k->pending == 0)
        touch(s, h);
}

static uint32_t round_end(const sim *s, uint32_t h, uint32_t from)
{
    const uint32_t n = (uint32_t)(s->base[h + 1] - s->base[h]);
    uint32_t e = from;
    while (e < n && !(rop(s, h, e)->meta & M_END))
        e++;
    return e < n ? e + 1 : n;
}

/* issue the ops of rank h's current round (posts, sends, receives, local) */
static int further_free(const sim *s, uint32_t h, uint32_t i);

static int start_round(sim *s, uint32_t h)
{
    srank *k = &s->rk[h];
    const uint32_t b = k->cur, e = round_end(s, h, b);
    k->pending = e - b;
    const double tc = k->cpu.t;
    for (int pass = 0; pass < 4; pass++)
        for (uint32_t i = b; i < e; i++) {
            const unsigned kind = rop(s, h, i)->meta & M_KIND;
            const int cls = kind == S_POST ? 0 : kind == S_SEND ? 1 : kind == S_RECV ? 2 : 3;
            if (cls != pass)
                continue;
            double t = tc;
            if (kind == S_SEND && !(s->xpair && further_free(s, h, i))) {
                const clk *p = port_min(&s->gs[(size_t)h * (size_t)s->ports], s->ports);
                if (p->t > t)
                    t = p->t;
                const uint32_t q = rop(s, h, i)->peer;
                if (s->rails && !same_node(s, h, q)) {
                    const uint32_t node = s->nsize > 1 ? h / (uint32_t)s->nsize : h;
                    const clk *r = port_min(&s->rgs[(size_t)node * (size_t)s->rails], s->rails);
                    if (r->t > t)
                        t = r->t;
                }
            }
            static const int etype[4] = {E_POST, E_SEND, E_RECV, E_LOCOP};
            if (qnew(s, t, etype[pass], h, i))
                return s->err;
        }
    return 0;
}

/* after an event: hosts whose round completed queue their join (or finish);
 * hosts whose join ran start their next round; in rank order */
static int after(sim *s, int joined)
{
    if (s->ntouch > 1)
        for (int i = 1; i < s->ntouch; i++)
            for (int j = i; j > 0 && s->touch[j] < s->touch[j - 1]; j--) {
                uint32_t x = s->touch[j];
                s->touch[j] = s->touch[j - 1];
                s->touch[j - 1] = x;
            }
    for (int i = 0; i < s->ntouch; i++) {
        const uint32_t h = s->touch[i];
        srank *k = &s->rk[h];
        if (joined) {
            if (start_round(s, h))
                return s->err;
            continue;
        }
        const uint32_t n = (uint32_t)(s->base[h + 1] - s->base[h]);
        const uint32_t e = round_end(s, h, k->cur);
        if (e >= n) {
            k->cur = n;
            s->finished++;
        } else {
            k->cur = e;
            if (qnew(s, k->cpu.t, E_JOIN, h, 0))
                return s->err;
        }
    }
    s->ntouch = 0;
    return 0;
}

/* ---- event handlers ------------------------------------------------------ */

static int match_err(sim *s, uint32_t src, uint32_t dst, int64_t ss, int64_t rs)
{
    snprintf(s->r->msg, sizeof s->r->msg,
             "a %lld-byte send of rank %u meets a %lld-byte receive of rank %u (schedules do not match: run "
             "kport-check)",
             (long long)ss, src, (long long)rs, dst);
    return s->err = KP_ERR_INTERNAL;
}

/* the sender of a rendezvous message learns at t that it was matched */
static void rdv_done(sim *s, const rec *m, const clk *at)
{
    srank *q = &s->rk[m->src];
    if (q->cpu.t < at->t)
        vcopy(&q->cpu, at->t, at->v, at->who);
    clk *p = &s->gs[(size_t)m->src * (size_t)s->ports + m->port];
    if (p->t < at->t)
        vcopy(p, at->t, at->v, at->who);
    done(s, m->src, m->op);
}

/* The piece of the receive that send xv's entry pairs (its xpair entry:
 * the receive's index + 1, XP_FURTHER) takes from rank q to h, and that
 * receive's size *rs */
static const kp_loggp *paired_piece(const sim *s, uint32_t h, uint32_t q, uint32_t xv, int64_t *rs)
{
    *rs = op_len(s, *rop(s, h, (xv & ~XP_FURTHER) - 1));
    return kp_channel_piece(chan(s, q, h), *rs);
}

/* 1 when send i of rank h is eager and a further exchange with its peer in
 * the round (XP_FURTHER) whose receive's piece has a measured second
 * exchange (has_x2): it does not wait for its send port's gap, as MPI_Isend
 * does not, which X2 + X2G*s, two messages each way sent at once, holds
 * (MPICH's split at 16 KiB: two 8 KiB sends, a gap of 0.72 us between them
 * on top of the measured exchanges, 1.05-1.21x the measured median). */
static int further_free(const sim *s, uint32_t h, uint32_t i)
{
    const uint32_t xv = s->xpair ? s->xpair[s->base[h] + i] : 0;
    if (!(xv & XP_FURTHER))
        return 0;
    const sop *o = rop(s, h, i);
    if (rendezvous(chan(s, h, o->peer), op_len(s, *o)))
        return 0;
    int64_t rs;
    return paired_piece(s, h, o->peer, xv, &rs)->has_x2;
}

/* The CPU time of a send (eager or rendezvous) of h to q paired with receive xv (its
 * xpair entry) when the receive's piece has a measured exchange: own =
 * o_s + (s-1)O, at most the exchange's X + XG*s' (a further one with q in
 * the round: X2 + X2G*s'; s' the receive's size). MPI overlaps a send's
 * completion with the exchange it is part of, so the exchange's measured
 * time bounds what the send holds the CPU; the message still leaves after
 * o_s (Open MPI's 512 B-2 KiB sends: o_s + O*s 0.45-0.58 us against a
 * second exchange's 0.25-0.40; 64 KiB rendezvous sends in the slow
 * phase 9.3-11.1 us against a whole exchange's 8.7-10.0). */
static __attribute__((noinline)) double send_cap(const sim *s, uint32_t h, uint32_t q, uint32_t xv, double own)
{
    int64_t rs;
    const kp_loggp *pr = paired_piece(s, h, q, xv, &rs);
    if (!pr->has_x)
        return own;
    const double cap = kp_exchange_ns(pr, (xv & XP_FURTHER) != 0, rs);
    return own < cap ? own : cap > 0 ? cap : 0;
}

static int ev_send(sim *s, ev e)
{
    const uint32_t h = e.host;
    srank *k = &s->rk[h];
    const sop o = *rop(s, h, e.x);
    const uint32_t q = o.peer;
    clk *port = port_min(&s->gs[(size_t)h * (size_t)s->ports], s->ports);
    clk *rail = NULL;
    if (s->rails && !same_node(s, h, q)) {
        const uint32_t node = s->nsize > 1 ? h / (uint32_t)s->nsize : h;
        rail = port_min(&s->rgs[(size_t)node * (size_t)s->rails], s->rails);
    }
    const int ff = s->xpair && further_free(s, h, e.x);
    double ready = ff || k->cpu.t > port->t ? k->cpu.t : port->t;
    if (rail && rail->t > ready && !ff)
        ready = rail->t;
    if (ready > e.t)
        return qagain(s, e, ready);
    const clk *bc = k->cpu.t == e.t ? &k->cpu : port->t == e.t ? port : rail ? rail : &k->cpu;
    float v[NV];
    memcpy(v, bc->v, sizeof v);
    const int64_t sz = op_len(s, o);
    const uint32_t who = hop_log(s, e.t, h, KP_SIM_HOP_SEND, q, sz, bc->who);
    const kp_channel *ch = chan(s, h, q);
    const kp_loggp *p = kp_channel_piece(ch, sz);
    /* s - 1 bytes beyond the first; 0 for s = 0 (LogGOPSim's unsigned s - 1
     * wraps: -1 with zero_wrap) */
    const double s1 = sz > 1 ? (double)(sz - 1) : sz == 0 && s->c->zero_wrap ? -1.0 : 0.0;
    const double t = e.t;
    /* CPU: o + (s-1)O; a send paired with a receive of its round, at
     * most the measured exchange it is part of (send_cap) */
    double own = p->o_s + s1 * p->O;
    if (s->xpair && s->xpair[s->base[h] + e.x])
        own = send_cap(s, h, q, s->xpair[s->base[h] + e.x], own);
    const double oo = own < p->o_s ? own : p->o_s;
    k->cpu.t = t + own;
    vadd(k->cpu.v, v, KP_SIM_OVERHEAD, oo);
    k->cpu.v[KP_SIM_BYTES] += (float)(own - oo);
    /* NIC: g + (s-1)G (after the port's previous message: ff) */
    const double ng = (ff && port->t > t ? port->t : t) + p->g + s1 * p->G;
    port->t = ng;
    vadd(port->v, v, KP_SIM_GAP, p->g);
    port->v[KP_SIM_BYTES] += (float)(s1 * p->G);
    k->cpu.who = port->who = who;
    if (rail)
        *rail = *port;
    if (s->xpair)
        rop(s, h, e.x)->meta |= M_SENT;
    /* the message: first byte at the receiver after o + L */
    const uint32_t m = rec_new(s);
    if (!m)
        return s->err;
    rec *rm = &s->recs[m - 1];
    rm->c.t = t + p->o_s + p->L;
    vadd(rm->c.v, v, KP_SIM_OVERHEAD, p->o_s);
    rm->c.v[KP_SIM_WIRE] += (float)p->L;
    rm->c.v[KP_SIM_NCAT] += 1.0f;
    rm->c.who = who;
    rm->src = h;
    rm->op = e.x;
    rm->next = 0;
    rm->rcv = 0;
    rm->parked = 0;
    rm->port = (uint8_t)(port - &s->gs[(size_t)h * (size_t)s->ports]);
    if (qnew(s, rm->c.t, E_MSG, q, m))
        return s->err;
    if (!rendezvous(ch, sz))
        done(s, h, e.x);
    return 0;
}

static int ev_recv(sim *s, ev e)
{
    const uint32_t h = e.host;
    srank *k = &s->rk[h];
    const sop o = *rop(s, h, e.x);
    k->rposted = e.x + 1;
    /* the first unexpected message from the peer */
    uint32_t prev = 0;
    for (uint32_t m = k->uq; m; prev = m, m = s->recs[m - 1].next) {
        rec *rm = &s->recs[m - 1];
        if (rm->src != o.peer)
            continue;
        if (prev)
            s->recs[prev - 1].next = rm->next;
        else
            k->uq = rm->next;
        if (k->uq_tail == m)
            k->uq_tail = prev;
        const int64_t ss = op_len(s, *rop(s, rm->src, rm->op)), rs = op_len(s, o);
        if (ss != rs)
            return match_err(s, rm->src, h, ss, rs);
        if (rm->parked) { /* taken in now, for this receive (an exchange when its send has started) */
            rm->parked = 0;
            rm->rcv = e.x + 1;
            return qnew(s, e.t, E_MSG, h, m);
        }
        if (rendezvous(chan(s, rm->src, h), ss)) {
            clk at;
            vcopy(&at, e.t, k->cpu.v, k->cpu.who); /* the receive's time (its vector: the CPU's) */
            rdv_done(s, rm, &at);
        }
        rec_free(s, m);
        done(s, h, e.x);
        return 0;
    }
    const uint32_t n = prq_new(s);
    if (!n)
        return s->err;
    s->prqs[n - 1] = (prq){o.peer, e.x, 0};
    if (k->rq_tail)
        s->prqs[k->rq_tail - 1].next = n;
    else
        k->rq = n;
    k->rq_tail = n;
    return 0;
}

/* A message from src that rank h cannot match yet (no posted receive), with
 * a measured exchange: 1 when the receive it will meet (the u+1-th receive
 * from src not yet posted, u = unexpected messages from src queued before
 * it), looked for in the current and the next round, is paired with a send
 * of its round. Such a message is parked, not taken in, until that receive
 * is posted, so it can be taken in as the exchange it is part of. */
static int will_pair(const sim *s, uint32_t h, uint32_t src)
{
    const srank *k = &s->rk[h];
    const uint32_t n = (uint32_t)(s->base[h + 1] - s->base[h]);
    const uint32_t from = k->rposted > k->cur ? k->rposted : k->cur;
    uint32_t end = round_end(s, h, k->cur);
    if (end < n)
        end = round_end(s, h, end);
    uint32_t c = 0; /* unposted receives from src in the window: most early messages meet none */
    for (uint32_t i = from; i < end; i++) {
        const sop *o = rop(s, h, i);
        c += (o->meta & M_KIND) == S_RECV && o->peer == src;
    }
    if (!c)
        return 0;
    uint32_t u = 0;
    for (uint32_t m = k->uq; m && u < c; m = s->recs[m - 1].next)
        u += s->recs[m - 1].src == src;
    if (u >= c)
        return 0;
    for (uint32_t i = from; i < end; i++) {
        const sop *o = rop(s, h, i);
        if ((o->meta & M_KIND) == S_RECV && o->peer == src && u-- == 0)
            return s->xpair[s->base[h] + i] != 0;
    }
    return 0;
}

/* The exchange rule (see the header): the message from rm->src that rank h
 * takes in now meets h's posted receive rop_i. When that receive is paired
 * with a send of its round (xpair) that has started, take the message in as
 * an exchange at t: the CPU is free at max(hm + o_r + by, cpu + rest), hm =
 * max(arrival, receive gap), rest = X + XG*s less the paired send's own CPU
 * time; the receive gap runs from hm. Its hop (>= 0) when it applied, -1
 * when the ordinary rule applies. Out of ev_msg's way: only parameter files
 * with a measured exchange get here. */
static __attribute__((noinline)) int64_t take_exchange(sim *s, uint32_t h, uint32_t rop_i, double t, const rec *rm,
                                                       clk *port, const clk *rail, const kp_loggp *p, int64_t sz,
                                                       double s1, double by)
{
    const uint32_t xv = s->xpair[s->base[h] + rop_i], x = xv & ~XP_FURTHER;
    if (!x || !(rop(s, h, x - 1)->meta & M_SENT))
        return -1;
    srank *k = &s->rk[h];
    const int64_t ss = op_len(s, *rop(s, h, x - 1));
    const kp_loggp *ps = kp_channel_piece(chan(s, h, rm->src), ss);
    const double s1s = ss > 1 ? (double)(ss - 1) : ss == 0 && s->c->zero_wrap ? -1.0 : 0.0;
    /* a further exchange with the same peer in the round: what it adds, X2 + X2G*s */
    const int further = (xv & XP_FURTHER) && p->has_x2;
    const double xg = (further ? p->X2G : p->XG) * (double)sz;
    double rest = (further ? p->X2 : p->X) + xg - (ps->o_s + s1s * ps->O); /* less the send's own CPU time */
    if (rest < 0)
        rest = 0;
    double rest_by = xg - s1s * ps->O; /* its per-byte part, for the critical path */
    rest_by = rest_by < 0 ? 0 : rest_by > rest ? rest : rest_by;
    const clk *bm = &rm->c;
    if (port->t > bm->t)
        bm = port;
    if (rail && rail->t > bm->t)
        bm = rail;
    /* the exchange bounds its message too: in by X + XG*s after its send
     * began (its arrival less o_s + L), not before the message's event; a
     * further exchange with the peer keeps the message's own bound (X2 +
     * X2G*s is what it adds to the first, not a time from its start) */
    const double xc = (xv & XP_FURTHER) ? INFINITY : rm->c.t - p->o_s - p->L + kp_exchange_ns(p, 0, sz);
    const double hm = bm->t, tx = k->cpu.t + rest;
    double tm = hm + p->o_r + by, om = p->o_r, bym = by;
    if (xc < tm) {
        tm = xc > t ? xc : t;
        om = tm - hm < p->o_r ? tm - hm : p->o_r;
        bym = tm - hm - om;
    }
    float vm[NV];
    memcpy(vm, bm->v, sizeof vm);
    const uint32_t bwho = bm->who;
    uint32_t who;
    if (tm >= tx) { /* the message bounds it */
        who = hop_log(s, hm, h, KP_SIM_HOP_TAKE, rm->src, sz, bwho);
        k->cpu.t = tm;
        vadd(k->cpu.v, vm, KP_SIM_OVERHEAD, om);
        k->cpu.v[KP_SIM_BYTES] += (float)bym;
    } else { /* the exchange's time bounds it */
        who = hop_log(s, t, h, KP_SIM_HOP_TAKE, rm->src, sz, k->cpu.who);
        k->cpu.t = tx;
        k->cpu.v[KP_SIM_OVERHEAD] += (float)(rest - rest_by);
        k->cpu.v[KP_SIM_BYTES] += (float)rest_by;
    }
    port->t = hm + p->g + s1 * p->G;
    vadd(port->v, vm, KP_SIM_GAP, p->g);
    port->v[KP_SIM_BYTES] += (float)(s1 * p->G);
    k->cpu.who = port->who = who;
    return who;
}

/* When rank h's current round has sends that have not started: the
 * earliest time one of them can (its CPU, its send port, the rail to its
 * peer: ev_send's readiness), else -1. A message for a paired receive waits
 * for it, queued anew (after that send's event, queued when the round
 * started, at the same time): kport's executor posts every send of a
 * round (MPI_Isend) before it takes in any message (MPI_Waitall), as the
 * cost model orders them, and the exchange's rest would otherwise hold
 * the CPU before a send the NIC's gap delayed (Open MPI's split at
 * 512 B: 0.65 us against 0.51 measured and the model's 0.48). */
static double unsent_ready(const sim *s, uint32_t h)
{
    const srank *k = &s->rk[h];
    const uint32_t e = round_end(s, h, k->cur);
    const double pt = port_min(&s->gs[(size_t)h * (size_t)s->ports], s->ports)->t;
    const double base = k->cpu.t > pt ? k->cpu.t : pt;
    double best = -1;
    for (uint32_t i = k->cur; i < e; i++) {
        const sop *o = rop(s, h, i);
        if ((o->meta & M_KIND) != S_SEND || (o->meta & M_SENT))
            continue;
        if (further_free(s, h, i)) { /* waits for the CPU alone */
            if (best < 0 || k->cpu.t < best)
                best = k->cpu.t;
            continue;
        }
        double r = base;
        if (s->rails && !same_node(s, h, o->peer)) {
            const uint32_t node = s->nsize > 1 ? h / (uint32_t)s->nsize : h;
            const clk *rl = port_min(&s->rgs[(size_t)node * (size_t)s->rails], s->rails);
            if (rl->t > r)
                r = rl->t;
        }
        if (best < 0 || r < best)
            best = r;
    }
    return best;
}

/* record x (index + 1) at the tail of host k's unexpected queue */
static inline void uq_append(sim *s, srank *k, uint32_t x)
{
    s->recs[x - 1].next = 0;
    if (k->uq_tail)
        s->recs[k->uq_tail - 1].next = x;
    else
        k->uq = x;
    k->uq_tail = x;
}

/* a message taken in; xmode: the machine has a measured exchange (s->xpair),
 * a constant in each of the two copies the compiler makes, so runs without
 * one do not pay for its tests */
static inline __attribute__((always_inline)) int ev_msg_mode(sim *s, ev e, const int xmode)
{
    const uint32_t h = e.host;
    srank *k = &s->rk[h];
    rec *rm = &s->recs[e.x - 1];
    clk *port = port_min(&s->gr[(size_t)h * (size_t)s->ports], s->ports);
    clk *rail = NULL;
    if (s->rails && !same_node(s, rm->src, h)) {
        const uint32_t node = s->nsize > 1 ? h / (uint32_t)s->nsize : h;
        rail = port_min(&s->rgr[(size_t)node * (size_t)s->rails], s->rails);
    }
    double ready = k->cpu.t > port->t ? k->cpu.t : port->t;
    if (rail && rail->t > ready)
        ready = rail->t;
    if (ready > e.t)
        return qagain(s, e, ready);
    const clk *bc = rm->c.t == e.t ? &rm->c : k->cpu.t == e.t ? &k->cpu : port->t == e.t ? port : rail ? rail : &rm->c;
    float v[NV];
    memcpy(v, bc->v, sizeof v);
    const int64_t sz = op_len(s, *rop(s, rm->src, rm->op));
    const kp_channel *ch = chan(s, rm->src, h);
    const kp_loggp *p = kp_channel_piece(ch, sz);
    const double s1 = sz > 1 ? (double)(sz - 1) : sz == 0 && s->c->zero_wrap ? -1.0 : 0.0;
    const double t = e.t;
    double by = s1 * p->O > s1 * p->G ? s1 * p->O : s1 * p->G;
    if (s1 < 0) /* LogGOPSim: the unsigned max of (2^64-1)O and (2^64-1)G is -(the smaller non-zero one) */
        by = p->O > 0 && p->G > 0 ? -(p->O < p->G ? p->O : p->G) : -(p->O + p->G);
    /* the receive it meets: a parked message's, or the first posted receive from the sender */
    uint32_t prev = 0, n = 0, rcv = xmode ? rm->rcv : 0;
    if (!rcv) {
        n = k->rq;
        while (n && s->prqs[n - 1].src != rm->src) {
            prev = n;
            n = s->prqs[n - 1].next;
        }
        rcv = n ? s->prqs[n - 1].op + 1 : 0;
    }
    int64_t xw = -1;
    if (xmode && p->has_x) {
        if (!rcv && will_pair(s, h, rm->src)) { /* park it until its receive is posted */
            rm->parked = 1;
            uq_append(s, k, e.x);
            return 0;
        }
        if (rcv && s->xpair[s->base[h] + rcv - 1]) {
            /* the executor posts a round's every send before it waits */
            const double ts = unsent_ready(s, h);
            if (ts >= 0)
                return qnew(s, ts > t ? ts : t, E_MSG, h, e.x);
            xw = take_exchange(s, h, rcv - 1, t, rm, port, rail, p, sz, s1, by);
        }
    }
    uint32_t who = (uint32_t)xw;
    if (xw < 0) {
        who = hop_log(s, t, h, KP_SIM_HOP_TAKE, rm->src, sz, bc->who);
        k->cpu.t = t + p->o_r + by;
        vadd(k->cpu.v, v, KP_SIM_OVERHEAD, p->o_r);
        k->cpu.v[KP_SIM_BYTES] += (float)by;
        port->t = t + p->g + s1 * p->G;
        vadd(port->v, v, KP_SIM_GAP, p->g);
        port->v[KP_SIM_BYTES] += (float)(s1 * p->G);
        k->cpu.who = port->who = who;
    }
    if (rail)
        *rail = *port;
    if (rcv) {
        const uint32_t rop_i = rcv - 1;
        if (n) {
            prq *pr = &s->prqs[n - 1];
            if (prev)
                s->prqs[prev - 1].next = pr->next;
            else
                k->rq = pr->next;
            if (k->rq_tail == n)
                k->rq_tail = prev;
            pr->next = s->prqfree;
            s->prqfree = n;
        }
        const int64_t rs = op_len(s, *rop(s, h, rop_i));
        if (rs != sz)
            return match_err(s, rm->src, h, sz, rs);
        if (rendezvous(ch, sz)) {
            clk at;
            vcopy(&at, t, v, who);
            rdv_done(s, rm, &at);
        }
        rec_free(s, e.x);
        done(s, h, rop_i);
        return 0;
    }
    /* unexpected */
    vcopy(&rm->c, t, v, who);
    uq_append(s, k, e.x);
    return 0;
}

static __attribute__((noinline)) int ev_msg_x(sim *s, ev e)
{
    return ev_msg_mode(s, e, 1);
}

static int ev_msg(sim *s, ev e)
{
    return s->xpair ? ev_msg_x(s, e) : ev_msg_mode(s, e, 0);
}

static clk *post_slot(sim *s, uint32_t q, uint32_t n)
{
    if (!s->pbase || n < 1 || s->pbase[q] + n - 1 >= s->pbase[q + 1])
        return NULL;
    return &s->post[s->pbase[q] + n - 1];
}

/* rank h's wait (op) for post n of rank q, posted as pc, completes at t */
static int wait_done_at(sim *s, uint32_t h, uint32_t op, double t, const clk *pc, uint32_t q, uint32_t n)
{
    const uint32_t who = hop_log(s, pc->t, h, KP_SIM_HOP_FLAG, q, n, pc->who);
    const uint32_t m = rec_new(s);
    if (!m)
        return s->err;
    rec *rm = &s->recs[m - 1];
    vcopy(&rm->c, t, pc->v, who);
    rm->c.v[KP_SIM_WAIT] += (float)s->c->m.flag.fixed;
    rm->src = h;
    rm->op = op;
    return qnew(s, t, E_WAITDONE, h, m);
}

static int ev_locop(sim *s, ev e)
{
    const uint32_t h = e.host;
    srank *k = &s->rk[h];
    if (k->cpu.t > e.t)
        return qagain(s, e, k->cpu.t);
    const sop o = *rop(s, h, e.x);
    const unsigned kind = o.meta & M_KIND;
    if (kind == S_POST) {
        clk *pc = post_slot(s, h, o.meta >> M_VAL_SHIFT);
        if (!pc) {
            snprintf(s->r->msg, sizeof s->r->msg, "rank %u: post %u out of range", h, o.meta >> M_VAL_SHIFT);
            return s->err = KP_ERR_INTERNAL;
        }
        vcopy(pc, e.t, k->cpu.v, k->cpu.who);
        uint32_t prev = 0;
        for (uint32_t w = s->whead[h]; w;) {
            wnode *wn = &s->wpool[w - 1];
            const uint32_t nx = wn->next;
            if (wn->n == (o.meta >> M_VAL_SHIFT)) {
                if (wait_done_at(s, wn->rank, wn->op, e.t + s->c->m.flag.fixed, pc, h, wn->n))
                    return s->err;
                if (prev)
                    s->wpool[prev - 1].next = nx;
                else
                    s->whead[h] = nx;
                wn->next = s->wfree;
                s->wfree = w;
            } else
                prev = w;
            w = nx;
        }
        done(s, h, e.x);
        return 0;
    }
    if (kind == S_WAIT) {
        const uint32_t n = o.meta >> M_VAL_SHIFT;
        const clk *pc = post_slot(s, o.peer, n);
        if (!pc) {
            snprintf(s->r->msg, sizeof s->r->msg, "rank %u waits for post %u of rank %u, which never posts it", h, n,
                     o.peer);
            return s->err = KP_ERR_INTERNAL;
        }
        if (pc->t >= 0) {
            const double tw = pc->t + s->c->m.flag.fixed;
            if (tw <= e.t) {
                done(s, h, e.x);
                return 0;
            }
            return wait_done_at(s, h, e.x, tw, pc, o.peer, n);
        }
        uint32_t w = s->wfree;
        if (w)
            s->wfree = s->wpool[w - 1].next;
        else {
            if (grow(s, (void **)&s->wpool, &s->capw, s->nw + 1, sizeof(wnode)))
                return nomem(s);
            w = (uint32_t)++s->nw;
        }
        s->wpool[w - 1] = (wnode){h, e.x, n, s->whead[o.peer]};
        s->whead[o.peer] = w;
        return 0;
    }
    const double c = locop_cost(s, o);
    k->cpu.who = hop_log(s, e.t, h, KP_SIM_HOP_COPY, (o.meta & M_KIND) == S_COPY ? h : o.peer, op_len(s, o), k->cpu.who);
    k->cpu.t = e.t + c;
    k->cpu.v[KP_SIM_COPY] += (float)c;
    done(s, h, e.x);
    return 0;
}

static int ev_waitdone(sim *s, ev e)
{
    rec *rm = &s->recs[e.x - 1];
    srank *k = &s->rk[e.host];
    if (k->cpu.t < rm->c.t)
        k->cpu = rm->c;
    done(s, e.host, rm->op);
    rec_free(s, e.x);
    return 0;
}

/* ---- building the streams ----------------------------------------------- */

int kp_sim_block_layout(kp_layout *L, int P, int n)
{
    memset(L, 0, sizeof *L);
    if (n < 1)
        n = 1;
    const int nn = (P + n - 1) / n;
    L->P = P;
    L->cma = 1;
    L->nnodes = nn;
    L->node_of = malloc((size_t)P * sizeof(int));
    L->local = malloc((size_t)P * sizeof(int));
    L->node_start = calloc((size_t)P + 2, sizeof(int));
    L->node_ranks = malloc((size_t)P * sizeof(int));
    if (!L->node_of || !L->local || !L->node_start || !L->node_ranks) {
        kp_layout_free(L);
        return -1;
    }
    for (int r = 0; r < P; r++) {
        L->node_of[r] = r / n;
        L->local[r] = r % n;
        L->node_ranks[r] = r;
    }
    for (int k = 0; k <= nn; k++)
        L->node_start[k] = k * n < P ? k * n : P;
    return 0;
}

static int encode(sim *s, const kp_sched *sc, uint32_t r, const kp_op *op, sop *out)
{
    uint32_t kind = 0, peer = 0, cls = 0;
    int64_t val = 0;
    switch (op->kind) {
    case KP_OP_SEND: kind = S_SEND; peer = (uint32_t)op->u.send.peer; val = op->u.send.src.len; break;
    case KP_OP_RECV: kind = S_RECV; peer = (uint32_t)op->u.recv.peer; val = op->u.recv.dst.len; break;
    case KP_OP_COPY: {
        const kp_region a = op->u.copy.src, b = op->u.copy.dst;
        if (kp_sched_copy_is_noop(sc, op))
            return 0; /* the executor skips it */
        kind = S_COPY;
        cls = a.buf == KP_BUF_SHM || kp_line_spills(&a) ? 3
              : a.buf == KP_BUF_LINE                     ? 2
              : (b.buf == KP_BUF_SHM || b.buf == KP_BUF_LINE) ? 1
                                                          : 0;
        val = a.len;
        break;
    }
    case KP_OP_POST: kind = S_POST; val = op->u.post.n; break;
    case KP_OP_WAIT: kind = S_WAIT; peer = (uint32_t)op->u.wait.peer; val = op->u.wait.n; break;
    case KP_OP_PEER_READ: kind = S_PREAD; peer = (uint32_t)op->u.peer_read.peer; val = op->u.peer_read.src.len; break;
    case KP_OP_PEER_WRITE:
        kind = S_PWRITE;
        peer = (uint32_t)op->u.peer_write.peer;
        val = op->u.peer_write.dst.len;
        break;
    default:
        snprintf(s->r->msg, sizeof s->r->msg, "rank %u: unknown operation kind %d", r, op->kind);
        return -(s->err = KP_ERR_INTERNAL);
    }
    if ((kind == S_SEND || kind == S_RECV || kind == S_WAIT || kind == S_PREAD || kind == S_PWRITE) &&
        (peer >= (uint32_t)s->P || peer == r)) {
        snprintf(s->r->msg, sizeof s->r->msg, "rank %u: peer %d out of range (P = %d)", r, (int)peer, s->P);
        return -(s->err = KP_ERR_INTERNAL);
    }
    if (val < 0) {
        snprintf(s->r->msg, sizeof s->r->msg, "rank %u: negative length %lld", r, (long long)val);
        return -(s->err = KP_ERR_INTERNAL);
    }
    uint32_t meta = kind | (cls << M_CLS_SHIFT);
    if (val > (int64_t)M_VAL_MAX) {
        if (grow(s, (void **)&s->big, &s->capbig, s->nbig + 1, sizeof(int64_t)))
            return -nomem(s);
        if (s->nbig > M_VAL_MAX) {
            snprintf(s->r->msg, sizeof s->r->msg, "too many operations above 32 MiB");
            return -(s->err = KP_ERR_NOMEM);
        }
        s->big[s->nbig] = val;
        meta |= M_BIG | (uint32_t)(s->nbig++ << M_VAL_SHIFT);
    } else
        meta |= (uint32_t)val << M_VAL_SHIFT;
    *out = (sop){peer, meta};
    return 1;
}

static int build(sim *s, const kp_layout *L, double t0)
{
    const kp_sim_config *c = s->c;
    kp_sim_result *r = s->r;
    uint64_t posts = 0;
    double last = t0;
    for (int rank = 0; rank < s->P; rank++) {
        kp_sched sc;
        int rc = kp_algo_build_on(c->algo, &c->prm, L, rank, s->P, c->bytes, c->root, c->inplace, &sc);
        if (rc != KP_SUCCESS) {
            snprintf(r->msg, sizeof r->msg, "%s", sc.errmsg[0] ? sc.errmsg : "the builder failed");
            kp_sched_free(&sc);
            if (rc == KP_ERR_PARAM || rc == KP_ERR_UNSUPPORTED) {
                r->refused = 1;
                return s->err = -1;
            }
            return s->err = rc;
        }
        s->base[rank] = s->nops;
        if (rank == 0 && s->limit) {
            /* schedules that cannot fit: say so at once. The sample is the smaller of ranks 0 and
             * P/2, so a root's P operations in a gather do not count for every rank. */
            uint64_t est = (uint64_t)sc.nops;
            kp_sched mid;
            if (s->P > 1 && kp_algo_build_on(c->algo, &c->prm, L, s->P / 2, s->P, c->bytes, c->root, c->inplace,
                                             &mid) == KP_SUCCESS &&
                (uint64_t)mid.nops < est)
                est = (uint64_t)mid.nops;
            if (s->P > 1)
                kp_sched_free(&mid);
            if ((double)est * (double)s->P * sizeof(sop) > (double)s->limit) {
                snprintf(r->msg, sizeof r->msg,
                         "the schedules need about %.1f GiB (%llu operations per rank, 8 bytes each), more than "
                         "the %.1f GiB available",
                         (double)est * (double)s->P * sizeof(sop) / (1 << 30), (unsigned long long)est,
                         (double)s->limit / (1 << 30));
                kp_sched_free(&sc);
                return s->err = KP_ERR_NOMEM;
            }
        }
        if (grow(s, (void **)&s->ops, &s->capops, s->nops + (size_t)sc.nops, sizeof(sop))) {
            kp_sched_free(&sc);
            return nomem(s);
        }
        int last_round = -1;
        int64_t last_kept = -1;
        for (int i = 0; i < sc.nops; i++) {
            const kp_op *op = &sc.ops[i];
            sop o;
            int k = encode(s, &sc, (uint32_t)rank, op, &o);
            if (k < 0) {
                kp_sched_free(&sc);
                return s->err;
            }
            if (!k)
                continue;
            if (last_kept >= 0 && op->round != last_round)
                s->ops[last_kept].meta |= M_END;
            last_round = op->round;
            last_kept = (int64_t)s->nops;
            s->ops[s->nops++] = o;
            switch (op->kind) {
            case KP_OP_SEND:
                r->messages++;
                r->msg_bytes += op->u.send.src.len;
                r->rendezvous += rendezvous(chan(s, (uint32_t)rank, o.peer), op->u.send.src.len);
                break;
            case KP_OP_COPY: case KP_OP_PEER_READ: case KP_OP_PEER_WRITE:
                r->copies++;
                r->copy_bytes += op_len(s, o);
                break;
            case KP_OP_POST: r->posts++; break;
            case KP_OP_WAIT: r->waits++; break;
            default: break;
            }
            if (op->round + 1 > r->max_rounds)
                r->max_rounds = op->round + 1;
        }
        if (last_kept >= 0)
            s->ops[last_kept].meta |= M_END;
        if (sc.nposts > 0 && !s->pbase) {
            s->pbase = alloc0(s, (size_t)s->P + 1, sizeof(uint32_t));
            if (!s->pbase) {
                kp_sched_free(&sc);
                return nomem(s);
            }
            for (int q = 0; q <= rank; q++)
                s->pbase[q] = (uint32_t)posts;
        }
        posts += (uint64_t)(sc.nposts > 0 ? sc.nposts : 0);
        if (s->pbase)
            s->pbase[rank + 1] = (uint32_t)posts;
        kp_sched_free(&sc);
        if (c->progress && (rank & 0xffff) == 0) {
            double w = now_s();
            if (w - t0 > 2.0 && w - last >= 1.0) {
                last = w;
                c->progress(c->progress_arg, "build", 0.0, (uint64_t)rank, (uint64_t)s->P, w - t0);
            }
        }
    }
    s->base[s->P] = s->nops;
    if (posts > UINT32_MAX) {
        snprintf(r->msg, sizeof r->msg, "too many posts");
        return s->err = KP_ERR_NOMEM;
    }
    if (s->pbase) {
        s->post = alloc0(s, (size_t)posts, sizeof(clk));
        s->whead = alloc0(s, (size_t)s->P, sizeof(uint32_t));
        if (!s->post || !s->whead)
            return nomem(s);
        for (uint64_t i = 0; i < posts; i++)
            s->post[i].t = -1;
    }
    return 0;
}

/* ---- exchanges ----------------------------------------------------------- */

/* kp_pair_exchanges' pair(): receive op r of host h meets send op s */
typedef struct xpair_ctx {
    uint32_t *xpair; /* s->xpair + the host's base */
} xpair_ctx;

static void xpair_one(void *arg, uint32_t send_op, uint32_t recv_op, uint32_t k)
{
    ((xpair_ctx *)arg)->xpair[recv_op] = (send_op + 1) | (k ? XP_FURTHER : 0);
    ((xpair_ctx *)arg)->xpair[send_op] = (recv_op + 1) | (k ? XP_FURTHER : 0);
}

/* s->xpair: the k-th receive from q of a round pairs with the k-th send to q
 * of the same round (the cost model's pairing, model.c pair_round). Only
 * when the machine has a measured exchange; 0, or an error code. */
static int pair_exchanges(sim *s)
{
    if (!kp_params_has_exchange(&s->c->m))
        return 0;
    s->xpair = alloc0(s, s->nops + 1, sizeof(uint32_t));
    if (!s->xpair)
        return nomem(s);
    kp_xop *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    for (uint32_t h = 0; h < (uint32_t)s->P && !rc; h++) {
        const uint32_t n = (uint32_t)(s->base[h + 1] - s->base[h]);
        for (uint32_t b = 0; b < n;) {
            const uint32_t e = round_end(s, h, b);
            uint32_t ns = 0, nr = 0;
            for (uint32_t i = b; i < e; i++) {
                const unsigned kind = rop(s, h, i)->meta & M_KIND;
                ns += kind == S_SEND;
                nr += kind == S_RECV;
            }
            if (ns && nr && ns * nr <= 64) {
                /* small rounds (most): kp_pair_exchanges' rule in place, the
                 * k-th receive from q meets the k-th send to q, without
                 * building and sorting the lists (Bruck at P = 65536 with
                 * a measured exchange: 0.58 against 0.66 s) */
                for (uint32_t j = b; j < e; j++) {
                    const sop *o = rop(s, h, j);
                    if ((o->meta & M_KIND) != S_RECV)
                        continue;
                    uint32_t kq = 0;
                    for (uint32_t i = b; i < j; i++)
                        kq += (rop(s, h, i)->meta & M_KIND) == S_RECV && rop(s, h, i)->peer == o->peer;
                    const uint32_t further = kq ? XP_FURTHER : 0;
                    for (uint32_t i = b; i < e; i++)
                        if ((rop(s, h, i)->meta & M_KIND) == S_SEND && rop(s, h, i)->peer == o->peer && kq-- == 0) {
                            s->xpair[s->base[h] + j] = (i + 1) | further;
                            s->xpair[s->base[h] + i] = (j + 1) | further;
                            break;
                        }
                }
            } else if (ns && nr) {
                if (ns + nr > cap && grow(s, (void **)&buf, &cap, ns + nr, sizeof(kp_xop))) {
                    rc = nomem(s);
                    break;
                }
                kp_xop *S = buf, *R = buf + ns;
                uint32_t a = 0, c = 0;
                for (uint32_t i = b; i < e; i++) {
                    const sop *o = rop(s, h, i);
                    if ((o->meta & M_KIND) == S_SEND)
                        S[a++] = (kp_xop){o->peer, i};
                    else if ((o->meta & M_KIND) == S_RECV)
                        R[c++] = (kp_xop){o->peer, i};
                }
                xpair_ctx x = {s->xpair + s->base[h]};
                kp_pair_exchanges(S, ns, R, nr, xpair_one, &x);
            }
            b = e;
        }
    }
    if (buf)
        s->mem -= cap * sizeof(kp_xop);
    free(buf);
    return rc;
}

/* ---- the run ------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* when rank r enters the call: with P > 1 the odd ranks call.skew after
 * the even ones (the cost model's rule) */
static double entry(const sim *s, uint32_t r)
{
    return kp_model_entry(&s->c->m, s->P, (int)r);
}

static int simulate(sim *s, double t0)
{
    const kp_sim_config *c = s->c;
    for (int r = 0; r < s->P; r++) {
        srank *k = &s->rk[r];
        const double start = entry(s, (uint32_t)r) + c->m.call.fixed;
        k->cpu.t = start;
        k->cpu.v[KP_SIM_CALL] = (float)start;
    }
    for (size_t i = 0; i < (size_t)s->P * (size_t)s->ports; i++)
        s->gs[i].t = s->gr[i].t = 0;
    uint64_t joins = 0;
    for (uint32_t r = 0; r < (uint32_t)s->P; r++) {
        if (s->base[r + 1] == s->base[r])
            s->finished++;
        else if (start_round(s, r))
            return s->err;
    }
    double last = t0;
    uint64_t pops = 0;
    while (s->nheap && !s->err) {
        ev e = hpop(s);
        pops++;
        int rc = 0, joined = 0;
        switch (e.k & 7u) {
        case E_SEND: rc = ev_send(s, e); break;
        case E_RECV: rc = ev_recv(s, e); break;
        case E_POST:
        case E_LOCOP: rc = ev_locop(s, e); break;
        case E_MSG: rc = ev_msg(s, e); break;
        case E_WAITDONE: rc = ev_waitdone(s, e); break;
        case E_JOIN:
            if (s->rk[e.host].cpu.t > e.t) {
                rc = qagain(s, e, s->rk[e.host].cpu.t);
                break;
            }
            joins++;
            joined = 1;
            touch(s, e.host);
            break;
        default: rc = KP_ERR_INTERNAL; break;
        }
        if (rc || s->err)
            return s->err ? s->err : rc;
        if (s->ntouch && after(s, joined))
            return s->err;
        if (c->progress && (pops & 0xffff) == 0) {
            double w = now_s();
            if (w - t0 > 2.0 && w - last >= 1.0) {
                last = w;
                c->progress(c->progress_arg, "simulate", e.t, s->ts, 0, w - t0);
            }
        }
    }
    s->r->pops = pops;
    s->r->events = s->ts;
    if (s->finished < s->P) {
        for (int r = 0; r < s->P; r++)
            if (s->rk[r].cur < s->base[r + 1] - s->base[r]) {
                snprintf(s->r->msg, sizeof s->r->msg,
                         "deadlock: rank %d never completes its operation %u (a receive or wait that no send or post "
                         "matches; run kport-check)",
                         r, s->rk[r].cur);
                break;
            }
        return s->err = KP_ERR_INTERNAL;
    }
    (void)joins;
    return 0;
}

int kp_sim_run(const kp_sim_config *c, kp_sim_result *r)
{
    memset(r, 0, sizeof *r);
    sim S = {0};
    sim *s = &S;
    s->c = c;
    s->r = r;
    s->P = c->P;
    s->ports = c->ports < 1 ? 1 : c->ports;
    s->rails = c->rails < 0 ? 0 : c->rails;
    s->nsize = c->node_size > 1 ? c->node_size : 1;
    /* 90% of the memory available when the run starts */
    const long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    s->limit = pages > 0 && psize > 0 ? (size_t)pages / 10 * 9 * (size_t)psize : 0;
    if (!c->algo || c->P < 1 || c->P > (1 << 30) || c->bytes < 0 || c->ports > 64 || c->rails > 64 ||
        c->root < 0 || c->root >= c->P) {
        snprintf(r->msg, sizeof r->msg, "invalid configuration (algorithm, P = %d, bytes, ports, rails or root)",
                 c->P);
        return KP_ERR_PARAM;
    }
    if (kp_params_check(&c->m, r->msg, sizeof r->msg))
        return KP_ERR_PARAM;
    s->nnodes = (c->P + s->nsize - 1) / s->nsize;
    kp_algo_format_on(c->algo, &c->prm, NULL, c->P, r->algorithm, sizeof r->algorithm);
    kp_layout L, *Lp = NULL;
    if (s->nsize > 1) {
        if (kp_sim_block_layout(&L, c->P, s->nsize)) {
            snprintf(r->msg, sizeof r->msg, "out of memory for the node layout");
            return KP_ERR_NOMEM;
        }
        Lp = &L;
        s->mem += (size_t)c->P * 4 * sizeof(int);
        kp_algo_format_on(c->algo, &c->prm, Lp, c->P, r->algorithm, sizeof r->algorithm);
    }
    const double t0 = now_s();
    int rc = KP_SUCCESS;
    s->base = alloc0(s, (size_t)c->P + 1, sizeof(uint64_t));
    if (!s->base) {
        rc = nomem(s);
        goto out;
    }
    if (build(s, Lp, t0)) {
        rc = s->err < 0 ? KP_SUCCESS : s->err; /* a refusal is reported, not an error */
        goto out;
    }
    /* the stream is final: give back what growing reserved */
    if (s->capops > s->nops + 1) {
        sop *o = realloc(s->ops, (s->nops + 1) * sizeof(sop));
        if (o) {
            s->mem -= (s->capops - s->nops - 1) * sizeof(sop);
            s->ops = o;
            s->capops = s->nops + 1;
        }
    }
    if (Lp) {
        kp_layout_free(Lp);
        Lp = NULL;
        s->mem -= (size_t)c->P * 4 * sizeof(int);
    }
    if ((rc = pair_exchanges(s)))
        goto out;
    const double t1 = now_s();
    r->build_s = t1 - t0;
    s->rk = alloc0(s, (size_t)c->P, sizeof(srank));
    s->gs = alloc0(s, (size_t)c->P * (size_t)s->ports, sizeof(clk));
    s->gr = alloc0(s, (size_t)c->P * (size_t)s->ports, sizeof(clk));
    if (s->rails) {
        s->rgs = alloc0(s, (size_t)s->nnodes * (size_t)s->rails, sizeof(clk));
        s->rgr = alloc0(s, (size_t)s->nnodes * (size_t)s->rails, sizeof(clk));
    }
    r->rank_ns = malloc((size_t)c->P * sizeof(double));
    if (!s->rk || !s->gs || !s->gr || (s->rails && (!s->rgs || !s->rgr)) || !r->rank_ns) {
        rc = nomem(s);
        goto out;
    }
    /* the chain is logged when it fits: sends, messages taken in, copies, flags */
    s->log_on = (uint64_t)(2 * r->messages + r->copies + r->waits) <= HOP_LOG_MAX;
    if ((rc = simulate(s, t0)))
        goto out;
    r->sim_s = now_s() - t1;
    /* results: each rank's CPU clock at the end less its entry (odd ranks
     * enter call.skew late), as the cost model and a benchmark time it */
    r->max_ns = -1;
    for (int i = 0; i < c->P; i++) {
        const double t = s->rk[i].cpu.t - entry(s, (uint32_t)i);
        r->rank_ns[i] = t;
        if (t > r->max_ns) {
            r->max_ns = t;
            r->slowest_rank = i;
        }
    }
    const srank *w = &s->rk[r->slowest_rank];
    for (int k = 0; k < KP_SIM_NCAT; k++)
        r->cp[k] = w->cpu.v[k];
    r->cp[KP_SIM_CALL] -= entry(s, (uint32_t)r->slowest_rank);
    r->cp_messages = (int64_t)llround(w->cpu.v[KP_SIM_NCAT]);
    if (s->log_on) { /* walk the chain back from the slowest rank's last hop */
        int n = 0;
        for (uint32_t i = w->cpu.who; i; i = s->log[i - 1].pred)
            n++;
        r->chain = malloc((size_t)(n ? n : 1) * sizeof *r->chain);
        if (r->chain) {
            r->nchain = n;
            for (uint32_t i = w->cpu.who; i; i = s->log[i - 1].pred) {
                const hop *x = &s->log[i - 1];
                r->chain[--n] = (kp_sim_hop){x->t, x->len, (int)x->rank, (int)x->peer, x->kind};
            }
        }
    } else
        r->nchain = -1;
    /* min and median from a sorted copy (the schedules are gone by now) */
    free(s->ops);
    s->ops = NULL;
    double *sorted = malloc((size_t)c->P * sizeof(double));
    if (sorted) {
        memcpy(sorted, r->rank_ns, (size_t)c->P * sizeof(double));
        qsort(sorted, (size_t)c->P, sizeof(double), cmp_double);
        r->min_ns = sorted[0];
        r->median_ns = c->P % 2 ? sorted[c->P / 2] : 0.5 * (sorted[c->P / 2 - 1] + sorted[c->P / 2]);
        free(sorted);
    } else {
        rc = nomem(s);
    }
out:
    if (Lp)
        kp_layout_free(Lp);
    r->mem_bytes = s->peak;
    free(s->ops);
    free(s->xpair);
    free(s->base);
    free(s->big);
    free(s->rk);
    free(s->gs);
    free(s->gr);
    free(s->rgs);
    free(s->rgr);
    free(s->pbase);
    free(s->post);
    free(s->whead);
    free(s->wpool);
    free(s->recs);
    free(s->prqs);
    free(s->log);
    for (int b = 0; b < NB; b++)
        free(s->bk[b].e);
    if (rc != KP_SUCCESS)
        kp_sim_result_free(r);
    return rc;
}

void kp_sim_result_free(kp_sim_result *r)
{
    free(r->rank_ns);
    free(r->chain);
    r->rank_ns = NULL;
    r->chain = NULL;
}
