/*
 * Strided one-sided transfers: the entry points (include/kport.h, "One-sided
 * strided transfers"). Every call validates everything first (descriptor,
 * buffers, target region, accumulate type; desc.c), so a refused call
 * sends and writes nothing; then runs the progress agent of every window of
 * this process (win.c), picks the method (forced, or the cost model:
 * auto.c), keeps one origin's operations to one target in issue order (below),
 * starts the method's module and, for blocking calls, completes it at once.
 *
 * Issue order. An operation takes effect at its target when the target's
 * memory holds (put, acc) or has given (get) its bytes: a load/store copy
 * when it runs; an MPI operation (direct, datatype) at the latest when a
 * flush of its target returns, in no order MPI promises against the
 * origin's other operations to the same bytes (MPI orders only
 * accumulates with accumulates); a pack put or accumulate when the
 * target's agent unpacks its slot, a pack get when the agent packs the
 * reply, both in ticket order. Two operations of one origin to one target
 * conflict when their target bytes overlap and at least one writes, except
 * two accumulates (a sum is the same in any order, and every method keeps
 * accumulates element-wise atomic). Each window keeps the operations of
 * this rank that have not yet taken effect and may still be overtaken
 * (kp_pend: class, target, byte range): nonblocking direct and datatype
 * MPI operations until a flush of their target, pack puts and accumulates
 * until the target's agent has unpacked them (kp_pack_fence), and pending
 * pack gets (the window's request list). Before a new operation X to
 * target T, order_before completes every earlier one X conflicts with:
 *
 *   earlier \ X      pack X                       direct / datatype X
 *   MPI op           MPI_Win_flush(T)             MPI_Win_flush(T)
 *   pack put / acc   nothing: ticket order        kp_pack_fence(T) (the agent unpacked it)
 *   pack get         nothing: ticket order        wait until the get completed (X writes)
 *   load/store       nothing: done when it returned
 *
 * A blocking direct or datatype call completes with one flush of T, which
 * also completes every earlier MPI operation to T; blocking pack puts are
 * pending until the agent unpacks them, blocking gets of any method are
 * complete when they return. With nothing pending to T (the common case,
 * and every blocking sequence of direct and datatype calls) the check is
 * one comparison and costs no MPI call; a nonblocking operation to bytes no
 * pending one touches (halo faces) costs none either. The byte range is the
 * target section's [disp, disp + extent); at most KP_PEND_MERGE entries of
 * one (target, class) are kept, more merge into their bounding range
 * (conservative: it may flush where no byte conflicts, never the reverse).
 */
#include "strided/strided.h"

#include "util/env.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local const char *last_method = ""; /* a static name: no copy per call */

const char *kp_strided_last_method(void)
{
    return last_method;
}

/* dst = scale * src, element by element, through unaligned 16-byte
 * vectors where the compiler has them (GCC's and Clang's vector
 * extension): GCC 12's -O2 leaves a loop whose count it does not know
 * scalar, and 256 KiB of doubles took 11.3 us one element at a time
 * against 6.3 in vectors; the scalar loop was what put kport's accumulate
 * of 4 x 64 KiB behind ARMCI-MPI's under Open MPI (docs/PERFORMANCE.md,
 * session 24). In place (src == dst) or between buffers that do not
 * overlap. */
#if defined(__GNUC__)
#define KP_SCALE_VEC(T)                                                                                              \
    do {                                                                                                             \
        typedef T vec __attribute__((vector_size(16)));                                                              \
        for (; i + (int64_t)sizeof(vec) <= n; i += (int64_t)sizeof(vec)) {                                         \
            vec v;                                                                                                   \
            memcpy(&v, src + i, sizeof(vec));                                                                        \
            v = v * a;                                                                                               \
            memcpy(dst + i, &v, sizeof(vec));                                                                        \
        }                                                                                                            \
    } while (0)
#else
#define KP_SCALE_VEC(T) (void)0
#endif
#define KP_SCALE_FN(T, name)                                                                                         \
    static void name(const void *scale, const char *src, char *dst, int64_t bytes)                                 \
    {                                                                                                                \
        T a;                                                                                                         \
        memcpy(&a, scale, sizeof(T));                                                                                \
        const int64_t n = bytes / (int64_t)sizeof(T) * (int64_t)sizeof(T);                                           \
        int64_t i = 0;                                                                                               \
        KP_SCALE_VEC(T);                                                                                             \
        for (; i < n; i += (int64_t)sizeof(T)) {                                                                     \
            T v;                                                                                                     \
            memcpy(&v, src + i, sizeof(T));                                                                          \
            v = (T)(a * v);                                                                                          \
            memcpy(dst + i, &v, sizeof(T));                                                                          \
        }                                                                                                            \
    }
