/*
 * The datatype and size cases of the MPI tests, one list for every
 * collective with data: test_allgather.c runs them through kp_allgather,
 * test_coll.c through kp_gather and kp_alltoall (the barrier has no data).
 * A case added here is tested for all three, every byte compared with the
 * formula of common.h.
 *
 * A case is a (send layout, send count, receive layout, receive count) of
 * one block, plus MPI_IN_PLACE, a misalignment of the buffers, and whether
 * KP_ERR_DATATYPE is an acceptable answer (layouts kport may refuse rather
 * than move wrongly). A block is what one rank contributes to an
 * all-gather or a gather, and what one rank sends to one other in an
 * all-to-all. Gather adds its own fields (root, junk receive arguments at
 * the non-roots), which the other collectives ignore.
 *
 * Lists:
 *   kt_cases_world()  the cases on MPI_COMM_WORLD (builtin types and sizes
 *                     from 0 to one block above 64 KiB, derived types of
 *                     every kind in kt_types, mixed layouts with one
 *                     signature, in place, count 0); the first is the probe
 *                     that decides whether a forced algorithm applies at all;
 *   kt_cases_sub()    the cases on the derived communicators (a reversed
 *                     split, two halves, a split made after the frees,
 *                     MPI_COMM_SELF);
 *   kt_case_b2b()     call i of a back-to-back sequence (no synchronisation
 *                     in between): sizes cycling from 0 to 131075 bytes per
 *                     block, bytes (misaligned now and then) in the first
 *                     cycle and ints / doubles in the second, in place every
 *                     sixth call.
 */
#ifndef KT_CASES_H
#define KT_CASES_H

#include "common.h"

#define KT_MAX_CASES 80 /* room for the world list plus a test's own cases */

typedef struct kt_case {
    char name[128];
    const kt_layout *st; /* send layout (in place: the receive layout, for the ranks that send) */
    int64_t sc;
    const kt_layout *rt; /* receive layout */
    int64_t rc;
    int inplace;  /* MPI_IN_PLACE (gather: at the root) */
    size_t skew;  /* misalign the buffers by this many bytes */
    int dtype_ok; /* KP_ERR_DATATYPE is an acceptable answer */
    int root;     /* gather: the root (reduced mod the communicator size) */
    int junk;     /* gather: non-roots pass NULL, -1, MPI_DATATYPE_NULL as receive arguments */
} kt_case;

/* A case: st NULL (with inplace) means "the receive layout and count". */
static inline kt_case kt_case_mk(const kt_layout *st, int64_t sc, const kt_layout *rt, int64_t rc, int inplace,
                                 size_t skew, int dtype_ok)
{
    kt_case c;
    memset(&c, 0, sizeof(c));
    c.st = st ? st : rt;
    c.sc = st ? sc : rc;
    c.rt = rt;
    c.rc = rc;
    c.inplace = inplace;
    c.skew = skew;
    c.dtype_ok = dtype_ok;
    const char *mis = skew ? ", misaligned" : "";
    if (inplace)
        snprintf(c.name, sizeof(c.name), "in place, recv %s x %ld%s", rt->name, (long)rc, mis);
    else if (c.st == rt && sc == rc)
        snprintf(c.name, sizeof(c.name), "%s x %ld%s", rt->name, (long)rc, mis);
    else
        snprintf(c.name, sizeof(c.name), "send %s x %ld, recv %s x %ld%s", c.st->name, (long)sc, rt->name, (long)rc,
                 mis);
    return c;
}

