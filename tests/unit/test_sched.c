/* Unit tests of the schedule IR helpers, the registry parser and the GOAL export. */
#include "algo/algo.h"
#include "kport.h"
#include "sched/goal.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void test_helpers(void)
{
    kp_sched s;
    kp_sched_init(&s, 1, 4, 8);
    kp_sched_send(&s, 2, KP_BUF_SEND, 0, 0); /* dropped */
    kp_sched_next_round(&s);                 /* empty round: not counted */
    CHECK_THAT(s.nops == 0 && s.nrounds == 0 && s.cur_round == 0);
    kp_sched_send(&s, 2, KP_BUF_SEND, 0, 8);
    kp_sched_recv(&s, 0, KP_BUF_RECV, 0, 8);
    kp_sched_next_round(&s);
    kp_sched_copy(&s, KP_BUF_SEND, 0, KP_BUF_RECV, 8, 8);
    CHECK_THAT(kp_sched_finish(&s) == KP_SUCCESS);
    CHECK_THAT(s.nops == 3 && s.nrounds == 2);
    CHECK_THAT(s.ops[0].kind == KP_OP_SEND && s.ops[0].round == 0 && s.ops[0].u.send.peer == 2);
    CHECK_THAT(s.ops[1].kind == KP_OP_RECV && s.ops[1].round == 0 && s.ops[1].u.recv.dst.off == 0);
    CHECK_THAT(s.ops[2].kind == KP_OP_COPY && s.ops[2].round == 1 && s.ops[2].u.copy.dst.off == 8);
    kp_sched_need_scratch(&s, 100);
    kp_sched_need_scratch(&s, 50);
    CHECK_THAT(s.scratch_bytes == 100);
    kp_sched_send(&s, 0, KP_BUF_RECV, -1, 8); /* negative offset: an internal error */
    CHECK_THAT(s.err == KP_ERR_INTERNAL);
    CHECK_THAT(kp_sched_refuse(&s, KP_ERR_PARAM, "later") == KP_ERR_INTERNAL); /* first error sticks */
    kp_sched_reset(&s);
    CHECK_THAT(s.nops == 0 && s.err == 0);
    CHECK_THAT(kp_sched_refuse(&s, KP_ERR_UNSUPPORTED, "P=%d", 7) == KP_ERR_UNSUPPORTED && !strcmp(s.errmsg, "P=7"));
    kp_sched_free(&s);

    CHECK_THAT(kp_ilog(1, 2) == 0 && kp_ilog(8, 2) == 3 && kp_ilog(9, 2) == 3 && kp_ilog(26, 3) == 2 &&
               kp_ilog(27, 3) == 3);
    CHECK_THAT(kp_ipow(3, 4) == 81 && kp_ipow(2, 0) == 1 && kp_ipow(10, 30) == INT64_MAX);
    CHECK_THAT(kp_is_pow(1, 3) && kp_is_pow(27, 3) && !kp_is_pow(18, 3) && !kp_is_pow(0, 2));
    CHECK_THAT(kp_is_pow2(64) && !kp_is_pow2(96) && !kp_is_pow2(0));
    CHECK_THAT(kp_mod(-1, 5) == 4 && kp_mod(7, 5) == 2 && kp_mod(-10, 5) == 0);
}

static void test_parse(void)
{
    const kp_algo *a;
    kp_params p;
    char err[256];
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "bruck:k=3", &a, &p, err, sizeof err) == KP_SUCCESS && a &&
          !strcmp(a->name, "bruck") && p.k == 3);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "bruck", &a, &p, err, sizeof err) == KP_SUCCESS &&
               p.k == a->defaults.k);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, " concurrent_exchange:C=4 ", &a, &p, err, sizeof err) == KP_SUCCESS &&
          p.C == 4);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "auto", &a, &p, err, sizeof err) == KP_SUCCESS && a == NULL);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "nosuch", &a, &p, err, sizeof err) == KP_ERR_PARAM &&
               strstr(err, "ring"));
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "bruck:k=0", &a, &p, err, sizeof err) == KP_ERR_PARAM);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "bruck:k=x", &a, &p, err, sizeof err) == KP_ERR_PARAM);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "bruck:C=2", &a, &p, err, sizeof err) == KP_ERR_PARAM);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "ring:k=2", &a, &p, err, sizeof err) == KP_ERR_PARAM);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "bruck:k", &a, &p, err, sizeof err) == KP_ERR_PARAM);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "auto:k=2", &a, &p, err, sizeof err) == KP_ERR_PARAM);
    a = kp_algo_find(KP_COLL_ALLGATHER, "standard_exchange");
    p = (kp_params){.k = 5};
    kp_algo_format(a, &p, err, sizeof err);
    CHECK_THAT(!strcmp(err, "standard_exchange:k=5"));
    a = kp_algo_find(KP_COLL_ALLGATHER, "ring");
    kp_algo_format(a, &p, err, sizeof err);
    CHECK_THAT(!strcmp(err, "ring"));
    CHECK_THAT(kp_algo_count(KP_COLL_ALLGATHER) == 12);
    CHECK_THAT(kp_algo_find(KP_COLL_GATHER, "direct") != kp_algo_find(KP_COLL_ALLGATHER,
               "direct")); /* per collective */
    p = (kp_params){.tree = 2};
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "smp_gather_bcast:tree=3", &a, &p, err, sizeof err) == KP_ERR_PARAM);
    CHECK_THAT(kp_algo_parse(KP_COLL_ALLGATHER, "shm_flat:chunk_kb=0", &a, &p, err, sizeof err) == KP_SUCCESS);
    CHECK_THAT(kp_algo_parse(KP_COLL_BARRIER, "nway_dissemination:n=3", &a, &p, err, sizeof err) == KP_SUCCESS &&
               p.n == 3);
    CHECK_THAT(kp_algo_parse(KP_COLL_BARRIER, "nway_dissemination:k=3", &a, &p, err, sizeof err) == KP_ERR_PARAM &&
          strstr(err, "it takes n"));
}

