/*
 * kport-bench loggp: the fits (tools/bench/fit.c does the arithmetic). A
 * channel's LogGP pieces from its points - RTT/2, the exchange, the
 * sender's overhead and the gap split together at protocol changes, the
 * exchange's own slope changes, L, o_s, o_r, g, G, O, X, X2 per piece, the
 * eager limit, Hockney's line - and the shared-memory operations' lines
 * (memcpy with a knee). Why each is fitted so: the manual at the top of
 * loggp.c and the comments below.
 */
#include "loggp.h"

#include <math.h>
#include <string.h>

double lg_clamp0(double v)
{
    return v > 0 && isfinite(v) ? v : 0.0;
}

/* The LogGP pieces of a channel from its points (on A). */
void lg_fit_channel(const lg_opts *o, lg_point *pt, kp_channel *ch, kb_pieces *pcs, kp_linear *hockney,
                    double *scale, int *xs)
{
    double x[LG_MAX_SIZES], y[LG_MAX_SIZES], yg[LG_MAX_SIZES], ys[LG_MAX_SIZES], yr[LG_MAX_SIZES],
        yx[LG_MAX_SIZES], y2[LG_MAX_SIZES];
    int n = o->nsizes;
    for (int i = 0; i < n; i++) {
        x[i] = (double)o->sizes[i];
        y[i] = pt[i].rtt_half;
        yg[i] = pt[i].gap;
        ys[i] = pt[i].o_s;
        yr[i] = pt[i].o_r;
        yx[i] = pt[i].xchg;
        y2[i] = pt[i].xchg2 - pt[i].xchg; /* what the second message each way adds */
    }
    /* the pieces fit RTT/2, the exchange, the sender's overhead and the
     * gap together: Open MPI's fast boxes end at 256 B, where o_s and g
     * triple and the exchange grows 1.4x while RTT/2 moves 8 %; pieces of
     * RTT/2 alone put that boundary at 64, 128 or 256 B from run to run,
     * and a 256 B message was priced by the 512 B-2 KiB regime's lines in
     * some (a 256 B exchange 1.15x, two of them 1.38x the measurement) */
    const double *series[] = {y, yx, ys, yg};
    kb_fit_pieces_multi(x, series, 4, n, 3, 3.0, 0.03, KP_MAX_PIECES < KB_MAX_PIECES ? KP_MAX_PIECES : KB_MAX_PIECES,
                        pcs);
    /* the exchange may change slope where RTT/2 does not (MPICH: a
     * 16 KiB-1 MiB piece whose exchange runs 0.06 ns/B up to 64 KiB and
     * 0.14 above): split such a piece for it */
    kb_split_pieces_for(x, y, yx, n, 3, 0.05, KP_MAX_PIECES < KB_MAX_PIECES ? KP_MAX_PIECES : KB_MAX_PIECES, pcs, xs);
    kb_line h;
    kb_fit_line(x, y, n, &h);
    hockney->fixed = lg_clamp0(h.a);
    hockney->per_byte = lg_clamp0(h.b);
    memset(ch, 0, sizeof(*ch));
    ch->npieces = pcs->npieces;
    for (int p = 0; p < pcs->npieces; p++) {
        int lo = pcs->start[p], hi = pcs->start[p + 1];
        kb_line lg, ls, lr, lx, l2;
        kb_fit_line(x + lo, yx + lo, hi - lo, &lx);
        kb_fit_line(x + lo, y2 + lo, hi - lo, &l2);
        kb_fit_line(x + lo, yg + lo, hi - lo, &lg);
        kb_fit_line(x + lo, ys + lo, hi - lo, &ls);
        kb_fit_line(x + lo, yr + lo, hi - lo, &lr);
        kp_loggp *q = &ch->piece[p];
        q->max_bytes = p + 1 < pcs->npieces ? (int64_t)o->sizes[hi - 1] : -1;
        q->g = lg_clamp0(lg.a);
        /* G at most the latency's slope b: a message is never cheaper per
         * byte than a stream of them (a larger G from the gap's fit is noise) */
        q->G = lg_clamp0(lg.b) < lg_clamp0(pcs->piece[p].b) ? lg_clamp0(lg.b) : lg_clamp0(pcs->piece[p].b);
        q->o_s = lg_clamp0(ls.a);
        q->o_r = lg_clamp0(lr.a);
        q->O = lg_clamp0(pcs->piece[p].b - q->G);
        /* the exchange, measured: what a round that sends to and receives
         * from one peer costs (the model's exchange rule) */
        q->has_x = 1;
        q->X = lg_clamp0(lx.a);
        q->XG = lg_clamp0(lx.b);
        /* and what a second exchange with the same peer in that round adds
         * (two messages each way in flight: MPI overlaps them) */
        q->has_x2 = 1;
        q->X2 = lg_clamp0(l2.a);
        q->X2G = lg_clamp0(l2.b);
        /* one message, o_s + O*s + L + (s-1)*G + o_r, is the fit of RTT(s)/2.
         * Overheads measured larger than that keep their values and L goes
         * negative: the sender's overhead overlaps the transfer (Open MPI's
         * shared-memory sends wait until the receiver has taken the
         * fragment, so o_s holds most of a round trip); a rank that sends
         * and receives at once pays both, as the exchange's time shows.
         * Only where even the overheads alone would make the fit's time
         * negative (never in practice) are they scaled down to it. */
        double a = lg_clamp0(pcs->piece[p].a + q->G);
        scale[p] = 1.0;
        q->L = a - q->o_s - q->o_r;
        if (q->L < -(q->o_s + q->o_r)) {
            scale[p] = 0.0;
            q->o_s = q->o_r = q->L = 0.0;
        }
        for (int i = lo; i < hi; i++)
            pt[i].piece = p;
    }
    /* the eager limit: the first change that is a jump (the next piece's
     * fit at its first size at least 25% above the previous piece's line
     * there: a rendezvous' handshake), not just a change of slope; no
     * jump: every message eager */
    ch->eager_max = -1;
    for (int p = 1; p < pcs->npieces; p++) {
        double xs = x[pcs->start[p]];
        double before = pcs->piece[p - 1].a + pcs->piece[p - 1].b * xs, after = pcs->piece[p].a + pcs->piece[p].b * xs;
        if (before > 0 && after > 1.25 * before) {
            ch->eager_max = (int64_t)o->sizes[pcs->start[p] - 1];
            break;
        }
    }
}

