/*
 * The one-sided transport (issue 10) against the native MPI:
 *
 *   test_rma [-s seed] [-n calls] [-t seconds] [--path staging|attach|auto] [--no-check] [--no-flow]
 *            [--no-cache] [--no-attach]
 *
 * --path P appends rma_path=P to every transport below (the data path:
 * staging copied out, or puts straight into the attached receive buffer;
 * default: none, the transport's own choice by size).
 *
 * 1. Independent check: every registered all-gather, gather and all-to-all
 *    algorithm, forced with kp_set_algorithm under the fallback policy
 *    "error" with transport=rma (rails=1), transport=rma,rails=2,stripe_kb=1
 *    and transport=rma,rails=3,stripe_kb=1 (small messages striped too), on
 *    MPI_COMM_WORLD, its two halves from MPI_Comm_split in reversed rank
 *    order and a duplicate, with -n calls of random block sizes (0 .. 70000
 *    bytes, same sequence on every rank), datatypes (MPI_BYTE, MPI_INT,
 *    MPI_DOUBLE, a strided vector of ints), in place or not, gather to a
 *    random root. Every byte of the receive buffer is compared with what
 *    the native MPI_Allgather / MPI_Gather / MPI_Alltoall return for the
 *    same input (guards around the buffers included). An algorithm may
 *    refuse a communicator (KP_ERR_UNSUPPORTED, e.g. shm_* on several
 *    emulated nodes, concurrent_exchange on P = 3) only on every rank
 *    alike; kp_last_algorithm() must name transport=rma otherwise.
 * 2. Flow control: KPORT_RMA_SLOTS=4 and KPORT_RMA_SLOT_KB=0 (four 64-byte
 *    slots per pair) on a new communicator; gather direct:k=2 and
 *    all-to-all pairwise over rma, 200 calls each, the root (rank 0)
 *    sleeping 200 us before every call so the senders run ahead by as many
 *    calls as the ring lets them: 8-byte blocks (one piece per call, the
 *    senders up to four calls ahead) and 1000-byte blocks (16 pieces per
 *    message, the ring wraps inside every message). Every call's data is
 *    distinct and checked; the senders must really have been ahead (their
 *    first 100 calls end before the root's 100th, measured on one host).
 * 3. Window cache: kp_rma_live_windows() grows when a communicator's first
 *    rma plan is built, not on later calls, is taken by a duplicate of the
 *    same ranks after MPI_Comm_free (pool), and is 0 after
 *    kp_release_caches() (leaks beyond that: LeakSanitizer, ASan build).
 * 4. Attachment cache (rma_path=attach; skipped with a message when this
 *    MPI's dynamic windows failed kport's probe, which must then be so on
 *    every rank): a receive buffer used again attaches nothing new; a
 *    buffer freed and another allocated at the same address (realloc,
 *    and munmap + mmap of fresh pages at the same address) receives the
 *    new call's data, not stale bytes; a receive buffer growing inside
 *    the range of an older attachment, and 40 distinct buffers (more than
 *    the cache holds: eviction); every attachment detached by
 *    kp_release_caches (MPI_Win_attach and MPI_Win_detach counts equal).
 *
 * Output: one line per collective and part on rank 0, then "N passed, M
 * failed"; exit code nonzero on any failure.
 */
#define _GNU_SOURCE
#include "core/core.h"
#include "exec/onesided.h"
#include "topo/topo.h"
#include "kport.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

static int me, np;
static long passed, failed;
static char pathsuffix[32]; /* ",rma_path=P" from --path */

static void expect(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void expect(int ok, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return;
    }
    failed++;
    if (failed > 20)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rank %d: FAIL: ", me);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* same on every rank */
static unsigned long rng_state = 1;
static unsigned rnd(void)
{
    rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)(rng_state >> 33);
}

