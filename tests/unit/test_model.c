/* Unit tests of the cost model (src/model/model.c): the time of small
 * schedules equals the hand-computed value of the rules in model.c's header,
 * with every step of the arithmetic written out below.
 *
 * The machine (times ns, per-byte ns/byte):
 *   intra: piece 0 (s <= 1024): L=1000 o_s=100 o_r=200 g=300 G=1   O=0.5
 *          piece 1 (above):     L=2000 o_s=400 o_r=500 g=600 G=0.5 O=0
 *   inter: one piece:           L=5000 o_s=100 o_r=100 g=1000 G=2  O=0
 *   shm: flag 50; copy_in 10 + 0.25 s; copy_out 20 + 0.5 s; memcpy 5 + 0.125 s;
 *        peer_read 300 + 0.25 s; peer_write 400 + 0.5 s
 *   hockney: intra 1000 + 1 s, inter 3000 + 2 s
 */
#include "algo/algo.h"
#include "kport.h"
#include "model/model.h"
#include "../unit/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NEAR(x, y) (fabs((x) - (y)) < 1e-6)
#define CHECK_TIME(res, logp, hock)                                                                                \
    do {                                                                                                           \
        CHECK_THAT(NEAR((res).time_ns, logp));                                                                          \
        CHECK_THAT(NEAR((res).hockney_ns, hock));                                                                       \
        if (!NEAR((res).time_ns, logp) || !NEAR((res).hockney_ns, hock))                                           \
            fprintf(stderr, "  got LogGP %.3f (want %.3f), Hockney %.3f (want %.3f)\n", (res).time_ns,            \
                    (double)(logp), (res).hockney_ns, (double)(hock));                                             \
    } while (0)

static kp_machine M;

static void machine(void)
{
    kp_params_init(&M);
    M.intra.npieces = 2;
    M.intra.piece[0] = (kp_loggp){1024, 1000, 100, 200, 300, 1, 0.5, 0, 0, 0, 0, 0, 0};
    M.intra.piece[1] = (kp_loggp){-1, 2000, 400, 500, 600, 0.5, 0, 0, 0, 0, 0, 0, 0};
    M.inter.npieces = 1;
    M.inter.piece[0] = (kp_loggp){-1, 5000, 100, 100, 1000, 2, 0, 0, 0, 0, 0, 0, 0};
    M.flag = (kp_linear){.fixed = 50, .per_byte = 0};
    M.copy_in = (kp_linear){.fixed = 10, .per_byte = 0.25};
    M.copy_out = (kp_linear){.fixed = 20, .per_byte = 0.5};
    M.memcpy_ = (kp_linear){.fixed = 5, .per_byte = 0.125};
    M.peer_read = (kp_linear){.fixed = 300, .per_byte = 0.25};
    M.peer_write = (kp_linear){.fixed = 400, .per_byte = 0.5};
    M.hockney_intra = (kp_linear){.fixed = 1000, .per_byte = 1};
    M.hockney_inter = (kp_linear){.fixed = 3000, .per_byte = 2};
}

static kp_layout one_node(int P)
{
    kp_layout L;
    int *ids = calloc((size_t)P, sizeof(int));
    if (!ids || kp_layout_init(&L, P, ids, 1)) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    free(ids);
    return L;
}

static kp_model_result predict(int coll, const char *spec, const kp_layout *L, int P, int64_t bytes, int root)
{
    const kp_algo *a;
    kp_params prm;
    char err[256];
    kp_model_result res = {0};
    if (kp_algo_parse(coll, spec, &a, &prm, err, sizeof err) != KP_SUCCESS) {
        fprintf(stderr, "%s: %s\n", spec, err);
        exit(2);
    }
    int rc = kp_model_predict(&M, a, &prm, L, P, bytes, root, 0, &res);
    if (rc != KP_SUCCESS)
        fprintf(stderr, "%s P=%d: rc %d: %s\n", spec, P, rc, res.msg);
    CHECK_THAT(rc == KP_SUCCESS && !res.refused);
    return res;
}

/* ring, P = 2, 100 B, every rank its own node (inter).
 * Round 0 of each rank: copy own block, send it, receive the other's.
 *   send: t = max(cpu 0, nic 0) = 0; cpu = 0 + o_s 100 + O 0 = 100; ready 100;
 *         arrival = 100 + L 5000 + (100-1)*G 2 = 5298
 *   copy (memcpy): 5 + 0.125*100 = 17.5 -> cpu 117.5
 *   receive: h = max(5298, 117.5, rx 0) = 5298, + o_r 100 = 5398
 * Hockney: arrival 0 + 3000 + 2*100 = 3200; copy 17.5 < 3200 -> 3200. */
