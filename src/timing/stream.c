/*
 * The timing engine's operation streams (engine.h): each rank's schedule
 * converted to 8-byte operations, appended rank by rank (kport-sim builds
 * and frees one schedule at a time; the cost model hands over its P
 * schedules), the post table, the pairing of exchanges, the engine's
 * memory accounting, and the engine's entry points (kp_eng_run,
 * kp_timing_scheds).
 */
#include "timing/engine.h"

#include "kport.h"

#include <time.h>

const char *const kp_sim_cat_name[KP_SIM_NCAT] = {"overhead", "wire", "bytes", "gap", "copy", "wait", "call", "compute"};

const char *kp_timing_rules_name(kp_timing_rules r)
{
    return r == KP_RULES_EXECUTOR ? "executor" : "loggopsim";
}

int kp_timing_rules_parse(const char *s, kp_timing_rules *r)
{
    if (!strcmp(s, "executor"))
        *r = KP_RULES_EXECUTOR;
    else if (!strcmp(s, "loggopsim"))
        *r = KP_RULES_LOGGOPSIM;
    else
        return -1;
    return 0;
}

double kp_timing_entry(const kp_machine *m, int P, int r)
{
    return kp_rule_entry(m, P, r);
}

void kp_sim_machine_loggp(kp_machine *m, double L, double o, double g, double G, double O, int64_t S)
{
    kp_params_init(m);
    for (int i = 0; i < 2; i++) {
        kp_channel *ch = i ? &m->inter : &m->intra;
        ch->piece[0] = (kp_loggp){-1, L, o, o, g, G, O, 0, 0, 0, 0, 0, 0};
        ch->eager_max = S < 0 ? -1 : S;
    }
    const kp_linear byte = {.fixed = 0.0, .per_byte = 1.0};
    m->copy_in = m->copy_out = m->memcpy_ = m->peer_read = m->peer_write = m->reduce = byte;
    m->reduce_given = 1;
}

void kp_sim_result_free(kp_sim_result *r)
{
    free(r->rank_ns);
    free(r->chain);
    r->rank_ns = NULL;
    r->chain = NULL;
}

/* ---- memory ------------------------------------------------------------ */

int kp_eng_grow(sim *s, void **p, size_t *cap, size_t need, size_t elem)
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

void *kp_eng_alloc0(sim *s, size_t n, size_t elem)
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

int kp_eng_nomem(sim *s)
{
    snprintf(s->r->msg, sizeof s->r->msg, "out of memory (%.1f GiB allocated, %.1f GiB available)",
             (double)s->mem / (1 << 30), (double)s->limit / (1 << 30));
    return s->err = KP_ERR_NOMEM;
}

double kp_eng_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
    uint32_t k = 0, last = 0;
    for (size_t i = 0, j = 0; i < ns && j < nr;) {
        if (S[i].peer != R[j].peer) {
            if (S[i].peer < R[j].peer)
                i++;
            else
                j++;
            k = 0;
            continue;
        }
        if (k && S[i].peer != last) /* the next peer's first pair */
            k = 0;
        last = S[i].peer;
        pair(arg, S[i++].op, R[j++].op, k++);
    }
}

/* ---- encoding ------------------------------------------------------------ */

