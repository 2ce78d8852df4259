/*
 * kport-bench's collective runner: native MPI collectives and every kport
 * algorithm side by side, measured in the same run. Serves every
 * subcommand that is a kb_coll (allgather.c, barrier.c, gather.c,
 * alltoall.c; their headers say what size and -c mean for each).
 *
 *   mpirun -np P kport-bench allgather|barrier|gather|alltoall
 *                            [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c] [-r ROOT]
 *                            [-a native,bruck:k=3,...] [--b2b N] [--rounds R] [--format json]
 *                            [--predict PARAMS.json] [--transports p2p,rma,...]
 *
 * Options and text output follow the OSU Micro-Benchmarks (-m, -i, -x, -f,
 * -c; "# Size  Avg Latency(us) ..."); --format json prints one JSON object
 * per line per (algorithm, size) for scripts/bench_report.py.
 *
 * Timing (ReproMPI's lesson: averages over ranks hide stragglers): every
 * iteration is a start line, t0, one call, t1. The start line (probe.h,
 * kb_sync) is a barrier of flags in a shared segment where all ranks share
 * a host, the same code in every build, and MPI_Barrier on a private
 * communicator elsewhere or with KPORT_BENCH_SYNC=mpi: MPI_Barrier leaves
 * the ranks one library latency apart and every call timed from it pays
 * that (8 B all-to-all, P = 2, the same kport code: 0.21 us from Open MPI's
 * barrier, 0.26-0.27 from MPICH's; 0.46-0.47 from the flags in both, a
 * slower phase of the machine), so two builds' times could not be set
 * side by side.
 * The per-iteration local times are reduced with MPI_MAX over ranks after
 * the loop (one MPI_Reduce per algorithm and size), so each iteration's
 * latency is that of the slowest rank; the report is the median over
 * iterations (-f adds min / avg / max over iterations). For fairness the
 * algorithms take turns (--rounds R, default 10): round k runs, size after
 * size, every algorithm's share of the iterations (-i / R) after its own
 * warm-up (all of -x in the first round, a tenth of it, at least 2, in the
 * others), each size's turn starting with the k-th algorithm (so each column
 * follows every other one in turn: in a fixed order, auto after single copy
 * measured 1.1-1.2x the same algorithm forced after direct, gather 256 KiB).
 * Run one after the other instead (--rounds 1), an algorithm's
 * median moved with its place in the list: the first kport algorithm
 * after the native one measured 1.15-1.2x what the same algorithm forced
 * again later in the list did (gather 128 KiB, P = 2: 8.5 against 7.1 us,
 * all 300 iterations), and a slow phase of the virtual machine fell on
 * whichever algorithm was running; in turns, auto and the algorithm it
 * runs measure alike (7.86 against 7.86 us).
 *
 * Back-to-back (--b2b N): every iteration above describes an isolated
 * call (barrier, then one call on a quiet machine). Applications call
 * collectives back to back, on data they have just written. With --b2b N
 * one batch is: MPI_Barrier, t0, N times (write the send buffer with that
 * call's pattern, one call), t1. The rewrite is part of the picture (the
 * data is hot and dirty in the writer's cache when the call starts, as in
 * an application) but not of the cost: it is timed alone the same way
 * (barrier, t0, N rewrites, t1) once per size, and
 *     per call = (median over batches of max over ranks of the batch time
 *                 - the same for the rewrites alone) / N
 * (-f: min / avg / max likewise). -i and -x still count calls: ceil(-i / N)
 * timed batches after ceil(-x / N) warm-up batches, after one untimed call
 * that decides n/a. Text output adds a "rewrite" column (the subtracted
 * time per call); JSON lines carry "mode": "b2b", "calls_per_batch",
 * "rewrite_us" ("iterations" counts batches), isolated runs "mode":
 * "isolated". With -c the last call of every batch is checked (its pattern
 * is unique to it, so a stale result from an earlier call shows).
 *
 * Algorithm lists (-a): specifications separated by ';' or ','; after a
 * ',' a NAME=VALUE token without ':' is one more parameter of the
 * specification before it ("bruck:k=2,transport=rma", "ring,transport=rma"
 * = "ring:transport=rma"), so old lists keep their meaning; ';' always
 * starts a new one ("bruck:k=2,transport=rma;ring").
 *
 * Transports (--transports LIST, e.g. p2p,rma or "p2p;rma:rails=2,stripe_kb=16"):
 * every kport algorithm of -a (or of the default list) that names no
 * transport of its own runs once per transport, the variants side by side
 * (interleaved as all algorithms are); native, auto and memcpy run once.
 * Text columns are named ALGORITHM@p2p, ALGORITHM@rma, ALGORITHM@rma/R/S
 * (R rails, stripes above S KiB); JSON records carry "transport" (null for
 * native and memcpy) and, over rma, "rails" and "stripe_kb"; "algorithm"
 * is kp_last_algorithm's name, which names the rma transport.
 *
 * kport algorithms are forced with kp_set_algorithm (no fallback); one
 * that refuses this P or size (KP_ERR_UNSUPPORTED) is reported as
 * "n/a: <reason>" and skipped; it is not a failure. "auto" is kport's
 * default choice; "memcpy" is a reference column: every rank copies as
 * many bytes as its receive buffer holds (P*size) from a buffer of its own.
 * "sendrecv" (named in -a, or added by --sendrecv) is another: every rank
 * exchanges size bytes with rank ^ 1 (MPI_Irecv, MPI_Isend, MPI_Waitall;
 * a rank without that partner, the last of an odd P, only takes part in
 * the timing), the exchange loggp's parameter X fits, measured in the
 * same run.
 *
 * Validation (-c): every iteration's send buffer is written with the
 * call's pattern and the receive buffer poisoned before the barrier, and
 * the collective's check runs after t1 (untimed); see each collective's
 * header for what it compares. Exit status 1 on any mismatch or error.
 *
 * Prediction (--predict FILE, a machine parameter file, docs/PARAMETERS.md):
 * rank 0 computes the cost model's time (src/model/model.h) of every kport
 * row that ran, for P ranks on the node layout kport itself uses on the
 * communicator (kp_node_info on every rank, gathered; cross-memory attach
 * assumed available unless KPORT_CMA=0: a single-copy row that ran proves
 * it), the forced algorithm as given (the model clamps its parameters as
 * kport does) and, for "auto", the algorithm kport ran at that size
 * (kp_last_algorithm). Text output adds a block after the table: per
 * algorithm and size the measured median, the prediction and their ratio
 * (predicted / measured); JSON records gain "predicted_us" and
 * "predicted_hockney_us" (null for native MPI, memcpy, n/a and failed
 * rows). The prediction is of an isolated call, also under --b2b.
 */
#include "harness.h"
#include "probe.h"

#include "algo/algo.h"
#include "model/model.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KB_LARGE_MSG 65536 /* above this: fewer iterations (OSU's "large") */
#define KB_DEF_ITERS 1000
#define KB_DEF_ITERS_LARGE 100
#define KB_DEF_WARMUP 100
#define KB_DEF_WARMUP_LARGE 10
#define KB_DEF_ROUNDS 10
#define KB_DEF_MIN 1
#define KB_DEF_MAX 1048576
#define KB_MAX_SIZES 80
#define KB_MAX_TRANSPORTS 8

/* ------------------------------------------------------------------------- */
/* Options                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct alg_entry {
    char spec[KB_NAME_LEN];  /* as given to -a (or the registry name) */
    char label[KB_NAME_LEN]; /* column header: what ran (kp_last_algorithm) */
    int native;
    int is_auto;
    int is_memcpy;           /* reference: one memcpy of the receive buffer's bytes */
    int is_sendrecv;         /* reference: one exchange of size bytes with rank ^ 1 (Irecv, Isend, Waitall) */
    int is_ref;              /* either reference: not an MPI collective, not kport */
    int tagged;              /* --transports: the column name carries the transport */
    char na_msg[KB_ERR_LEN]; /* first refusal */
    int na_noted;            /* refusal printed in the header */
} alg_entry;

typedef struct options {
    const kb_coll *coll;
    size_t min_size, max_size;
    int iters, iters_large, warmup, warmup_large;
    int full, check, json;
    int b2b;            /* --b2b N: calls per back-to-back batch; 0: isolated calls */
    int rounds;         /* --rounds R: the sizes and algorithms take turns, R rounds */
    int root, root_set; /* -r (gather) */
    int nalgs, cap;
    alg_entry *algs;
    char transports[KB_MAX_TRANSPORTS][KB_NAME_LEN]; /* --transports: "" (p2p) or "transport=rma,..." */
    int ntransports;
    const char *predict; /* --predict FILE */
    kp_machine machine;  /* its parameters (when predict) */
} options;

