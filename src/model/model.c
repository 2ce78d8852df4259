/*
 * The cost model: the timed version of the checker's walk (src/sched/check.c).
 * All P schedules are executed together with a clock per rank; the
 * collective's time is the max over ranks of their completion times (what
 * kport-bench reports). Nothing here knows an algorithm: a new builder is
 * modelled the day it exists.
 *
 * Rules (LogGP as LogGOPSim applies it; parameters in docs/PARAMETERS.md,
 * ns and ns/byte). Every rank enters at time 0.
 *
 *  - Rounds. A round starts when the rank's previous round completed and
 *    completes at the max of its operations' completions. Inside a round the
 *    executor's order (src/exec/p2p.c, plan.c): posts, receives, sends,
 *    copies and peer reads/writes, waits; then MPI_Waitall.
 *  - Posts are stores: the n-th post of a rank happens at its round's start.
 *  - Receives are posted at the round's start (no CPU cost).
 *  - Sends, in schedule order: send i starts at
 *        t_i = max(cpu, nic), cpu = t_i + o_s + O*s, nic = t_i + max(g, (s-1)*G)
 *    (the CPU is busy o_s + O*s; consecutive messages of a rank leave at
 *    least g and (s-1)*G apart; `nic` carries over between rounds). The
 *    message is ready at r_i = t_i + o_s + O*s.
 *    Eager (s <= the channel's eager_max; files without it: the first
 *    piece's max_bytes, or one piece only):
 *    it departs at r_i and arrives at a_i = r_i + L + (s-1)*G; the send
 *    completes at r_i (MPI buffers it).
 *    Rendezvous (above the eager limit): the data moves only once the
 *    receive is posted. The request (a small message) reaches the receiver
 *    at r_i + L_0 (L of the first piece); a piece measured by ping-pong
 *    already holds the handshake in its L, so a receive posted before that
 *    costs nothing extra, and one posted later at p delays the data by
 *    p - (r_i + L_0): departure d_i = max(r_i, p - L_0), arrival
 *    a_i = d_i + L + (s-1)*G. The send completes at a_i (the sender learns
 *    that the receiver has the data).
 *    s = 0 (barrier signals) uses (s-1)*G = 0.
 *  - Which parameters: p2p.intra when both ranks are on one node of the
 *    schedule's layout, p2p.inter otherwise; the piece for s bytes.
 *  - Copies, peer reads and writes run on the CPU after the sends, one
 *    after another: a copy costs shm.copy_out when its source is in the
 *    node's segment or flag lines (KP_BUF_SHM/LINE; cache lines written by
 *    another core; from KP_BUF_SHM, or from a flag line past the flag's
 *    cache line (kp_line_spills), lines of their own apart from the
 *    flag's, shm.data_line more), else shm.copy_in when its destination is, else
 *    shm.memcpy; a copy onto itself (MPI_IN_PLACE) costs nothing, as the
 *    executor skips it. Peer reads / writes cost shm.peer_read / peer_write.
 *    Each is fixed + per_byte * bytes (beyond large_from, when the
 *    parameter has one, large_per_byte: kp_linear_cost).
 *  - Receives complete in arrival order, after the round's local work
 *    (MPI progresses them in MPI_Waitall): receive j is handled at
 *        h_j = max(a_j, cpu, rx), cpu = h_j + o_r, rx = h_j + max(g, (s-1)*G)
 *    (the receiver's CPU and its receive gap, LogGOPSim's nextgr) and
 *    completes at h_j + o_r.
 *  - Exchanges: when the channel's piece has a measured exchange (has_x: X
 *    + XG*s, docs/PARAMETERS.md) and the round also sends to the sender
 *    (the k-th receive from q pairs with the k-th send to q of the round),
 *    the receive completes at max(h + o_r, cpu + X + XG*s - own), with
 *    h = max(a_j, rx) and own = o_s + O*s' of the paired send (already on
 *    the CPU clock): two idle ranks exchanging take X + XG*s, as measured,
 *    where the rule above charges both overheads one after the other (MPI
 *    overlaps the send's completion with the receive), and a late message
 *    still bounds it. The exchange bounds its messages too: once both
 *    sends of the pair have started (the later at t_x), the receive has
 *    its message in (h + o_r above) by t_x + X + XG*s at the latest, though
 *    not before the message's first byte (its send's start + o_s + L) nor
 *    rx; a rendezvous send completes by that bound less o_r (not before the
 *    first byte); a further exchange with the peer keeps the one-way
 *    bound (X2 + X2G*s is what it adds to the first). A lone message is
 *    priced from the ping-pong (o_s, L, G), an exchange by its own
 *    measurement: in the machine's slow phase (cross-core transfers 2-3x
 *    slower) RTT/2 at 32-64 KiB ran 9.5-15.9 us against an exchange's
 *    6.2-8.9 in both MPIs (normally the two agree within 7 %), and the
 *    one-way rule priced Open MPI's ring at 64 KiB 16.5 us, measured 10.7.
 *    A further exchange with the same peer in the round
 *    (the k-th pair with q, k >= 2: concurrent_exchange_split's halves)
 *    pays X2 + X2G*s - own instead where the piece has them (has_x2: what
 *    a second message each way at once adds, measured; MPI overlaps it
 *    with the first, where X again would charge two exchanges one after
 *    the other: 1.26-1.41x the split's measured time at 256 B-1 KiB).
 *    The paired send of an exchange holds the CPU own, at most that
 *    exchange (X + XG*s, a further one X2 + X2G*s: MPI overlaps the send's
 *    completion with it; Open MPI's 512 B-2 KiB sends have own 0.45-0.58
 *    us against 0.25-0.40 that a second exchange adds; a 64 KiB rendezvous
 *    send in the slow phase 9.3-11.1 us against an exchange's 8.7-10.0),
 *    and its message still leaves after own; a further eager one does not
 *    wait for the NIC's gap
 *    (MPI_Isend does not; X2 + X2G*s, two messages each way sent at once,
 *    holds it: MPICH's 8 KiB gap, 0.72 us, was charged on top). Two idle
 *    ranks sending each other two messages of s bytes take X + X2 +
 *    (XG+X2G)*s, as measured.
 *  - A wait for post n of rank q completes at max(cpu after the local work,
 *    post time + shm.flag.fixed); it costs no CPU and does not hold up the
 *    round's receives (the executor progresses them while it spins).
 *
 *  - L may be negative (overheads that overlap the transfer, down to
 *    -(o_s + o_r)): the formulas above stay as they are.
 *  - kport's own cost per call and the benchmark's entry skew: the ranks
 *    leave a benchmark's barrier call.skew apart, and the benchmark times
 *    each rank from its own entry (the max over ranks). So, when P > 1, the
 *    odd ranks enter call.skew after the even ones; every rank's clock
 *    starts call.fixed after its entry, and a rank's time is its
 *    completion less its entry. Where a rank only waits for a late peer
 *    (a flag, a message it cannot do without), that is the old rule, the
 *    max over ranks plus call.skew; an exchange hides part of it (the
 *    early rank's message is already there when the late one receives).
 *
 * Hockney, on the same walk: a message of s bytes arrives alpha + beta*s
 * after the start of its sender's round (hockney.intra / inter), every
 * message of a round in flight at once, no CPU overheads, no gap, no
 * protocol; a receive completes at its arrival; copies, peer operations
 * and waits as above.
 *
 * What the model ignores: contention for memory bandwidth and caches
 * (concurrent copies and messages of several ranks, the node's shared
 * memory bus), the data's cache state (warm or cold), MPI's internal
 * copies beyond what O and G carry, progress: a rendezvous is assumed to
 * advance while the sender copies (Open MPI and MPICH progress only inside
 * MPI calls), the splitting of messages above 2^30 bytes, the time ranks
 * enter the collective (all at 0), oversubscription (more ranks than cores:
 * a spinning waiter steals its peer's core), and the NIC occupancy of a
 * rendezvous message that departs later than it was issued.
 */
