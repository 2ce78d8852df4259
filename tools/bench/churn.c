/*
 * kport-bench churn: communicator churn, native beside kport.
 *
 *   mpirun -np P kport-bench churn [--how dup,split,create] [--coll allgather|barrier|gather|alltoall]
 *                                  [-m BYTES] [--calls 0,1,2,8,64] [-i N] [-x N] [-c] [--format json]
 *
 * Programs that create communicators often (a dup per library call, a
 * split per phase) pay whatever a collective library sets up per
 * communicator. One cycle is: MPI_Barrier on a communicator of the bench
 * (untimed), t0, create a communicator, `calls` calls of the collective on
 * it, MPI_Comm_free, t1. "native" cycles call MPI_<Coll>, "kport" cycles
 * kp_<coll> (its default choice). kport sets a communicator up on its first
 * call, paying only for what the call needs (node layout, private
 * duplicate, shared segment), and pools those resources when the
 * communicator is freed, for the next one of the same ranks (see
 * src/core/comm.c): in a loop over the same kind of communicator the set-up
 * is paid once, and the kport cycle's extra time is the state's creation
 * and return. The rows with more calls show when the faster calls pay it
 * back. KPORT_COMM_POOL=0 shows the set-up paid by every communicator.
 *
 * --how (default: all three, in turn):
 *   dup     MPI_Comm_dup(MPI_COMM_WORLD)
 *   split   MPI_Comm_split(MPI_COMM_WORLD, 0, P-1-rank): every rank, order reversed
 *   create  MPI_Comm_create(MPI_COMM_WORLD, group): the world's ranks rotated by
 *           one (rank r is r-1); the group is built once, outside the cycle
 * --coll    the collective (default allgather), -m its size in bytes (per rank;
 *           per rank pair for alltoall; default 8; ignored for barrier); the
 *           gather root is rank 0 of the new communicator
 * --calls   calls per communicator, a comma-separated list (default 0,1,2,8,64;
 *           0: create and free only, the same work for both)
 * -i, -x    timed / warm-up cycles per (how, calls) and variant (default 100, 10)
 *
 * Timing: the local cycle times are reduced with MPI_MAX over ranks after
 * the loop; the report is the median over cycles. Native and kport cycles
 * alternate (which goes first alternates too), so drift hits both alike.
 * The table shows per (how, calls): native and kport medians per cycle,
 * their ratio, and kport's extra time; after each how, an estimate of the
 * pay-back point: kport's extra time at 1 call (its set-up) over what it
 * saves per further call (from the 1-call and the largest rows).
 *
 * -c: before every cycle the send buffer holds the new rank's pattern for
 * that cycle and the receive buffer is poisoned (untimed); after it, the
 * collective's check (see its file) compares every byte of the last
 * call's result, with ranks numbered as in the new communicator, and the
 * return code of every call is checked. Before the cycles, one untimed
 * cycle per how checks that the new communicator numbers ranks as above.
 *
 * --format json: one object per (how, calls, variant): "coll": "churn",
 * "collective", "how", "calls", "variant" (native or kport), "mpi", "P",
 * "hosts", "size", "median_us", "min_us", "avg_us", "max_us",
 * "iterations", "validated", "status", "errors"; kport's also "ratio".
 */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define CH_MAX_CALLS 16
enum { HOW_DUP, HOW_SPLIT, HOW_CREATE, HOW_COUNT };
static const char *const how_names[HOW_COUNT] = {"dup", "split", "create"};

typedef struct churn_opts {
    const kb_coll *coll;
    size_t size;
    int iters, warmup, check, json;
    int hows[HOW_COUNT], nhows;
    int calls[CH_MAX_CALLS], ncalls;
} churn_opts;

static void usage(FILE *f, const void *arg)
{
    (void)arg;
    if (kb_rank != 0)
        return;
    fprintf(f, "Usage: kport-bench churn [--how dup,split,create] [--coll allgather|barrier|gather|alltoall]\n"
               "                         [-m BYTES] [--calls 0,1,2,8,64] [-i N] [-x N] [-c] [--format json]\n"
               "Times cycles of: create a communicator, CALLS calls of the collective, free it;\n"
               "native MPI beside kport (kp_*, default choice), median over cycles of the maximum\n"
               "over ranks. -i / -x: timed / warm-up cycles (default 100 / 10); -m: bytes (default 8);\n"
               "-c: validate every cycle's last result.\n");
}

