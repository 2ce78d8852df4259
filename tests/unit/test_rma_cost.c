/*
 * The strided cost model (src/strided/auto.c) against costs computed by hand
 * from docs/PARAMETERS.md's formulas, with round parameters:
 *   t0 = 1000, ts = 100, tn = 0.5, tm = 0.25, tc = 2, tp = 3000,
 *   td0 = 2000, td1 = 10, tdn = 1, ta0 = 1500, tsa = 300, tna = 0.75,
 *   tda0 = 2500, tda1 = 20, tdna = 0.125, tdnb = 2, tpn = 0.5, tpg = 4000,
 *   tpgn = 0.625, tpc = 5, tl0 = 200, tls = 5, tln = 0.25, tla0 = 300,
 *   tlas = 8, tlan = 0.0625; slots of 64 KiB;
 * and kp_strided_choose's pick: the cheapest method, direct for one chunk, no
 * datatype where a count does not fit an int, on a shared window (load/store)
 * direct puts and gets priced by tl0, tls, tln and accumulates by tla0, tlas, tlan, the accumulate knee
 * (KP_SD_KNEE) moving a 2 MiB accumulate from datatype to direct, and
 * the built-in defaults finite and >= 0, the costs every call pays > 0.
 * No MPI communication.
 */
#include "strided/strided.h"

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void near(double got, double want, const char *what)
{
    CHECK(fabs(got - want) <= 1e-9 * fmax(1, fabs(want)), "%s: got %.6f, want %.6f", what, got, want);
}

static void same(int got, int want, const char *what)
{
    CHECK(got == want, "%s: got %s, want %s", what, kp_strided_method_name(got), kp_strided_method_name(want));
}

static kp_strided_op op_of(int kind, int64_t chunk, int64_t rows)
{
    kp_strided_op op;
    memset(&op, 0, sizeof(op));
    op.kind = kind;
    op.sd.levels = 1;
    op.sd.count[0] = chunk;
    op.sd.count[1] = rows;
    op.sd.nchunks = rows;
    op.sd.total = chunk * rows;
    return op;
}