static int encode(sim *s, const kp_sched *sc, uint32_t r, const kp_op *op, sop *out)
{
    uint32_t kind = 0, peer = 0, cls = 0;
    int64_t val = 0;
    switch (op->kind) {
    case KP_OP_SEND: kind = S_SEND; peer = (uint32_t)op->u.send.peer; val = op->u.send.src.len; break;
    case KP_OP_RECV: kind = S_RECV; peer = (uint32_t)op->u.recv.peer; val = op->u.recv.dst.len; break;
    case KP_OP_COPY: {
        const kp_region a = op->u.copy.src;
        if (kp_sched_copy_is_noop(sc, op))
            return 0; /* the executor skips it */
        kind = S_COPY;
        cls = kp_rule_copy_class(op);
        val = a.len;
        break;
    }
    case KP_OP_REDUCE:
        kind = S_REDUCE;
        cls = kp_rule_reduce_class(op);
        val = op->u.reduce.dst.len;
        break;
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
        if (kp_eng_grow(s, (void **)&s->big, &s->capbig, s->nbig + 1, sizeof(int64_t)))
            return -kp_eng_nomem(s);
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


/* ---- streams ------------------------------------------------------------- */

static int pair_exchanges(sim *s);

int kp_eng_begin(sim *s)
{
    s->base = kp_eng_alloc0(s, (size_t)s->P + 1, sizeof(uint64_t));
    return s->base ? 0 : kp_eng_nomem(s);
}

int kp_eng_add(sim *s, const kp_sched *sc, int rank)
{
    kp_sim_result *r = s->r;
    s->base[rank] = s->nops;
    if (kp_eng_grow(s, (void **)&s->ops, &s->capops, s->nops + (size_t)sc->nops, sizeof(sop)))
        return kp_eng_nomem(s);
    int last_round = -1;
    int64_t last_kept = -1;
    for (int i = 0; i < sc->nops; i++) {
        const kp_op *op = &sc->ops[i];
        sop o;
        int k = encode(s, sc, (uint32_t)rank, op, &o);
        if (k < 0)
            return s->err;
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
            r->rendezvous += kp_rule_rendezvous(chan(s, (uint32_t)rank, o.peer), op->u.send.src.len);
            break;
        case KP_OP_COPY: case KP_OP_PEER_READ: case KP_OP_PEER_WRITE:
            r->copies++;
            r->copy_bytes += op_len(s, o);
            break;
        case KP_OP_REDUCE:
            r->reduces++;
            r->reduce_bytes += op_len(s, o);
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
    if (sc->nposts > 0 && !s->pbase) {
        s->pbase = kp_eng_alloc0(s, (size_t)s->P + 1, sizeof(uint32_t));
        if (!s->pbase)
            return kp_eng_nomem(s);
        for (int q = 0; q <= rank; q++)
            s->pbase[q] = (uint32_t)s->nposts;
    }
    s->nposts += (uint64_t)(sc->nposts > 0 ? sc->nposts : 0);
    if (s->pbase)
        s->pbase[rank + 1] = (uint32_t)s->nposts;
    return 0;
}

int kp_eng_end(sim *s)
{
    s->base[s->P] = s->nops;
    if (s->nposts > UINT32_MAX) {
        snprintf(s->r->msg, sizeof s->r->msg, "too many posts");
        return s->err = KP_ERR_NOMEM;
    }
    if (s->pbase) {
        s->post = kp_eng_alloc0(s, (size_t)s->nposts, sizeof(clk));
        s->whead = kp_eng_alloc0(s, (size_t)s->P, sizeof(uint32_t));
        if (!s->post || !s->whead)
            return kp_eng_nomem(s);
        for (uint64_t i = 0; i < s->nposts; i++)
            s->post[i].t = -1;
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
    return pair_exchanges(s);
}

void kp_eng_free(sim *s)
{
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
    for (int b = 0; b < 65; b++)
        free(s->bk[b].e);
    memset(s, 0, sizeof *s);
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
 * of the same round (kp_pair_exchanges' rule; both rule sets read it). Only
 * when the machine has a measured exchange; 0, or an error code. */
static int pair_exchanges(sim *s)
{
    if (!kp_params_has_exchange(s->m))
        return 0;
    s->xpair = kp_eng_alloc0(s, s->nops + 1, sizeof(uint32_t));
    if (!s->xpair)
        return kp_eng_nomem(s);
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
                if (ns + nr > cap && kp_eng_grow(s, (void **)&buf, &cap, ns + nr, sizeof(kp_xop))) {
                    rc = kp_eng_nomem(s);
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


/* ---- running ----------------------------------------------------------------- */

int kp_eng_run(sim *s, kp_timing_rules rules, int hockney, double t0)
{
    kp_sim_result *r = s->r;
    if (!r->rank_ns) {
        r->rank_ns = malloc((size_t)s->P * sizeof(double));
        if (!r->rank_ns)
            return kp_eng_nomem(s);
    }
    if (s->post) { /* no post seen yet (a run before this one set them) */
        memset(s->post, 0, (size_t)s->nposts * sizeof(clk));
        for (uint64_t i = 0; i < s->nposts; i++)
            s->post[i].t = -1;
    }
    if (rules == KP_RULES_EXECUTOR || hockney) {
        r->nchain = -1;
        return kp_eng_walk(s, hockney);
    }
    return kp_eng_des(s, t0);
}

/* the node of rank r of explicit schedules: sc[r].layout's, else its own */
static int sched_node(const kp_sched *sc, int r)
{
    const kp_layout *L = sc[r].layout;
    return L && r < L->P ? L->node_of[r] : -1 - r;
}

int kp_timing_scheds(const kp_machine *m, const kp_sched *sc, int P, kp_timing_rules rules, double *hockney_ns,
                     kp_sim_result *r)
{
    memset(r, 0, sizeof *r);
    if (P < 1 || !sc)
        return snprintf(r->msg, sizeof r->msg, "invalid P=%d", P), KP_ERR_PARAM;
    if (kp_params_check(m, r->msg, sizeof r->msg))
        return KP_ERR_PARAM;
    sim S = {0};
    sim *s = &S;
    s->m = m;
    s->r = r;
    s->P = P;
    s->ports = 1;
    s->nsize = 1;
    /* node ids 0 .. nnodes-1: the layout's where the schedules have one,
     * a node of its own for every other rank */
    int *nodes = malloc((size_t)P * sizeof(int));
    int rc = KP_SUCCESS;
    if (!nodes) {
        rc = kp_eng_nomem(s);
        goto out;
    }
    int maxid = -1;
    for (int q = 0; q < P; q++) {
        nodes[q] = sched_node(sc, q);
        if (nodes[q] > maxid)
            maxid = nodes[q];
    }
    for (int q = 0; q < P; q++)
        if (nodes[q] < 0)
            nodes[q] = ++maxid;
    s->node_of = nodes;
    s->nnodes = maxid + 1;
    if ((rc = kp_eng_begin(s)))
        goto out;
    for (int q = 0; q < P; q++)
        if ((rc = kp_eng_add(s, &sc[q], q)))
            goto out;
    if ((rc = kp_eng_end(s)))
        goto out;
    if (hockney_ns) { /* Hockney first, on the same streams */
        if ((rc = kp_eng_run(s, KP_RULES_EXECUTOR, 1, 0.0)))
            goto out;
        *hockney_ns = r->max_ns;
    }
    rc = kp_eng_run(s, rules, 0, kp_eng_now());
out:
    r->mem_bytes = s->peak;
    kp_eng_free(s);
    free(nodes);
    if (rc != KP_SUCCESS)
        kp_sim_result_free(r);
    return rc;
}
