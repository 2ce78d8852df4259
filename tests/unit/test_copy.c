/*
 * kp_copy (src/util/copy.h): memcpy in 2 KiB pieces where glibc's memcpy has
 * a slow path (destination 1-63 bytes past the source modulo 4096). Every
 * byte copied, none before or after the destination touched, for sizes
 * around the piece size and beyond it, at every relative offset of the
 * two buffers within 0..4160 (both sides of the slow band, and the band),
 * against a byte-by-byte reference. No MPI communication.
 */
#include "util/copy.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    enum { PAGE = 4096, SPAN = 3 * PAGE + 64, GUARD = 64 };
    unsigned char *src = aligned_alloc(PAGE, 4 * PAGE), *dst = aligned_alloc(PAGE, 8 * PAGE);
    for (int i = 0; i < 4 * PAGE; i++)
        src[i] = (unsigned char)(i * 7 + i / 251);
    const size_t sizes[] = {0, 1, 31, 2047, 2048, 2049, 4096, 6143, 6144, 9000, SPAN - 64};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        const size_t n = sizes[si];
        for (int off = 0; off <= PAGE + 64; off += off < 80 || off > PAGE - 80 ? 1 : 61) {
            /* source at src + 128, destination at dst + 128 + off: dst - src = off mod 4096 */
            unsigned char *d = dst + GUARD + 64 + off;
            const unsigned char *s = src + 128;
            memset(dst, 0xA5, 8 * PAGE);
            kp_copy(d, s, n);
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += d[i] != s[i];
            size_t outside = 0;
            for (unsigned char *p = dst; p < d; p++)
                outside += *p != 0xA5;
            for (unsigned char *p = d + n; p < dst + 8 * PAGE; p++)
                outside += *p != 0xA5;
            CHECK(bad == 0 && outside == 0, "kp_copy of %zu bytes, dst - src = %d mod 4096: %zu wrong, %zu outside",
                  n, (int)(((uintptr_t)d - (uintptr_t)s) & 4095), bad, outside);
        }
    }
    free(src);
    free(dst);
    printf("unit_copy: %ld checks, %ld failed\n", checks, fails);
    return fails != 0;
}
