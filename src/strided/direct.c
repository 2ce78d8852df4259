/*
 * Method "direct": one MPI_Put / MPI_Get / MPI_Accumulate per contiguous
 * chunk (count[0] bytes), all issued inside the window's passive-target
 * epoch and completed together by one MPI_Win_flush (blocking calls) or
 * by kp_wait / kp_test (nonblocking ones).
 *
 * Cost (the paper's equation 1): T_direct = k * ts + tn * N for k chunks of
 * N bytes in all: every chunk pays the per-operation cost ts. Best for
 * few, long chunks; no copies, no help from the target.
 *
 * On a shared window (win.c: every rank on one machine, the data window
 * from MPI_Win_allocate_shared, or the program's own shared window) a put
 * or get is the same walk with memcpy into or out of the target's memory,
 * mapped here, between two MPI_Win_sync (the first makes the target's
 * earlier stores, made visible by its own sync before whatever
 * synchronization ordered the two ranks, visible here; the second makes
 * these stores visible before anything this rank does next): complete at
 * the target when it returns, no MPI operation and no flush. MPI 4.0's
 * MPI_Put of 256 rows of 32 B into such a window took MPICH 9.3 us and
 * Open MPI 0.69; the copies 0.17 and 0.22 (docs/bench/strided/s24/
 * shm-probe.txt). An accumulate adds row by row into the target's memory
 * (kp_acc_add_rows) under the target's accumulate lock (win.c), the lock
 * every kport accumulate into that rank takes on such a window, so
 * accumulates from several origins, whatever their methods, stay
 * element-wise atomic. MPICH 4.0's MPI_Accumulate of 512 rows of 4 KiB
 * took 1264 us there (one per row) or 568-4044 us (one datatype call, as
 * glibc's mmap threshold stands); Open MPI's 121-136 us.
 *
 * Accumulate: target += scale * source. With scale 1 the chunks go from the
 * origin buffer; otherwise the section is first packed and scaled into a
 * temporary buffer that lives until completion (what ARMCI-MPI does too).
 * Chunks above 1 GiB are split (MPI counts are ints).
 */
#include "strided/strided.h"

#include "util/env.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

#define PART ((int64_t)1 << 30)

/* the odometer over both sides' offsets, from level `from` up: the next
 * chunk (from = 1) or the next row of chunks (from = 2) */
static inline void next_chunk(const kp_strided_op *op, int from, int64_t *idx, int64_t *loff, int64_t *roff)
{
    for (int i = from; i <= op->sd.levels; i++) {
        if (++idx[i] < op->sd.count[i]) {
            *loff += op->lside.stride[i - 1];
            *roff += op->rside.stride[i - 1];
            return;
        }
        *loff -= (op->sd.count[i] - 1) * op->lside.stride[i - 1];
        *roff -= (op->sd.count[i] - 1) * op->rside.stride[i - 1];
        idx[i] = 0;
    }
}

/* n <= KP_SMALL_ROW bytes from s to d (not overlapping) without a call:
 * 16-byte moves and one overlapping last move, or two overlapping moves of
 * 8, 4 or 1 bytes (a call to memcpy per 8-byte row cost 4.5 ns a chunk,
 * Open MPI's datatype walk 2.7) */
#define KP_SMALL_ROW 64
#if defined(__GNUC__) || defined(__clang__)
typedef unsigned char kp_v16 __attribute__((vector_size(16)));
#else
typedef struct { uint64_t a, b; } kp_v16;
#endif
#define MOVE(T, d, s)                                                                                                  \
    do {                                                                                                               \
        T v_;                                                                                                          \
        memcpy(&v_, (s), sizeof(T));                                                                                   \
        memcpy((d), &v_, sizeof(T));                                                                                   \
    } while (0)
