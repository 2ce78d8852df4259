/*
 * Schedule checker: symbolic execution of all P schedules (see check.h).
 *
 * Data is tracked in granules: g = gcd of the block size and of every
 * offset and length used by any operation, so a granule is never split.
 * Every granule holds a token (origin rank << 32 | granule index in the
 * origin's block) or GARBAGE; a transfer copies tokens. Sends complete only
 * when matched (rendezvous semantics, the strictest MPI allows), so a
 * schedule that passes cannot deadlock under any MPI buffering.
 */
#include "sched/check.h"
#include "kport.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define GARBAGE UINT64_MAX

enum { PH_SEND = 0, PH_RECV = 1, PH_SCRATCH = 2 };

typedef struct {
    int op;   /* index in the owner's schedule */
    int peer;
} pend;

typedef struct {
    pend *v;
    int n, cap;
} pendq;

typedef struct {
    uint64_t *buf[3];
    int64_t ngran[3];   /* physical sizes in granules */
    int cur;            /* first op of the current round */
    int end;            /* one past its last op */
    int posted;
    int finished;
    unsigned char *done; /* per op: completed */
    pendq sends_to_me;   /* sends posted to this rank, not yet matched */
    pendq recvs;         /* receives posted by this rank, not yet matched */
    uint64_t *know;      /* ranks this rank has (transitively) heard from */
    uint64_t *heard;     /* what this round's receives brought, merged at round end */
} rstate;

typedef struct {
    kp_sched *sc;
    rstate *rs;
    int P;
    int64_t bytes, g;
    int inplace;
    kp_check_result *res;
    int coll, root;
    int words;       /* 64-bit words of a knowledge bitset */
} ctx;

static int fail(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ctx *c, const char *fmt, ...)
{
    if (!c->res->ok)
        return 1;
    c->res->ok = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->res->msg, sizeof(c->res->msg), fmt, ap);
    va_end(ap);
    return 1;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static const char *bname(int b)
{
    return b == KP_BUF_SEND ? "send" : b == KP_BUF_RECV ? "recv" : b == KP_BUF_SCRATCH ? "scratch" : "?";
}

static const char *kname(int k)
{
    return k == KP_OP_SEND ? "send" : k == KP_OP_RECV ? "recv" : "copy";
}

/* logical buffer size in bytes */
static int64_t bufsize(ctx *c, int rank, int buf)
{
    return kp_sched_bufsize(&c->sc[rank], buf);
}

/* does this rank's send buffer alias its receive buffer? */
static int aliased(ctx *c, int rank)
{
    if (!c->inplace)
        return 0;
    return c->coll != KP_COLL_GATHER || rank == c->root;
}

/* physical location of a region: buffer and granule range */
typedef struct { int ph; int64_t lo, n; } phys;

static phys resolve(ctx *c, int rank, const kp_region *r)
{
    phys p = {r->buf, r->off / c->g, r->len / c->g};
    if (r->buf == KP_BUF_SEND && aliased(c, rank)) {
        p.ph = PH_RECV;
        p.lo += kp_sched_inplace_offset(&c->sc[rank]) / c->g;
    }
    return p;
}

static int check_region(ctx *c, int rank, int opi, const kp_region *r)
{
    int64_t sz = bufsize(c, rank, r->buf);
    if (sz < 0)
        return fail(c, "rank %d op %d: unknown buffer id %d", rank, opi, r->buf);
    if (r->off < 0 || r->len < 0 || r->off + r->len > sz || (r->len == 0 && r->buf != KP_BUF_SCRATCH))
        return fail(c, "rank %d op %d: region %s[%" PRId64 "..+%" PRId64 "] outside the buffer (%" PRId64 " bytes)",
                    rank, opi, bname(r->buf), r->off, r->len, sz);
    return 0;
}

static void pushq(pendq *q, int op, int peer)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 8;
        q->v = realloc(q->v, (size_t)q->cap * sizeof(*q->v));
        if (!q->v)
            abort();
    }
    q->v[q->n].op = op;
    q->v[q->n].peer = peer;
    q->n++;
}

/* remove and return the first entry whose peer is `peer`, or -1 */
static int popq(pendq *q, int peer)
{
    for (int i = 0; i < q->n; i++) {
        if (q->v[i].peer == peer) {
            int op = q->v[i].op;
            memmove(&q->v[i], &q->v[i + 1], (size_t)(q->n - i - 1) * sizeof(*q->v));
            q->n--;
            return op;
        }
    }
    return -1;
}

