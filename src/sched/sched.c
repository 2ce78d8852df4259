/* Schedule IR: builders' helpers and the text dump. See sched.h. */
#include "sched/sched.h"
#include "kport.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void kp_sched_init(kp_sched *s, int rank, int P, int64_t bytes)
{
    kp_sched_init_coll(s, KP_COLL_ALLGATHER, rank, P, bytes, 0, 0);
}

void kp_sched_init_coll(kp_sched *s, int coll, int rank, int P, int64_t bytes, int root, int inplace)
{
    memset(s, 0, sizeof(*s));
    s->coll = coll;
    s->rank = rank;
    s->P = P;
    s->root = root;
    s->inplace = inplace;
    s->bytes = bytes;
    s->elem = 1;
    s->commute = 1;
}

void kp_sched_set_reduction(kp_sched *s, int64_t elem, int commute, const int64_t *block_off)
{
    s->elem = elem > 0 ? elem : 1;
    s->commute = commute ? 1 : 0;
    s->block_off = block_off;
}

int kp_sched_aliased(const kp_sched *s)
{
    /* reduce: MPI_IN_PLACE is the root's alone (a non-root has no receive buffer) */
    return s->inplace && s->coll != KP_COLL_BCAST && s->coll != KP_COLL_SCATTER &&
           !(s->coll == KP_COLL_REDUCE && s->rank != s->root);
}

int64_t kp_sched_block_off(const kp_sched *s, int j)
{
    return s->block_off ? s->block_off[j] : (int64_t)j * s->bytes;
}

int64_t kp_sched_block_len(const kp_sched *s, int j)
{
    return s->block_off ? s->block_off[j + 1] - s->block_off[j] : s->bytes;
}

int64_t kp_sched_bufsize(const kp_sched *s, int buf)
{
    if (buf == KP_BUF_SHM)
        return s->shm_bytes;
    if (buf == KP_BUF_LINE)
        return (int64_t)KP_LINE * (s->layout ? kp_layout_node_size(s->layout, s->layout->node_of[s->rank]) : 1);
    if (buf == KP_BUF_SCRATCH)
        return s->scratch_bytes;
    if (buf != KP_BUF_SEND && buf != KP_BUF_RECV)
        return -1;
    const int send = buf == KP_BUF_SEND, root = s->rank == s->root;
    const int64_t all = (int64_t)s->P * s->bytes;
    switch (s->coll) {
    case KP_COLL_ALLGATHER:
        return send ? s->bytes : all;
    case KP_COLL_GATHER:
        return send ? s->bytes : root ? all : 0;
    case KP_COLL_ALLTOALL:
        return all;
    case KP_COLL_BCAST:
        return send ? 0 : s->bytes;
    case KP_COLL_SCATTER:
        return send ? (root ? all : 0) : (root && s->inplace ? 0 : s->bytes);
    case KP_COLL_REDUCE:
        return send ? (s->inplace && root ? 0 : s->bytes) : root ? s->bytes : 0;
    case KP_COLL_ALLREDUCE:
        return send && s->inplace ? 0 : s->bytes;
    case KP_COLL_REDUCE_SCATTER_BLOCK:
        return send ? (s->inplace ? 0 : all) : s->inplace ? all : s->bytes;
    case KP_COLL_REDUCE_SCATTER:
        return send ? (s->inplace ? 0 : s->bytes) : s->inplace ? s->bytes : kp_sched_block_len(s, s->rank);
    default: /* barrier */
        return 0;
    }
}

int64_t kp_sched_inplace_offset(const kp_sched *s)
{
    switch (s->coll) {
    case KP_COLL_ALLGATHER:
    case KP_COLL_GATHER:
        return (int64_t)s->rank * s->bytes;
    default:
        return 0;
    }
}

/* where a region really is: with MPI_IN_PLACE the send buffer aliases the
 * receive buffer */
static kp_region resolve(const kp_sched *s, kp_region r)
{
    if (kp_sched_aliased(s) && r.buf == KP_BUF_SEND) {
        r.buf = KP_BUF_RECV;
        r.off += kp_sched_inplace_offset(s);
    }
    return r;
}

int kp_sched_copy_is_noop(const kp_sched *s, const kp_op *op)
{
    if (op->kind != KP_OP_COPY)
        return 0;
    const kp_region a = resolve(s, op->u.copy.src), b = resolve(s, op->u.copy.dst);
    return a.buf == b.buf && a.off == b.off;
}

