/*
 * kport-sim: simulate one of kport's collectives at any scale under LogGP,
 * executing the schedules kport's own builders produce (src/sim/sim.h).
 *
 *   kport-sim allgather -a bruck:k=1 -P 1048576 -m 8
 *   kport-sim barrier -a nway_dissemination:n=2 -P 65536 -L 2500 -o 1500 -g 1000 -G 6
 *   kport-sim allgather -a smp_bruck:k=2 -P 65536 --node-size 64 -m 4096 --params p.json
 *   kport-sim alltoall -a pairwise -P 4096 -m 64 --per-rank --format json
 *   kport-sim allreduce -a recursive_doubling -P 1000000 -m 8 --elem 8 --gamma 0.5
 *
 * Collectives: allgather, gather, alltoall, barrier, bcast, scatter, reduce,
 * allreduce, reduce_scatter_block, reduce_scatter. -m is the per-rank block
 * (bcast, reduce, allreduce: the whole vector; reduce_scatter: the whole
 * vector, split into P result blocks of whole elements as kport-check
 * splits it: evenly, or with --uneven rank j's share proportional to
 * j mod 3, kport-check --goal's split); --root r for the rooted ones;
 * reductions: --elem E (bytes of one element, default 8 as kport-check's;
 * -m a multiple of it), --noncommutative (the builders keep rank order or
 * refuse), --gamma ns/byte: the combine's cost (compute.reduce.per_byte;
 * default 1 ns/byte like the GOAL export's calc, or the parameter file's).
 *
 * Costs: LogGOPSim's parameters and units on the command line (-L -o -g -G
 * -O in ns and ns/byte, -S: messages of more than S bytes go rendezvous;
 * defaults LogGOPSim's: L=2500 o=1500 g=1000 G=6 O=0 S=65535), local copies
 * 1 ns per byte and shared-memory flags free; or --params FILE, the machine
 * parameter file `kport-bench loggp` writes (docs/PARAMETERS.md: p2p.intra
 * between ranks of one node, p2p.inter otherwise, the shm section for
 * copies, peer reads/writes and flags), whose values the command line's
 * override (--gamma the file's combine cost); a file's measured exchange (X, XG) prices a receive paired with
 * a send to the same peer in its round, and X2, X2G each further such pair
 * with that peer in the round (--no-exchange: ignore them). Nodes: --node-size n (ranks r*n .. r*n+n-1); --rails r: a
 * node's inter-node messages share r NICs; --ports k: k messages in flight
 * per rank (default 1). The rules: docs/SIMULATOR.md; --rules executor runs
 * the cost model's instead of LogGOPSim's (src/timing/rules.h), the time
 * kport-check --predict prints for the same schedule and parameters.
 *
 * Output: the completion time (max over ranks, which rank, min, median),
 * messages and bytes, the critical path's breakdown, events and the event
 * rate; --per-rank adds every rank's time; --format json prints one JSON
 * object. Progress on stderr once a second when stderr is a terminal and
 * the run takes more than 2 s (-q: never). Exit status 0, 2 on bad input
 * (usage, numbers, parameter file, a builder's refusal), 1 on an internal
 * error (schedules that do not match, out of memory).
 */
#include "kport.h"
#include "params/params.h"
#include "sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *colls[KP_COLL_COUNT] = {"allgather", "barrier", "gather", "alltoall", "bcast", "scatter", "reduce", "allreduce", "reduce_scatter_block", "reduce_scatter"};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kport-sim COLL -a NAME[:k=2,...] -P N [-m BYTES]\n"
            "  COLL: allgather gather alltoall barrier bcast scatter reduce allreduce\n"
            "        reduce_scatter_block reduce_scatter\n"
            "                 [--node-size n] [--root r] [--inplace] [--params FILE.json]\n"
            "                 [--elem E] [--noncommutative] [--gamma ns/byte] [--uneven]\n"
            "                 [-L ns] [-o ns] [-g ns] [-G ns/byte] [-O ns/byte] [-S bytes]\n"
            "                 [--rails r] [--ports k] [--per-rank] [--format text|json] [-q]\n"
            "                 [--loggopsim-zero-bytes] [--no-exchange] [--rules loggopsim|executor]\n"
            "Simulates kport's schedule of the collective under LogGP (docs/SIMULATOR.md).\n"
            "Defaults (LogGOPSim's): L=2500 o=1500 g=1000 G=6 O=0 S=65535, copies and combines 1 ns/byte;\n"
            "reductions: --elem E bytes per element (default 8), --noncommutative, --gamma: the combine's ns/byte;\n"
            "reduce_scatter: -m is the vector, split evenly over the ranks (--uneven: as kport-check --goal);\n"
            "--params FILE: the parameter file of `kport-bench loggp`, overridden by -L..-S;\n"
            "--no-exchange: ignore the file's measured exchanges (X, XG, X2, X2G), LogGP's rule for every receive.\n"
            "--rules executor: the cost model's rules (kport's executor order; no ports, rails, critical path),\n"
            "the time kport-check --predict prints for the same schedule (default loggopsim: LogGOPSim's).\n");
}

