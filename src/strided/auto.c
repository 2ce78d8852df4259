/*
 * Method "auto": the paper's cost model (section 4) chooses per call.
 *
 *   T_direct   = t0 + k * ts + tn * N                   (equation 1)
 *   T_pack     = n * tp + tpn * N + tpc * k              (equation 2, per piece; a get:
 *                n * tpg + tpgn * N + tpc * k, the caller's wait measured)
 *   T_datatype = td0 + td1 * k + tdn * N                (measured, as the paper's NIC method)
 *
 * k chunks of count[0] bytes, N bytes in all, n = ceil(N / slot bytes)
 * pieces. t0, td0: the whole fixed cost of a one-chunk call by the direct
 * and the datatype method (validation, the operation, its flush: what
 * every call pays, so the two compare like with like); ts: each further
 * MPI operation in the epoch; tn: per byte moved; tm: per byte copied
 * (packing, unpacking), tc: per chunk copied; tp: the whole pack call of
 * one slot (the paper's ts for one packed message plus the flow control);
 * td1, tdn: the datatype method's cost per chunk and per byte (Open MPI
 * copies at memcpy speed, tdn <= tn; MPICH 4.0 packs the datatype and pays
 * about 17 times tn, measured on rows of 1 KiB: its rows of 64-256 KiB
 * move 2-7x faster, where the datatype method does not compete). td0 is
 * a two-chunk call's cost less one chunk's: a one-chunk datatype is
 * contiguous, and auto never runs it. tpn, tpgn:
 * the pack method's put and get per byte as the caller waits for them, up
 * to the fence (packing, the slot writes and the part of the far side's
 * copy that does not overlap them: the target unpacks slot i while the
 * origin packs slot i+1), measured by a pack call of 256 x 1 KiB; tpc: per
 * chunk, the same way (the paper's 2 tc: packing and unpacking it; a pack
 * put of 8 B rows costs MPICH's caller 2.7 tc a chunk), measured with a
 * pack put of 4096 x 8 B; tpg: a whole one-slot pack get (its request, the
 * target's reply). The paper's tn + 2 tm per byte, with a get paying 2 tp
 * a slot, put MPICH's pack 1.3x (put) and 1.5x (get) too high where it
 * competes with direct (docs/PERFORMANCE.md, "The pack method's own
 * per-byte cost").
 * Accumulate has its own direct and datatype costs (ta0, tsa, tna, tda0,
 * tda1, tdna): an MPI_Accumulate per chunk costs 2-3 puts (the target's
 * accumulate lock), and scaling adds per byte; the pack method's agent
 * applies one accumulate per run at the target (k * tsa), and its pack
 * cost keeps the paper's form, n * tp + tna * N + 2 * (tm * N + tc * k).
 * A datatype accumulate pays tdnb more per byte beyond KP_SD_KNEE
 * (strided.h). On a shared window the direct method's puts and gets are
 * copies (tl0, tls, tln) and its accumulates adds under the target's
 * accumulate lock (tla0, tlas, tlan; the pack agent's adds per run and
 * per byte the same).
 *
 * The parameters come from the "rma" object of the parameter file named by
 * KPORT_PARAMS (docs/PARAMETERS.md; written by kport-bench strided
 * --calibrate), else the defaults below (measured on the development
 * machine, 2 ranks of one node, one set for Open MPI 4.1 and one for MPICH
 * 4.0, chosen by the mpi.h kport is compiled with). The choice is
 * local: origins may pick different methods, which is safe (every method
 * keeps the same completion and atomicity rules).
 */
#include "strided/strided.h"

#include "util/env.h"
#include "util/error.h"
#include "params/params.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[KP_M_COUNT] = {"auto", "direct", "datatype", "pack"};

const char *kp_strided_method_name(int m)
{
    return m >= 0 && m < KP_M_COUNT ? names[m] : "?";
}

