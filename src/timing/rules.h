/*
 * The per-operation rules of the timing engine: every formula that prices
 * an operation, once, with the two rule sets (kp_timing_rules) side by side
 * where they differ. des.c (LogGOPSim's order) and walk.c (kport's executor
 * order) call these and nothing else to charge time; the order in which
 * they apply them is the rule sets' other difference (timing.h).
 *
 * A message of s bytes on a channel's piece p (L, o_s, o_r, g, G, O, and a
 * measured exchange X + XG*s, X2 + X2G*s: docs/PARAMETERS.md); s1 = s - 1
 * bytes beyond the first (kp_rule_s1).
 *
 *                     executor (the cost model)        loggopsim (kport-sim)
 *   send's CPU        o_s + O*s                        o_s + s1*O
 *   NIC after one     t + max(g, s1*G)                 t + g + s1*G          (send and receive gaps)
 *   message reaches   departure + L + s1*G (departure  start + o_s + L (first byte; G is paid
 *   the receiver      = start + o_s + O*s, eager)      at the receiver)
 *   taking it in      CPU o_r                          CPU o_r + max(s1*O, s1*G)
 *   rendezvous        departs at max(ready, posted -   departs as eager; completes when the
 *                     L_0); completes on arrival       receiver matches it (holds CPU and port)
 *   exchange: rest    X + XG*s - (the paired send's CPU time above), at least 0, after the CPU clock
 *   exchange: its     X + XG*s after the later of the  X + XG*s after its send's start
 *   message in by     pair's two sends' starts
 *   paired send CPU   at most X + XG*s' (X2 + X2G*s' for a further pair; loggopsim: at least 0)
 *   0-byte messages   s1 = 0                           s1 = 0 (-1 with --loggopsim-zero-bytes)
 *
 * Alike in both: the channel (p2p.intra between ranks of one node, else
 * p2p.inter) and its piece for s bytes; eager up to the channel's
 * eager_max; copies by class (kp_rule_copy_class) and their costs, peer
 * reads and writes, combines (kp_rule_reduce_class: compute.reduce plus
 * a shared operand's premium; kp_rule_local_cost), each on the rank's
 * CPU like a copy; a wait completes at post +
 * flag.fixed; the pairing of exchanges (kp_pair_exchanges); each rank's
 * entry (kp_rule_entry) and call.fixed.
 */
#ifndef KP_TIMING_RULES_H
#define KP_TIMING_RULES_H

#include "params/params.h"
#include "sched/sched.h"

#include "timing/timing.h"

/* when rank r of P enters the call: the odd ranks call.skew after the even
 * ones (P > 1; the ranks leave a benchmark's barrier that far apart) */
static inline double kp_rule_entry(const kp_machine *m, int P, int r)
{
    return P > 1 && (r & 1) ? m->call.skew : 0.0;
}

/* a message of s bytes goes rendezvous on channel ch */
static inline int kp_rule_rendezvous(const kp_channel *ch, int64_t s)
{
    const int64_t e = kp_channel_eager_max(ch);
    return e >= 0 && s > e;
}

/* The class of a copy (not an MPI_IN_PLACE no-op): 3 copy_out +
 * data_line (out of the node's segment, or flag-line bytes past the flag's
 * cache line: lines of their own, one more transfer than the flag's line
 * brings), 2 copy_out (out of the flag lines: written by another core),
 * 1 copy_in (into the segment or the flag lines), 0 memcpy. */
static inline unsigned kp_rule_copy_class(const kp_op *op)
{
    const kp_region a = op->u.copy.src, b = op->u.copy.dst;
    return a.buf == KP_BUF_SHM || kp_line_spills(&a)              ? 3u
           : a.buf == KP_BUF_LINE                                 ? 2u
           : (b.buf == KP_BUF_SHM || b.buf == KP_BUF_LINE)        ? 1u
                                                                   : 0u;
}

/* The class of a combine (KP_OP_REDUCE), by the copy classes of the data
 * it moves: 3 an operand in the segment (or flag-line bytes past the
 * flag's cache line), 2 an operand in the flag lines, 1 the result into
 * the segment or the flag lines, 0 private buffers only. */
static inline unsigned kp_rule_reduce_class(const kp_op *op)
{
    const kp_region a = op->u.reduce.a, b = op->u.reduce.b, d = op->u.reduce.dst;
    return a.buf == KP_BUF_SHM || b.buf == KP_BUF_SHM || kp_line_spills(&a) || kp_line_spills(&b) ? 3u
           : a.buf == KP_BUF_LINE || b.buf == KP_BUF_LINE                                        ? 2u
           : d.buf == KP_BUF_SHM || d.buf == KP_BUF_LINE                                         ? 1u
                                                                                                 : 0u;
}

static inline double kp_rule_copy_cost(const kp_machine *m, unsigned cls, int64_t n)
{
    if (cls == 3)
        return kp_linear_cost(&m->copy_out, n) + m->data_line;
    return kp_linear_cost(cls == 2 ? &m->copy_out : cls == 1 ? &m->copy_in : &m->memcpy_, n);
}

/* The CPU time of a local operation of n bytes: a copy of class cls, a
 * peer read or a peer write (kind: KP_OP_COPY, _PEER_READ, _PEER_WRITE), or
 * a combine (KP_OP_REDUCE) of class cls: compute.reduce (n * gamma, the
 * combine of private data in cache) plus what a copy of the same class
 * costs beyond a private memcpy of n bytes (at least 0): reading a peer's
 * segment lines or writing shared ones costs a combine what it costs a
 * copy. Under kp_sim_machine_loggp every copy costs 1 ns/byte, so a
 * combine costs exactly n * gamma (the GOAL export's calc). */