/* new rank of world rank r under how (and its inverse), P ranks */
static int new_rank(int how, int r, int P)
{
    return how == HOW_SPLIT ? P - 1 - r : how == HOW_CREATE ? (r + P - 1) % P : r;
}

static int create_comm(int how, MPI_Group rotated, int P, int rank, MPI_Comm *out)
{
    switch (how) {
    case HOW_DUP: return MPI_Comm_dup(MPI_COMM_WORLD, out);
    case HOW_SPLIT: return MPI_Comm_split(MPI_COMM_WORLD, 0, P - 1 - rank, out);
    default: return MPI_Comm_create(MPI_COMM_WORLD, rotated, out);
    }
}

static void parse_list(const char *val, churn_opts *o)
{
    char buf[256];
    if (strlen(val) >= sizeof(buf))
        kb_bad_usage(usage, NULL, "--calls list too long: \"%s\"", val);
    strcpy(buf, val);
    o->ncalls = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (o->ncalls == CH_MAX_CALLS)
            kb_bad_usage(usage, NULL, "--calls: at most 16 values (\"%s\")", val);
        if (kb_parse_int(tok, 0, &o->calls[o->ncalls]) || o->calls[o->ncalls] > 1000000)
            kb_bad_usage(usage, NULL, "bad --calls \"%s\" (integers 0..1000000, comma-separated)", val);
        o->ncalls++;
    }
    if (o->ncalls == 0)
        kb_bad_usage(usage, NULL, "empty --calls \"%s\"", val);
}

static void parse_hows(const char *val, churn_opts *o)
{
    char buf[128];
    if (strlen(val) >= sizeof(buf))
        kb_bad_usage(usage, NULL, "--how list too long: \"%s\"", val);
    strcpy(buf, val);
    o->nhows = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int h = -1;
        for (int i = 0; i < HOW_COUNT; i++)
            if (strcmp(tok, how_names[i]) == 0)
                h = i;
        if (h < 0 || o->nhows == HOW_COUNT)
            kb_bad_usage(usage, NULL, "bad --how \"%s\" (dup, split, create, comma-separated)", val);
        o->hows[o->nhows++] = h;
    }
    if (o->nhows == 0)
        kb_bad_usage(usage, NULL, "empty --how \"%s\"", val);
}

static void parse(int argc, char **argv, churn_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->size = 8;
    o->iters = 100;
    o->warmup = 10;
    o->nhows = HOW_COUNT;
    for (int i = 0; i < HOW_COUNT; i++)
        o->hows[i] = i;
    parse_list("0,1,2,8,64", o);
    const char *coll = "allgather";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val;
        if (kb_common_option(argc, argv, &i, usage, NULL, &o->json, &o->check))
            continue;
        if ((val = kb_long_option(argc, argv, &i, "--how", usage, NULL)))
            parse_hows(val, o);
        else if ((val = kb_long_option(argc, argv, &i, "--coll", usage, NULL)))
            coll = val;
        else if ((val = kb_long_option(argc, argv, &i, "--calls", usage, NULL)))
            parse_list(val, o);
        else if (strcmp(a, "-m") == 0 || strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0) {
            if (i + 1 >= argc)
                kb_bad_usage(usage, NULL, "option \"%s\" needs a value", a);
            val = argv[++i];
            if (a[1] == 'm' && kb_parse_size(val, &o->size))
                kb_bad_usage(usage, NULL, "bad -m \"%s\" (bytes)", val);
            if (a[1] == 'i' && kb_parse_int(val, 1, &o->iters))
                kb_bad_usage(usage, NULL, "bad -i \"%s\" (an integer >= 1)", val);
            if (a[1] == 'x' && kb_parse_int(val, 0, &o->warmup))
                kb_bad_usage(usage, NULL, "bad -x \"%s\" (an integer >= 0)", val);
        } else
            kb_bad_usage(usage, NULL, "unknown option \"%s\"", a);
    }
    for (int i = 0; i < kb_ncommands; i++)
        if (kb_commands[i]->coll && strcmp(kb_commands[i]->name, coll) == 0)
            o->coll = kb_commands[i]->coll;
    if (!o->coll)
        kb_bad_usage(usage, NULL, "--coll \"%s\": not a collective of kport-bench", coll);
    if (o->coll->kcoll < 0)
        kb_bad_usage(usage, NULL, "--coll \"%s\": kport lacks it", coll);
    if (o->coll->sizes == KB_SIZELESS)
        o->size = 0;
}