int kp_strided_method_parse(const char *s)
{
    for (int m = 0; m < KP_M_COUNT; m++)
        if (strcmp(s, names[m]) == 0)
            return m;
    return -1;
}

const char *const kp_strided_param_names[KP_SP_COUNT] = {"t0",  "ts",  "tn",  "tm",   "tc",   "tp",  "td0", "td1",
                                                      "ta0", "tsa", "tna", "tda0", "tda1", "tdn", "tdna", "tdnb",
                                                      "tpn", "tpg", "tpgn", "tpc", "tl0", "tls", "tln",
                                                      "tla0", "tlas", "tlan"};

void kp_strided_params_default(kp_win w)
{
    /* kport-bench strided --calibrate, 2 ranks of the development machine
     * (2 cores), with the MPI kport was compiled against; the median of
     * three calibrations in a quiet minute (docs/PERFORMANCE.md, "The
     * calibration, again"); td0, td1, tdn, tpn, tpgn and tpc since the
     * shapes of session 24 (the median of six and of three), the
     * accumulate's ta0, tsa, tna, tda0, tda1, tdna, tdnb since its
     * vectorized scaling (the median of five; PERFORMANCE.md, "The datatype
     * put's cost per byte, and the accumulate's scaling (session 24)").
     * Two tables: `def` for windows from MPI_Win_allocate or
     * MPI_Win_create, `shd` for shared windows (kp_win_create on one
     * machine; PERFORMANCE.md, "Direct by load/store on one machine"); the
     * tl0, tls, tln of `def` are `shd`'s, read only when a shared window's
     * load/store is used; tla0, tlas, tlan (the accumulate by load/store)
     * the median of five calibrations of session 26 */
#ifdef MPICH_VERSION /* MPICH 4.0 */
    static const double def[KP_SP_COUNT] = {
        [KP_SP_T0] = 872,   [KP_SP_TS] = 126,  [KP_SP_TN] = 0.0503, [KP_SP_TM] = 0.0375,
        [KP_SP_TC] = 2.66,  [KP_SP_TP] = 4708, [KP_SP_TD0] = 1650,  [KP_SP_TD1] = 2.65,
        [KP_SP_TA0] = 981,  [KP_SP_TSA] = 282, [KP_SP_TNA] = 0.187, [KP_SP_TDA0] = 1455,
        [KP_SP_TDA1] = 13.5, [KP_SP_TDN] = 0.864, [KP_SP_TDNA] = 0.210, [KP_SP_TDNB] = 1.24,
        [KP_SP_TPN] = 0.0774, [KP_SP_TPG] = 6222, [KP_SP_TPGN] = 0.0700, [KP_SP_TPC] = 7.09,
        [KP_SP_TL0] = 170,  [KP_SP_TLS] = 1.4, [KP_SP_TLN] = 0.0337,
        [KP_SP_TLA0] = 171, [KP_SP_TLAS] = 1.51, [KP_SP_TLAN] = 0.0336,
    };
    /* a shared window (MPI_Win_allocate_shared; direct puts and gets by
     * load/store): the median of five calibrations of session 25 */
    static const double shd[KP_SP_COUNT] = {
        [KP_SP_T0] = 871,   [KP_SP_TS] = 234,  [KP_SP_TN] = 0.12,  [KP_SP_TM] = 0.0472,
        [KP_SP_TC] = 4.27,  [KP_SP_TP] = 4390, [KP_SP_TD0] = 1470, [KP_SP_TD1] = 1.83,
        [KP_SP_TA0] = 938,  [KP_SP_TSA] = 239, [KP_SP_TNA] = 0.549, [KP_SP_TDA0] = 1310,
        [KP_SP_TDA1] = 14.4, [KP_SP_TDN] = 0.742, [KP_SP_TDNA] = 0.536, [KP_SP_TDNB] = 1.43,
        [KP_SP_TPN] = 0.0799, [KP_SP_TPG] = 5810, [KP_SP_TPGN] = 0.087, [KP_SP_TPC] = 10,
        [KP_SP_TL0] = 170,  [KP_SP_TLS] = 1.4, [KP_SP_TLN] = 0.0337,
        [KP_SP_TLA0] = 171, [KP_SP_TLAS] = 1.51, [KP_SP_TLAN] = 0.0336,
    };
#else /* Open MPI 4.1 (osc/rdma over vader: MPI_Win_allocate, MPI_Win_create) */
    static const double def[KP_SP_COUNT] = {
        [KP_SP_T0] = 251,   [KP_SP_TS] = 29.6, [KP_SP_TN] = 0.036,   [KP_SP_TM] = 0.0438,
        [KP_SP_TC] = 2.63,  [KP_SP_TP] = 991,  [KP_SP_TD0] = 357,    [KP_SP_TD1] = 2.86,
        [KP_SP_TA0] = 321,  [KP_SP_TSA] = 69.4, [KP_SP_TNA] = 0.0545, [KP_SP_TDA0] = 547,
        [KP_SP_TDA1] = 12.9, [KP_SP_TDN] = 0.0240, [KP_SP_TDNA] = 0.0513, [KP_SP_TDNB] = 0.0219,
        [KP_SP_TPN] = 0.0427, [KP_SP_TPG] = 1302, [KP_SP_TPGN] = 0.0357, [KP_SP_TPC] = 6.46,
        [KP_SP_TL0] = 160,  [KP_SP_TLS] = 1.41, [KP_SP_TLN] = 0.0276,
        [KP_SP_TLA0] = 170, [KP_SP_TLAS] = 1.39, [KP_SP_TLAN] = 0.0365,
    };
    /* a shared window: osc/sm instead of osc/rdma, direct puts and gets by
     * load/store; the median of five calibrations of session 25 */
    static const double shd[KP_SP_COUNT] = {
        [KP_SP_T0] = 180,   [KP_SP_TS] = 20.1, [KP_SP_TN] = 0.0283,  [KP_SP_TM] = 0.0469,
        [KP_SP_TC] = 4.27,  [KP_SP_TP] = 912,  [KP_SP_TD0] = 207,    [KP_SP_TD1] = 2.67,
        [KP_SP_TA0] = 239,  [KP_SP_TSA] = 35.9, [KP_SP_TNA] = 0.0514, [KP_SP_TDA0] = 318,
        [KP_SP_TDA1] = 12.7, [KP_SP_TDN] = 0.0243, [KP_SP_TDNA] = 0.0445, [KP_SP_TDNB] = 0.0179,
        [KP_SP_TPN] = 0.047, [KP_SP_TPG] = 1200, [KP_SP_TPGN] = 0.0394, [KP_SP_TPC] = 9.82,
        [KP_SP_TL0] = 160,  [KP_SP_TLS] = 1.41, [KP_SP_TLN] = 0.0276,
        [KP_SP_TLA0] = 170, [KP_SP_TLAS] = 1.39, [KP_SP_TLAN] = 0.0365,
    };
#endif
    memcpy(w->par, w->loadstore ? shd : def, sizeof(def));
}