/* Append a case; a list that outgrows its array is a bug of the test. */
static inline int kt_case_add(kt_case *c, int n, int max, kt_case x)
{
    if (n >= max) {
        fprintf(stderr, "test bug: more than %d cases (raise KT_MAX_CASES)\n", max);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    c[n] = x;
    return n + 1;
}

/* Bytes a block of count items of L spans: count * extent, plus what the
 * last item's elements reach beyond its extent (a positive lower bound). */
static inline int64_t kt_case_span(const kt_layout *L, int64_t count)
{
    return count * L->extent + (count > 0 ? kt_layout_tail(L) : 0);
}

/* The cases on MPI_COMM_WORLD (at most max); the first one is the probe. */
static inline int kt_cases_world(const kt_types *T, kt_case *c, int max)
{
    int n = 0;
#define KT_ADD(...) (n = kt_case_add(c, n, max, kt_case_mk(__VA_ARGS__)))
    KT_ADD(&T->i32, 100, &T->i32, 100, 0, 0, 0);
    /* builtin types, sizes from one element to one block above 64 KiB */
    const int counts[4] = {1, 3, 100, 1000};
    const kt_layout *basic[3] = {&T->byte, &T->i32, &T->dbl};
    for (int t = 0; t < 3; t++)
        for (int i = 0; i < 4; i++)
            if (!(t == 1 && counts[i] == 100)) /* the probe */
                KT_ADD(basic[t], counts[i], basic[t], counts[i], 0, 0, 0);
    KT_ADD(&T->byte, 1000, &T->byte, 1000, 0, 1, 0);
    KT_ADD(&T->byte, 3, &T->byte, 3, 0, 3, 0);
    KT_ADD(&T->dbl, 9000, &T->dbl, 9000, 0, 0, 0); /* 72000 bytes per block */
    /* a contiguous derived type, and one signature in different layouts */
    KT_ADD(&T->c3, 1, &T->c3, 1, 0, 0, 0);
    KT_ADD(&T->c3, 50, &T->c3, 50, 0, 0, 0);
    KT_ADD(&T->i32, 6, &T->c3, 2, 0, 0, 0);
    KT_ADD(&T->i32, 240, &T->c3, 80, 0, 0, 0);
    KT_ADD(&T->c3, 7, &T->i32, 21, 0, 0, 0);
    /* gap-free types that are not plain runs of their signature (elements in
     * another order, a positive lower bound): correct or KP_ERR_DATATYPE */
    KT_ADD(&T->perm, 10, &T->perm, 10, 0, 0, 1);
    KT_ADD(&T->perm, 10, &T->i32, 20, 0, 0, 1);
    KT_ADD(&T->i32, 20, &T->perm, 10, 0, 0, 1);
    KT_ADD(NULL, 0, &T->perm, 4, 1, 0, 1);
    KT_ADD(&T->lb8, 5, &T->lb8, 5, 0, 0, 1);
    KT_ADD(&T->i32, 15, &T->lb8, 5, 0, 0, 1);
    KT_ADD(&T->lb8, 5, &T->c3, 5, 0, 0, 1);
    KT_ADD(NULL, 0, &T->lb8, 2, 1, 0, 1);
    /* non-contiguous (gaps inside and after each item), and a vector without
     * gaps: correct with the gaps untouched, or KP_ERR_DATATYPE */
    KT_ADD(&T->vec, 1, &T->vec, 1, 0, 0, 1);
    KT_ADD(&T->vec, 20, &T->vec, 20, 0, 0, 1);
    KT_ADD(&T->vec, 5, &T->i32, 30, 0, 0, 1);
    KT_ADD(&T->i32, 30, &T->vec, 5, 0, 0, 1);
    KT_ADD(&T->vec, 4, &T->c3, 8, 0, 0, 1);
    KT_ADD(&T->vecc, 10, &T->vecc, 10, 0, 0, 1);
    KT_ADD(&T->vecc, 10, &T->i32, 60, 0, 0, 1);
    /* in place */
    KT_ADD(NULL, 0, &T->i32, 100, 1, 0, 0);
    KT_ADD(NULL, 0, &T->byte, 7, 1, 1, 0);
    KT_ADD(NULL, 0, &T->dbl, 1000, 1, 0, 0);
    KT_ADD(NULL, 0, &T->c3, 5, 1, 0, 0);
    KT_ADD(NULL, 0, &T->vec, 3, 1, 0, 1);
    /* count 0: nothing may be written */
    KT_ADD(&T->i32, 0, &T->i32, 0, 0, 0, 0);
    KT_ADD(&T->byte, 0, &T->byte, 0, 0, 1, 0);
    KT_ADD(&T->c3, 0, &T->i32, 0, 0, 0, 0);
    KT_ADD(NULL, 0, &T->dbl, 0, 1, 0, 0);
#undef KT_ADD
    return n;
}

/* The derived communicators the tests build from MPI_COMM_WORLD. */
enum kt_sub {
    KT_SUB_REVERSED, /* MPI_Comm_split, rank order reversed */
    KT_SUB_HALVES,   /* even / odd world ranks, reversed inside */
    KT_SUB_AGAIN,    /* a new split after the others were freed (may reuse a handle) */
    KT_SUB_SELF      /* MPI_COMM_SELF */
};

/* The cases on a derived communicator (at most max). */
static inline int kt_cases_sub(const kt_types *T, enum kt_sub which, kt_case *c, int max)
{
    int n = 0;
#define KT_ADD(...) (n = kt_case_add(c, n, max, kt_case_mk(__VA_ARGS__)))
    KT_ADD(&T->i32, 100, &T->i32, 100, 0, 0, 0);
    switch (which) {
    case KT_SUB_REVERSED:
        KT_ADD(&T->byte, 1000, &T->byte, 1000, 0, 1, 0);
        KT_ADD(NULL, 0, &T->i32, 33, 1, 0, 0);
        KT_ADD(&T->c3, 5, &T->c3, 5, 0, 0, 0);
        KT_ADD(&T->vec, 2, &T->i32, 12, 0, 0, 1);
        break;
    case KT_SUB_HALVES:
        KT_ADD(&T->byte, 5, &T->byte, 5, 0, 0, 0);
        KT_ADD(NULL, 0, &T->dbl, 9, 1, 0, 0);
        break;
    case KT_SUB_AGAIN:
        KT_ADD(&T->byte, 1000, &T->byte, 1000, 0, 1, 0);
        break;
    case KT_SUB_SELF:
        KT_ADD(NULL, 0, &T->byte, 3, 1, 0, 0);
        break;
    }
#undef KT_ADD
    return n;
}

/* Call i of a back-to-back sequence. Sizes in bytes per block, a cycle of
 * 54 from 0 to 131075 (five of 64 KiB or more: few, since large blocks are
 * slow on oversubscribed cores); above 16 bytes they are divided by `div`
 * (all-to-all: 4, as it moves P blocks per rank where a gather moves one).
 * The first cycle sends bytes (misaligned by i mod 3), the second ints and
 * doubles alternately (one more element than fits: odd sizes); every
 * sixth call is in place. */
static inline kt_case kt_case_b2b(const kt_types *T, int i, int div)
{
    static const int64_t sizes[] = {1,    17,    4096, 3,      0,   255,   8,     1000,  2,     12,    100,
                                    5,    33,    2048, 7,      511, 64,    13,    4,     70000, 9,     1,
                                    40,   300,   6,    23,     11,  0,     129,   1024,  2,     77,    16384,
                                    3,    500,   31,   15,     8,   1500,  19,    250,   4,     63,    700,
                                    21,   2,     65537, 10,    131075, 99,  65536, 5,     99999, 40000};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    int64_t bytes = sizes[i % nsizes];
    if (div > 1 && bytes > 16)
        bytes /= div;
    const kt_layout *L = (i / nsizes) % 2 == 0 ? &T->byte : i % 2 ? &T->dbl : &T->i32;
    const int64_t cnt = bytes / L->extent + (L != &T->byte && bytes > 0);
    return kt_case_mk(L, cnt, L, cnt, i % 6 == 1, L == &T->byte ? (size_t)(i % 3) : 0, 0);
}

#endif /* KT_CASES_H */
