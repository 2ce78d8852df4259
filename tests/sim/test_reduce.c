/*
 * The combine of reductions (KP_OP_REDUCE) in the timing engine, on
 * schedules built here by hand with kp_sched_* calls (no builder of
 * src/algo):
 *  - reduce2: rank 1 sends its vector to rank 0, which combines it with
 *    its own (a = its send buffer, b = the received block) into its
 *    receive buffer;
 *  - chain3: a reduce to rank 0 along 2 -> 1 -> 0, each middle rank
 *    combining before it forwards;
 *  - rd4, rd8: recursive-doubling allreduce on 4 and 8 ranks (step i:
 *    exchange with r ^ 2^i, then combine, the lower rank's data as a).
 * (a) The cost model (executor rules) and the LogGOPSim rules (kport-sim's)
 *     give each rank the time worked out below by hand from the LogGP
 *     parameters and gamma; the critical path's "compute" is the combines.
 * (b) The combine's classes: a shared operand costs what a copy of that
 *     class costs beyond memcpy, on top of compute.reduce.
 * (c) The GOAL export writes the combine as calc <bytes * gamma> in its
 *     round's place.
 * (d) LogGOPSim itself (github.com/spcl/LogGOPSim, run on the GOAL files
 *     this program writes with --goal DIR; tests/sim/record_reduce.sh):
 *     its per-rank times, recorded in tests/data/loggopsim_hand/reduce.txt,
 *     equal the engine's under LogGOPSim's rules to the nanosecond.
 *
 *   test_reduce DATA            run the checks (DATA: the recorded times)
 *   test_reduce --perturb DATA  the same against every recorded time + 1 ns: must fail
 *   test_reduce --goal DIR      write DIR/<case>_m<m>_<set>.goal and list them
 */