static void test_ring(void)
{
    double ranks[3];
    kp_model_result r = predict(KP_COLL_ALLGATHER, "ring", NULL, 2, 100, 0);
    CHECK_TIME(r, 5398, 3200);
    CHECK_THAT(r.messages == 2 && r.msg_bytes == 200 && r.copies == 2 && r.copy_bytes == 200 && r.max_rounds == 1);
    /* P = 3: round 0 as above (each rank receives one message: 5398); round 1
     * forwards it: t = max(cpu 5398, nic 0 + max(g 1000, 198)) = 5398, ready 5498,
     * arrival 5498 + 5198 = 10696, received 10796 = 2 * 5398.
     * Hockney: 3200, then 3200 + 3200 = 6400. */
    kp_model_result r3 = {.rank_ns = ranks};
    const kp_algo *a = kp_algo_find(KP_COLL_ALLGATHER, "ring");
    kp_params prm = {0};
    CHECK_THAT(kp_model_predict(&M, a, &prm, NULL, 3, 100, 0, 0, &r3) == KP_SUCCESS);
    CHECK_TIME(r3, 10796, 6400);
    CHECK_THAT(NEAR(ranks[0], 10796) && NEAR(ranks[1], 10796) && NEAR(ranks[2], 10796));
    CHECK_THAT(r3.messages == 6 && r3.max_rounds == 2);
}

/* recursive doubling, P = 4, 100 B, one node (intra, piece 0: s <= 1024).
 * Round 0 (100 B, the own block from the send buffer; its copy into the
 *   receive buffer in the same round): t = 0; cpu = o_s 100 + O 0.5*100 =
 *   150 (ready); nic = max(g 300, 99*1) = 300; arrival = 150 + L 1000 + 99 =
 *   1249; copy 5 + 12.5 -> cpu 167.5; receive h = max(1249, 167.5, rx 0) =
 *   1249, + o_r 200 = 1449; rx = 1249 + 300 = 1549
 * Round 1 (200 B): t = max(1449, 300) = 1449; ready = 1449 + 100 + 100 = 1649;
 *   arrival = 1649 + 1000 + 199 = 2848; h = max(2848, 1649, 1549) = 2848 -> 3048
 * Hockney (intra 1000 + s): round 0 max(1000 + 100, copy 17.5) = 1100;
 *   + 1000 + 200 = 2300. */
static void test_recursive_doubling(void)
{
    kp_layout L = one_node(4);
    kp_model_result r = predict(KP_COLL_ALLGATHER, "recursive_doubling", &L, 4, 100, 0);
    CHECK_TIME(r, 3048, 2300);
    CHECK_THAT(r.messages == 8 && r.msg_bytes == 4 * 300 && r.rendezvous == 0);
    kp_layout_free(&L);
}

/* Bruck k = 2, P = 3, 100 B, inter. Round 0 of rank 0: copy to scratch, send
 * to 2, receive from 1, send to 1, receive from 2.
 *   send 1: t = 0, ready 100, nic 1000, arrival 100 + 5198 = 5298
 *   send 2: t = max(cpu 100, nic 1000) = 1000 (the gap g), ready 1100, arrival 6298
 *   copy 17.5 -> cpu 1117.5
 *   every rank receives one first send (5298) and one second send (6298):
 *   h1 = 5298 -> 5398, rx = 5298 + g 1000 = 6298; h2 = max(6298, 5398, 6298) = 6298 -> 6398
 * Round 1: rank 0 copies 300 B (5 + 37.5 = 42.5): 6440.5; ranks 1 and 2 copy
 *   200 B and 100 B (30 + 17.5 = 47.5): 6445.5 = the max.
 * Hockney: both messages arrive at 3200; + 47.5 = 3247.5. */
static void test_bruck(void)
{
    double ranks[3];
    kp_model_result r = {.rank_ns = ranks};
    const kp_algo *a = kp_algo_find(KP_COLL_ALLGATHER, "bruck");
    kp_params prm = {.k = 2};
    CHECK_THAT(kp_model_predict(&M, a, &prm, NULL, 3, 100, 0, 0, &r) == KP_SUCCESS && !r.refused);
    CHECK_TIME(r, 6445.5, 3247.5);
    CHECK_THAT(NEAR(ranks[0], 6440.5) && NEAR(ranks[1], 6445.5) && NEAR(ranks[2], 6445.5));
    CHECK_THAT(r.slowest_rank == 1);
}