KP_SCALE_FN(int, scale_int)
KP_SCALE_FN(long, scale_long)
KP_SCALE_FN(float, scale_float)
KP_SCALE_FN(double, scale_double)
#undef KP_SCALE_FN

/* dst += scale * src over rows (the load/store accumulate, direct.c and
 * the agent), element type T computed in U: unsigned for the integers, so
 * that overflow wraps (as MPI_SUM's does in practice) instead of being
 * undefined; the same vectors as the scaling */
#if defined(__GNUC__)
#define KP_ADD_VEC(U)                                                                                                \
    do {                                                                                                             \
        typedef U vec __attribute__((vector_size(16)));                                                              \
        for (; i + (int64_t)sizeof(vec) <= n; i += (int64_t)sizeof(vec)) {                                         \
            vec v, t;                                                                                                \
            memcpy(&v, s + i, sizeof(vec));                                                                          \
            memcpy(&t, d + i, sizeof(vec));                                                                          \
            t = t + v * a;                                                                                           \
            memcpy(d + i, &t, sizeof(vec));                                                                          \
        }                                                                                                            \
    } while (0)
#else
#define KP_ADD_VEC(U) (void)0
#endif
#define KP_ADD_FN(T, U, name)                                                                                        \
    static void name(const void *scale, char *d, const char *s, int64_t bytes, int64_t rows, int64_t ds,           \
                     int64_t ss)                                                                                     \
    {                                                                                                                \
        T a0;                                                                                                        \
        memcpy(&a0, scale, sizeof(T));                                                                               \
        const U a = (U)a0;                                                                                           \
        const int64_t n = bytes / (int64_t)sizeof(T) * (int64_t)sizeof(T);                                           \
        for (int64_t j = 0; j < rows; j++, d += ds, s += ss) {                                                       \
            int64_t i = 0;                                                                                           \
            KP_ADD_VEC(U);                                                                                           \
            for (; i < n; i += (int64_t)sizeof(T)) {                                                                 \
                T v, t;                                                                                              \
                memcpy(&v, s + i, sizeof(T));                                                                        \
                memcpy(&t, d + i, sizeof(T));                                                                        \
                t = (T)((U)t + (U)v * a);                                                                            \
                memcpy(d + i, &t, sizeof(T));                                                                        \
            }                                                                                                        \
        }                                                                                                            \
    }
KP_ADD_FN(int, unsigned, add_int)
KP_ADD_FN(long, unsigned long, add_long)
KP_ADD_FN(float, float, add_float)
KP_ADD_FN(double, double, add_double)
#undef KP_ADD_FN
#undef KP_ADD_VEC
#undef KP_SCALE_VEC

void kp_acc_scale(int type, const void *scale, const char *src, char *dst, int64_t n)
{
    switch (type) {
    case KP_ACC_INT: scale_int(scale, src, dst, n); break;
    case KP_ACC_LONG: scale_long(scale, src, dst, n); break;
    case KP_ACC_FLOAT: scale_float(scale, src, dst, n); break;
    default: scale_double(scale, src, dst, n); break;
    }
}

void kp_acc_add_rows(int type, const void *scale, char *dst, const char *src, int64_t n, int64_t rows, int64_t ds,
                     int64_t ss)
{
    switch (type) {
    case KP_ACC_INT: add_int(scale, dst, src, n, rows, ds, ss); break;
    case KP_ACC_LONG: add_long(scale, dst, src, n, rows, ds, ss); break;
    case KP_ACC_FLOAT: add_float(scale, dst, src, n, rows, ds, ss); break;
    default: add_double(scale, dst, src, n, rows, ds, ss); break;
    }
}

static int scale_is_one(int type, const void *scale)
{
    switch (type) {
    case KP_ACC_INT: { int v; memcpy(&v, scale, sizeof v); return v == 1; }
    case KP_ACC_LONG: { long v; memcpy(&v, scale, sizeof v); return v == 1; }
    case KP_ACC_FLOAT: { float v; memcpy(&v, scale, sizeof v); return v == 1.0f; }
    default: { double v; memcpy(&v, scale, sizeof v); return v == 1.0; }
    }
}

