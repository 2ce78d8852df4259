/*
 * Forced algorithms on communicators of every size against the native MPI
 * (issue 7):
 *
 *   test_forced_env [--all] [-t seconds]
 *
 * Without --all the algorithms come from the environment (KPORT_ALLGATHER,
 * KPORT_BARRIER, KPORT_GATHER, KPORT_ALLTOALL, at least one of them), as a
 * user would force them; kp_set_algorithm is never called. With --all every
 * registered algorithm of every collective is forced in turn with
 * kp_set_algorithm, with every value 1..8 of the parameter it takes (tree:
 * 1 and 2; 3..8 must be refused as bad input, KP_ERR_PARAM), so that one
 * launch covers every (algorithm, value) pair.
 *
 * Each forced algorithm runs, under the default fallback policy (error), on
 *  - MPI_COMM_SELF (one rank),
 *  - MPI_COMM_WORLD split into pairs of consecutive ranks (two ranks; the
 *    last rank alone when the size is odd),
 *  - MPI_COMM_WORLD,
 * with 1, 13 and 1000 bytes per block (MPI_BYTE), gather to the first and
 * the last rank, all-gather and all-to-all also with MPI_IN_PLACE. Every
 * received byte is compared with what the native MPI_Allgather, MPI_Gather
 * and MPI_Alltoall return for the same input (this program is not run under
 * the drop-in library, so those are MPI's own); the barrier must not let
 * any rank leave before the last one entered (one rank enters 3 ms late;
 * entry and exit times on one host's monotonic clock).
 *
 * The return code must be KP_SUCCESS wherever some value of the parameter
 * applies, and KP_ERR_UNSUPPORTED (the same on every rank, the receive
 * buffer untouched, kp_last_error() saying why) only where none does. The
 * rules, from the documentation, written here independently of the library:
 *  - k or n beyond what P allows (>= the ranks it counts: P, or the nodes
 *    for smp_*) runs as that count - 1 (at least 1); C > P runs as the
 *    largest value that applies: P for concurrent_exchange, 2 (or P when
 *    P <= 2) for concurrent_exchange_split;
 *  - refused: shm_* on several nodes (single copy also without cross-memory
 *    attach: KPORT_CMA=0, or a kernel that forbids it, which the message
 *    must then name); concurrent_exchange with C <= P where C does not
 *    divide P or P/C is no power of two; concurrent_exchange_split on P no
 *    power of two, or with C <= P other than 2 when P > 2.
 * On success kp_last_algorithm() must name the value that ran, with
 * " (k=8 clamped: P=2)" (or ": 2 nodes") exactly when it was clamped.
 *
 * Output: one line per collective on rank 0 (specs, calls run, refused),
 * then "N passed, M failed"; exit code nonzero on any failure.
 */
#include "kport.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { NCOLL = 4 };
static const char *coll_name[NCOLL] = {"allgather", "barrier", "gather", "alltoall"};
static const char *coll_env[NCOLL] = {"KPORT_ALLGATHER", "KPORT_BARRIER", "KPORT_GATHER", "KPORT_ALLTOALL"};

static int me;
static long passed, failed;

static void check(int good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int good, const char *fmt, ...)
{
    if (good) {
        passed++;
        return;
    }
    if (failed++ < 40) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "[rank %d] FAIL: ", me);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
}

/* ---- what must happen: the documented rules ---------------------------- */

typedef struct spec {
    int coll;
    char text[96];  /* as forced: "bruck:k=8" */
    char name[48];  /* "bruck" */
    char pn[16];    /* "k", "n", "C", "tree", "chunk_kb" or "" (none given) */
    int v;          /* its value */
} spec;

static int pow2(int x) { return x > 0 && (x & (x - 1)) == 0; }
static int is_smp(const char *name) { return !strncmp(name, "smp", 3); }

/* parse "name[:p=v]"; 0 on success */
static int spec_parse(int coll, const char *text, spec *s)
{
    memset(s, 0, sizeof(*s));
    s->coll = coll;
    if (strlen(text) >= sizeof(s->text))
        return -1;
    strcpy(s->text, text);
    size_t n = strcspn(text, ":");
    if (n >= sizeof(s->name))
        return -1;
    memcpy(s->name, text, n);
    if (!text[n])
        return 0;
    const char *eq = strchr(text + n + 1, '=');
    if (!eq || strchr(eq, ',') || (size_t)(eq - text - n - 1) >= sizeof(s->pn))
        return -1; /* one parameter: name=value */
    memcpy(s->pn, text + n + 1, (size_t)(eq - text - n - 1));
    s->v = atoi(eq + 1);
    return 0;
}