/* shm_flat, P = 2 on one node, 100 B (blocks ride in the flag lines).
 * Round 0: copy send -> line (copy_in 10 + 25 = 35), copy send -> recv (memcpy 17.5): 52.5
 * Round 1: post 1 at 52.5; wait for the peer's post 1 (also at 52.5):
 *   max(52.5, 52.5 + flag 50) = 102.5
 * Round 2: copy the peer's line -> recv (copy_out 20 + 50 = 70): 172.5. Hockney the same.
 * shm_single_copy, P = 2, 100 B:
 * Round 0: post 1 at 0; copy 17.5. Round 1: wait for post 1 (at 0): max(17.5, 0 + 50) = 50.
 * Round 2: peer read 300 + 25 = 325: 375. Round 3: post 2 at 375. Round 4: wait: 375 + 50 = 425.
 * smp_direct, P = 2 on one node, 100 B: one node and at most 248 B, so
 * the blocks ride in the flag lines as shm_flat's: 172.5.
 * shm.data_line 40: shm_flat's 100 B blocks ride in the flag lines, but
 * bytes 8..107 of a line reach past its first cache line (bytes 0..63,
 * kp_line_spills), so the copy out pays data_line: 212.5 (172.5 without);
 * so does smp_direct's at 100 B. Blocks of 56 B fit beside the flag: copy
 * in 10 + 14 = 24, memcpy 5 + 7 = 12: 36; wait to 86; copy out 20 + 28 =
 * 48: 134 with or without; 57 B reach byte 64: 24.25 + 12.125 = 36.375,
 * 86.375, + 48.5 = 134.875, + data_line 40 = 174.875.
 * smp_direct, P = 2 on one node, 300 B, copies through the segment:
 * Round 0: copy send -> shm (copy_in 10 + 75) = 85. Round 1: post at 85,
 * the own block send -> recv (memcpy 5 + 37.5) to 127.5, wait: max(127.5,
 * 85 + 50) = 135. Round 2: copy the peer's block shm -> recv (300 B):
 * copy_out 20 + 150 + data_line 40 = 210: 345 (305 without). */
static void test_shm(void)
{
    kp_layout L = one_node(2);
    kp_model_result r = predict(KP_COLL_ALLGATHER, "shm_flat", &L, 2, 100, 0);
    CHECK_TIME(r, 172.5, 172.5);
    CHECK_THAT(r.messages == 0 && r.copies == 6);
    r = predict(KP_COLL_ALLGATHER, "shm_single_copy", &L, 2, 100, 0);
    CHECK_TIME(r, 425, 425);
    for (int dl = 0; dl <= 40; dl += 40) { /* without and with shm.data_line */
        M.data_line = dl;
        r = predict(KP_COLL_ALLGATHER, "shm_flat", &L, 2, 100, 0);
        CHECK_TIME(r, 172.5 + dl, 172.5 + dl);
        r = predict(KP_COLL_ALLGATHER, "smp_direct", &L, 2, 100, 0);
        CHECK_TIME(r, 172.5 + dl, 172.5 + dl);
        r = predict(KP_COLL_ALLGATHER, "shm_flat", &L, 2, 56, 0);
        CHECK_TIME(r, 134, 134);
        r = predict(KP_COLL_ALLGATHER, "shm_flat", &L, 2, 57, 0);
        CHECK_TIME(r, 134.875 + dl, 134.875 + dl);
        r = predict(KP_COLL_ALLGATHER, "smp_direct", &L, 2, 300, 0);
        CHECK_TIME(r, 305 + dl, 305 + dl);
    }
    M.data_line = 0;
    kp_layout_free(&L);
}

/* Rendezvous, hand-built, P = 2 on one node: rank 0 sends s bytes to rank 1
 * in round 0; rank 1 first copies 80000 B (memcpy 5 + 10000 = 10005), then
 * receives in round 1 (posted at 10005).
 * s = 2000 (piece 1, above the eager limit 1024):
 *   ready = 0 + o_s 400 = 400; the request arrives at 400 + L_0 1000 = 1400,
 *   before the receive is posted: departure = max(400, 10005 - 1000) = 9005;
 *   arrival = 9005 + L 2000 + 1999*0.5 = 12004.5 (rank 0 completes then);
 *   rank 1: h = max(12004.5, 10005) = 12004.5, + o_r 500 = 12504.5.
 * s = 1000 (eager): ready = 100 + 0.5*1000 = 600, arrival = 600 + 1000 + 999 = 2599;
 *   rank 1: h = max(2599, cpu 10005) = 10005, + 200 = 10205; rank 0 done at 600.
 * Hockney (no protocol): arrival 1000 + s; rank 1 completes at max(arrival, 10005) = 10005. */
static void late_receiver(int64_t s, double logp, double rank0, int rdv)
{
    kp_layout L = one_node(2);
    kp_sched sc[2];
    for (int r = 0; r < 2; r++) {
        kp_sched_init_coll(&sc[r], KP_COLL_ALLGATHER, r, 2, 80000, 0, 0);
        sc[r].layout = &L;
    }
    kp_sched_send(&sc[0], 1, KP_BUF_SEND, 0, s);
    kp_sched_copy(&sc[1], KP_BUF_SEND, 0, KP_BUF_RECV, 80000, 80000);
    kp_sched_next_round(&sc[1]);
    kp_sched_recv(&sc[1], 0, KP_BUF_RECV, 0, s);
    CHECK_THAT(kp_sched_finish(&sc[0]) == KP_SUCCESS && kp_sched_finish(&sc[1]) == KP_SUCCESS);
    double ranks[2];
    kp_model_result r = {.rank_ns = ranks};
    CHECK_THAT(kp_model_scheds(&M, sc, 2, &r) == KP_SUCCESS);
    CHECK_TIME(r, logp, 10005);
    CHECK_THAT(NEAR(ranks[0], rank0));
    CHECK_THAT(r.rendezvous == rdv);
    for (int i = 0; i < 2; i++)
        kp_sched_free(&sc[i]);
    kp_layout_free(&L);
}

