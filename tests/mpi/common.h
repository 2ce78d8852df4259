/*
 * Helpers shared by the MPI tests of kport (tests/mpi/test_*.c).
 *
 * - Expected data comes from a formula of (origin rank, element index, tag):
 *   kt_val(). Element j of the contribution of rank `origin` to the call
 *   tagged `tag` holds kt_val(origin, j, tag), stored as a byte, an int32 or
 *   a double (an integer-valued double, so every value is exact).
 * - A kt_layout describes where the basic elements of one item of a datatype
 *   sit (byte offsets, extent), so the tests can place elements by hand for
 *   derived datatypes and know which bytes are gaps.
 * - Buffers are guarded (kt_gbuf): KT_GUARD bytes before and after, and every
 *   byte that the call must not write is prefilled with a position-dependent
 *   sentinel. A check builds the whole expected image (sentinels included)
 *   and compares every byte.
 * - Each rank counts its own checks (kt_pass / kt_fail) and prints its first
 *   failures with its rank; kt_finish() sums the counts over all ranks and
 *   prints "N passed, M failed" on rank 0.
 * - A watchdog (alarm) turns a hang into a failure with a message.
 */
#ifndef KT_COMMON_H
#define KT_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kport.h"

#define KT_GUARD 64      /* guard bytes before and after every buffer */
#define KT_MAX_PRINT 25  /* failures printed per rank */

/* ---- counters ------------------------------------------------------------ */

typedef struct kt_stats {
    long passed, failed; /* this rank's checks */
    int printed;
    int rank;
} kt_stats;

static kt_stats kt_st;

static inline void kt_init(void)
{
    memset(&kt_st, 0, sizeof(kt_st));
    MPI_Comm_rank(MPI_COMM_WORLD, &kt_st.rank);
}

static inline void kt_pass(void) { kt_st.passed++; }

static inline void kt_vfail(const char *fmt, va_list ap)
{
    kt_st.failed++;
    if (kt_st.printed++ >= KT_MAX_PRINT) {
        if (kt_st.printed == KT_MAX_PRINT + 1)
            fprintf(stderr, "[rank %d] (further failures not printed)\n", kt_st.rank);
        return;
    }
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "[rank %d] FAIL: %s\n", kt_st.rank, msg);
    fflush(stderr);
}

static inline void kt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void kt_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kt_vfail(fmt, ap);
    va_end(ap);
}

/* Count one check: passes when cond is true, else fails with the message. */
static inline int kt_expect(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int kt_expect(int cond, const char *fmt, ...)
{
    if (cond) {
        kt_pass();
        return 1;
    }
    va_list ap;
    va_start(ap, fmt);
    kt_vfail(fmt, ap);
    va_end(ap);
    return 0;
}

/* One check: n bytes got against their expected image; a failure names
 * `what` and the first byte that differs. */
static inline void kt_compare_bytes(const unsigned char *got, const unsigned char *exp, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != exp[i]) {
            kt_fail("%s: byte %zu is %u, expected %u", what, i, got[i], exp[i]);
            return;
        }
    kt_pass();
}

/* Sum the counts over MPI_COMM_WORLD, print "N passed, M failed" on rank 0
 * and return the exit code (0 only if no rank failed). Call before
 * MPI_Finalize on every rank. */