/* deliver send op `so` of rank s into receive op `ro` of rank d */
static int deliver(ctx *c, int s, int so, int d, int ro)
{
    const kp_op *sop = &c->sc[s].ops[so], *rop = &c->sc[d].ops[ro];
    if (sop->u.send.src.len != rop->u.recv.dst.len)
        return fail(c, "size mismatch: rank %d op %d (round %d) sends %" PRId64 " bytes to rank %d, "
                    "matched with rank %d op %d (round %d) receiving %" PRId64 " bytes",
                    s, so, sop->round, sop->u.send.src.len, d, d, ro, rop->round, rop->u.recv.dst.len);
    phys ps = resolve(c, s, &sop->u.send.src), pd = resolve(c, d, &rop->u.recv.dst);
    memcpy(c->rs[d].buf[pd.ph] + pd.lo, c->rs[s].buf[ps.ph] + ps.lo, (size_t)ps.n * sizeof(uint64_t));
    for (int w = 0; w < c->words; w++) /* the sender's knowledge as of its round start */
        c->rs[d].heard[w] |= c->rs[s].know[w];
    c->rs[s].done[so] = 1;
    c->rs[d].done[ro] = 1;
    return 0;
}

/* hazards inside rank r's round [b, e) */
static int check_round_hazards(ctx *c, int r, int b, int e)
{
    for (int i = b; i < e; i++) {
        const kp_op *a = &c->sc[r].ops[i];
        phys ar[2];
        int aw[2], na = 0;
        if (a->kind == KP_OP_SEND) {
            ar[0] = resolve(c, r, &a->u.send.src); aw[0] = 0; na = 1;
        } else if (a->kind == KP_OP_RECV) {
            ar[0] = resolve(c, r, &a->u.recv.dst); aw[0] = 1; na = 1;
        } else {
            phys s = resolve(c, r, &a->u.copy.src), d = resolve(c, r, &a->u.copy.dst);
            if (s.ph == d.ph && s.lo == d.lo)
                continue; /* copy onto itself (MPI_IN_PLACE): a no-op */
            if (s.ph == d.ph && s.lo < d.lo + d.n && d.lo < s.lo + s.n)
                return fail(c, "rank %d round %d op %d: copy with overlapping source and destination", r,
                            a->round, i);
            ar[0] = s; aw[0] = 0; ar[1] = d; aw[1] = 1; na = 2;
        }
        for (int x = 0; x < na; x++) {
            if (aw[x] && ar[x].ph == PH_SEND)
                return fail(c, "rank %d round %d op %d (%s): writes the user's send buffer", r, a->round, i,
                            kname(a->kind));
        }
        for (int j = i + 1; j < e; j++) {
            const kp_op *o = &c->sc[r].ops[j];
            phys orr[2];
            int ow[2], no = 0;
            if (o->kind == KP_OP_SEND) {
                orr[0] = resolve(c, r, &o->u.send.src); ow[0] = 0; no = 1;
            } else if (o->kind == KP_OP_RECV) {
                orr[0] = resolve(c, r, &o->u.recv.dst); ow[0] = 1; no = 1;
            } else {
                phys s = resolve(c, r, &o->u.copy.src), d = resolve(c, r, &o->u.copy.dst);
                if (s.ph == d.ph && s.lo == d.lo)
                    continue;
                orr[0] = s; ow[0] = 0; orr[1] = d; ow[1] = 1; no = 2;
            }
            for (int x = 0; x < na; x++)
                for (int y = 0; y < no; y++) {
                    if (!aw[x] && !ow[y])
                        continue;
                    if (ar[x].ph == orr[y].ph && ar[x].lo < orr[y].lo + orr[y].n && orr[y].lo < ar[x].lo + ar[x].n)
                        return fail(c, "rank %d round %d: op %d (%s) and op %d (%s) touch the same region "
                                    "and one of them writes it", r, a->round, i, kname(a->kind), j, kname(o->kind));
                }
        }
    }
    return 0;
}

static void round_bounds(ctx *c, int r)
{
    kp_sched *s = &c->sc[r];
    rstate *st = &c->rs[r];
    int e = st->cur;
    while (e < s->nops && s->ops[e].round == s->ops[st->cur].round)
        e++;
    st->end = e;
}