void kp_sched_free(kp_sched *s)
{
    free(s->ops);
    s->ops = NULL;
    s->nops = s->cap = 0;
}

void kp_sched_reset(kp_sched *s)
{
    s->nops = 0;
    s->nrounds = 0;
    s->cur_round = 0;
    s->scratch_bytes = 0;
    s->shm_bytes = 0;
    s->nposts = 0;
    s->err = KP_SUCCESS;
    s->errmsg[0] = '\0';
}

static kp_op *push(kp_sched *s, int kind)
{
    if (s->err)
        return NULL;
    if (s->nops == s->cap) {
        int ncap = s->cap ? 2 * s->cap : 16;
        kp_op *n = realloc(s->ops, (size_t)ncap * sizeof(*n));
        if (!n) {
            kp_sched_refuse(s, KP_ERR_NOMEM, "out of memory growing a schedule to %d operations", ncap);
            return NULL;
        }
        s->ops = n;
        s->cap = ncap;
    }
    kp_op *op = &s->ops[s->nops++];
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->round = s->cur_round;
    if (s->nrounds <= s->cur_round)
        s->nrounds = s->cur_round + 1;
    return op;
}

static int bad_len(kp_sched *s, int64_t off, int64_t len)
{
    if (off < 0 || len < 0) {
        kp_sched_refuse(s, KP_ERR_INTERNAL, "builder produced a negative offset/length (%lld, %lld)",
                        (long long)off, (long long)len);
        return 1;
    }
    return 0;
}

void kp_sched_send(kp_sched *s, int peer, int buf, int64_t off, int64_t len)
{
    if (bad_len(s, off, len) || len == 0)
        return;
    kp_op *op = push(s, KP_OP_SEND);
    if (op) {
        op->u.send.peer = peer;
        op->u.send.src = (kp_region){buf, off, len};
    }
}

void kp_sched_signal(kp_sched *s, int peer)
{
    kp_op *op = push(s, KP_OP_SEND);
    if (op) {
        op->u.send.peer = peer;
        op->u.send.src = (kp_region){KP_BUF_SCRATCH, 0, 0};
    }
}

void kp_sched_wait_signal(kp_sched *s, int peer)
{
    kp_op *op = push(s, KP_OP_RECV);
    if (op) {
        op->u.recv.peer = peer;
        op->u.recv.dst = (kp_region){KP_BUF_SCRATCH, 0, 0};
    }
}

void kp_sched_recv(kp_sched *s, int peer, int buf, int64_t off, int64_t len)
{
    if (bad_len(s, off, len) || len == 0)
        return;
    kp_op *op = push(s, KP_OP_RECV);
    if (op) {
        op->u.recv.peer = peer;
        op->u.recv.dst = (kp_region){buf, off, len};
    }
}

void kp_sched_copy(kp_sched *s, int sbuf, int64_t soff, int dbuf, int64_t doff, int64_t len)
{
    if (bad_len(s, soff, len) || bad_len(s, doff, len) || len == 0)
        return;
    kp_op *op = push(s, KP_OP_COPY);
    if (op) {
        op->u.copy.src = (kp_region){sbuf, soff, len};
        op->u.copy.dst = (kp_region){dbuf, doff, len};
    }
}

void kp_sched_reduce(kp_sched *s, int abuf, int64_t aoff, int bbuf, int64_t boff, int dbuf, int64_t doff,
                     int64_t len)
{
    if (bad_len(s, aoff, len) || bad_len(s, boff, len) || bad_len(s, doff, len) || len == 0)
        return;
    const int64_t e = s->elem > 0 ? s->elem : 1;
    if (aoff % e || boff % e || doff % e || len % e) {
        kp_sched_refuse(s, KP_ERR_INTERNAL,
                        "builder split an element: combine at offsets %lld, %lld -> %lld, %lld bytes, element %lld",
                        (long long)aoff, (long long)boff, (long long)doff, (long long)len, (long long)e);
        return;
    }
    kp_op *op = push(s, KP_OP_REDUCE);
    if (op) {
        op->u.reduce.a = (kp_region){abuf, aoff, len};
        op->u.reduce.b = (kp_region){bbuf, boff, len};
        op->u.reduce.dst = (kp_region){dbuf, doff, len};
    }
}

