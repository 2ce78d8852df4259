/*
 * How far the checker's sweeps go: P = 1..64, or 1..KPORT_CHECK_PMAX when
 * that is set (the sanitizer build sets 20: what AddressSanitizer and
 * UndefinedBehaviorSanitizer add is in the code paths, which P <= 20 with
 * every layout, parameter and size already runs; tests/CMakeLists.txt).
 */
#ifndef KPORT_TESTS_CHECK_SWEEP_H
#define KPORT_TESTS_CHECK_SWEEP_H

#include <stdlib.h>

static inline int sweep_pmax(void)
{
    const char *e = getenv("KPORT_CHECK_PMAX");
    const int v = e ? atoi(e) : 0;
    return v >= 1 && v <= 64 ? v : 64;
}

#endif