static inline double kp_rule_local_cost(const kp_machine *m, int kind, unsigned cls, int64_t n)
{
    switch (kind) {
    case KP_OP_COPY: return kp_rule_copy_cost(m, cls, n);
    case KP_OP_PEER_READ: return kp_linear_cost(&m->peer_read, n);
    case KP_OP_PEER_WRITE: return kp_linear_cost(&m->peer_write, n);
    case KP_OP_REDUCE: {
        const double extra = cls ? kp_rule_copy_cost(m, cls, n) - kp_linear_cost(&m->memcpy_, n) : 0.0;
        return kp_linear_cost(&m->reduce, n) + (extra > 0 ? extra : 0.0);
    }
    default: return 0.0;
    }
}

/* s - 1, the bytes beyond the first; 0 for s <= 1, but -1 for s = 0 under
 * LogGOPSim's rules with zero_wrap (its unsigned s - 1 wraps) */
static inline double kp_rule_s1(kp_timing_rules rules, int64_t s, int zero_wrap)
{
    return s > 1 ? (double)(s - 1) : s == 0 && zero_wrap && rules == KP_RULES_LOGGOPSIM ? -1.0 : 0.0;
}

/* the CPU time of a send (its overhead and per-byte cost) */
static inline double kp_rule_send_cpu(kp_timing_rules rules, const kp_loggp *p, int64_t s, double s1)
{
    return rules == KP_RULES_EXECUTOR ? p->o_s + p->O * (double)s : p->o_s + s1 * p->O;
}

/* a send paired with a receive of its round holds the CPU at most the
 * measured exchange it is part of (cap: X + XG*s', X2 + X2G*s' for a
 * further one, s' the receive's size): MPI overlaps the send's completion
 * with the exchange */
static inline double kp_rule_send_cap(kp_timing_rules rules, double own, double cap)
{
    if (rules == KP_RULES_EXECUTOR)
        return own > cap ? cap : own;
    return own < cap ? own : cap > 0 ? cap : 0;
}

/* when a NIC (a send or receive gap clock, a port, a rail) is free again
 * after a message of s1 + 1 bytes that it began at t */
static inline double kp_rule_nic_free(kp_timing_rules rules, const kp_loggp *p, double t, double s1)
{
    if (rules == KP_RULES_EXECUTOR) {
        const double gap = s1 * p->G;
        return t + (p->g > gap ? p->g : gap);
    }
    return t + p->g + s1 * p->G;
}

/* a message's first byte at the receiver, its send started at t */
static inline double kp_rule_first_byte(const kp_loggp *p, double t)
{
    return t + p->o_s + p->L;
}

/* When the message reaches the receiver. Executor: its arrival, `from` its
 * departure (eager: the send's start + kp_rule_send_cpu; rendezvous:
 * kp_rule_rdv_departure), L and the per-byte gap on the wire. LogGOPSim:
 * its first byte, `from` the send's start (G is paid when the receiver
 * takes it in). */
static inline double kp_rule_arrival(kp_timing_rules rules, const kp_loggp *p, double from, double s1)
{
    if (rules == KP_RULES_EXECUTOR)
        return from + p->L + s1 * p->G;
    return kp_rule_first_byte(p, from);
}

/* Executor: a rendezvous message departs once the receive is posted (at
 * `posted`); the piece's L, fitted from ping-pongs whose receives were
 * posted early, holds the handshake, so only a receive posted later than
 * the request's arrival (L_0 after ready) delays it. (LogGOPSim's rules:
 * it departs as an eager one and completes when matched.) */
static inline double kp_rule_rdv_departure(const kp_channel *ch, double ready, double posted)
{
    const double d = posted - ch->piece[0].L;
    return d > ready ? d : ready;
}

/* the receiver's CPU time beyond o_r to take a message in: none under the
 * executor's rules (G is paid on the wire), max(s1*O, s1*G) under
 * LogGOPSim's (with zero_wrap's s1 = -1: minus the smaller non-zero of O, G,
 * LogGOPSim's unsigned max) */
static inline double kp_rule_take_bytes(kp_timing_rules rules, const kp_loggp *p, double s1)
{
    if (rules == KP_RULES_EXECUTOR)
        return 0.0;
    if (s1 < 0)
        return p->O > 0 && p->G > 0 ? -(p->O < p->G ? p->O : p->G) : -(p->O + p->G);
    return s1 * p->O > s1 * p->G ? s1 * p->O : s1 * p->G;
}

/* An exchange's receive: the CPU's time after the paired send's own CPU
 * time (own, kp_rule_send_cpu of the send), already on its clock: the
 * measured exchange of s bytes (a further one with the peer: X2 + X2G*s)
 * less own, at least 0. */
static inline double kp_rule_exchange_rest(const kp_loggp *p, int further, int64_t s, double own)
{
    const double rest = kp_exchange_ns(p, further, s) - own;
    return rest > 0 ? rest : 0.0;
}

/* The exchange bounds its message: taken in by X + XG*s after `from`
 * (executor: the later of the pair's two sends' starts t0, t1; LogGOPSim:
 * its own send's start t0, the CPU term already holding the receiver's own
 * start plus the exchange). */
static inline double kp_rule_exchange_by(kp_timing_rules rules, const kp_loggp *p, int64_t s, double t0, double t1)
{
    if (rules == KP_RULES_EXECUTOR)
        return (t0 > t1 ? t0 : t1) + kp_exchange_ns(p, 0, s);
    return t0 + kp_exchange_ns(p, 0, s);
}

#endif /* KP_TIMING_RULES_H */