enum { NT = 4 };
static MPI_Datatype types[NT];
static const char *tnames[NT] = {"MPI_BYTE", "MPI_INT", "MPI_DOUBLE", "vector(int,2,1,3)"};

#define GUARD 64

/* one call: kport and native, compare */
static void one_call(int coll, MPI_Comm comm, const char *spec, int call)
{
    int P, r;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &r);
    const int ti = (int)(rnd() % NT);
    MPI_Datatype t = types[ti];
    MPI_Aint lb, ext;
    int tsize;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_size(t, &tsize);
    const int maxcount = (int)(70000 / tsize) + 1;
    int count = (int)(rnd() % 8 == 0 ? 0 : rnd() % (unsigned)maxcount);
    if (rnd() % 3 == 0)
        count = count % 40; /* plenty of small ones */
    const int inplace = rnd() % 3 == 0;
    const int root = (int)(rnd() % (unsigned)P);
    const size_t blk = (size_t)count * (size_t)ext; /* span of count items */
    const size_t nblk = coll == KP_COLL_GATHER ? 1 : coll == KP_COLL_ALLGATHER ? 1 : (size_t)P;
    const size_t sbytes = nblk * blk + GUARD, rbytes = (size_t)P * blk + 2 * GUARD;
    unsigned char *sb = malloc(sbytes), *rk = malloc(rbytes), *rn = malloc(rbytes), *rin = malloc(rbytes);
    for (size_t i = 0; i < sbytes; i++)
        sb[i] = (unsigned char)(i * 7 + (size_t)r * 31 + (size_t)call * 13 + 1);
    for (size_t i = 0; i < rbytes; i++)
        rin[i] = (unsigned char)(i * 11 + (size_t)r * 5 + (size_t)call + 3);
    memcpy(rk, rin, rbytes);
    memcpy(rn, rin, rbytes);
    unsigned char *rkb = rk + GUARD, *rnb = rn + GUARD;
    int rc = KP_SUCCESS, rcn = MPI_SUCCESS;
    const int cnt = count;
    if (coll == KP_COLL_ALLGATHER) {
        if (inplace) {
            memcpy(rkb + (size_t)r * blk, sb, blk);
            memcpy(rnb + (size_t)r * blk, sb, blk);
            rc = kp_allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rkb, cnt, t, comm);
            rcn = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rnb, cnt, t, comm);
        } else {
            rc = kp_allgather(sb, cnt, t, rkb, cnt, t, comm);
            rcn = MPI_Allgather(sb, cnt, t, rnb, cnt, t, comm);
        }
    } else if (coll == KP_COLL_GATHER) {
        if (inplace && r == root) {
            memcpy(rkb + (size_t)r * blk, sb, blk);
            memcpy(rnb + (size_t)r * blk, sb, blk);
            rc = kp_gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rkb, cnt, t, root, comm);
            rcn = MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rnb, cnt, t, root, comm);
        } else {
            rc = kp_gather(sb, cnt, t, rkb, cnt, t, root, comm);
            rcn = MPI_Gather(sb, cnt, t, rnb, cnt, t, root, comm);
        }
    } else {
        if (inplace) {
            memcpy(rkb, sb, (size_t)P * blk);
            memcpy(rnb, sb, (size_t)P * blk);
            rc = kp_alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rkb, cnt, t, comm);
            rcn = MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rnb, cnt, t, comm);
        } else {
            rc = kp_alltoall(sb, cnt, t, rkb, cnt, t, comm);
            rcn = MPI_Alltoall(sb, cnt, t, rnb, cnt, t, comm);
        }
    }
    int lo, hi, in[2] = {rc, -rc}, out[2];
    MPI_Allreduce(in, out, 2, MPI_INT, MPI_MIN, comm);
    lo = out[0];
    hi = -out[1];
    if (rc == KP_ERR_UNSUPPORTED || lo == KP_ERR_UNSUPPORTED) { /* this communicator: every call alike */
        expect(lo == hi, "%s P=%d: refused on some ranks only", spec, P);
        expect(memcmp(rk, rin, rbytes) == 0 || inplace, "%s P=%d: refused, but the receive buffer changed", spec,
               P);
    } else {
        expect(rc == KP_SUCCESS && rcn == MPI_SUCCESS, "%s P=%d call %d: rc %d (%s), native %d", spec, P, call, rc,
               kp_last_error(), rcn);
        if (rc == KP_SUCCESS) {
            /* a call that moves no data (count 0) records no algorithm */
            const char *last = kp_last_algorithm(coll);
            expect(blk == 0 || strstr(last, "transport=rma") != NULL, "%s: kp_last_algorithm() is \"%s\"", spec,
                   last);
            size_t bad = rbytes;
            for (size_t i = 0; i < rbytes && bad == rbytes; i++)
                if (rk[i] != rn[i])
                    bad = i;
            expect(bad == rbytes,
                   "%s P=%d call %d: %s count %d%s root %d: byte %zd of the receive buffer (guard %d) is %u, "
                   "native %u",
                   spec, P, call, tnames[ti], count, inplace ? " in place" : "", root, (ssize_t)bad - GUARD, GUARD,
                   bad < rbytes ? rk[bad] : 0, bad < rbytes ? rn[bad] : 0);
        }
    }
    free(sb);
    free(rk);
    free(rn);
    free(rin);
}

