/*
 * The timing engine under kport's executor rules (KP_RULES_EXECUTOR, the
 * cost model's default): the timed version of the checker's walk
 * (src/sched/check.c). Every rank's operation stream is executed round by
 * round with a clock per rank, in the order kport's executor runs a round
 * (src/exec/run.c, plan.c); rules.h holds the formulas, this file their
 * order. docs/DESIGN.md ("The cost model") is the user's account.
 *
 *  - Rounds. A round starts when the rank's previous round completed and
 *    completes at the max of its operations' completions. Inside a round:
 *    posts, receives posted, sends in schedule order, copies and peer
 *    reads/writes, waits; then MPI_Waitall, which takes the receives in.
 *  - Posts are stores: the n-th post of a rank happens at its round's start.
 *  - Receives are posted at the round's start (no CPU cost).
 *  - Sends, in schedule order: send i starts at t_i = max(cpu, nic); the
 *    CPU is busy kp_rule_send_cpu (o_s + O*s), the NIC until
 *    kp_rule_nic_free (t_i + max(g, (s-1)*G); `nic` carries over between
 *    rounds). The message is ready at r_i = the CPU's clock after it.
 *    Eager (kp_rule_rendezvous false): it departs at t_i + o_s + O*s and
 *    arrives at kp_rule_arrival (+ L + (s-1)*G); the send completes at r_i
 *    (MPI buffers it). Rendezvous: the data moves only once the receive is
 *    posted (kp_rule_rdv_departure); the send completes at the arrival
 *    (the sender learns that the receiver has the data).
 *  - Copies, peer reads and writes and combines (KP_OP_REDUCE) run on the
 *    CPU after the sends, one after another (kp_rule_local_cost); a combine
 *    of data received in the schedule is in a later round than its receive
 *    (the checker's rule), so it never starts before the data is in.
 *  - Receives complete in arrival order (ties: peer, then schedule order),
 *    after the round's local work, once every message of the round is
 *    known: receive j is handled at h_j = max(a_j, cpu, rx), the CPU busy
 *    o_r, the receive gap until kp_rule_nic_free from h_j (LogGOPSim's
 *    nextgr).
 *  - Exchanges (a measured exchange, has_x; the pairing of stream.c): the
 *    receive completes at max(in, cpu + kp_rule_exchange_rest), with
 *    h = max(a_j, rx) and in = h + o_r, though by kp_rule_exchange_by (the
 *    later of the pair's two sends' starts + X + XG*s) at the latest, not
 *    before the message's first byte (kp_rule_first_byte) nor rx; a
 *    rendezvous send completes by that bound less o_r (not before the first
 *    byte); a further exchange with the peer keeps the one-way bound. A
 *    send of an exchange holds the CPU at most that exchange
 *    (kp_rule_send_cap), its message still leaving after its whole own
 *    time; a further eager one does not wait for the NIC's gap.
 *  - A wait for post n of rank q completes at max(cpu after the local work,
 *    post time + flag.fixed); it costs no CPU and does not hold up the
 *    round's receives (the executor progresses them while it spins).
 *  - Every rank's clock starts at its entry (kp_rule_entry) + call.fixed; a
 *    rank's time is its completion less its entry.
 *
 * Hockney (hockney = 1), on the same walk: a message of s bytes arrives
 * alpha + beta*s after the start of its sender's round (hockney.intra /
 * inter), every message of a round in flight at once, no CPU overheads,
 * no gap, no protocol; a receive completes at its arrival; copies, peer
 * operations and waits as above; every rank enters at 0.
 *
 * Unlike the event order of des.c this needs no queue: a round completes as
 * soon as everything it depends on is known, ranks are visited in turn
 * until all finish (or none can progress: a deadlock). It keeps 36 bytes
 * per operation; kport-sim --rules executor reaches 10^5-10^6 ranks with
 * log-step algorithms. Ports, rails and --loggopsim-zero-bytes are
 * LogGOPSim's rules' only.
 */