static void usage(FILE *f, const void *arg)
{
    const kb_coll *coll = arg;
    if (kb_rank != 0)
        return;
    fprintf(f,
            "Usage: kport-bench COLLECTIVE [options]\n"
            "Measures the native MPI collective and every kport algorithm side by side.\n"
            "\n"
            "Collectives:");
    for (int i = 0; i < kb_ncommands; i++)
        if (kb_commands[i]->coll)
            fprintf(f, " %s", kb_commands[i]->name);
    fprintf(f,
            "\n\nOptions (OSU-compatible where OSU has them):\n"
            "  -m [MIN:]MAX  message sizes in bytes, MIN, 2*MIN, ... up to MAX (default %d:%d;\n"
            "                MIN may be 0; K, M, G suffixes are binary multiples). Per rank for\n"
            "                allgather and gather, per rank pair for alltoall; barrier ignores -m\n"
            "  -i N          timed iterations per size (default %d, %d above %d bytes)\n"
            "  -x N          warmup iterations per size (default %d, %d above %d bytes)\n"
            "  -f            full statistics: per-algorithm blocks with median, avg, min, max\n"
            "  -c            validate every byte of every iteration's result; exit 1 on a mismatch\n"
            "                (barrier: an untimed test that no rank leaves before all entered)\n"
            "  -r ROOT       root rank of gather (default 0)\n"
            "  -a LIST       algorithms, separated by ';' or ',': native, auto, NAME[:k=K,C=C] ...\n"
            "                (default: native and every registered kport algorithm); after ',' a\n"
            "                NAME=VALUE without ':' is a parameter of the previous one\n"
            "                (bruck:k=2,transport=rma;ring,transport=rma)\n"
            "  --transports L  every kport algorithm once per transport of L (p2p, rma, rma:rails=R,\n"
            "                stripe_kb=S; separated like -a), side by side; columns NAME@p2p, NAME@rma\n"
            "  --b2b N       back-to-back: time batches of N calls, the send buffer rewritten with\n"
            "                the call's data before each call (its cost measured alone and\n"
            "                subtracted); -i / -x then count calls, ceil(-i / N) batches\n"
            "  --rounds R    the sizes and, in each, the algorithms take turns in R rounds, each\n"
            "                turn with its own warm-up (default %d; 1: each algorithm's iterations\n"
            "                in one block)\n"
            "  --sendrecv    add the reference column sendrecv (also a name for -a): every rank exchanges\n"
            "                size bytes with rank ^ 1 (Irecv, Isend, Waitall), loggp's exchange, in this run\n"
            "  --format F    text (default) or json (one JSON object per line per algorithm and size)\n"
            "  --predict F   beside every kport median, the cost model's prediction from the machine\n"
            "                parameter file F (kport-bench loggp writes it) and predicted / measured\n"
            "  -h, --help    this help\n"
            "\n"
            "Latency of one iteration (batch) is the maximum over ranks, from a start line (a\n"
            "barrier of shared-memory flags when all ranks share a host, the same in every MPI\n"
            "build; MPI_Barrier across hosts or with KPORT_BENCH_SYNC=mpi); the table shows the\n"
            "median over iterations (batches, per call), in microseconds.\n",
            KB_DEF_MIN, KB_DEF_MAX, KB_DEF_ITERS, KB_DEF_ITERS_LARGE, KB_LARGE_MSG, KB_DEF_WARMUP,
            KB_DEF_WARMUP_LARGE, KB_LARGE_MSG, KB_DEF_ROUNDS);
    for (int c = 0; c < kb_ncommands; c++) {
        const kb_coll *bc = coll ? coll : kb_commands[c]->coll;
        if (bc && bc->kcoll >= 0) {
            int n = kp_algorithm_count((enum kp_coll)bc->kcoll);
            fprintf(f, "kport algorithms for %s:", bc->name);
            for (int i = 0; i < n; i++) {
                const char *nm = kp_algorithm_name((enum kp_coll)bc->kcoll, i);
                fprintf(f, " %s", nm ? nm : "?");
            }
            fprintf(f, "\n");
        }
        if (coll)
            break;
    }
}

static _Noreturn void bad_usage(const options *o, const char *fmt, const char *arg)
{
    kb_bad_usage(usage, o ? o->coll : NULL, fmt, arg);
}

static void add_alg(options *o, const char *spec)
{
    if (strlen(spec) >= KB_NAME_LEN)
        bad_usage(o, "algorithm specification too long: \"%s\"", spec);
    if (o->nalgs == o->cap) {
        int cap = o->cap ? 2 * o->cap : 16;
        alg_entry *a = realloc(o->algs, (size_t)cap * sizeof(*a));
        if (!a)
            bad_usage(o, "out of memory%s", "");
        o->algs = a;
        o->cap = cap;
    }
    alg_entry *a = &o->algs[o->nalgs++];
    memset(a, 0, sizeof(*a));
    strcpy(a->spec, spec);
    strcpy(a->label, spec);
    a->native = strcmp(spec, "native") == 0;
    a->is_auto = strcmp(spec, "auto") == 0;
    a->is_memcpy = strcmp(spec, "memcpy") == 0;
    a->is_sendrecv = strcmp(spec, "sendrecv") == 0;
    a->is_ref = a->is_memcpy || a->is_sendrecv;
}

/* "-a native,bruck:k=3,C=2,ring;direct,transport=rma": specifications
 * separated by ';' or ','; after a ',' a token holding '=' but no ':' is
 * one more parameter of the specification before it (joined with ':' when
 * that has none yet). what: "-a" or "--transports"; add(o, spec) takes
 * each specification. */
static void parse_spec_list(options *o, const char *what, const char *list, void (*add)(options *, const char *))
{
    char buf[4096], spec[KB_NAME_LEN * 2] = "";
    if (strlen(list) >= sizeof(buf))
        bad_usage(o, "%s list too long", what);
    strcpy(buf, list);
    char *p = buf;
    for (;;) {
        const size_t n = strcspn(p, ",;");
        const char sep = p[n];
        p[n] = '\0';
        if (*p == '\0') {
            char msg[KB_ERR_LEN];
            snprintf(msg, sizeof msg, "empty algorithm name in %s \"%.400s\"", what, list);
            bad_usage(o, "%s", msg);
        }
        if (strchr(p, '=') && !strchr(p, ':') && spec[0]) {
            /* a parameter of the previous specification */
            if (strlen(spec) + strlen(p) + 2 > sizeof(spec))
                bad_usage(o, "specification too long in \"%s\"", list);
            strcat(spec, strchr(spec, ':') ? "," : ":");
            strcat(spec, p);
        } else if (strchr(p, '=') && !strchr(p, ':')) {
            char msg[KB_ERR_LEN];
            snprintf(msg, sizeof msg, "parameter \"%.200s\" in %s does not follow an algorithm name", p, what);
            bad_usage(o, "%s", msg);
        } else {
            if (spec[0])
                add(o, spec);
            if (strlen(p) >= sizeof(spec))
                bad_usage(o, "specification too long: \"%s\"", p);
            strcpy(spec, p);
        }
        if (!sep)
            break;
        if (sep == ';') { /* the next token starts a specification */
            if (spec[0])
                add(o, spec);
            spec[0] = '\0';
        }
        p += n + 1;
    }
    if (spec[0])
        add(o, spec);
}

/* --transports: "p2p", "rma" or "rma:rails=R,stripe_kb=S" */
static void add_transport(options *o, const char *spec)
{
    if (o->ntransports == KB_MAX_TRANSPORTS)
        bad_usage(o, "--transports: more than %s transports", "8");
    char *t = o->transports[o->ntransports];
    if (strcmp(spec, "p2p") == 0)
        t[0] = '\0';
    else if (strcmp(spec, "rma") == 0)
        snprintf(t, KB_NAME_LEN, "transport=rma");
    else if (strncmp(spec, "rma:", 4) == 0 && strlen(spec) < KB_NAME_LEN - 16)
        snprintf(t, KB_NAME_LEN, "transport=rma,%s", spec + 4);
    else
        bad_usage(o, "--transports: unknown transport \"%s\" (p2p, rma or rma:rails=R,stripe_kb=S)", spec);
    for (int i = 0; i < o->ntransports; i++)
        if (strcmp(o->transports[i], t) == 0)
            bad_usage(o, "--transports: \"%s\" given twice", spec);
    o->ntransports++;
}