typedef struct scale_arg {
    const kp_strided_op *op;
    char *stream;
} scale_arg;

static int scale_run(int64_t where, int64_t soff, int64_t n, void *a)
{
    scale_arg *s = a;
    kp_acc_scale(s->op->acc_type, s->op->scale, s->op->lbase + where, s->stream + soff, n);
    return 0;
}

int kp_acc_scaled_stream(const kp_strided_op *op, char **out)
{
    *out = NULL;
    if (scale_is_one(op->acc_type, op->scale))
        return KP_SUCCESS;
    char *t = malloc((size_t)op->sd.total);
    if (!t)
        return kp_error(KP_ERR_NOMEM, "strided accumulate: no memory for %lld scaled bytes",
                        (long long)op->sd.total);
    if (op->sd.count[0] >= 256) { /* long rows: scale straight from the source, one pass */
        scale_arg a = {op, t};
        kp_sd_runs(&op->sd, &op->lside, 0, op->sd.total, scale_run, &a);
    } else { /* short rows: the packing loop without a call per chunk, then scale */
        kp_sd_pack_range(&op->sd, &op->lside, op->lbase, 0, op->sd.total, t);
        kp_acc_scale(op->acc_type, op->scale, t, t, op->sd.total);
    }
    *out = t;
    return KP_SUCCESS;
}

static int validate(kp_strided_op *op, const char *fn, kp_win win, const void *lbase, const MPI_Aint lstride[],
                    MPI_Aint rdisp, const MPI_Aint rstride[], const MPI_Aint count[], int levels, int target)
{
    if (!win)
        return kp_error(KP_ERR_ARG, "%s: win is NULL", fn);
    int rc = kp_sd_counts(&op->sd, count, levels);
    if (rc)
        return rc;
    if (target < 0 || target >= win->P)
        return kp_error(KP_ERR_ARG, "%s: target rank %d is outside the window's %d ranks", fn, target, win->P);
    op->target = target;
    if (op->sd.total == 0)
        return KP_SUCCESS;
    if (!lbase)
        return kp_error(KP_ERR_ARG, "%s: the origin buffer is NULL (%lld bytes to move)", fn,
                        (long long)op->sd.total);
    if ((rc = kp_sd_strides(&op->sd, &op->lside, lstride, "origin")) != KP_SUCCESS ||
        (rc = kp_sd_strides(&op->sd, &op->rside, rstride, "target")) != KP_SUCCESS)
        return rc;
    if (rdisp < 0 || rdisp > win->sizes[target] || op->rside.extent > win->sizes[target] - rdisp)
        return kp_error(KP_ERR_ARG,
                        "%s: target region [%lld, %lld) is outside rank %d's window of %lld bytes", fn,
                        (long long)rdisp, (long long)rdisp + (long long)op->rside.extent, target,
                        (long long)win->sizes[target]);
    op->lbase = (char *)lbase;
    op->rdisp = rdisp;
    if (op->kind == KP_SD_ACC) {
        switch (op->acc_type) {
        case KP_ACC_INT: op->etype = MPI_INT; op->esize = (int)sizeof(int); break;
        case KP_ACC_LONG: op->etype = MPI_LONG; op->esize = (int)sizeof(long); break;
        case KP_ACC_FLOAT: op->etype = MPI_FLOAT; op->esize = (int)sizeof(float); break;
        case KP_ACC_DOUBLE: op->etype = MPI_DOUBLE; op->esize = (int)sizeof(double); break;
        default:
            return kp_error(KP_ERR_DATATYPE, "%s: accumulate type %d is not KP_ACC_INT, _LONG, _FLOAT or _DOUBLE",
                            fn, op->acc_type);
        }
        if (!op->scale)
            return kp_error(KP_ERR_ARG, "%s: scale is NULL", fn);
        if (op->sd.count[0] % op->esize)
            return kp_error(KP_ERR_COUNT, "%s: count[0] = %lld bytes is not a whole number of %d-byte elements",
                            fn, (long long)op->sd.count[0], op->esize);
    }
    return KP_SUCCESS;
}

/* ---- issue order ------------------------------------------------------------ */