#include "kport.h"
#include "model/model.h"
#include "sched/goal.h"
#include "timing/timing.h"
#include "../unit/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_NS(got, want)                                                                                        \
    do {                                                                                                           \
        double g_ = (got), w_ = (want);                                                                            \
        CHECK(fabs(g_ - w_) <= 1e-9 * (fabs(w_) + 1), "%s = %.6f, expected %s = %.6f", #got, g_, #want, w_);  \
    } while (0)

#define ELEM 8 /* a double */
#define PMAX 8

/* ---- the schedules ------------------------------------------------------- */

static void init(kp_sched *s, int coll, int rank, int P, int64_t m)
{
    kp_sched_init_coll(s, coll, rank, P, m, 0, 0);
    kp_sched_set_reduction(s, ELEM, 1, NULL);
    kp_sched_need_scratch(s, m);
}

/* reduce to 0 of two ranks */
static void build_reduce2(kp_sched *sc, int64_t m)
{
    for (int r = 0; r < 2; r++)
        init(&sc[r], KP_COLL_REDUCE, r, 2, m);
    kp_sched_send(&sc[1], 0, KP_BUF_SEND, 0, m);
    kp_sched_recv(&sc[0], 1, KP_BUF_SCRATCH, 0, m);
    kp_sched_next_round(&sc[0]);
    kp_sched_reduce(&sc[0], KP_BUF_SEND, 0, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, m);
}

/* reduce to 0 along 2 -> 1 -> 0: rank 1 combines (its own, rank 2's) into
 * scratch and forwards it; rank 0 combines (its own, ranks 1-2's) */
static void build_chain3(kp_sched *sc, int64_t m)
{
    for (int r = 0; r < 3; r++)
        init(&sc[r], KP_COLL_REDUCE, r, 3, m);
    kp_sched_need_scratch(&sc[1], 2 * m);
    kp_sched_send(&sc[2], 1, KP_BUF_SEND, 0, m);
    kp_sched_recv(&sc[1], 2, KP_BUF_SCRATCH, 0, m);
    kp_sched_next_round(&sc[1]);
    kp_sched_reduce(&sc[1], KP_BUF_SEND, 0, KP_BUF_SCRATCH, 0, KP_BUF_SCRATCH, m, m);
    kp_sched_next_round(&sc[1]);
    kp_sched_send(&sc[1], 0, KP_BUF_SCRATCH, m, m);
    kp_sched_recv(&sc[0], 1, KP_BUF_SCRATCH, 0, m);
    kp_sched_next_round(&sc[0]);
    kp_sched_reduce(&sc[0], KP_BUF_SEND, 0, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, m);
}

/* recursive-doubling allreduce, P a power of two: step 0 sends the send
 * buffer, later steps the partial result in the receive buffer; the
 * partner's part arrives in scratch; the lower rank's part is a */
static void build_rd(kp_sched *sc, int P, int64_t m)
{
    for (int r = 0; r < P; r++) {
        kp_sched *s = &sc[r];
        init(s, KP_COLL_ALLREDUCE, r, P, m);
        for (int d = 1; d < P; d <<= 1) {
            const int q = r ^ d, mine = d == 1 ? KP_BUF_SEND : KP_BUF_RECV;
            kp_sched_send(s, q, mine, 0, m);
            kp_sched_recv(s, q, KP_BUF_SCRATCH, 0, m);
            kp_sched_next_round(s);
            if (r < q)
                kp_sched_reduce(s, mine, 0, KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, m);
            else
                kp_sched_reduce(s, KP_BUF_SCRATCH, 0, mine, 0, KP_BUF_RECV, 0, m);
            kp_sched_next_round(s);
        }
    }
}

typedef struct hcase {
    const char *name;
    int P;
} hcase;
static const hcase cases[] = {{"reduce2", 2}, {"chain3", 3}, {"rd4", 4}, {"rd8", 8}};
#define NCASES (int)(sizeof cases / sizeof cases[0])

static int build(int c, kp_sched *sc, int64_t m)
{
    if (c == 0)
        build_reduce2(sc, m);
    else if (c == 1)
        build_chain3(sc, m);
    else
        build_rd(sc, cases[c].P, m);
    int rc = 0;
    for (int r = 0; r < cases[c].P; r++)
        rc |= kp_sched_finish(&sc[r]);
    return rc;
}

static void free_all(kp_sched *sc, int P)
{
    for (int r = 0; r < P; r++)
        kp_sched_free(&sc[r]);
}

/* ---- the machines ---------------------------------------------------------- */

/* LogGOPSim's parameters (tests/data/loggopsim's sets a and b) and gamma */
typedef struct pset {
    const char *name;
    double L, o, g, G, O;
    int64_t S;
    double gamma;
} pset;
static const pset sets[] = {{"a", 2000, 300, 500, 1, 0, 65536, 2.0}, {"b", 1500, 700, 200, 3, 1, 1024, 0.5}};
static const int64_t sizes[] = {8, 65536};

static kp_machine machine(const pset *p)
{
    kp_machine m;
    kp_sim_machine_loggp(&m, p->L, p->o, p->g, p->G, p->O, p->S);
    m.reduce.per_byte = p->gamma;
    return m;
}

static void times(const kp_machine *m, const kp_sched *sc, int P, kp_timing_rules rules, double *out, double *cp)
{
    kp_sim_result r;
    int rc = kp_timing_scheds(m, sc, P, rules, NULL, &r);
    CHECK(rc == KP_SUCCESS, "kp_timing_scheds: %d %s", rc, r.msg);
    if (rc != KP_SUCCESS)
        return;
    for (int q = 0; q < P; q++)
        out[q] = r.rank_ns[q];
    if (cp)
        memcpy(cp, r.cp, sizeof r.cp);
    kp_sim_result_free(&r);
}

/* ---- (a) by hand ------------------------------------------------------------ */

/* One step of an eager message of m bytes and the combine of it, from the
 * sender's start to the combine's end on the receiver:
 *  LogGOPSim's rules: the first byte is in after o + L; the receiver's CPU
 *    takes it in for o + (m-1)*max(O, G); the combine holds it m * gamma;
 *  executor rules: the message departs after the send's o + O*m, arrives
 *    L + (m-1)*G later; the receive costs o; then the combine.
 * (Every case below has L above the sender's own CPU time and g, so no
 * clock but the message's decides.) */
static double step(const pset *p, int64_t m, kp_timing_rules rules)
{
    const double s1 = (double)(m - 1), c = (double)m * p->gamma;
    if (rules == KP_RULES_LOGGOPSIM)
        return p->o + p->L + p->o + s1 * fmax(p->O, p->G) + c;
    return p->o + p->O * (double)m + p->L + s1 * p->G + p->o + c;
}

/* an eager send's own CPU time (its rank's completion when it is all it does) */
static double send_only(const pset *p, int64_t m, kp_timing_rules rules)
{
    return rules == KP_RULES_LOGGOPSIM ? p->o + (double)(m - 1) * p->O : p->o + p->O * (double)m;
}

static void test_hand(void)
{
    kp_sched sc[PMAX];
    double t[PMAX], u[PMAX], cp[KP_SIM_NCAT];
    const int64_t m = 8; /* eager in both sets */
    for (int k = 0; k < 2; k++) {
        const pset *p = &sets[k];
        const kp_machine mach = machine(p);
        for (int rl = 0; rl < 2; rl++) {
            const kp_timing_rules rules = rl ? KP_RULES_EXECUTOR : KP_RULES_LOGGOPSIM;
            const double D = step(p, m, rules);
            /* reduce2: rank 0 after one step; rank 1 after its send */
            build(0, sc, m);
            times(&mach, sc, 2, rules, t, cp);
            CHECK_NS(t[0], D);
            CHECK_NS(t[1], send_only(p, m, rules));
            if (rules == KP_RULES_LOGGOPSIM) /* the critical path: the combine is compute */
                CHECK_NS(cp[KP_SIM_COMPUTE], (double)m * p->gamma);
            /* the model (executor rules) on the same schedules */
            kp_model_result mr = {.rank_ns = u};
            CHECK_THAT(kp_model_scheds_rules(&mach, sc, 2, rules, &mr) == KP_SUCCESS);
            CHECK_NS(mr.time_ns, D);
            CHECK_THAT(mr.reduces == 1 && mr.reduce_bytes == m && mr.messages == 1 && mr.copies == 0);
            free_all(sc, 2);
            /* chain3: two steps in a row to rank 0; rank 1's send follows its combine */
            build(1, sc, m);
            times(&mach, sc, 3, rules, t, cp);
            CHECK_NS(t[0], 2 * D);
            CHECK_NS(t[1], D + send_only(p, m, rules));
            CHECK_NS(t[2], send_only(p, m, rules));
            if (rules == KP_RULES_LOGGOPSIM)
                CHECK_NS(cp[KP_SIM_COMPUTE], 2.0 * (double)m * p->gamma);
            free_all(sc, 3);
            /* recursive doubling: log2 P steps, every rank alike */
            for (int c = 2; c < NCASES; c++) {
                const int P = cases[c].P, steps = P == 4 ? 2 : 3;
                build(c, sc, m);
                times(&mach, sc, P, rules, t, cp);
                for (int q = 0; q < P; q++)
                    CHECK(fabs(t[q] - steps * D) < 1e-9, "%s set %s rules %s rank %d: %.3f, expected %d * %.3f",
                          cases[c].name, p->name, kp_timing_rules_name(rules), q, t[q], steps, D);
                if (rules == KP_RULES_LOGGOPSIM)
                    CHECK_NS(cp[KP_SIM_COMPUTE], steps * (double)m * p->gamma);
                mr = (kp_model_result){.rank_ns = u};
                CHECK_THAT(kp_model_scheds_rules(&mach, sc, P, rules, &mr) == KP_SUCCESS);
                CHECK_NS(mr.time_ns, steps * D);
                CHECK_THAT(mr.reduces == (int64_t)P * steps && mr.reduce_bytes == (int64_t)P * steps * m);
                free_all(sc, P);
            }
        }
    }
    /* worked numbers (set a, m = 8: 300 + 2000 + 300 + 7 * 1 + 8 * 2 = 2623 ns a step, both rules;
     * set b: 700 + 1500 + 700 + 7 * 3 + 4 = 2925 under LogGOPSim's, 700 + 8 + 1500 + 21 + 700 + 4 =
     * 2933 under the executor's) */
    CHECK_NS(step(&sets[0], 8, KP_RULES_LOGGOPSIM), 2623);
    CHECK_NS(step(&sets[0], 8, KP_RULES_EXECUTOR), 2623);
    CHECK_NS(step(&sets[1], 8, KP_RULES_LOGGOPSIM), 2925);
    CHECK_NS(step(&sets[1], 8, KP_RULES_EXECUTOR), 2933);
    /* gamma 0: the combine is free, and a step is the message alone */
    pset z = sets[0];
    z.gamma = 0;
    const kp_machine mz = machine(&z);
    build(2, sc, 8);
    times(&mz, sc, 4, KP_RULES_LOGGOPSIM, t, NULL);
    CHECK_NS(t[0], 2 * (300 + 2000 + 300 + 7));
    free_all(sc, 4);
}

/* ---- (b) classes ------------------------------------------------------------ */

/* one rank combining n bytes with its operands and result in the given
 * buffers: its time under both rules equals kp_rule_local_cost's */
static double one_combine(const kp_machine *m, int abuf, int bbuf, int dbuf, int64_t n, kp_timing_rules rules)
{
    kp_sched s;
    kp_sched_init_coll(&s, KP_COLL_ALLREDUCE, 0, 1, n, 0, 0);
    kp_sched_set_reduction(&s, 1, 1, NULL);
    kp_sched_reduce(&s, abuf, 0, bbuf, 0, dbuf, 0, n);
    kp_sched_finish(&s);
    double t = -1;
    times(m, &s, 1, rules, &t, NULL);
    kp_sched_free(&s);
    return t;
}

static void test_classes(void)
{
    kp_machine m;
    kp_params_init(&m);
    m.memcpy_ = (kp_linear){.fixed = 4, .per_byte = 0.01};
    m.copy_in = (kp_linear){.fixed = 20, .per_byte = 0.05};
    m.copy_out = (kp_linear){.fixed = 30, .per_byte = 0.06};
    m.data_line = 11;
    m.reduce = (kp_linear){.fixed = 5, .per_byte = 0.25};
    const int64_t n = 4000;
    const double gamma = 5 + 0.25 * 4000; /* 1005 */
    for (int rl = 0; rl < 2; rl++) {
        const kp_timing_rules rules = rl ? KP_RULES_EXECUTOR : KP_RULES_LOGGOPSIM;
        /* private: compute.reduce alone */
        CHECK_NS(one_combine(&m, KP_BUF_SEND, KP_BUF_SCRATCH, KP_BUF_RECV, n, rules), gamma);
        /* an operand in the segment: + copy_out + data_line - memcpy = (30 + 240 + 11) - (4 + 40) */
        CHECK_NS(one_combine(&m, KP_BUF_SHM, KP_BUF_SEND, KP_BUF_RECV, n, rules), gamma + 237);
        CHECK_NS(one_combine(&m, KP_BUF_SEND, KP_BUF_SHM, KP_BUF_SHM, n, rules), gamma + 237);
        /* an operand in a flag line (56 B, inside the flag's cache line): + copy_out - memcpy */
        CHECK_NS(one_combine(&m, KP_BUF_LINE, KP_BUF_SEND, KP_BUF_RECV, 56, rules),
                 5 + 0.25 * 56 + (30 + 0.06 * 56) - (4 + 0.01 * 56));
        /* the result into the segment: + copy_in - memcpy = (20 + 200) - (4 + 40) */
        CHECK_NS(one_combine(&m, KP_BUF_SEND, KP_BUF_RECV, KP_BUF_SHM, n, rules), gamma + 176);
    }
    /* a premium below 0 counts 0: shared copies cheaper than memcpy (an odd file) */
    m.copy_out = (kp_linear){.fixed = 0, .per_byte = 0.001};
    m.data_line = 0;
    CHECK_NS(one_combine(&m, KP_BUF_SHM, KP_BUF_SEND, KP_BUF_RECV, n, KP_RULES_EXECUTOR), gamma);
    /* the default of a file without compute.reduce: memcpy's slopes x 1.5 */
    m.memcpy_ = (kp_linear){.fixed = 4, .per_byte = 0.01, .large_from = 16384, .large_per_byte = 0.02};
    const kp_linear d = kp_params_reduce_default(&m);
    CHECK_THAT(d.fixed == 4 && d.large_from == 16384);
    CHECK_NS(d.per_byte, 0.015);
    CHECK_NS(d.large_per_byte, 0.03);
}

/* ---- (c) GOAL ----------------------------------------------------------------- */

static char *goal_text(const kp_sched *sc, int P, double gamma)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kp_goal_write_gamma(sc, P, gamma, f);
    fclose(f);
    return buf;
}