static int bad(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "kport-sim: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return 2;
}

static int num(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) {
        char range[96];
        snprintf(range, sizeof range, "a number in %g..%g", lo, hi);
        fprintf(stderr, "kport-sim: %s \"%s\": expected %s\n", opt, s, range);
        return -1;
    }
    *out = v;
    return 0;
}

static int inum(const char *opt, const char *s, double lo, double hi, int64_t *out)
{
    double v;
    if (num(opt, s, lo, hi, &v))
        return -1;
    if (v != floor(v)) {
        fprintf(stderr, "kport-sim: %s \"%s\": expected an integer\n", opt, s);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* the options that take a value */
static int valued(const char *a)
{
    static const char *const opts[] = {"-a",       "-P", "-m", "--node-size", "--root", "--rails", "--ports",
                                       "--params", "--format", "-L", "-o", "-g", "-G", "-O", "-S", "--rules",
                                       "--elem",   "--gamma"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (!strcmp(a, opts[i]))
            return 1;
    return 0;
}

static const char *const hop_name[] = {"send", "take", "copy", "flag", "combine"};

static void print_hop(const kp_sim_hop *h)
{
    printf("    %14.3f us  rank %d ", h->t / 1e3, h->rank);
    switch (h->kind) {
    case KP_SIM_HOP_SEND: printf("sends %lld B to %d\n", (long long)h->len, h->peer); break;
    case KP_SIM_HOP_TAKE: printf("takes in %lld B from %d\n", (long long)h->len, h->peer); break;
    case KP_SIM_HOP_COPY:
        if (h->peer == h->rank)
            printf("copies %lld B\n", (long long)h->len);
        else
            printf("copies %lld B from or to %d\n", (long long)h->len, h->peer);
        break;
    case KP_SIM_HOP_REDUCE: printf("combines %lld B\n", (long long)h->len); break;
    default: printf("sees post %lld of %d\n", (long long)h->len, h->peer); break;
    }
}

typedef struct prog {
    int on, shown;
} prog;

static void progress(void *arg, const char *phase, double sim_ns, uint64_t done, uint64_t total, double wall)
{
    prog *p = arg;
    if (!p->on)
        return;
    if (total)
        fprintf(stderr, "\r[kport-sim] %s: %llu / %llu ranks, %.0f s   ", phase, (unsigned long long)done,
                (unsigned long long)total, wall);
    else
        fprintf(stderr, "\r[kport-sim] %s: t = %.3f us, %llu events, %.0f s   ", phase, sim_ns / 1e3,
                (unsigned long long)done, wall);
    fflush(stderr);
    p->shown = 1;
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", (unsigned char)*s);
        else
            putchar(*s);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    int coll = -1;
    for (int c = 0; argc >= 2 && c < KP_COLL_COUNT; c++)
        if (!strcmp(argv[1], colls[c]))
            coll = c;
    if (coll < 0) {
        if (argc >= 2)
            fprintf(stderr, "kport-sim: unknown collective \"%s\"\n", argv[1]);
        usage(stderr);
        return 2;
    }
    const char *spec = NULL, *pfile = NULL, *format = "text";
    int64_t P = -1, bytes = 8, node_size = 1, root = 0, rails = 0, ports = 1, elem = 8;
    int inplace = 0, per_rank = 0, quiet = 0, zero_wrap = 0, no_exchange = 0, noncomm = 0, elem_given = 0,
        uneven = 0;
    double gamma = NAN;
    kp_timing_rules rules = KP_RULES_LOGGOPSIM;
    /* command-line LogGP values: NAN = not given */
    double L = NAN, o = NAN, g = NAN, G = NAN, O = NAN, S = NAN;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        int64_t iv;
        if (!strcmp(a, "--inplace"))
            inplace = 1, takes = 0;
        else if (!strcmp(a, "--per-rank"))
            per_rank = 1, takes = 0;
        else if (!strcmp(a, "-q"))
            quiet = 1, takes = 0;
        else if (!strcmp(a, "--loggopsim-zero-bytes"))
            zero_wrap = 1, takes = 0;
        else if (!strcmp(a, "--no-exchange"))
            no_exchange = 1, takes = 0;
        else if (!strcmp(a, "--noncommutative"))
            noncomm = 1, takes = 0;
        else if (!strcmp(a, "--uneven"))
            uneven = 1, takes = 0;
        else if (!valued(a))
            return usage(stderr), bad("unknown option \"%s\"%s", a, "");
        else if (!v)
            return usage(stderr), bad("%s needs a value%s", a, "");
        else if (!strcmp(a, "-a"))
            spec = v;
        else if (!strcmp(a, "-P")) {
            if (inum(a, v, 1, 1 << 30, &P))
                return 2;
        } else if (!strcmp(a, "-m")) {
            if (inum(a, v, 0, 1e15, &bytes))
                return 2;
        } else if (!strcmp(a, "--node-size")) {
            if (inum(a, v, 1, 1 << 30, &node_size))
                return 2;
        } else if (!strcmp(a, "--root")) {
            if (inum(a, v, 0, 1 << 30, &root))
                return 2;
        } else if (!strcmp(a, "--rails")) {
            if (inum(a, v, 1, 64, &rails))
                return 2;
        } else if (!strcmp(a, "--ports")) {
            if (inum(a, v, 1, 64, &ports))
                return 2;
        } else if (!strcmp(a, "--elem")) {
            if (inum(a, v, 1, 1 << 20, &elem))
                return 2;
            elem_given = 1;
        } else if (!strcmp(a, "--gamma")) {
            if (num(a, v, 0, 1e6, &gamma))
                return 2;
        } else if (!strcmp(a, "--params"))
            pfile = v;
        else if (!strcmp(a, "--rules")) {
            if (kp_timing_rules_parse(v, &rules))
                return bad("--rules \"%s\": expected loggopsim or executor%s", v, "");
        } else if (!strcmp(a, "--format")) {
            if (strcmp(v, "text") && strcmp(v, "json"))
                return bad("--format \"%s\": expected text or json%s", v, "");
            format = v;
        } else if (!strcmp(a, "-L")) {
            if (num(a, v, -1e12, 1e12, &L))
                return 2;
        } else if (!strcmp(a, "-o")) {
            if (num(a, v, 0, 1e12, &o))
                return 2;
        } else if (!strcmp(a, "-g")) {
            if (num(a, v, 0, 1e12, &g))
                return 2;
        } else if (!strcmp(a, "-G")) {
            if (num(a, v, 0, 1e12, &G))
                return 2;
        } else if (!strcmp(a, "-O")) {
            if (num(a, v, 0, 1e12, &O))
                return 2;
        } else if (!strcmp(a, "-S")) {
            if (inum(a, v, 0, 9e18, &iv))
                return 2;
            S = (double)iv;
        } else
            return usage(stderr), bad("unknown option \"%s\"%s", a, "");
        i += takes;
    }
    if (!spec)
        return bad("-a NAME is required (an algorithm of %s)%s", colls[coll], "");
    if (P < 1)
        return bad("-P N is required (N >= 1)%s%s", "", "");
    if (root >= P)
        return bad("--root must be below P%s%s", "", "");
    if (coll == KP_COLL_BARRIER)
        bytes = 0;
    const int red = coll == KP_COLL_REDUCE || coll == KP_COLL_ALLREDUCE || coll == KP_COLL_REDUCE_SCATTER_BLOCK ||
                    coll == KP_COLL_REDUCE_SCATTER;
    if (!red && (elem_given || noncomm || !isnan(gamma)))
        return bad("--elem, --noncommutative and --gamma are for reductions (reduce, allreduce, "
                   "reduce_scatter_block, reduce_scatter), not %s%s", colls[coll], "");
    if (uneven && coll != KP_COLL_REDUCE_SCATTER)
        return bad("--uneven is reduce_scatter's%s%s", "", "");
    if (!red)
        elem = 1;
    if (red && bytes % elem) {
        char what[96];
        snprintf(what, sizeof what, "-m %lld is not a whole number of %lld-byte elements", (long long)bytes,
                 (long long)elem);
        return bad("%s (--elem)%s", what, "");
    }

    kp_sim_config c;
    memset(&c, 0, sizeof c);
    c.coll = coll;
    char err[512];
    if (kp_algo_parse(coll, spec, &c.algo, &c.prm, err, sizeof err))
        return bad("%s%s", err, "");
    if (!c.algo)
        return bad("-a %s: name an algorithm (\"auto\" is kport's run-time selection, not simulated)%s", spec, "");
    if (pfile) {
        if (kp_params_load(pfile, &c.m, err, sizeof err))
            return bad("%s%s", err, "");
        for (int ch = 0; ch < 2; ch++) {
            kp_channel *x = ch ? &c.m.inter : &c.m.intra;
            for (int k = 0; k < x->npieces; k++) {
                kp_loggp *p = &x->piece[k];
                if (!isnan(L)) p->L = L;
                if (!isnan(o)) p->o_s = p->o_r = o;
                if (!isnan(g)) p->g = g;
                if (!isnan(G)) p->G = G;
                if (!isnan(O)) p->O = O;
                if (no_exchange) p->has_x = p->has_x2 = 0;
            }
            if (!isnan(S))
                x->eager_max = (int64_t)S;
        }
        if (red && !c.m.reduce_given && isnan(gamma) && !quiet)
            fprintf(stderr,
                    "kport-sim: note: %s has no compute.reduce; combines cost its shm.memcpy x %.1f per byte "
                    "(docs/PARAMETERS.md)\n",
                    pfile, KP_REDUCE_DEFAULT_SCALE);
    } else
        kp_sim_machine_loggp(&c.m, isnan(L) ? 2500 : L, isnan(o) ? 1500 : o, isnan(g) ? 1000 : g,
                             isnan(G) ? 6 : G, isnan(O) ? 0 : O, isnan(S) ? 65535 : (int64_t)S);
    if (!isnan(gamma)) /* one slope: gamma per byte, no fixed cost */
        c.m.reduce = (kp_linear){.per_byte = gamma};
    if (kp_params_check(&c.m, err, sizeof err))
        return bad("parameters: %s%s", err, "");
    c.P = (int)P;
    c.bytes = bytes;
    c.node_size = (int)node_size;
    c.root = (int)root;
    c.inplace = inplace;
    c.rails = (int)rails;
    c.ports = (int)ports;
    c.zero_wrap = zero_wrap;
    c.rules = rules;
    c.elem = elem;
    c.noncommutative = noncomm;
    int64_t *block_off = NULL;
    if (coll == KP_COLL_REDUCE_SCATTER) {
        block_off = malloc(((size_t)c.P + 1) * sizeof *block_off);
        if (!block_off)
            return fprintf(stderr, "kport-sim: out of memory for %d result blocks\n", c.P), 1;
        kp_sim_split_blocks(c.P, bytes, elem, uneven, block_off);
        c.block_off = block_off;
    }
    const int ex = rules == KP_RULES_EXECUTOR;
    prog pg = {!quiet && isatty(2), 0};
    c.progress = progress;
    c.progress_arg = &pg;

    kp_sim_result r;
    int rc = kp_sim_run(&c, &r);
    free(block_off);
    if (pg.shown)
        fprintf(stderr, "\n");
    if (rc == KP_SUCCESS && r.refused) {
        fprintf(stderr, "kport-sim: %s refused: %s\n", r.algorithm, r.msg);
        return 2;
    }
    if (rc == KP_ERR_PARAM) {
        fprintf(stderr, "kport-sim: %s\n", r.msg);
        return 2;
    }
    if (rc != KP_SUCCESS) {
        fprintf(stderr, "kport-sim: %s: %s\n", r.algorithm, r.msg);
        return 1;
    }
    const double wall = r.build_s + r.sim_s;
    const double rate = r.sim_s > 0 ? (double)r.events / r.sim_s : 0.0;
    double cpsum = 0;
    for (int k = 0; k < KP_SIM_NCAT; k++)
        cpsum += r.cp[k];
    const kp_loggp *pi = &c.m.inter.piece[0];
    if (!strcmp(format, "json")) {
        printf("{\"coll\": ");
        json_str(colls[coll]);
        printf(", \"algorithm\": ");
        json_str(r.algorithm);
        printf(", \"P\": %d, \"node_size\": %d, \"rails\": %d, \"ports\": %d, \"bytes\": %lld, \"root\": %d, "
               "\"inplace\": %s,\n",
               c.P, c.node_size, c.rails, c.ports, (long long)c.bytes, c.root, inplace ? "true" : "false");
        printf(" \"max_time_ns\": %.17g, \"slowest_rank\": %d, \"min_time_ns\": %.17g, \"median_time_ns\": %.17g,\n",
               r.max_ns, r.slowest_rank, r.min_ns, r.median_ns);
        printf(" \"messages\": %lld, \"msg_bytes\": %lld, \"rendezvous\": %lld, \"copies\": %lld, \"copy_bytes\": %lld, "
               "\"posts\": %lld, \"waits\": %lld, \"rounds\": %d,\n",
               (long long)r.messages, (long long)r.msg_bytes, (long long)r.rendezvous, (long long)r.copies,
               (long long)r.copy_bytes, (long long)r.posts, (long long)r.waits, r.max_rounds);
        if (red) {
            printf(" \"elem\": %lld, \"commutative\": %s, \"combines\": %lld, \"combine_bytes\": %lld, "
                   "\"reduce_fixed_ns\": %.9g, \"reduce_ns_per_byte\": %.9g,",
                   (long long)elem, noncomm ? "false" : "true", (long long)r.reduces, (long long)r.reduce_bytes,
                   c.m.reduce.fixed, c.m.reduce.per_byte);
            if (c.m.reduce.large_from > 0)
                printf(" \"reduce_large_from\": %lld, \"reduce_large_ns_per_byte\": %.9g,",
                       (long long)c.m.reduce.large_from, c.m.reduce.large_per_byte);
            printf("\n");
        }
        printf(" \"events\": %llu, \"queue_pops\": %llu, \"events_per_s\": %.6g, \"wall_s\": %.6g, \"build_s\": %.6g, "
               "\"sim_s\": %.6g, \"mem_bytes\": %zu,\n",
               (unsigned long long)r.events, (unsigned long long)r.pops, rate, wall, r.build_s, r.sim_s, r.mem_bytes);
        if (ex) /* the executor's rules track no critical path */
            printf(" \"rules\": \"executor\", \"critical_path\": null,\n \"params\": {");
        else {
            printf(" \"critical_path\": {\"rank\": %d, \"length_ns\": %.17g, \"messages\": %lld", r.slowest_rank,
                   r.max_ns, (long long)r.cp_messages);
            for (int k = 0; k < KP_SIM_NCAT; k++)
                printf(", \"%s_ns\": %.9g", kp_sim_cat_name[k], r.cp[k]);
            printf(", \"hops\": %d", r.nchain);
            if (r.nchain >= 0 && r.nchain <= 1000) {
                printf(",\n  \"chain\": [");
                for (int i = 0; i < r.nchain; i++)
                    printf("%s{\"t_ns\": %.17g, \"rank\": %d, \"op\": \"%s\", \"peer\": %d, \"bytes\": %lld}",
                           i ? ", " : "", r.chain[i].t, r.chain[i].rank, hop_name[r.chain[i].kind], r.chain[i].peer,
                           (long long)r.chain[i].len);
                printf("]");
            }
            printf("},\n \"params\": {");
        }
        if (pfile) {
            printf("\"file\": ");
            json_str(pfile);
            printf(", \"inter\": {\"L\": %.9g, \"o_s\": %.9g, \"o_r\": %.9g, \"g\": %.9g, \"G\": %.9g, \"O\": %.9g, "
                   "\"eager_max\": %lld",
                   pi->L, pi->o_s, pi->o_r, pi->g, pi->G, pi->O, (long long)kp_channel_eager_max(&c.m.inter));
            if (pi->has_x)
                printf(", \"X\": %.9g, \"XG\": %.9g", pi->X, pi->XG);
            if (pi->has_x2)
                printf(", \"X2\": %.9g, \"X2G\": %.9g", pi->X2, pi->X2G);
            printf("}");
        } else
            printf("\"L\": %.9g, \"o\": %.9g, \"g\": %.9g, \"G\": %.9g, \"O\": %.9g, \"S\": %lld", pi->L, pi->o_s, pi->g,
                   pi->G, pi->O, (long long)c.m.inter.eager_max);
        printf("}");
        if (per_rank) {
            printf(",\n \"rank_ns\": [");
            for (int i = 0; i < c.P; i++)
                printf("%s%.17g", i ? ", " : "", r.rank_ns[i]);
            printf("]");
        }
        printf("}\n");
    } else {
        printf("kport-sim %s %s, P = %d, node size %d, %lld B per rank%s\n", colls[coll], r.algorithm, c.P,
               c.node_size, (long long)c.bytes, inplace ? ", in place" : "");
        if (pfile) {
            printf("parameters    %s (p2p.inter piece 1: L=%g o_s=%g o_r=%g g=%g G=%g O=%g", pfile, pi->L, pi->o_s,
                   pi->o_r, pi->g, pi->G, pi->O);
            if (pi->has_x)
                printf(" X=%g XG=%g", pi->X, pi->XG);
            if (pi->has_x2)
                printf(" X2=%g X2G=%g", pi->X2, pi->X2G);
            printf(", eager up to %lld B)\n", (long long)kp_channel_eager_max(&c.m.inter));
        } else
            printf("parameters    L=%g o=%g g=%g G=%g O=%g S=%lld (ns, ns/byte), copies 1 ns/byte\n", pi->L, pi->o_s,
                   pi->g, pi->G, pi->O, (long long)c.m.inter.eager_max);
        if (red)
            printf("reduction     %lld B elements, %scommutative; combines %g ns + %g ns/byte%s\n", (long long)elem,
                   noncomm ? "non-" : "", c.m.reduce.fixed, c.m.reduce.per_byte,
                   c.m.reduce.large_from > 0 ? " (a second slope beyond large_from)" : "");
        if (c.rails || c.ports > 1) {
            printf("network       %d port%s per rank", c.ports, c.ports == 1 ? "" : "s");
            if (c.rails)
                printf("; %d rail%s per node shared by its inter-node messages", c.rails, c.rails == 1 ? "" : "s");
            printf("\n");
        }
        printf("time          %.3f us (max over ranks, rank %d); min %.3f us, median %.3f us\n", r.max_ns / 1e3,
               r.slowest_rank, r.min_ns / 1e3, r.median_ns / 1e3);
        printf("messages      %lld (%lld bytes on the network, %lld rendezvous); %lld copies (%lld bytes)\n",
               (long long)r.messages, (long long)r.msg_bytes, (long long)r.rendezvous, (long long)r.copies,
               (long long)r.copy_bytes);
        if (red)
            printf("combines      %lld (%lld bytes)\n", (long long)r.reduces, (long long)r.reduce_bytes);
        if (ex)
            printf("rules         executor (the cost model's: kport's executor order; no critical path)\n");
        else
            printf("critical path %.3f us to rank %d's completion, %lld messages on it:\n", r.max_ns / 1e3,
                   r.slowest_rank, (long long)r.cp_messages);
        for (int k = 0; k < KP_SIM_NCAT; k++)
            if (r.cp[k] != 0)
                printf("  %-10s %14.3f us %6.1f%%\n", kp_sim_cat_name[k], r.cp[k] / 1e3,
                       cpsum > 0 ? 100.0 * r.cp[k] / cpsum : 0.0);
        if (r.nchain > 0) {
            printf("  the chain, %d hops (start time, what):\n", r.nchain);
            for (int i = 0; i < r.nchain; i++) {
                if (r.nchain > 24 && i == 8) {
                    printf("    ... %d more hops ...\n", r.nchain - 20);
                    i = r.nchain - 12;
                }
                print_hop(&r.chain[i]);
            }
        } else if (r.nchain < 0 && !ex)
            printf("  (the chain of hops is not listed: more than 4M hops to log)\n");
        if (ex)
            printf("walk          rounds priced in %.3f s; schedules built in %.3f s\n", r.sim_s, r.build_s);
        else
            printf("events        %llu (%llu queue pops), simulated in %.3f s: %.3g events/s; schedules built in "
                   "%.3f s\n",
                   (unsigned long long)r.events, (unsigned long long)r.pops, r.sim_s, rate, r.build_s);
        printf("wall          %.3f s, %.1f MiB\n", wall, (double)r.mem_bytes / (1 << 20));
        if (per_rank)
            for (int i = 0; i < c.P; i++)
                printf("rank %d %.17g\n", i, r.rank_ns[i]);
    }
    kp_sim_result_free(&r);
    return 0;
}
