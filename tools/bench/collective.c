/*
 * kport-bench's collective runner: native MPI collectives and every kport
 * algorithm side by side, measured in the same run. Serves every
 * subcommand that is a kb_coll (allgather.c, barrier.c, gather.c,
 * alltoall.c, bcast.c, scatter.c, reduce.c, allreduce.c,
 * reduce_scatter_block.c, reduce_scatter.c; their headers say what size
 * and -c mean for each; reduction.c holds the reductions' types, ops and
 * values).
 *
 *   mpirun -np P kport-bench allgather|barrier|gather|alltoall|bcast|scatter|reduce|allreduce|
 *                            reduce_scatter_block|reduce_scatter
 *                            [-m [MIN:]MAX] [-i N] [-x N] [-f] [-c] [-r ROOT]
 *                            [--type double|float|int|...] [--op sum|max|...]
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
 * many bytes as its receive buffer holds (P*size) from a buffer of its own
 * (bcast, scatter and the reductions: the collective's copy_bytes, one
 * block). "sendrecv" (named in -a, or added by --sendrecv) is another:
 * every rank exchanges size bytes with rank ^ 1 (MPI_Irecv, MPI_Isend,
 * MPI_Waitall; a rank without that partner, the last of an odd P, only
 * takes part in the timing), the exchange loggp's parameter X fits,
 * measured in the same run. "bw_limit" (allreduce, in its default list) is
 * a third: the copies and combines any algorithm must make (allreduce.c's
 * header), timed like the others; every record of a size then carries its
 * median ("bw_limit_us", and "bw_limit_ratio" = median / bw_limit) and
 * the text output a table of each column's median over it.
 *
 * Validation (-c): every iteration's send buffer is written with the
 * call's pattern and the receive buffer poisoned before the barrier, and
 * the collective's check runs after t1 (untimed); see each collective's
 * header for what it compares. Exit status 1 on any mismatch or error.
 * KPORT_BENCH_CORRUPT=B tests the check itself: rank 0 inverts byte B of
 * its receive buffer (B past the used part: the guard) after every
 * isolated call, and every column must fail validation.
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
 *
 * This file holds the manual and kb_coll_main (sizes, buffers, rounds,
 * rows); collective.h lists the files of the options, the measurement and
 * the report.
 */
#include "harness.h"
#include "collective.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------- */