static inline void copy_small(char *d, const char *s, size_t n)
{
    if (n >= 16) {
        for (size_t i = 0; i + 16 < n; i += 16)
            MOVE(kp_v16, d + i, s + i);
        MOVE(kp_v16, d + n - 16, s + n - 16);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

/* rows chunks of c0 bytes, from s to d, strides ss and ds */
static void copy_rows(char *d, const char *s, int64_t c0, int64_t rows, int64_t ds, int64_t ss, int self)
{
    if (self) { /* to itself: the origin buffer may overlap the target region */
        for (int64_t j = 0; j < rows; j++, d += ds, s += ss)
            memmove(d, s, (size_t)c0);
    } else if (c0 <= KP_SMALL_ROW) {
        for (int64_t j = 0; j < rows; j++, d += ds, s += ss)
            copy_small(d, s, (size_t)c0);
    } else {
        for (int64_t j = 0; j < rows; j++, d += ds, s += ss)
            kp_copy(d, s, (size_t)c0);
    }
}

/* A put, get or accumulate by load/store into or out of the target's
 * mapped window memory: level 1 a loop of rows, the levels above an
 * odometer over both sides, between two MPI_Win_sync. An accumulate adds
 * (target += scale * source) under the target's accumulate lock; into
 * itself its source may overlap the target region, and is then packed
 * first, so that every element adds the source as it was when the call
 * started. */
static int shm_start(kp_win w, const kp_strided_op *op, struct kp_request_s *req)
{
    const kp_sd *sd = &op->sd;
    const int acc = op->kind == KP_SD_ACC, put = op->kind == KP_SD_PUT;
    const int self = op->target == w->rank;
    char *const rbase = w->peer[op->target] + op->rdisp;
    char *lbase = op->lbase, *packed = NULL;
    /* this origin's earlier operations to the target that touch these bytes
     * have taken effect: api.c ordered them before this start */
    const int64_t c0 = sd->count[0], rows = sd->levels > 0 ? sd->count[1] : 1;
    int64_t ls1 = sd->levels > 0 ? op->lside.stride[0] : 0;
    const int64_t rs1 = sd->levels > 0 ? op->rside.stride[0] : 0;
    if (acc && self && lbase < rbase + op->rside.extent && rbase < lbase + op->lside.extent) {
        packed = malloc((size_t)sd->total);
        if (!packed)
            return kp_error(KP_ERR_NOMEM, "strided accumulate: no memory for %lld bytes", (long long)sd->total);
        kp_sd_pack_range(sd, &op->lside, op->lbase, 0, sd->total, packed);
        lbase = packed;
        ls1 = c0;
    }
    int64_t idx[KP_SD_MAXL + 1] = {0};
    int64_t loff = 0, roff = 0;
    if (acc)
        kp_acc_lock(w, op->target);
    MPI_Win_sync(w->win);
    for (int64_t c = 0; c < sd->nchunks; c += rows) {
        char *l = lbase + (packed ? c * c0 : loff);
        if (acc)
            kp_acc_add_rows(op->acc_type, op->scale, rbase + roff, l, c0, rows, rs1, ls1);
        else if (put)
            copy_rows(rbase + roff, l, c0, rows, rs1, ls1, self);
        else
            copy_rows(l, rbase + roff, c0, rows, ls1, rs1, self);
        next_chunk(op, 2, idx, &loff, &roff);
    }
    MPI_Win_sync(w->win);
    if (acc)
        kp_acc_unlock(w, op->target);
    free(packed);
    w->cnt.shm_chunks += sd->nchunks;
    req->copied = 1;
    req->done = 1;
    return KP_SUCCESS;
}

int kp_direct_start(kp_win w, const kp_strided_op *op, struct kp_request_s *req)
{
    if (w->loadstore)
        return shm_start(w, op, req);
    const kp_sd *sd = &op->sd;
    const int T = op->target;
    const char *src = op->lbase;
    int lcontig = 0; /* origin data as a packed stream (scaled accumulate) */
    if (op->kind == KP_SD_ACC) {
        char *tmp = NULL;
        int rc = kp_acc_scaled_stream(op, &tmp);
        if (rc)
            return rc;
        if (tmp) {
            req->tmp = tmp;
            src = tmp;
            lcontig = 1;
        }
    }
    int64_t idx[KP_SD_MAXL + 1] = {0};
    int64_t loff = 0, roff = 0;
    const int64_t c0 = sd->count[0];
    for (int64_t c = 0; c < sd->nchunks; c++) {
        const char *lp = src + (lcontig ? c * c0 : loff);
        MPI_Aint rd = (MPI_Aint)(op->rdisp + roff);
        for (int64_t done = 0; done < c0;) {
            int64_t part = c0 - done > PART ? PART : c0 - done;
            int e;
            w->cnt.data_ops++;
            if (op->kind == KP_SD_PUT)
                e = MPI_Put(lp + done, (int)part, MPI_BYTE, T, rd + done, (int)part, MPI_BYTE, w->win);
            else if (op->kind == KP_SD_GET)
                e = MPI_Get((char *)lp + done, (int)part, MPI_BYTE, T, rd + done, (int)part, MPI_BYTE, w->win);
            else
                e = MPI_Accumulate(lp + done, (int)(part / op->esize), op->etype, T, rd + done,
                                   (int)(part / op->esize), op->etype, MPI_SUM, w->win);
            if (e != MPI_SUCCESS)
                return kp_error(KP_ERR_MPI, "strided direct: MPI operation on chunk %lld to rank %d failed",
                                (long long)c, T);
            done += part;
        }
        next_chunk(op, 1, idx, &loff, &roff);
    }
    req->done = 0; /* completed by a flush (kp_wait) */
    return KP_SUCCESS;
}
