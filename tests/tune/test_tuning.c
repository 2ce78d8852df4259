/*
 * The tuning file's loader and matcher (src/select/tuning.c), without MPI
 * communication: a valid file and every field read back; ranges ("any", a
 * number, [min, max], [min, null]); first match wins; the layout (nodes,
 * ranks per node: every node's count within the range); each malformed
 * case refused with the file, the line and the field in its message; an
 * unreadable file.
 */
#include "core/core.h"
#include "select/tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"

static const char *valid =
    "{\n"                                                                        /* 1 */
    "  \"version\": 1,\n"                                                        /* 2 */
    "  \"comment\": \"test\",\n"                                                 /* 3 */
    "  \"rules\": [\n"                                                           /* 4 */
    "    {\"collective\": \"allgather\", \"P\": [2, 8], \"nodes\": 1,\n"         /* 5 */
    "     \"bytes\": [0, 4095], \"algorithm\": \"bruck:k=3\", \"comment\": \"c\"},\n" /* 6 */
    "    {\"collective\": \"allgather\", \"P\": \"any\", \"bytes\": [0, null],\n" /* 7 */
    "     \"algorithm\": \"ring\"},\n"                                           /* 8 */
    "    {\"collective\": \"allgather\", \"nodes\": [2, null], \"ppn\": [2, 4],\n" /* 9 */
    "     \"algorithm\": \"smp_direct:k=2,transport=rma\"},\n"                   /* 10 */
    "    {\"collective\": \"barrier\", \"P\": 4, \"algorithm\": \"nway_dissemination:n=3\"},\n" /* 11 */
    "    {\"collective\": \"gather\", \"algorithm\": \"auto\"},\n"               /* 12 */
    "    {\"collective\": \"alltoall\", \"bytes\": [256, 256], \"algorithm\": \"pairwise\"}\n" /* 13 */
    "  ]\n"
    "}\n";