void kp_sched_need_shm(kp_sched *s, int64_t n)
{
    if (n > s->shm_bytes)
        s->shm_bytes = n;
}

static int post_flag(kp_sched *s, int line)
{
    kp_op *op = push(s, KP_OP_POST);
    if (!op)
        return 0;
    op->u.post.n = ++s->nposts;
    op->u.post.line = line;
    return op->u.post.n;
}

int kp_sched_post(kp_sched *s)
{
    return post_flag(s, 0);
}

int kp_sched_post_line(kp_sched *s)
{
    return post_flag(s, 1);
}

static void wait_flag(kp_sched *s, int peer, int n, int line)
{
    kp_op *op = push(s, KP_OP_WAIT);
    if (op) {
        op->u.wait.peer = peer;
        op->u.wait.n = n;
        op->u.wait.line = line;
    }
}

void kp_sched_wait(kp_sched *s, int peer, int n)
{
    wait_flag(s, peer, n, 0);
}

void kp_sched_wait_line(kp_sched *s, int peer, int n)
{
    wait_flag(s, peer, n, 1);
}

void kp_sched_peer_read(kp_sched *s, int peer, int sbuf, int64_t soff, int dbuf, int64_t doff, int64_t len)
{
    if (bad_len(s, soff, len) || bad_len(s, doff, len) || len == 0)
        return;
    kp_op *op = push(s, KP_OP_PEER_READ);
    if (op) {
        op->u.peer_read.peer = peer;
        op->u.peer_read.src = (kp_region){sbuf, soff, len};
        op->u.peer_read.dst = (kp_region){dbuf, doff, len};
    }
}

void kp_sched_peer_write(kp_sched *s, int peer, int sbuf, int64_t soff, int dbuf, int64_t doff, int64_t len)
{
    if (bad_len(s, soff, len) || bad_len(s, doff, len) || len == 0)
        return;
    kp_op *op = push(s, KP_OP_PEER_WRITE);
    if (op) {
        op->u.peer_write.peer = peer;
        op->u.peer_write.src = (kp_region){sbuf, soff, len};
        op->u.peer_write.dst = (kp_region){dbuf, doff, len};
    }
}

unsigned kp_sched_shm_use(const kp_sched *s)
{
    unsigned use = s->shm_bytes > 0 ? KP_USES_SEGMENT : 0;
    for (int i = 0; i < s->nops; i++) {
        const kp_op *op = &s->ops[i];
        if (op->kind == KP_OP_POST || op->kind == KP_OP_WAIT || op->kind == KP_OP_PEER_READ ||
            op->kind == KP_OP_PEER_WRITE)
            use |= KP_USES_FLAGS;
        const kp_region *r[2] = {NULL, NULL};
        if (op->kind == KP_OP_SEND)
            r[0] = &op->u.send.src;
        else if (op->kind == KP_OP_RECV)
            r[0] = &op->u.recv.dst;
        else if (op->kind == KP_OP_COPY)
            r[0] = &op->u.copy.src, r[1] = &op->u.copy.dst;
        else if (op->kind == KP_OP_REDUCE)
            r[0] = &op->u.reduce.dst; /* a, b: below */
        else if (op->kind == KP_OP_PEER_READ)
            r[0] = &op->u.peer_read.dst;
        else if (op->kind == KP_OP_PEER_WRITE)
            r[0] = &op->u.peer_write.src;
        for (int k = 0; k < 2; k++)
            if (r[k] && (r[k]->buf == KP_BUF_SHM || r[k]->buf == KP_BUF_LINE))
                use |= KP_USES_SEGMENT;
        if (op->kind == KP_OP_REDUCE)
            for (int k = 0; k < 2; k++) {
                const kp_region *x = k ? &op->u.reduce.b : &op->u.reduce.a;
                if (x->buf == KP_BUF_SHM || x->buf == KP_BUF_LINE)
                    use |= KP_USES_SEGMENT;
            }
        if ((op->kind == KP_OP_POST && op->u.post.line) || (op->kind == KP_OP_WAIT && op->u.wait.line))
            use |= KP_USES_FLAGS;
    }
    return use;
}

typedef struct layout_pair {
    int id, rank;
} layout_pair;

