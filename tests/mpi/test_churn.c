/*
 * test_churn: communicators created and freed in every way a library does,
 * under every algorithm of every collective, with kport's set-up tiers and
 * its pool of freed communicators' resources (src/core/comm.c).
 *
 *   test_churn [-n CYCLES] [-a allgather|barrier|gather|alltoall|all]
 *
 * Per collective, per algorithm (every registry entry with its default
 * parameters, plus auto), CYCLES cycles of: create a communicator (dup;
 * split with one colour and keys that reverse or rotate the ranks; split in
 * two colours; create from a rotated group; a dup of a held communicator),
 * call the collective on it (and sometimes again), check every byte against
 * a formula, keep up to HOLD communicators alive and free them in an order
 * other than their creation's. Also checked:
 *   - no two live communicators share a shared segment or a private
 *     duplicate (kport's state of every held communicator, compared);
 *   - the number of live segments stays bounded while cycling, and returns
 *     to its value at the start once everything is freed and
 *     kp_release_caches() has run;
 *   - the heap (mallinfo2) does not grow with the number of cycles.
 * Prints "test_churn: N passed, M failed" on rank 0.
 */
#define _GNU_SOURCE
#include "core/core.h"
#include "topo/topo.h"
#include "kport.h"
#include "common.h"

#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOLD 4

static int wrank, wsize, npass, nfail;

static void check(const char *what, long bad)
{
    kt_check_world("test_churn", what, bad, &npass, &nfail);
}

static unsigned char V(long cycle, int src, int dst, long i)
{
    return (unsigned char)((cycle * 131 + src * 31 + dst * 17 + i * 7 + (i >> 8)) & 0xff);
}

/* a new communicator of the cycle's kind (every rank gets one) */
static MPI_Comm make(long cycle, MPI_Comm *held)
{
    MPI_Comm c = MPI_COMM_NULL;
    switch (cycle % 6) {
    case 0:
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        break;
    case 1:
        MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &c);
        break;
    case 2:
        MPI_Comm_split(MPI_COMM_WORLD, 0, (wrank + (int)(cycle / 6)) % wsize, &c);
        break;
    case 3:
        MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &c);
        break;
    case 4: {
        MPI_Group wg, g;
        int *r = malloc((size_t)wsize * sizeof(int));
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        for (int i = 0; i < wsize; i++)
            r[i] = (i + (int)(cycle / 6)) % wsize;
        MPI_Group_incl(wg, wsize, r, &g);
        MPI_Comm_create(MPI_COMM_WORLD, g, &c);
        MPI_Group_free(&g);
        MPI_Group_free(&wg);
        free(r);
        break;
    }
    default: { /* a dup of a held communicator, else of the world */
        MPI_Comm from = MPI_COMM_WORLD;
        for (int i = 0; i < HOLD; i++)
            if (held[i] != MPI_COMM_NULL) {
                from = held[i];
                break;
            }
        MPI_Comm_dup(from, &c);
        break;
    }
    }
    return c;
}

/* one call of coll on c, checked; returns the number of wrong bytes */
static long call(int coll, MPI_Comm c, long cycle, int64_t bytes, unsigned char *sb, unsigned char *rb)
{
    int me, P;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &P);
    const int root = (int)(cycle % P);
    const int a2a = coll == KP_COLL_ALLTOALL;
    for (int d = 0; d < (a2a ? P : 1); d++)
        for (int64_t i = 0; i < bytes; i++)
            sb[d * bytes + i] = V(cycle, me, a2a ? d : 0, i);
    memset(rb, 0xee, (size_t)(P * bytes));
    int rc;
    switch (coll) {
    case KP_COLL_ALLGATHER:
        rc = kp_allgather(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, c);
        break;
    case KP_COLL_GATHER:
        rc = kp_gather(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, root, c);
        break;
    case KP_COLL_ALLTOALL:
        rc = kp_alltoall(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, c);
        break;
    default:
        return kp_barrier(c) != KP_SUCCESS;
    }
    if (rc != KP_SUCCESS) {
        fprintf(stderr, "test_churn: rank %d: %s on P=%d: %s: %s\n", wrank, kp_last_algorithm(coll), P,
                kp_strerror(rc), kp_last_error());
        return 1;
    }
    if (coll == KP_COLL_GATHER && me != root)
        return 0;
    long bad = 0;
    for (int s = 0; s < P; s++)
        for (int64_t i = 0; i < bytes; i++)
            bad += rb[s * bytes + i] != V(cycle, s, a2a ? me : 0, i);
    return bad;
}