/* The shared-memory operations' lines (on both ranks; rank 0's are kept). */
void lg_fit_shm(const lg_opts *o, shm_result *res)
{
    const int cma = res->cma;
    double x[LG_MAX_SIZES];
    for (int i = 0; i < o->nsizes; i++)
        x[i] = (double)o->sizes[i];
    res->fit[OP_FLAG].fixed = lg_clamp0(res->t[OP_FLAG][0]);
    for (int op = OP_COPY_IN; op < OP_COUNT; op++) {
        if ((op == OP_PEER_READ || op == OP_PEER_WRITE) && !cma)
            continue;
        kb_line l;
        double y[LG_MAX_SIZES];
        memcpy(y, res->t[op], sizeof(y));
        /* relative errors, each measured against at least one flag: a
         * collective of shared-memory steps waits for at least one, so a
         * cost below it cannot matter, while a line through the few-ns
         * copies of small blocks (stores retired into the store buffer,
         * their cache-line transfers paid later) misses the large ones by
         * half; never below 20 ns, about the clock's resolution */
        double fl = res->t[OP_FLAG][0] > 20.0 ? res->t[OP_FLAG][0] : 20.0;
        if (op == OP_MEMCPY) {
            /* a private copy changes slope where its two buffers outgrow
             * the first-level cache: here 0.011 ns/B up to 16 KiB, 0.020
             * at 32-128 KiB, 0.024-0.026 beyond; one line (0.017) priced
             * a 128 KiB copy 13 % under its measured cost and 4-8 KiB ones
             * 30-50 % over (docs/PARAMETERS.md) */
            kb_knee k;
            kb_fit_knee_floor(x, y, o->nsizes, fl, 3, &k);
            res->fit[op].fixed = lg_clamp0(k.a);
            res->fit[op].per_byte = lg_clamp0(k.b);
            if (k.knee > 0) {
                res->fit[op].large_from = (int64_t)k.knee;
                res->fit[op].large_per_byte = k.c;
            }
            continue;
        }
        kb_fit_line_floor(x, y, o->nsizes, fl, &l);
        res->fit[op].fixed = lg_clamp0(l.a);
        res->fit[op].per_byte = lg_clamp0(l.b);
    }
}
