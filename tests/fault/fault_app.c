/*
 * fault_app: all-gather, gather, all-to-all and barrier at sizes whose
 * shared-memory set-up is large (several MiB of segment), every byte
 * checked. Built twice from this file:
 *
 *   fault_app  MPI only (MPI_Allgather & co.; knows nothing of kport): run
 *              natively and, unmodified, through the drop-in (LD_PRELOAD of
 *              libkport-pmpi.so)
 *   fault_kp   kport's API (kp_allgather & co., -DFAULT_KPORT); the algorithm
 *              and the fallback policy come from the environment only
 *              (KPORT_ALLGATHER, KPORT_FALLBACK, ...), never from the code
 *
 * usage: fault_app [-c colls] [-s sizes] [-r reps] [--expect ok|refused|either]
 *                  [--forbid NAME]... [--require NAME] [-v]
 *   -c  comma list of allgather, gather, alltoall, barrier (default all four)
 *   -s  comma list of block sizes in bytes (per rank and per destination;
 *       suffixes k, m: 1024, 1048576); default 8,4096,65536,1m,4m
 *   -r  repetitions of the whole list (default 2); every repetition runs on
 *       MPI_COMM_WORLD and then on a fresh MPI_Comm_dup of it (freed after)
 *   --expect  (fault_kp) ok: every call returns KP_SUCCESS (the default);
 *             refused: every call returns KP_ERR_UNSUPPORTED, with a message
 *             in kp_last_error() and the receive buffer untouched; either:
 *             each call one or the other. The return code must agree on
 *             every rank. (fault_app: every call must return MPI_SUCCESS.)
 *   --forbid NAME  (fault_kp) a successful call must not have run an
 *             algorithm whose kp_last_algorithm() contains NAME (e.g.
 *             shm_single_copy, "shm_", "transport=rma"); repeatable
 *   --require NAME (fault_kp) every successful call must have run one whose
 *             name contains NAME
 *   -v  rank 0 prints one line per call: collective, size, return code, and
 *       (fault_kp) the algorithm that ran
 *
 * Checked on every call: the receive buffer byte for byte against the
 * formula (the gather's root only; other ranks pass no receive buffer), 64
 * guard bytes after it untouched, the send buffer unchanged; on a refusal
 * the receive buffer untouched. Gather roots rotate. A barrier is checked by
 * its return code only (the drop-in's and kport's barriers are proven in
 * tests/mpi/test_coll.c and plain_app).
 *
 * Output: "fault_app: N passed, M failed, R refused" (or fault_kp:) on rank
 * 0; exit 1 on any failure.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef FAULT_KPORT
#include <kport.h>
#define NAME "fault_kp"
#else
#define NAME "fault_app"
#endif

#define GUARD 64
#define JUNK 0xa5
#define MAXS 32
#define MAXF 8

enum { C_ALLGATHER, C_GATHER, C_ALLTOALL, C_BARRIER, C_COUNT };
static const char *const cname[C_COUNT] = {"allgather", "gather", "alltoall", "barrier"};
enum { E_OK, E_REFUSED, E_EITHER };

static int wrank, wsize, verbose, expect = E_OK;
static long npass, nfail, nrefused;
static const char *forbid[MAXF];
static int nforbid;
static const char *require;

/* the data rank src sends to rank dst in call `tag`: 8 bytes at a time */
static uint64_t word(int tag, int src, int dst, size_t j)
{
    uint64_t x = (uint64_t)tag * 0x9e3779b97f4a7c15ULL ^ (uint64_t)src * 0xbf58476d1ce4e5b9ULL ^
                 (uint64_t)dst * 0x94d049bb133111ebULL ^ (uint64_t)j * 0x2545f4914f6cdd1dULL;
    return x ^ (x >> 31);
}

static void fill(unsigned char *p, size_t n, int tag, int src, int dst)
{
    for (size_t j = 0; j * 8 < n; j++) {
        uint64_t w = word(tag, src, dst, j);
        memcpy(p + j * 8, &w, n - j * 8 < 8 ? n - j * 8 : 8);
    }
}

static unsigned char *balloc(size_t n)
{
    unsigned char *p = malloc(n + GUARD);
    if (!p) {
        fprintf(stderr, NAME ": rank %d: out of memory (%zu bytes)\n", wrank, n + GUARD);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(p, JUNK, n + GUARD);
    return p;
}

/* how many bytes differ from the expectation; prints the first few */
static long report(const char *what, size_t at, int got, int want)
{
    static int printed;
    if (printed++ < 5)
        fprintf(stderr, NAME ": rank %d: %s: byte %zu is 0x%02x, expected 0x%02x\n", wrank, what, at, got, want);
    return 1;
}

static long check_junk(const char *what, const unsigned char *p, size_t from, size_t to)
{
    long bad = 0;
    for (size_t i = from; i < to; i++)
        if (p[i] != JUNK)
            bad += report(what, i, p[i], JUNK);
    return bad;
}

/* n bytes at p against want (at offset `base` of the buffer): bytes that differ */
static long compare(const char *what, const unsigned char *p, const unsigned char *want, size_t n, size_t base)
{
    if (memcmp(p, want, n) == 0)
        return 0;
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] != want[i])
            bad += report(what, base + i, p[i], want[i]);
    return bad;
}