typedef struct churn_result {
    kb_stat t[2]; /* [0] native, [1] kport; seconds per cycle, on rank 0 */
    long long bad;
    int failed;
    char msg[KB_ERR_LEN];
} churn_result;

/* One cycle of variant v (0 native, 1 kport); returns the local time. */
static double cycle(const churn_opts *o, kb_ctx *cx, int how, MPI_Group rotated, int calls, int v, int iter,
                    long long *bad, int *failed, char *msg, MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    cx->native = v == 0;
    cx->label = v == 0 ? "native" : "kport";
    if (o->check && bc->write_send)
        bc->write_send(cx, iter);
    if (o->check && bc->poison_recv)
        bc->poison_recv(cx, iter);
    MPI_Barrier(sync);
    double t0 = MPI_Wtime();
    MPI_Comm c = MPI_COMM_NULL;
    int rc = create_comm(how, rotated, cx->P, kb_rank, &c) == MPI_SUCCESS ? KP_SUCCESS : KP_ERR_MPI;
    cx->comm = c;
    for (int k = 0; k < calls && rc == KP_SUCCESS; k++)
        rc = bc->run(cx);
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    double t1 = MPI_Wtime();
    if (rc != KP_SUCCESS && !*failed) {
        const char *why = v == 0 ? "" : kp_last_error();
        *failed = rc;
        snprintf(msg, KB_ERR_LEN, "%s %s, %d calls: %s%s%s", cx->label, how_names[how], calls, kp_strerror(rc),
                 why && *why ? ": " : "", why ? why : "");
    }
    if (o->check && bc->check && calls > 0)
        *bad += bc->check(cx, iter);
    return t1 - t0;
}

