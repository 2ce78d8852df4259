/*
 * kport-sim's engine on small cases whose LogGP times are computed by hand
 * here (the rules: docs/SIMULATOR.md): a two-rank exchange eager and
 * rendezvous, a three-rank ring step, barriers with g > o and with several
 * ports, O > 0, copies, intra- against inter-node messages, rails,
 * shared-memory flags, the measured exchange of a parameter file (X, XG);
 * determinism, and the O(P) node layout against kp_layout_init.
 */
#include "kport.h"
#include "sim/sim.h"
#include "../unit/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a time within 1e-6 relative of the expected one, both named in a failure */
#define CHECK_NS(got, want)                                                                                        \
    do {                                                                                                           \
        double g_ = (got), w_ = (want);                                                                            \
        CHECK(fabs(g_ - w_) <= 1e-6 * (fabs(w_) + 1), "%s = %.6f, expected %s = %.6f", #got, g_, #want, w_);  \
    } while (0)

/* a configuration with LogGOPSim-style parameters */
static kp_sim_config cfg(int coll, const char *spec, int P, int64_t bytes, double L, double o, double g, double G,
                         double O, int64_t S)
{
    kp_sim_config c;
    memset(&c, 0, sizeof c);
    c.coll = coll;
    char err[256];
    if (kp_algo_parse(coll, spec, &c.algo, &c.prm, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", spec, err);
        exit(1);
    }
    c.P = P;
    c.bytes = bytes;
    c.ports = 1;
    kp_sim_machine_loggp(&c.m, L, o, g, G, O, S);
    return c;
}

static kp_sim_result run(const kp_sim_config *c)
{
    kp_sim_result r;
    int rc = kp_sim_run(c, &r);
    if (rc != KP_SUCCESS || r.refused) {
        fprintf(stderr, "kp_sim_run: rc %d: %s\n", rc, r.msg);
        exit(1);
    }
    return r;
}

/* the critical path's parts: they sum to its length */
static double cp_sum(const kp_sim_result *r)
{
    double sum = 0;
    for (int k = 0; k < KP_SIM_NCAT; k++)
        sum += r->cp[k];
    return sum;
}

/* two ranks exchanging one block (ring P = 2): round 0 is copy, send, recv;
 * LogGOPSim issues the send first, then the copy, and the arriving message
 * waits for the CPU */
static void test_exchange(void)
{
    const double L = 1500, o = 700, g = 200, G = 3, O = 1, s = 65536;
    for (int rdv = 0; rdv < 2; rdv++) {
        kp_sim_config c = cfg(KP_COLL_ALLGATHER, "ring", 2, (int64_t)s, L, o, g, G, O, rdv ? 1024 : 100000);
        kp_sim_result r = run(&c);
        const double send_cpu = o + (s - 1) * O;        /* 66235 */
        const double copy_end = send_cpu + s;            /* 131771: the copy waits for the send's CPU */
        const double handled = fmax(o + L, copy_end);    /* arrival (2200) waits for the CPU */
        const double want = handled + o + (s - 1) * fmax(O, G); /* 329076 */
        CHECK_NS(r.rank_ns[0], want);
        CHECK_NS(r.rank_ns[1], want);
        CHECK_NS(r.max_ns, 329076);
        CHECK_THAT(r.messages == 2 && r.msg_bytes == 2 * 65536 && r.rendezvous == (rdv ? 2 : 0));
        CHECK_THAT(r.copies == 2 && r.copy_bytes == 2 * 65536);
        /* the critical path's parts sum to its length */
        CHECK_THAT(fabs(cp_sum(&r) - r.max_ns) < 1.0);
        CHECK_THAT(r.cp[KP_SIM_COPY] == s && r.cp[KP_SIM_OVERHEAD] == 2 * o);
        kp_sim_result_free(&r);
    }
}

/* one message, root 0 receives (gather binomial P = 2): the sender's
 * completion is o under eager, the match time under rendezvous */
static void test_rendezvous(void)
{
    const double L = 2000, o = 300, g = 500, G = 1, s = 1000;
    for (int rdv = 0; rdv < 2; rdv++) {
        kp_sim_config c = cfg(KP_COLL_GATHER, "binomial", 2, (int64_t)s, L, o, g, G, 0, rdv ? 999 : 1000);
        kp_sim_result r = run(&c);
        /* root: receive posted at 0, copy 0..1000, message at o + L = 2300 */
        CHECK_NS(r.rank_ns[0], o + L + o + (s - 1) * G); /* 3599 */
        CHECK_NS(r.rank_ns[1], rdv ? o + L : o);          /* rendezvous: matched at 2300 */
        CHECK_THAT(r.rendezvous == rdv);
        kp_sim_result_free(&r);
    }
}

/* ring P = 3, two rounds: the second send waits for the round's join, the
 * second message for the receive gap */
static void test_ring3(void)
{
    const double L = 2000, o = 300, g = 500, G = 2, s = 100;
    kp_sim_config c = cfg(KP_COLL_ALLGATHER, "ring", 3, (int64_t)s, L, o, g, G, 0, 65536);
    kp_sim_result r = run(&c);
    const double h0 = fmax(o + L, o + s);        /* first message handled */
    const double c1 = h0 + o + (s - 1) * G;      /* round 1 starts */
    const double gs = g + (s - 1) * G;           /* the port is free again */
    const double t1 = fmax(c1, gs);              /* second send */
    const double gr = h0 + g + (s - 1) * G;
    const double h1 = fmax(fmax(t1 + o + L, t1 + o), gr);
    for (int p = 0; p < 3; p++)
        CHECK_NS(r.rank_ns[p], h1 + o + (s - 1) * G); /* 5596 */
    CHECK_NS(r.max_ns, 5596);
    CHECK_THAT(r.cp_messages == 2);
    /* the chain: rank 1's block travels 1 -> 2 -> 0 (rank 0 completes last by its number) */
    CHECK_THAT(r.slowest_rank == 0 && r.nchain == 4);
    if (r.nchain == 4) {
        CHECK_THAT(r.chain[0].kind == KP_SIM_HOP_SEND && r.chain[0].rank == 1 && r.chain[0].peer == 2 && r.chain[0].t == 0);
        CHECK_THAT(r.chain[1].kind == KP_SIM_HOP_TAKE && r.chain[1].rank == 2 && r.chain[1].t == h0);
        CHECK_THAT(r.chain[2].kind == KP_SIM_HOP_SEND && r.chain[2].rank == 2 && r.chain[2].peer == 0 && r.chain[2].t == t1);
        CHECK_THAT(r.chain[3].kind == KP_SIM_HOP_TAKE && r.chain[3].rank == 0 && r.chain[3].len == 100 &&
              r.chain[3].t == h1);
    }
    kp_sim_result_free(&r);
}

/* dissemination barrier P = 4 (two rounds of zero-byte messages): with
 * g > 2o + L the second send waits for the gap */
static void test_barrier_gap(void)
{
    const double L = 2000, o = 300;
    for (int big = 0; big < 2; big++) {
        const double g = big ? 3000 : 1000;
        kp_sim_config c = cfg(KP_COLL_BARRIER, "dissemination", 4, 0, L, o, g, 6, 0, 65536);
        kp_sim_result r = run(&c);
        const double round0 = o + L + o;
        const double want = fmax(round0, g) + o + L + o; /* 5200, 5600 */
        for (int p = 0; p < 4; p++)
            CHECK_NS(r.rank_ns[p], want);
        CHECK_THAT(r.messages == 8 && r.msg_bytes == 0);
        CHECK_NS(r.cp[KP_SIM_GAP], big ? g : 0);
        kp_sim_result_free(&r);
        /* LogGOPSim's unsigned s - 1 for s = 0: -G on the receive's CPU (O = 0) */
        c.zero_wrap = 1;
        r = run(&c);
        CHECK_NS(r.max_ns, big ? g + o - 6 + L + o - 6 : want - 2 * 6);
        kp_sim_result_free(&r);
    }
}

/* O > G: the CPU is busy (s-1)O on both sides */
static void test_per_byte_overhead(void)
{
    const double L = 2000, o = 300, g = 500, G = 1, O = 5, s = 1000;
    kp_sim_config c = cfg(KP_COLL_ALLGATHER, "ring", 2, (int64_t)s, L, o, g, G, O, 65536);
    kp_sim_result r = run(&c);
    const double cpu = o + (s - 1) * O + s; /* send, then the copy: 6295 */
    CHECK_NS(r.max_ns, fmax(cpu, o + L) + o + (s - 1) * O); /* 11590 */
    kp_sim_result_free(&r);
}

/* copies: 1 ns per byte by default, a parameter file's memcpy otherwise;
 * a copy MPI_IN_PLACE makes a no-op is skipped */
static void test_copy(void)
{
    kp_sim_config c = cfg(KP_COLL_ALLGATHER, "ring", 1, 1000, 2000, 300, 500, 1, 0, 65536);
    kp_sim_result r = run(&c);
    CHECK_NS(r.max_ns, 1000);
    CHECK_THAT(r.copies == 1 && r.messages == 0);
    kp_sim_result_free(&r);
    c.m.memcpy_ = (kp_linear){.fixed = 10, .per_byte = 0.5};
    r = run(&c);
    CHECK_NS(r.max_ns, 10 + 0.5 * 1000);
    kp_sim_result_free(&r);
    c.inplace = 1;
    r = run(&c);
    CHECK_NS(r.max_ns, 0);
    CHECK_THAT(r.copies == 0);
    kp_sim_result_free(&r);
    /* kport's call cost starts every clock (P = 1: no entry skew) */
    c.inplace = 0;
    c.m.call = (kp_callcost){.fixed = 60, .skew = 160};
    r = run(&c);
    CHECK_NS(r.max_ns, 60 + 10 + 500);
    kp_sim_result_free(&r);
}

/* p2p.intra between ranks of one node, p2p.inter otherwise */
static void test_intra_inter(void)
{
    kp_sim_config c = cfg(KP_COLL_BARRIER, "dissemination", 2, 0, 0, 0, 0, 0, 0, 65536);
    c.m.intra.piece[0] = (kp_loggp){-1, 100, 10, 12, 20, 0.01, 0, 0, 0, 0, 0, 0, 0};
    c.m.inter.piece[0] = (kp_loggp){-1, 1000, 50, 60, 100, 0.1, 0, 0, 0, 0, 0, 0, 0};
    c.node_size = 2;
    kp_sim_result r = run(&c);
    CHECK_NS(r.max_ns, 10 + 100 + 12);
    kp_sim_result_free(&r);
    c.node_size = 1;
    r = run(&c);
    CHECK_NS(r.max_ns, 50 + 1000 + 60);
    kp_sim_result_free(&r);
}

/* rails: P = 4 in nodes of 2, dissemination; round 1's two inter-node
 * messages of a node share one rail, so one leaves g later */
static void test_rails(void)
{
    const double L = 2000, o = 300, g = 1000;
    kp_sim_config c = cfg(KP_COLL_BARRIER, "dissemination", 4, 0, L, o, g, 0, 0, 65536);
    c.node_size = 2;
    kp_sim_result r = run(&c);
    CHECK_NS(r.max_ns, 2 * (o + L + o)); /* 5200: no sharing */
    kp_sim_result_free(&r);
    c.rails = 2;
    r = run(&c);
    CHECK_NS(r.max_ns, 2 * (o + L + o)); /* two rails: no conflict */
    kp_sim_result_free(&r);
    c.rails = 1;
    r = run(&c);
    /* round 0's inter-node send holds the rail until g (1000); round 1
     * starts at 2600: the first send leaves then, the second at 2600 + g */
    CHECK_NS(r.max_ns, 2 * (o + L + o) + g); /* 6200 */
    CHECK_NS(r.min_ns, 2 * (o + L + o));
    CHECK_NS(r.cp[KP_SIM_GAP], g);
    kp_sim_result_free(&r);
}

/* ports: n-way dissemination n = 2 on 3 ranks sends two messages a round;
 * with 2 ports the second leaves when the CPU is free instead of after g */
static void test_ports(void)
{
    const double L = 2000, o = 300, g = 1000;
    kp_sim_config c = cfg(KP_COLL_BARRIER, "nway_dissemination:n=2", 3, 0, L, o, g, 0, 0, 65536);
    kp_sim_result r = run(&c);
    CHECK_NS(r.max_ns, g + o + L + o); /* second send at g, arrives 3300: 3600 */
    kp_sim_result_free(&r);
    c.ports = 2;
    r = run(&c);
    CHECK_NS(r.max_ns, o + o + L + o); /* second send at o: 2900 */
    kp_sim_result_free(&r);
}

/* shared memory: every rank posts and waits for the others' posts */
static void test_flags(void)
{
    kp_sim_config c = cfg(KP_COLL_BARRIER, "shm_flat", 4, 0, 2000, 300, 500, 1, 0, 65536);
    c.node_size = 4;
    kp_sim_result r = run(&c);
    CHECK_NS(r.max_ns, 0); /* flags free without a parameter file */
    CHECK_THAT(r.posts == 4 && r.waits == 12);
    kp_sim_result_free(&r);
    c.m.flag.fixed = 90;
    r = run(&c);
    CHECK_NS(r.max_ns, 90);
    CHECK_NS(r.cp[KP_SIM_WAIT], 90);
    kp_sim_result_free(&r);
}

/* shm.data_line: a copy out of the segment's own lines pays it, and so
 * does one out of a flag line that reaches past the flag's cache line
 * (model.c; the cost model's test_shm has the same cases). smp_direct,
 * P = 2 on one node, 300 B: round 0 copy send -> segment (copy_in 10 +
 * 0.25*300 = 85); round 1 post at 85, the own block send -> recv (memcpy
 * 5 + 0.125*300 = 42.5) to 127.5, the wait ends at 85 + flag 50 = 135;
 * round 2 the peer's block (300 B) out of the segment: copy_out 20 +
 * 0.5*300 = 170, + data_line 40: 345 (305 without). shm_flat, 100 B (blocks in the
 * flag lines, bytes 8..107: past byte 63): copy_in 35 + memcpy 5 + 12.5 =
 * 52.5, wait to 102.5, copy_out of the line 70: 172.5, + data_line 40; so
 * is smp_direct at 100 B (one node, at most 248 B: the flag lines too).
 * shm_flat, 56 B (bytes 8..63, beside the flag): 24 + 12 = 36, wait to
 * 86, copy out 48: 134 with or without. */
static void test_data_line(void)
{
    static const struct {
        const char *alg;
        int64_t m;
        double t, per_dl; /* the time without data_line and how many it pays */
    } cs[] = {{"smp_direct", 300, 305, 1}, {"shm_flat", 100, 172.5, 1}, {"smp_direct", 100, 172.5, 1},
              {"shm_flat", 56, 134, 0}};
    for (int dl = 0; dl <= 40; dl += 40)
        for (int a = 0; a < 4; a++) {
            kp_sim_config c = cfg(KP_COLL_ALLGATHER, cs[a].alg, 2, cs[a].m, 2000, 300, 500, 1, 0, 65536);
            c.node_size = 2;
            c.m.flag.fixed = 50;
            c.m.copy_in = (kp_linear){.fixed = 10, .per_byte = 0.25};
            c.m.copy_out = (kp_linear){.fixed = 20, .per_byte = 0.5};
            c.m.memcpy_ = (kp_linear){.fixed = 5, .per_byte = 0.125};
            c.m.data_line = dl;
            kp_sim_result r = run(&c);
            CHECK_NS(r.max_ns, cs[a].t + cs[a].per_dl * dl);
            kp_sim_result_free(&r);
        }
}

/* every collective, a few algorithms, twice: identical times */
static void test_determinism(void)
{
    static const struct {
        int coll;
        const char *spec;
        int P, node;
    } cs[] = {{KP_COLL_ALLGATHER, "bruck:k=2", 37, 1},       {KP_COLL_ALLGATHER, "smp_bruck:k=2", 36, 4},
              {KP_COLL_ALLGATHER, "direct:k=3", 20, 1},      {KP_COLL_ALLTOALL, "pairwise", 17, 1},
              {KP_COLL_GATHER, "smp", 24, 6},                {KP_COLL_BARRIER, "smp", 40, 8},
              {KP_COLL_ALLGATHER, "shm_single_copy", 8, 8}, {KP_COLL_ALLGATHER, "smp_gather_bcast", 30, 5}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kp_sim_config c = cfg(cs[i].coll, cs[i].spec, cs[i].P, 4096, 2000, 300, 500, 1, 0, 1024);
        c.node_size = cs[i].node;
        c.m.flag.fixed = 90;
        kp_sim_result a = run(&c), b = run(&c);
        CHECK_THAT(a.events == b.events && a.pops == b.pops && a.slowest_rank == b.slowest_rank);
        CHECK_THAT(memcmp(a.rank_ns, b.rank_ns, (size_t)c.P * sizeof(double)) == 0);
        CHECK_THAT(a.max_ns > 0);
        kp_sim_result_free(&a);
        kp_sim_result_free(&b);
    }
}

/* The measured exchange (a parameter file's piece with has_x: X + XG*s).
 * One node, piece L -300, o_s 400, o_r 200, g 500, G = O = 0, X 600,
 * XG 0.5, all eager; memcpy 5 + 0.125/B (the machine of the cost model's
 * test_exchange, tests/unit/test_model.c).
 * ring P = 2, 100 B (round: copy, send, recv): the send at 0 (CPU 400,
 * arrival 100); the copy waits for the CPU, 400 -> 417.5; the message
 * waits for it too and is taken in at 417.5; paired with the send, which
 * has started: rest = X + XG*100 - o_s = 250; the message is in at
 * max(100, gap 0) + o_r = 300, the exchange done at 417.5 + 250 = 667.5
 * -> 667.5 (the model's value). Without X: 417.5 + o_r = 617.5.
 * L = 1000: arrival 1400, in at 1600 by the one-way rule; the exchange
 * has it in by 0 + X + XG*100 = 650 after its send began, but not before
 * its event (the first byte, 1400): 1400 (the model's value; without X
 * 1600).
 * G 5 ns/B (L -300): the message's event at 100, taken in at 417.5, in at
 * 100 + 200 + 99*5 = 795 by the one-way rule, by 650 as the exchange:
 * max(650, 667.5) = 667.5. Without X the ordinary rule holds the CPU o_r
 * + 495 from 417.5: 1112.5 (the model, which charges G on the wire, has
 * it in at 595 + 200 = 795). As a rendezvous (eager limit 50): the same
 * 667.5 / 1112.5. With X 300 (o_s 400 > X + XG*100 = 350) the
 * rendezvous send holds the CPU 350 (send_cap), the copy to 367.5, the
 * message by 350: 367.5 (the model's values).
 * concurrent_exchange_split:C=2, P = 2, 100 B: round 0 has two copies of
 * 50 B (11.25 each), two sends of 50 B to the peer, two receives of 50 B
 * from it (the k-th receive pairs with the k-th send). Send 1 at 0 (CPU
 * 400, arrival 100); send 2 waits for the gap (500); the copies run at 400
 * and 411.25; message 1, for a paired receive, would be taken in at 422.5
 * but waits for send 2, which has not started (unsent_ready: 500, the
 * executor posts a round's sends before it waits); send 2 at 500 (CPU
 * 900, arrival 600); message 1 at 900 (rest = 600 + 25 - 400 = 225):
 * max(100 + 200, 900 + 225) = 1125, receive gap 100 + 500 = 600; message 2
 * at 1125: max(600 + 200, 1125 + 225) = 1350; round 1: copies 11.25 +
 * 11.25 + 17.5 -> 1390. (Before the wait, LogGOPSim's order took message 1
 * in at 422.5 and held the CPU for its rest before send 2: 1312.5.) The
 * cost model gives 1412.5: it runs a round's copies after its sends (the
 * copies to 922.5, then the receives: 1147.5, 1372.5), where the
 * simulator runs them while send 2 waits for its gap.
 * ring P = 3, 100 B: every round sends to one peer and receives from
 * another, nothing pairs. Round 0: send 0..400, copy 400..417.5, message
 * (arrived at 100) taken in at 417.5 -> 617.5, receive gap 917.5; round 1:
 * send at 617.5 (CPU 1017.5, arrival 717.5), taken in at max(1017.5,
 * 917.5) -> 1217.5 (the model's value too; `kport-check --predict` on this
 * machine gives every value here but the split's: its order is the only
 * place the two engines' rules differ on these cases). */
static kp_sim_config xcfg(const char *spec, int P, int has_x, double L)
{
    kp_sim_config c = cfg(KP_COLL_ALLGATHER, spec, P, 100, 0, 0, 0, 0, 0, -1);
    c.m.intra.piece[0] = (kp_loggp){-1, L, 400, 200, 500, 0, 0, has_x, has_x ? 600 : 0, has_x ? 0.5 : 0, 0, 0, 0};
    c.m.memcpy_ = (kp_linear){.fixed = 5, .per_byte = 0.125};
    c.node_size = P;
    return c;
}

static void test_measured_exchange(void)
{
    static const struct {
        const char *spec;
        int P, has_x;
        double L, want;
    } cs[] = {{"ring", 2, 1, -300, 667.5},
              {"ring", 2, 0, -300, 617.5},
              {"ring", 2, 1, 1000, 1400},
              {"ring", 2, 0, 1000, 1600},
              {"concurrent_exchange_split:C=2", 2, 1, -300, 1390},
              {"ring", 3, 1, -300, 1217.5},
              {"ring", 3, 0, -300, 1217.5}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kp_sim_config c = xcfg(cs[i].spec, cs[i].P, cs[i].has_x, cs[i].L);
        kp_sim_result r = run(&c);
        for (int q = 0; q < cs[i].P; q++)
            CHECK_NS(r.rank_ns[q], cs[i].want);
        CHECK_NS(cp_sum(&r), r.max_ns);
        if (i == 0) /* the path: o_s 400, the copy 17.5, the exchange's rest 250 (XG*s = 50 of it per byte) */
            CHECK_THAT(r.cp[KP_SIM_OVERHEAD] == 600 && r.cp[KP_SIM_BYTES] == 50 && r.cp[KP_SIM_COPY] == 17.5);
        kp_sim_result_free(&r);
    }
    static const struct {
        int64_t eager;
        int has_x;
        double X, want;
    } gx[] = {{-1, 1, 600, 667.5}, {-1, 0, 600, 1112.5}, {50, 1, 600, 667.5}, {50, 0, 600, 1112.5}, {50, 1, 300, 367.5}};
    for (size_t i = 0; i < sizeof gx / sizeof gx[0]; i++) {
        kp_sim_config c = xcfg("ring", 2, gx[i].has_x, -300);
        c.m.intra.piece[0].G = 5;
        c.m.intra.piece[0].X = gx[i].X;
        c.m.intra.eager_max = gx[i].eager;
        kp_sim_result r = run(&c);
        CHECK_NS(r.rank_ns[0], gx[i].want);
        CHECK_NS(r.rank_ns[1], gx[i].want);
        CHECK_THAT(r.rendezvous == (gx[i].eager == 50 ? 2 : 0));
        CHECK_NS(cp_sum(&r), r.max_ns);
        kp_sim_result_free(&r);
    }
    /* the entry skew (call.skew 100: rank 1 enters at 100 and is timed from
     * there). L = -300: rank 0 as above (its copy ends at 417.5, rank 1's
     * message arrived at 200 + 0) -> 667.5; rank 1 sends at 100, copies to
     * 517.5, takes rank 0's message (in at 100) -> 517.5 + 250 = 767.5,
     * less 100 -> 667.5: the exchange hides the skew. L = 1000: rank 1's
     * message reaches rank 0 at 100 + 400 + 1000 = 1500, in at 1500 (the
     * exchange's 100 + 650 = 750 is before its first byte); rank 0's
     * reaches rank 1 at 1400, in at 1400, less 100 -> 1300. */
    for (int wire = 0; wire < 2; wire++) {
        kp_sim_config c = xcfg("ring", 2, 1, wire ? 1000 : -300);
        c.m.call = (kp_callcost){.fixed = 0, .skew = 100};
        kp_sim_result r = run(&c);
        CHECK_NS(r.rank_ns[0], wire ? 1500 : 667.5);
        CHECK_NS(r.rank_ns[1], wire ? 1300 : 667.5);
        CHECK_NS(cp_sum(&r), r.max_ns);
        kp_sim_result_free(&r);
    }
    /* recursive_doubling P = 2, 100 B, skew 100: round 0 a copy, round 1
     * the exchange. Rank 0: copy 0..17.5, send at 17.5 (CPU 417.5, arrival
     * 117.5). Rank 1: copy 100..117.5; rank 0's message arrives at 117.5,
     * before rank 1's round 1 posts its receive; that receive is paired, so
     * the message is parked (not taken in). Rank 1's round 1 at 117.5: send
     * (CPU 517.5, arrival 217.5), its receive meets the parked message,
     * taken in once the CPU is free: max(117.5 + 200, 517.5 + 250) = 767.5,
     * less 100 -> 667.5 (taken in at arrival by LogGP's rule, it would end
     * at 617.5). Rank 0 takes rank 1's message at 417.5: max(217.5 + 200,
     * 417.5 + 250) = 667.5. */
    /* a send's overhead above the exchange it is part of (o_s 400 > X +
     * XG*100 = 350 with X 300): ring P = 2, 100 B: the send holds the CPU
     * 350 (its message still leaves after o_s: arrival 100), the copy to
     * 367.5; the message: rest = max(0, 350 - 400) = 0, max(100 + 200,
     * 367.5) = 367.5 (the cost model's value; 417.5 without the bound) */
    kp_sim_config c = xcfg("ring", 2, 1, -300);
    c.m.intra.piece[0].X = 300;
    kp_sim_result r = run(&c);
    CHECK_NS(r.rank_ns[0], 367.5);
    CHECK_NS(r.rank_ns[1], 367.5);
    CHECK_NS(cp_sum(&r), r.max_ns);
    kp_sim_result_free(&r);
    c = xcfg("recursive_doubling", 2, 1, -300);
    c.m.call = (kp_callcost){.fixed = 0, .skew = 100};
    r = run(&c);
    CHECK_NS(r.rank_ns[0], 667.5);
    CHECK_NS(r.rank_ns[1], 667.5);
    kp_sim_result_free(&r);
    /* a further exchange with the same peer (has_x2: X2 + X2G*s), the
     * split above. Send 2 is the second exchange with the peer in the
     * round: it does not wait for the gap (further_free) and holds the CPU
     * at most X2 + X2G*50 (send_cap); message 2's rest is X2 + X2G*50 -
     * o_s. X2 500, X2G 1 (550, above o_s): send 2 at 400 (CPU 800, arrival
     * 500, the port busy to 500 + 500); the copies 800..822.5; message 1:
     * max(300, 822.5 + 225) = 1047.5, receive gap 600; message 2: rest
     * 150, max(600 + 200, 1047.5 + 150) = 1197.5; + 40 of copies ->
     * 1237.5. X2 100 (150, below o_s 400): send 2 holds the CPU 150 (400
     * -> 550; its message still leaves after o_s: arrival 500); copies to
     * 572.5; message 1 -> 797.5; message 2: rest 0, max(800, 797.5) = 800;
     * + 40 -> 840. The cost model gives both (its copies run after the
     * sends here too). Message 1 is the first exchange with the peer and
     * keeps X. Without has_x2 the same numbers change nothing (1390). */
    static const struct {
        int has_x2;
        double X2, want;
    } fx[] = {{1, 500, 1237.5}, {1, 100, 840}, {0, 100, 1390}};
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        c = xcfg("concurrent_exchange_split:C=2", 2, 1, -300);
        c.m.intra.piece[0].has_x2 = fx[i].has_x2;
        c.m.intra.piece[0].X2 = fx[i].X2;
        c.m.intra.piece[0].X2G = 1;
        r = run(&c);
        CHECK_NS(r.rank_ns[0], fx[i].want);
        CHECK_NS(r.rank_ns[1], fx[i].want);
        CHECK_NS(cp_sum(&r), r.max_ns);
        kp_sim_result_free(&r);
    }
}

/* a builder's refusal is reported, not an error */
static void test_refusal(void)
{
    kp_sim_config c = cfg(KP_COLL_ALLGATHER, "concurrent_exchange:C=3", 4, 8, 2000, 300, 500, 1, 0, 1024);
    kp_sim_result r;
    CHECK_THAT(kp_sim_run(&c, &r) == KP_SUCCESS && r.refused && r.msg[0] && !r.rank_ns);
    c.P = 0;
    CHECK_THAT(kp_sim_run(&c, &r) == KP_ERR_PARAM && r.msg[0]);
}

/* the O(P) block layout is kp_layout_init's */
static void test_layout(void)
{
    for (int P = 1; P <= 40; P++)
        for (int n = 1; n <= P + 1; n++) {
            kp_layout a, b;
            int *ids = malloc((size_t)P * sizeof(int));
            for (int r = 0; r < P; r++)
                ids[r] = r / n;
            CHECK_THAT(kp_layout_init(&a, P, ids, 1) == 0 && kp_sim_block_layout(&b, P, n) == 0);
            int same = a.P == b.P && a.nnodes == b.nnodes && a.cma == b.cma;
            for (int r = 0; same && r < P; r++)
                same = a.node_of[r] == b.node_of[r] && a.local[r] == b.local[r] && a.node_ranks[r] == b.node_ranks[r];
            for (int k = 0; same && k <= a.nnodes; k++)
                same = a.node_start[k] == b.node_start[k];
            CHECK_THAT(same);
            kp_layout_free(&a);
            kp_layout_free(&b);
            free(ids);
        }
}

int main(void)
{
    test_exchange();
    test_rendezvous();
    test_ring3();
    test_barrier_gap();
    test_per_byte_overhead();
    test_copy();
    test_intra_inter();
    test_rails();
    test_ports();
    test_flags();
    test_data_line();
    test_determinism();
    test_measured_exchange();
    test_refusal();
    test_layout();
    printf("test_sim: %ld passed, %ld failed\n", checks - fails, fails);
    return fails != 0;
}