static int same_everywhere(int rc, MPI_Comm comm)
{
    int lo, hi;
    MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, comm);
    return lo == hi;
}

#ifdef FAULT_KPORT
static int do_call(int c, const void *s, size_t n, void *r, int root, MPI_Comm comm)
{
    switch (c) {
    case C_ALLGATHER:
        return kp_allgather(s, (MPI_Count)n, MPI_BYTE, r, (MPI_Count)n, MPI_BYTE, comm);
    case C_GATHER:
        return kp_gather(s, (MPI_Count)n, MPI_BYTE, r, (MPI_Count)n, MPI_BYTE, root, comm);
    case C_ALLTOALL:
        return kp_alltoall(s, (MPI_Count)n, MPI_BYTE, r, (MPI_Count)n, MPI_BYTE, comm);
    default:
        return kp_barrier(comm);
    }
}
static const enum kp_coll kcoll[C_COUNT] = {KP_COLL_ALLGATHER, KP_COLL_GATHER, KP_COLL_ALLTOALL, KP_COLL_BARRIER};
#else
static int do_call(int c, const void *s, size_t n, void *r, int root, MPI_Comm comm)
{
    switch (c) {
    case C_ALLGATHER:
        return MPI_Allgather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, comm);
    case C_GATHER:
        return MPI_Gather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, root, comm);
    case C_ALLTOALL:
        return MPI_Alltoall(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, comm);
    default:
        return MPI_Barrier(comm);
    }
}
#endif

static void one(int c, size_t n, int tag, MPI_Comm comm, const char *comm_name)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    const int root = tag % P;
    const size_t sn = c == C_ALLTOALL ? (size_t)P * n : n;
    const size_t rn = c == C_BARRIER || (c == C_GATHER && me != root) ? 0 : (size_t)P * n;
    unsigned char *s = balloc(sn), *r = rn || c == C_BARRIER ? balloc(rn) : NULL;
    unsigned char *want = malloc(n ? n : 1); /* one expected block at a time */
    if (!want)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int d = 0; d < (c == C_ALLTOALL ? P : 1); d++)
        fill(s + (size_t)d * n, n, tag, me, c == C_ALLTOALL ? d : 0);
    char what[128];
    snprintf(what, sizeof(what), "%s %zu B on %s (tag %d)", cname[c], n, comm_name, tag);

    const int rc = do_call(c, s, n, r, root, comm);
    long bad = 0;
    int refused = 0;
    const char *ran = "";
    if (!same_everywhere(rc, comm)) {
        fprintf(stderr, NAME ": rank %d: %s: return code %d differs between ranks\n", wrank, what, rc);
        bad++;
    }
#ifdef FAULT_KPORT
    if (rc == KP_ERR_UNSUPPORTED && expect != E_OK) {
        refused = 1;
        const char *e = kp_last_error();
        if (!e || !*e) {
            fprintf(stderr, NAME ": rank %d: %s: refused without a message in kp_last_error()\n", wrank, what);
            bad++;
        }
        if (wrank == 0 && verbose)
            printf(NAME ": %s: refused: %s\n", what, e ? e : "");
    } else if (rc != KP_SUCCESS || expect == E_REFUSED) {
        fprintf(stderr, NAME ": rank %d: %s: returned %d (%s: %s), expected %s\n", wrank, what, rc,
                kp_strerror(rc), kp_last_error(), expect == E_REFUSED ? "KP_ERR_UNSUPPORTED" : "KP_SUCCESS");
        bad++;
    } else {
        ran = kp_last_algorithm(kcoll[c]);
        ran = ran ? ran : "(none)";
        for (int f = 0; f < nforbid; f++)
            if (strstr(ran, forbid[f])) {
                fprintf(stderr, NAME ": rank %d: %s ran %s (--forbid %s)\n", wrank, what, ran, forbid[f]);
                bad++;
            }
        if (require && !strstr(ran, require)) {
            fprintf(stderr, NAME ": rank %d: %s ran %s (--require %s)\n", wrank, what, ran, require);
            bad++;
        }
    }
#else
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, NAME ": rank %d: %s: returned %d\n", wrank, what, rc);
        bad++;
    }