#include "model/model.h"

#include "kport.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct mrank {
    const kp_sched *s;
    int cur, end;   /* the current round's operations [cur, end) */
    int started;    /* the current round has started */
    double T;       /* its start (the previous round's completion) */
    double cpu;     /* when the CPU is next free */
    double nic;     /* when the next message may leave */
    double rx;      /* when the next message may be taken in */
    double local;   /* CPU after the round's sends, copies and peer operations */
    double *t;      /* per op: recv: posted; send: departure (-1 unknown); post: time */
    double *ready;  /* per send: ready time */
    double *st;     /* per send: when it started (t_i) */
    double *arr;    /* per send: arrival at the receiver */
    int *match;     /* per send / recv: the counterpart's op index on the peer */
    int *pair;      /* per send / recv (exchange): its exchange partner in the round (pair_round), or NULL */
    double *post;   /* [nposts] time of post n (index n-1), -1 unknown */
    double done;    /* completion of the last round */
    int finished;
} mrank;

typedef struct mctx {
    const kp_machine *m;
    const kp_sched *sc;
    int P;
    int hockney;
    int exchange; /* the machine has a measured exchange (kp_params_has_exchange): pair them */
    mrank *rk;
    kp_model_result *out;
} mctx;

static double lin(const kp_linear *l, int64_t bytes)
{
    return kp_linear_cost(l, bytes);
}