int kp_strided_params_load(kp_win w, const char *path)
{
    char err[512];
    const int rc = kp_params_load_costs(path, "rma", kp_strided_param_names, KP_SP_COUNT, w->par, err, sizeof(err));
    return rc ? kp_error(rc, "%s", err) : KP_SUCCESS;
}

static int forced = -1; /* -1: not read yet */

int kp_strided_set_method(const char *name)
{
    if (name == NULL) {
        forced = -1;
        return KP_SUCCESS;
    }
    int m = kp_strided_method_parse(name);
    if (m < 0)
        return kp_error(KP_ERR_PARAM, "kp_strided_set_method: \"%s\" is not direct, datatype, pack or auto", name);
    forced = m;
    return KP_SUCCESS;
}

int kp_strided_forced(void)
{
    static int env = -2; /* KPORT_STRIDED_METHOD, read once (-1: invalid) */
    if (forced >= 0)
        return forced;
    if (env == -2) {
        const char *e = getenv("KPORT_STRIDED_METHOD");
        env = (e && *e) ? kp_strided_method_parse(e) : KP_M_AUTO;
    }
    return env;
}

double kp_strided_cost(kp_win w, int m, int kind, int64_t k, int64_t N)
{
    return kp_strided_cost_par(w->par, w->slot_bytes, w->loadstore, m, kind, k, N);
}

