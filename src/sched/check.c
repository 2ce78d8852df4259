/*
 * Schedule checker: symbolic execution of all P schedules (see check.h).
 *
 * Data is tracked in granules: g = gcd of the block size and of every
 * offset and length used by any operation (and of the shared-segment size),
 * so a granule is never split. Every granule holds a token
 * (call << 56 | origin << 32 | granule index in the origin's block) or
 * GARBAGE; transfers and copies move tokens. Sends complete only when
 * matched (rendezvous semantics, the strictest MPI allows), so a schedule
 * that passes cannot deadlock under any MPI buffering.
 *
 * Ordering: every rank has a vector clock. A rank's clock component counts
 * its rounds; a message carries the sender's clock as of the round that
 * sends it, a post publishes the poster's clock, a wait joins the clock of
 * the post it waited for (joins take effect when the round completes).
 * Memory that more than one rank can touch (a node's shared segment; send
 * and receive buffers when some rank reads a peer's buffer directly) is
 * race-checked: every pair of accesses of different ranks, at least one a
 * write, must be ordered by these clocks. The user's own accesses are
 * modelled as writes to its send and receive buffers just before it enters
 * and just after it leaves each call. Schedules with shared-memory
 * operations are run for three consecutive calls (the executor alternates
 * the segment's halves between calls), so reuse across calls is checked too.
 *
 * Data collectives' inputs and results: fill_initial / check_final (bcast:
 * the root's receive buffer; scatter: the root's send buffer, block j with
 * origin j). Reductions hold interned expressions instead of tokens, made
 * and checked in check_red.c (check_int.h is the state both files share);
 * here a KP_OP_REDUCE is a copy reading a and b and writing dst.
 */
#include "sched/check_int.h"
#include "kport.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int kp_chk_fail(ctx *c, const char *fmt, ...)
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

const char *kp_chk_bname(int b)
{
    static const char *n[] = {"send", "recv", "scratch", "shm", "line"};
    return b >= 0 && b < KP_BUF_COUNT ? n[b] : "?";
}

static const char *kname(int k)
{
    static const char *n[] = {"send", "recv", "copy", "post", "wait", "peer-read", "peer-write", "reduce"};
    return k >= 0 && k <= KP_OP_REDUCE ? n[k] : "?";
}

static uint64_t token(int call, uint64_t origin, int64_t i)
{
    return ((uint64_t)call << 56) | (origin << 32) | (uint64_t)i;
}

/* does this rank's send buffer alias its receive buffer (kp_sched_aliased:
 * bcast and scatter never alias)? Gather's flag is the root's in every
 * rank's schedule and aliases only there; reduce's non-roots are built
 * without it (only the root passes MPI_IN_PLACE; kp_red_setup). */
static int aliased(ctx *c, int rank)
{
    if (!kp_sched_aliased(&c->sc[rank]))
        return 0;
    return (c->coll != KP_COLL_GATHER && c->coll != KP_COLL_REDUCE) || rank == c->root;
}

/* physical location of region r of `owner`'s buffers during call `call` */
static phys resolve(ctx *c, int owner, int call, const kp_region *r)
{
    rstate *st = &c->rs[owner];
    phys p = {NULL, r->off / c->g, r->len / c->g};
    switch (r->buf) {
    case KP_BUF_SEND:
        if (aliased(c, owner)) {
            p.m = &st->recv[call];
            p.lo += kp_sched_inplace_offset(&c->sc[owner]) / c->g;
        } else {
            p.m = &st->send[call];
        }
        break;
    case KP_BUF_RECV: p.m = &st->recv[call]; break;
    case KP_BUF_SCRATCH: p.m = &st->scratch; break;
    case KP_BUF_LINE:
        p.m = &c->line[c->L->node_of[owner]];
        p.lo += (call % 2) * (kp_sched_bufsize(&c->sc[owner], KP_BUF_LINE) / c->g);
        break;
    default:
        p.m = &c->shm[c->L->node_of[owner]];
        p.lo += (call % 2) * (c->sc[owner].shm_bytes / c->g);
        break;
    }
    return p;
}

static int check_region(ctx *c, int rank, int opi, const kp_region *r, int owner)
{
    int64_t sz = r->buf >= 0 && r->buf < KP_BUF_COUNT ? kp_sched_bufsize(&c->sc[owner], r->buf) : -1;
    if (r->buf == KP_BUF_SEND && aliased(c, owner)) { /* in place: the input's size, in the receive buffer */
        kp_sched t = c->sc[owner];
        t.inplace = 0;
        sz = kp_sched_bufsize(&t, KP_BUF_SEND);
    }
    if (sz < 0)
        return fail(c, "rank %d op %d: unknown buffer id %d", rank, opi, r->buf);
    if (r->off < 0 || r->len < 0 || r->off + r->len > sz || (r->len == 0 && r->buf != KP_BUF_SCRATCH))
        return fail(c, "rank %d op %d: region %s[%" PRId64 "..+%" PRId64 "]%s outside the buffer (%" PRId64 " bytes)",
                    rank, opi, kp_chk_bname(r->buf), r->off, r->len, owner != rank ? " of a peer" : "", sz);
    return 0;
}