int main(void)
{
    static struct kp_win_s w; /* only par, slot_bytes and the memo are read */
    const double par[KP_SP_COUNT] = {
        [KP_SP_T0] = 1000,  [KP_SP_TS] = 100,   [KP_SP_TN] = 0.5,   [KP_SP_TM] = 0.25,    [KP_SP_TC] = 2,
        [KP_SP_TP] = 3000,  [KP_SP_TD0] = 2000, [KP_SP_TD1] = 10,   [KP_SP_TA0] = 1500,   [KP_SP_TSA] = 300,
        [KP_SP_TNA] = 0.75, [KP_SP_TDA0] = 2500, [KP_SP_TDA1] = 20, [KP_SP_TDN] = 1,      [KP_SP_TDNA] = 0.125,
        [KP_SP_TDNB] = 2,   [KP_SP_TPN] = 0.5,   [KP_SP_TPG] = 4000, [KP_SP_TPGN] = 0.625,
        [KP_SP_TPC] = 5,    [KP_SP_TL0] = 200,   [KP_SP_TLS] = 5,    [KP_SP_TLN] = 0.25,
        [KP_SP_TLA0] = 300, [KP_SP_TLAS] = 8,    [KP_SP_TLAN] = 0.0625,
    };
    memcpy(w.par, par, sizeof(par));
    w.slot_bytes = 65536;
    const int64_t MiB = 1 << 20;

    /* put, 16 chunks of 1 KiB (N = 16384, one slot):
     *   direct   1000 + 15*100 + 0.5*16384                 = 10692
     *   datatype 2000 + 15*10 + 1*16384                     = 18534
     *   pack     1*3000 + 0.5*16384 + 5*16                  = 11272 */
    near(kp_strided_cost(&w, KP_M_DIRECT, KP_SD_PUT, 16, 16384), 10692, "put direct 16 x 1 KiB");
    near(kp_strided_cost(&w, KP_M_DATATYPE, KP_SD_PUT, 16, 16384), 18534, "put datatype 16 x 1 KiB");
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_PUT, 16, 16384), 11272, "put pack 16 x 1 KiB");
    /* pack, 1000 chunks of 100 B (N = 100000, two slots): a get pays tpg
     * per slot and tpgn per byte, a put tp and tpn; the chunks tpc each:
     *   get 2*4000 + 0.625*100000 + 5*1000 = 75500
     *   put 2*3000 + 0.5*100000 + 5*1000   = 61000 */
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_GET, 1000, 100000), 75500, "get pack 1000 x 100 B");
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_PUT, 1000, 100000), 61000, "put pack 1000 x 100 B");
    /* tm is the accumulate's alone (below): put and get do not read it */
    w.par[KP_SP_TM] = 100;
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_PUT, 1000, 100000), 61000, "put pack ignores tm");
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_GET, 1000, 100000), 75500, "get pack ignores tm");
    w.par[KP_SP_TM] = par[KP_SP_TM];
    /* and tc (the local copy's, the accumulate's per chunk) neither */
    w.par[KP_SP_TC] = 100;
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_PUT, 1000, 100000), 61000, "put pack ignores tc");
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_GET, 1000, 100000), 75500, "get pack ignores tc");
    w.par[KP_SP_TC] = par[KP_SP_TC];
    /* accumulate, 1000 x 100 B:
     *   direct   1500 + 999*300 + 0.75*100000                = 376200
     *   datatype 2500 + 999*20 + 0.125*100000 (below the knee) = 34980
     *   pack     2*3000 + 0.75*100000 + 2*(25000 + 2000) + 1000*300 = 435000 */
    near(kp_strided_cost(&w, KP_M_DIRECT, KP_SD_ACC, 1000, 100000), 376200, "acc direct 1000 x 100 B");
    near(kp_strided_cost(&w, KP_M_DATATYPE, KP_SD_ACC, 1000, 100000), 34980, "acc datatype 1000 x 100 B");
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_ACC, 1000, 100000), 435000, "acc pack 1000 x 100 B");
    /* the knee: exactly KP_SD_KNEE pays no tdnb; 2 MiB pays it on 1 MiB
     *   512 x 2 KiB = 1 MiB: 2500 + 511*20 + 0.125*1048576         = 143792
     *   512 x 4 KiB = 2 MiB: 2500 + 511*20 + 0.125*2097152 + 2*1048576 = 2372016 */
    near(kp_strided_cost(&w, KP_M_DATATYPE, KP_SD_ACC, 512, MiB), 143792, "acc datatype 512 x 2 KiB");
    near(kp_strided_cost(&w, KP_M_DATATYPE, KP_SD_ACC, 512, 2 * MiB), 2372016, "acc datatype 512 x 4 KiB");
    /* put/get never pay tdnb: 2000 + 511*10 + 2097152 = 2104262 */
    near(kp_strided_cost(&w, KP_M_DATATYPE, KP_SD_PUT, 512, 2 * MiB), 2104262, "put datatype 512 x 4 KiB");

    /* the choice: the cheapest of the three costs above */
    kp_strided_op op = op_of(KP_SD_PUT, 1024, 16);
    same(kp_strided_choose(&w, &op), KP_M_DIRECT, "put 16 x 1 KiB");
    op = op_of(KP_SD_ACC, 100, 1000);
    same(kp_strided_choose(&w, &op), KP_M_DATATYPE, "acc 1000 x 100 B");
    /* 512 x 2 KiB: direct 1500 + 511*300 + 0.75*1048576 = 941232 against
     * datatype 143792; 512 x 4 KiB: direct 1727664 against 2372016 */
    op = op_of(KP_SD_ACC, 2048, 512);
    same(kp_strided_choose(&w, &op), KP_M_DATATYPE, "acc 512 x 2 KiB (at the knee)");
    op = op_of(KP_SD_ACC, 4096, 512);
    same(kp_strided_choose(&w, &op), KP_M_DIRECT, "acc 512 x 4 KiB (beyond the knee)");
    /* one chunk: direct, whatever the costs say */
    op = op_of(KP_SD_ACC, 100, 1);
    same(kp_strided_choose(&w, &op), KP_M_DIRECT, "acc one chunk");
    /* cheap packing wins (auto remembers its choice per (kind, k, N), so
     * the memo is cleared after the parameters change) */
    w.par[KP_SP_TP] = 0;
    w.par[KP_SP_TPN] = 0;
    w.par[KP_SP_TPC] = 0;
    memset(w.memo, 0, sizeof(w.memo));
    op = op_of(KP_SD_PUT, 1024, 16);
    same(kp_strided_choose(&w, &op), KP_M_PACK, "put 16 x 1 KiB, free packing");
    /* load/store (a shared window): put and get 1000 x 100 B by direct
     *   200 + 999*5 + 0.25*100000 = 30195 (against pack's 61000 and 75500:
     *   the same shape packs without load/store, direct costing
     *   1000 + 999*100 + 0.5*100000 = 150900); accumulate 1000 x 100 B by
     *   direct 300 + 999*8 + 0.0625*100000 = 14542 against datatype's
     *   2500 + 999*20 + 0.125*100000 = 34980 (without load/store direct
     *   costs 1500 + 999*300 + 0.75*100000 = 376200, and datatype wins);
     *   pack's agent adds each run by load/store: 2*3000 + 0.0625*100000 +
     *   2*(0.25*100000 + 2*1000) + 1000*8 = 74250 (by MPI_Accumulate
     *   2*3000 + 0.75*100000 + 54000 + 1000*300 = 435000) */
    memcpy(w.par, par, sizeof(par));
    memset(w.memo, 0, sizeof(w.memo));
    op = op_of(KP_SD_PUT, 100, 1000);
    same(kp_strided_choose(&w, &op), KP_M_PACK, "put 1000 x 100 B, MPI operations");
    near(kp_strided_cost(&w, KP_M_DIRECT, KP_SD_PUT, 1000, 100000), 150900, "put direct 1000 x 100 B");
    near(kp_strided_cost(&w, KP_M_DIRECT, KP_SD_ACC, 1000, 100000), 376200, "acc direct 1000 x 100 B");
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_ACC, 1000, 100000), 435000, "acc pack 1000 x 100 B");
    op = op_of(KP_SD_ACC, 100, 1000);
    same(kp_strided_choose(&w, &op), KP_M_DATATYPE, "acc 1000 x 100 B, MPI operations");
    w.loadstore = 1;
    memset(w.memo, 0, sizeof(w.memo));
    near(kp_strided_cost(&w, KP_M_DIRECT, KP_SD_PUT, 1000, 100000), 30195, "put direct 1000 x 100 B, load/store");
    near(kp_strided_cost(&w, KP_M_DIRECT, KP_SD_GET, 1000, 100000), 30195, "get direct 1000 x 100 B, load/store");
    near(kp_strided_cost(&w, KP_M_DIRECT, KP_SD_ACC, 1000, 100000), 14542, "acc direct 1000 x 100 B, load/store");
    near(kp_strided_cost(&w, KP_M_DATATYPE, KP_SD_ACC, 1000, 100000), 34980, "acc datatype 1000 x 100 B, shared window");
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_ACC, 1000, 100000), 74250, "acc pack 1000 x 100 B, shared window");
    near(kp_strided_cost_par(par, 65536, 1, KP_M_DIRECT, KP_SD_ACC, 1, 8), 300.5, "acc direct 1 x 8 B, load/store");
    near(kp_strided_cost(&w, KP_M_PACK, KP_SD_PUT, 1000, 100000), 61000, "put pack 1000 x 100 B, shared window");
    near(kp_strided_cost_par(par, 65536, 1, KP_M_DIRECT, KP_SD_PUT, 1, 8), 202, "put direct 1 x 8 B, load/store");
    op = op_of(KP_SD_PUT, 100, 1000);
    same(kp_strided_choose(&w, &op), KP_M_DIRECT, "put 1000 x 100 B, load/store");
    op = op_of(KP_SD_GET, 100, 1000);
    same(kp_strided_choose(&w, &op), KP_M_DIRECT, "get 1000 x 100 B, load/store");
    op = op_of(KP_SD_ACC, 100, 1000);
    same(kp_strided_choose(&w, &op), KP_M_DIRECT, "acc 1000 x 100 B, load/store");
    w.loadstore = 0;
    /* a count beyond an int: no datatype even where it is cheapest */
    memcpy(w.par, par, sizeof(par));
    memset(w.memo, 0, sizeof(w.memo));
    op = op_of(KP_SD_ACC, 8, (int64_t)1 << 31);
    same(kp_strided_choose(&w, &op), KP_M_DIRECT, "acc 2^31 x 8 B (datatype cannot describe it)");

    /* the built-in defaults: every field finite and >= 0, the fixed and
     * per-byte costs every call pays above 0 */
    kp_strided_params_default(&w);
    for (int i = 0; i < KP_SP_COUNT; i++)
        CHECK(isfinite(w.par[i]) && w.par[i] >= 0, "default %s = %g", kp_strided_param_names[i], w.par[i]);
    const int paid[] = {KP_SP_T0,  KP_SP_TD0, KP_SP_TA0, KP_SP_TDA0, KP_SP_TN,  KP_SP_TNA,
                        KP_SP_TDN, KP_SP_TDNA, KP_SP_TP, KP_SP_TPN, KP_SP_TPG, KP_SP_TPGN, KP_SP_TPC};
    for (size_t i = 0; i < sizeof(paid) / sizeof(paid[0]); i++)
        CHECK(w.par[paid[i]] > 0, "default %s = %g, a cost every call pays", kp_strided_param_names[paid[i]],
              w.par[paid[i]]);
    w.loadstore = 1; /* a shared window's defaults */
    kp_strided_params_default(&w);
    for (int i = 0; i < KP_SP_COUNT; i++)
        CHECK(isfinite(w.par[i]) && w.par[i] >= 0, "shared default %s = %g", kp_strided_param_names[i], w.par[i]);
    CHECK(w.par[KP_SP_TL0] > 0 && w.par[KP_SP_TLN] > 0, "shared defaults tl0 = %g, tln = %g", w.par[KP_SP_TL0],
          w.par[KP_SP_TLN]);
    CHECK(w.par[KP_SP_TLA0] > 0 && w.par[KP_SP_TLAN] > 0, "shared defaults tla0 = %g, tlan = %g",
          w.par[KP_SP_TLA0], w.par[KP_SP_TLAN]);
    printf("unit_rma_cost: %ld checks, %ld failed\n", checks, fails);
    return fails != 0;
}