/* An explicit eager limit overrides the first piece's max_bytes (files
 * without one keep that rule, as above).
 * eager_max 4096, s = 2000 (piece 1, now eager): ready = o_s 400 (O 0);
 *   arrival = 400 + L 2000 + 1999*0.5 = 3399.5; rank 0 done at 400 (buffered);
 *   rank 1: h = max(3399.5, cpu 10005) = 10005, + o_r 500 = 10505.
 * eager_max -1 (every message eager): the same. eager_max 500: s = 1000
 *   (piece 0) is rendezvous: ready = 100 + 500 = 600, departure
 *   max(600, 10005 - L_0 1000) = 9005, arrival 9005 + 1000 + 999 = 11004,
 *   rank 1: 11004 + 200 = 11204; rank 0 done at 11004. */
static void test_eager_max(void)
{
    const int64_t saved = M.intra.eager_max;
    M.intra.eager_max = 4096;
    late_receiver(2000, 10505, 400, 0);
    M.intra.eager_max = -1;
    late_receiver(2000, 10505, 400, 0);
    M.intra.eager_max = 500;
    late_receiver(1000, 11204, 11004, 1);
    M.intra.eager_max = saved;
}

/* kport's own cost per call and the benchmark's entry skew: ring, P = 2,
 * 100 B, inter, call.fixed 30, call.skew 70. Rank 0 enters at 0 and starts
 * at 30, rank 1 enters at 70 and starts at 100:
 *   rank 0: send ready 130, arrival at rank 1 130 + 5198 = 5328; copy ->
 *           cpu 147.5; rank 1's message arrives at 200 + 5198 = 5398 ->
 *           5398 + 100 = 5498, less its entry 0: 5498;
 *   rank 1: send ready 200; copy -> 217.5; receive h = 5328 -> 5428, less
 *           its entry 70: 5358.
 *   The time: 5498 (the early rank waits the skew for the late one).
 * Hockney has neither (3200). P = 1: the copy after the fixed cost,
 * 30 + 17.5 = 47.5, no skew (nobody to wait for). */
static void test_call(void)
{
    const kp_callcost saved = M.call;
    M.call = (kp_callcost){.fixed = 30, .skew = 70};
    double ranks[2];
    kp_model_result r = {.rank_ns = ranks};
    const kp_algo *a = kp_algo_find(KP_COLL_ALLGATHER, "ring");
    kp_params prm = {0};
    CHECK_THAT(kp_model_predict(&M, a, &prm, NULL, 2, 100, 0, 0, &r) == KP_SUCCESS);
    CHECK_TIME(r, 5498, 3200);
    CHECK_THAT(NEAR(ranks[0], 5498) && NEAR(ranks[1], 5358));
    r = predict(KP_COLL_ALLGATHER, "ring", NULL, 1, 100, 0);
    CHECK_TIME(r, 47.5, 17.5);
    M.call = saved;
}

/* Overheads that overlap the transfer (L < 0: Open MPI's shared-memory send
 * waits until the receiver took the fragment). One piece: L -300, o_s 400,
 * o_r 200, g 500, G = O = 0; ring, P = 2, 100 B, one node. One message
 * alone takes 400 - 300 + 200 = 300; an exchange pays both overheads:
 *   ready 400, arrival 400 - 300 = 100; copy 17.5 -> cpu 417.5;
 *   receive h = max(100, 417.5) = 417.5, + 200 = 617.5. */
static void test_overlapping_overheads(void)
{
    const kp_channel saved = M.intra;
    M.intra.npieces = 1;
    M.intra.eager_max = KP_EAGER_FIRST_PIECE;
    M.intra.piece[0] = (kp_loggp){-1, -300, 400, 200, 500, 0, 0, 0, 0, 0, 0, 0, 0};
    kp_layout L = one_node(2);
    kp_model_result r = predict(KP_COLL_ALLGATHER, "ring", &L, 2, 100, 0);
    CHECK_TIME(r, 617.5, 1000 + 100);
    kp_layout_free(&L);
    M.intra = saved;
}