double kp_strided_cost_par(const double *p, int64_t slot_bytes, int loadstore, int m, int kind, int64_t k, int64_t N)
{
    const double K = (double)k, B = (double)N;
    const double n = (double)((N + slot_bytes - 1) / slot_bytes);
    const double beyond = N > KP_SD_KNEE ? (double)(N - KP_SD_KNEE) : 0;
    const int acc = kind == KP_SD_ACC;
    const double tn = acc ? (loadstore ? p[KP_SP_TLAN] : p[KP_SP_TNA]) : p[KP_SP_TN];
    switch (m) {
    case KP_M_DIRECT:
        if (loadstore)
            return acc ? p[KP_SP_TLA0] + (K - 1) * p[KP_SP_TLAS] + tn * B
                       : p[KP_SP_TL0] + (K - 1) * p[KP_SP_TLS] + p[KP_SP_TLN] * B;
        return acc ? p[KP_SP_TA0] + (K - 1) * p[KP_SP_TSA] + tn * B : p[KP_SP_T0] + (K - 1) * p[KP_SP_TS] + tn * B;
    case KP_M_DATATYPE:
        return acc ? p[KP_SP_TDA0] + (K - 1) * p[KP_SP_TDA1] + p[KP_SP_TDNA] * B + p[KP_SP_TDNB] * beyond
                   : p[KP_SP_TD0] + (K - 1) * p[KP_SP_TD1] + p[KP_SP_TDN] * B;
    default:
        if (kind == KP_SD_PUT)
            return n * p[KP_SP_TP] + p[KP_SP_TPN] * B + p[KP_SP_TPC] * K;
        if (kind == KP_SD_GET)
            return n * p[KP_SP_TPG] + p[KP_SP_TPGN] * B + p[KP_SP_TPC] * K;
        /* the agent's accumulate per run: an MPI_Accumulate, or (shared
         * window) a row added by load/store */
        return n * p[KP_SP_TP] + tn * B + 2.0 * (p[KP_SP_TM] * B + p[KP_SP_TC] * K) +
               K * (loadstore ? p[KP_SP_TLAS] : p[KP_SP_TSA]);
    }
}

int kp_strided_choose(kp_win w, const kp_strided_op *op)
{
    int64_t k = op->sd.nchunks, N = op->sd.total;
    if (k <= 1)
        return KP_M_DIRECT; /* one contiguous block: one operation */
    int fits = 1;
    for (int i = 0; i <= op->sd.levels; i++)
        fits &= op->sd.count[i] <= 0x7fffffff;
    /* the costs depend on (kind, k, N) only: programs repeat their
     * sections, and three costs with a division each are a sixth of a
     * small call's instructions */
    if (fits)
        for (int e = 0; e < 4; e++)
            if (w->memo[e].k == k && w->memo[e].N == N && w->memo[e].kind == op->kind)
                return w->memo[e].method;
    int best = KP_M_DIRECT;
    double bc = kp_strided_cost(w, KP_M_DIRECT, op->kind, k, N);
    for (int m = KP_M_DATATYPE; m <= KP_M_PACK; m++) {
        if (m == KP_M_DATATYPE && !fits)
            continue;
        double c = kp_strided_cost(w, m, op->kind, k, N);
        if (c < bc) {
            bc = c;
            best = m;
        }
    }
    if (fits) {
        struct kp_strided_memo *e = &w->memo[w->memo_next++ % 4];
        e->k = k;
        e->N = N;
        e->kind = op->kind;
        e->method = best;
    }
    return best;
}
