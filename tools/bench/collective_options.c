/*
 * kport-bench's collective runner: its options. OSU's -m -i -x -f -c, the
 * root (-r), the algorithm lists (-a, --sendrecv) with their ',' and ';'
 * rules, the transports (--transports), back-to-back batches (--b2b),
 * rounds (--rounds), --format and --predict; every kport specification
 * validated before anything is measured. What they mean is the manual at
 * the top of collective.c.
 */
#include "collective.h"

#include "algo/algo.h"

#include <stdlib.h>
#include <string.h>

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
            "                allgather, gather and scatter, per rank pair for alltoall, the message\n"
            "                for bcast, the vector for reduce, allreduce and reduce_scatter, the\n"
            "                result block for reduce_scatter_block (reductions: multiples of the\n"
            "                element size, default MIN the element size); barrier ignores -m\n"
            "  -i N          timed iterations per size (default %d, %d above %d bytes)\n"
            "  -x N          warmup iterations per size (default %d, %d above %d bytes)\n"
            "  -f            full statistics: per-algorithm blocks with median, avg, min, max\n"
            "  -c            validate every byte of every iteration's result; exit 1 on a mismatch\n"
            "                (barrier: an untimed test that no rank leaves before all entered)\n"
            "  -r ROOT       root rank of gather, bcast, scatter and reduce (default 0)\n"
            "  --type T      reductions: the datatype, %s (default double)\n"
            "  --op OP       reductions: the operation, %s (default sum; band, bor, bxor on\n"
            "                integer types only)\n"
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
            KB_DEF_WARMUP_LARGE, KB_LARGE_MSG, kb_red_type_list(), kb_red_op_list(), KB_DEF_ROUNDS);
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

_Noreturn void kbc_bad_usage(const options *o, const char *fmt, const char *arg)
{
    kb_bad_usage(usage, o ? o->coll : NULL, fmt, arg);
}