static int cmp_pair(const void *a, const void *b)
{
    const layout_pair *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* a layout's arrays for P ranks (node_start zeroed); -1 when out of memory */
static int layout_alloc(kp_layout *L, int P, int cma)
{
    memset(L, 0, sizeof(*L));
    L->P = P;
    L->cma = cma;
    L->node_of = malloc((size_t)P * sizeof(int));
    L->local = malloc((size_t)P * sizeof(int));
    L->node_start = calloc((size_t)P + 2, sizeof(int));
    L->node_ranks = malloc((size_t)P * sizeof(int));
    if (!L->node_of || !L->local || !L->node_start || !L->node_ranks) {
        kp_layout_free(L);
        return -1;
    }
    return 0;
}

int kp_layout_block(kp_layout *L, int P, int n, int cma)
{
    if (n < 1)
        n = 1;
    if (layout_alloc(L, P, cma))
        return -1;
    const int nn = (P + n - 1) / n;
    L->nnodes = nn;
    for (int r = 0; r < P; r++) {
        L->node_of[r] = r / n;
        L->local[r] = r % n;
        L->node_ranks[r] = r;
    }
    for (int k = 0; k <= nn; k++)
        L->node_start[k] = k * n < P ? k * n : P;
    return 0;
}

int kp_layout_init(kp_layout *L, int P, const int *node_id, int cma)
{
    if (layout_alloc(L, P, cma))
        return -1;
    /* number nodes in order of their lowest rank: group equal ids by
     * sorting (id, rank) pairs, O(P log P) (a scan of the earlier ranks per
     * rank is quadratic: minutes at a million ranks) */
    int *grp = malloc((size_t)P * sizeof(int)), *num = malloc((size_t)P * sizeof(int));
    layout_pair *pr = malloc((size_t)P * sizeof(layout_pair));
    if (!grp || !num || !pr) {
        free(grp);
        free(num);
        free(pr);
        kp_layout_free(L);
        return -1;
    }
    for (int r = 0; r < P; r++)
        pr[r] = (layout_pair){node_id[r], r};
    qsort(pr, (size_t)P, sizeof(*pr), cmp_pair);
    int ngroups = 0;
    for (int i = 0; i < P; i++) {
        if (i > 0 && pr[i].id != pr[i - 1].id)
            ngroups++;
        grp[pr[i].rank] = ngroups; /* groups numbered by id */
    }
    for (int g = 0; g <= ngroups && g < P; g++)
        num[g] = -1;
    for (int r = 0; r < P; r++) { /* renumbered by lowest rank */
        if (num[grp[r]] < 0)
            num[grp[r]] = L->nnodes++;
        L->node_of[r] = num[grp[r]];
    }
    free(grp);
    free(num);
    free(pr);
    for (int r = 0; r < P; r++)
        L->node_start[L->node_of[r] + 1]++;
    for (int n = 0; n < L->nnodes; n++)
        L->node_start[n + 1] += L->node_start[n];
    int *fill = calloc((size_t)L->nnodes + 1, sizeof(int));
    if (!fill) {
        kp_layout_free(L);
        return -1;
    }
    for (int r = 0; r < P; r++) {
        int n = L->node_of[r];
        L->local[r] = fill[n];
        L->node_ranks[L->node_start[n] + fill[n]++] = r;
    }
    free(fill);
    return 0;
}

void kp_layout_free(kp_layout *L)
{
    free(L->node_of);
    free(L->local);
    free(L->node_start);
    free(L->node_ranks);
    memset(L, 0, sizeof(*L));
}

void kp_sched_next_round(kp_sched *s)
{
    /* only advance when the current round holds something */
    if (s->nops > 0 && s->ops[s->nops - 1].round == s->cur_round)
        s->cur_round++;
}

void kp_sched_need_scratch(kp_sched *s, int64_t n)
{
    if (n > s->scratch_bytes)
        s->scratch_bytes = n;
}

int kp_sched_refuse(kp_sched *s, int code, const char *fmt, ...)
{
    if (s->err)
        return s->err;
    s->err = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->errmsg, sizeof(s->errmsg), fmt, ap);
    va_end(ap);
    return code;
}

int kp_sched_finish(kp_sched *s)
{
    kp_sched_next_round(s);
    return s->err;
}

static const char *bufname(int b)
{
    switch (b) {
    case KP_BUF_SEND: return "send";
    case KP_BUF_RECV: return "recv";
    case KP_BUF_SCRATCH: return "scratch";
    case KP_BUF_SHM: return "shm";
    case KP_BUF_LINE: return "line";
    default: return "?";
    }
}