/* The exchange rule: a piece with a measured exchange (has_x, X + XG*s) and a
 * round that sends to and receives from one peer. Piece: L -300, o_s 400,
 * o_r 200, g 500, G = O = 0, X 600, XG 0.5; one node.
 * ring, P = 2, 100 B: ready 400 (own = o_s + O*s = 400), arrival 100, copy
 * 17.5 -> cpu 417.5; the exchange X + XG*100 = 650, less own 400 = 250 on
 * the CPU: 417.5 + 250 = 667.5; the message is in at h = max(100, rx 0) =
 * 100, + o_r = 300; completion max(300, 667.5) = 667.5.
 * The same with L +1000: the message's first byte is at rank 0 at 0 +
 * o_s 400 + 1000 = 1400 and in at 1600; the exchange's own bound (X +
 * XG*100 = 650 after both sends began) does not take it in before its
 * first byte: 1400 > 667.5 -> 1400 (1600 without the bound).
 * G 5 ns/B instead (L -300): the bytes take (100 - 1)*5 = 495: arrival 400
 * - 300 + 495 = 595, in at 795 by the one-way rule, but the exchange has
 * it in by 0 + 650 (first byte at 100): max(650, 667.5) = 667.5. As a
 * rendezvous (eager_max 50): departure max(ready 400, posted 0 + 300) =
 * 400, the same arrival 595 and bound: 667.5 (795 without it). With X 300
 * (own 400 > X + XG*100 = 350) the rendezvous send holds the CPU 350 ->
 * copy 367.5; the message by 350: max(350, 367.5) = 367.5 (417.5 if the
 * send held its own 400).
 * concurrent_exchange_split:C=2, P = 2, 100 B: two sends of 50 B to the
 * peer, two receives of 50 B from it (paired in order). Sends: t 0, cpu
 * 400, nic 500, arrival 100; t = max(400, 500) = 500, cpu 900, nic 1000,
 * arrival 600. Two copies of 50 B into scratch, 5 + 6.25 = 11.25 each ->
 * cpu 922.5. Exchange of 50 B: 600 + 25 = 625, less own 400 = 225.
 * Receive 1: h = 100, 100 + 200 = 300; 922.5 + 225 = 1147.5 -> 1147.5,
 * rx = 100 + 500 = 600. Receive 2: h = max(600, 600) = 600, 800;
 * 1147.5 + 225 = 1372.5 -> 1372.5. Round 1: copies 11.25 + 11.25 + 17.5
 * -> 1412.5.
 * ring, P = 3: every round sends to one peer and receives from another, so
 * nothing pairs and the time is the one without X.
 * With the entry skew (rank 1 enters late), ring P = 2, 100 B, L -300:
 *   skew 100: rank 0 ready 400, its message at rank 1 at 100; rank 1 ready
 *   500, its message at rank 0 at 200. Rank 0: copy -> 417.5; h = 200 ->
 *   400; 417.5 + 250 = 667.5 -> 667.5. Rank 1: copy -> 517.5; h = 100 ->
 *   300; 517.5 + 250 = 767.5, less its entry: 667.5. The time 667.5: the
 *   exchange hides the skew (the old rule, time + skew, gave 767.5).
 *   skew 400: rank 1's message reaches rank 0 at 800 - 300 = 500 -> 700 >
 *   667.5: 700 (the skew plus one message, 400 + 300); rank 1: 817.5 + 250
 *   - 400 = 667.5. */