/* the value that runs on P ranks in nnodes nodes */
static int runs_as(const spec *s, int P, int nnodes)
{
    if (!strcmp(s->pn, "k") || !strcmp(s->pn, "n")) {
        int count = is_smp(s->name) ? nnodes : P;
        int most = count > 1 ? count - 1 : 1;
        return s->v > most ? most : s->v;
    }
    if (!strcmp(s->pn, "C") && s->v > P)
        return !strcmp(s->name, "concurrent_exchange_split") && P > 2 ? 2 : P;
    return s->v;
}

/* 1: must run; 0: must be refused; 2: single copy, refused only without
 * cross-memory attach (which the refusal must name) */
static int applies(const spec *s, int P, int nnodes)
{
    if (!strncmp(s->name, "shm_", 4)) {
        if (P == 1)
            return 1;
        if (nnodes > 1)
            return 0;
        if (!strcmp(s->name, "shm_single_copy")) {
            const char *cma = getenv("KPORT_CMA");
            return cma && !strcmp(cma, "0") ? 0 : 2;
        }
        return 1;
    }
    if (s->coll == 0 && !strcmp(s->name, "concurrent_exchange")) {
        int C = s->pn[0] ? s->v : 2; /* the documented default */
        return C > P || (P % C == 0 && pow2(P / C));
    }
    if (s->coll == 0 && !strcmp(s->name, "concurrent_exchange_split")) {
        int C = s->pn[0] ? s->v : 2;
        return pow2(P) && (C == 2 || C > P || P <= 2);
    }
    return 1;
}

/* does kp_last_algorithm()'s `last` name what runs? */
static int name_ok(const spec *s, int P, int nnodes, const char *last, char *want, size_t wlen)
{
    if (!s->pn[0]) { /* no parameter given: the name, and whatever parameters follow */
        snprintf(want, wlen, "%s[:...]", s->name);
        size_t n = strlen(s->name);
        return !strncmp(last, s->name, n) && (last[n] == '\0' || last[n] == ':');
    }
    int e = runs_as(s, P, nnodes);
    int n = snprintf(want, wlen, "%s:%s=%d", s->name, s->pn, e);
    if (e != s->v) {
        if (is_smp(s->name))
            snprintf(want + n, wlen - (size_t)n, " (%s=%d clamped: %d node%s)", s->pn, s->v, nnodes,
                     nnodes == 1 ? "" : "s");
        else
            snprintf(want + n, wlen - (size_t)n, " (%s=%d clamped: P=%d)", s->pn, s->v, P);
    }
    return !strcmp(last, want);
}

/* ---- running one collective ---------------------------------------------- */