static int same_node(const kp_sched *s, int a, int b)
{
    const kp_layout *L = s->layout;
    return L && a < L->P && b < L->P && L->node_of[a] == L->node_of[b];
}

static const kp_channel *channel(const mctx *c, int a, int b)
{
    return same_node(&c->sc[a], a, b) ? &c->m->intra : &c->m->inter;
}

static int is_rendezvous(const kp_channel *ch, int64_t s)
{
    const int64_t e = kp_channel_eager_max(ch);
    return e >= 0 && s > e;
}

static double gap_bytes(const kp_loggp *p, int64_t s)
{
    return s > 1 ? (double)(s - 1) * p->G : 0.0;
}

static int shared_buf(int b)
{
    return b == KP_BUF_SHM || b == KP_BUF_LINE;
}

static double copy_cost(const mctx *c, const kp_sched *s, const kp_op *op)
{
    const kp_machine *m = c->m;
    switch (op->kind) {
    case KP_OP_COPY: {
        const kp_region a = op->u.copy.src, b = op->u.copy.dst;
        if (kp_sched_copy_is_noop(s, op))
            return 0.0;
        /* segment lines of its own, or flag-line bytes past the flag's cache
         * line: one more transfer than the flag's line brings */
        if (a.buf == KP_BUF_SHM || kp_line_spills(&a))
            return lin(&m->copy_out, a.len) + m->data_line;
        if (shared_buf(a.buf))
            return lin(&m->copy_out, a.len);
        if (shared_buf(b.buf))
            return lin(&m->copy_in, a.len);
        return lin(&m->memcpy_, a.len);
    }
    case KP_OP_PEER_READ: return lin(&m->peer_read, op->u.peer_read.src.len);
    case KP_OP_PEER_WRITE: return lin(&m->peer_write, op->u.peer_write.dst.len);
    default: return 0.0;
    }
}

/* kp_pair_exchanges' pair() at a round's start: send op s_op meets
 * receive op r_op, the k-th exchange with their peer in the round; each
 * gets the other's index * 2, + 1 for a further one (k >= 1) */
static void pair_one(void *arg, uint32_t s_op, uint32_t r_op, uint32_t k)
{
    int *pair = arg;
    pair[s_op] = (int)r_op * 2 + (k > 0);
    pair[r_op] = (int)s_op * 2 + (k > 0);
}

/* k->pair over rank r's round [b, e): the k-th receive from q pairs with
 * the k-th send to q of the round; -1 unpaired. Computed once at the
 * round's start, read by its sends (how long they hold the CPU) and its
 * receives (the exchange rule). 0, or -1 out of memory. */
static int pair_round(mctx *c, int r, int b, int e, kp_xop **xb, int *xcap)
{
    mrank *k = &c->rk[r];
    const kp_sched *s = k->s;
    int ns = 0, nr = 0;
    for (int i = b; i < e; i++) {
        k->pair[i] = -1;
        ns += s->ops[i].kind == KP_OP_SEND;
        nr += s->ops[i].kind == KP_OP_RECV;
    }
    if (!ns || !nr)
        return 0;
    if (ns + nr > *xcap) {
        kp_xop *nb = realloc(*xb, (size_t)(ns + nr) * sizeof **xb);
        if (!nb)
            return -1;
        *xb = nb;
        *xcap = ns + nr;
    }
    kp_xop *S = *xb, *R = *xb + ns;
    int a = 0, d = 0;
    for (int i = b; i < e; i++)
        if (s->ops[i].kind == KP_OP_SEND)
            S[a++] = (kp_xop){(uint32_t)s->ops[i].u.send.peer, (uint32_t)i};
        else if (s->ops[i].kind == KP_OP_RECV)
            R[d++] = (kp_xop){(uint32_t)s->ops[i].u.recv.peer, (uint32_t)i};
    kp_pair_exchanges(S, (size_t)ns, R, (size_t)nr, pair_one, k->pair);
    return 0;
}