static void test_valid(void)
{
    kp_tuning t;
    char err[600];
    int rc = kp_tuning_parse(valid, strlen(valid), "v.json", &t, err, sizeof err);
    CHECK(rc == KP_SUCCESS, "valid file refused: %s", err);
    if (rc)
        return;
    CHECK(t.n == 6, "6 rules, got %d", t.n);
    CHECK(strcmp(t.name, "v.json") == 0, "name %s", t.name);
    const kp_tuning_rule *r = t.rule;
    CHECK(r[0].coll == KP_COLL_ALLGATHER && r[0].line == 5, "rule 1: coll %d line %d", r[0].coll, r[0].line);
    CHECK(r[0].P.lo == 2 && r[0].P.hi == 8, "rule 1 P [%lld, %lld]", (long long)r[0].P.lo, (long long)r[0].P.hi);
    CHECK(r[0].nodes.lo == 1 && r[0].nodes.hi == 1, "rule 1 nodes exact 1");
    CHECK(r[0].ppn.lo == 0 && r[0].ppn.hi == KP_TUNING_UNBOUNDED, "rule 1 ppn any");
    CHECK(r[0].bytes.lo == 0 && r[0].bytes.hi == 4095, "rule 1 bytes");
    CHECK(r[0].algo && strcmp(r[0].algo->name, "bruck") == 0 && r[0].prm.k == 3, "rule 1 bruck:k=3");
    CHECK(strcmp(r[0].spec, "bruck:k=3") == 0, "rule 1 spec %s", r[0].spec);
    CHECK(r[1].P.lo == 0 && r[1].P.hi == KP_TUNING_UNBOUNDED && r[1].bytes.hi == KP_TUNING_UNBOUNDED, "rule 2 any");
    CHECK(r[1].line == 7, "rule 2 line %d", r[1].line);
    CHECK(r[2].nodes.lo == 2 && r[2].nodes.hi == KP_TUNING_UNBOUNDED && r[2].ppn.lo == 2 && r[2].ppn.hi == 4,
          "rule 3 layout");
    CHECK(r[2].algo && strcmp(r[2].algo->name, "smp_direct") == 0 && r[2].prm.k == 2 &&
              r[2].prm.transport == KP_TRANSPORT_RMA,
          "rule 3 smp_direct:k=2,transport=rma");
    CHECK(r[3].coll == KP_COLL_BARRIER && r[3].P.lo == 4 && r[3].P.hi == 4 && r[3].prm.n == 3, "rule 4 barrier");
    CHECK(r[4].coll == KP_COLL_GATHER && r[4].algo == NULL, "rule 5 auto");
    CHECK(r[5].coll == KP_COLL_ALLTOALL && r[5].bytes.lo == 256 && r[5].bytes.hi == 256, "rule 6");

    /* first match wins; ranges inclusive */
    CHECK(kp_tuning_match(&t, 0, KP_COLL_ALLGATHER, 4, 1, 4, 4, 100) == 0, "P=4 1 node 100 B -> rule 1");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_ALLGATHER, 2, 1, 2, 2, 4095) == 0, "4095 B -> rule 1 (max inclusive)");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_ALLGATHER, 2, 1, 2, 2, 4096) == 1, "4096 B -> rule 2");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_ALLGATHER, 9, 1, 9, 9, 0) == 1, "P=9 -> rule 2");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_ALLGATHER, 8, 2, 4, 4, 0) == 1, "2 nodes: not rule 1 -> rule 2");
    CHECK(kp_tuning_match(&t, 1, KP_COLL_ALLGATHER, 4, 1, 4, 4, 100) == 1, "from 1: rule 2");
    CHECK(kp_tuning_match(&t, 2, KP_COLL_ALLGATHER, 8, 2, 4, 4, 100) == 2, "from 2, 2 nodes of 4: rule 3");
    CHECK(kp_tuning_match(&t, 2, KP_COLL_ALLGATHER, 9, 2, 4, 5, 100) == -1, "a node of 5 ranks: not rule 3");
    CHECK(kp_tuning_match(&t, 2, KP_COLL_ALLGATHER, 5, 2, 1, 4, 100) == -1, "a node of 1 rank: not rule 3");
    CHECK(kp_tuning_match(&t, 2, KP_COLL_ALLGATHER, 4, 1, 4, 4, 100) == -1, "1 node: not rule 3");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_BARRIER, 4, 1, 4, 4, 0) == 3, "barrier P=4 -> rule 4");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_BARRIER, 5, 1, 5, 5, 0) == -1, "barrier P=5: none");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_GATHER, 3, 1, 3, 3, 9) == 4, "gather -> rule 5");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_ALLTOALL, 3, 1, 3, 3, 256) == 5, "alltoall 256 -> rule 6");
    CHECK(kp_tuning_match(&t, 0, KP_COLL_ALLTOALL, 3, 1, 3, 3, 255) == -1, "alltoall 255: none");
    CHECK(kp_tuning_match(NULL, 0, KP_COLL_ALLTOALL, 3, 1, 3, 3, 256) == -1, "no file: none");
    kp_tuning_free(&t);
    CHECK(t.n == 0 && t.rule == NULL, "freed");

    /* an empty rule list is valid: the built-in rules decide everything */
    const char *empty = "{\"version\": 1, \"rules\": []}";
    rc = kp_tuning_parse(empty, strlen(empty), "e.json", &t, err, sizeof err);
    CHECK(rc == KP_SUCCESS && t.n == 0, "empty rule list: %s", err);
    CHECK(kp_tuning_match(&t, 0, KP_COLL_ALLGATHER, 2, 1, 2, 2, 8) == -1, "empty list matches nothing");
    kp_tuning_free(&t);
}

