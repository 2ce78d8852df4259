/* The floor of the house (src/util): the clock kport measures with. */
#ifndef KP_UTIL_CLOCK_H
#define KP_UTIL_CLOCK_H

#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds (calibration, the choice's check) */
static inline double kp_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

#endif