static int post_round(ctx *c, int r)
{
    kp_sched *s = &c->sc[r];
    rstate *st = &c->rs[r];
    round_bounds(c, r);
    if (check_round_hazards(c, r, st->cur, st->end))
        return 1;
    for (int i = st->cur; i < st->end; i++) {
        kp_op *op = &s->ops[i];
        if (op->kind == KP_OP_COPY) {
            phys ps = resolve(c, r, &op->u.copy.src), pd = resolve(c, r, &op->u.copy.dst);
            memmove(st->buf[pd.ph] + pd.lo, st->buf[ps.ph] + ps.lo, (size_t)ps.n * sizeof(uint64_t));
            st->done[i] = 1;
        } else if (op->kind == KP_OP_SEND) {
            int d = op->u.send.peer;
            int ro = popq(&c->rs[d].recvs, r);
            if (ro >= 0) {
                if (deliver(c, r, i, d, ro))
                    return 1;
            } else {
                pushq(&c->rs[d].sends_to_me, i, r);
            }
        } else {
            int src = op->u.recv.peer;
            int so = popq(&st->sends_to_me, src);
            if (so >= 0) {
                if (deliver(c, src, so, r, i))
                    return 1;
            } else {
                pushq(&st->recvs, i, src);
            }
        }
    }
    st->posted = 1;
    return 0;
}

static void report_deadlock(ctx *c)
{
    char buf[sizeof(c->res->msg)];
    int n = snprintf(buf, sizeof(buf), "deadlock: ");
    int shown = 0;
    for (int r = 0; r < c->P && n < (int)sizeof(buf) - 80; r++) {
        rstate *st = &c->rs[r];
        if (st->finished)
            continue;
        for (int i = st->cur; i < st->end && n < (int)sizeof(buf) - 80; i++) {
            if (st->done[i])
                continue;
            const kp_op *op = &c->sc[r].ops[i];
            n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%srank %d round %d op %d %s %s %d (%" PRId64 " B)",
                          shown ? "; " : "", r, op->round, i, kname(op->kind),
                          op->kind == KP_OP_SEND ? "to" : "from",
                          op->kind == KP_OP_SEND ? op->u.send.peer : op->u.recv.peer,
                          op->kind == KP_OP_SEND ? op->u.send.src.len : op->u.recv.dst.len);
            shown++;
        }
    }
    fail(c, "%s", buf);
}

/* token of granule i of the block that `origin` contributes */
static uint64_t token(uint64_t origin, int64_t i)
{
    return (origin << 32) | (uint64_t)i;
}

static const char *collname(int coll)
{
    switch (coll) {
    case KP_COLL_ALLGATHER: return "allgather";
    case KP_COLL_BARRIER: return "barrier";
    case KP_COLL_GATHER: return "gather";
    case KP_COLL_ALLTOALL: return "alltoall";
    default: return "?";
    }
}

/* initial contents: what each rank contributes */
static void fill_initial(ctx *c, int r, int64_t blk)
{
    rstate *st = &c->rs[r];
    uint64_t *send = aliased(c, r) ? st->buf[PH_RECV] + kp_sched_inplace_offset(&c->sc[r]) / c->g : st->buf[PH_SEND];
    if (c->coll == KP_COLL_ALLTOALL) {
        for (int j = 0; j < c->P; j++)
            for (int64_t i = 0; i < blk; i++)
                send[(int64_t)j * blk + i] = token((uint64_t)r * (uint64_t)c->P + (uint64_t)j, i);
    } else if (c->coll != KP_COLL_BARRIER) {
        for (int64_t i = 0; i < blk; i++)
            send[i] = token((uint64_t)r, i);
    }
}