static void test_exchange(void)
{
    const kp_channel saved = M.intra;
    M.intra.npieces = 1;
    M.intra.eager_max = KP_EAGER_FIRST_PIECE;
    M.intra.piece[0] = (kp_loggp){-1, -300, 400, 200, 500, 0, 0, 1, 600, 0.5, 0, 0, 0};
    kp_layout L = one_node(2);
    kp_model_result r = predict(KP_COLL_ALLGATHER, "ring", &L, 2, 100, 0);
    CHECK_TIME(r, 667.5, 1000 + 100);
    r = predict(KP_COLL_ALLGATHER, "concurrent_exchange_split:C=2", &L, 2, 100, 0);
    CHECK_THAT(NEAR(r.time_ns, 1412.5));
    if (!NEAR(r.time_ns, 1412.5))
        fprintf(stderr, "  split exchange: got %.3f, want 1412.5\n", r.time_ns);
    /* a further exchange with the same peer (has_x2, X2 + X2G*s): send 2
     * does not wait for the NIC (t = cpu 400, not nic 500) and holds the
     * CPU at most X2 + X2G*50; receive 2 pays X2 + X2G*50 - own instead of
     * 225. X2 500, X2G 1 (550 > own 400): send 2 at 400, CPU 800, arrival
     * 800 - 300 = 500, nic 500 + 500 = 1000; copies -> 822.5; receive 1:
     * max(300, 822.5 + 225) = 1047.5, rx 600; receive 2: h 600 -> 800;
     * 1047.5 + 150 = 1197.5; + 40 -> 1237.5. X2 100 (150 < own 400): send
     * 2 holds the CPU 150 (400 -> 550; its message still leaves at 800:
     * arrival 500); copies -> 572.5; receive 1: 572.5 + 225 = 797.5;
     * receive 2: 150 - 400 < 0 -> 0: max(800, 797.5) = 800; + 40 -> 840
     * (kport-sim's values too, tests/sim/test_sim.c). Receive 1 is the
     * first exchange with the peer and keeps X. */
    M.intra.piece[0].has_x2 = 1;
    M.intra.piece[0].X2 = 500;
    M.intra.piece[0].X2G = 1;
    r = predict(KP_COLL_ALLGATHER, "concurrent_exchange_split:C=2", &L, 2, 100, 0);
    CHECK_THAT(NEAR(r.time_ns, 1237.5));
    if (!NEAR(r.time_ns, 1237.5))
        fprintf(stderr, "  split, X2 500: got %.3f, want 1237.5\n", r.time_ns);
    M.intra.piece[0].X2 = 100;
    r = predict(KP_COLL_ALLGATHER, "concurrent_exchange_split:C=2", &L, 2, 100, 0);
    CHECK_THAT(NEAR(r.time_ns, 840));
    if (!NEAR(r.time_ns, 840))
        fprintf(stderr, "  split, X2 100: got %.3f, want 840\n", r.time_ns);
    r = predict(KP_COLL_ALLGATHER, "ring", &L, 2, 100, 0); /* one exchange: X2 plays no part */
    CHECK_TIME(r, 667.5, 1000 + 100);
    M.intra.piece[0].has_x2 = 0;
    /* the send's overhead above the exchange (own 400 > X + XG*100 = 350,
     * X 300): ring P = 2: the send holds the CPU 350 (departure still at
     * 400: arrival 100), copy -> 367.5; rest max(0, 350 - 400) = 0:
     * max(300, 367.5) = 367.5 (417.5 without the bound) */
    M.intra.piece[0].X = 300;
    r = predict(KP_COLL_ALLGATHER, "ring", &L, 2, 100, 0);
    CHECK_THAT(NEAR(r.time_ns, 367.5));
    M.intra.piece[0].X = 600;
    M.intra.piece[0].L = 1000;
    r = predict(KP_COLL_ALLGATHER, "ring", &L, 2, 100, 0);
    CHECK_THAT(NEAR(r.time_ns, 1400));
    if (!NEAR(r.time_ns, 1400))
        fprintf(stderr, "  exchange, L 1000: got %.3f, want 1400\n", r.time_ns);
    M.intra.piece[0].L = -300;
    M.intra.piece[0].G = 5;
    static const struct {
        int64_t eager_max;
        int has_x;
        double X, want;
    } gx[] = {{KP_EAGER_FIRST_PIECE, 1, 600, 667.5}, {KP_EAGER_FIRST_PIECE, 0, 600, 795},
              {50, 1, 600, 667.5},                   {50, 0, 600, 795},
              {50, 1, 300, 367.5}};
    for (size_t i = 0; i < sizeof gx / sizeof gx[0]; i++) {
        M.intra.eager_max = gx[i].eager_max;
        M.intra.piece[0].has_x = gx[i].has_x;
        M.intra.piece[0].X = gx[i].X;
        r = predict(KP_COLL_ALLGATHER, "ring", &L, 2, 100, 0);
        CHECK_THAT(NEAR(r.time_ns, gx[i].want) && r.rendezvous == (gx[i].eager_max == 50 ? 2 : 0));
        if (!NEAR(r.time_ns, gx[i].want))
            fprintf(stderr, "  exchange, G 5, case %zu: got %.3f, want %.1f\n", i, r.time_ns, gx[i].want);
    }
    M.intra.eager_max = KP_EAGER_FIRST_PIECE;
    M.intra.piece[0].has_x = 1;
    M.intra.piece[0].X = 600;
    M.intra.piece[0].G = 0;
    M.intra.piece[0].L = -300;
    const kp_callcost call = M.call;
    M.call = (kp_callcost){.fixed = 0, .skew = 100};
    r = predict(KP_COLL_ALLGATHER, "ring", &L, 2, 100, 0);
    CHECK_THAT(NEAR(r.time_ns, 667.5));
    M.call.skew = 400;
    r = predict(KP_COLL_ALLGATHER, "ring", &L, 2, 100, 0);
    CHECK_THAT(NEAR(r.time_ns, 700));
    if (!NEAR(r.time_ns, 700))
        fprintf(stderr, "  exchange with skew 400: got %.3f, want 700\n", r.time_ns);
    M.call = call;
    kp_layout_free(&L);
    M.intra.piece[0].L = -300;
    kp_layout L3 = one_node(3);
    kp_model_result with = predict(KP_COLL_ALLGATHER, "ring", &L3, 3, 100, 0);
    M.intra.piece[0].has_x = 0;
    kp_model_result without = predict(KP_COLL_ALLGATHER, "ring", &L3, 3, 100, 0);
    CHECK_THAT(with.time_ns > 0 && NEAR(with.time_ns, without.time_ns));
    kp_layout_free(&L3);
    M.intra = saved;
}

/* gather direct:k=4 on 5 ranks, 100 B, root 0, inter: four senders, all
 * ready at 100, all arriving at 100 + 5198 = 5298; the root takes them in
 * one after another, g = 1000 apart:
 *   h = 5298, 6298, 7298, 8298; the last completes at 8298 + o_r 100 = 8398.
 * Hockney: all arrive at 3200. */
