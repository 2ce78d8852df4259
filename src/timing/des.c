/*
 * The timing engine under LogGOPSim's rules (KP_RULES_LOGGOPSIM, kport-sim's
 * default): a discrete-event simulation of the operation streams, LogGOPSim's
 * event order (Hoefler, Schneider, Lumsdaine, HPDC'10, and its source's
 * rules). docs/SIMULATOR.md is the user's account; rules.h holds every
 * formula that charges time, this file the order in which they apply.
 *
 * Events. Each rank has a CPU clock (cpu: when its CPU is next free), per
 * port a send gap clock (gs) and a receive gap clock (gr).
 *  - a send may start at t = max(cpu, gs) (the free port whose gs is
 *    earliest, the lowest port on ties); the CPU is busy kp_rule_send_cpu,
 *    the port until kp_rule_nic_free, and the message's first byte reaches
 *    the receiver at kp_rule_arrival. Eager: the send is complete at t.
 *    Rendezvous: it completes when the receiver matches the message, which
 *    raises the sender's cpu and port clock to that time.
 *  - a message that arrived at a is taken in at h = max(a, cpu, gr) of the
 *    receiver: cpu = h + o_r + kp_rule_take_bytes, gr = kp_rule_nic_free
 *    from h, and it is matched against the posted receives (first posted
 *    receive from that sender); unmatched, it waits in the unexpected queue.
 *  - a receive is posted at no cost; it matches the first unexpected
 *    message from its peer (then it is complete at once) or waits.
 *  - exchanges (only when the message's piece has a measured exchange,
 *    has_x: X + XG*s, docs/PARAMETERS.md; never with -L -o -g -G -O -S
 *    alone): the k-th receive from q of a round pairs with the k-th send to
 *    q of the same round (xpair, stream.c). When a message taken in matches
 *    a paired posted receive whose send has started (M_SENT), it is taken
 *    in as an exchange (take_exchange): with hm = max(a, gr) (and the
 *    rail's clock: the message's side, not the CPU) and rest =
 *    kp_rule_exchange_rest (the measured exchange less the paired send's
 *    own CPU time, which is already on the clock),
 *        cpu = max(hm + o_r + max(s1*O, s1*G), cpu + rest), gr = kp_rule_nic_free(hm),
 *    where cpu is the CPU clock when the message is taken in: the event
 *    still waits for the CPU, so the paired send, the round's other sends,
 *    its copies and earlier receives all count before rest. Two idle ranks
 *    exchanging s bytes finish at X + XG*s; a late message still bounds it,
 *    though the exchange bounds its message's hm + o_r + by too
 *    (kp_rule_exchange_by: t_s + X + XG*s, t_s its send's start), not
 *    before it is taken in (t); a further pair keeps the one-way bound.
 *    A further exchange with the same peer in the round (the k-th pair,
 *    k >= 2; XP_FURTHER) takes X2 + X2G*s for X + XG*s where the piece has
 *    them (has_x2: what a second message each way at once adds).
 *    A paired send (eager or rendezvous) holds the CPU at most that measured
 *    exchange (kp_rule_send_cap); its message still leaves after o_s. A
 *    further eager one (has_x2) does not wait for its send port's gap
 *    (further_free; its port is busy g + (s-1)G after the previous
 *    message's): X2 + X2G*s, a second message each way sent at once, holds
 *    that gap. A message for a paired receive is taken in only once every
 *    send of the round has started (unsent_ready), as the executor posts
 *    them all before MPI_Waitall. Two idle ranks sending each other two
 *    messages of s bytes then finish at X + X2 + (XG+X2G)*s, as measured,
 *    also where o_s + (s-1)O exceeds X2 + X2G*s (Open MPI's 512 B-2 KiB) or
 *    the gap exceeds o_s (MPICH's 8 KiB).
 *    A message that arrives before its receive is posted (the receiver is
 *    late: call.skew, a copy round before the exchange) is parked, not taken
 *    in, when the receive it will meet - the u+1-th unposted receive from
 *    its sender in the current or the next round, u its unexpected
 *    messages queued before (will_pair) - is paired; it is taken in (the
 *    same event, re-queued) when that receive is posted. An unpaired
 *    receive follows the ordinary rule above. Where the executor's rules
 *    differ (walk.c, rules.h): they complete a round's receives after all
 *    its sends and local work, where here a copy runs while a send waits
 *    for its gap, and an unpaired message is taken in between two sends
 *    when the CPU is free (LogGOPSim's order); their message bound is
 *    a + o_r with a = departure + L + (s-1)G (here o_s + L, G at the
 *    receiver); their send's CPU time o_s + O*s (here o_s + (s-1)O); they
 *    pair receives in any round, where a parked message is looked for in
 *    two rounds only.
 *  - a copy (and a peer read / write) runs on the CPU when it is free.
 *  - rounds: the next round starts with a zero-cost join that runs when the
 *    CPU is free after the round's last operation completed (LogGOPSim's
 *    "calc 0" vertex of the GOAL export); its operations are then issued in
 *    the order posts, sends, receives, local operations (LogGOPSim sorts
 *    ready operations by type), each in schedule order.
 *  - shared memory (the executor's rules, which LogGOPSim lacks): a post is
 *    a store at the time the CPU reaches it; a wait for post n of rank q
 *    completes at max(when it is issued, post time + flag.fixed) without
 *    holding the CPU, and the CPU clock moves up to that time.
 *  - a rank's completion time is its CPU clock when everything is done,
 *    less its entry: every rank's CPU starts at entry + call.fixed
 *    (kp_rule_entry). The critical path's "call" holds call.fixed and the
 *    skew on the path, less the slowest rank's entry.
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
#include "timing/engine.h"
#include "timing/queue.h"

#include "kport.h"

#include <math.h>

#define LG KP_RULES_LOGGOPSIM

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
    if (s->nlog == s->caplog && kp_eng_grow(s, (void **)&s->log, &s->caplog, s->nlog + 1, sizeof(hop))) {
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

/* ---- pools ------------------------------------------------------------- */