/* final contents: compare with the collective's definition */
static void check_final(ctx *c, int r, int64_t blk)
{
    rstate *st = &c->rs[r];
    if (c->coll == KP_COLL_BARRIER) {
        for (int q = 0; q < c->P; q++)
            if (!(st->know[q / 64] >> (q % 64) & 1)) {
                fail(c, "barrier: rank %d may leave before rank %d has entered (no message path from %d to %d)", r,
                     q, q, r);
                return;
            }
        return;
    }
    if (c->coll == KP_COLL_GATHER && r != c->root)
        return;
    for (int j = 0; j < c->P; j++) {
        const uint64_t *b = st->buf[PH_RECV] + (int64_t)j * blk;
        uint64_t origin = c->coll == KP_COLL_ALLTOALL ? (uint64_t)j * (uint64_t)c->P + (uint64_t)r : (uint64_t)j;
        for (int64_t i = 0; i < blk; i++) {
            if (b[i] == token(origin, i))
                continue;
            if (b[i] == GARBAGE)
                fail(c, "rank %d: block %d byte %" PRId64 " was never written", r, j, i * c->g);
            else if (c->coll == KP_COLL_ALLTOALL)
                fail(c, "rank %d: block %d byte %" PRId64 " holds rank %d's block for rank %d, byte %" PRId64, r, j,
                     i * c->g, (int)((b[i] >> 32) / (uint64_t)c->P), (int)((b[i] >> 32) % (uint64_t)c->P),
                     (int64_t)(b[i] & 0xffffffffu) * c->g);
            else
                fail(c, "rank %d: block %d byte %" PRId64 " holds block %d byte %" PRId64, r, j, i * c->g,
                     (int)(b[i] >> 32), (int64_t)(b[i] & 0xffffffffu) * c->g);
            return;
        }
    }
}

void kp_check_scheds(kp_sched *sc, int P, kp_check_result *res)
{
    memset(res, 0, sizeof(*res));
    res->ok = 1;
    ctx c = {sc, NULL, P, 0, 0, 0, res, 0, 0, 0};
    if (P < 1 || P > (1 << 20)) {
        fail(&c, "invalid P=%d", P);
        return;
    }
    c.bytes = sc[0].bytes;
    c.inplace = sc[0].inplace;
    c.coll = sc[0].coll;
    c.root = sc[0].root;
    c.words = (P + 63) / 64;
    if (c.bytes < 0 || c.root < 0 || c.root >= P) {
        fail(&c, "invalid bytes=%lld or root=%d", (long long)c.bytes, c.root);
        return;
    }

    /* shape, granule size, bounds, peers */
    int64_t g = c.bytes;
    for (int r = 0; r < P; r++) {
        if (sc[r].rank != r || sc[r].P != P || sc[r].bytes != c.bytes || sc[r].coll != c.coll ||
            sc[r].root != c.root || sc[r].inplace != c.inplace) {
            fail(&c, "schedule %d was built for another shape (rank %d of %d, %s)", r, sc[r].rank, sc[r].P,
                 collname(sc[r].coll));
            return;
        }
        if (res->max_rounds < sc[r].nrounds)
            res->max_rounds = sc[r].nrounds;
        if (res->max_ops < sc[r].nops)
            res->max_ops = sc[r].nops;
        if (res->max_scratch < sc[r].scratch_bytes)
            res->max_scratch = sc[r].scratch_bytes;
        for (int i = 0; i < sc[r].nops; i++) {
            const kp_op *op = &sc[r].ops[i];
            const kp_region *rg[2];
            int nr = 0;
            if (i > 0 && op->round < sc[r].ops[i - 1].round) {
                fail(&c, "rank %d op %d: rounds out of order", r, i);
                return;
            }
            if (op->kind == KP_OP_SEND || op->kind == KP_OP_RECV) {
                int peer = op->kind == KP_OP_SEND ? op->u.send.peer : op->u.recv.peer;
                if (peer < 0 || peer >= P) {
                    fail(&c, "rank %d op %d: peer %d out of range 0..%d", r, i, peer, P - 1);
                    return;
                }
                rg[nr++] = op->kind == KP_OP_SEND ? &op->u.send.src : &op->u.recv.dst;
            } else if (op->kind == KP_OP_COPY) {
                rg[nr++] = &op->u.copy.src;
                rg[nr++] = &op->u.copy.dst;
            } else {
                fail(&c, "rank %d op %d: unknown operation kind %d", r, i, op->kind);
                return;
            }
            for (int x = 0; x < nr; x++) {
                if (check_region(&c, r, i, rg[x]))
                    return;
                if (rg[x]->len > 0)
                    g = gcd64(g, gcd64(rg[x]->off, rg[x]->len));
            }
        }
    }
    if (g <= 0)
        g = 1;
    c.g = g;

    rstate *rs = calloc((size_t)P, sizeof(*rs));
    if (!rs) {
        fail(&c, "checker out of memory");
        return;
    }
    c.rs = rs;
    int64_t blk = c.bytes / g;
    for (int r = 0; r < P; r++) {
        rs[r].ngran[PH_SEND] = kp_sched_bufsize(&sc[r], KP_BUF_SEND) / g;
        rs[r].ngran[PH_RECV] = kp_sched_bufsize(&sc[r], KP_BUF_RECV) / g;
        rs[r].ngran[PH_SCRATCH] = (sc[r].scratch_bytes + g - 1) / g;
        for (int b = 0; b < 3; b++) {
            rs[r].buf[b] = malloc((size_t)(rs[r].ngran[b] + 1) * sizeof(uint64_t));
            for (int64_t i = 0; i < rs[r].ngran[b]; i++)
                rs[r].buf[b][i] = GARBAGE;
        }
        rs[r].know = calloc((size_t)c.words, sizeof(uint64_t));
        rs[r].heard = calloc((size_t)c.words, sizeof(uint64_t));
        rs[r].know[r / 64] |= (uint64_t)1 << (r % 64);
        fill_initial(&c, r, blk);
        rs[r].done = calloc((size_t)sc[r].nops + 1, 1);
        rs[r].finished = sc[r].nops == 0;
    }

    int nfinished = 0;
    for (int r = 0; r < P; r++)
        nfinished += rs[r].finished;
    while (res->ok && nfinished < P) {
        int progress = 0;
        for (int r = 0; r < P && res->ok; r++) {
            rstate *st = &rs[r];
            if (st->finished)
                continue;
            if (!st->posted) {
                if (post_round(&c, r))
                    break;
                progress = 1;
            }
            int all = 1;
            for (int i = st->cur; i < st->end && all; i++)
                all = st->done[i];
            if (all) {
                for (int w = 0; w < c.words; w++)
                    st->know[w] |= st->heard[w];
                st->cur = st->end;
                st->posted = 0;
                progress = 1;
                if (st->cur >= sc[r].nops) {
                    st->finished = 1;
                    nfinished++;
                }
            }
        }
        if (res->ok && !progress)
            report_deadlock(&c);
    }

    for (int r = 0; r < P && res->ok; r++)
        check_final(&c, r, blk);

    for (int r = 0; r < P; r++) {
        for (int b = 0; b < 3; b++)
            free(rs[r].buf[b]);
        free(rs[r].done);
        free(rs[r].know);
        free(rs[r].heard);
        free(rs[r].sends_to_me.v);
        free(rs[r].recvs.v);
    }
    free(rs);
}