static void test_gather_fan_in(void)
{
    double ranks[5];
    kp_model_result r = {.rank_ns = ranks};
    const kp_algo *a = kp_algo_find(KP_COLL_GATHER, "direct");
    kp_params prm = {.k = 4};
    CHECK_THAT(kp_model_predict(&M, a, &prm, NULL, 5, 100, 0, 0, &r) == KP_SUCCESS && !r.refused);
    CHECK_TIME(r, 8398, 3200);
    CHECK_THAT(r.slowest_rank == 0 && NEAR(ranks[1], 100) && NEAR(ranks[4], 100));
}

static void test_errors(void)
{
    const kp_algo *a = kp_algo_find(KP_COLL_ALLGATHER, "concurrent_exchange");
    kp_params prm = {.C = 3};
    kp_model_result r = {0};
    CHECK_THAT(kp_model_predict(&M, a, &prm, NULL, 4, 8, 0, 0, &r) == KP_SUCCESS && r.refused &&
          r.refuse_code == KP_ERR_UNSUPPORTED && r.msg[0]);
    kp_machine bad = M;
    bad.inter.piece[0].L = -201; /* below -(o_s + o_r) */
    a = kp_algo_find(KP_COLL_ALLGATHER, "ring");
    prm = (kp_params){0};
    CHECK_THAT(kp_model_predict(&bad, a, &prm, NULL, 4, 8, 0, 0, &r) == KP_ERR_PARAM &&
          strstr(r.msg, "p2p.inter.pieces[0].L: -201 is below -(o_s + o_r) = -200"));
    CHECK_THAT(kp_model_predict(&M, a, &prm, NULL, 0, 8, 0, 0, &r) == KP_ERR_PARAM);
    /* schedules that do not match are reported, not modelled */
    kp_sched sc[2];
    for (int i = 0; i < 2; i++)
        kp_sched_init(&sc[i], i, 2, 8);
    kp_sched_send(&sc[0], 1, KP_BUF_SEND, 0, 8);
    kp_sched_recv(&sc[1], 0, KP_BUF_RECV, 0, 4);
    CHECK_THAT(kp_model_scheds(&M, sc, 2, &r) == KP_ERR_INTERNAL && strstr(r.msg, "no matching receive"));
    kp_sched_reset(&sc[0]);
    kp_sched_reset(&sc[1]);
    kp_sched_recv(&sc[0], 1, KP_BUF_RECV, 0, 8); /* both receive first: deadlock */
    kp_sched_next_round(&sc[0]);
    kp_sched_send(&sc[0], 1, KP_BUF_SEND, 0, 8);
    kp_sched_recv(&sc[1], 0, KP_BUF_RECV, 0, 8);
    kp_sched_next_round(&sc[1]);
    kp_sched_send(&sc[1], 0, KP_BUF_SEND, 0, 8);
    kp_sched_finish(&sc[0]);
    kp_sched_finish(&sc[1]);
    CHECK_THAT(kp_model_scheds(&M, sc, 2, &r) == KP_ERR_INTERNAL && strstr(r.msg, "deadlock"));
    kp_sched_free(&sc[0]);
    kp_sched_free(&sc[1]);
}

/* every algorithm of every collective is modelled (none refused by the model),
 * and P in the thousands stays fast (P schedules built and walked) */
/* A reduction (issue 37): the registry's recursive-doubling allreduce of
 * 64 B (8 doubles) on one node of 4 (intra piece 0), a combine costing
 * compute.reduce = 3 + 0.25 s = 19 ns. Every rank, each of the 2 steps:
 *   send: cpu 100 + 0.5*64 = 132, departs at 132, arrives 132 + 1000 + 63 = 1195
 *   receive: 1195 + o_r 200 = 1395; combine 19 -> 1414 a step, 2828 in all
 *   (the second step's send at 1414 is past the nic's 0 + g 300, its
 *   message past the receive gap's 1195 + 300)
 * Hockney: 1000 + 64 = 1064 a message, + 19: 1083 a step, 2166.
 * Without a combine cost (compute.reduce 0) it is 2790 and 2128. */
static void test_reduction(void)
{
    kp_layout L = one_node(4);
    const kp_algo *a = kp_algo_find(KP_COLL_ALLREDUCE, "recursive_doubling");
    CHECK_THAT(a != NULL);
    if (!a)
        return;
    kp_params prm = {0};
    kp_model_result r = {0};
    kp_machine m = M;
    m.reduce = (kp_linear){.fixed = 3, .per_byte = 0.25};
    for (int commute = 0; commute < 2; commute++) {
        CHECK_THAT(kp_model_predict_red(&m, a, &prm, &L, 4, 64, 0, 0, 8, commute, NULL, KP_RULES_EXECUTOR, &r) ==
                   KP_SUCCESS && !r.refused);
        CHECK_TIME(r, 2828, 2166);
        CHECK_THAT(r.messages == 8 && r.reduces == 8 && r.reduce_bytes == 8 * 64 && r.copies == 0);
    }
    CHECK_THAT(kp_model_predict_red(&M, a, &prm, &L, 4, 64, 0, 0, 8, 1, NULL, KP_RULES_EXECUTOR, &r) == KP_SUCCESS);
    CHECK_TIME(r, 2790, 2128);
    /* an element that does not divide the vector: no time, the builder's reason */
    const int rc = kp_model_predict_red(&m, a, &prm, &L, 4, 60, 0, 0, 8, 1, NULL, KP_RULES_EXECUTOR, &r);
    CHECK((rc != KP_SUCCESS || r.refused) && r.msg[0], "60 B of 8-byte elements: rc %d, refused %d, '%s'", rc,
          r.refused, r.msg);
    kp_layout_free(&L);
}