#include "timing/engine.h"

#include "kport.h"

#include <math.h>

#define EX KP_RULES_EXECUTOR

typedef struct mrank {
    uint32_t cur, end; /* the current round's operations [cur, end) */
    int started;       /* the current round has started */
    int finished;
    double T;          /* its start (the previous round's completion) */
    double cpu;        /* when the CPU is next free */
    double nic;        /* when the next message may leave */
    double rx;         /* when the next message may be taken in */
    double local;      /* CPU after the round's sends, copies and peer operations */
    double done;       /* completion of the last round */
} mrank;

typedef struct rcv {
    double a;
    int64_t s;
    uint32_t peer;
    uint32_t op;       /* the receive's op index */
    double own;        /* an exchange's receive: the paired send's CPU time; -1: not an exchange */
    double xe, first;  /* exchange_end's bound (INFINITY: none) and first byte */
    int further;       /* a further exchange with the same peer in the round, priced by X2 + X2G*s */
} rcv;

typedef struct walk {
    sim *s;
    int hockney;
    int exchange;      /* s->xpair: the machine has a measured exchange */
    mrank *rk;
    /* per operation (global stream index) */
    double *t;         /* recv: posted; send: departure (-1 unknown) */
    double *ready;     /* send: ready time */
    double *st;        /* send: when it started */
    double *arr;       /* send: arrival at the receiver */
    uint32_t *match;   /* send / recv: the counterpart's op index on the peer */
    rcv *buf;
    size_t cap;
} walk;

static inline size_t gi(const walk *w, uint32_t r, uint32_t i)
{
    return (size_t)w->s->base[r] + i;
}

static clk *post_of(const sim *s, uint32_t q, uint32_t n)
{
    if (!s->pbase || n < 1 || s->pbase[q] + n - 1 >= s->pbase[q + 1])
        return NULL;
    return &s->post[s->pbase[q] + n - 1];
}

/* ---- matching: the k-th send from a to b meets the k-th receive of b from a */