int kp_pend_overlaps(const kp_win w, int target, int mask, int64_t lo, int64_t hi)
{
    for (int i = 0; i < w->npend; i++) {
        const kp_pend *p = &w->pend[i];
        if (p->target == target && (p->cls & mask) && p->lo < hi && lo < p->hi)
            return 1;
    }
    return 0;
}

void kp_pend_clear(kp_win w, int target, int mask)
{
    int n = 0;
    for (int i = 0; i < w->npend; i++) {
        const kp_pend *p = &w->pend[i];
        if ((target < 0 || p->target == target) && (p->cls & mask))
            continue;
        w->pend[n++] = *p;
    }
    w->npend = n;
}

static int pend_add(kp_win w, int target, int cls, int64_t lo, int64_t hi)
{
    int same = 0, first = -1;
    for (int i = 0; i < w->npend; i++)
        if (w->pend[i].target == target && w->pend[i].cls == cls) {
            same++;
            if (first < 0)
                first = i;
        }
    if (same >= KP_PEND_MERGE) { /* merge them all into the first, with the new range */
        kp_pend *f = &w->pend[first];
        int n = first + 1;
        for (int i = first + 1; i < w->npend; i++) {
            const kp_pend *p = &w->pend[i];
            if (p->target == target && p->cls == cls) {
                f->lo = p->lo < f->lo ? p->lo : f->lo;
                f->hi = p->hi > f->hi ? p->hi : f->hi;
            } else {
                w->pend[n++] = *p;
            }
        }
        w->npend = n;
        f->lo = lo < f->lo ? lo : f->lo;
        f->hi = hi > f->hi ? hi : f->hi;
        return KP_SUCCESS;
    }
    if (w->npend == w->pend_cap) {
        int cap = w->pend_cap ? 2 * w->pend_cap : 8;
        kp_pend *np = realloc(w->pend, sizeof(*np) * (size_t)cap);
        if (!np)
            return kp_error(KP_ERR_NOMEM, "strided: out of memory (pending operations)");
        w->pend = np;
        w->pend_cap = cap;
    }
    w->pend[w->npend++] = (kp_pend){target, cls, lo, hi};
    return KP_SUCCESS;
}

int kp_data_flush(kp_win w, int target, const char *who)
{
    w->cnt.data_flushes++;
    if (MPI_Win_flush(target, w->win) != MPI_SUCCESS)
        return kp_error(KP_ERR_MPI, "%s: MPI_Win_flush(%d) failed", who, target);
    kp_pend_clear(w, target, KP_PD_MPI);
    return KP_SUCCESS;
}

/* the earlier operations of this rank to op's target that op conflicts
 * with have taken effect (the table at the head of this file) */
static int order_before(kp_win w, const kp_strided_op *op, int m, const char *fn)
{
    const int T = op->target, k = op->kind;
    const int64_t lo = op->rdisp, hi = op->rdisp + op->rside.extent;
    int rc = KP_SUCCESS;
    if (w->npend > 0) {
        const int mpi = KP_PD_MPI_PUT | (k != KP_SD_ACC ? KP_PD_MPI_ACC : 0) | (k != KP_SD_GET ? KP_PD_MPI_GET : 0);
        if (kp_pend_overlaps(w, T, mpi, lo, hi))
            rc = kp_data_flush(w, T, fn);
        const int pack = KP_PD_PACK_PUT | (k != KP_SD_ACC ? KP_PD_PACK_ACC : 0);
        if (rc == KP_SUCCESS && m != KP_M_PACK && kp_pend_overlaps(w, T, pack, lo, hi))
            rc = kp_pack_fence(w, T);
    }
    if (m == KP_M_PACK || k == KP_SD_GET)
        return rc;
    /* pending pack gets of these bytes: served before this write lands */
    for (;;) {
        struct kp_request_s *g = w->reqs;
        while (g && !(g->target == T && g->rdisp < hi && lo < g->rdisp + g->rside.extent))
            g = g->next;
        if (!g || rc != KP_SUCCESS)
            return rc;
        unsigned spins = 0;
        while (rc == KP_SUCCESS && !g->done) {
            rc = kp_strided_progress(w);
            if (rc == KP_SUCCESS && !g->done)
                kp_strided_idle(w, &spins);
        }
    }
}

static void unlink_req(kp_win w, struct kp_request_s *r)
{
    for (struct kp_request_s **pp = &w->reqs; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            return;
        }
}