static void test_every_algorithm(void)
{
    kp_layout L = one_node(8);
    int colls[4] = {KP_COLL_ALLGATHER, KP_COLL_BARRIER, KP_COLL_GATHER, KP_COLL_ALLTOALL};
    int modelled = 0;
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < kp_algo_count(colls[c]); i++) {
            const kp_algo *a = kp_algo_at(colls[c], i);
            kp_params prm = {0};
            kp_model_result r = {0};
            int rc = kp_model_predict(&M, a, &prm, &L, 8, 64, 3, 0, &r);
            if (rc)
                fprintf(stderr, "%s: %s\n", a->name, r.msg);
            CHECK_THAT(rc == KP_SUCCESS);
            if (!r.refused) {
                CHECK_THAT(r.time_ns > 0 && r.hockney_ns > 0);
                modelled++;
            }
        }
    CHECK_THAT(modelled >= 20);
    /* the collectives of issue 37: 8 doubles, reduce_scatter one each, commutative */
    const int64_t block_off[9] = {0, 8, 16, 24, 32, 40, 48, 56, 64};
    const int rcolls[6] = {KP_COLL_BCAST,     KP_COLL_SCATTER,
                           KP_COLL_REDUCE,    KP_COLL_ALLREDUCE,
                           KP_COLL_REDUCE_SCATTER_BLOCK, KP_COLL_REDUCE_SCATTER};
    int red_modelled = 0, combines = 0;
    for (int c = 0; c < 6; c++)
        for (int i = 0; i < kp_algo_count(rcolls[c]); i++) {
            const kp_algo *a = kp_algo_at(rcolls[c], i);
            kp_params prm = {0};
            kp_model_result r = {0};
            const int red = rcolls[c] >= KP_COLL_REDUCE;
            int rc = kp_model_predict_red(&M, a, &prm, &L, 8, 64, 3, 0, red ? 8 : 1, 1,
                                          rcolls[c] == KP_COLL_REDUCE_SCATTER ? block_off : NULL, KP_RULES_EXECUTOR,
                                          &r);
            if (rc)
                fprintf(stderr, "%s %s: %s\n", kp_coll_name(rcolls[c]), a->name, r.msg);
            CHECK_THAT(rc == KP_SUCCESS);
            if (!r.refused) {
                CHECK_THAT(r.time_ns > 0 && r.hockney_ns > 0);
                CHECK(!red || r.reduces > 0, "%s %s: no combine", kp_coll_name(rcolls[c]), a->name);
                red_modelled++;
                combines += red;
            }
        }
    CHECK(red_modelled >= 6 && combines >= 4, "%d algorithms of the new collectives modelled, %d reductions",
          red_modelled, combines);
    kp_layout_free(&L);
    clock_t t0 = clock();
    kp_model_result r = {0};
    const kp_algo *a = kp_algo_find(KP_COLL_ALLGATHER, "bruck");
    kp_params prm = {.k = 1};
    CHECK_THAT(kp_model_predict(&M, a, &prm, NULL, 3000, 8, 0, 0, &r) == KP_SUCCESS);
    /* 12 rounds (ceil(log2 3000)) of 5198 + 100 + ... : at least 12 message times */
    CHECK_THAT(r.time_ns > 12 * 5298 && r.max_rounds >= 12);
    a = kp_algo_find(KP_COLL_ALLGATHER, "ring");
    CHECK_THAT(kp_model_predict(&M, a, &prm, NULL, 1000, 8, 0, 0, &r) == KP_SUCCESS);
    /* 999 rounds of 100 + 5000 + 7*2 + 100 = 5214 (the copy hides behind the message) */
    CHECK_THAT(NEAR(r.time_ns, 999 * 5214.0));
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK_THAT(secs < 20); /* about 1 s optimised, a few under the sanitizers */
    printf("bruck P=3000 and ring P=1000 modelled in %.2f s\n", secs);
}

int main(void)
{
    machine();
    test_ring();
    test_recursive_doubling();
    test_bruck();
    test_shm();
    late_receiver(2000, 12504.5, 12004.5, 1);
    late_receiver(1000, 10205, 600, 0);
    test_eager_max();
    test_call();
    test_overlapping_overheads();
    test_exchange();
    test_gather_fan_in();
    test_errors();
    test_reduction();
    test_every_algorithm();
    printf("test_model: %ld passed, %ld failed\n", checks - fails, fails);
    return fails ? 1 : 0;
}