int kb_coll_main(const kb_coll *bc, int argc, char **argv)
{
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);

    options o;
    kbc_parse_options(bc, argc, argv, &o);

    /* Sizes: OSU's MIN, 2*MIN, ... (0 first when MIN is 0, then one
     * element: 1 byte, or a reduction's element size). */
    int nsizes = 0;
    size_t sizes[KB_MAX_SIZES];
    {
        size_t s = o.min_size;
        if (s == 0) {
            sizes[nsizes++] = 0;
            s = bc->reduction ? kb_red_elem(o.type) : 1;
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
        kbc_bad_usage(&o, "-m: maximum size too large for %s at this P", bc->native_call);

    kb_ctx cx;
    memset(&cx, 0, sizeof(cx));
    MPI_Comm sync;
    MPI_Comm_dup(MPI_COMM_WORLD, &sync);
    kb_sync_open(sync, kb_oversubscribed(MPI_COMM_WORLD, NULL), &kbc_start);
    MPI_Comm_dup(MPI_COMM_WORLD, &cx.comm);
    cx.rank = rank;
    cx.P = P;
    cx.root = o.root;
    cx.sbuf_len = sbytes;
    cx.rbuf_len = rbytes;
    cx.sbuf = malloc(sbytes ? sbytes : 1);
    cx.rbuf = malloc(rbytes + KB_GUARD);
    cx.type = o.type;
    cx.op = o.op;
    cx.elem = bc->reduction ? kb_red_elem(o.type) : 1;
    cx.mtype = bc->reduction ? kb_red_mpi_type(o.type) : MPI_BYTE;
    cx.mop = kb_red_mpi_op(o.op);
    cx.aux = bc->limit ? malloc(sbytes ? sbytes : 1) : NULL;
    int maxit = o.iters > o.iters_large ? o.iters : o.iters_large;
    /* every (algorithm, size)'s times, kept over the rounds */
    double *times = malloc((size_t)o.nalgs * (size_t)nsizes * (size_t)maxit * sizeof(double));
    double *maxes = malloc((size_t)maxit * sizeof(double));
    result *res = calloc((size_t)o.nalgs * (size_t)nsizes, sizeof(result));
    run_state *st = calloc((size_t)o.nalgs * (size_t)nsizes, sizeof(run_state));
    int ok = cx.sbuf && cx.rbuf && (cx.aux || !bc->limit) && times && maxes && res && st, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!gok) {
        if (rank == 0)
            fprintf(stderr, "kport-bench: cannot allocate buffers for %zu bytes (P = %d)\n", o.max_size, P);
        return 1;
    }
    /* Touch the buffers once so first-touch page faults are not timed. */
    memset(cx.sbuf, 0, sbytes ? sbytes : 1);
    memset(cx.rbuf, 0, rbytes + KB_GUARD);
    if (cx.aux)
        memset(cx.aux, 0, sbytes ? sbytes : 1);

    run_env env;
    env.P = P;
    kb_mpi_library_name(env.mpi, sizeof(env.mpi));
    kb_node_layout(MPI_COMM_WORLD, &env.hosts, &env.rmin, &env.rmax);
    kb_kport_layout(MPI_COMM_WORLD, env.kport_nodes, sizeof(env.kport_nodes));
    kp_layout layout;
    int have_layout = 0;
    if (o.predict) {
        if (kbc_kport_layout(cx.comm, &layout)) {
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
            rewrite[si] = kbc_measure_rewrite(&o, &cx, warm, iters, times, maxes, sync);
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
                kbc_run_round(&o, &cx, &o.algs[ai], k, rwarm, share, times + cell * maxit, &st[cell], &res[cell], sync);
            }
        }
    if (show)
        fprintf(stderr, "\r%60s\r", "");
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        cx.size = size;
        for (int ai = 0; ai < o.nalgs; ai++) {
            const size_t cell = (size_t)ai * nsizes + si;
            kbc_finish_alg(&o, &cx, &o.algs[ai], rewrite[si], times + cell * maxit, maxes, &st[cell], &res[cell], sync);
        }
        if (rank == 0 && have_layout)
            for (int ai = 0; ai < o.nalgs; ai++)
                kbc_predict_row(&o, &layout, P, size, &o.algs[ai], &res[(size_t)ai * nsizes + si]);
        for (int ai = 0; ai < o.nalgs; ai++) /* the bw_limit column's median beside every row of the size */
            if (o.algs[ai].is_limit && size > 0 && res[(size_t)ai * nsizes + si].status == RES_OK)
                for (int aj = 0; aj < o.nalgs; aj++) {
                    res[(size_t)aj * nsizes + si].has_limit = 1;
                    res[(size_t)aj * nsizes + si].limit = res[(size_t)ai * nsizes + si].t.median;
                }

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
                kbc_print_header(&o, &env);
        }
        if (!labels_ready || rank != 0)
            continue;
        for (; emitted <= si; emitted++) {
            if (o.json) {
                for (int ai = 0; ai < o.nalgs; ai++)
                    kbc_json_line(&o, env.mpi, P, env.hosts, sizes[emitted], &o.algs[ai],
                              &res[(size_t)ai * nsizes + emitted], rewrite[emitted]);
            } else {
                printf("%-10zu", sizes[emitted]);
                for (int ai = 0; ai < o.nalgs; ai++)
                    kbc_text_cell(&o.algs[ai], &res[(size_t)ai * nsizes + emitted]);
                if (o.b2b)
                    printf("%12.2f", rewrite[emitted] / o.b2b * 1e6);
                printf("\n");
            }
        }
        fflush(stdout);
    }

    if (rank == 0 && !o.json) {
        kbc_print_limits(&o, sizes, nsizes, res);
        kbc_print_footer(&o, sizes, nsizes, res, failures);
    }

    if (bc->kcoll >= 0)
        kp_set_algorithm((enum kp_coll)bc->kcoll, NULL);
    free(res);
    free(times);
    free(maxes);
    free(st);
    free(cx.sbuf);
    free(cx.rbuf);
    free(cx.aux);
    free(cx.counts);
    free(cx.displs);
    free(o.algs);
    if (have_layout)
        kp_layout_free(&layout);
    MPI_Comm_free(&cx.comm);
    kb_sync_close(&kbc_start);
    MPI_Comm_free(&sync);
    return failures ? 1 : 0;
}