/* each malformed text, and what its message must contain */
static const struct {
    const char *text, *expect;
} bad[] = {
    {"", "b.json, line 1, column 1: empty file"},
    {"{\"version\": 1,\n \"rules\": [\n {\"collective\": \"allgather\" \"algorithm\": \"ring\"}]}",
     "b.json, line 3, column "},
    {"[1, 2]", "b.json, line 1: an array: expected an object"},
    {"{\"rules\": []}", "b.json, line 1: \"version\": missing"},
    {"{\"version\": 2, \"rules\": []}", "b.json, line 1: \"version\": 2: this kport reads version 1"},
    {"{\"version\": \"1\", \"rules\": []}", "\"version\": a string: expected the number 1"},
    {"{\"version\": 1}", "\"rules\": missing"},
    {"{\"version\": 1, \"rules\": {}}", "\"rules\": an object: expected an array"},
    {"{\"version\": 1,\n \"rulez\": []}", "b.json, line 2: \"rulez\": unknown field"},
    {"{\"version\": 1, \"rules\": [\n 7]}", "b.json, line 2: rule 1: a number: expected an object"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"algorithm\": \"ring\"},\n"
     "{\"collective\": \"allgather\", \"algorithm\": \"ring\",\n \"byte\": [0, 1]}]}",
     "b.json, line 4: rule 2: \"byte\": unknown field"},
    {"{\"version\": 1, \"rules\": [\n{\"algorithm\": \"ring\"}]}", "line 2: rule 1: \"collective\": missing"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"scan\", \"algorithm\": \"ring\"}]}",
     "line 2: rule 1: \"collective\": unknown collective \"scan\""},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": 3, \"algorithm\": \"ring\"}]}",
     "rule 1: \"collective\": a number: expected a string"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\"}]}", "line 2: rule 1: \"algorithm\": missing"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\",\n \"algorithm\": \"brook\"}]}",
     "line 3: rule 1: \"algorithm\": unknown algorithm \"brook\""},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"barrier\", \"algorithm\": \"ring\"}]}",
     "rule 1: \"algorithm\": unknown algorithm \"ring\""},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"algorithm\": \"bruck:k=0\"}]}",
     "line 2: rule 1: \"algorithm\": bruck: k=\"0\" must be an integer"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"algorithm\": \"bruck:q=2\"}]}",
     "rule 1: \"algorithm\": "},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"algorithm\": [\"ring\"]}]}",
     "rule 1: \"algorithm\": an array: expected a string"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\",\n \"bytes\": [64, 8], \"algorithm\": \"ring\"}]}",
     "b.json, line 3: rule 1: \"bytes\": min 64 is above max 8"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\",\n \"bytes\": [], \"algorithm\": \"ring\"}]}",
     "line 3: rule 1: \"bytes\": 0 elements: expected [min, max]"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"P\": [2], \"algorithm\": \"ring\"}]}",
     "rule 1: \"P\": 1 element: expected [min, max]"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"P\": \"all\", \"algorithm\": \"ring\"}]}",
     "rule 1: \"P\": \"all\": expected \"any\""},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"P\": 0, \"algorithm\": \"ring\"}]}",
     "rule 1: \"P\": 0: expected a whole number >= 1"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"nodes\": true, \"algorithm\": \"ring\"}]}",
     "rule 1: \"nodes\": a boolean: expected \"any\""},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"ppn\": [1.5, 2], \"algorithm\": \"ring\"}]}",
     "rule 1: \"ppn\": min: expected a whole number >= 1"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"bytes\": [-1, 2], \"algorithm\": \"ring\"}]}",
     "rule 1: \"bytes\": min: expected a whole number >= 0"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"bytes\": [0, \"x\"], \"algorithm\": \"ring\"}]}",
     "rule 1: \"bytes\": max: expected a whole number >= 0 or null, got a string"},
    {"{\"version\": 1, \"rules\": [\n{\"collective\": \"allgather\", \"comment\": 5, \"algorithm\": \"ring\"}]}",
     "rule 1: \"comment\": a number: expected a string"},
};

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        kp_tuning t;
        char err[600] = "";
        int rc = kp_tuning_parse(bad[i].text, strlen(bad[i].text), "b.json", &t, err, sizeof err);
        CHECK(rc == KP_ERR_PARAM, "bad case %zu accepted (rc %d)", i, rc);
        CHECK(strstr(err, bad[i].expect) != NULL, "bad case %zu: message \"%s\" lacks \"%s\"", i, err, bad[i].expect);
        CHECK(t.n == 0 && t.rule == NULL, "bad case %zu: rules left behind", i);
        if (i < 3)
            printf("  e.g. %s\n", err);
    }
}

static void test_read(void)
{
    kp_tuning t;
    char err[600];
    int rc = kp_tuning_read("/nonexistent/t.json", &t, err, sizeof err);
    CHECK(rc == KP_ERR_PARAM && strstr(err, "/nonexistent/t.json: cannot open: No such file"), "unreadable: %s", err);
    char path[] = "/tmp/kport_tuning_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fputs(valid, f);
    fclose(f);
    rc = kp_tuning_read(path, &t, err, sizeof err);
    CHECK(rc == KP_SUCCESS && t.n == 6 && strcmp(t.name, path) == 0, "read back: %s", err);
    kp_tuning_free(&t);
    f = fopen(path, "w"); /* truncated */
    fwrite(valid, 1, 100, f);
    fclose(f);
    rc = kp_tuning_read(path, &t, err, sizeof err);
    CHECK(rc == KP_ERR_PARAM && strstr(err, path) && strstr(err, "unexpected end of file"), "truncated: %s", err);
    remove(path);
}

int main(void)
{
    test_valid();
    test_bad();
    test_read();
    printf("%ld passed, %ld failed\n", checks - fails, fails);
    return fails ? 1 : 0;
}