/* ---- race checking --------------------------------------------------------- */

static int ordered(ctx *c, int a, uint32_t ta, int b)
{
    return a == b ? ta < c->rs[b].t : ta < c->rs[b].vc[a];
}

static int access_mem(ctx *c, phys p, int r, int write, const char *what)
{
    mem *m = p.m;
    if (!m->tracked)
        return 0;
    if (m->flag)
        for (int64_t i = p.lo; i < p.lo + p.n; i++)
            if (m->flag[i])
                return fail(c, "rank %d (%s) touches a flag word of the node's lines (byte %" PRId64 ")", r, what,
                            i * c->g);
    if (c->L->node_of[r] != m->owner_node)
        return fail(c, "rank %d (%s) touches memory of node %d from node %d", r, what, m->owner_node,
                    c->L->node_of[r]);
    const int ns = kp_layout_node_size(c->L, m->owner_node);
    const uint32_t t = c->rs[r].t;
    for (int64_t i = p.lo; i < p.lo + p.n; i++) {
        int w = m->wr_rank[i];
        if (w >= 0 && !ordered(c, w, m->wr_time[i], r))
            return fail(c, "race: rank %d %s (%s, round clock %u) and rank %d's earlier write (clock %u) of the "
                        "same bytes are not ordered by posts/waits or messages",
                        r, write ? "writes" : "reads", what, t, w, m->wr_time[i]);
        if (write) {
            for (int l = 0; l < ns; l++) {
                uint32_t rt = m->rd[i * ns + l];
                int q = kp_layout_rank(c->L, m->owner_node, l);
                /* a rank's own reads: its rounds order them, and an op's own (a reduce
                 * combining into its operand) precedes its write */
                if (rt && q != r && !ordered(c, q, rt - 1, r))
                    return fail(c, "race: rank %d writes (%s, round clock %u) bytes that rank %d reads (clock %u) "
                                "without ordering",
                                r, what, t, q, rt - 1);
            }
        }
    }
    const int me = c->L->local[r];
    for (int64_t i = p.lo; i < p.lo + p.n; i++) {
        if (write) {
            m->wr_rank[i] = r;
            m->wr_time[i] = t;
            memset(&m->rd[i * ns], 0, (size_t)ns * sizeof(uint32_t));
        } else {
            m->rd[i * ns + me] = t + 1;
        }
    }
    return 0;
}

static void move_tokens(phys dst, phys src)
{
    memmove(dst.m->tok + dst.lo, src.m->tok + src.lo, (size_t)src.n * sizeof(uint64_t));
}

/* ---- matching ---------------------------------------------------------------- */

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

static void join(ctx *c, uint32_t *into, const uint32_t *vc)
{
    for (int q = 0; q < c->P; q++)
        if (into[q] < vc[q])
            into[q] = vc[q];
}

/* deliver send op `so` of rank s into receive op `ro` of rank d */
static int deliver(ctx *c, int s, int so, int d, int ro)
{
    const kp_op *sop = &c->sc[s].ops[so], *rop = &c->sc[d].ops[ro];
    rstate *ss = &c->rs[s], *ds = &c->rs[d];
    if (sop->u.send.src.len != rop->u.recv.dst.len)
        return fail(c, "size mismatch: rank %d op %d (round %d) sends %" PRId64 " bytes to rank %d, "
                    "matched with rank %d op %d (round %d) receiving %" PRId64 " bytes",
                    s, so, sop->round, sop->u.send.src.len, d, d, ro, rop->round, rop->u.recv.dst.len);
    if (ss->call != ds->call)
        return fail(c, "rank %d's send (op %d) in call %d matched rank %d's receive (op %d) of call %d", s, so,
                    ss->call, d, ro, ds->call);
    phys ps = resolve(c, s, ss->call, &sop->u.send.src), pd = resolve(c, d, ds->call, &rop->u.recv.dst);
    if (access_mem(c, pd, d, 1, "receive"))
        return 1;
    move_tokens(pd, ps);
    join(c, ds->pend, ss->vc); /* the sender's clock as of its round start */
    ss->done[so] = 1;
    ds->done[ro] = 1;
    return 0;
}

/* ---- hazards inside one rank's round ----------------------------------------- */