/* 0, or -1 out of memory */
static int start_round(mctx *c, int r, kp_xop **xb, int *xcap)
{
    mrank *k = &c->rk[r];
    const kp_sched *s = k->s;
    int e = k->cur;
    while (e < s->nops && s->ops[e].round == s->ops[k->cur].round)
        e++;
    k->end = e;
    const int xp = c->exchange && !c->hockney;
    if (xp && pair_round(c, r, k->cur, e, xb, xcap))
        return -1;
    const double T = k->T;
    if (k->cpu < T)
        k->cpu = T;
    for (int i = k->cur; i < e; i++) {
        const kp_op *op = &s->ops[i];
        if (op->kind == KP_OP_POST && op->u.post.n >= 1 && op->u.post.n <= s->nposts)
            k->post[op->u.post.n - 1] = T;
        else if (op->kind == KP_OP_RECV)
            k->t[i] = T;
    }
    for (int i = k->cur; i < e; i++) {
        const kp_op *op = &s->ops[i];
        if (op->kind != KP_OP_SEND)
            continue;
        const int q = op->u.send.peer;
        const int64_t sz = op->u.send.src.len;
        if (c->hockney) {
            const kp_linear *h = same_node(s, r, q) ? &c->m->hockney_intra : &c->m->hockney_inter;
            k->ready[i] = k->t[i] = k->st[i] = T;
            k->arr[i] = T + lin(h, sz);
            continue;
        }
        const kp_channel *ch = channel(c, r, q);
        const kp_loggp *p = kp_channel_piece(ch, sz);
        /* a send paired with a receive of the round: at most the measured
         * exchange on the CPU; a further eager one with its peer does not
         * wait for the NIC (see "Exchanges" above) */
        double xt = -1; /* the measured exchange the send is part of */
        int ff = 0;
        if (xp && k->pair[i] >= 0) {
            const int64_t rs = s->ops[k->pair[i] >> 1].u.recv.dst.len;
            const kp_loggp *pr = kp_channel_piece(channel(c, q, r), rs);
            if (pr->has_x) {
                const int further = (k->pair[i] & 1) && pr->has_x2;
                ff = further && !is_rendezvous(ch, sz);
                xt = kp_exchange_ns(pr, further, rs);
            }
        }
        const double ts = ff || k->cpu > k->nic ? k->cpu : k->nic;
        k->st[i] = ts;
        const double own = p->o_s + p->O * (double)sz;
        k->cpu = ts + (xt >= 0 && own > xt ? xt : own);
        const double gap = gap_bytes(p, sz);
        k->nic = (ff && k->nic > ts ? k->nic : ts) + (p->g > gap ? p->g : gap);
        k->ready[i] = k->cpu;
        if (!is_rendezvous(ch, sz)) {
            k->t[i] = ts + own; /* the message leaves after its whole overhead */
            k->arr[i] = k->t[i] + p->L + gap;
        }
        /* rendezvous: departure once the receive's posting time is known */
    }
    for (int i = k->cur; i < e; i++)
        k->cpu += copy_cost(c, s, &s->ops[i]);
    k->local = k->cpu;
    k->started = 1;
    return 0;
}

/* When the measured exchange has the message of send sop of rank src to
 * rank dst (its receive rop) taken in at the latest, when the two are an
 * exchange (each op paired in its round, the message's piece has_x): X +
 * XG*s after the later of the pair's two sends began; INFINITY when they
 * are not, or when it is a further exchange with the same peer in the round
 * (X2 + X2G*s is what it adds to the first, not a time from its own
 * start; the CPU's chain, the first's end plus X2, bounds it). Both rounds have
 * started (the caller knows the message's departure or its receive's
 * posting), so both starts are known. *first: the message's first byte at
 * dst (its send's start + o_s + L), before which nothing bounds it. */
static double exchange_end(const mctx *c, int src, int sop, int dst, int rop, double *first)
{
    if (c->hockney || !c->exchange)
        return INFINITY;
    const mrank *a = &c->rk[src], *b = &c->rk[dst];
    if (a->pair[sop] < 0 || b->pair[rop] < 0 || (b->pair[rop] & 1))
        return INFINITY;
    const int64_t s = a->s->ops[sop].u.send.src.len;
    const kp_loggp *p = kp_channel_piece(channel(c, src, dst), s);
    if (!p->has_x)
        return INFINITY;
    const double t0 = a->st[sop], t1 = b->st[b->pair[rop] >> 1];
    *first = t0 + p->o_s + p->L;
    return (t0 > t1 ? t0 : t1) + kp_exchange_ns(p, 0, s);
}

typedef struct rcv {
    double a;
    int64_t s;
    int peer;
    int op;     /* the receive's op index */
    double own; /* an exchange's receive: the CPU cost of the paired send (o_s + O*s); -1: not an exchange */
    double xe, first; /* exchange_end's bound (INFINITY: none) and first byte */
    int further; /* a further exchange with the same peer in the round, priced by X2 + X2G*s */
} rcv;