/* release what r holds (not r itself) */
static void req_free(struct kp_request_s *r)
{
    unlink_req(r->win, r);
    free(r->tmp);
    free(r->buf);
    r->tmp = r->buf = NULL;
}

/* complete r (the window is entered); test: don't wait for a pack get */
static int complete(struct kp_request_s *r, int test, int *done)
{
    kp_win w = r->win;
    int rc = KP_SUCCESS;
    *done = 0;
    switch (r->method) {
    case KP_M_DATATYPE:
        if (test) {
            int f = 0;
            if (MPI_Test(&r->mreq, &f, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return kp_error(KP_ERR_MPI, "kp_test: MPI_Test failed");
            if (!f)
                return kp_strided_progress(w);
        } else if (MPI_Wait(&r->mreq, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            return kp_error(KP_ERR_MPI, "kp_wait: MPI_Wait failed");
        }
        /* then flush for remote completion (issue order) */
        __attribute__((fallthrough));
    case KP_M_DIRECT:
        if (r->copied) { /* by load/store: complete when it returned */
            *done = 1;
            break;
        }
        if ((rc = kp_data_flush(w, r->target, "strided")) != KP_SUCCESS)
            return rc;
        *done = 1;
        break;
    default: { /* pack */
        unsigned spins = 0;
        while (rc == KP_SUCCESS && !r->done) {
            rc = kp_strided_progress(w);
            if (test || r->done)
                break;
            kp_strided_idle(w, &spins);
        }
        *done = r->done;
        break;
    }
    }
    return rc;
}

static int start(kp_strided_op *op, const char *fn, kp_win win, const void *lbase, const MPI_Aint lstride[],
                 MPI_Aint rdisp, const MPI_Aint rstride[], const MPI_Aint count[], int levels, int target,
                 kp_request *reqp)
{
    if (reqp)
        *reqp = KP_REQUEST_NULL;
    int rc = validate(op, fn, win, lbase, lstride, rdisp, rstride, count, levels, target);
    if (rc)
        return rc;
    int m = kp_strided_forced();
    if (m < 0)
        return kp_error(KP_ERR_PARAM, "KPORT_STRIDED_METHOD=\"%s\" is not direct, datatype, pack or auto",
                        getenv("KPORT_STRIDED_METHOD"));
    kp_win_enter(win);
    win->cnt.calls++;
    rc = kp_strided_progress(win);
    if (rc || op->sd.total == 0) {
        kp_win_leave(win);
        return rc;
    }
    if (m == KP_M_AUTO)
        m = kp_strided_choose(win, op);
    last_method = kp_strided_method_name(m);
    rc = order_before(win, op, m, fn);
    /* a blocking call's request lives on the stack */
    struct kp_request_s local, *r = &local;
    if (reqp) {
        r = calloc(1, sizeof(*r));
        if (!r) {
            kp_win_leave(win);
            return kp_error(KP_ERR_NOMEM, "%s: out of memory", fn);
        }
    } else {
        memset(r, 0, sizeof(*r));
    }
    r->win = win;
    r->kind = op->kind;
    r->method = m;
    r->target = target;
    r->mreq = MPI_REQUEST_NULL;
    if (rc == KP_SUCCESS) {
        if (m == KP_M_DIRECT)
            rc = kp_direct_start(win, op, r);
        else if (m == KP_M_DATATYPE)
            rc = kp_datatype_start(win, op, r);
        else
            rc = kp_pack_start(win, op, r);
    }
    if (rc == KP_SUCCESS) { /* what may still be overtaken (the head of this file) */
        const int64_t lo = op->rdisp, hi = op->rdisp + op->rside.extent;
        const int kind = op->kind;
        if (m == KP_M_PACK && kind != KP_SD_GET)
            rc = pend_add(win, target, kind == KP_SD_PUT ? KP_PD_PACK_PUT : KP_PD_PACK_ACC, lo, hi);
        else if (m != KP_M_PACK && !r->copied && reqp)
            rc = pend_add(win, target,
                          kind == KP_SD_PUT   ? KP_PD_MPI_PUT
                          : kind == KP_SD_GET ? KP_PD_MPI_GET
                                               : KP_PD_MPI_ACC,
                          lo, hi);
    }
    if (rc == KP_SUCCESS && !reqp) {
        int done;
        rc = complete(r, 0, &done);
    }
    if (rc || !reqp) {
        req_free(r);
        if (r != &local)
            free(r);
    } else {
        *reqp = r;
    }
    kp_win_leave(win);
    return rc;
}

#define PUT_INIT(k)                                                                                                  \
    kp_strided_op op;                                                                                                        \
    memset(&op, 0, sizeof(op));                                                                                      \
    op.kind = (k)

int kp_put_strided(const void *src, const MPI_Aint src_stride[], MPI_Aint dst_disp, const MPI_Aint dst_stride[],
                   const MPI_Aint count[], int levels, int target, kp_win win)
{
    PUT_INIT(KP_SD_PUT);
    return start(&op, "kp_put_strided", win, src, src_stride, dst_disp, dst_stride, count, levels, target, NULL);
}

int kp_iput_strided(const void *src, const MPI_Aint src_stride[], MPI_Aint dst_disp, const MPI_Aint dst_stride[],
                    const MPI_Aint count[], int levels, int target, kp_win win, kp_request *req)
{
    if (!req)
        return kp_error(KP_ERR_ARG, "kp_iput_strided: req is NULL");
    PUT_INIT(KP_SD_PUT);
    return start(&op, "kp_iput_strided", win, src, src_stride, dst_disp, dst_stride, count, levels, target, req);
}

int kp_get_strided(void *dst, const MPI_Aint dst_stride[], MPI_Aint src_disp, const MPI_Aint src_stride[],
                   const MPI_Aint count[], int levels, int target, kp_win win)
{
    PUT_INIT(KP_SD_GET);
    return start(&op, "kp_get_strided", win, dst, dst_stride, src_disp, src_stride, count, levels, target, NULL);
}

int kp_iget_strided(void *dst, const MPI_Aint dst_stride[], MPI_Aint src_disp, const MPI_Aint src_stride[],
                    const MPI_Aint count[], int levels, int target, kp_win win, kp_request *req)
{
    if (!req)
        return kp_error(KP_ERR_ARG, "kp_iget_strided: req is NULL");
    PUT_INIT(KP_SD_GET);
    return start(&op, "kp_iget_strided", win, dst, dst_stride, src_disp, src_stride, count, levels, target, req);
}

int kp_acc_strided(enum kp_acc_type type, const void *scale, const void *src, const MPI_Aint src_stride[],
                   MPI_Aint dst_disp, const MPI_Aint dst_stride[], const MPI_Aint count[], int levels, int target,
                   kp_win win)
{
    PUT_INIT(KP_SD_ACC);
    op.acc_type = (int)type;
    op.scale = scale;
    return start(&op, "kp_acc_strided", win, src, src_stride, dst_disp, dst_stride, count, levels, target, NULL);
}

int kp_iacc_strided(enum kp_acc_type type, const void *scale, const void *src, const MPI_Aint src_stride[],
                    MPI_Aint dst_disp, const MPI_Aint dst_stride[], const MPI_Aint count[], int levels, int target,
                    kp_win win, kp_request *req)
{
    if (!req)
        return kp_error(KP_ERR_ARG, "kp_iacc_strided: req is NULL");
    PUT_INIT(KP_SD_ACC);
    op.acc_type = (int)type;
    op.scale = scale;
    return start(&op, "kp_iacc_strided", win, src, src_stride, dst_disp, dst_stride, count, levels, target, req);
}

int kp_wait(kp_request *req)
{
    if (!req)
        return kp_error(KP_ERR_ARG, "kp_wait: req is NULL");
    if (*req == KP_REQUEST_NULL)
        return KP_SUCCESS;
    struct kp_request_s *r = *req;
    kp_win_enter(r->win);
    int done = 0;
    int rc = complete(r, 0, &done);
    kp_win w = r->win;
    req_free(r);
    free(r);
    *req = KP_REQUEST_NULL;
    kp_win_leave(w);
    return rc;
}

int kp_test(kp_request *req, int *done)
{
    if (!req || !done)
        return kp_error(KP_ERR_ARG, "kp_test: req or done is NULL");
    *done = 0;
    if (*req == KP_REQUEST_NULL) {
        *done = 1;
        return KP_SUCCESS;
    }
    struct kp_request_s *r = *req;
    kp_win w = r->win;
    kp_win_enter(w);
    int rc = complete(r, 1, done);
    if (*done || rc) {
        req_free(r);
        free(r);
        *req = KP_REQUEST_NULL;
        if (rc)
            *done = 1;
    }
    kp_win_leave(w);
    return rc;
}