/* returns 1 when the algorithm refused this communicator */
static int run_spec(int coll, MPI_Comm comm, const char *spec, int ncalls, unsigned long seed)
{
    rng_state = seed;
    long f0 = failed;
    for (int call = 0; call < ncalls; call++) {
        one_call(coll, comm, spec, call);
        if (failed > f0 + 3)
            break;
    }
    return 0;
}

static void part_check(int ncalls, unsigned long seed)
{
    static const char *transports[] = {"transport=rma", "transport=rma,rails=2,stripe_kb=1",
                                       "transport=rma,rails=3,stripe_kb=1"};
    MPI_Comm rev, dup;
    MPI_Comm_split(MPI_COMM_WORLD, me < np / 2, np - me, &rev);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm comms[3] = {MPI_COMM_WORLD, rev, dup};
    const int colls[3] = {KP_COLL_ALLGATHER, KP_COLL_GATHER, KP_COLL_ALLTOALL};
    for (int ci = 0; ci < 3; ci++) {
        const int coll = colls[ci];
        const double t0 = MPI_Wtime();
        const long p0 = passed, f0 = failed;
        int nspecs = 0;
        for (int a = 0; a < kp_algorithm_count(coll); a++)
            for (int ti = 0; ti < 3; ti++) {
                char spec[160];
                snprintf(spec, sizeof(spec), "%s:%s%s", kp_algorithm_name(coll, a), transports[ti], pathsuffix);
                expect(kp_set_algorithm(coll, spec) == KP_SUCCESS, "kp_set_algorithm(%s): %s", spec,
                       kp_last_error());
                for (int k = 0; k < 3; k++)
                    run_spec(coll, comms[k], spec, ncalls, seed + (unsigned long)(a * 100 + ti * 10 + k));
                nspecs++;
            }
        kp_set_algorithm(coll, "auto");
        if (me == 0)
            printf("  %-10s %d specs x 3 communicators x %d calls: %ld passed, %ld failed (%.2f s)\n",
                   coll == KP_COLL_ALLGATHER ? "allgather" : coll == KP_COLL_GATHER ? "gather" : "alltoall", nspecs,
                   ncalls, passed - p0, failed - f0, MPI_Wtime() - t0);
    }
    MPI_Comm_free(&rev);
    MPI_Comm_free(&dup);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* a slow root, fast senders: every call's data distinct and checked */
static void flow(int coll, const char *spec, int bytes, int ncalls)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* new windows, with the tiny ring */
    char full[160];
    snprintf(full, sizeof full, "%s%s", spec, pathsuffix);
    kp_set_algorithm(coll, full);
    /* direct messages wait for the receiver's address (like a rendezvous):
     * senders run ahead of the root only on the staging path */
    const int ahead = strstr(pathsuffix, "attach") == NULL;
    const size_t per = coll == KP_COLL_ALLTOALL ? (size_t)np : 1;
    unsigned char *sb = malloc(per * (size_t)bytes), *rb = malloc((size_t)np * (size_t)bytes);
    double t100 = 0;
    long bad = 0;
    int rcbad = 0;
    for (int call = 0; call < ncalls; call++) {
        if (me == 0)
            usleep(200);
        for (size_t i = 0; i < per * (size_t)bytes; i++)
            sb[i] = (unsigned char)(me * 41 + call * 7 + (int)i);
        memset(rb, 0xEE, (size_t)np * (size_t)bytes);
        int rc = coll == KP_COLL_GATHER ? kp_gather(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, 0, comm)
                                        : kp_alltoall(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, comm);
        rcbad |= rc != KP_SUCCESS;
        if (me == 0 || coll == KP_COLL_ALLTOALL)
            for (int q = 0; q < np; q++)
                for (int i = 0; i < bytes; i++) {
                    const size_t src = coll == KP_COLL_ALLTOALL ? (size_t)me * (size_t)bytes + (size_t)i : (size_t)i;
                    bad += rb[(size_t)q * (size_t)bytes + (size_t)i] != (unsigned char)(q * 41 + call * 7 + (int)src);
                }
        if (call == 99)
            t100 = now();
    }
    expect(!rcbad, "flow %s bytes=%d: a call failed: %s", spec, bytes, kp_last_error());
    expect(bad == 0, "flow %s bytes=%d: %ld bytes wrong", spec, bytes, bad);
    /* the senders ran ahead: their 100th call ended before the root's */
    double all[64];
    MPI_Gather(&t100, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me == 0 && coll == KP_COLL_GATHER && np <= 64 && ahead)
        for (int q = 1; q < np; q++)
            expect(all[q] < all[0], "flow %s bytes=%d: rank %d ended its 100th call %.0f us after the root", spec,
                   bytes, q, (all[q] - all[0]) * 1e6);
    kp_set_algorithm(coll, "auto");
    MPI_Comm_free(&comm);
    free(sb);
    free(rb);
}