typedef struct mkey {
    uint32_t src, dst, k, rank, op;
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

static int match_messages(walk *w)
{
    sim *s = w->s;
    const uint32_t P = (uint32_t)s->P;
    size_t ns = 0, nr = 0;
    for (size_t i = 0; i < s->nops; i++) {
        ns += (s->ops[i].meta & M_KIND) == S_SEND;
        nr += (s->ops[i].meta & M_KIND) == S_RECV;
    }
    if (ns != nr) {
        snprintf(s->r->msg, sizeof s->r->msg, "%lld sends but %lld receives", (long long)ns, (long long)nr);
        return s->err = KP_ERR_INTERNAL;
    }
    mkey *S = malloc((ns ? ns : 1) * sizeof *S), *R = malloc((nr ? nr : 1) * sizeof *R);
    uint32_t *cs = calloc(P, sizeof(uint32_t)), *cr = calloc(P, sizeof(uint32_t));
    int rc = 0;
    if (!S || !R || !cs || !cr) {
        rc = kp_eng_nomem(s);
        goto out;
    }
    size_t a = 0, b = 0;
    for (uint32_t r = 0; r < P; r++) {
        const uint32_t n = (uint32_t)(s->base[r + 1] - s->base[r]);
        for (uint32_t i = 0; i < n; i++) {
            const sop o = *rop(s, r, i);
            if ((o.meta & M_KIND) == S_SEND)
                S[a++] = (mkey){r, o.peer, cs[o.peer]++, r, i, op_len(s, o)};
            else if ((o.meta & M_KIND) == S_RECV)
                R[b++] = (mkey){o.peer, r, cr[o.peer]++, r, i, op_len(s, o)};
        }
        for (uint32_t i = 0; i < n; i++) { /* reset only what this rank touched */
            const sop o = *rop(s, r, i);
            if ((o.meta & M_KIND) == S_SEND)
                cs[o.peer] = 0;
            else if ((o.meta & M_KIND) == S_RECV)
                cr[o.peer] = 0;
        }
    }
    qsort(S, ns, sizeof *S, mkey_cmp);
    qsort(R, nr, sizeof *R, mkey_cmp);
    for (size_t i = 0; i < ns; i++) {
        if (mkey_cmp(&S[i], &R[i]) || S[i].len != R[i].len) {
            snprintf(s->r->msg, sizeof s->r->msg,
                     "send %u of rank %u to %u (%lld B) has no matching receive (schedules do not match: run kport-check)",
                     S[i].k, S[i].src, S[i].dst, (long long)S[i].len);
            rc = s->err = KP_ERR_INTERNAL;
            goto out;
        }
        w->match[gi(w, S[i].rank, S[i].op)] = R[i].op;
        w->match[gi(w, R[i].rank, R[i].op)] = S[i].op;
    }
out:
    free(S);
    free(R);
    free(cs);
    free(cr);
    return rc;
}

/* ---- a round ------------------------------------------------------------- */

static void start_round(walk *w, uint32_t r)
{
    sim *s = w->s;
    mrank *k = &w->rk[r];
    const uint32_t e = round_end(s, r, k->cur);
    k->end = e;
    const int xp = w->exchange && !w->hockney;
    const double T = k->T;
    if (k->cpu < T)
        k->cpu = T;
    for (uint32_t i = k->cur; i < e; i++) {
        const sop o = *rop(s, r, i);
        if ((o.meta & M_KIND) == S_POST) {
            clk *pc = post_of(s, r, o.meta >> M_VAL_SHIFT);
            if (pc)
                pc->t = T;
        } else if ((o.meta & M_KIND) == S_RECV)
            w->t[gi(w, r, i)] = T;
    }
    for (uint32_t i = k->cur; i < e; i++) {
        const sop o = *rop(s, r, i);
        if ((o.meta & M_KIND) != S_SEND)
            continue;
        const size_t x = gi(w, r, i);
        const uint32_t q = o.peer;
        const int64_t sz = op_len(s, o);
        if (w->hockney) {
            const kp_linear *h = same_node(s, r, q) ? &s->m->hockney_intra : &s->m->hockney_inter;
            w->ready[x] = w->t[x] = w->st[x] = T;
            w->arr[x] = T + kp_linear_cost(h, sz);
            continue;
        }
        const kp_channel *ch = chan(s, r, q);
        const kp_loggp *p = kp_channel_piece(ch, sz);
        /* a send paired with a receive of the round: at most the measured
         * exchange on the CPU; a further eager one with its peer does not
         * wait for the NIC */
        double xt = -1; /* the measured exchange the send is part of */
        int ff = 0;
        const uint32_t xv = xp ? s->xpair[x] : 0;
        if (xv) {
            const int64_t rs = op_len(s, *rop(s, r, (xv & ~XP_FURTHER) - 1));
            const kp_loggp *pr = kp_channel_piece(chan(s, q, r), rs);
            if (pr->has_x) {
                const int further = (xv & XP_FURTHER) && pr->has_x2;
                ff = further && !kp_rule_rendezvous(ch, sz);
                xt = kp_exchange_ns(pr, further, rs);
            }
        }
        const double ts = ff || k->cpu > k->nic ? k->cpu : k->nic;
        w->st[x] = ts;
        const double s1 = kp_rule_s1(EX, sz, 0);
        const double own = kp_rule_send_cpu(EX, p, sz, s1);
        k->cpu = ts + (xt >= 0 ? kp_rule_send_cap(EX, own, xt) : own);
        k->nic = kp_rule_nic_free(EX, p, ff && k->nic > ts ? k->nic : ts, s1);
        w->ready[x] = k->cpu;
        if (!kp_rule_rendezvous(ch, sz)) {
            w->t[x] = ts + own; /* the message leaves after its whole overhead */
            w->arr[x] = kp_rule_arrival(EX, p, w->t[x], s1);
        }
        /* rendezvous: departure once the receive's posting time is known */
    }
    for (uint32_t i = k->cur; i < e; i++) {
        const sop o = *rop(s, r, i);
        const unsigned kind = o.meta & M_KIND;
        if (kind == S_COPY || kind == S_PREAD || kind == S_PWRITE || kind == S_REDUCE)
            k->cpu += locop_cost(s, o);
    }
    k->local = k->cpu;
    k->started = 1;
}

/* When the measured exchange has the message of send sop of rank src to
 * rank dst (its receive rop) taken in at the latest, when the two are an
 * exchange (each op paired in its round, the message's piece has_x):
 * kp_rule_exchange_by; INFINITY when they are not, or when it is a further
 * exchange with the same peer in the round (X2 + X2G*s is what it adds to
 * the first, not a time from its own start; the CPU's chain, the first's
 * end plus X2, bounds it). Both rounds have started, so both starts are
 * known. *first: the message's first byte at dst, before which nothing
 * bounds it. */
static double exchange_end(const walk *w, uint32_t src, uint32_t sop_i, uint32_t dst, uint32_t rop_i, double *first)
{
    const sim *s = w->s;
    if (w->hockney || !w->exchange)
        return INFINITY;
    const uint32_t xa = s->xpair[gi(w, src, sop_i)], xb = s->xpair[gi(w, dst, rop_i)];
    if (!xa || !xb || (xb & XP_FURTHER))
        return INFINITY;
    const int64_t sz = op_len(s, *rop(s, src, sop_i));
    const kp_loggp *p = kp_channel_piece(chan(s, src, dst), sz);
    if (!p->has_x)
        return INFINITY;
    const double t0 = w->st[gi(w, src, sop_i)], t1 = w->st[gi(w, dst, (xb & ~XP_FURTHER) - 1)];
    *first = kp_rule_first_byte(p, t0);
    return kp_rule_exchange_by(EX, p, sz, t0, t1);
}

static int rcv_cmp(const void *x, const void *y)
{
    const rcv *a = x, *b = y;
    return a->a < b->a     ? -1
           : a->a > b->a   ? 1
           : a->peer != b->peer ? (a->peer < b->peer ? -1 : 1)
                           : (a->op < b->op ? -1 : a->op > b->op);
}

/* 1 when the round completed, 0 not yet, -1 out of memory */
static int try_complete(walk *w, uint32_t r)
{
    sim *s = w->s;
    mrank *k = &w->rk[r];
    int ok = 1;
    uint32_t nrecv = 0;
    for (uint32_t i = k->cur; i < k->end; i++) {
        const sop o = *rop(s, r, i);
        const unsigned kind = o.meta & M_KIND;
        const size_t x = gi(w, r, i);
        if (kind == S_SEND && w->t[x] < 0) { /* rendezvous */
            const double posted = w->t[gi(w, o.peer, w->match[x])];
            if (posted < 0) {
                ok = 0;
                continue;
            }
            const int64_t sz = op_len(s, o);
            const kp_channel *ch = chan(s, r, o.peer);
            w->t[x] = kp_rule_rdv_departure(ch, w->ready[x], posted);
            w->arr[x] = kp_rule_arrival(EX, kp_channel_piece(ch, sz), w->t[x], kp_rule_s1(EX, sz, 0));
        } else if (kind == S_RECV) {
            nrecv++;
            if (w->t[gi(w, o.peer, w->match[x])] < 0)
                ok = 0;
        } else if (kind == S_WAIT) {
            const clk *pc = post_of(s, o.peer, o.meta >> M_VAL_SHIFT);
            if (!pc || pc->t < 0)
                ok = 0;
        }
    }
    if (!ok)
        return 0;
    double end = k->local;
    if (nrecv > w->cap) {
        rcv *nb = realloc(w->buf, (size_t)nrecv * sizeof *nb);
        if (!nb)
            return -1;
        w->buf = nb;
        w->cap = nrecv;
    }
    uint32_t n = 0;
    for (uint32_t i = k->cur; i < k->end; i++) {
        const sop o = *rop(s, r, i);
        const unsigned kind = o.meta & M_KIND;
        const size_t x = gi(w, r, i);
        if (kind == S_SEND) {
            const uint32_t q = o.peer;
            const int64_t sz = op_len(s, o);
            double done = w->ready[x];
            if (!w->hockney && kp_rule_rendezvous(chan(s, r, q), sz)) {
                double first = 0;
                const double xe = exchange_end(w, r, i, q, w->match[x], &first);
                if (xe < INFINITY) { /* the receiver has the message by then (less its o_r) */
                    double xa = xe - kp_channel_piece(chan(s, r, q), sz)->o_r;
                    xa = xa > first ? xa : first;
                    done = w->arr[x] < xa ? w->arr[x] : xa;
                } else
                    done = w->arr[x];
            }
            if (done > end)
                end = done;
        } else if (kind == S_RECV) {
            rcv *m = &w->buf[n++];
            *m = (rcv){w->arr[gi(w, o.peer, w->match[x])], op_len(s, o), o.peer, i, -1, INFINITY, 0, 0};
            const uint32_t xv = w->exchange && !w->hockney ? s->xpair[x] : 0;
            if (xv) { /* an exchange (stream.c's pairing) */
                const kp_loggp *pr = kp_channel_piece(chan(s, m->peer, r), m->s);
                if (pr->has_x) {
                    const int64_t ss = op_len(s, *rop(s, r, (xv & ~XP_FURTHER) - 1));
                    const kp_loggp *ps = kp_channel_piece(chan(s, r, m->peer), ss);
                    m->own = kp_rule_send_cpu(EX, ps, ss, kp_rule_s1(EX, ss, 0));
                    m->further = (xv & XP_FURTHER) && pr->has_x2;
                    m->xe = exchange_end(w, m->peer, w->match[x], r, i, &m->first);
                }
            }
        } else if (kind == S_WAIT) {
            const double t = post_of(s, o.peer, o.meta >> M_VAL_SHIFT)->t + s->m->flag.fixed;
            if (t > end)
                end = t;
        }
    }
    if (n > 1)
        qsort(w->buf, n, sizeof *w->buf, rcv_cmp);
    for (uint32_t j = 0; j < n; j++) {
        const rcv *m = &w->buf[j];
        if (w->hockney) {
            const double h = m->a > k->T ? m->a : k->T;
            if (h > end)
                end = h;
            continue;
        }
        const kp_loggp *p = kp_channel_piece(chan(s, m->peer, r), m->s);
        const double s1 = kp_rule_s1(EX, m->s, 0);
        double h = m->a;
        if (k->rx > h)
            h = k->rx;
        if (m->own >= 0) {
            /* an exchange: the receive completes once the message is in
             * (h + o_r) and once the measured exchange's time has passed
             * since the paired send began */
            const double x = k->cpu + kp_rule_exchange_rest(p, m->further, m->s, m->own);
            double in = h + p->o_r + kp_rule_take_bytes(EX, p, s1); /* the message in; by the exchange's end */
            if (m->xe < in) {                                          /* at the latest, not before its first */
                const double fl = m->first > k->rx ? m->first : k->rx; /* byte nor the receive gap */
                in = m->xe > fl ? m->xe : fl;
            }
            k->cpu = in > x ? in : x;
        } else {
            if (k->cpu > h)
                h = k->cpu;
            k->cpu = h + p->o_r + kp_rule_take_bytes(EX, p, s1);
        }
        k->rx = kp_rule_nic_free(EX, p, h, s1);
        if (k->cpu > end)
            end = k->cpu;
    }
    k->T = end;
    k->cur = k->end;
    k->started = 0;
    if (k->cur >= (uint32_t)(s->base[r + 1] - s->base[r])) {
        k->finished = 1;
        k->done = end;
    }
    return 1;
}

/* ---- the walk -------------------------------------------------------------- */

static int run(walk *w)
{
    sim *s = w->s;
    const uint32_t P = (uint32_t)s->P;
    int nfinished = 0;
    for (uint32_t r = 0; r < P; r++) {
        mrank *k = &w->rk[r];
        memset(k, 0, sizeof *k);
        if (!w->hockney) /* the entry (odd ranks call.skew late), then kport's own work */
            k->T = k->cpu = entry(s, r) + s->m->call.fixed;
        if (s->base[r + 1] == s->base[r]) {
            k->finished = 1;
            k->done = k->T;
            nfinished++;
        }
    }
    for (size_t i = 0; i < s->nops; i++)
        w->t[i] = w->ready[i] = w->st[i] = w->arr[i] = -1;
    for (uint64_t i = 0; i < s->nposts; i++)
        s->post[i].t = -1;
    while (nfinished < s->P) {
        int progress = 0;
        for (uint32_t r = 0; r < P; r++) {
            mrank *k = &w->rk[r];
            while (!k->finished) {
                if (!k->started) {
                    start_round(w, r);
                    progress = 1;
                }
                const int d = try_complete(w, r);
                if (d < 0)
                    return kp_eng_nomem(s);
                if (!d)
                    break;
                progress = 1;
                nfinished += k->finished;
            }
        }
        if (!progress) {
            for (uint32_t r = 0; r < P; r++)
                if (!w->rk[r].finished) {
                    int round = 0;
                    for (uint32_t i = 0; i < w->rk[r].cur; i++)
                        round += (rop(s, r, i)->meta & M_END) != 0;
                    snprintf(s->r->msg, sizeof s->r->msg,
                             "deadlock: rank %u cannot complete round %d (run kport-check)", r, round);
                    break;
                }
            return s->err = KP_ERR_INTERNAL;
        }
    }
    kp_sim_result *res = s->r;
    res->max_ns = 0;
    res->slowest_rank = 0;
    for (uint32_t r = 0; r < P; r++) {
        const double t = w->rk[r].done - (w->hockney ? 0.0 : entry(s, r));
        res->rank_ns[r] = t;
        if (t > res->max_ns) {
            res->max_ns = t;
            res->slowest_rank = (int)r;
        }
    }
    return 0;
}

int kp_eng_walk(sim *s, int hockney)
{
    walk w = {.s = s, .hockney = hockney, .exchange = s->xpair != NULL};
    const size_t n = s->nops ? s->nops : 1;
    w.rk = kp_eng_alloc0(s, (size_t)s->P, sizeof *w.rk);
    w.t = kp_eng_alloc0(s, n, sizeof(double));
    w.ready = kp_eng_alloc0(s, n, sizeof(double));
    w.st = kp_eng_alloc0(s, n, sizeof(double));
    w.arr = kp_eng_alloc0(s, n, sizeof(double));
    w.match = kp_eng_alloc0(s, n, sizeof(uint32_t));
    int rc;
    if (!w.rk || !w.t || !w.ready || !w.st || !w.arr || !w.match)
        rc = kp_eng_nomem(s);
    else if (!(rc = match_messages(&w)))
        rc = run(&w);
    s->mem -= (w.rk ? (size_t)s->P * sizeof *w.rk : 0) + (w.t ? n * sizeof(double) : 0) +
              (w.ready ? n * sizeof(double) : 0) + (w.st ? n * sizeof(double) : 0) +
              (w.arr ? n * sizeof(double) : 0) + (w.match ? n * sizeof(uint32_t) : 0);
    free(w.rk);
    free(w.t);
    free(w.ready);
    free(w.st);
    free(w.arr);
    free(w.match);
    free(w.buf);
    return rc;
}
