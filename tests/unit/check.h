/*
 * The unit tests' assertion: CHECK(cond, printf-style message) counts every
 * check in `checks` and every failure in `fails`, and prints the first 20
 * failures with their file and line. CHECK_THAT(cond) is CHECK with the
 * condition's own text as the message. The test prints the two counts and
 * exits non-zero when fails > 0.
 */
#ifndef KPORT_TESTS_UNIT_CHECK_H
#define KPORT_TESTS_UNIT_CHECK_H

#include <stdio.h>

static long checks, fails;

#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        checks++;                                                                                                    \
        if (!(cond)) {                                                                                               \
            if (fails++ < 20) {                                                                                      \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                          \
                printf(__VA_ARGS__);                                                                                 \
                printf("\n");                                                                                        \
            }                                                                                                        \
        }                                                                                                            \
    } while (0)

/* CHECK with the condition's text as the message: "FAIL file:line: a == b" */
#define CHECK_THAT(cond) CHECK(cond, "%s", #cond)

#endif