/* no two live communicators share a segment or a private duplicate */
static long distinct_resources(MPI_Comm *held)
{
    long bad = 0;
    kp_comm *st[HOLD] = {0};
    for (int i = 0; i < HOLD; i++)
        if (held[i] != MPI_COMM_NULL) {
            void *attr = NULL;
            /* only communicators kport has state for (it made a call) */
            if (kp_comm_get(held[i], &st[i]) != KP_SUCCESS)
                bad++;
            (void)attr;
        }
    for (int i = 0; i < HOLD; i++)
        for (int j = i + 1; j < HOLD; j++) {
            if (!st[i] || !st[j])
                continue;
            if (st[i]->shm.base && st[i]->shm.base == st[j]->shm.base)
                bad++;
            if (st[i]->comm != MPI_COMM_NULL && st[i]->comm == st[j]->comm)
                bad++;
        }
    return bad;
}

static long heap_used(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (long)(mi.uordblks + mi.hblkhd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    long cycles = 60;
    int only = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-n") == 0)
            cycles = atol(argv[i + 1]);
        else if (strcmp(argv[i], "-a") == 0) {
            static const char *names[] = {"allgather", "barrier", "gather", "alltoall"};
            for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++)
                if (strcmp(argv[i + 1], names[k]) == 0)
                    only = k;
        }
    }
    const int64_t maxb = 3000;
    unsigned char *sb = malloc((size_t)(wsize * maxb)), *rb = malloc((size_t)(wsize * maxb));
    const int segs0 = kp_setup_live_segments();
    kp_set_fallback(KP_FALLBACK_SILENT); /* an algorithm that cannot apply to a communicator: the automatic choice */
    MPI_Comm held[HOLD];
    for (int i = 0; i < HOLD; i++)
        held[i] = MPI_COMM_NULL;
    int maxsegs = 0;
    long heap_mid = 0;
    for (int coll = 0; coll <= KP_COLL_ALLTOALL; coll++) {
        if (only >= 0 && coll != only)
            continue;
        const int nalg = kp_algorithm_count(coll);
        for (int a = -1; a < nalg; a++) {
            const char *name = a < 0 ? "auto" : kp_algorithm_name(coll, a);
            kp_set_algorithm(coll, name);
            long bad = 0;
            for (long cy = 0; cy < cycles; cy++) {
                MPI_Comm c = make(cy, held);
                const int64_t bytes = coll == KP_COLL_BARRIER ? 0 : (int64_t[]){1, 8, 100, 3000}[cy % 4];
                bad += call(coll, c, cy, bytes, sb, rb);
                if (cy % 3 == 0)
                    bad += call(coll, c, cy + 1, bytes, sb, rb);
                /* hold it in slot (cy * 3) % HOLD: frees come in another order than creation */
                int s = (int)((cy * 3) % HOLD);
                if (held[s] != MPI_COMM_NULL)
                    MPI_Comm_free(&held[s]);
                held[s] = c;
                bad += distinct_resources(held);
                int segs = kp_setup_live_segments();
                if (segs > maxsegs)
                    maxsegs = segs;
            }
            char what[96];
            snprintf(what, sizeof(what), "%s %s: %ld cycles, data and distinct resources", coll == 0   ? "allgather"
                                                                                          : coll == 1 ? "barrier"
                                                                                          : coll == 2 ? "gather"
                                                                                                      : "alltoall",
                     name, cycles);
            check(what, bad);
            if (!heap_mid && coll >= 0 && a == 0)
                heap_mid = heap_used();
        }
        kp_set_algorithm(coll, "auto");
    }
    for (int i = HOLD - 1; i >= 0; i--)
        if (held[i] != MPI_COMM_NULL)
            MPI_Comm_free(&held[i]);
    /* bounded: the held ones, the pool (one entry per group of these few
     * kinds, a few rank orders each), the world */
    check("live segments bounded while cycling", maxsegs > 24);
    /* the heap does not grow with cycles: what the later algorithms' cycles
     * left beyond the first ones' is small */
    const long heap_end = heap_used();
    check("heap does not grow with cycles", heap_mid && heap_end - heap_mid > 4L * 1024 * 1024);
    if (wrank == 0)
        printf("test_churn: live segments max %d; heap %ld -> %ld bytes\n", maxsegs, heap_mid, heap_end);
    kp_release_caches();
    check("live segments return to the start after kp_release_caches", kp_setup_live_segments() != segs0);
    /* and kport works again afterwards */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    check("a call after kp_release_caches", call(KP_COLL_ALLGATHER, c, 7, 100, sb, rb));
    MPI_Comm_free(&c);
    if (wrank == 0)
        printf("test_churn: %d passed, %d failed\n", npass, nfail);
    free(sb);
    free(rb);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