/* One untimed cycle: does the new communicator number ranks as new_rank() says? */
static int probe_numbering(int how, MPI_Group rotated, int P)
{
    MPI_Comm c;
    int r = -1;
    if (create_comm(how, rotated, P, kb_rank, &c) != MPI_SUCCESS)
        return 0;
    MPI_Comm_rank(c, &r);
    MPI_Comm_free(&c);
    int ok = r == new_rank(how, kb_rank, P), all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

static void run_case(const churn_opts *o, kb_ctx *cx, int how, MPI_Group rotated, int calls, double *times[2],
                     double *maxes, churn_result *res, MPI_Comm sync)
{
    memset(res, 0, sizeof(*res));
    for (int c = 0; c < o->warmup + o->iters; c++)
        for (int k = 0; k < 2; k++) {
            int v = (c + k) % 2; /* which variant goes first alternates */
            double t = cycle(o, cx, how, rotated, calls, v, c, &res->bad, &res->failed, res->msg, sync);
            if (c >= o->warmup)
                times[v][c - o->warmup] = t;
        }
    for (int v = 0; v < 2; v++) {
        kb_reduce_max(times[v], maxes, o->iters, sync);
        if (kb_rank == 0)
            res->t[v] = kb_stats(maxes, o->iters);
    }
    int lf = res->failed != 0, gf;
    long long gbad;
    MPI_Allreduce(&lf, &gf, 1, MPI_INT, MPI_MAX, sync);
    MPI_Allreduce(&res->bad, &gbad, 1, MPI_LONG_LONG, MPI_SUM, sync);
    res->bad = gbad;
    if (gf)
        kb_share_message(res->msg, lf, sync);
    res->failed = gf;
}

static void json_record(const churn_opts *o, const char *mpi, int P, int hosts, int how, int calls, int v,
                        const churn_result *r)
{
    const kb_stat *t = &r->t[v];
    printf("{\"coll\":\"churn\",\"collective\":");
    kb_json_string(stdout, o->coll->name);
    printf(",\"how\":\"%s\",\"calls\":%d,\"variant\":\"%s\",\"mpi\":", how_names[how], calls,
           v == 0 ? "native" : "kport");
    kb_json_string(stdout, mpi);
    printf(",\"P\":%d,\"hosts\":%d,\"size\":%zu", P, hosts, o->size);
    const char *status = r->failed ? "error" : r->bad ? "invalid" : "ok";
    if (r->failed)
        printf(",\"median_us\":null,\"min_us\":null,\"avg_us\":null,\"max_us\":null,\"iterations\":0");
    else
        printf(",\"median_us\":%.3f,\"min_us\":%.3f,\"avg_us\":%.3f,\"max_us\":%.3f,\"iterations\":%d",
               t->median * 1e6, t->min * 1e6, t->avg * 1e6, t->max * 1e6, o->iters);
    if (v == 1 && !r->failed && r->t[0].median > 0)
        printf(",\"ratio\":%.3f", r->t[1].median / r->t[0].median);
    printf(",\"validated\":%s,\"status\":\"%s\"", o->check && !r->failed && !r->bad ? "true" : "false", status);
    if (o->check && !r->failed)
        printf(",\"errors\":%lld", r->bad);
    if (r->failed) {
        printf(",\"error\":");
        kb_json_string(stdout, r->msg);
    }
    printf("}\n");
}

/* kport's extra time at 1 call over its saving per further call, from the
 * 1-call row and the row with the most calls; printed after each how. */
static void payback(const churn_opts *o, int how, const churn_result *res)
{
    int i1 = -1, iL = -1;
    for (int i = 0; i < o->ncalls; i++) {
        if (o->calls[i] == 1)
            i1 = i;
        if (o->calls[i] > 1 && (iL < 0 || o->calls[i] > o->calls[iL]))
            iL = i;
    }
    if (i1 < 0 || iL < 0 || res[i1].failed || res[iL].failed)
        return;
    double extra = res[i1].t[1].median - res[i1].t[0].median;
    double saved = ((res[iL].t[0].median - res[i1].t[0].median) - (res[iL].t[1].median - res[i1].t[1].median)) /
                   (o->calls[iL] - 1);
    printf("# %s: kport's extra time at 1 call %.2f us; it saves %.3f us per further call (1 vs %d calls)",
           how_names[how], extra * 1e6, saved * 1e6, o->calls[iL]);
    if (extra <= 0)
        printf(": no set-up to pay back\n");
    else if (saved > 0)
        printf(": pays back after about %.0f calls\n", 1 + extra / saved);
    else
        printf(": never pays back at this size\n");
}

static int churn_main(int argc, char **argv)
{
    churn_opts o;
    parse(argc, argv, &o);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    size_t sbytes = 0, rbytes = 0;
    if (o.coll->buffers && o.coll->buffers(o.size, P, &sbytes, &rbytes))
        kb_bad_usage(usage, NULL, "-m: size too large for %s at this P", o.coll->native_call);

    kb_ctx cx;
    memset(&cx, 0, sizeof(cx));
    cx.P = P;
    cx.size = o.size;
    cx.root = 0;
    cx.sbuf_len = sbytes;
    cx.rbuf_len = rbytes;
    cx.sbuf = calloc(1, sbytes ? sbytes : 1);
    cx.rbuf = calloc(1, rbytes + KB_GUARD);
    double *times[2] = {malloc((size_t)o.iters * sizeof(double)), malloc((size_t)o.iters * sizeof(double))};
    double *maxes = malloc((size_t)o.iters * sizeof(double));
    churn_result *res = calloc((size_t)o.ncalls, sizeof(churn_result));
    int ok = cx.sbuf && cx.rbuf && times[0] && times[1] && maxes && res, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!gok) {
        if (kb_rank == 0)
            fprintf(stderr, "kport-bench: churn: cannot allocate buffers for %zu bytes (P = %d)\n", o.size, P);
        return 1;
    }
    kp_set_algorithm((enum kp_coll)o.coll->kcoll, NULL); /* kport's default choice */

    MPI_Comm sync;
    MPI_Comm_dup(MPI_COMM_WORLD, &sync);
    MPI_Group world, rotated;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int *order = malloc((size_t)P * sizeof(int));
    for (int i = 0; order && i < P; i++)
        order[i] = (i + 1) % P; /* new rank i is world rank i+1 */
    MPI_Group_incl(world, P, order, &rotated);
    free(order);

    char mpi[256], knodes[256];
    int hosts, rmin, rmax;
    kb_mpi_library_name(mpi, sizeof(mpi));
    kb_node_layout(MPI_COMM_WORLD, &hosts, &rmin, &rmax);
    kb_kport_layout(MPI_COMM_WORLD, knodes, sizeof(knodes));
    if (kb_rank == 0 && !o.json) {
        printf("# kport-bench churn\n# MPI: %s\n# kport: %d.%d.%d\n", mpi, KPORT_VERSION_MAJOR, KPORT_VERSION_MINOR,
               KPORT_VERSION_PATCH);
        if (rmin == rmax)
            printf("# P = %d, node layout: %d host%s, %d rank%s per host\n", P, hosts, hosts == 1 ? "" : "s", rmin,
                   rmin == 1 ? "" : "s");
        else
            printf("# P = %d, node layout: %d hosts, %d to %d ranks per host\n", P, hosts, rmin, rmax);
        printf("# kport node layout: %s\n", knodes);
        printf("# Collective: %s (native %s, kport kp_%s, default choice), size %zu: %s\n", o.coll->name,
               o.coll->native_call, o.coll->name, o.size, o.coll->size_desc);
        printf("# Cycles: %d timed, %d warm-up, per (how, calls) and variant; validation: %s\n", o.iters,
               o.warmup, o.check ? "on" : "off");
        printf("# One cycle: create (how), CALLS calls, MPI_Comm_free; time per cycle in us: median over cycles\n"
               "#   of the maximum over ranks; native and kport cycles alternate\n");
        printf("# how: dup = MPI_Comm_dup(WORLD); split = MPI_Comm_split(WORLD, 0, P-1-rank);\n"
               "#   create = MPI_Comm_create(WORLD, world ranks rotated by one)\n");
        printf("%-8s%8s%14s%14s%14s%16s\n", "# how", "calls", "native(us)", "kport(us)", "kport/native",
               "kport extra(us)");
        fflush(stdout);
    }

    int failures = 0;
    for (int hi = 0; hi < o.nhows; hi++) {
        int how = o.hows[hi];
        cx.rank = new_rank(how, kb_rank, P);
        if (!probe_numbering(how, rotated, P)) {
            if (kb_rank == 0)
                fprintf(stderr, "kport-bench: churn: %s numbers ranks differently than expected\n",
                        how_names[how]);
            failures++;
            continue;
        }
        for (int ci = 0; ci < o.ncalls; ci++) {
            churn_result *r = &res[ci];
            run_case(&o, &cx, how, rotated, o.calls[ci], times, maxes, r, sync);
            if (r->failed || r->bad) {
                failures++;
                if (kb_rank == 0)
                    fprintf(stderr, "kport-bench: churn %s, %d calls: %s\n", how_names[how], o.calls[ci],
                            r->failed ? r->msg : "VALIDATION FAILED (wrong bytes)");
            }
            if (kb_rank != 0)
                continue;
            if (o.json) {
                json_record(&o, mpi, P, hosts, how, o.calls[ci], 0, r);
                json_record(&o, mpi, P, hosts, how, o.calls[ci], 1, r);
            } else if (r->failed) {
                printf("%-8s%8d%14s  %s\n", how_names[how], o.calls[ci], "ERROR", r->msg);
            } else {
                printf("%-8s%8d%14.2f%14.2f%13.2fx%16.2f%s\n", how_names[how], o.calls[ci], r->t[0].median * 1e6,
                       r->t[1].median * 1e6, r->t[0].median > 0 ? r->t[1].median / r->t[0].median : 0.0,
                       (r->t[1].median - r->t[0].median) * 1e6, r->bad ? "  INVALID" : "");
            }
            fflush(stdout);
        }
        if (kb_rank == 0 && !o.json)
            payback(&o, how, res);
    }
    if (kb_rank == 0 && !o.json && o.check)
        printf("# Validation: %s\n", failures ? "FAILED" : "passed");

    MPI_Group_free(&rotated);
    MPI_Group_free(&world);
    MPI_Comm_free(&sync);
    free(res);
    free(maxes);
    free(times[0]);
    free(times[1]);
    free(cx.sbuf);
    free(cx.rbuf);
    return failures ? 1 : 0;
}

const kb_command kb_cmd_churn = {"churn", "communicator churn: create, call, free (dup / split / create)", NULL,
                                 churn_main};
