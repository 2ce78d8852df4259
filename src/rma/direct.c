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
 * Accumulate: target += scale * source. With scale 1 the chunks go from the
 * origin buffer; otherwise the section is first packed and scaled into a
 * temporary buffer that lives until completion (what ARMCI-MPI does too).
 * Chunks above 1 GiB are split (MPI counts are ints).
 */
#include "rma/rma.h"

#include "core/core.h"

#include <stdlib.h>
#include <string.h>

#define PART ((int64_t)1 << 30)

int kp_direct_start(kp_win w, const kp_rma_op *op, struct kp_request_s *req)
{
    const kp_sd *sd = &op->sd;
    const int T = op->target;
    const char *src = op->lbase;
    int lcontig = 0; /* origin data as a packed stream (scaled accumulate) */
    if (op->kind == KP_RMA_ACC) {
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
            if (op->kind == KP_RMA_PUT)
                e = MPI_Put(lp + done, (int)part, MPI_BYTE, T, rd + done, (int)part, MPI_BYTE, w->win);
            else if (op->kind == KP_RMA_GET)
                e = MPI_Get((char *)lp + done, (int)part, MPI_BYTE, T, rd + done, (int)part, MPI_BYTE, w->win);
            else
                e = MPI_Accumulate(lp + done, (int)(part / op->esize), op->etype, T, rd + done,
                                   (int)(part / op->esize), op->etype, MPI_SUM, w->win);
            if (e != MPI_SUCCESS)
                return kp_error(KP_ERR_MPI, "strided direct: MPI operation on chunk %lld to rank %d failed",
                                (long long)c, T);
            done += part;
        }
        for (int i = 1; i <= sd->levels; i++) { /* odometer over both sides */
            if (++idx[i] < sd->count[i]) {
                loff += op->lside.stride[i - 1];
                roff += op->rside.stride[i - 1];
                break;
            }
            loff -= (sd->count[i] - 1) * op->lside.stride[i - 1];
            roff -= (sd->count[i] - 1) * op->rside.stride[i - 1];
            idx[i] = 0;
        }
    }
    req->done = 0; /* completed by a flush (kp_wait) */
    return KP_SUCCESS;
}