static void test_goal(void)
{
    kp_sched sc[PMAX];
    build(0, sc, 8);
    char *t = goal_text(sc, 2, 2.0);
    /* rank 0: the receive, the round's join, the combine (8 B x 2 ns) after the join */
    CHECK(strstr(t, "rank 0 {\nl0: recv 8b from 1 tag 0\nl1: calc 0\nl1 requires l0\nl2: calc 16\nl2 requires l1\n}") !=
              NULL,
          "GOAL of reduce2 at gamma 2:\n%s", t);
    free(t);
    t = goal_text(sc, 2, 0.3); /* 2.4 ns: rounded to 2 */
    CHECK(strstr(t, "l2: calc 2\n") != NULL, "calc rounded:\n%s", t);
    free(t);
    free_all(sc, 2);
    /* rd4: the combine requires the exchange's join, the next send requires the combine's join */
    build(2, sc, 8);
    t = goal_text(sc, 1, 1.0);
    CHECK(strstr(t, "l0: send 8b to 1 tag 0\nl1: recv 8b from 1 tag 0\nl2: calc 0\nl2 requires l0\nl2 requires l1\n"
                    "l3: calc 8\nl3 requires l2\nl4: calc 0\nl4 requires l3\nl5: send 8b to 2 tag 0\nl5 requires l4\n") !=
              NULL,
          "GOAL of rd4 rank 0:\n%s", t);
    free(t);
    free_all(sc, 4);
}