static void part_flow(void)
{
    const long p0 = passed, f0 = failed;
    const double t0 = MPI_Wtime();
    setenv("KPORT_RMA_SLOTS", "4", 1);
    setenv("KPORT_RMA_SLOT_KB", "0", 1);
    flow(KP_COLL_GATHER, "direct:k=2,transport=rma", 8, 200);
    flow(KP_COLL_GATHER, "direct:k=2,transport=rma", 1000, 200);
    flow(KP_COLL_GATHER, "direct:k=2,transport=rma,rails=2,stripe_kb=1", 3000, 100);
    flow(KP_COLL_ALLTOALL, "pairwise:transport=rma", 8, 200);
    flow(KP_COLL_ALLTOALL, "direct:k=3,transport=rma", 1000, 100);
    unsetenv("KPORT_RMA_SLOTS");
    unsetenv("KPORT_RMA_SLOT_KB");
    if (me == 0)
        printf("  flow       slow root, 4 slots of 64 bytes: %ld passed, %ld failed (%.2f s)\n", passed - p0,
               failed - f0, MPI_Wtime() - t0);
}

/* one all-gather of `bytes` per rank into rb over `comm`, every byte checked */
static void ag_check(MPI_Comm comm, unsigned char *rb, int bytes, int call, const char *what)
{
    unsigned char *sb = malloc((size_t)bytes + 1);
    for (int i = 0; i < bytes; i++)
        sb[i] = (unsigned char)(me * 29 + call * 3 + i);
    memset(rb, 0xEE, (size_t)np * (size_t)bytes);
    const int rc = kp_allgather(sb, bytes, MPI_BYTE, rb, bytes, MPI_BYTE, comm);
    long bad = 0;
    for (int q = 0; q < np; q++)
        for (int i = 0; i < bytes; i++)
            bad += rb[(size_t)q * (size_t)bytes + (size_t)i] != (unsigned char)(q * 29 + call * 3 + i);
    expect(rc == KP_SUCCESS && bad == 0, "attach %s (call %d, %d bytes): rc %d (%s), %ld bytes wrong", what, call,
           bytes, rc, kp_last_error(), bad);
    free(sb);
}