static inline int kt_finish(void)
{
    long loc[2] = {kt_st.passed, kt_st.failed}, tot[2] = {0, 0};
    MPI_Allreduce(loc, tot, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (kt_st.rank == 0) {
        printf("%ld passed, %ld failed\n", tot[0], tot[1]);
        fflush(stdout);
    }
    return tot[1] == 0 ? 0 : 1;
}

/* ---- watchdog ------------------------------------------------------------ */

/* One check agreed over MPI_COMM_WORLD, for the tests that count checks
 * rather than each rank's comparisons: `bad` summed over the ranks; rank 0
 * prints "<prog>: FAIL <what> (<sum>)"; *npass or *nfail counts it. */
static inline void kt_check_world(const char *prog, const char *what, long bad, int *npass, int *nfail)
{
    long g = 0;
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Allreduce(&bad, &g, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (g) {
        ++*nfail;
        if (r == 0)
            printf("%s: FAIL %s (%ld)\n", prog, what, g);
    } else {
        ++*npass;
    }
}

static inline void kt_on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "kport test: watchdog timeout: a call did not return (hang?)\n";
    if (write(2, msg, sizeof(msg) - 1) < 0) {
        /* nothing more we can do */
    }
    _exit(3);
}

/* Abort this rank (and so the job) if the test is still running after
 * `seconds`; 0 disables. */
static inline void kt_watchdog(unsigned seconds)
{
    signal(SIGALRM, kt_on_alarm);
    alarm(seconds);
}

/* ---- data formula ---------------------------------------------------------- */

enum kt_kind { KT_U8 = 0, KT_I32 = 1, KT_F64 = 2 };

static inline int kt_kind_size(int kind) { return kind == KT_U8 ? 1 : kind == KT_I32 ? 4 : 8; }

/* Value of element j of rank `origin`'s contribution to the call `tag`.
 * Linear in each argument with odd multipliers, plus terms in j>>8 and
 * j>>16, so that even the low byte changes when the origin changes, when an
 * element moves by any distance below 2^24, or between consecutive tags. */
static inline uint32_t kt_val(int origin, int64_t j, int tag)
{
    uint32_t o = (uint32_t)origin, t = (uint32_t)tag, u = (uint32_t)j;
    return o * 0x9E3779B1u + t * 0x85EBCA77u + u * 0xC2B2AE3Du + (u >> 8) * 0x27D4EB2Fu +
           (u >> 16) * 0x165667B1u + (uint32_t)((uint64_t)j >> 32) + 0x1234567u;
}

static inline void kt_put(unsigned char *p, int kind, uint32_t v)
{
    if (kind == KT_U8) {
        *p = (unsigned char)v;
    } else if (kind == KT_I32) {
        int32_t x = (int32_t)v;
        memcpy(p, &x, sizeof(x));
    } else {
        double d = (double)(int32_t)v;
        memcpy(p, &d, sizeof(d));
    }
}

/* Sentinel byte at position pos of a guarded buffer (never written by a
 * correct call); periodic with period KT_SENT_PERIOD so buffers fill fast. */
#define KT_SENT_PERIOD 4093 /* prime: no alignment with block sizes */

static inline unsigned char kt_sentinel(size_t pos)
{
    size_t q = pos % KT_SENT_PERIOD;
    return (unsigned char)(0xA5u ^ (unsigned)(q * 29u) ^ (unsigned)(q >> 7));
}

/* Fill n bytes at p, which sit at position pos0 of their buffer, with the
 * sentinel. */
static inline void kt_sentinel_fill(unsigned char *p, size_t pos0, size_t n)
{
    static unsigned char pat[2 * KT_SENT_PERIOD];
    static int ready = 0;
    if (!ready) {
        for (size_t i = 0; i < 2 * KT_SENT_PERIOD; i++)
            pat[i] = kt_sentinel(i);
        ready = 1;
    }
    size_t i = 0;
    while (i < n) {
        size_t q = (pos0 + i) % KT_SENT_PERIOD, chunk = KT_SENT_PERIOD;
        if (chunk > n - i)
            chunk = n - i;
        memcpy(p + i, pat + q, chunk);
        i += chunk;
    }
}

/* ---- datatype layouts -------------------------------------------------------- */

#define KT_MAX_ELEM 16

typedef struct kt_layout {
    const char *name;
    MPI_Datatype type;
    int kind;        /* enum kt_kind of every basic element */
    int nelem;       /* basic elements per item */
    MPI_Aint extent; /* bytes per item */
    MPI_Aint off[KT_MAX_ELEM]; /* byte offset of each basic element in an item, in
                                * signature order (not necessarily increasing) */
    MPI_Aint lb;     /* lower bound MPI reports (0 unless set) */
} kt_layout;

static inline kt_layout kt_layout_basic(const char *name, MPI_Datatype t, int kind)
{
    kt_layout L;
    memset(&L, 0, sizeof(L));
    L.name = name;
    L.type = t;
    L.kind = kind;
    L.nelem = 1;
    L.extent = kt_kind_size(kind);
    return L;
}

/* Check that MPI agrees with a hand-written layout (size, lb and extent). */
static inline void kt_layout_verify(const kt_layout *L)
{
    int size;
    MPI_Aint lb, ext;
    MPI_Type_size(L->type, &size);
    MPI_Type_get_extent(L->type, &lb, &ext);
    kt_expect(size == L->nelem * kt_kind_size(L->kind) && lb == L->lb && ext == L->extent,
              "test bug: layout %s: MPI says size %d lb %ld extent %ld, test assumes %d/%ld/%ld", L->name, size,
              (long)lb, (long)ext, L->nelem * kt_kind_size(L->kind), (long)L->lb, (long)L->extent);
}

/* Bytes the data of `count` items reaches beyond count * extent (elements
 * placed after the extent, e.g. by a positive lower bound): a buffer for
 * count items needs count * extent + kt_layout_tail(L) bytes. */
static inline MPI_Aint kt_layout_tail(const kt_layout *L)
{
    MPI_Aint end = 0;
    for (int e = 0; e < L->nelem; e++)
        if (L->off[e] + kt_kind_size(L->kind) > end)
            end = L->off[e] + kt_kind_size(L->kind);
    return end > L->extent ? end - L->extent : 0;
}

/* Write the nbasic elements of `origin`'s contribution, laid out as items of
 * L starting at base. */
static inline void kt_fill(unsigned char *base, const kt_layout *L, int64_t nbasic, int origin, int tag)
{
    if (L->nelem == 1) {
        const int sz = kt_kind_size(L->kind);
        for (int64_t j = 0; j < nbasic; j++)
            kt_put(base + j * sz, L->kind, kt_val(origin, j, tag));
        return;
    }
    for (int64_t j = 0; j < nbasic; j++) {
        int64_t item = j / L->nelem;
        int e = (int)(j % L->nelem);
        kt_put(base + item * L->extent + L->off[e], L->kind, kt_val(origin, j, tag));
    }
}

/* Like kt_fill, but element j holds kt_val(origin, first + j, tag): block d
 * of an all-to-all send buffer is the elements d*n .. d*n+n-1 of its origin. */
static inline void kt_fill_at(unsigned char *base, const kt_layout *L, int64_t nbasic, int origin, int tag,
                              int64_t first)
{
    const int sz = kt_kind_size(L->kind);
    for (int64_t j = 0; j < nbasic; j++) {
        unsigned char *p = L->nelem == 1 ? base + j * sz : base + (j / L->nelem) * L->extent + L->off[j % L->nelem];
        kt_put(p, L->kind, kt_val(origin, first + j, tag));
    }
}

/* The datatypes the MPI tests use: builtin, a contiguous derived type, a
 * strided vector with gaps inside and after each item, a vector whose
 * blocks touch (gap-free in memory, derived in MPI), a gap-free type whose
 * signature order is not its memory order, and a gap-free type with a
 * positive lower bound. */
typedef struct kt_types {
    kt_layout byte, i32, dbl;
    kt_layout c3;   /* MPI_Type_contiguous(3, MPI_INT) */
    kt_layout vec;  /* vector(3 blocks of 2 ints, stride 3) resized to 10 ints */
    kt_layout vecc; /* vector(2 blocks of 3 ints, stride 3) */
    kt_layout perm; /* indexed: int at int offset 1, then int at 0 (8 bytes, no gap) */
    kt_layout lb8;  /* hindexed: 3 ints at byte 8 (lb 8, extent 12, no gap) */
} kt_types;

static inline void kt_types_make(kt_types *T)
{
    memset(T, 0, sizeof(*T));
    T->byte = kt_layout_basic("byte", MPI_BYTE, KT_U8);
    T->i32 = kt_layout_basic("int", MPI_INT, KT_I32);
    T->dbl = kt_layout_basic("double", MPI_DOUBLE, KT_F64);

    T->c3.name = "contig3int";
    MPI_Type_contiguous(3, MPI_INT, &T->c3.type);
    MPI_Type_commit(&T->c3.type);
    T->c3.kind = KT_I32;
    T->c3.nelem = 3;
    T->c3.extent = 12;
    for (int i = 0; i < 3; i++)
        T->c3.off[i] = 4 * i;

    /* ints at 0,1, 3,4, 6,7; gaps at 2, 5, 8, 9 */
    MPI_Datatype v;
    T->vec.name = "vector3x2s3";
    MPI_Type_vector(3, 2, 3, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, 40, &T->vec.type);
    MPI_Type_free(&v);
    MPI_Type_commit(&T->vec.type);
    T->vec.kind = KT_I32;
    T->vec.nelem = 6;
    T->vec.extent = 40;
    const int voff[6] = {0, 1, 3, 4, 6, 7};
    for (int i = 0; i < 6; i++)
        T->vec.off[i] = 4 * voff[i];

    T->vecc.name = "vector2x3s3";
    MPI_Type_vector(2, 3, 3, MPI_INT, &T->vecc.type);
    MPI_Type_commit(&T->vecc.type);
    T->vecc.kind = KT_I32;
    T->vecc.nelem = 6;
    T->vecc.extent = 24;
    for (int i = 0; i < 6; i++)
        T->vecc.off[i] = 4 * i;

    /* signature (int@4, int@0): the same bytes as 2 ints, another order */
    const int pbl[2] = {1, 1}, pdisp[2] = {1, 0};
    T->perm.name = "indexed{1,0}";
    MPI_Type_indexed(2, pbl, pdisp, MPI_INT, &T->perm.type);
    MPI_Type_commit(&T->perm.type);
    T->perm.kind = KT_I32;
    T->perm.nelem = 2;
    T->perm.extent = 8;
    T->perm.off[0] = 4;
    T->perm.off[1] = 0;

    /* 3 ints starting at byte 8: lb = true lb = 8, extent 12 */
    const int lbl[1] = {3};
    const MPI_Aint ldisp[1] = {8};
    T->lb8.name = "hindexed@8";
    MPI_Type_create_hindexed(1, lbl, ldisp, MPI_INT, &T->lb8.type);
    MPI_Type_commit(&T->lb8.type);
    T->lb8.kind = KT_I32;
    T->lb8.nelem = 3;
    T->lb8.extent = 12;
    T->lb8.lb = 8;
    for (int i = 0; i < 3; i++)
        T->lb8.off[i] = 8 + 4 * i;

    const kt_layout *all[] = {&T->byte, &T->i32, &T->dbl, &T->c3, &T->vec, &T->vecc, &T->perm, &T->lb8};
    for (int i = 0; i < 8; i++)
        kt_layout_verify(all[i]);
}

static inline void kt_types_free(kt_types *T)
{
    MPI_Type_free(&T->c3.type);
    MPI_Type_free(&T->vec.type);
    MPI_Type_free(&T->vecc.type);
    MPI_Type_free(&T->perm.type);
    MPI_Type_free(&T->lb8.type);
}

/* ---- guarded buffers ------------------------------------------------------- */

typedef struct kt_gbuf {
    unsigned char *mem; /* allocation, all of it compared */
    size_t total;
    unsigned char *p;   /* the buffer handed to kport */
    size_t len;         /* its length in bytes */
} kt_gbuf;

/* Allocate len bytes between guards (p misaligned by `skew` bytes), every
 * byte set to its sentinel. Aborts the job when out of memory. */
static inline kt_gbuf kt_gbuf_alloc(size_t len, size_t skew)
{
    kt_gbuf b;
    b.total = len + 2 * KT_GUARD + skew;
    b.mem = malloc(b.total);
    if (!b.mem) {
        fprintf(stderr, "[rank %d] test: out of memory (%zu bytes)\n", kt_st.rank, b.total);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    kt_sentinel_fill(b.mem, 0, b.total);
    b.p = b.mem + KT_GUARD + skew;
    b.len = len;
    return b;
}

static inline kt_gbuf kt_gbuf_clone(const kt_gbuf *a)
{
    kt_gbuf b = *a;
    b.mem = malloc(a->total);
    if (!b.mem) {
        fprintf(stderr, "[rank %d] test: out of memory (%zu bytes)\n", kt_st.rank, a->total);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memcpy(b.mem, a->mem, a->total);
    b.p = b.mem + (a->p - a->mem);
    return b;
}

static inline void kt_gbuf_free(kt_gbuf *b)
{
    free(b->mem);
    b->mem = b->p = NULL;
}

/* Compare every byte of got with exp (same shape). On a difference, fail
 * with `what`, the first differing position (relative to the buffer: before
 * it, after its end, or which origin block when block > 0) and the number of
 * differing bytes. Counts one check. */
static inline int kt_compare(const kt_gbuf *got, const kt_gbuf *exp, int64_t block, const char *what)
{
    if (memcmp(got->mem, exp->mem, got->total) == 0) {
        kt_pass();
        return 1;
    }
    size_t first = 0, ndiff = 0;
    for (size_t i = got->total; i-- > 0;)
        if (got->mem[i] != exp->mem[i]) {
            first = i;
            ndiff++;
        }
    const ptrdiff_t rel = (got->mem + first) - got->p;
    char where[160];
    if (rel < 0)
        snprintf(where, sizeof(where), "%ld bytes BEFORE the buffer (underflow)", (long)-rel);
    else if ((size_t)rel >= got->len)
        snprintf(where, sizeof(where), "%ld bytes AFTER the end of the %zu-byte buffer (overflow)",
                 (long)((size_t)rel - got->len), got->len);
    else if (block > 0)
        snprintf(where, sizeof(where), "offset %ld = block of rank %ld, byte %ld", (long)rel,
                 (long)(rel / block), (long)(rel % block));
    else
        snprintf(where, sizeof(where), "offset %ld", (long)rel);
    kt_fail("%s: %zu bytes differ; first at %s: got 0x%02x expected 0x%02x%s", what, ndiff, where,
            got->mem[first], exp->mem[first],
            exp->mem[first] == kt_sentinel(first) ? " (sentinel: must stay untouched)" : "");
    return 0;
}

/* ---- algorithm names ------------------------------------------------------- */

/* Is the name part of `spec` (before ':') a registered algorithm of coll? */
static inline int kt_registered_coll(enum kp_coll coll, const char *spec)
{
    size_t n = strcspn(spec, ":");
    int cnt = kp_algorithm_count(coll);
    for (int i = 0; i < cnt; i++) {
        const char *a = kp_algorithm_name(coll, i);
        if (a && strlen(a) == n && strncmp(a, spec, n) == 0)
            return 1;
    }
    return 0;
}

/* Is the name part of `spec` (before ':') a registered all-gather algorithm? */
static inline int kt_registered(const char *spec)
{
    return kt_registered_coll(KP_COLL_ALLGATHER, spec);
}

/* Does kp_last_algorithm(coll)'s `last` ("name:k=3,C=2") describe the forced
 * `spec`: same name and every parameter given in spec present with the same
 * value, or named as the value that was clamped ("bruck:k=1 (k=3 clamped:
 * P=2)" describes "bruck:k=3": a parameter beyond what P allows runs as the
 * largest value that applies)? "auto" matches any registered algorithm of coll. */
static inline int kt_spec_matches_coll(enum kp_coll coll, const char *spec, const char *last)
{
    if (!last || !*last)
        return 0;
    if (strcmp(spec, "auto") == 0)
        return kt_registered_coll(coll, last);
    size_t ns = strcspn(spec, ":"), nl = strcspn(last, ":");
    if (ns != nl || strncmp(spec, last, ns) != 0)
        return 0;
    if (!spec[ns])
        return 1;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", spec + ns + 1);
    const char *lp = last[nl] ? last + nl + 1 : "";
    const char *note = strstr(lp, " ("); /* " (k=3 clamped: P=2)" */
    const char *end = note ? note : lp + strlen(lp);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        size_t tl = strlen(tok);
        int found = 0;
        for (const char *q = lp; q < end;) {
            size_t ql = strcspn(q, ",");
            if (q + ql > end)
                ql = (size_t)(end - q);
            if (ql == tl && strncmp(q, tok, tl) == 0)
                found = 1;
            q += ql;
            if (q < end && *q == ',')
                q++;
        }
        for (const char *c = note; !found && c && (c = strstr(c + 1, tok));)
            found = (c[-1] == '(' || c[-1] == ' ') && strncmp(c + tl, " clamped:", 9) == 0;
        if (!found)
            return 0;
    }
    return 1;
}

/* The same for all-gather: "auto" matches any registered all-gather algorithm. */
static inline int kt_spec_matches(const char *spec, const char *last)
{
    return kt_spec_matches_coll(KP_COLL_ALLGATHER, spec, last);
}

/* Same integer on every rank of comm? Returns 1 and sets *lo, *hi. */
static inline int kt_same(int v, MPI_Comm comm, int *lo, int *hi)
{
    int in[2] = {v, -v}, out[2];
    MPI_Allreduce(in, out, 2, MPI_INT, MPI_MIN, comm);
    *lo = out[0];
    *hi = -out[1];
    return *lo == *hi;
}

static inline const char *kt_str(const char *s) { return s ? s : "(null)"; }

/* ---- algorithm specification lists (the -a option of the MPI tests) -------- */

#define KT_MAX_SPECS 128
#define KT_SPEC_LEN 128 /* bytes of one spec, its terminating '\0' included */

/* Append spec s to specs[0..n-1] unless it is listed already. Returns the new
 * count, or -1 with a message when s is too long or the list is full: a spec
 * is never truncated into another one. */
static inline int kt_spec_add(char specs[][KT_SPEC_LEN], int n, const char *s)
{
    if (n < 0)
        return n;
    for (int i = 0; i < n; i++)
        if (strcmp(specs[i], s) == 0)
            return n;
    const size_t len = strlen(s);
    if (len >= KT_SPEC_LEN) {
        fprintf(stderr, "test: algorithm spec \"%.40s...\" is %zu bytes long, at most %d allowed\n", s, len,
                KT_SPEC_LEN - 1);
        return -1;
    }
    if (n >= KT_MAX_SPECS) {
        fprintf(stderr, "test: more than %d algorithm specs\n", KT_MAX_SPECS);
        return -1;
    }
    memcpy(specs[n], s, len + 1);
    return n + 1;
}

/* Split "bruck:k=3,C=2,ring" into "bruck:k=3,C=2" and "ring": a piece with
 * '=' and without ':' continues the previous spec's parameters. Empty pieces
 * are skipped. Returns the number of specs, or -1 with a message (a spec too
 * long, too many specs). */
static inline int kt_spec_parse(char specs[][KT_SPEC_LEN], const char *arg)
{
    int n = 0;
    char cur[KT_SPEC_LEN];
    size_t len = 0; /* bytes in cur */
    for (const char *p = arg;; p++) {
        const size_t tl = strcspn(p, ",");
        const int cont = len > 0 && memchr(p, '=', tl) && !memchr(p, ':', tl);
        if (tl > 0 && !cont && len > 0) {
            n = kt_spec_add(specs, n, cur);
            len = 0;
        }
        if (tl > 0) {
            const size_t need = len + (cont ? 1 : 0) + tl;
            if (need >= KT_SPEC_LEN) {
                fprintf(stderr, "test: algorithm spec \"%.*s...\" is longer than %d bytes\n", 40,
                        len > 0 ? cur : p, KT_SPEC_LEN - 1);
                return -1;
            }
            if (cont)
                cur[len++] = ',';
            memcpy(cur + len, p, tl);
            len += tl;
            cur[len] = '\0';
        }
        p += tl;
        if (!*p)
            break;
    }
    if (len > 0)
        n = kt_spec_add(specs, n, cur);
    return n;
}

#endif /* KT_COMMON_H */