static int op_regions(ctx *c, int r, const kp_op *o, phys out[3], int w[3])
{
    const int call = c->rs[r].call;
    switch (o->kind) {
    case KP_OP_SEND:
        out[0] = resolve(c, r, call, &o->u.send.src), w[0] = 0;
        return 1;
    case KP_OP_RECV:
        out[0] = resolve(c, r, call, &o->u.recv.dst), w[0] = 1;
        return 1;
    case KP_OP_COPY: {
        phys s = resolve(c, r, call, &o->u.copy.src), d = resolve(c, r, call, &o->u.copy.dst);
        if (s.m == d.m && s.lo == d.lo)
            return 0; /* copy onto itself (MPI_IN_PLACE): a no-op */
        out[0] = s, w[0] = 0, out[1] = d, w[1] = 1;
        return 2;
    }
    case KP_OP_PEER_READ:
        out[0] = resolve(c, o->u.peer_read.peer, call, &o->u.peer_read.src), w[0] = 0;
        out[1] = resolve(c, r, call, &o->u.peer_read.dst), w[1] = 1;
        return 2;
    case KP_OP_PEER_WRITE:
        out[0] = resolve(c, r, call, &o->u.peer_write.src), w[0] = 0;
        out[1] = resolve(c, o->u.peer_write.peer, call, &o->u.peer_write.dst), w[1] = 1;
        return 2;
    case KP_OP_REDUCE:
        out[0] = resolve(c, r, call, &o->u.reduce.a), w[0] = 0;
        out[1] = resolve(c, r, call, &o->u.reduce.b), w[1] = 0;
        out[2] = resolve(c, r, call, &o->u.reduce.dst), w[2] = 1;
        return 3;
    default:
        return 0;
    }
}

static int overlap(phys a, phys b)
{
    return a.m == b.m && a.lo < b.lo + b.n && b.lo < a.lo + a.n;
}

typedef struct {
    const mem *m;
    int64_t lo, hi;
    int write, op;
} acc;

static int acc_cmp(const void *x, const void *y)
{
    const acc *a = x, *b = y;
    if (a->m != b->m)
        return (uintptr_t)a->m < (uintptr_t)b->m ? -1 : 1;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Two operations of one round may not touch the same bytes if one of them
 * writes: sort the round's accesses by (memory, start) and compare each with
 * the ones that start before it ends. */
static int check_round_hazards(ctx *c, int r, int b, int e)
{
    acc *v = malloc((size_t)(3 * (e - b) + 1) * sizeof(*v));
    int n = 0;
    if (!v)
        return fail(c, "checker out of memory");
    for (int i = b; i < e; i++) {
        const kp_op *a = &c->sc[r].ops[i];
        phys ar[3];
        int aw[3], na = op_regions(c, r, a, ar, aw);
        if (na == 2 && a->kind == KP_OP_COPY && overlap(ar[0], ar[1])) {
            free(v);
            return fail(c, "rank %d round %d op %d: copy with overlapping source and destination", r, a->round, i);
        }
        for (int x = 0; na == 3 && x < 2; x++) /* a combine's dst is exactly an operand, or apart from it */
            if (overlap(ar[x], ar[2]) && (ar[x].lo != ar[2].lo || ar[x].n != ar[2].n)) {
                free(v);
                return fail(c, "rank %d round %d op %d: reduce whose destination partly overlaps its operand %c",
                            r, a->round, i, "ab"[x]);
            }
        for (int x = 0; x < na; x++) {
            if (aw[x] && ar[x].m == &c->rs[r].send[c->rs[r].call]) {
                free(v);
                return fail(c, "rank %d round %d op %d (%s): writes the user's send buffer", r, a->round, i,
                            kname(a->kind));
            }
            if (ar[x].n > 0)
                v[n++] = (acc){ar[x].m, ar[x].lo, ar[x].lo + ar[x].n, aw[x], i};
        }
    }
    qsort(v, (size_t)n, sizeof(*v), acc_cmp);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n && v[j].m == v[i].m && v[j].lo < v[i].hi; j++)
            if ((v[i].write || v[j].write) && v[i].op != v[j].op) {
                int x = v[i].op < v[j].op ? v[i].op : v[j].op, y = v[i].op ^ v[j].op ^ x;
                const kp_op *ox = &c->sc[r].ops[x], *oy = &c->sc[r].ops[y];
                free(v);
                return fail(c, "rank %d round %d: op %d (%s) and op %d (%s) touch the same region "
                            "and one of them writes it", r, ox->round, x, kname(ox->kind), y, kname(oy->kind));
            }
    free(v);
    return 0;
}

/* ---- the collective's definition --------------------------------------------- */

/* Inputs: block j of rank r's all-to-all send buffer is origin r * P + j;
 * every other collective's block has the origin of the rank it comes from:
 * the root's broadcast data (in its receive buffer), the root's scatter
 * block j (origin j), a rank's own block. Reductions: check_red.c. */