static unsigned char pattern(int rank, long j, int salt)
{
    return (unsigned char)(rank * 37 + j * 11 + salt * 101 + 7);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct commcase {
    MPI_Comm comm;
    const char *what;
    int P, rank, nnodes;
    int one_host; /* all ranks on one host: the barrier's timing check is valid */
} commcase;

static long ran, refused; /* calls by outcome, this rank */

/* same rc on every rank of the communicator? */
static int same_rc(int rc, MPI_Comm comm)
{
    int in[2] = {rc, -rc}, out[2];
    MPI_Allreduce(in, out, 2, MPI_INT, MPI_MIN, comm);
    return out[0] == -out[1];
}

/* the verdict on one call's return code; 1 when the result must be checked */
static int judge(const spec *s, const commcase *c, int rc, const char *call)
{
    const int want = applies(s, c->P, c->nnodes);
    const char *err = kp_last_error();
    char wname[160];
    check(same_rc(rc, c->comm), "%s on %s: return codes differ between ranks (here %d)", call, c->what, rc);
    if (rc == KP_SUCCESS) {
        ran++;
        check(want != 0, "%s on %s (P=%d, %d nodes): ran, but no value of the parameter applies", call, c->what, c->P,
              c->nnodes);
        const char *last = kp_last_algorithm((enum kp_coll)s->coll);
        check(name_ok(s, c->P, c->nnodes, last ? last : "", wname, sizeof(wname)),
              "%s on %s (P=%d, %d nodes): kp_last_algorithm() is \"%s\", expected \"%s\"", call, c->what, c->P,
              c->nnodes, last ? last : "(null)", wname);
        return 1;
    }
    if (rc == KP_ERR_UNSUPPORTED) {
        refused++;
        check(want == 0 || (want == 2 && err && strstr(err, "cross-memory attach")),
              "%s on %s (P=%d, %d nodes): refused, but must run: %s", call, c->what, c->P, c->nnodes,
              err ? err : "(no message)");
        check(err && *err, "%s on %s: refused without a message", call, c->what);
        return 0;
    }
    check(0, "%s on %s (P=%d): returned %d (%s): %s", call, c->what, c->P, rc, kp_strerror(rc), err ? err : "");
    return 0;
}

static void fill(unsigned char *b, long n, int rank, int salt)
{
    for (long j = 0; j < n; j++)
        b[j] = pattern(rank, j, salt);
}

static long first_diff(const unsigned char *x, const unsigned char *y, long n)
{
    for (long j = 0; j < n; j++)
        if (x[j] != y[j])
            return j;
    return -1;
}

/* every byte of got against the native result ref */
static void compare(const unsigned char *got, const unsigned char *ref, long n, int m, const char *call,
                    const char *where)
{
    long d = first_diff(got, ref, n);
    check(d < 0, "%s on %s: byte %ld (block %ld) is %d, native MPI gives %d", call, where, d, d / (m ? m : 1),
          d >= 0 ? got[d] : 0, d >= 0 ? ref[d] : 0);
}

static int salt;

static void run_allgather(const spec *s, const commcase *c, int m, int inplace)
{
    const int P = c->P, r = c->rank;
    const long tot = (long)P * m;
    unsigned char *snd = calloc((size_t)m + 1, 1), *got = calloc((size_t)tot + 1, 1), *ref = calloc((size_t)tot + 1, 1);
    salt++;
    fill(snd, m, r, salt);
    MPI_Allgather(snd, m, MPI_BYTE, ref, m, MPI_BYTE, c->comm); /* native */
    memset(got, 0xEE, (size_t)tot);
    if (inplace)
        memcpy(got + (long)r * m, snd, (size_t)m);
    unsigned char *before = calloc((size_t)tot + 1, 1);
    memcpy(before, got, (size_t)tot);
    char call[160];
    snprintf(call, sizeof(call), "allgather %s, %d bytes%s", s->text, m, inplace ? ", in place" : "");
    int rc = kp_allgather(inplace ? MPI_IN_PLACE : snd, m, MPI_BYTE, got, m, MPI_BYTE, c->comm);
    if (judge(s, c, rc, call))
        compare(got, ref, tot, m, call, c->what);
    else
        check(first_diff(got, before, tot) < 0, "%s on %s: receive buffer changed by a refused call", call, c->what);
    free(snd);
    free(got);
    free(ref);
    free(before);
}

static void run_gather(const spec *s, const commcase *c, int m, int root)
{
    const int P = c->P, r = c->rank;
    const long tot = (long)P * m;
    unsigned char *snd = calloc((size_t)m + 1, 1), *got = calloc((size_t)tot + 1, 1), *ref = calloc((size_t)tot + 1, 1);
    salt++;
    fill(snd, m, r, salt);
    MPI_Gather(snd, m, MPI_BYTE, ref, m, MPI_BYTE, root, c->comm);
    memset(got, 0xEE, (size_t)tot);
    char call[160];
    snprintf(call, sizeof(call), "gather %s, %d bytes, root %d", s->text, m, root);
    int rc = kp_gather(snd, m, MPI_BYTE, got, m, MPI_BYTE, root, c->comm);
    if (judge(s, c, rc, call) && r == root)
        compare(got, ref, tot, m, call, c->what);
    if (rc != KP_SUCCESS) {
        long j = 0;
        while (j < tot && got[j] == 0xEE)
            j++;
        check(j == tot, "%s on %s: receive buffer changed by a refused call", call, c->what);
    }
    free(snd);
    free(got);
    free(ref);
}

static void run_alltoall(const spec *s, const commcase *c, int m, int inplace)
{
    const int P = c->P, r = c->rank;
    const long tot = (long)P * m;
    unsigned char *snd = calloc((size_t)tot + 1, 1), *got = calloc((size_t)tot + 1, 1), *ref = calloc((size_t)tot + 1, 1);
    salt++;
    fill(snd, tot, r, salt);
    MPI_Alltoall(snd, m, MPI_BYTE, ref, m, MPI_BYTE, c->comm);
    if (inplace)
        memcpy(got, snd, (size_t)tot);
    else
        memset(got, 0xEE, (size_t)tot);
    unsigned char *before = calloc((size_t)tot + 1, 1);
    memcpy(before, got, (size_t)tot);
    char call[160];
    snprintf(call, sizeof(call), "alltoall %s, %d bytes%s", s->text, m, inplace ? ", in place" : "");
    int rc = kp_alltoall(inplace ? MPI_IN_PLACE : snd, m, MPI_BYTE, got, m, MPI_BYTE, c->comm);
    if (judge(s, c, rc, call))
        compare(got, ref, tot, m, call, c->what);
    else
        check(first_diff(got, before, tot) < 0, "%s on %s: receive buffer changed by a refused call", call, c->what);
    free(snd);
    free(got);
    free(ref);
    free(before);
}

static void run_barrier(const spec *s, const commcase *c, int late)
{
    char call[160];
    snprintf(call, sizeof(call), "barrier %s, rank %d late", s->text, late);
    MPI_Barrier(c->comm);
    if (c->rank == late) {
        struct timespec d = {0, 3000000};
        nanosleep(&d, NULL);
    }
    double t_in = now();
    int rc = kp_barrier(c->comm);
    double t_out = now();
    double last_in;
    MPI_Allreduce(&t_in, &last_in, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    if (judge(s, c, rc, call) && c->one_host)
        check(t_out >= last_in, "%s on %s: rank %d left %.1f us before the last rank entered", call, c->what,
              c->rank, 1e6 * (last_in - t_out));
}

static void run_spec(const spec *s, const commcase *cs, int ncs)
{
    static const int sizes[] = {1, 13, 1000};
    for (int i = 0; i < ncs; i++) {
        const commcase *c = &cs[i];
        for (int b = 0; b < 3; b++) {
            const int m = sizes[b];
            switch (s->coll) {
            case 0:
                run_allgather(s, c, m, 0);
                if (b == 1)
                    run_allgather(s, c, m, 1);
                break;
            case 1:
                if (b < 2)
                    run_barrier(s, c, b == 0 ? c->P - 1 : 0);
                break;
            case 2:
                run_gather(s, c, m, 0);
                if (c->P > 1)
                    run_gather(s, c, m, c->P - 1);
                break;
            default:
                run_alltoall(s, c, m, 0);
                if (b == 1)
                    run_alltoall(s, c, m, 1);
                break;
            }
        }
    }
}

/* ---- the communicators ---------------------------------------------------- */

static void comm_case(commcase *c, MPI_Comm comm, const char *what)
{
    c->comm = comm;
    c->what = what;
    MPI_Comm_size(comm, &c->P);
    MPI_Comm_rank(comm, &c->rank);
    c->nnodes = -1;
    int rc = kp_node_info(comm, &c->nnodes, NULL, NULL, NULL);
    check(rc == KP_SUCCESS && c->nnodes >= 1 && c->nnodes <= c->P, "kp_node_info on %s: rc %d, %d nodes", what, rc,
          c->nnodes);
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "", first[MPI_MAX_PROCESSOR_NAME + 1];
    int len;
    MPI_Get_processor_name(host, &len);
    memcpy(first, host, sizeof(first));
    MPI_Bcast(first, (int)sizeof(first), MPI_CHAR, 0, comm);
    int same = strcmp(first, host) == 0, all;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, comm);
    c->one_host = all;
}

/* ---- main ----------------------------------------------------------------- */

static void usage(void)
{
    if (me == 0)
        fprintf(stderr, "usage: test_forced_env [--all] [-t seconds]\n"
                        "  without --all: the algorithms forced by KPORT_ALLGATHER, KPORT_BARRIER,\n"
                        "  KPORT_GATHER, KPORT_ALLTOALL (at least one)\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int all = 0;
    unsigned timeout = 240;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--all"))
            all = 1;
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            timeout = (unsigned)atoi(argv[++i]);
        else {
            usage();
            MPI_Finalize();
            return 2;
        }
    }
    alarm(timeout); /* a hang fails the test instead of blocking it */
    const char *fb = getenv("KPORT_FALLBACK");
    if (fb && *fb && strcmp(fb, "error")) {
        if (me == 0)
            fprintf(stderr, "test_forced_env: runs under the default fallback policy; unset KPORT_FALLBACK\n");
        MPI_Finalize();
        return 2;
    }

    int wsize;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm pairs;
    MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &pairs);
    commcase cs[3];
    comm_case(&cs[0], MPI_COMM_SELF, "MPI_COMM_SELF");
    comm_case(&cs[1], pairs, "a split into pairs");
    comm_case(&cs[2], MPI_COMM_WORLD, "MPI_COMM_WORLD");
    const int ncs = wsize == 1 ? 1 : wsize <= 2 ? 2 : 3; /* skip duplicates of smaller ones */
    if (wsize == 2)
        cs[1] = cs[2]; /* the pair is the world */

    long nspecs[NCOLL] = {0}, ran0[NCOLL] = {0}, ref0[NCOLL] = {0};
    if (!all) {
        int any = 0;
        for (int coll = 0; coll < NCOLL; coll++) {
            const char *e = getenv(coll_env[coll]);
            if (!e || !*e || !strcmp(e, "auto"))
                continue;
            any = 1;
            spec s;
            if (spec_parse(coll, e, &s)) {
                check(0, "%s=\"%s\": this test takes name or name:param=value", coll_env[coll], e);
                continue;
            }
            long r0 = ran, f0 = refused;
            run_spec(&s, cs, ncs);
            nspecs[coll]++;
            ran0[coll] += ran - r0;
            ref0[coll] += refused - f0;
        }
        if (!any) {
            usage();
            MPI_Finalize();
            return 2;
        }
    } else {
        static const char *pnames[] = {"k", "n", "C", "tree", "chunk_kb"};
        for (int coll = 0; coll < NCOLL; coll++) {
            for (int i = 0; i < kp_algorithm_count((enum kp_coll)coll); i++) {
                const char *a = kp_algorithm_name((enum kp_coll)coll, i);
                char text[96];
                const char *pn = "";
                for (int p = 0; p < 5 && !*pn; p++) { /* which parameter does it take? */
                    snprintf(text, sizeof(text), "%s:%s=1", a, pnames[p]);
                    if (kp_set_algorithm((enum kp_coll)coll, text) == KP_SUCCESS)
                        pn = pnames[p];
                }
                for (int v = 1; v <= (*pn ? 8 : 1); v++) {
                    if (*pn)
                        snprintf(text, sizeof(text), "%s:%s=%d", a, pn, v);
                    else
                        snprintf(text, sizeof(text), "%s", a);
                    int rc = kp_set_algorithm((enum kp_coll)coll, text);
                    if (!strcmp(pn, "tree") && v > 2) { /* 1 binomial, 2 direct: nothing else exists */
                        check(rc == KP_ERR_PARAM, "kp_set_algorithm(\"%s\") returned %d, not KP_ERR_PARAM", text, rc);
                        continue;
                    }
                    check(rc == KP_SUCCESS, "kp_set_algorithm(\"%s\") returned %d: %s", text, rc, kp_last_error());
                    spec s;
                    if (rc != KP_SUCCESS || spec_parse(coll, text, &s))
                        continue;
                    long r0 = ran, f0 = refused;
                    run_spec(&s, cs, ncs);
                    nspecs[coll]++;
                    ran0[coll] += ran - r0;
                    ref0[coll] += refused - f0;
                }
            }
            kp_set_algorithm((enum kp_coll)coll, NULL);
        }
    }

    long loc[2] = {passed, failed}, tot[2];
    MPI_Reduce(loc, tot, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        for (int coll = 0; coll < NCOLL; coll++)
            if (nspecs[coll])
                printf("  %-9s %3ld forced specs on communicators of 1..%d ranks: %ld calls ran, %ld refused\n",
                       coll_name[coll], nspecs[coll], wsize, ran0[coll], ref0[coll]);
        printf("%ld passed, %ld failed\n", tot[0], tot[1]);
    }
    MPI_Comm_free(&pairs);
    MPI_Finalize();
    return (me == 0 ? tot[1] : loc[1]) != 0;
}