/* --transports: every kport algorithm that names no transport, once per
 * transport (adjacent, so they are interleaved like all columns). */
static void expand_transports(options *o)
{
    if (o->ntransports == 0)
        return;
    const int n = o->nalgs;
    alg_entry *old = o->algs;
    o->algs = NULL;
    o->nalgs = o->cap = 0;
    for (int i = 0; i < n; i++) {
        const alg_entry *a = &old[i];
        if (a->native || a->is_auto || a->is_ref || strstr(a->spec, "transport=")) {
            add_alg(o, a->spec);
            continue;
        }
        for (int t = 0; t < o->ntransports; t++) {
            char spec[KB_NAME_LEN * 2];
            const char *tr = o->transports[t];
            snprintf(spec, sizeof spec, "%s%s%s", a->spec, !tr[0] ? "" : strchr(a->spec, ':') ? "," : ":", tr);
            add_alg(o, spec);
            o->algs[o->nalgs - 1].tagged = 1;
        }
    }
    free(old);
}

/* The transport of a kport name or specification: 1 and *rails, *stripe_kb
 * for rma (defaults where it does not say), 0 for point-to-point. */
static int rma_of(const char *name, int *rails, int *stripe_kb)
{
    const char *t = strstr(name, "transport=rma");
    *rails = 1;
    *stripe_kb = 64;
    if (!t)
        return 0;
    const char *r = strstr(t, "rails="), *k = strstr(t, "stripe_kb=");
    if (r)
        *rails = atoi(r + 6);
    if (k)
        *stripe_kb = atoi(k + 10);
    return 1;
}

/* Text column name: the label, and under --transports its transport as
 * "@p2p", "@rma" or "@rma/R/S" in place of the transport's parameters
 * ("bruck:k=1@rma (k=2 clamped: P=2)"). */
static void col_name(const alg_entry *a, char *out, size_t len)
{
    if (!a->tagged) {
        snprintf(out, len, "%s", a->label);
        return;
    }
    int rails, skb;
    const int rma = rma_of(a->label, &rails, &skb) || rma_of(a->spec, &rails, &skb);
    char tag[48];
    if (!rma)
        snprintf(tag, sizeof tag, "@p2p");
    else if (rails == 1)
        snprintf(tag, sizeof tag, "@rma");
    else
        snprintf(tag, sizeof tag, "@rma/%d/%d", rails, skb);
    const char *t = strstr(a->label, "transport=");
    size_t head, tail;
    if (t) { /* drop "[,:]transport=...,stripe_kb=S" up to a space */
        head = (size_t)(t - a->label);
        if (head > 0 && (a->label[head - 1] == ',' || a->label[head - 1] == ':'))
            head--;
        tail = (size_t)(t - a->label) + strcspn(t, " ");
    } else { /* before " (note)" */
        const char *sp = strchr(a->label, ' ');
        head = tail = sp ? (size_t)(sp - a->label) : strlen(a->label);
    }
    snprintf(out, len, "%.*s%s%s", (int)head, a->label, tag, a->label + tail);
}

static void parse_options(const kb_coll *coll, int argc, char **argv, options *o)
{
    memset(o, 0, sizeof(*o));
    o->coll = coll;
    o->min_size = KB_DEF_MIN;
    o->max_size = KB_DEF_MAX;
    o->iters = KB_DEF_ITERS;
    o->iters_large = KB_DEF_ITERS_LARGE;
    o->warmup = KB_DEF_WARMUP;
    o->warmup_large = KB_DEF_WARMUP_LARGE;
    o->rounds = KB_DEF_ROUNDS;
    const char *alist[64];
    int nalist = 0, sendrecv = 0;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout, coll);
            MPI_Finalize();
            exit(0);
        }
    }
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        char opt = 0;
        if ((val = kb_long_option(argc, argv, &i, "--format", usage, coll))) {
            if (strcmp(val, "json") == 0)
                o->json = 1;
            else if (strcmp(val, "text") == 0)
                o->json = 0;
            else
                bad_usage(o, "unknown --format \"%s\" (text or json)", val);
            continue;
        }
        if ((val = kb_long_option(argc, argv, &i, "--predict", usage, coll))) {
            char err[KB_ERR_LEN];
            if (kp_params_load(val, &o->machine, err, sizeof err) != KP_SUCCESS)
                bad_usage(o, "--predict: %s", err);
            o->predict = val;
            continue;
        }
        if ((val = kb_long_option(argc, argv, &i, "--transports", usage, coll))) {
            o->ntransports = 0;
            parse_spec_list(o, "--transports", val, add_transport);
            continue;
        }
        if ((val = kb_long_option(argc, argv, &i, "--b2b", usage, coll))) {
            if (kb_parse_int(val, 1, &o->b2b))
                bad_usage(o, "bad --b2b \"%s\" (calls per batch, an integer >= 1)", val);
            continue;
        }
        if (strcmp(a, "--sendrecv") == 0) {
            sendrecv = 1;
            continue;
        }
        if ((val = kb_long_option(argc, argv, &i, "--rounds", usage, coll))) {
            if (kb_parse_int(val, 1, &o->rounds) || o->rounds > 1000)
                bad_usage(o, "bad --rounds \"%s\" (an integer 1..1000)", val);
            continue;
        }
        if (a[0] != '-' || a[1] == '\0' || a[1] == '-')
            bad_usage(o, "unexpected argument \"%s\"", a);
        /* getopt-style: flags may be bundled (-fc), a value may be attached (-i100, -fm1:64). */
        const char *p = a + 1;
        while (*p == 'f' || *p == 'c') {
            if (*p == 'f')
                o->full = 1;
            else
                o->check = 1;
            p++;
        }
        if (*p == '\0')
            continue;
        opt = *p;
        if (opt != 'm' && opt != 'i' && opt != 'x' && opt != 'a' && opt != 'r')
            bad_usage(o, "unknown option \"%s\"", a);
        if (p[1] != '\0')
            val = p + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            bad_usage(o, "option \"%s\" needs a value", a);

        switch (opt) {
        case 'm': {
            const char *colon = strchr(val, ':');
            size_t lo = KB_DEF_MIN, hi = KB_DEF_MAX;
            if (colon) {
                char minpart[64];
                size_t ml = (size_t)(colon - val);
                if (ml >= sizeof(minpart))
                    bad_usage(o, "bad -m \"%s\"", val);
                memcpy(minpart, val, ml);
                minpart[ml] = '\0';
                if (ml > 0 && kb_parse_size(minpart, &lo))
                    bad_usage(o, "bad -m minimum in \"%s\"", val);
                if (colon[1] != '\0' && kb_parse_size(colon + 1, &hi))
                    bad_usage(o, "bad -m maximum in \"%s\"", val);
            } else if (kb_parse_size(val, &hi)) {
                bad_usage(o, "bad -m \"%s\" (expected [MIN:]MAX in bytes)", val);
            } else if (hi < lo) {
                lo = hi; /* "-m 0": only size 0 */
            }
            if (lo > hi)
                bad_usage(o, "-m \"%s\": MIN is larger than MAX", val);
            o->min_size = lo;
            o->max_size = hi;
            break;
        }
        case 'r':
            if (!coll->rooted)
                bad_usage(o, "-r: %s has no root", coll->name);
            if (kb_parse_int(val, 0, &o->root))
                bad_usage(o, "bad -r \"%s\" (a rank >= 0)", val);
            o->root_set = 1;
            break;
        case 'i':
            if (kb_parse_int(val, 1, &o->iters))
                bad_usage(o, "bad -i \"%s\" (an integer >= 1)", val);
            o->iters_large = o->iters;
            break;
        case 'x':
            if (kb_parse_int(val, 0, &o->warmup))
                bad_usage(o, "bad -x \"%s\" (an integer >= 0)", val);
            o->warmup_large = o->warmup;
            break;
        case 'a':
            if (nalist == (int)(sizeof(alist) / sizeof(alist[0])))
                bad_usage(o, "too many -a options%s", "");
            alist[nalist++] = val;
            break;
        }
    }

    if (o->root_set) {
        int P;
        MPI_Comm_size(MPI_COMM_WORLD, &P);
        if (o->root >= P) {
            char v[32];
            snprintf(v, sizeof(v), "%d", o->root);
            bad_usage(o, "-r %s: not a rank (P is smaller)", v);
        }
    }
    if (coll->sizes == KB_SIZELESS)
        o->min_size = o->max_size = 0;

    if (nalist > 0) {
        for (int i = 0; i < nalist; i++)
            parse_spec_list(o, "-a", alist[i], add_alg);
    } else {
        add_alg(o, "native");
        if (coll->kcoll >= 0) {
            int n = kp_algorithm_count((enum kp_coll)coll->kcoll);
            for (int i = 0; i < n; i++) {
                const char *nm = kp_algorithm_name((enum kp_coll)coll->kcoll, i);
                if (nm && *nm)
                    add_alg(o, nm);
            }
            add_alg(o, "auto"); /* kport's default choice */
            if (coll->sizes != KB_SIZELESS)
                add_alg(o, "memcpy"); /* the copy the data must at least go through */
        }
    }

    if (sendrecv) {
        int have = 0;
        for (int i = 0; i < o->nalgs; i++)
            have |= o->algs[i].is_sendrecv;
        if (!have)
            add_alg(o, "sendrecv");
    }
    if (o->ntransports && coll->kcoll < 0)
        bad_usage(o, "--transports: kport has no algorithms for %s", coll->name);
    expand_transports(o);

    /* Validate every kport specification now (same on every rank). */
    for (int i = 0; i < o->nalgs; i++) {
        alg_entry *a = &o->algs[i];
        if (a->native || a->is_ref)
            continue;
        if (coll->kcoll < 0)
            bad_usage(o, "kport has no algorithms for this collective; use -a native (got \"%s\")", a->spec);
        int rc = kp_set_algorithm((enum kp_coll)coll->kcoll, a->spec);
        if (rc != KP_SUCCESS) {
            char msg[KB_ERR_LEN + KB_NAME_LEN];
            snprintf(msg, sizeof(msg), "-a \"%s\": %s: %s", a->spec, kp_strerror(rc), kp_last_error());
            bad_usage(o, "%s", msg);
        }
    }
    if (coll->kcoll >= 0) {
        kp_set_algorithm((enum kp_coll)coll->kcoll, NULL);
        /* A forced algorithm that cannot apply must say so, whatever
         * KPORT_FALLBACK says: never measure a silent fallback. */
        kp_set_fallback(KP_FALLBACK_ERROR);
    }
}