static void fill_initial(ctx *c, int r, int call, int64_t blk)
{
    rstate *st = &c->rs[r];
    uint64_t *send = aliased(c, r) ? st->recv[call].tok + kp_sched_inplace_offset(&c->sc[r]) / c->g
                                   : st->send[call].tok;
    const int nblk = c->coll == KP_COLL_ALLTOALL || c->coll == KP_COLL_SCATTER ? c->P : 1;
    if (c->red) {
        mem *in = aliased(c, r) ? &st->recv[call] : &st->send[call];
        kp_red_fill(c, r, call, send, in->n - (send - in->tok));
        return;
    }
    if (c->coll == KP_COLL_BARRIER || ((c->coll == KP_COLL_BCAST || c->coll == KP_COLL_SCATTER) && r != c->root))
        return;
    if (c->coll == KP_COLL_BCAST)
        send = st->recv[call].tok;
    for (int j = 0; j < nblk; j++) {
        const uint64_t origin = c->coll == KP_COLL_ALLTOALL ? (uint64_t)r * (uint64_t)c->P + (uint64_t)j
                                : c->coll == KP_COLL_SCATTER ? (uint64_t)j : (uint64_t)r;
        for (int64_t i = 0; i < blk; i++)
            send[(int64_t)j * blk + i] = token(call, origin, i);
    }
}

static int check_final(ctx *c, int r, int call, int64_t blk)
{
    rstate *st = &c->rs[r];
    if (c->coll == KP_COLL_BARRIER) {
        for (int q = 0; q < c->P; q++)
            if (q != r && (c->rs[q].start[call] == UINT32_MAX || st->vc[q] < c->rs[q].start[call]))
                return fail(c, "barrier: rank %d may leave before rank %d has entered (no chain of messages or "
                            "posts from %d to %d)", r, q, q, r);
        return 0;
    }
    if (c->red)
        return kp_red_final(c, r, call, st->recv[call].tok);
    if (c->coll == KP_COLL_GATHER && r != c->root)
        return 0;
    /* bcast: the root's data, at every rank (the root's own included);
     * scatter: block r (none at an in-place root); others: block j at j */
    const int one = c->coll == KP_COLL_BCAST || c->coll == KP_COLL_SCATTER;
    const int nblk = !one ? c->P : st->recv[call].n ? 1 : 0;
    for (int j = 0; j < nblk; j++) {
        const uint64_t *b = st->recv[call].tok + (int64_t)j * blk;
        uint64_t origin = c->coll == KP_COLL_ALLTOALL ? (uint64_t)j * (uint64_t)c->P + (uint64_t)r
                          : c->coll == KP_COLL_BCAST  ? (uint64_t)c->root
                          : one                       ? (uint64_t)r
                                                      : (uint64_t)j;
        for (int64_t i = 0; i < blk; i++) {
            if (b[i] == token(call, origin, i))
                continue;
            char where[96];
            if (one)
                snprintf(where, sizeof(where), "%s byte %" PRId64, kp_coll_name(c->coll), i * c->g);
            else
                snprintf(where, sizeof(where), "block %d byte %" PRId64, j, i * c->g);
            if (b[i] == GARBAGE)
                return fail(c, "rank %d: %s was never written (call %d)", r, where, call);
            int bc = (int)(b[i] >> 56);
            uint64_t bo = (b[i] >> 32) & 0xffffff;
            int64_t bi = (int64_t)(b[i] & 0xffffffffu) * c->g;
            if (bc != call)
                return fail(c, "rank %d: %s holds data of call %d in call %d", r, where, bc, call);
            if (c->coll == KP_COLL_ALLTOALL)
                return fail(c, "rank %d: %s holds rank %d's block for rank %d, byte %" PRId64, r, where,
                            (int)(bo / (uint64_t)c->P), (int)(bo % (uint64_t)c->P), bi);
            return fail(c, "rank %d: %s holds block %d byte %" PRId64, r, where, (int)bo, bi);
        }
    }
    return 0;
}

/*
 * Calls that put data in the segment must compose with any other such call
 * (the executor alternates the segment's halves between them, so call s+2
 * reuses call s's half, whatever collective it is): before a rank leaves a
 * call that uses the segment, it must have heard - through posts or
 * messages - from every rank of its node in this call. Then in call s+1
 * every rank learns that all its node-mates finished call s, before it can
 * start call s+2. Calls that only synchronise through flags do not move the
 * halves and owe nothing here.
 */
static int check_node_sync(ctx *c, int r, int call)
{
    if (!(kp_sched_shm_use(&c->sc[r]) & KP_USES_SEGMENT))
        return 0; /* the segment's halves do not move: nothing to protect */
    const int node = c->L->node_of[r];
    for (int l = 0; l < kp_layout_node_size(c->L, node); l++) {
        int q = kp_layout_rank(c->L, node, l);
        if (q != r && (c->rs[q].start[call] == UINT32_MAX || c->rs[r].vc[q] < c->rs[q].start[call]))
            return fail(c, "rank %d may leave a shared-memory call before its node-mate %d has entered it (no post "
                        "or message chain from %d to %d in the call): a following call could overwrite the "
                        "segment half %d still reads", r, q, q, r, q);
    }
    return 0;
}

/* the user touches its buffers just before entering and after leaving a call */
static int user_touch(ctx *c, int r, int call)
{
    rstate *st = &c->rs[r];
    st->t++;
    st->vc[r] = st->t;
    mem *ms[2] = {&st->send[call], &st->recv[call]};
    for (int i = 0; i < 2; i++) {
        phys p = {ms[i], 0, ms[i]->n};
        if (ms[i]->n && access_mem(c, p, r, 1, "the user's own use of its buffers outside the call"))
            return 1;
    }
    st->t++;
    st->vc[r] = st->t;
    return 0;
}