static int rcv_cmp(const void *x, const void *y)
{
    const rcv *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a ? 1 : a->peer != b->peer ? a->peer - b->peer : a->op - b->op;
}

static int xop_cmp(const void *x, const void *y)
{
    const kp_xop *a = x, *b = y;
    return a->peer != b->peer ? (a->peer < b->peer ? -1 : 1) : (a->op < b->op ? -1 : a->op > b->op);
}

void kp_pair_exchanges(kp_xop *S, size_t ns, kp_xop *R, size_t nr,
                       void (*pair)(void *arg, uint32_t s, uint32_t r, uint32_t k), void *arg)
{
    qsort(S, ns, sizeof *S, xop_cmp);
    qsort(R, nr, sizeof *R, xop_cmp);
    uint32_t k = 0;
    for (size_t i = 0, j = 0; i < ns && j < nr;) {
        if (S[i].peer != R[j].peer) {
            if (S[i].peer < R[j].peer)
                i++;
            else
                j++;
            k = 0;
            continue;
        }
        pair(arg, S[i++].op, R[j++].op, k++);
    }
}

/* 1 when the round completed */
static int try_complete(mctx *c, int r, rcv **buf, int *cap)
{
    mrank *k = &c->rk[r];
    const kp_sched *s = k->s;
    int ok = 1, nrecv = 0;
    for (int i = k->cur; i < k->end; i++) {
        const kp_op *op = &s->ops[i];
        if (op->kind == KP_OP_SEND && k->t[i] < 0) { /* rendezvous */
            const int q = op->u.send.peer;
            const double p = c->rk[q].t[k->match[i]];
            if (p < 0) {
                ok = 0;
                continue;
            }
            const kp_channel *ch = channel(c, r, q);
            const kp_loggp *pc = kp_channel_piece(ch, op->u.send.src.len);
            const double d = p - ch->piece[0].L;
            k->t[i] = d > k->ready[i] ? d : k->ready[i];
            k->arr[i] = k->t[i] + pc->L + gap_bytes(pc, op->u.send.src.len);
        } else if (op->kind == KP_OP_RECV) {
            nrecv++;
            if (c->rk[op->u.recv.peer].t[k->match[i]] < 0)
                ok = 0;
        } else if (op->kind == KP_OP_WAIT) {
            const mrank *q = &c->rk[op->u.wait.peer];
            const int n = op->u.wait.n;
            if (n < 1 || n > q->s->nposts || q->post[n - 1] < 0)
                ok = 0;
        }
    }
    if (!ok)
        return 0;
    double end = k->local;
    if (nrecv > *cap) {
        rcv *nb = realloc(*buf, (size_t)nrecv * sizeof **buf);
        if (!nb)
            return -1;
        *buf = nb;
        *cap = nrecv;
    }
    int n = 0;
    for (int i = k->cur; i < k->end; i++) {
        const kp_op *op = &s->ops[i];
        if (op->kind == KP_OP_SEND) {
            const int q = op->u.send.peer;
            double done = k->ready[i];
            if (!c->hockney && is_rendezvous(channel(c, r, q), op->u.send.src.len)) {
                double first = 0;
                const double xe = exchange_end(c, r, i, q, k->match[i], &first);
                if (xe < INFINITY) { /* the receiver has the message by then (less its o_r) */
                    double xa = xe - kp_channel_piece(channel(c, r, q), op->u.send.src.len)->o_r;
                    xa = xa > first ? xa : first;
                    done = k->arr[i] < xa ? k->arr[i] : xa;
                } else
                    done = k->arr[i];
            }
            if (done > end)
                end = done;
        } else if (op->kind == KP_OP_RECV) {
            const mrank *q = &c->rk[op->u.recv.peer];
            rcv *m = &(*buf)[n++];
            *m = (rcv){q->arr[k->match[i]], op->u.recv.dst.len, op->u.recv.peer, i, -1, INFINITY, 0, 0};
            if (!c->hockney && c->exchange && k->pair[i] >= 0) { /* an exchange (pair_round) */
                const kp_loggp *pr = kp_channel_piece(channel(c, m->peer, r), m->s);
                if (pr->has_x) {
                    const int64_t ss = s->ops[k->pair[i] >> 1].u.send.src.len;
                    const kp_loggp *ps = kp_channel_piece(channel(c, r, m->peer), ss);
                    m->own = ps->o_s + ps->O * (double)ss;
                    m->further = (k->pair[i] & 1) && pr->has_x2;
                    m->xe = exchange_end(c, m->peer, k->match[i], r, i, &m->first);
                }
            }
        } else if (op->kind == KP_OP_WAIT) {
            const double w = c->rk[op->u.wait.peer].post[op->u.wait.n - 1] + c->m->flag.fixed;
            if (w > end)
                end = w;
        }
    }
    if (n > 1)
        qsort(*buf, (size_t)n, sizeof **buf, rcv_cmp);
    for (int j = 0; j < n; j++) {
        const rcv *m = &(*buf)[j];
        if (c->hockney) {
            const double h = m->a > k->T ? m->a : k->T;
            if (h > end)
                end = h;
            continue;
        }
        const kp_loggp *p = kp_channel_piece(channel(c, m->peer, r), m->s);
        double h = m->a;
        if (k->rx > h)
            h = k->rx;
        if (m->own >= 0) {
            /* an exchange: the receive completes once the message is in
             * (h + o_r) and once the measured exchange's time has passed
             * since the paired send began (X + XG*s, less the send's own
             * CPU cost already on the clock; a further one with the same
             * peer: what it adds, X2 + X2G*s) */
            const double rest = kp_exchange_ns(p, m->further, m->s) - m->own;
            const double x = k->cpu + (rest > 0 ? rest : 0.0);
            double in = h + p->o_r; /* the message in; by the exchange's end at the latest, */
            if (m->xe < in) {        /* not before its first byte nor the receive gap */
                const double fl = m->first > k->rx ? m->first : k->rx;
                in = m->xe > fl ? m->xe : fl;
            }
            k->cpu = in > x ? in : x;
        } else {
            if (k->cpu > h)
                h = k->cpu;
            k->cpu = h + p->o_r;
        }
        const double gap = gap_bytes(p, m->s);
        k->rx = h + (p->g > gap ? p->g : gap);
        if (k->cpu > end)
            end = k->cpu;
    }
    k->T = end;
    k->cur = k->end;
    k->started = 0;
    if (k->cur >= s->nops) {
        k->finished = 1;
        k->done = end;
    }
    return 1;
}

