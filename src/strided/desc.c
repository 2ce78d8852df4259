/*
 * The strided descriptor (ARMCI's convention): validation, sizes, chunk
 * offsets, packing and unpacking any byte range of the packed stream.
 *
 * A section has levels L, count[0] contiguous bytes per chunk and
 * count[1..L] blocks per level; a side (origin or target) adds strides
 * stride[0..L-1] in bytes. Chunks are numbered c = i1 + count[1] * (i2 +
 * count[2] * (...)), level 1 fastest, which is the order of the packed
 * stream: stream byte s is byte s % count[0] of chunk s / count[0], at
 * layout offset sum_j i_j * stride[j-1] + s % count[0].
 *
 * Example: count = {3, 2, 2}, stride = {10, 40}: chunks at 0, 10, 40, 50;
 * stream bytes 0..2 <- layout 0..2, 3..5 <- 10..12, 6..8 <- 40..42,
 * 9..11 <- 50..52; extent 53.
 *
 * Pure: no MPI calls (MPI_Aint is only the API's integer type), tested
 * exhaustively by tests/unit/test_strided_desc.c.
 */
#include "strided/strided.h"

#include "util/env.h"
#include "util/error.h"

#include <string.h>

int kp_sd_counts(kp_sd *sd, const MPI_Aint count[], int levels)
{
    memset(sd, 0, sizeof(*sd));
    if (levels < 0 || levels > KP_SD_MAXL)
        return kp_error(KP_ERR_ARG, "strided: levels = %d, must be 0..%d", levels, KP_SD_MAXL);
    if (count == NULL)
        return kp_error(KP_ERR_ARG, "strided: count is NULL");
    sd->levels = levels;
    int64_t n = 1, zero = 0;
    for (int i = 0; i <= levels; i++) {
        if (count[i] < 0)
            return kp_error(KP_ERR_COUNT, "strided: count[%d] = %lld is negative", i, (long long)count[i]);
        sd->count[i] = count[i];
        if (count[i] == 0)
            zero = 1;
    }
    if (zero)
        return KP_SUCCESS; /* N = 0: a no-op, nchunks = total = 0 */
    for (int i = 1; i <= levels; i++) {
        if (n > KP_SD_LIMIT / sd->count[i])
            return kp_error(KP_ERR_COUNT, "strided: count[1..%d] multiply to more than 2^62 chunks", levels);
        n *= sd->count[i];
    }
    if (n > KP_SD_LIMIT / sd->count[0])
        return kp_error(KP_ERR_COUNT, "strided: %lld chunks of %lld bytes overflow 2^62 bytes", (long long)n,
                        (long long)sd->count[0]);
    sd->nchunks = n;
    sd->total = n * sd->count[0];
    return KP_SUCCESS;
}

int kp_sd_strides(const kp_sd *sd, kp_sd_side *side, const MPI_Aint stride[], const char *what)
{
    memset(side, 0, sizeof(*side));
    if (sd->total == 0)
        return KP_SUCCESS;
    if (sd->levels > 0 && stride == NULL)
        return kp_error(KP_ERR_ARG, "strided: %s stride array is NULL with %d levels", what, sd->levels);
    int64_t ext = sd->count[0]; /* extent of one block of the level below */
    for (int i = 0; i < sd->levels; i++) {
        int64_t s = stride[i], c = sd->count[i + 1];
        if (s < 0)
            return kp_error(KP_ERR_ARG, "strided: %s stride[%d] = %lld is negative", what, i, (long long)s);
        if (c > 1 && s < ext)
            return kp_error(KP_ERR_ARG,
                            "strided: %s stride[%d] = %lld is smaller than the %lld bytes it strides over "
                            "(blocks would overlap)",
                            what, i, (long long)s, (long long)ext);
        side->stride[i] = s;
        if (c > 1) {
            if (s > (KP_SD_LIMIT - ext) / (c - 1))
                return kp_error(KP_ERR_COUNT, "strided: %s extent overflows 2^62 bytes at level %d", what, i + 1);
            ext += (c - 1) * s;
        }
    }
    side->extent = ext;
    return KP_SUCCESS;
}