/* ------------------------------------------------------------------------- */
/* Measurement                                                                */
/* ------------------------------------------------------------------------- */

enum { RES_OK = 0, RES_NA, RES_ERR, RES_INVALID };

typedef struct result {
    int status;
    kb_stat t;             /* per call, seconds */
    int iters;
    long long bad;         /* wrong bytes, summed over ranks (-c) */
    char ran[KB_NAME_LEN]; /* kp_last_algorithm (or "native") */
    int ran_known;         /* ran is what kport reported (not just the request) */
    char msg[KB_ERR_LEN];  /* why n/a or failed */
    int has_pred;          /* --predict: the model's time (rank 0) */
    double pred, pred_hockney; /* seconds */
} result;

/* The reference column "memcpy": every rank copies as many bytes as its
 * receive buffer holds (all-gather and all-to-all: P*size; gather: P*size
 * at the root), from a buffer of its own into its receive buffer, timed
 * like the collectives (barrier before, maximum over ranks, median). */
static size_t memcpy_bytes(const options *o, const kb_ctx *cx)
{
    size_t sb = 0, rb = 0;
    if (o->coll->buffers)
        o->coll->buffers(cx->size, cx->P, &sb, &rb);
    if (o->coll->rooted)
        rb = (size_t)cx->P * cx->size; /* what the root receives */
    return rb;
}

/* the start line of every timed call or batch (probe.h: kb_sync) */
static kb_sync start;

/* memcpy's iterations of one round: warm untimed, then iters timed into times. */
static int run_memcpy(const options *o, kb_ctx *cx, int warm, int iters, double *times, result *r, MPI_Comm sync)
{
    size_t rb = memcpy_bytes(o, cx);
    unsigned char *src = malloc(rb ? rb : 1);
    int ok = src != NULL, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, sync);
    if (!gok) {
        free(src);
        r->status = RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "out of memory for %zu bytes", rb);
        return 1;
    }
    memset(src, 0x5a, rb);
    for (int it = 0; it < warm + iters; it++) {
        kb_sync_barrier(&start);
        double t0 = MPI_Wtime();
        memcpy(cx->rbuf, src, rb);
        double t1 = MPI_Wtime();
        if (it >= warm)
            times[it - warm] = t1 - t0;
    }
    free(src);
    return 0;
}

/* The data of the j-th call of batch b (the probe call is 0). */
static int b2b_iter(const options *o, int b, int j) { return 1 + b * o->b2b + j; }

/* The reference column "sendrecv": every rank exchanges size bytes with
 * rank ^ 1 (from its send buffer into its receive buffer) as kport's
 * executor and loggp's exchange make one (MPI_Irecv, MPI_Isend,
 * MPI_Waitall), timed like the collectives; with --b2b, o->b2b of them per
 * batch. A rank whose partner would be P (the last of an odd P) only takes
 * part in the start line. n/a where the size exceeds either buffer or an
 * int count. */
static int run_sendrecv(const options *o, kb_ctx *cx, int warm, int iters, double *times, result *r, MPI_Comm sync)
{
    const int peer = cx->rank ^ 1;
    const int fits = cx->size <= cx->sbuf_len && cx->size <= cx->rbuf_len && cx->size <= (size_t)INT_MAX;
    int gfits;
    MPI_Allreduce(&fits, &gfits, 1, MPI_INT, MPI_MIN, sync);
    if (!gfits) {
        r->status = RES_NA;
        snprintf(r->msg, sizeof(r->msg), "sendrecv: %zu bytes do not fit the buffers or an int count", cx->size);
        return 1;
    }
    const int calls = o->b2b ? o->b2b : 1;
    for (int it = 0; it < warm + iters; it++) {
        kb_sync_barrier(&start);
        double t0 = MPI_Wtime();
        for (int j = 0; j < calls; j++) {
            if (o->b2b && o->coll->write_send) /* as the collectives' batches do (its time subtracted) */
                o->coll->write_send(cx, b2b_iter(o, it, j));
            if (peer < cx->P) {
                MPI_Request rq[2];
                MPI_Irecv(cx->rbuf, (int)cx->size, MPI_BYTE, peer, 77, cx->comm, &rq[0]);
                MPI_Isend(cx->sbuf, (int)cx->size, MPI_BYTE, peer, 77, cx->comm, &rq[1]);
                MPI_Waitall(2, rq, kb_statuses_ignore);
            }
        }
        double t1 = MPI_Wtime();
        if (it >= warm)
            times[it - warm] = t1 - t0;
    }
    return 0;
}

/* Remember this rank's first failing return code and its message. */
static void note_failure(const alg_entry *a, int rc, int *failed, char *errmsg)
{
    if (rc == KP_SUCCESS || *failed)
        return;
    const char *why = a->native ? "" : kp_last_error();
    *failed = rc;
    if (rc == KP_ERR_UNSUPPORTED && why && *why)
        snprintf(errmsg, KB_ERR_LEN, "%s", why);
    else
        snprintf(errmsg, KB_ERR_LEN, "%s%s%s", kp_strerror(rc), why && *why ? ": " : "", why ? why : "");
}

/* The first call decides: refused (n/a) or failed on any rank; returns 1
 * with r filled in if so. Otherwise notes what a forced kport algorithm
 * ran as. Collective over sync. */
static int first_call_decides(const kb_coll *bc, const alg_entry *a, int rc, int moves, char *errmsg, result *r,
                              MPI_Comm sync)
{
    int code = rc == KP_SUCCESS ? 0 : rc == KP_ERR_UNSUPPORTED ? 1 : 2, gcode;
    MPI_Allreduce(&code, &gcode, 1, MPI_INT, MPI_MAX, sync);
    if (gcode != 0) {
        kb_share_message(errmsg, code == gcode, sync);
        r->status = gcode == 1 ? RES_NA : RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "%s", errmsg);
        return 1;
    }
    if (!a->native && !a->is_auto && !a->is_ref && moves) {
        const char *ran = kp_last_algorithm((enum kp_coll)bc->kcoll);
        if (ran && *ran) {
            snprintf(r->ran, sizeof(r->ran), "%s", ran);
            r->ran_known = 1;
        }
    }
    return 0;
}

