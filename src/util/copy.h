/*
 * kp_copy: kport's copy of a block of bytes (schedules' copies, one-sided
 * transfers on one machine).
 */
#ifndef KP_COPY_H
#define KP_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* memcpy of non-overlapping bytes, around a slow path of glibc 2.36's
 * memcpy on this machine's AMD EPYC: copies of 4 KiB-512 KiB whose
 * destination lies 1-63 bytes past the source modulo 4096 (a malloc'd
 * buffer, 16 bytes past a page, against a page-aligned window) run
 * 8-26x slower (rep movsb; 64 KiB: 22 us against 1.3; 8 and 16 bytes
 * past: 0.33 ns/B against 0.02, 48: 1.5x). Such copies go in pieces of
 * 2 KiB, below glibc's rep movsb threshold (2.2 us). The one-sided
 * transfers (src/strided) and every copy of a schedule (src/exec) go through
 * it. docs/PERFORMANCE.md, "Direct by load/store on one machine" and
 * "Session 28". */
#define KP_COPY_PIECE 2048
static inline void kp_copy(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    if (n > KP_COPY_PIECE && (((uintptr_t)d - (uintptr_t)s) & 4095) - 1 < 63)
        for (; n > KP_COPY_PIECE; n -= KP_COPY_PIECE, d += KP_COPY_PIECE, s += KP_COPY_PIECE)
            memcpy(d, s, KP_COPY_PIECE);
    memcpy(d, s, n);
}

#endif