/* ---- running the rounds ------------------------------------------------------- */

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
        phys reg[3];
        int w[3];
        switch (op->kind) {
        case KP_OP_COPY:
        case KP_OP_PEER_READ:
        case KP_OP_PEER_WRITE:
            if (op_regions(c, r, op, reg, w) == 2) {
                if (access_mem(c, reg[0], r, 0, kname(op->kind)) || access_mem(c, reg[1], r, 1, kname(op->kind)))
                    return 1;
                move_tokens(reg[1], reg[0]);
            }
            st->done[i] = 1;
            break;
        case KP_OP_REDUCE:
            op_regions(c, r, op, reg, w);
            if (access_mem(c, reg[0], r, 0, "reduce") || access_mem(c, reg[1], r, 0, "reduce") ||
                access_mem(c, reg[2], r, 1, "reduce") || kp_red_combine(c, r, i, reg[0], reg[1], reg[2]))
                return 1;
            st->done[i] = 1;
            break;
        case KP_OP_POST:
            if (op->u.post.n != st->posts_in_call + 1)
                return fail(c, "rank %d op %d: post numbered %d, expected %d", r, i, op->u.post.n,
                            st->posts_in_call + 1);
            st->posts_in_call++;
            if (st->nposts == st->capposts) {
                st->capposts = st->capposts ? 2 * st->capposts : 8;
                st->posts = realloc(st->posts, (size_t)st->capposts * sizeof(*st->posts));
                if (!st->posts)
                    abort();
            }
            st->posts[st->nposts].call = st->call;
            st->posts[st->nposts].n = op->u.post.n;
            st->posts[st->nposts].line = op->u.post.line;
            st->posts[st->nposts].vc = malloc((size_t)c->P * sizeof(uint32_t));
            memcpy(st->posts[st->nposts].vc, st->vc, (size_t)c->P * sizeof(uint32_t));
            st->nposts++;
            st->done[i] = 1;
            break;
        case KP_OP_WAIT:
            break; /* completed in the progress loop */
        case KP_OP_SEND: {
            op_regions(c, r, op, reg, w);
            if (access_mem(c, reg[0], r, 0, "send"))
                return 1;
            int d = op->u.send.peer;
            int ro = popq(&c->rs[d].recvs, r);
            if (ro >= 0) {
                if (deliver(c, r, i, d, ro))
                    return 1;
            } else {
                pushq(&c->rs[d].sends_to_me, i, r);
            }
            break;
        }
        case KP_OP_RECV: {
            int src = op->u.recv.peer;
            int so = popq(&st->sends_to_me, src);
            if (so >= 0) {
                if (deliver(c, src, so, r, i))
                    return 1;
            } else {
                pushq(&st->recvs, i, src);
            }
            break;
        }
        }
    }
    st->posted = 1;
    return 0;
}

static void try_waits(ctx *c, int r)
{
    rstate *st = &c->rs[r];
    for (int i = st->cur; i < st->end; i++) {
        const kp_op *op = &c->sc[r].ops[i];
        if (op->kind != KP_OP_WAIT || st->done[i])
            continue;
        rstate *q = &c->rs[op->u.wait.peer];
        for (int k = q->nposts - 1; k >= 0; k--)
            if (q->posts[k].call == st->call && q->posts[k].n == op->u.wait.n) {
                if (q->posts[k].line != op->u.wait.line) {
                    fail(c, "rank %d op %d waits for post %d of rank %d on its %s flag, but it posts on its %s flag", r,
                         i, op->u.wait.n, op->u.wait.peer, op->u.wait.line ? "line" : "slot",
                         q->posts[k].line ? "line" : "slot");
                    return;
                }
                join(c, st->pend, q->posts[k].vc);
                st->done[i] = 1;
                break;
            }
    }
}