typedef struct mkey {
    int src, dst, k, rank, op;
    int64_t len;
} mkey;

static int mkey_cmp(const void *x, const void *y)
{
    const mkey *a = x, *b = y;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

static int fail(mctx *c, int code, const char *msg)
{
    snprintf(c->out->msg, sizeof c->out->msg, "%s", msg);
    return code;
}

/* the k-th send from a to b meets the k-th receive of b from a */
static int match_messages(mctx *c)
{
    const int P = c->P;
    int64_t ns = 0, nr = 0;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < c->sc[r].nops; i++) {
            ns += c->sc[r].ops[i].kind == KP_OP_SEND;
            nr += c->sc[r].ops[i].kind == KP_OP_RECV;
        }
    if (ns != nr) {
        snprintf(c->out->msg, sizeof c->out->msg, "%lld sends but %lld receives", (long long)ns, (long long)nr);
        return KP_ERR_INTERNAL;
    }
    mkey *S = malloc((size_t)(ns ? ns : 1) * sizeof *S), *R = malloc((size_t)(nr ? nr : 1) * sizeof *R);
    int *cs = calloc((size_t)P, sizeof(int)), *cr = calloc((size_t)P, sizeof(int));
    int rc = KP_SUCCESS;
    if (!S || !R || !cs || !cr) {
        rc = fail(c, KP_ERR_NOMEM, "out of memory matching messages");
        goto out;
    }
    int64_t a = 0, b = 0;
    for (int r = 0; r < P; r++) {
        const kp_sched *s = &c->sc[r];
        for (int i = 0; i < s->nops; i++) {
            const kp_op *op = &s->ops[i];
            if (op->kind == KP_OP_SEND || op->kind == KP_OP_RECV) {
                const int q = op->kind == KP_OP_SEND ? op->u.send.peer : op->u.recv.peer;
                if (q < 0 || q >= P || q == r) {
                    snprintf(c->out->msg, sizeof c->out->msg, "rank %d op %d: peer %d out of range", r, i, q);
                    rc = KP_ERR_INTERNAL;
                    goto out;
                }
            }
            if (op->kind == KP_OP_SEND)
                S[a++] = (mkey){r, op->u.send.peer, cs[op->u.send.peer]++, r, i, op->u.send.src.len};
            else if (op->kind == KP_OP_RECV)
                R[b++] = (mkey){op->u.recv.peer, r, cr[op->u.recv.peer]++, r, i, op->u.recv.dst.len};
        }
        for (int i = 0; i < s->nops; i++) { /* reset only what this rank touched */
            const kp_op *op = &s->ops[i];
            if (op->kind == KP_OP_SEND)
                cs[op->u.send.peer] = 0;
            else if (op->kind == KP_OP_RECV)
                cr[op->u.recv.peer] = 0;
        }
    }
    qsort(S, (size_t)ns, sizeof *S, mkey_cmp);
    qsort(R, (size_t)nr, sizeof *R, mkey_cmp);
    for (int64_t i = 0; i < ns; i++) {
        if (mkey_cmp(&S[i], &R[i]) || S[i].len != R[i].len) {
            snprintf(c->out->msg, sizeof c->out->msg,
                     "send %d of rank %d to %d (%lld B) has no matching receive (schedules do not match: run kport-check)",
                     S[i].k, S[i].src, S[i].dst, (long long)S[i].len);
            rc = KP_ERR_INTERNAL;
            goto out;
        }
        c->rk[S[i].rank].match[S[i].op] = R[i].op;
        c->rk[R[i].rank].match[R[i].op] = S[i].op;
    }
out:
    free(S);
    free(R);
    free(cs);
    free(cr);
    return rc;
}