#endif
    if (wrank == 0 && verbose && !refused)
        printf(NAME ": %s: rc %d%s%s\n", what, rc, *ran ? " ran " : "", ran);

    /* the send buffer is never written */
    for (int d = 0; d < (c == C_ALLTOALL ? P : 1); d++) {
        fill(want, n, tag, me, c == C_ALLTOALL ? d : 0);
        bad += compare("send buffer changed", s + (size_t)d * n, want, n, (size_t)d * n);
    }
    bad += check_junk("send guard", s, sn, sn + GUARD);
    if (r) {
        if (refused || rc != 0) {
            bad += check_junk("receive buffer after a refusal", r, 0, rn + GUARD);
        } else {
            for (int src = 0; src < (rn ? P : 0); src++) {
                fill(want, n, tag, src, c == C_ALLTOALL ? me : 0);
                bad += compare(what, r + (size_t)src * n, want, n, (size_t)src * n);
            }
            bad += check_junk("receive guard", r, rn, rn + GUARD);
        }
    }
    long tot = 0, ref = refused;
    MPI_Allreduce(MPI_IN_PLACE, &ref, 1, MPI_LONG, MPI_MAX, comm);
    MPI_Allreduce(&bad, &tot, 1, MPI_LONG, MPI_SUM, comm);
    if (tot) {
        nfail++;
        if (wrank == 0)
            printf(NAME ": FAIL %s: %ld wrong\n", what, tot);
    } else if (ref) {
        nrefused++;
    } else {
        npass++;
    }
    free(s);
    free(r);
    free(want);
}

static size_t parse_size(const char *t)
{
    char *end;
    unsigned long long x = strtoull(t, &end, 10);
    if (*end == 'k' || *end == 'K')
        x <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        x <<= 20, end++;
    if (*end || x > ((size_t)1 << 30))
        return (size_t)-1;
    return (size_t)x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int colls[C_COUNT] = {1, 1, 1, 1}, reps = 2, nsizes = 0;
    size_t sizes[MAXS];
    char buf[512];
    int ok = 1;
    for (int i = 1; i < argc && ok; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-v") == 0) {
            verbose = 1;
        } else if (!v) {
            ok = 0;
        } else if (strcmp(a, "-c") == 0) {
            memset(colls, 0, sizeof(colls));
            snprintf(buf, sizeof(buf), "%s", v);
            for (char *sv, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
                int k = 0;
                while (k < C_COUNT && strcmp(t, cname[k]) != 0)
                    k++;
                if (k == C_COUNT)
                    ok = 0;
                else
                    colls[k] = 1;
            }
            i++;
        } else if (strcmp(a, "-s") == 0) {
            snprintf(buf, sizeof(buf), "%s", v);
            for (char *sv, *t = strtok_r(buf, ",", &sv); t && ok; t = strtok_r(NULL, ",", &sv)) {
                size_t x = parse_size(t);
                if (x == (size_t)-1 || nsizes == MAXS)
                    ok = 0;
                else
                    sizes[nsizes++] = x;
            }
            i++;
        } else if (strcmp(a, "-r") == 0) {
            reps = atoi(v);
            ok = reps > 0;
            i++;
        } else if (strcmp(a, "--expect") == 0) {
            expect = strcmp(v, "ok") == 0 ? E_OK : strcmp(v, "refused") == 0 ? E_REFUSED
                                                 : strcmp(v, "either") == 0  ? E_EITHER
                                                                             : -1;
            ok = expect >= 0;
            i++;
        } else if (strcmp(a, "--forbid") == 0 && nforbid < MAXF) {
            forbid[nforbid++] = v;
            i++;
        } else if (strcmp(a, "--require") == 0) {
            require = v;
            i++;
        } else {
            ok = 0;
        }
    }
    if (!ok) {
        if (wrank == 0)
            fprintf(stderr, "usage: " NAME " [-c colls] [-s sizes] [-r reps] [--expect ok|refused|either] "
                            "[--forbid NAME]... [--require NAME] [-v]\n");
        MPI_Finalize();
        return 2;
    }
    if (nsizes == 0) {
        const size_t def[] = {8, 4096, 65536, (size_t)1 << 20, (size_t)4 << 20};
        for (; nsizes < (int)(sizeof(def) / sizeof(*def)); nsizes++)
            sizes[nsizes] = def[nsizes];
    }

    int tag = 1;
    for (int rep = 0; rep < reps; rep++) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        for (int w = 0; w < 2; w++) {
            MPI_Comm comm = w ? dup : MPI_COMM_WORLD;
            for (int k = 0; k < nsizes; k++)
                for (int c = 0; c < C_COUNT; c++)
                    if (colls[c] && (c != C_BARRIER || k == 0))
                        one(c, sizes[k], tag++, comm, w ? "a duplicate" : "world");
        }
        MPI_Comm_free(&dup);
    }
    if (wrank == 0) {
        printf(NAME ": %ld passed, %ld failed, %ld refused\n", npass, nfail, nrefused);
        fflush(stdout);
    }
    MPI_Finalize();
    return nfail ? 1 : 0;
}