static void part_attach(void)
{
    const long p0 = passed, f0 = failed;
    kp_release_caches();
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    kp_set_algorithm(KP_COLL_ALLGATHER, "ring:transport=rma,rma_path=attach");
    const int B = 70000;
    unsigned char *rb = malloc((size_t)np * B);
    ag_check(comm, rb, B, 0, "first call");
    int ready;
    long a0, d0, a1, d1;
    kp_rma_attach_stats(&a0, &d0);
    int all[2] = {0, 0}, mine[2] = {a0 > 0, -(int)(a0 > 0)};
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ready = all[0];
    expect(all[0] == -all[1], "attach: the dynamic windows work on some ranks only");
    /* one staging window and, unless the probe failed, one dynamic window */
    expect(np < 2 || kp_rma_live_windows() == 1 + all[0], "attach: %d windows live after the first call, not %d",
           kp_rma_live_windows(), 1 + all[0]);
    if (np < 2 || !ready) {
        if (me == 0)
            printf("  attach     this MPI's dynamic windows failed kport's probe (or P = 1): rma_path=attach ran "
                   "over staging\n");
    } else {
        for (int call = 1; call < 5; call++)
            ag_check(comm, rb, B, call, "same buffer");
        kp_rma_attach_stats(&a1, &d1);
        expect(a1 == a0, "attach: calls on the same receive buffer attached %ld more ranges", a1 - a0);
        /* freed and allocated again: realloc of the same size, and fresh pages at the same address */
        for (int call = 5; call < 15; call++) {
            free(rb);
            rb = malloc((size_t)np * B);
            ag_check(comm, rb, B, call, "after free + malloc");
        }
        const size_t len = (size_t)np * (1 << 20);
        unsigned char *m1 = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ag_check(comm, m1, 1 << 20, 20, "mmap");
        munmap(m1, len);
        unsigned char *m2 = mmap(m1, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        expect(m2 != MAP_FAILED, "attach: mmap failed");
        ag_check(comm, m2, 1 << 20, 21, m2 == m1 ? "munmap + mmap at the same address" : "munmap + mmap");
        ag_check(comm, m2 + 4096, 1000, 22, "inside an older attachment");
        ag_check(comm, m2 + 3, (1 << 20) - 5, 23, "overlapping an older attachment");
        munmap(m2, len);
        /* more buffers than the cache holds */
        unsigned char *many[40];
        for (int i = 0; i < 40; i++) {
            many[i] = malloc((size_t)np * 5000);
            ag_check(comm, many[i], 5000, 30 + i, "40 buffers");
        }
        for (int i = 0; i < 40; i++) {
            ag_check(comm, many[i], 5000, 70 + i, "40 buffers again");
            free(many[i]);
        }
        /* counts and sizes back to back on one buffer */
        for (int call = 0; call < 20; call++)
            ag_check(comm, rb, (call * 7919) % B, 110 + call, "changing sizes");
    }
    kp_set_algorithm(KP_COLL_ALLGATHER, "auto");
    free(rb);
    MPI_Comm_free(&comm);
    kp_release_caches();
    kp_rma_attach_stats(&a1, &d1);
    expect(a1 == d1, "attach: %ld ranges attached, %ld detached after kp_release_caches", a1, d1);
    if (me == 0)
        printf("  attach     cache reuse, free + malloc, munmap + mmap, eviction, detach on free: %ld passed, "
               "%ld failed\n",
               passed - p0, failed - f0);
}

static void part_cache(void)
{
    const long p0 = passed, f0 = failed;
    kp_release_caches();
    expect(kp_rma_live_windows() == 0, "windows live after kp_release_caches: %d", kp_rma_live_windows());
    char buf[64] = {0}, out[64 * 64];
    /* staging only: the attach path's dynamic windows are counted in part_attach */
    kp_set_algorithm(KP_COLL_ALLGATHER, "ring:transport=rma,rails=2,rma_path=staging");
    for (int cycle = 0; cycle < 20; cycle++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        const int before = kp_rma_live_windows();
        expect(kp_allgather(buf, 1, MPI_BYTE, out, 1, MPI_BYTE, d) == KP_SUCCESS, "cache: call failed");
        const int after = kp_rma_live_windows();
        if (np > 1)
            expect(after == (cycle == 0 ? before + 2 : before),
                   "cache cycle %d: %d windows before the first call, %d after (2 rails: 2 new ones on the first "
                   "cycle only, then the pooled ones)",
                   cycle, before, after);
        expect(kp_allgather(buf, 1, MPI_BYTE, out, 1, MPI_BYTE, d) == KP_SUCCESS && kp_rma_live_windows() == after,
               "cache: a second call created windows");
        MPI_Comm_free(&d);
    }
    kp_set_algorithm(KP_COLL_ALLGATHER, "auto");
    kp_release_caches();
    expect(kp_rma_live_windows() == 0, "windows live after kp_release_caches: %d", kp_rma_live_windows());
    if (me == 0)
        printf("  cache      windows pooled with the communicator and freed: %ld passed, %ld failed\n",
               passed - p0, failed - f0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int ncalls = 6, check = 1, flowp = 1, cache = 1, attach = 1, tmo = 300;
    unsigned long seed = 12345;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            ncalls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc)
            seed = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            tmo = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-check"))
            check = 0;
        else if (!strcmp(argv[i], "--no-flow"))
            flowp = 0;
        else if (!strcmp(argv[i], "--no-cache"))
            cache = 0;
        else if (!strcmp(argv[i], "--no-attach"))
            attach = 0;
        else if (!strcmp(argv[i], "--path") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "staging") || !strcmp(argv[i + 1], "attach") || !strcmp(argv[i + 1], "auto")))
            snprintf(pathsuffix, sizeof pathsuffix, ",rma_path=%s", argv[++i]);
        else {
            if (me == 0)
                fprintf(stderr, "usage: test_rma [-s seed] [-n calls] [-t seconds] [--path staging|attach|auto] "
                                "[--no-check] [--no-flow] [--no-cache] [--no-attach]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (tmo > 0)
        alarm((unsigned)tmo);
    kp_set_fallback(KP_FALLBACK_ERROR);
    types[0] = MPI_BYTE;
    types[1] = MPI_INT;
    types[2] = MPI_DOUBLE;
    MPI_Type_vector(2, 1, 3, MPI_INT, &types[3]);
    MPI_Type_commit(&types[3]);
    if (me == 0)
        printf("test_rma: P=%d, seed %lu, %d calls per (spec, communicator)\n", np, seed, ncalls);
    if (check)
        part_check(ncalls, seed);
    if (flowp)
        part_flow();
    if (cache)
        part_cache();
    if (attach)
        part_attach();
    MPI_Type_free(&types[3]);
    long tot[2] = {passed, failed}, sum[2];
    MPI_Reduce(tot, sum, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0)
        printf("%ld passed, %ld failed\n", sum[0], sum[1]);
    MPI_Finalize();
    return me == 0 && sum[1] ? 1 : 0;
}