int64_t kp_sd_chunk_offset(const kp_sd *sd, const kp_sd_side *side, int64_t c)
{
    int64_t off = 0;
    for (int i = 1; i <= sd->levels; i++) {
        off += (c % sd->count[i]) * side->stride[i - 1];
        c /= sd->count[i];
    }
    return off;
}

/* walk the chunks of [off, off+len) with an odometer */
int kp_sd_runs(const kp_sd *sd, const kp_sd_side *side, int64_t off, int64_t len,
               int (*fn)(int64_t where, int64_t soff, int64_t n, void *arg), void *arg)
{
    if (len <= 0)
        return 0;
    int64_t c0 = sd->count[0];
    int64_t chunk = off / c0, in = off % c0;
    int64_t idx[KP_SD_MAXL + 1] = {0};
    int64_t cc = chunk;
    for (int i = 1; i <= sd->levels; i++) {
        idx[i] = cc % sd->count[i];
        cc /= sd->count[i];
    }
    int64_t where = kp_sd_chunk_offset(sd, side, chunk);
    int64_t soff = off;
    while (len > 0) {
        int64_t n = c0 - in;
        if (n > len)
            n = len;
        int r = fn(where + in, soff, n, arg);
        if (r)
            return r;
        soff += n;
        len -= n;
        in = 0;
        /* next chunk */
        for (int i = 1; i <= sd->levels; i++) {
            if (++idx[i] < sd->count[i]) {
                where += side->stride[i - 1];
                break;
            }
            where -= (sd->count[i] - 1) * side->stride[i - 1];
            idx[i] = 0;
        }
    }
    return 0;
}

/* copy bytes [off, off+len) of the stream between it and the layout: the
 * odometer of kp_sd_runs inlined (no call per chunk; tiny chunks are the
 * pack method's case) */
static void copy_range(const kp_sd *sd, const kp_sd_side *side, char *layout, int64_t off, int64_t len, char *stream,
                       int pack)
{
    if (len <= 0)
        return;
    const int64_t c0 = sd->count[0];
    int64_t chunk = off / c0, in = off % c0;
    int64_t idx[KP_SD_MAXL + 1] = {0};
    for (int i = 1; i <= sd->levels; i++) {
        idx[i] = chunk % sd->count[i];
        chunk /= sd->count[i];
    }
    int64_t where = kp_sd_chunk_offset(sd, side, off / c0);
    const int64_t c1 = sd->levels > 0 ? sd->count[1] : 1, s0 = sd->levels > 0 ? side->stride[0] : 0;
    while (len > 0) {
        int64_t n = c0 - in;
        if (n > len)
            n = len;
        if (pack)
            kp_copy(stream, layout + where + in, (size_t)n);
        else
            kp_copy(layout + where + in, stream, (size_t)n);
        stream += n;
        len -= n;
        in = 0;
        if (sd->levels > 0 && ++idx[1] < c1) { /* the common step */
            where += s0;
            continue;
        }
        if (sd->levels > 0) {
            where -= (c1 - 1) * s0;
            idx[1] = 0;
        }
        for (int i = 2; i <= sd->levels; i++) {
            if (++idx[i] < sd->count[i]) {
                where += side->stride[i - 1];
                break;
            }
            where -= (sd->count[i] - 1) * side->stride[i - 1];
            idx[i] = 0;
        }
    }
}

void kp_sd_pack_range(const kp_sd *sd, const kp_sd_side *side, const char *base, int64_t off, int64_t len,
                      char *stream)
{
    copy_range(sd, side, (char *)base, off, len, stream, 1);
}

void kp_sd_unpack_range(const kp_sd *sd, const kp_sd_side *side, char *base, int64_t off, int64_t len,
                        const char *stream)
{
    copy_range(sd, side, base, off, len, (char *)stream, 0);
}