static void test_goal(void)
{
    const kp_algo *a = kp_algo_find(KP_COLL_ALLGATHER, "ring");
    kp_sched s[3];
    for (int r = 0; r < 3; r++)
        CHECK_THAT(kp_algo_build(a, NULL, r, 3, 8, &s[r]) == KP_SUCCESS);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kp_goal_write(s, 3, f);
    fclose(f);
    CHECK_THAT(strncmp(text, "num_ranks 3\nrank 0 {\n", 21) == 0);
    CHECK_THAT(strstr(text, "send 8b to 1 tag 0") != NULL);
    CHECK_THAT(strstr(text, "recv 8b from 2 tag 0") != NULL);
    CHECK_THAT(strstr(text, "requires") != NULL);
    int opens = 0, closes = 0;
    for (char *c = text; *c; c++)
        opens += *c == '{', closes += *c == '}';
    CHECK_THAT(opens == 3 && closes == 3);
    free(text);
    for (int r = 0; r < 3; r++)
        kp_sched_free(&s[r]);
}

/* GOAL export of one schedule into a string (caller frees) */
static char *goal_text(const kp_sched *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    kp_goal_write(s, 1, f);
    fclose(f);
    return text;
}

/* MPI_IN_PLACE: the copy of the own block onto itself is left out, as the
 * executor skips it; a round left empty adds no join vertex */
static void test_goal_inplace(void)
{
    for (int ip = 0; ip < 2; ip++) {
        kp_sched s;
        kp_sched_init_coll(&s, KP_COLL_ALLGATHER, 1, 3, 8, 0, ip);
        kp_sched_copy(&s, KP_BUF_SEND, 0, KP_BUF_RECV, 8, 8); /* own block: a no-op in place */
        kp_sched_next_round(&s);
        kp_sched_send(&s, 2, KP_BUF_RECV, 8, 8);
        kp_sched_next_round(&s);
        kp_sched_recv(&s, 0, KP_BUF_RECV, 0, 8);
        kp_sched_copy(&s, KP_BUF_RECV, 0, KP_BUF_SCRATCH, 0, 8); /* a real copy, kept either way */
        char *t = goal_text(&s);
        if (ip)
            CHECK_THAT(!strcmp(t, "num_ranks 1\nrank 1 {\n"
                             "l0: send 8b to 2 tag 0\n"
                             "l1: calc 0\nl1 requires l0\n"
                             "l2: recv 8b from 0 tag 0\nl2 requires l1\n"
                             "l3: calc 8\nl3 requires l1\n}\n"));
        else
            CHECK_THAT(!strcmp(t, "num_ranks 1\nrank 1 {\n"
                             "l0: calc 8\n"
                             "l1: calc 0\nl1 requires l0\n"
                             "l2: send 8b to 2 tag 0\nl2 requires l1\n"
                             "l3: calc 0\nl3 requires l2\n"
                             "l4: recv 8b from 0 tag 0\nl4 requires l3\n"
                             "l5: calc 8\nl5 requires l3\n}\n"));
        free(t);
        kp_sched_free(&s);
    }
    /* one rank in place: nothing left but the vertex LogGOPSim needs */
    kp_sched one;
    CHECK_THAT(kp_algo_build_ex(kp_algo_find(KP_COLL_ALLGATHER, "ring"), NULL, 0, 1, 8, 0, 1, &one) == KP_SUCCESS);
    char *t1 = goal_text(&one);
    CHECK_THAT(!strcmp(t1, "num_ranks 1\nrank 0 {\nl0: calc 0\n}\n"));
    free(t1);
    kp_sched_free(&one);
    /* a built in-place ring all-gather: no calc of the own block on any rank */
    const kp_algo *a = kp_algo_find(KP_COLL_ALLGATHER, "ring");
    for (int r = 0; r < 3; r++) {
        kp_sched s;
        CHECK_THAT(kp_algo_build_ex(a, NULL, r, 3, 8, 0, 1, &s) == KP_SUCCESS);
        char *t = goal_text(&s);
        CHECK_THAT(strstr(t, "calc 8") == NULL && strstr(t, "send 8b") != NULL);
        free(t);
        kp_sched_free(&s);
    }
}

int main(void)
{
    test_helpers();
    test_parse();
    test_goal();
    test_goal_inplace();
    printf("%ld passed, %ld failed\n", checks - fails, fails);
    return fails != 0;
}
