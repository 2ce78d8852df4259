/*
 * The strided descriptor's arithmetic (src/strided/desc.c) without MPI
 * communication: for every shape of 0..3 levels with counts 0..3 (row
 * lengths 1..3) and strides of every legal padding 0..2, against a naive
 * enumeration of the chunks by nested loops:
 *   - kp_sd_counts / kp_sd_strides: total, chunk count, extent;
 *   - kp_sd_chunk_offset for every chunk;
 *   - kp_sd_pack_range / kp_sd_unpack_range for EVERY byte range [off, off+len)
 *     of the stream: each stream byte comes from (goes to) the right layout
 *     byte and no other byte of the layout or stream is touched;
 *   - kp_sd_runs: runs are contiguous, in stream order, never cross a chunk;
 * and the refusals: negative counts, overflow, strides below the row or
 * block they stride over, negative strides, bad levels, NULL arrays, each
 * with its code and a message naming the argument.
 */
#include "strided/strided.h"

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* naive: offsets of all chunks in stream order (level 1 fastest) */
static int64_t naive_offsets(int levels, const MPI_Aint *count, const MPI_Aint *stride, int64_t *out)
{
    int64_t n = 1;
    for (int i = 1; i <= levels; i++)
        n *= count[i];
    for (int64_t c = 0; c < n; c++) {
        int64_t cc = c, off = 0;
        for (int i = 1; i <= levels; i++) {
            off += (cc % count[i]) * stride[i - 1];
            cc /= count[i];
        }
        out[c] = off;
    }
    return n;
}

typedef struct run_state {
    int64_t next_soff;
    int64_t c0;
    int bad;
} run_state;

static int run_check(int64_t where, int64_t soff, int64_t n, void *a)
{
    run_state *s = a;
    (void)where;
    if (soff != s->next_soff || n <= 0 || soff / s->c0 != (soff + n - 1) / s->c0)
        s->bad = 1;
    s->next_soff = soff + n;
    return 0;
}

static void one_shape(int levels, const MPI_Aint *count, const MPI_Aint *stride)
{
    kp_sd sd;
    kp_sd_side side;
    int rc = kp_sd_counts(&sd, count, levels);
    CHECK(rc == KP_SUCCESS, "counts refused: %s", kp_last_error());
    rc = kp_sd_strides(&sd, &side, stride, "target");
    CHECK(rc == KP_SUCCESS, "strides refused: %s", kp_last_error());
    int64_t offs[64];
    int64_t n = naive_offsets(levels, count, stride, offs);
    int64_t N = n * count[0];
    CHECK(sd.total == N, "total %lld, expected %lld", (long long)sd.total, (long long)N);
    if (N == 0)
        return;
    CHECK(sd.nchunks == n, "nchunks");
    int64_t ext = 0;
    for (int64_t c = 0; c < n; c++) {
        CHECK(kp_sd_chunk_offset(&sd, &side, c) == offs[c], "chunk %lld offset", (long long)c);
        if (offs[c] + count[0] > ext)
            ext = offs[c] + count[0];
    }
    CHECK(side.extent == ext, "extent %lld, expected %lld", (long long)side.extent, (long long)ext);
    /* every range */
    unsigned char layout[512], stream[512], exp_layout[512];
    for (int64_t off = 0; off <= N; off++)
        for (int64_t len = 0; off + len <= N; len++) {
            /* pack */
            for (int i = 0; i < 512; i++)
                layout[i] = (unsigned char)(i * 7 + 3), stream[i] = 0xEE;
            kp_sd_pack_range(&sd, &side, (const char *)layout, off, len, (char *)stream);
            int ok = 1;
            for (int64_t s = 0; s < len; s++) {
                int64_t b = off + s;
                if (stream[s] != layout[offs[b / count[0]] + b % count[0]])
                    ok = 0;
            }
            for (int64_t s = len; s < 512; s++)
                if (stream[s] != 0xEE)
                    ok = 0;
            CHECK(ok, "pack range [%lld, +%lld) levels %d", (long long)off, (long long)len, levels);
            /* unpack */
            for (int i = 0; i < 512; i++)
                layout[i] = exp_layout[i] = 0x11, stream[i] = (unsigned char)(i * 5 + 1);
            for (int64_t s = 0; s < len; s++) {
                int64_t b = off + s;
                exp_layout[offs[b / count[0]] + b % count[0]] = stream[s];
            }
            kp_sd_unpack_range(&sd, &side, (char *)layout, off, len, (const char *)stream);
            CHECK(memcmp(layout, exp_layout, 512) == 0, "unpack range [%lld, +%lld) levels %d", (long long)off,
                  (long long)len, levels);
            run_state rs = {off, count[0], 0};
            kp_sd_runs(&sd, &side, off, len, run_check, &rs);
            CHECK(!rs.bad && rs.next_soff == off + len, "runs of [%lld, +%lld)", (long long)off, (long long)len);
        }
}