static void add_alg(options *o, const char *spec)
{
    if (strlen(spec) >= KB_NAME_LEN)
        kbc_bad_usage(o, "algorithm specification too long: \"%s\"", spec);
    if (o->nalgs == o->cap) {
        int cap = o->cap ? 2 * o->cap : 16;
        alg_entry *a = realloc(o->algs, (size_t)cap * sizeof(*a));
        if (!a)
            kbc_bad_usage(o, "out of memory%s", "");
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
    a->is_limit = strcmp(spec, "bw_limit") == 0;
    a->is_ref = a->is_memcpy || a->is_sendrecv || a->is_limit;
    if (a->is_limit && !o->coll->limit)
        kbc_bad_usage(o, "-a bw_limit: %s has no bandwidth-limit reference (allreduce has)", o->coll->name);
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
        kbc_bad_usage(o, "%s list too long", what);
    strcpy(buf, list);
    char *p = buf;
    for (;;) {
        const size_t n = strcspn(p, ",;");
        const char sep = p[n];
        p[n] = '\0';
        if (*p == '\0') {
            char msg[KB_ERR_LEN];
            snprintf(msg, sizeof msg, "empty algorithm name in %s \"%.400s\"", what, list);
            kbc_bad_usage(o, "%s", msg);
        }
        if (strchr(p, '=') && !strchr(p, ':') && spec[0]) {
            /* a parameter of the previous specification */
            if (strlen(spec) + strlen(p) + 2 > sizeof(spec))
                kbc_bad_usage(o, "specification too long in \"%s\"", list);
            strcat(spec, strchr(spec, ':') ? "," : ":");
            strcat(spec, p);
        } else if (strchr(p, '=') && !strchr(p, ':')) {
            char msg[KB_ERR_LEN];
            snprintf(msg, sizeof msg, "parameter \"%.200s\" in %s does not follow an algorithm name", p, what);
            kbc_bad_usage(o, "%s", msg);
        } else {
            if (spec[0])
                add(o, spec);
            if (strlen(p) >= sizeof(spec))
                kbc_bad_usage(o, "specification too long: \"%s\"", p);
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
        kbc_bad_usage(o, "--transports: more than %s transports", "8");
    char *t = o->transports[o->ntransports];
    if (strcmp(spec, "p2p") == 0)
        t[0] = '\0';
    else if (strcmp(spec, "rma") == 0)
        snprintf(t, KB_NAME_LEN, "transport=rma");
    else if (strncmp(spec, "rma:", 4) == 0 && strlen(spec) < KB_NAME_LEN - 16)
        snprintf(t, KB_NAME_LEN, "transport=rma,%s", spec + 4);
    else
        kbc_bad_usage(o, "--transports: unknown transport \"%s\" (p2p, rma or rma:rails=R,stripe_kb=S)", spec);
    for (int i = 0; i < o->ntransports; i++)
        if (strcmp(o->transports[i], t) == 0)
            kbc_bad_usage(o, "--transports: \"%s\" given twice", spec);
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

/* Reductions: the type and op agree, and every size is whole elements
 * (the smallest size defaults to one element). */
static void reduction_sizes(options *o, int min_given)
{
    if (!kb_red_valid(o->type, o->op)) {
        char msg[KB_ERR_LEN];
        snprintf(msg, sizeof msg, "--op %s is not defined on --type %s (bitwise operations: integer types)",
                 kb_red_op_name(o->op), kb_red_type_name(o->type));
        kbc_bad_usage(o, "%s", msg);
    }
    const size_t elem = kb_red_elem(o->type);
    if (!min_given && o->min_size > 0 && o->min_size < elem)
        o->min_size = elem <= o->max_size ? elem : o->max_size;
    if (o->min_size % elem) {
        char msg[KB_ERR_LEN];
        snprintf(msg, sizeof msg, "-m: the smallest size, %zu bytes, is not a multiple of the %zu-byte %s (the "
                 "sizes are MIN, 2*MIN, ...)", o->min_size, elem, kb_red_type_name(o->type));
        kbc_bad_usage(o, "%s", msg);
    }
}

void kbc_parse_options(const kb_coll *coll, int argc, char **argv, options *o)
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
    int nalist = 0, sendrecv = 0, min_given = 0;

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
                kbc_bad_usage(o, "unknown --format \"%s\" (text or json)", val);
            continue;
        }
        if ((val = kb_long_option(argc, argv, &i, "--predict", usage, coll))) {
            char err[KB_ERR_LEN];
            if (kp_params_load(val, &o->machine, err, sizeof err) != KP_SUCCESS)
                kbc_bad_usage(o, "--predict: %s", err);
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
                kbc_bad_usage(o, "bad --b2b \"%s\" (calls per batch, an integer >= 1)", val);
            continue;
        }
        if ((val = kb_long_option(argc, argv, &i, "--type", usage, coll))) {
            if (!coll->reduction)
                kbc_bad_usage(o, "--type: %s is not a reduction", coll->name);
            if ((o->type = kb_red_type_find(val)) < 0)
                kbc_bad_usage(o, "unknown --type \"%s\"", val);
            continue;
        }
        if ((val = kb_long_option(argc, argv, &i, "--op", usage, coll))) {
            if (!coll->reduction)
                kbc_bad_usage(o, "--op: %s is not a reduction", coll->name);
            if ((o->op = kb_red_op_find(val)) < 0)
                kbc_bad_usage(o, "unknown --op \"%s\"", val);
            continue;
        }
        if (strcmp(a, "--sendrecv") == 0) {
            sendrecv = 1;
            continue;
        }
        if ((val = kb_long_option(argc, argv, &i, "--rounds", usage, coll))) {
            if (kb_parse_int(val, 1, &o->rounds) || o->rounds > 1000)
                kbc_bad_usage(o, "bad --rounds \"%s\" (an integer 1..1000)", val);
            continue;
        }
        if (a[0] != '-' || a[1] == '\0' || a[1] == '-')
            kbc_bad_usage(o, "unexpected argument \"%s\"", a);
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
            kbc_bad_usage(o, "unknown option \"%s\"", a);
        if (p[1] != '\0')
            val = p + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            kbc_bad_usage(o, "option \"%s\" needs a value", a);

        switch (opt) {
        case 'm': {
            const char *colon = strchr(val, ':');
            size_t lo = KB_DEF_MIN, hi = KB_DEF_MAX;
            if (colon) {
                char minpart[64];
                size_t ml = (size_t)(colon - val);
                if (ml >= sizeof(minpart))
                    kbc_bad_usage(o, "bad -m \"%s\"", val);
                memcpy(minpart, val, ml);
                minpart[ml] = '\0';
                if (ml > 0 && kb_parse_size(minpart, &lo))
                    kbc_bad_usage(o, "bad -m minimum in \"%s\"", val);
                if (colon[1] != '\0' && kb_parse_size(colon + 1, &hi))
                    kbc_bad_usage(o, "bad -m maximum in \"%s\"", val);
            } else if (kb_parse_size(val, &hi)) {
                kbc_bad_usage(o, "bad -m \"%s\" (expected [MIN:]MAX in bytes)", val);
            } else if (hi < lo) {
                lo = hi; /* "-m 0": only size 0 */
            }
            if (lo > hi)
                kbc_bad_usage(o, "-m \"%s\": MIN is larger than MAX", val);
            o->min_size = lo;
            o->max_size = hi;
            min_given = colon && colon != val;
            break;
        }
        case 'r':
            if (!coll->rooted)
                kbc_bad_usage(o, "-r: %s has no root", coll->name);
            if (kb_parse_int(val, 0, &o->root))
                kbc_bad_usage(o, "bad -r \"%s\" (a rank >= 0)", val);
            o->root_set = 1;
            break;
        case 'i':
            if (kb_parse_int(val, 1, &o->iters))
                kbc_bad_usage(o, "bad -i \"%s\" (an integer >= 1)", val);
            o->iters_large = o->iters;
            break;
        case 'x':
            if (kb_parse_int(val, 0, &o->warmup))
                kbc_bad_usage(o, "bad -x \"%s\" (an integer >= 0)", val);
            o->warmup_large = o->warmup;
            break;
        case 'a':
            if (nalist == (int)(sizeof(alist) / sizeof(alist[0])))
                kbc_bad_usage(o, "too many -a options%s", "");
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
            kbc_bad_usage(o, "-r %s: not a rank (P is smaller)", v);
        }
    }
    if (coll->sizes == KB_SIZELESS)
        o->min_size = o->max_size = 0;
    if (coll->reduction)
        reduction_sizes(o, min_given);

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
            if (coll->limit)
                add_alg(o, "bw_limit"); /* the copies and combines any algorithm must make */
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
        kbc_bad_usage(o, "--transports: kport has no algorithms for %s", coll->name);
    expand_transports(o);

    /* Validate every kport specification now (same on every rank). */
    for (int i = 0; i < o->nalgs; i++) {
        alg_entry *a = &o->algs[i];
        if (a->native || a->is_ref)
            continue;
        if (coll->kcoll < 0)
            kbc_bad_usage(o, "kport has no algorithms for this collective; use -a native (got \"%s\")", a->spec);
        int rc = kp_set_algorithm((enum kp_coll)coll->kcoll, a->spec);
        if (rc != KP_SUCCESS) {
            char msg[KB_ERR_LEN + KB_NAME_LEN];
            snprintf(msg, sizeof(msg), "-a \"%s\": %s: %s", a->spec, kp_strerror(rc), kp_last_error());
            kbc_bad_usage(o, "%s", msg);
        }
    }
    if (coll->kcoll >= 0) {
        kp_set_algorithm((enum kp_coll)coll->kcoll, NULL);
        /* A forced algorithm that cannot apply must say so, whatever
         * KPORT_FALLBACK says: never measure a silent fallback. */
        kp_set_fallback(KP_FALLBACK_ERROR);
    }
}
