/*
 * The calibrated default choice's core, kp_model_pick (src/select/calibrate.c),
 * against fixed machine descriptions whose answer is known by hand:
 *   - single copy made ruinous (a 10 ms system call): two-copy everywhere;
 *   - copies through the segment made ruinous (10 ms each) and single copy
 *     free: single copy everywhere;
 *   - for a realistic machine, the pick is single copy exactly where the
 *     model's own prediction of it is KP_PICK_MARGIN times below the two
 *     copies' (so KPORT_VERBOSE's printed costs and the choice never
 *     disagree), and the choice flips
 *     at most once from two-copy to single copy as the size grows (the
 *     single copy's fixed cost is amortised, its per-byte cost lower).
 * For all-gather, all-to-all and gather on one node of 2 and 4 ranks.
 */
#include "core/core.h"
#include "model/model.h"

#include <stdio.h>
#include <string.h>

static int npass, nfail, npick_sc;

static void expect(int ok, const char *what, int coll, int P, long long bytes, const char *got)
{
    if (ok) {
        npass++;
        return;
    }
    nfail++;
    if (nfail < 20)
        fprintf(stderr, "FAIL: %s (coll %d, P=%d, bytes=%lld): picked %s\n", what, coll, P, bytes, got);
}

static void machine(kp_machine *m, double peer_fixed, double copy_fixed, double copy_byte)
{
    kp_params_init(m);
    m->intra.piece[0] = (kp_loggp){.max_bytes = -1, .L = 0, .o_s = 100, .o_r = 120, .g = 120, .G = 0.05, .O = 0};
    m->inter = m->intra;
    m->flag = (kp_linear){.fixed = 60, .per_byte = 0};
    m->copy_in = m->copy_out = (kp_linear){.fixed = copy_fixed, .per_byte = copy_byte};
    m->memcpy_ = (kp_linear){.fixed = 10, .per_byte = 0.015};
    m->peer_read = m->peer_write = (kp_linear){.fixed = peer_fixed, .per_byte = 0.06};
    m->hockney_intra = m->hockney_inter = (kp_linear){.fixed = 500, .per_byte = 0.05};
}

static double predict(const kp_machine *m, int coll, const char *name, const kp_layout *L, int P, long long b)
{
    const kp_algo *a = kp_algo_find(coll, name);
    kp_model_result r;
    memset(&r, 0, sizeof(r));
    if (!a || kp_model_predict(m, a, &a->defaults, L, P, b, 0, 0, &r) || r.refused)
        return -1;
    return r.time_ns;
}

int main(void)
{
    const int colls[3] = {KP_COLL_ALLGATHER, KP_COLL_ALLTOALL, KP_COLL_GATHER};
    for (int P = 2; P <= 4; P += 2) {
        int ids[4] = {0, 0, 0, 0};
        kp_layout L;
        if (kp_layout_init(&L, P, ids, 1))
            return 2;
        for (int ci = 0; ci < 3; ci++) {
            const int coll = colls[ci];
            const char *flat = coll == KP_COLL_GATHER ? "smp" : "shm_flat";
            kp_machine slow_sc, slow_copy, real;
            machine(&slow_sc, 1e7, 20, 0.04);
            machine(&slow_copy, 0, 1e7, 0.04);
            machine(&real, 500, 20, 0.04);
            int flips = 0, prev_sc = 0;
            for (long long b = 1; b <= (1 << 20); b *= 4) {
                kp_choice ch;
                memset(&ch, 0, sizeof(ch));
                int ok = kp_model_pick(&slow_sc, coll, &L, P, b, 0, 0, &ch);
                expect(ok && strcmp(ch.algo->name, flat) == 0, "ruinous single copy -> two-copy", coll, P, b,
                       ok ? ch.algo->name : "nothing");
                ok = kp_model_pick(&slow_copy, coll, &L, P, b, 0, 0, &ch);
                expect(ok && strcmp(ch.algo->name, "shm_single_copy") == 0, "ruinous copies -> single copy", coll,
                       P, b, ok ? ch.algo->name : "nothing");
                ok = kp_model_pick(&real, coll, &L, P, b, 0, 0, &ch);
                const double tf = predict(&real, coll, flat, &L, P, b),
                             ts = predict(&real, coll, "shm_single_copy", &L, P, b);
                const char *want = ts >= 0 && (tf < 0 || ts * KP_PICK_MARGIN < tf) ? "shm_single_copy" : flat;
                expect(ok && tf >= 0 && ts >= 0 && strcmp(ch.algo->name, want) == 0,
                       "pick = single copy iff 1.15x cheaper", coll, P, b, ok ? ch.algo->name : "nothing");
                /* the margin itself: a machine where single copy is a little
                 * cheaper (5 %) keeps the two copies, 30 % cheaper takes it */
                if (tf > 0 && ts > 0 && ts < tf / KP_PICK_MARGIN)
                    npick_sc++;
                if (tf > 0 && ts > 0 && ts < tf && ts * KP_PICK_MARGIN >= tf)
                    expect(ok && strcmp(ch.algo->name, flat) == 0, "within the margin -> two-copy", coll, P, b,
                           ok ? ch.algo->name : "nothing");
                const int sc = ok && strcmp(ch.algo->name, "shm_single_copy") == 0;
                if (b > 1 && sc != prev_sc)
                    flips++;
                prev_sc = sc;
            }
            expect(flips <= 1, "at most one crossover", coll, P, flips, "-");
        }
        kp_layout_free(&L);
    }
    expect(npick_sc > 0, "the realistic machine picks single copy somewhere", 0, 0, npick_sc, "-");
    printf("test_calibrate_pick: %d passed, %d failed\n", npass, nfail);
    return nfail ? 1 : 0;
}