static void expect_refused(int rc, int want, const char *word, const char *what)
{
    CHECK(rc == want, "%s: rc %d, expected %d", what, rc, want);
    CHECK(strstr(kp_last_error(), word) != NULL, "%s: message \"%s\" lacks \"%s\"", what, kp_last_error(), word);
}

int main(void)
{
    long shapes = 0;
    /* every shape of 0..3 levels: count[0] 1..3, count[i] 0..3, pads 0..2 */
    for (int levels = 0; levels <= 3; levels++) {
        int ncombo = 1;
        for (int i = 0; i < levels; i++)
            ncombo *= 4 * 3; /* count 0..3, pad 0..2 */
        for (int c0 = 1; c0 <= 3; c0++)
            for (int combo = 0; combo < ncombo; combo++) {
                MPI_Aint count[4] = {c0, 0, 0, 0}, stride[3] = {0, 0, 0};
                int x = combo;
                MPI_Aint ext = c0;
                for (int i = 0; i < levels; i++) {
                    count[i + 1] = x % 4;
                    x /= 4;
                    int pad = x % 3;
                    x /= 3;
                    stride[i] = ext + pad;
                    if (count[i + 1] > 0)
                        ext = stride[i] * (count[i + 1] - 1) + ext;
                }
                int64_t tot = c0;
                for (int i = 1; i <= levels; i++)
                    tot *= count[i];
                if (ext > 400 || tot > 60)
                    continue;
                one_shape(levels, count, stride);
                shapes++;
            }
    }
    /* count[0] = 0 */
    MPI_Aint cz[2] = {0, 3}, sz[1] = {4};
    one_shape(1, cz, sz);
    /* a stride smaller than the row is legal when its count is 1 */
    MPI_Aint c1[3] = {5, 1, 2}, s1[2] = {1, 9};
    one_shape(2, c1, s1);

    /* refusals */
    kp_sd sd;
    kp_sd_side side;
    MPI_Aint neg[2] = {4, -1};
    expect_refused(kp_sd_counts(&sd, neg, 1), KP_ERR_COUNT, "count[1]", "negative count");
    MPI_Aint big[3] = {(MPI_Aint)1 << 40, (MPI_Aint)1 << 20, (MPI_Aint)1 << 10};
    expect_refused(kp_sd_counts(&sd, big, 2), KP_ERR_COUNT, "2^62", "overflowing bytes");
    MPI_Aint big2[3] = {1, (MPI_Aint)1 << 40, (MPI_Aint)1 << 40};
    expect_refused(kp_sd_counts(&sd, big2, 2), KP_ERR_COUNT, "2^62", "overflowing chunks");
    expect_refused(kp_sd_counts(&sd, neg, -1), KP_ERR_ARG, "levels", "levels -1");
    expect_refused(kp_sd_counts(&sd, neg, KP_STRIDED_MAX_LEVELS + 1), KP_ERR_ARG, "levels", "levels 9");
    expect_refused(kp_sd_counts(&sd, NULL, 1), KP_ERR_ARG, "count", "NULL count");
    MPI_Aint c2[3] = {8, 3, 2};
    CHECK(kp_sd_counts(&sd, c2, 2) == KP_SUCCESS, "valid counts");
    MPI_Aint s_small0[2] = {7, 100}, s_small1[2] = {8, 23}, s_neg[2] = {-8, 100};
    expect_refused(kp_sd_strides(&sd, &side, s_small0, "origin"), KP_ERR_ARG, "origin stride[0] = 7", "row overlap");
    expect_refused(kp_sd_strides(&sd, &side, s_small1, "target"), KP_ERR_ARG, "target stride[1] = 23",
                   "block overlap");
    expect_refused(kp_sd_strides(&sd, &side, s_neg, "target"), KP_ERR_ARG, "negative", "negative stride");
    expect_refused(kp_sd_strides(&sd, &side, NULL, "target"), KP_ERR_ARG, "NULL", "NULL strides");
    MPI_Aint s_huge[2] = {(MPI_Aint)1 << 61, (MPI_Aint)1 << 62};
    expect_refused(kp_sd_strides(&sd, &side, s_huge, "target"), KP_ERR_COUNT, "extent", "extent overflow");

    printf("unit_strided_desc: %ld shapes, %ld checks, %ld failed\n", shapes, checks, fails);
    return fails ? 1 : 0;
}