static void report_deadlock(ctx *c)
{
    char buf[sizeof(c->res->msg)];
    int n = snprintf(buf, sizeof(buf), "deadlock: ");
    int shown = 0;
    for (int r = 0; r < c->P && n < (int)sizeof(buf) - 100; r++) {
        rstate *st = &c->rs[r];
        if (st->finished)
            continue;
        for (int i = st->cur; i < st->end && n < (int)sizeof(buf) - 100; i++) {
            if (st->done[i])
                continue;
            const kp_op *op = &c->sc[r].ops[i];
            if (op->kind == KP_OP_WAIT)
                n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%srank %d round %d op %d waits for post %d of %d",
                              shown ? "; " : "", r, op->round, i, op->u.wait.n, op->u.wait.peer);
            else
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

/* validate shapes and operations, compute the granule */
static int validate(ctx *c)
{
    kp_sched *sc = c->sc;
    int64_t g = c->red ? gcd64(c->bytes, c->elem) : c->bytes; /* reductions: granules inside elements */
    for (int r = 0; r < c->P; r++) {
        if (sc[r].rank != r || sc[r].P != c->P || sc[r].bytes != c->bytes || sc[r].coll != c->coll ||
            sc[r].root != c->root ||
            (sc[r].inplace != c->inplace && (c->coll != KP_COLL_REDUCE || r == c->root)))
            return fail(c, "schedule %d was built for another shape (rank %d of %d, %s)", r, sc[r].rank, sc[r].P,
                        kp_coll_name(sc[r].coll));
        const kp_sched *lead = &sc[kp_layout_leader(c->L, c->L->node_of[r])];
        if (sc[r].shm_bytes != lead->shm_bytes)
            return fail(c, "rank %d asks for %" PRId64 " shared bytes, its node's leader for %" PRId64, r,
                        sc[r].shm_bytes, lead->shm_bytes);
        g = gcd64(g, sc[r].shm_bytes);
        if (c->res->max_rounds < sc[r].nrounds)
            c->res->max_rounds = sc[r].nrounds;
        if (c->res->max_ops < sc[r].nops)
            c->res->max_ops = sc[r].nops;
        if (c->res->max_scratch < sc[r].scratch_bytes)
            c->res->max_scratch = sc[r].scratch_bytes;
        for (int i = 0; i < sc[r].nops; i++) {
            const kp_op *op = &sc[r].ops[i];
            const kp_region *rg[3];
            int owner[3] = {r, r, r}, nr = 0, peer = -1;
            if (i > 0 && op->round < sc[r].ops[i - 1].round)
                return fail(c, "rank %d op %d: rounds out of order", r, i);
            switch (op->kind) {
            case KP_OP_SEND: peer = op->u.send.peer, rg[nr++] = &op->u.send.src; break;
            case KP_OP_RECV: peer = op->u.recv.peer, rg[nr++] = &op->u.recv.dst; break;
            case KP_OP_COPY: rg[nr++] = &op->u.copy.src, rg[nr++] = &op->u.copy.dst; break;
            case KP_OP_REDUCE:
                if (!c->red)
                    return fail(c, "rank %d op %d: reduce in a schedule of %s, which combines nothing", r, i,
                                kp_coll_name(c->coll));
                rg[nr++] = &op->u.reduce.a, rg[nr++] = &op->u.reduce.b, rg[nr++] = &op->u.reduce.dst;
                for (int x = 0; x < 3; x++)
                    if (rg[x]->off % c->elem || rg[x]->len % c->elem)
                        return fail(c, "rank %d op %d: reduce splits an element: %s[%" PRId64 "..+%" PRId64
                                    "] with %" PRId64 "-byte elements", r, i, kp_chk_bname(rg[x]->buf), rg[x]->off,
                                    rg[x]->len, c->elem);
                break;
            case KP_OP_POST: break;
            case KP_OP_WAIT: peer = op->u.wait.peer; break;
            case KP_OP_PEER_READ:
                peer = op->u.peer_read.peer;
                rg[nr] = &op->u.peer_read.src, owner[nr++] = peer;
                rg[nr++] = &op->u.peer_read.dst;
                c->peer_reads = 1;
                break;
            case KP_OP_PEER_WRITE:
                peer = op->u.peer_write.peer;
                rg[nr++] = &op->u.peer_write.src;
                rg[nr] = &op->u.peer_write.dst, owner[nr++] = peer;
                if (op->u.peer_write.dst.buf == KP_BUF_SEND)
                    return fail(c, "rank %d op %d: writes rank %d's send buffer", r, i, peer);
                c->peer_reads = 1;
                break;
            default:
                return fail(c, "rank %d op %d: unknown operation kind %d", r, i, op->kind);
            }
            if (peer != -1 || op->kind == KP_OP_SEND || op->kind == KP_OP_RECV) {
                if (peer < 0 || peer >= c->P)
                    return fail(c, "rank %d op %d: peer %d out of range 0..%d", r, i, peer, c->P - 1);
                if ((op->kind == KP_OP_WAIT || op->kind == KP_OP_PEER_READ || op->kind == KP_OP_PEER_WRITE) &&
                    (c->L->node_of[peer] != c->L->node_of[r] || peer == r))
                    return fail(c, "rank %d op %d: %s on rank %d, which is %s", r, i, kname(op->kind), peer,
                                peer == r ? "itself" : "on another node");
            }
            for (int x = 0; x < nr; x++) {
                if (owner[x] != r && rg[x]->buf != KP_BUF_SEND && rg[x]->buf != KP_BUF_RECV &&
                    rg[x]->buf != KP_BUF_SCRATCH)
                    return fail(c, "rank %d op %d: a peer's buffers reachable by peer reads and writes are its send, "
                                "receive and scratch buffers", r, i);
                if (check_region(c, r, i, rg[x], owner[x]))
                    return 1;
                if (rg[x]->buf == KP_BUF_SHM || rg[x]->buf == KP_BUF_LINE)
                    c->ncalls = NCALLS_MAX;
                if (rg[x]->buf == KP_BUF_LINE)
                    g = gcd64(g, 8);
                if (rg[x]->len > 0)
                    g = gcd64(g, gcd64(rg[x]->off, rg[x]->len));
            }
            if (op->kind == KP_OP_POST || op->kind == KP_OP_WAIT || op->kind == KP_OP_PEER_READ ||
                op->kind == KP_OP_PEER_WRITE)
                c->ncalls = NCALLS_MAX;
        }
    }
    c->g = g > 0 ? g : 1;
    /* the executor counts calls that use flags, and alternates the segment's
     * halves on calls that put data there: a node's ranks must agree on both */
    for (int r = 0; r < c->P; r++) {
        const int lead = kp_layout_leader(c->L, c->L->node_of[r]);
        unsigned mine = kp_sched_shm_use(&sc[r]), theirs = kp_sched_shm_use(&sc[lead]);
        if (mine != theirs)
            return fail(c, "rank %d uses shared memory as %s%s but its node's leader %d as %s%s", r,
                        mine & KP_USES_FLAGS ? "flags " : "", mine & KP_USES_SEGMENT ? "segment" : "", lead,
                        theirs & KP_USES_FLAGS ? "flags " : "", theirs & KP_USES_SEGMENT ? "segment" : "");
    }
    return 0;
}

static int mem_init(mem *m, int64_t n, int tracked, int node, int ns)
{
    memset(m, 0, sizeof(*m));
    m->n = n;
    m->tok = malloc((size_t)(n + 1) * sizeof(uint64_t));
    if (!m->tok)
        return -1;
    for (int64_t i = 0; i < n; i++)
        m->tok[i] = GARBAGE;
    m->tracked = tracked;
    m->owner_node = node;
    if (tracked) {
        m->wr_rank = malloc((size_t)(n + 1) * sizeof(int32_t));
        m->wr_time = calloc((size_t)n + 1, sizeof(uint32_t));
        m->rd = calloc((size_t)(n * ns) + 1, sizeof(uint32_t));
        if (!m->wr_rank || !m->wr_time || !m->rd)
            return -1;
        for (int64_t i = 0; i < n; i++)
            m->wr_rank[i] = -1;
    }
    return 0;
}

static void mem_free(mem *m)
{
    free(m->flag);
    free(m->tok);
    free(m->wr_rank);
    free(m->wr_time);
    free(m->rd);
}

static void enter_call(ctx *c, int r)
{
    rstate *st = &c->rs[r];
    st->in_call = 1;
    st->posts_in_call = 0;
    if (!c->res->ok || user_touch(c, r, st->call))
        return;
    st->start[st->call] = st->t;
}

static void run(ctx *c, int64_t blk)
{
    const int P = c->P;
    int nfinished = 0;
    while (c->res->ok && nfinished < P) {
        int progress = 0;
        for (int r = 0; r < P && c->res->ok; r++) {
            rstate *st = &c->rs[r];
            if (st->finished)
                continue;
            if (!st->in_call) {
                enter_call(c, r);
                progress = 1;
            }
            if (st->cur < c->sc[r].nops) {
                if (!st->posted) {
                    if (post_round(c, r))
                        break;
                    progress = 1;
                }
                try_waits(c, r);
                int all = 1;
                for (int i = st->cur; i < st->end && all; i++)
                    all = st->done[i];
                if (!all)
                    continue;
                join(c, st->vc, st->pend);
                st->t++;
                st->vc[r] = st->t;
                st->cur = st->end;
                st->posted = 0;
                progress = 1;
            }
            if (st->cur >= c->sc[r].nops) { /* call complete */
                if (check_final(c, r, st->call, blk) || check_node_sync(c, r, st->call) ||
                    user_touch(c, r, st->call))
                    break;
                memset(st->done, 0, (size_t)c->sc[r].nops + 1);
                st->cur = 0;
                st->in_call = 0;
                if (++st->call == c->ncalls) {
                    st->finished = 1;
                    nfinished++;
                }
                progress = 1;
            }
        }
        if (c->res->ok && !progress)
            report_deadlock(c);
    }
    for (int r = 0; r < P && c->res->ok; r++) {
        if (c->rs[r].sends_to_me.n || c->rs[r].recvs.n)
            fail(c, "rank %d finished with %d unmatched sends to it and %d unmatched receives", r,
                 c->rs[r].sends_to_me.n, c->rs[r].recvs.n);
    }
}

void kp_check_scheds(kp_sched *sc, int P, kp_check_result *res)
{
    memset(res, 0, sizeof(*res));
    res->ok = 1;
    ctx c;
    memset(&c, 0, sizeof(c));
    c.sc = sc;
    c.P = P;
    c.res = res;
    c.ncalls = 1;
    if (P < 1 || P > (1 << 20)) {
        fail(&c, "invalid P=%d", P);
        return;
    }
    c.bytes = sc[0].bytes;
    c.inplace = sc[0].inplace;
    c.coll = sc[0].coll;
    c.root = sc[0].root;
    if (c.bytes < 0 || c.root < 0 || c.root >= P) {
        fail(&c, "invalid bytes=%lld or root=%d", (long long)c.bytes, c.root);
        return;
    }
    c.inplace = sc[c.root].inplace; /* reduce: the root's MPI_IN_PLACE */
    c.L = sc[0].layout;
    if (!c.L) {
        int *ids = malloc((size_t)P * sizeof(int));
        for (int r = 0; r < P && ids; r++)
            ids[r] = r;
        if (!ids || kp_layout_init(&c.flat, P, ids, 0)) {
            free(ids);
            fail(&c, "checker out of memory");
            return;
        }
        free(ids);
        c.L = &c.flat;
    }
    for (int r = 0; r < P; r++)
        if (sc[r].layout != sc[0].layout) {
            fail(&c, "rank %d's schedule was built for another node layout", r);
            goto out;
        }
    if (c.L->P != P) {
        fail(&c, "node layout is for %d ranks, not %d", c.L->P, P);
        goto out;
    }
    c.elem = sc[0].elem > 0 ? sc[0].elem : 1;
    c.commute = sc[0].commute;
    c.block_off = sc[0].block_off;
    if ((kp_red_coll(c.coll) && kp_red_setup(&c)) || validate(&c))
        goto out;

    c.rs = calloc((size_t)P, sizeof(*c.rs));
    c.shm = calloc((size_t)c.L->nnodes, sizeof(*c.shm));
    if (!c.rs || !c.shm) {
        fail(&c, "checker out of memory");
        goto out;
    }
    const int64_t g = c.g, blk = c.bytes / g;
    int oom = 0;
    for (int n = 0; n < c.L->nnodes; n++) {
        const kp_sched *lead = &sc[kp_layout_leader(c.L, n)];
        oom |= mem_init(&c.shm[n], 2 * lead->shm_bytes / g, 1, n, kp_layout_node_size(c.L, n));
    }
    /* the node's lines: bytes 0..7 of every line are a flag, in both halves */
    c.line = calloc((size_t)c.L->nnodes, sizeof(*c.line));
    oom |= !c.line;
    for (int n = 0; n < c.L->nnodes && !oom; n++) {
        const int ns = kp_layout_node_size(c.L, n);
        const int64_t half = (int64_t)ns * KP_LINE / g;
        oom |= mem_init(&c.line[n], 2 * half, 1, n, ns);
        if (!oom && !(c.line[n].flag = calloc((size_t)c.line[n].n + 1, 1)))
            oom = 1;
        for (int64_t l = 0; l < ns && !oom; l++)
            for (int64_t k = l * KP_LINE / g; k < (l * KP_LINE + 8) / g; k++)
                c.line[n].flag[k] = c.line[n].flag[k + half] = 1;
    }
    for (int r = 0; r < P && !oom; r++) {
        rstate *st = &c.rs[r];
        const int node = c.L->node_of[r], ns = kp_layout_node_size(c.L, node);
        for (int k = 0; k < c.ncalls; k++) {
            oom |= mem_init(&st->send[k], kp_sched_bufsize(&sc[r], KP_BUF_SEND) / g, c.peer_reads, node, ns);
            oom |= mem_init(&st->recv[k], kp_sched_bufsize(&sc[r], KP_BUF_RECV) / g, c.peer_reads, node, ns);
            if (!oom)
                fill_initial(&c, r, k, blk);
        }
        oom |= mem_init(&st->scratch, (sc[r].scratch_bytes + g - 1) / g, c.peer_reads, node, ns);
        st->vc = calloc((size_t)P, sizeof(uint32_t));
        st->pend = calloc((size_t)P, sizeof(uint32_t));
        st->done = calloc((size_t)sc[r].nops + 1, 1);
        oom |= !st->vc || !st->pend || !st->done;
        for (int k = 0; k < NCALLS_MAX; k++)
            st->start[k] = UINT32_MAX;
    }
    if (oom)
        fail(&c, "checker out of memory");
    else
        run(&c, blk);

out:
    if (c.rs) {
        for (int r = 0; r < P; r++) {
            rstate *st = &c.rs[r];
            for (int k = 0; k < NCALLS_MAX; k++) {
                mem_free(&st->send[k]);
                mem_free(&st->recv[k]);
            }
            mem_free(&st->scratch);
            free(st->vc);
            free(st->pend);
            free(st->done);
            free(st->sends_to_me.v);
            free(st->recvs.v);
            for (int k = 0; k < st->nposts; k++)
                free(st->posts[k].vc);
            free(st->posts);
        }
    }
    if (c.shm)
        for (int n = 0; n < c.L->nnodes; n++)
            mem_free(&c.shm[n]);
    if (c.line)
        for (int n = 0; n < c.L->nnodes; n++)
            mem_free(&c.line[n]);
    free(c.rs);
    free(c.shm);
    free(c.line);
    kp_red_free(&c);
    if (c.L == &c.flat)
        kp_layout_free(&c.flat);
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