/* ---- (d) LogGOPSim ------------------------------------------------------------------ */

static int write_goals(const char *dir)
{
    kp_sched sc[PMAX];
    for (int c = 0; c < NCASES; c++)
        for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++)
            for (int k = 0; k < 2; k++) {
                if (build(c, sc, sizes[b])) {
                    fprintf(stderr, "%s: a schedule refused: %s\n", cases[c].name, sc[0].errmsg);
                    return 1;
                }
                char path[1024];
                snprintf(path, sizeof path, "%s/%s_m%lld_%s.goal", dir, cases[c].name, (long long)sizes[b],
                         sets[k].name);
                FILE *f = fopen(path, "w");
                if (!f) {
                    perror(path);
                    return 1;
                }
                kp_goal_write_gamma(sc, cases[c].P, sets[k].gamma, f);
                fclose(f);
                const pset *p = &sets[k];
                /* what the recording script needs: the file and LogGOPSim's options */
                printf("%s case=%s P=%d m=%lld set=%s gamma=%g -L %g -o %g -g %g -G %g -O %g -S %lld\n", path,
                       cases[c].name, cases[c].P, (long long)sizes[b], p->name, p->gamma, p->L, p->o, p->g, p->G,
                       p->O, (long long)p->S);
                free_all(sc, cases[c].P);
            }
    return 0;
}