void kp_check_allgather_scheds(kp_sched *sc, int P, int64_t bytes, int inplace, kp_check_result *res)
{
    for (int r = 0; r < P; r++) {
        sc[r].inplace = inplace;
        if (sc[r].bytes != bytes) {
            memset(res, 0, sizeof(*res));
            snprintf(res->msg, sizeof(res->msg), "schedule %d was built for %lld bytes, not %lld", r,
                     (long long)sc[r].bytes, (long long)bytes);
            return;
        }
    }
    kp_check_scheds(sc, P, res);
}

void kp_check_algo(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int root, int inplace,
                   kp_check_result *res)
{
    memset(res, 0, sizeof(*res));
    kp_sched *sc = P >= 1 && P <= (1 << 20) ? calloc((size_t)P, sizeof(*sc)) : NULL;
    if (!sc) {
        snprintf(res->msg, sizeof(res->msg), "invalid P=%d (or out of memory)", P);
        return;
    }
    int built = 0, rc = KP_SUCCESS;
    for (; built < P; built++) {
        rc = kp_algo_build_ex(a, prm, built, P, bytes, root, inplace, &sc[built]);
        if (rc != KP_SUCCESS) {
            built++;
            break;
        }
    }
    if (rc == KP_SUCCESS) {
        kp_check_scheds(sc, P, res);
    } else if (built - 1 == 0) {
        res->refused = 1;
        res->refuse_code = rc;
        snprintf(res->msg, sizeof(res->msg), "%s", sc[0].errmsg);
    } else {
        /* a refusal must not depend on the rank: the ranks that built would hang */
        snprintf(res->msg, sizeof(res->msg), "rank-dependent refusal: rank %d refused (%s) after rank 0 built",
                 built - 1, sc[built - 1].errmsg);
    }
    for (int r = 0; r < built; r++)
        kp_sched_free(&sc[r]);
    free(sc);
}

void kp_check_allgather(const kp_algo *a, const kp_params *prm, int P, int64_t bytes, int inplace,
                        kp_check_result *res)
{
    kp_check_algo(a, prm, P, bytes, 0, inplace, res);
}