double kp_model_entry(const kp_machine *m, int P, int r)
{
    return P > 1 && (r & 1) ? m->call.skew : 0.0;
}

/* when rank r enters the call (LogGP walk) */
static double entry(const mctx *c, int r)
{
    return kp_model_entry(c->m, c->P, r);
}

static int walk(mctx *c, double *times)
{
    const int P = c->P;
    for (int r = 0; r < P; r++) {
        mrank *k = &c->rk[r];
        const kp_sched *s = &c->sc[r];
        k->s = s;
        k->cur = k->end = k->started = k->finished = 0;
        k->T = k->cpu = k->nic = k->rx = k->local = k->done = 0;
        if (!c->hockney) /* the entry (odd ranks call.skew late), then kport's own work */
            k->T = k->cpu = entry(c, r) + c->m->call.fixed;
        for (int i = 0; i < s->nops; i++)
            k->t[i] = k->ready[i] = k->st[i] = k->arr[i] = -1;
        for (int n = 0; n < s->nposts; n++)
            k->post[n] = -1;
        if (s->nops == 0) {
            k->finished = 1;
            k->done = k->T;
        }
    }
    rcv *buf = NULL;
    kp_xop *xb = NULL;
    int cap = 0, xcap = 0, nfinished = 0, rc = KP_SUCCESS;
    for (int r = 0; r < P; r++)
        nfinished += c->rk[r].finished;
    while (nfinished < P) {
        int progress = 0;
        for (int r = 0; r < P; r++) {
            mrank *k = &c->rk[r];
            while (!k->finished) {
                if (!k->started) {
                    if (start_round(c, r, &xb, &xcap)) {
                        rc = fail(c, KP_ERR_NOMEM, "out of memory");
                        goto out;
                    }
                    progress = 1;
                }
                int d = try_complete(c, r, &buf, &cap);
                if (d < 0) {
                    rc = fail(c, KP_ERR_NOMEM, "out of memory");
                    goto out;
                }
                if (!d)
                    break;
                progress = 1;
                nfinished += k->finished;
            }
        }
        if (!progress) {
            for (int r = 0; r < P; r++)
                if (!c->rk[r].finished) {
                    snprintf(c->out->msg, sizeof c->out->msg,
                             "deadlock: rank %d cannot complete round %d (run kport-check)", r,
                             c->sc[r].ops[c->rk[r].cur].round);
                    break;
                }
            rc = KP_ERR_INTERNAL;
            goto out;
        }
    }
    for (int r = 0; r < P; r++)
        times[r] = c->rk[r].done - (c->hockney ? 0.0 : entry(c, r));
out:
    free(buf);
    free(xb);
    return rc;
}