/* Isolated calls: per iteration (with -c: write the send buffer, poison
 * the receive buffer), barrier, t0, one call, t1 (with -c: check). */
static int loop_isolated(const options *o, kb_ctx *cx, const alg_entry *a, int warm, int iters, int moves,
                         int first, int base, double *times, long long *bad, int *failed, char *errmsg, result *r,
                         MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    for (int i = 0; i < warm + iters; i++) {
        const int it = base + i; /* the call's number over all rounds: its data pattern (-c) */
        if (o->check && bc->write_send)
            bc->write_send(cx, it);
        if (o->check && bc->poison_recv)
            bc->poison_recv(cx, it);
        kb_sync_barrier(&start);
        double t0 = MPI_Wtime();
        int rc = bc->run(cx);
        double t1 = MPI_Wtime();
        note_failure(a, rc, failed, errmsg);
        if (first && i == 0 && first_call_decides(bc, a, rc, moves, errmsg, r, sync))
            return 1;
        if (o->check && bc->check)
            *bad += bc->check(cx, it);
        if (i >= warm)
            times[i - warm] = t1 - t0;
    }
    return 0;
}

/* Back-to-back batches: one untimed probe call decides n/a or failure (as
 * the first iteration does in isolated mode), then per batch (with -c:
 * poison the receive buffer) barrier, t0, b2b x (write the send buffer
 * with the call's pattern, one call), t1 (with -c: check the last call).
 * memcpy: the same with memcpy(rbuf, src, P*size) as the call. */
static int loop_b2b(const options *o, kb_ctx *cx, const alg_entry *a, int wbatches, int batches, int moves,
                    int first, int base, double *times, long long *bad, int *failed, char *errmsg, result *r,
                    MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    const int check = o->check && !a->is_memcpy;
    size_t rb = a->is_memcpy ? memcpy_bytes(o, cx) : 0;
    unsigned char *src = NULL;
    if (a->is_memcpy) {
        src = malloc(rb ? rb : 1);
        int ok = src != NULL, gok;
        MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, sync);
        if (!gok) {
            free(src);
            r->status = RES_ERR;
            snprintf(r->msg, sizeof(r->msg), "out of memory for %zu bytes", rb);
            return 1;
        }
        memset(src, 0x5a, rb);
    } else if (first) {
        if (bc->write_send)
            bc->write_send(cx, 0);
        if (check && bc->poison_recv)
            bc->poison_recv(cx, 0);
        kb_sync_barrier(&start);
        int rc = bc->run(cx);
        note_failure(a, rc, failed, errmsg);
        if (first_call_decides(bc, a, rc, moves, errmsg, r, sync))
            return 1;
        if (check && bc->check)
            *bad += bc->check(cx, 0);
    }
    for (int bi = 0; bi < wbatches + batches; bi++) {
        const int b = base + bi; /* the batch's number over all rounds: its data pattern */
        const int last = b2b_iter(o, b, o->b2b - 1);
        if (check && bc->poison_recv)
            bc->poison_recv(cx, last);
        kb_sync_barrier(&start);
        double t0 = MPI_Wtime();
        for (int j = 0; j < o->b2b; j++) {
            if (bc->write_send)
                bc->write_send(cx, b2b_iter(o, b, j));
            if (a->is_memcpy) {
                memcpy(cx->rbuf, src, rb);
            } else {
                int rc = bc->run(cx);
                note_failure(a, rc, failed, errmsg);
            }
        }
        double t1 = MPI_Wtime();
        if (check && bc->check)
            *bad += bc->check(cx, last);
        if (bi >= wbatches)
            times[bi - wbatches] = t1 - t0;
    }
    free(src);
    return 0;
}

/* The rewrite alone, timed like a batch: barrier, t0, b2b x (write the
 * send buffer with the call's pattern), t1; returns (on rank 0) the median
 * over batches of the maximum over ranks, in seconds per batch. */
static double measure_rewrite(const options *o, kb_ctx *cx, int wbatches, int batches, double *times,
                              double *maxes, MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    for (int b = 0; b < wbatches + batches; b++) {
        kb_sync_barrier(&start);
        double t0 = MPI_Wtime();
        for (int j = 0; j < o->b2b && bc->write_send; j++)
            bc->write_send(cx, b2b_iter(o, b, j));
        double t1 = MPI_Wtime();
        if (b >= wbatches)
            times[b - wbatches] = t1 - t0;
    }
    kb_reduce_max(times, maxes, batches, sync);
    return cx->rank == 0 ? kb_stats(maxes, batches).median : 0.0;
}

/* One (algorithm, size) over the rounds: what is kept between them. */
typedef struct run_state {
    int done;              /* iterations (batches) timed so far */
    int calls;             /* iterations (batches) run so far, warm-up included: the next one's data pattern */
    int stop;              /* refused or failed at its first call, or out of memory: no more rounds */
    int moves;             /* the call moves data (kport records what it ran) */
    int failed;            /* this rank's first failing return code */
    long long bad;         /* wrong bytes (-c) */
    char errmsg[KB_ERR_LEN];
    char ran[KB_NAME_LEN - 8]; /* auto: what kport ran, right after its calls ("auto(...)" fits in a result) */
} run_state;

/* Make a the algorithm of the next calls (a kport algorithm: forced). */
static int select_alg(const options *o, kb_ctx *cx, const alg_entry *a, result *r)
{
    const kb_coll *bc = o->coll;
    cx->native = a->native;
    cx->label = a->label;
    cx->reported = 0;
    if (a->native || a->is_ref)
        return 0;
    int rc = kp_set_algorithm((enum kp_coll)bc->kcoll, a->spec);
    if (rc != KP_SUCCESS) { /* validated at startup; same on every rank */
        r->status = RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "kp_set_algorithm: %s: %s", kp_strerror(rc), kp_last_error());
        return 1;
    }
    return 0;
}

/* Round k of (algorithm, size): warm / iters are iterations (isolated)
 * or batches (--b2b); its times go to times + st->done. The first round
 * starts the result (and its first call decides n/a or failure). */
static void run_round(const options *o, kb_ctx *cx, alg_entry *a, int k, int warm, int iters, double *times,
                      run_state *st, result *r, MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    if (k == 0) {
        memset(r, 0, sizeof(*r));
        memset(st, 0, sizeof(*st));
        snprintf(r->ran, sizeof(r->ran), "%s", a->native ? "native" : a->spec);
        if (a->is_ref) {
            snprintf(r->ran, sizeof(r->ran), "%s", a->spec);
            r->ran_known = 1;
        }
        /* kport records the algorithm only for calls that move data (a
         * 0-byte all-gather returns at once and leaves kp_last_algorithm
         * as it was). */
        size_t sb = 0, rb = 0;
        st->moves = !bc->buffers || (bc->buffers(cx->size, cx->P, &sb, &rb) == 0 && (sb > 0 || rb > 0));
    }
    if (st->stop)
        return;
    if (select_alg(o, cx, a, r)) {
        st->stop = 1;
        return;
    }
    int stop;
    if (a->is_memcpy && !o->b2b)
        stop = run_memcpy(o, cx, warm, iters, times + st->done, r, sync);
    else if (a->is_sendrecv)
        stop = run_sendrecv(o, cx, warm, iters, times + st->done, r, sync);
    else if (o->b2b)
        stop = loop_b2b(o, cx, a, warm, iters, st->moves, k == 0, st->calls, times + st->done, &st->bad, &st->failed,
                        st->errmsg, r, sync);
    else
        stop = loop_isolated(o, cx, a, warm, iters, st->moves, k == 0, st->calls, times + st->done, &st->bad,
                             &st->failed, st->errmsg, r, sync);
    if (stop) {
        st->stop = 1;
        return;
    }
    st->done += iters;
    st->calls += warm + iters;
    if (a->is_auto && st->moves) { /* what auto chose at this size */
        const char *ran = kp_last_algorithm((enum kp_coll)bc->kcoll);
        snprintf(st->ran, sizeof(st->ran), "%s", ran && *ran ? ran : "?");
    }
}

/* After the last round: the untimed self-test (-c), failures, and the
 * statistics over every round's times (rewrite: measure_rewrite()'s time
 * per batch). */