void kp_sched_dump(const kp_sched *s, FILE *out)
{
    fprintf(out, "rank %d of %d: %lld bytes per block, %d rounds, %d ops, scratch %lld\n", s->rank,
            s->P, (long long)s->bytes, s->nrounds, s->nops, (long long)s->scratch_bytes);
    int round = -1;
    for (int i = 0; i < s->nops; i++) {
        const kp_op *op = &s->ops[i];
        if (op->round != round) {
            round = op->round;
            fprintf(out, "  round %d\n", round);
        }
        switch (op->kind) {
        case KP_OP_SEND:
            fprintf(out, "    send %s[%lld..+%lld] to %d\n", bufname(op->u.send.src.buf),
                    (long long)op->u.send.src.off, (long long)op->u.send.src.len, op->u.send.peer);
            break;
        case KP_OP_RECV:
            fprintf(out, "    recv %s[%lld..+%lld] from %d\n", bufname(op->u.recv.dst.buf),
                    (long long)op->u.recv.dst.off, (long long)op->u.recv.dst.len, op->u.recv.peer);
            break;
        case KP_OP_COPY:
            fprintf(out, "    copy %s[%lld..+%lld] -> %s[%lld]\n", bufname(op->u.copy.src.buf),
                    (long long)op->u.copy.src.off, (long long)op->u.copy.src.len,
                    bufname(op->u.copy.dst.buf), (long long)op->u.copy.dst.off);
            break;
        case KP_OP_POST:
            fprintf(out, "    post %d%s\n", op->u.post.n, op->u.post.line ? " (line flag)" : "");
            break;
        case KP_OP_WAIT:
            fprintf(out, "    wait for post %d of %d%s\n", op->u.wait.n, op->u.wait.peer,
                    op->u.wait.line ? " (line flag)" : "");
            break;
        case KP_OP_PEER_READ:
            fprintf(out, "    peer-read %d:%s[%lld..+%lld] -> %s[%lld]\n", op->u.peer_read.peer,
                    bufname(op->u.peer_read.src.buf), (long long)op->u.peer_read.src.off,
                    (long long)op->u.peer_read.src.len, bufname(op->u.peer_read.dst.buf),
                    (long long)op->u.peer_read.dst.off);
            break;
        case KP_OP_REDUCE:
            fprintf(out, "    reduce %s[%lld] (op) %s[%lld] -> %s[%lld], %lld bytes\n", bufname(op->u.reduce.a.buf),
                    (long long)op->u.reduce.a.off, bufname(op->u.reduce.b.buf), (long long)op->u.reduce.b.off,
                    bufname(op->u.reduce.dst.buf), (long long)op->u.reduce.dst.off, (long long)op->u.reduce.dst.len);
            break;
        case KP_OP_PEER_WRITE:
            fprintf(out, "    peer-write %s[%lld..+%lld] -> %d:%s[%lld]\n", bufname(op->u.peer_write.src.buf),
                    (long long)op->u.peer_write.src.off, (long long)op->u.peer_write.src.len, op->u.peer_write.peer,
                    bufname(op->u.peer_write.dst.buf), (long long)op->u.peer_write.dst.off);
            break;
        }
    }
}

int kp_ilog(int64_t x, int64_t b)
{
    if (b == 2) /* the common base (kport-sim builds millions of ranks' schedules with it) */
        return x >= 1 ? 63 - __builtin_clzll((unsigned long long)x) : 0;
    int e = 0;
    while (x >= b) {
        x /= b;
        e++;
    }
    return e;
}

int64_t kp_ipow(int64_t b, int e)
{
    int64_t r = 1;
    while (e-- > 0) {
        if (r > INT64_MAX / b)
            return INT64_MAX;
        r *= b;
    }
    return r;
}

int kp_is_pow(int64_t x, int64_t b)
{
    if (x < 1)
        return 0;
    while (x % b == 0)
        x /= b;
    return x == 1;
}

const char *kp_coll_name(int coll)
{
    static const char *const n[KP_COLL_COUNT] = {"allgather", "barrier", "gather", "alltoall", "bcast", "scatter",
                                                 "reduce", "allreduce", "reduce_scatter_block", "reduce_scatter"};
    return coll >= 0 && coll < KP_COLL_COUNT ? n[coll] : "?";
}