int kp_model_scheds(const kp_machine *m, const kp_sched *sc, int P, kp_model_result *out)
{
    double *user_ranks = out->rank_ns;
    memset(out, 0, sizeof *out);
    out->rank_ns = user_ranks;
    if (P < 1 || !sc)
        return snprintf(out->msg, sizeof out->msg, "invalid P=%d", P), KP_ERR_PARAM;
    if (kp_params_check(m, out->msg, sizeof out->msg))
        return KP_ERR_PARAM;
    mctx c = {.m = m, .sc = sc, .P = P, .exchange = kp_params_has_exchange(m), .out = out};
    c.rk = calloc((size_t)P, sizeof *c.rk);
    double *times = malloc((size_t)P * sizeof *times);
    int rc = KP_SUCCESS;
    if (!c.rk || !times) {
        rc = fail(&c, KP_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int r = 0; r < P; r++) {
        const kp_sched *s = &sc[r];
        mrank *k = &c.rk[r];
        size_t n = (size_t)(s->nops ? s->nops : 1);
        k->t = malloc(n * sizeof(double));
        k->ready = malloc(n * sizeof(double));
        k->st = malloc(n * sizeof(double));
        k->arr = malloc(n * sizeof(double));
        k->match = malloc(n * sizeof(int));
        k->pair = c.exchange ? malloc(n * sizeof(int)) : NULL;
        k->post = malloc((size_t)(s->nposts ? s->nposts : 1) * sizeof(double));
        if (!k->t || !k->ready || !k->st || !k->arr || !k->match || !k->post || (c.exchange && !k->pair)) {
            rc = fail(&c, KP_ERR_NOMEM, "out of memory");
            goto out;
        }
        int rounds = s->nops ? s->ops[s->nops - 1].round + 1 : 0;
        if (rounds > out->max_rounds)
            out->max_rounds = rounds;
        for (int i = 0; i < s->nops; i++) {
            const kp_op *op = &s->ops[i];
            if (op->kind == KP_OP_SEND) {
                out->messages++;
                out->msg_bytes += op->u.send.src.len;
                out->rendezvous += is_rendezvous(same_node(s, r, op->u.send.peer) ? &m->intra : &m->inter,
                                                 op->u.send.src.len);
            } else if (op->kind == KP_OP_COPY || op->kind == KP_OP_PEER_READ || op->kind == KP_OP_PEER_WRITE) {
                out->copies++;
                out->copy_bytes += op->kind == KP_OP_COPY ? op->u.copy.src.len
                                   : op->kind == KP_OP_PEER_READ ? op->u.peer_read.src.len
                                                                 : op->u.peer_write.dst.len;
            } else if (op->kind == KP_OP_WAIT && (op->u.wait.peer < 0 || op->u.wait.peer >= P)) {
                snprintf(out->msg, sizeof out->msg, "rank %d op %d: waits for rank %d, out of range", r, i,
                         op->u.wait.peer);
                rc = KP_ERR_INTERNAL;
                goto out;
            }
        }
    }
    if ((rc = match_messages(&c)))
        goto out;
    c.hockney = 1;
    if ((rc = walk(&c, times)))
        goto out;
    for (int r = 0; r < P; r++)
        if (times[r] > out->hockney_ns)
            out->hockney_ns = times[r];
    c.hockney = 0;
    if ((rc = walk(&c, times)))
        goto out;
    out->slowest_rank = 0;
    for (int r = 0; r < P; r++) {
        if (times[r] > out->time_ns) {
            out->time_ns = times[r];
            out->slowest_rank = r;
        }
        if (out->rank_ns)
            out->rank_ns[r] = times[r];
    }
out:
    if (c.rk)
        for (int r = 0; r < P; r++) {
            free(c.rk[r].t);
            free(c.rk[r].ready);
            free(c.rk[r].st);
            free(c.rk[r].arr);
            free(c.rk[r].match);
            free(c.rk[r].pair);
            free(c.rk[r].post);
        }
    free(c.rk);
    free(times);
    return rc;
}

int kp_model_predict(const kp_machine *m, const kp_algo *a, const kp_params *prm, const kp_layout *L, int P,
                     int64_t bytes, int root, int inplace, kp_model_result *out)
{
    double *user_ranks = out->rank_ns;
    memset(out, 0, sizeof *out);
    out->rank_ns = user_ranks;
    if (!a || P < 1 || P > (1 << 24))
        return snprintf(out->msg, sizeof out->msg, "invalid algorithm or P=%d", P), KP_ERR_PARAM;
    kp_sched *sc = calloc((size_t)P, sizeof *sc);
    if (!sc)
        return snprintf(out->msg, sizeof out->msg, "out of memory for %d schedules", P), KP_ERR_NOMEM;
    int built = 0, rc = KP_SUCCESS;
    for (; built < P; built++) {
        rc = kp_algo_build_on(a, prm, L, built, P, bytes, root, inplace, &sc[built]);
        if (rc != KP_SUCCESS) {
            snprintf(out->msg, sizeof out->msg, "%s", sc[built].errmsg);
            built++;
            break;
        }
    }
    if (rc == KP_SUCCESS)
        rc = kp_model_scheds(m, sc, P, out);
    else if (rc == KP_ERR_PARAM || rc == KP_ERR_UNSUPPORTED) {
        out->refused = 1;
        out->refuse_code = rc;
        rc = KP_SUCCESS;
    }
    for (int r = 0; r < built; r++)
        kp_sched_free(&sc[r]);
    free(sc);
    return rc;
}