/* the recorded file: "# case=NAME P=.. m=.. set=.. ... | commands" headers,
 * each followed by LogGOPSim's "rank r t" lines */
static void test_loggopsim(const char *data, int perturb)
{
    FILE *f = fopen(data, "r");
    CHECK(f != NULL, "cannot open %s", data);
    if (!f)
        return;
    char line[1024], name[64] = "", set[8] = "";
    long long m = 0;
    int ncase = -1, nrec = 0, nranks = 0, seen = 0;
    double t[PMAX];
    kp_sched sc[PMAX];
    int have = 0;
    while (fgets(line, sizeof line, f)) {
        int r;
        long long ns;
        if (line[0] == '#') {
            if (have)
                free_all(sc, cases[ncase].P);
            have = 0;
            CHECK(sscanf(line, "# case=%63s P=%*d m=%lld set=%7s", name, &m, set) == 3, "bad header: %s", line);
            ncase = -1;
            for (int c = 0; c < NCASES; c++)
                if (!strcmp(cases[c].name, name))
                    ncase = c;
            int k = !strcmp(set, "b");
            CHECK(ncase >= 0 && (k || !strcmp(set, "a")), "unknown case or set: %s", line);
            if (ncase < 0)
                continue;
            build(ncase, sc, m);
            have = 1;
            const kp_machine mach = machine(&sets[k]);
            times(&mach, sc, cases[ncase].P, KP_RULES_LOGGOPSIM, t, NULL);
            nrec++;
        } else if (sscanf(line, "rank %d %lld", &r, &ns) == 2 && ncase >= 0) {
            ns += perturb; /* --perturb: every recorded time 1 ns later, which must fail */
            CHECK(r >= 0 && r < cases[ncase].P, "%s: rank %d out of range", name, r);
            if (r >= 0 && r < cases[ncase].P)
                CHECK(t[r] == (double)ns, "LogGOPSim %s m=%lld set %s rank %d: %lld ns, kport %.3f ns", name, m, set,
                      r, ns, t[r]);
            nranks++;
            seen |= 1 << ncase;
        }
    }
    if (have)
        free_all(sc, cases[ncase].P);
    fclose(f);
    /* every case, both sizes, both sets */
    CHECK(nrec == NCASES * 4 && seen == (1 << NCASES) - 1, "%d recorded cases (expected %d)", nrec, NCASES * 4);
    printf("LogGOPSim: %d cases, %d ranks compared\n", nrec, nranks);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--goal"))
        return write_goals(argv[2]);
    const int perturb = argc == 3 && !strcmp(argv[1], "--perturb");
    if (argc != 2 && !perturb) {
        fprintf(stderr, "usage: test_reduce [--perturb] DATA | test_reduce --goal DIR\n");
        return 2;
    }
    test_hand();
    test_classes();
    test_goal();
    test_loggopsim(argv[argc - 1], perturb);
    printf("test_reduce: %ld passed, %ld failed\n", checks - fails, fails);
    return fails ? 1 : 0;
}