static void finish_alg(const options *o, kb_ctx *cx, alg_entry *a, double rewrite, double *times, double *maxes,
                       run_state *st, result *r, MPI_Comm sync)
{
    const kb_coll *bc = o->coll;
    if (st->stop && r->status != RES_OK)
        return; /* n/a or failed: r says why (the same on every rank) */
    const int iters = st->done;
    if (o->check && bc->selftest && !a->is_ref && !select_alg(o, cx, a, r)) {
        /* untimed; only where every rank's timed calls succeeded */
        int lf0 = st->failed != 0, gf0;
        MPI_Allreduce(&lf0, &gf0, 1, MPI_INT, MPI_MAX, sync);
        if (!gf0) {
            int trc = KP_SUCCESS;
            st->bad += bc->selftest(cx, sync, &trc);
            if (trc != KP_SUCCESS) {
                const char *why = a->native ? "" : kp_last_error();
                st->failed = trc;
                snprintf(st->errmsg, sizeof(st->errmsg), "%s test: %s%s%s", bc->name, kp_strerror(trc),
                         why && *why ? ": " : "", why ? why : "");
            }
        }
    }
    if (a->is_auto && st->moves) {
        snprintf(r->ran, sizeof(r->ran), "auto(%s)", st->ran[0] ? st->ran : "?");
        r->ran_known = 1;
    }

    kb_reduce_max(times, maxes, iters, sync);
    int lf = st->failed != 0, gf;
    long long gbad;
    MPI_Allreduce(&lf, &gf, 1, MPI_INT, MPI_MAX, sync);
    MPI_Allreduce(&st->bad, &gbad, 1, MPI_LONG_LONG, MPI_SUM, sync);
    r->iters = iters;
    r->bad = gbad;
    if (gf) {
        kb_share_message(st->errmsg, lf, sync);
        r->status = RES_ERR;
        snprintf(r->msg, sizeof(r->msg), "%s", st->errmsg);
    } else if (gbad) {
        r->status = RES_INVALID;
        snprintf(r->msg, sizeof(r->msg), "%lld %s", gbad, bc->bad_unit);
    }
    if (cx->rank == 0) {
        r->t = kb_stats(maxes, iters);
        if (o->b2b) { /* per call, the rewrite subtracted */
            r->t.median = (r->t.median - rewrite) / o->b2b;
            r->t.min = (r->t.min - rewrite) / o->b2b;
            r->t.avg = (r->t.avg - rewrite) / o->b2b;
            r->t.max = (r->t.max - rewrite) / o->b2b;
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Output                                                                     */
/* ------------------------------------------------------------------------- */

static const char *status_name(int s)
{
    return s == RES_OK ? "ok" : s == RES_NA ? "n/a" : s == RES_ERR ? "error" : "invalid";
}

static void json_line(const options *o, const char *mpi, int P, int hosts, size_t size, const alg_entry *a,
                      const result *r, double rewrite)
{
    printf("{\"coll\":");
    kb_json_string(stdout, o->coll->name);
    printf(",\"algorithm\":");
    kb_json_string(stdout, a->is_auto ? "auto" : r->ran_known ? r->ran : a->label);
    printf(",\"requested\":");
    kb_json_string(stdout, a->spec);
    if (a->is_auto) {
        printf(",\"ran\":");
        kb_json_string(stdout, r->ran);
    }
    if (a->native || a->is_ref) {
        printf(",\"transport\":null");
    } else {
        int rails, skb;
        if (rma_of(r->ran_known ? r->ran : a->spec, &rails, &skb))
            printf(",\"transport\":\"rma\",\"rails\":%d,\"stripe_kb\":%d", rails, skb);
        else
            printf(",\"transport\":\"p2p\"");
    }
    printf(",\"mpi\":");
    kb_json_string(stdout, mpi);
    printf(",\"P\":%d,\"hosts\":%d,\"size\":%zu", P, hosts, size);
    if (o->coll->rooted)
        printf(",\"root\":%d", o->root);
    if (o->b2b)
        printf(",\"mode\":\"b2b\",\"calls_per_batch\":%d,\"rewrite_us\":%.3f", o->b2b, rewrite / o->b2b * 1e6);
    else
        printf(",\"mode\":\"isolated\"");
    printf(",\"sync\":\"%s\"", start.shm ? "shm" : "mpi");
    if (r->status == RES_OK || r->status == RES_INVALID)
        printf(",\"median_us\":%.3f,\"min_us\":%.3f,\"avg_us\":%.3f,\"max_us\":%.3f,\"iterations\":%d",
               r->t.median * 1e6, r->t.min * 1e6, r->t.avg * 1e6, r->t.max * 1e6, r->iters);
    else
        printf(",\"median_us\":null,\"min_us\":null,\"avg_us\":null,\"max_us\":null,\"iterations\":0");
    if (o->predict && r->has_pred)
        printf(",\"predicted_us\":%.3f,\"predicted_hockney_us\":%.3f", r->pred * 1e6, r->pred_hockney * 1e6);
    else if (o->predict)
        printf(",\"predicted_us\":null,\"predicted_hockney_us\":null");
    printf(",\"validated\":%s,\"status\":\"%s\"", o->check && r->status == RES_OK ? "true" : "false",
           status_name(r->status));
    if (o->check && r->status != RES_NA && r->status != RES_ERR)
        printf(",\"errors\":%lld", r->bad);
    if (r->status != RES_OK) {
        printf(",\"error\":");
        kb_json_string(stdout, r->msg);
    }
    printf("}\n");
}

static int col_width(const alg_entry *a)
{
    char name[KB_NAME_LEN + 48];
    col_name(a, name, sizeof name);
    int w = (int)strlen(name) + 2;
    return w < 12 ? 12 : w;
}

static void text_cell(const alg_entry *a, const result *r)
{
    char cell[32];
    switch (r->status) {
    case RES_OK: snprintf(cell, sizeof(cell), "%.2f", r->t.median * 1e6); break;
    case RES_NA: snprintf(cell, sizeof(cell), "n/a"); break;
    case RES_ERR: snprintf(cell, sizeof(cell), "ERROR"); break;
    default: snprintf(cell, sizeof(cell), "INVALID"); break;
    }
    printf("%*s", col_width(a), cell);
}

typedef struct run_env {
    char mpi[256];
    int P, hosts, rmin, rmax;
    char kport_nodes[256];
} run_env;

static void print_header(options *o, const run_env *e)
{
    const kb_coll *bc = o->coll;
    printf("# kport-bench %s\n", bc->name);
    printf("# MPI: %s\n", e->mpi);
    printf("# kport: %d.%d.%d\n", KPORT_VERSION_MAJOR, KPORT_VERSION_MINOR, KPORT_VERSION_PATCH);
    if (e->rmin == e->rmax)
        printf("# P = %d, node layout: %d host%s, %d rank%s per host\n", e->P, e->hosts, e->hosts == 1 ? "" : "s",
               e->rmin, e->rmin == 1 ? "" : "s");
    else
        printf("# P = %d, node layout: %d hosts, %d to %d ranks per host\n", e->P, e->hosts, e->rmin, e->rmax);
    printf("# kport node layout: %s\n", e->kport_nodes);
    printf("# Iterations: %d (%d above %d bytes), warmup: %d (%d above %d bytes), validation: %s\n", o->iters,
           o->iters_large, KB_LARGE_MSG, o->warmup, o->warmup_large, KB_LARGE_MSG, o->check ? "on" : "off");
    if (bc->rooted)
        printf("# Root: %d\n", o->root);
    printf("# Size: %s\n", bc->size_desc);
    printf("# Start line of each timed call: %s\n", kb_sync_name(&start));
    if (o->check && bc->check_note)
        printf("%s", bc->check_note);
    if (o->b2b) {
        printf("# Mode: back-to-back: per batch one barrier, then %d calls, each after rewriting the send\n"
               "#   buffer with that call's data (-i / -x count calls: ceil(-i / %d) batches)\n",
               o->b2b, o->b2b);
        printf("# Latency(us): per call, (median over batches of the maximum over ranks of the batch time\n"
               "#   - the same for the rewrites alone) / %d; column \"rewrite\": that subtracted time per call\n",
               o->b2b);
    } else {
        printf("# Latency(us): median over iterations of the maximum over ranks\n");
    }
    for (int ai = 0; ai < o->nalgs; ai++) {
        alg_entry *a = &o->algs[ai];
        if (a->native)
            printf("# %-28s %s\n", a->label, bc->native_call);
        else if (a->is_memcpy)
            printf("# %-28s reference: one memcpy of the receive buffer's bytes per rank (P*size)\n", a->label);
        else if (a->is_sendrecv)
            printf("# %-28s reference: one exchange of size bytes per rank with rank ^ 1 (Irecv, Isend, "
                   "Waitall)\n",
                   a->label);
        else if (a->is_auto)
            printf("# %-28s kport automatic selection\n", a->label);
        else if (a->tagged) {
            char name[KB_NAME_LEN + 48];
            col_name(a, name, sizeof name);
            printf("# %-28s kport, forced \"%s\" (runs as %s)\n", name, a->spec, a->label);
        } else
            printf("# %-28s kport, forced \"%s\" (name as reported by kp_last_algorithm)\n", a->label, a->spec);
        if (a->na_msg[0]) {
            printf("#   n/a: %s\n", a->na_msg);
            a->na_noted = 1;
        }
    }
    printf("%-10s", "# Size");
    for (int ai = 0; ai < o->nalgs; ai++) {
        char name[KB_NAME_LEN + 48];
        col_name(&o->algs[ai], name, sizeof name);
        printf("%*s", col_width(&o->algs[ai]), name);
    }
    if (o->b2b)
        printf("%12s", "rewrite");
    printf("\n");
}

/* After the table: refusals, renamed columns, failures, -f blocks, the verdict. */
static void print_footer(const options *o, const size_t *sizes, int nsizes, const result *res, int failures)
{
    const kb_coll *bc = o->coll;
    for (int ai = 0; ai < o->nalgs; ai++) {
        alg_entry *a = &o->algs[ai];
        if (a->na_msg[0] && !a->na_noted)
            printf("# %s: n/a at some sizes: %s\n", a->label, a->na_msg);
        for (int si = 0; si < nsizes; si++) {
            const result *r = &res[(size_t)ai * nsizes + si];
            if (r->status == RES_OK && r->ran_known && !a->is_auto && strcmp(r->ran, a->label) != 0)
                printf("# note: %s ran as %s at size %zu\n", a->label, r->ran, sizes[si]);
            if (r->status == RES_ERR || r->status == RES_INVALID)
                printf("# %s, size %zu: %s: %s\n", a->label, sizes[si],
                       r->status == RES_ERR ? "FAILED" : "VALIDATION FAILED", r->msg);
        }
    }
    if (o->predict) {
        printf("\n# Predicted (LogGP cost model, %s; Hockney beside it), microseconds\n", o->predict);
        printf("%-10s%-36s%14s%14s%12s%14s\n", "# Size", "algorithm", "measured", "predicted", "pred/meas",
               "hockney");
        for (int ai = 0; ai < o->nalgs; ai++)
            for (int si = 0; si < nsizes; si++) {
                const result *r = &res[(size_t)ai * nsizes + si];
                if (!r->has_pred)
                    continue;
                const alg_entry *a = &o->algs[ai];
                printf("%-10zu%-36s%14.2f%14.2f%12.2f%14.2f\n", sizes[si], a->is_auto ? r->ran : a->label,
                       r->t.median * 1e6, r->pred * 1e6, r->t.median > 0 ? r->pred / r->t.median : 0.0,
                       r->pred_hockney * 1e6);
            }
    }
    if (o->full) {
        for (int ai = 0; ai < o->nalgs; ai++) {
            alg_entry *a = &o->algs[ai];
            printf("\n# Algorithm: %s", a->label);
            if (a->native)
                printf(" (%s)\n", bc->native_call);
            else
                printf(" (kp_last_algorithm; requested \"%s\")\n", a->spec);
            printf("%-10s%20s%18s%18s%18s%12s\n", "# Size", "Median Latency(us)", "Avg Latency(us)",
                   "Min Latency(us)", "Max Latency(us)", o->b2b ? "Batches" : "Iterations");
            int shown = 0; /* the refusal message, once per block */
            for (int si = 0; si < nsizes; si++) {
                const result *r = &res[(size_t)ai * nsizes + si];
                printf("%-10zu", sizes[si]);
                if (r->status == RES_OK || r->status == RES_INVALID)
                    printf("%20.2f%18.2f%18.2f%18.2f%12d%s\n", r->t.median * 1e6, r->t.avg * 1e6, r->t.min * 1e6,
                           r->t.max * 1e6, r->iters, r->status == RES_INVALID ? "  INVALID" : "");
                else if (r->status == RES_NA && !shown++)
                    printf("%20s  %s\n", "n/a", r->msg);
                else if (r->status == RES_NA)
                    printf("%20s\n", "n/a");
                else
                    printf("%20s  %s\n", "ERROR", r->msg);
            }
        }
    }
    if (o->check)
        printf("# Validation: %s\n", failures ? "FAILED" : "passed");
    fflush(stdout);
}

/* ------------------------------------------------------------------------- */
/* Prediction (--predict)                                                     */
/* ------------------------------------------------------------------------- */

/* kport's node layout on comm (kp_node_info on every rank, gathered);
 * collective. Returns 0, or nonzero when it cannot be had. */
static int kport_layout(MPI_Comm comm, kp_layout *L)
{
    int P, nnodes = 0, node = 0, local = 0, nsize = 0;
    MPI_Comm_size(comm, &P);
    int rc = kp_node_info(comm, &nnodes, &node, &local, &nsize), grc;
    MPI_Allreduce(&rc, &grc, 1, MPI_INT, MPI_MAX, comm);
    int *ids = malloc((size_t)P * sizeof(int));
    int ok = ids != NULL, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, comm);
    if (grc != KP_SUCCESS || !gok) {
        free(ids);
        return 1;
    }
    MPI_Allgather(&node, 1, MPI_INT, ids, 1, MPI_INT, comm);
    const char *cma = getenv("KPORT_CMA");
    rc = kp_layout_init(L, P, ids, !(cma && !strcmp(cma, "0")));
    free(ids);
    return rc;
}

/* The model's time of a kport row that ran (rank 0): the forced
 * specification, or for auto what kport ran ("auto(bruck:k=1 (...))"). */
static void predict_row(const options *o, const kp_layout *L, int P, size_t size, const alg_entry *a, result *r)
{
    if (!o->predict || a->native || a->is_ref || r->status != RES_OK || o->coll->kcoll < 0)
        return;
    char spec[KB_NAME_LEN];
    if (a->is_auto) {
        if (strncmp(r->ran, "auto(", 5) != 0)
            return;
        snprintf(spec, sizeof spec, "%s", r->ran + 5);
        size_t n = strlen(spec);
        if (n > 0 && spec[n - 1] == ')')
            spec[n - 1] = '\0';
    } else {
        snprintf(spec, sizeof spec, "%s", a->spec);
    }
    char *note = strstr(spec, " ("); /* "bruck:k=1 (k=8 clamped: P=2)" */
    if (note)
        *note = '\0';
    const kp_algo *alg = NULL;
    kp_params prm;
    char err[256];
    if (kp_algo_parse(o->coll->kcoll, spec, &alg, &prm, err, sizeof err) != KP_SUCCESS || !alg)
        return;
    kp_model_result m = {0};
    if (kp_model_predict(&o->machine, alg, &prm, L, P, (int64_t)size, o->root, 0, &m) != KP_SUCCESS || m.refused)
        return;
    r->has_pred = 1;
    r->pred = m.time_ns * 1e-9;
    r->pred_hockney = m.hockney_ns * 1e-9;
}

/* ------------------------------------------------------------------------- */

int kb_coll_main(const kb_coll *bc, int argc, char **argv)
{
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);

    options o;
    parse_options(bc, argc, argv, &o);

    /* Sizes: OSU's MIN, 2*MIN, ... (0 first when MIN is 0). */
    int nsizes = 0;
    size_t sizes[KB_MAX_SIZES];
    {
        size_t s = o.min_size;
        if (s == 0) {
            sizes[nsizes++] = 0;
            s = 1;
        }
        while (s <= o.max_size && nsizes < KB_MAX_SIZES) {
            sizes[nsizes++] = s;
            if (s > o.max_size / 2)
                break;
            s *= 2;
        }
    }
    size_t sbytes = 0, rbytes = 0;
    if (bc->buffers && bc->buffers(o.max_size, P, &sbytes, &rbytes))
        bad_usage(&o, "-m: maximum size too large for %s at this P", bc->native_call);

    kb_ctx cx;
    memset(&cx, 0, sizeof(cx));
    MPI_Comm sync;
    MPI_Comm_dup(MPI_COMM_WORLD, &sync);
    kb_sync_open(sync, kb_oversubscribed(MPI_COMM_WORLD, NULL), &start);
    MPI_Comm_dup(MPI_COMM_WORLD, &cx.comm);
    cx.rank = rank;
    cx.P = P;
    cx.root = o.root;
    cx.sbuf_len = sbytes;
    cx.rbuf_len = rbytes;
    cx.sbuf = malloc(sbytes ? sbytes : 1);
    cx.rbuf = malloc(rbytes + KB_GUARD);
    int maxit = o.iters > o.iters_large ? o.iters : o.iters_large;
    /* every (algorithm, size)'s times, kept over the rounds */
    double *times = malloc((size_t)o.nalgs * (size_t)nsizes * (size_t)maxit * sizeof(double));
    double *maxes = malloc((size_t)maxit * sizeof(double));
    result *res = calloc((size_t)o.nalgs * (size_t)nsizes, sizeof(result));
    run_state *st = calloc((size_t)o.nalgs * (size_t)nsizes, sizeof(run_state));
    int ok = cx.sbuf && cx.rbuf && times && maxes && res && st, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!gok) {
        if (rank == 0)
            fprintf(stderr, "kport-bench: cannot allocate buffers for %zu bytes (P = %d)\n", o.max_size, P);
        return 1;
    }
    /* Touch the buffers once so first-touch page faults are not timed. */
    memset(cx.sbuf, 0, sbytes ? sbytes : 1);
    memset(cx.rbuf, 0, rbytes + KB_GUARD);

    run_env env;
    env.P = P;
    kb_mpi_library_name(env.mpi, sizeof(env.mpi));
    kb_node_layout(MPI_COMM_WORLD, &env.hosts, &env.rmin, &env.rmax);
    kb_kport_layout(MPI_COMM_WORLD, env.kport_nodes, sizeof(env.kport_nodes));
    kp_layout layout;
    int have_layout = 0;
    if (o.predict) {
        if (kport_layout(cx.comm, &layout)) {
            if (rank == 0)
                fprintf(stderr, "kport-bench: --predict: cannot get kport's node layout: %s\n", kp_last_error());
            o.predict = NULL;
        } else
            have_layout = 1;
    }

    int failures = 0;
    int labels_ready = 0, emitted = 0; /* sizes printed so far */
    double rewrite[KB_MAX_SIZES] = {0}; /* --b2b: seconds per batch, on rank 0 */
    /* the rounds run over every size: round k runs every size's share, and
     * in each size every algorithm's share, of the iterations, after its own
     * warm-up (the whole -x in the first round, a tenth of it, at least 2,
     * in the others), starting with algorithm k (mod their number), so a
     * slow phase of the machine or the state one algorithm leaves behind
     * falls on all of them alike; and a slow phase of a second or less, which
     * took every column of one size with it when the rounds of a size ran
     * together (all 14 all-gather columns of 16 B at 0.58-0.79x of the
     * model's prediction, the sizes around them at 0.91-1.07x), costs each
     * cell a round at most */
    int iters_of[KB_MAX_SIZES], warm_of[KB_MAX_SIZES], R_of[KB_MAX_SIZES], Rmax = 1;
    for (int si = 0; si < nsizes; si++) {
        const int large = sizes[si] > KB_LARGE_MSG;
        int iters = large ? o.iters_large : o.iters;
        int warm = large ? o.warmup_large : o.warmup;
        cx.size = sizes[si];
        if (o.b2b) { /* calls -> batches */
            iters = (iters + o.b2b - 1) / o.b2b;
            warm = (warm + o.b2b - 1) / o.b2b;
            rewrite[si] = measure_rewrite(&o, &cx, warm, iters, times, maxes, sync);
        }
        iters_of[si] = iters;
        warm_of[si] = warm;
        R_of[si] = o.rounds < iters ? o.rounds : iters > 0 ? iters : 1;
        if (R_of[si] > Rmax)
            Rmax = R_of[si];
    }
    /* the tables come after the last round: on a terminal, say how far */
    const int show = rank == 0 && isatty(STDERR_FILENO);
    for (int k = 0; k < Rmax; k++)
        for (int si = 0; si < nsizes; si++) {
            const int iters = iters_of[si], warm = warm_of[si], R = R_of[si];
            if (k >= R)
                continue;
            if (show) {
                fprintf(stderr, "\rkport-bench %s: round %d of %d, %zu B   ", bc->name, k + 1, Rmax, sizes[si]);
                fflush(stderr);
            }
            cx.size = sizes[si];
            const int share = iters / R + (k < iters % R ? 1 : 0);
            int rwarm = warm;
            if (k > 0) {
                rwarm = warm / 10 > 2 ? warm / 10 : 2;
                if (rwarm > warm)
                    rwarm = warm;
            }
            for (int i = 0; i < o.nalgs; i++) { /* rotated: each column follows every other one in turn */
                const int ai = (i + k) % o.nalgs;
                const size_t cell = (size_t)ai * nsizes + si;
                run_round(&o, &cx, &o.algs[ai], k, rwarm, share, times + cell * maxit, &st[cell], &res[cell], sync);
            }
        }
    if (show)
        fprintf(stderr, "\r%60s\r", "");
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        cx.size = size;
        for (int ai = 0; ai < o.nalgs; ai++) {
            const size_t cell = (size_t)ai * nsizes + si;
            finish_alg(&o, &cx, &o.algs[ai], rewrite[si], times + cell * maxit, maxes, &st[cell], &res[cell], sync);
        }
        if (rank == 0 && have_layout)
            for (int ai = 0; ai < o.nalgs; ai++)
                predict_row(&o, &layout, P, size, &o.algs[ai], &res[(size_t)ai * nsizes + si]);

        for (int ai = 0; ai < o.nalgs; ai++) {
            alg_entry *a = &o.algs[ai];
            result *r = &res[(size_t)ai * nsizes + si];
            /* Column label: what kport reported at the first size that moved data. */
            if (!labels_ready && r->status == RES_OK && r->ran_known && !a->is_auto)
                snprintf(a->label, sizeof(a->label), "%s", r->ran);
            if (r->status == RES_NA && a->na_msg[0] == '\0')
                snprintf(a->na_msg, sizeof(a->na_msg), "%s", r->msg);
            if (r->status == RES_ERR || r->status == RES_INVALID) {
                failures++;
                if (rank == 0)
                    fprintf(stderr, "kport-bench: %s %s, size %zu: %s: %s\n", bc->name, a->label, size,
                            r->status == RES_ERR ? "FAILED" : "VALIDATION FAILED", r->msg);
            }
        }
        /* Output waits until the labels are known (a 0-byte size reports none). */
        if (!labels_ready && (size > 0 || si == nsizes - 1)) {
            labels_ready = 1;
            if (rank == 0 && !o.json)
                print_header(&o, &env);
        }
        if (!labels_ready || rank != 0)
            continue;
        for (; emitted <= si; emitted++) {
            if (o.json) {
                for (int ai = 0; ai < o.nalgs; ai++)
                    json_line(&o, env.mpi, P, env.hosts, sizes[emitted], &o.algs[ai],
                              &res[(size_t)ai * nsizes + emitted], rewrite[emitted]);
            } else {
                printf("%-10zu", sizes[emitted]);
                for (int ai = 0; ai < o.nalgs; ai++)
                    text_cell(&o.algs[ai], &res[(size_t)ai * nsizes + emitted]);
                if (o.b2b)
                    printf("%12.2f", rewrite[emitted] / o.b2b * 1e6);
                printf("\n");
            }
        }
        fflush(stdout);
    }

    if (rank == 0 && !o.json)
        print_footer(&o, sizes, nsizes, res, failures);

    if (bc->kcoll >= 0)
        kp_set_algorithm((enum kp_coll)bc->kcoll, NULL);
    free(res);
    free(times);
    free(maxes);
    free(st);
    free(cx.sbuf);
    free(cx.rbuf);
    free(o.algs);
    if (have_layout)
        kp_layout_free(&layout);
    MPI_Comm_free(&cx.comm);
    kb_sync_close(&start);
    MPI_Comm_free(&sync);
    return failures ? 1 : 0;
}