static uint32_t rec_new(sim *s)
{
    if (s->recfree) {
        uint32_t i = s->recfree;
        s->recfree = s->recs[i - 1].next;
        return i;
    }
    if (kp_eng_grow(s, (void **)&s->recs, &s->caprecs, s->nrecs + 1, sizeof(rec))) {
        kp_eng_nomem(s);
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
    if (kp_eng_grow(s, (void **)&s->prqs, &s->capprq, s->nprq + 1, sizeof(prq))) {
        kp_eng_nomem(s);
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
    if (kp_rule_rendezvous(chan(s, h, o->peer), op_len(s, *o)))
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
    return kp_rule_send_cap(LG, own, kp_exchange_ns(pr, (xv & XP_FURTHER) != 0, rs));
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
    const double s1 = kp_rule_s1(LG, sz, s->zero_wrap);
    const double t = e.t;
    /* CPU: o + (s-1)O; a send paired with a receive of its round, at
     * most the measured exchange it is part of (send_cap) */
    double own = kp_rule_send_cpu(LG, p, sz, s1);
    if (s->xpair && s->xpair[s->base[h] + e.x])
        own = send_cap(s, h, q, s->xpair[s->base[h] + e.x], own);
    const double oo = own < p->o_s ? own : p->o_s;
    k->cpu.t = t + own;
    vadd(k->cpu.v, v, KP_SIM_OVERHEAD, oo);
    k->cpu.v[KP_SIM_BYTES] += (float)(own - oo);
    /* NIC: g + (s-1)G (after the port's previous message: ff) */
    const double ng = kp_rule_nic_free(LG, p, ff && port->t > t ? port->t : t, s1);
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
    rm->c.t = kp_rule_arrival(LG, p, t, s1);
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
    if (!kp_rule_rendezvous(ch, sz))
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
        if (kp_rule_rendezvous(chan(s, rm->src, h), ss)) {
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
    const double s1s = kp_rule_s1(LG, ss, s->zero_wrap);
    /* a further exchange with the same peer in the round: what it adds, X2 + X2G*s */
    const int further = (xv & XP_FURTHER) && p->has_x2;
    const double xg = (further ? p->X2G : p->XG) * (double)sz;
    /* less the send's own CPU time */
    const double rest = kp_rule_exchange_rest(p, (xv & XP_FURTHER) != 0, sz, kp_rule_send_cpu(LG, ps, ss, s1s));
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
    const double xc = (xv & XP_FURTHER) ? INFINITY : kp_rule_exchange_by(LG, p, sz, rm->c.t - p->o_s - p->L, 0);
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
    port->t = kp_rule_nic_free(LG, p, hm, s1);
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
    const double s1 = kp_rule_s1(LG, sz, s->zero_wrap);
    const double t = e.t;
    const double by = kp_rule_take_bytes(LG, p, s1);
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
        port->t = kp_rule_nic_free(LG, p, t, s1);
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
        if (kp_rule_rendezvous(ch, sz)) {
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
    rm->c.v[KP_SIM_WAIT] += (float)s->m->flag.fixed;
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
                if (wait_done_at(s, wn->rank, wn->op, e.t + s->m->flag.fixed, pc, h, wn->n))
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
            const double tw = pc->t + s->m->flag.fixed;
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
            if (kp_eng_grow(s, (void **)&s->wpool, &s->capw, s->nw + 1, sizeof(wnode)))
                return kp_eng_nomem(s);
            w = (uint32_t)++s->nw;
        }
        s->wpool[w - 1] = (wnode){h, e.x, n, s->whead[o.peer]};
        s->whead[o.peer] = w;
        return 0;
    }
    const double c = locop_cost(s, o);
    const int red = kind == S_REDUCE;
    k->cpu.who = hop_log(s, e.t, h, red ? KP_SIM_HOP_REDUCE : KP_SIM_HOP_COPY,
                         kind == S_COPY || red ? h : o.peer, op_len(s, o), k->cpu.who);
    k->cpu.t = e.t + c;
    k->cpu.v[red ? KP_SIM_COMPUTE : KP_SIM_COPY] += (float)c;
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

/* ---- the run ------------------------------------------------------------- */

static int simulate(sim *s, double t0)
{
    for (int r = 0; r < s->P; r++) {
        srank *k = &s->rk[r];
        const double start = entry(s, (uint32_t)r) + s->m->call.fixed;
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
        if (s->progress && (pops & 0xffff) == 0) {
            double w = kp_eng_now();
            if (w - t0 > 2.0 && w - last >= 1.0) {
                last = w;
                s->progress(s->progress_arg, "simulate", e.t, s->ts, 0, w - t0);
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

int kp_eng_des(sim *s, double t0)
{
    kp_sim_result *r = s->r;
    s->rk = kp_eng_alloc0(s, (size_t)s->P, sizeof(srank));
    s->gs = kp_eng_alloc0(s, (size_t)s->P * (size_t)s->ports, sizeof(clk));
    s->gr = kp_eng_alloc0(s, (size_t)s->P * (size_t)s->ports, sizeof(clk));
    if (s->rails) {
        s->rgs = kp_eng_alloc0(s, (size_t)s->nnodes * (size_t)s->rails, sizeof(clk));
        s->rgr = kp_eng_alloc0(s, (size_t)s->nnodes * (size_t)s->rails, sizeof(clk));
    }
    if (!s->rk || !s->gs || !s->gr || (s->rails && (!s->rgs || !s->rgr)))
        return kp_eng_nomem(s);
    /* the chain is logged when it fits: sends, messages taken in, copies, flags */
    s->log_on = (uint64_t)(2 * r->messages + r->copies + r->waits) <= HOP_LOG_MAX;
    int rc = simulate(s, t0);
    if (rc)
        return rc;
    /* each rank's CPU clock at the end less its entry (odd ranks enter
     * call.skew late), as a benchmark times it */
    r->max_ns = -1;
    for (int i = 0; i < s->P; i++) {
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
    /* rounded (llround's result for this non-negative count, without libm:
     * libkport.a links without -lm) */
    r->cp_messages = (int64_t)((double)w->cpu.v[KP_SIM_NCAT] + 0.5);
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
    return 0;
}
