/*
 * kport-bench loggp: measure the machine - LogGP parameters of MPI
 * point-to-point and the costs of kport's shared-memory operations - and
 * write the parameter file (docs/PARAMETERS.md) the cost model reads.
 *
 *   mpirun -np 2 kport-bench loggp [-o params.json] [-m MIN:MAX] [-i N] [-x N] [-n N] [--blocking] [-c]
 *                                  [--format json]
 *
 * Point to point: the parameterised round trip of Kielmann et al. ("Fast
 * measurement of LogP parameters for message passing platforms", 2000), as
 * Netgauge does it. PRTT(n, d, s): rank A sends n messages of s bytes,
 * spinning d ns between them; rank B receives them and answers with one
 * message of s bytes; A's time from its first send to the answer. Every
 * message is sent and received as kport's executor does (MPI_Isend /
 * MPI_Irecv and MPI_Wait, so the overheads include a request's life; A
 * posts the answer's receive before its first send, as both sides of a
 * collective post theirs early), or with MPI_Send / MPI_Recv under
 * --blocking.
 * Per size s (-m, powers of two, default 1:1M; medians of -i runs, default
 * 30, runs more than 5x the median dropped (descheduled), after -x warm-up
 * runs, default 3, the sizes interleaved run by run -
 * up, then down, each timed run after untimed ping-pongs of its size (512
 * up to 64 KiB, LG_SETTLE, else one) so that caches and MPI's state hold
 * what a run of one size would - and a burst of load on shared cores
 * spoils one run of many sizes rather than every run of one; -n messages,
 * default 8):
 *
 *   RTT(s) = PRTT(1, 0, s)                  (one ping-pong)
 *   g(s)   = (PRTT(n, 0, s) - RTT(s)) / (n-1)   the gap at size s
 *   o_s(s) = (PRTT(n, d, s) - RTT(s)) / (n-1) - d, with d = 1.5*g(s) + 1 us,
 *            so that o_s + d exceeds the gap and the sender's overhead shows
 *   o_r(s) = the time of the receive at B when the message has been there for
 *            a while (B spins 1.5*RTT(s) + 1 us after its previous answer)
 *   x(s)   = an exchange: both ranks MPI_Irecv, MPI_Isend, MPI_Waitall (or
 *            MPI_Sendrecv) s bytes with each other, n times back to back;
 *            A's time per exchange over exchanges 2..n; up to 64 KiB
 *            after 512 untimed exchanges of s (LG_SETTLE) instead of
 *            the ping-pongs
 *   x2(s)  = the same with two messages of s bytes each way at once (two
 *            MPI_Irecv, two MPI_Isend, one MPI_Waitall: a round that sends
 *            a peer two blocks, as concurrent_exchange_split does)
 *
 * Fits (tools/bench/fit.c, least squares of relative errors): RTT(s)/2
 * over all sizes is split into pieces at protocol changes (a jump or a
 * change of slope: Open MPI's eager limit and single-copy rendezvous, a
 * cache size; kb_fit_pieces: the best split for every number of pieces,
 * the number by the Bayesian information criterion, never more than
 * needed to fit within 3%; a piece has at least 3 sizes, so -m must reach
 * 3 sizes past a change to see it); a piece's last size is its max_bytes.
 * In each piece, with a + b*s the fit of RTT(s)/2: g + G*s = the fit of
 * g(s) (G at most b: a larger slope of the gap is noise); o_s and o_r the
 * intercepts of the fits of o_s(s), o_r(s); O = b - G, so the CPU's copy
 * shows as O where the gap per byte does not explain the latency per
 * byte; X + XG*s the fit of x(s) (the exchange the cost model prices on
 * its own, docs/PARAMETERS.md); X2 + X2G*s the fit of x2(s) - x(s), what a
 * further exchange with the same peer at once adds; L = a + G - o_s - o_r, so that one message, o_s + O*s + L +
 * (s-1)*G + o_r, is RTT(s)/2 of the fit. Where o_s + o_r exceed a + G (in
 * shared memory the receiver copies while the sender's overhead runs, so
 * the two overlap), L is negative and the overheads keep their measured
 * values (the table says so); an exchange is priced by X, XG. eager_max: the first
 * piece boundary that is a jump (the next piece's fit at its first size
 * >= 1.25x the previous piece's line there), -1 without one.
 * hockney: one line through RTT(s)/2 over all sizes (alpha, beta).
 * call.fixed, call.skew: kport's own cost per call and the entry skew of a
 * barrier-timed call (measure_call below; docs/PARAMETERS.md).
 * compute.reduce: the combine of reductions (KP_OP_REDUCE), rank 0 alone:
 * the executor's own kernel (src/exec/reduce.c, MPI_SUM on MPI_DOUBLE
 * inline, a += b) at every size of whole doubles, in cache while the two
 * buffers fit it; fitted as memcpy (fixed + gamma per byte, a second slope
 * beyond a knee); "kernel" in the file says what ran (lg_measure_reduce).
 *
 * Which ranks: p2p.intra between rank 0 and the lowest rank on its host
 * (MPI_COMM_TYPE_SHARED), p2p.inter between rank 0 and the lowest rank on
 * another host; other ranks wait. With every rank on one host there is no
 * inter pair: MPI carries messages between kport's emulated nodes
 * (KPORT_NODE_SIZE) through the same shared memory, so p2p.inter is
 * written as p2p.intra's measurement, and the output says so (on hosts of
 * one rank each, the other way round, and no shared-memory costs). Hosts
 * are MPI's: on scripts/cluster.sh's hosts (namespaces of one machine, TCP
 * between them) p2p.inter is real cross-host messages. When the ranks on
 * the machine outnumber its cores though no host's do (2 hosts x 2 ranks
 * on 2 cores: machine_oversubscribed), the run counts as oversubscribed:
 * its shared-memory waits yield at once, as kport's own do after 1 us.
 *
 * Shared memory, between rank 0 and its host peer, with the bench's own
 * copy of kport's flag protocol (tools/bench/probe.h, as src/topo/segment.c)
 * on an MPI_Win_allocate_shared segment; each operation timed alone, the
 * clock's own cost subtracted, samples more than 5x the median dropped (a
 * descheduled rank), the 10%-trimmed mean of the rest (medians for the
 * flag and memcpy):
 *   flag        half of a round trip of two flags (A posts, B waits and
 *               posts, A waits), timed one by one: a post seen by a waiter
 *   copy_in     as shm_flat on two ranks makes them, call by call after an
 *   copy_out    MPI_Barrier (as the benchmark times a call): both ranks
 *               copy their block into their slot of this call's half of
 *               the segment (copy_in: lines the peer read two calls ago),
 *               post, copy their block into their receive buffer, wait for
 *               the peer's post and copy the peer's block out (copy_out:
 *               lines the other core has just written); the next call uses
 *               the other half. The mean of the two ranks; samples taken
 *               while both ranks ran on one core (sched_getcpu: copies that
 *               look local) dropped
 *   memcpy      a copy between two private buffers of A
 *   peer_read   as shm_single_copy on two ranks makes it: after a barrier
 *               both post, copy their own block, wait for the peer and
 *               read the peer's block with process_vm_readv at the same
 *               time (contending for memory and page tables), then post and
 *               wait; the mean of the two ranks
 *   peer_write  process_vm_writev of s bytes into B's buffer by A while B
 *               waits (a two-rank gather's single copy)
 *   data_line   both ranks copy 8 B in, post, wait for the other's post and
 *               copy its 8 B out, call after call after a barrier, with the
 *               block in the flag's own line (KP_BUF_LINE) and in a line of
 *               its own (KP_BUF_SHM) alternately: the difference of the
 *               medians (the maximum over the ranks per call), a fixed cost
 *               the model adds to a copy out of the segment
 * each fitted as fixed + per_byte * s (the flag: fixed only; memcpy with a
 * second slope beyond a knee where that halves the error, kb_fit_knee_floor:
 * its buffers outgrow the first-level cache), by relative
 * errors measured against at least the flag's cost (kb_fit_line_floor): a
 * collective of shared-memory steps waits for at least one flag, so costs
 * below it cannot show, while copies of small blocks take a few ns (their
 * stores retire into the store buffer) and would bend the line away from
 * the large ones. Without cross-memory attach (ptrace rules)
 * peer_read/peer_write are written as 0 and reported as not measured:
 * kport never uses them then.
 *
 * -c: per size one untimed exchange each way with the validation pattern,
 * every byte compared; the last copy_out, peer_read and peer_write of each
 * size compared too. -o FILE: write the parameter file (kp_params_save),
 * after kp_params_check; the command line and machine go into "machine".
 *
 * Output: a table per channel (size, RTT/2, g(s), o_s(s), o_r(s), x(s), x2(s), piece)
 * and the fitted pieces; the shared-memory table and fits. --format json:
 * one object per measured point ("kind": "p2p" with "channel", "size",
 * "rtt_half_us", "gap_us", "o_s_us", "o_r_us", "xchg_us", "xchg2_us", "piece"; "kind": "shm" with
 * "op", "size", "time_us"; "kind": "compute", "op": "reduce", "size", "time_us") and per fit ("kind": "fit": "channel", "piece",
 * "max_bytes", "L_ns", "o_s_ns", "o_r_ns", "g_ns", "G_ns_per_byte",
 * "O_ns_per_byte", "X_ns", "XG_ns_per_byte", "X2_ns", "X2G_ns_per_byte", "rms"; or "op", "fixed_ns",
 * "per_byte_ns", with a second slope also "large_from", "large_per_byte_ns"; "op": "reduce" also
 * "kernel"), each with
 * "coll": "loggp", "mpi", "P", "validated", "status", "errors". Last,
 * how loaded the machine looked (text: "# machine load", and "# LOADED"
 * when it was; JSON "kind": "load" with "load_average_start",
 * "load_average_end", "cores", "samples", "dropped", "same_core",
 * "loaded"): loaded when other processes kept at least half the cores
 * busy before the run (the 1-minute load average), more than 1% of the
 * samples were dropped as descheduled, or copies ran with both ranks on
 * one core. Progress goes to stderr, on a terminal only.
 *
 * This file holds the manual, the options and main; loggp.h lists the
 * files of the measurements, the fits and the output.
 */
#include "loggp.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lg_progress; /* rank 0 on a terminal */
int lg_blocking; /* --blocking */
long long lg_n_samples, lg_n_dropped, lg_n_same_cpu;

/* the median of v[0..n) after dropping descheduled samples */
double lg_robust_median(double *v, int n)
{
    int k = kb_drop_outliers(v, n, OUTLIER, 20.0);
    lg_n_samples += n;
    lg_n_dropped += n - k;
    return kb_median(v, k);
}

/* the 10%-trimmed mean of v[0..n) after dropping descheduled samples (short
 * copies: a clock of 10-20 ns steps needs the mean of many samples) */
double lg_robust_mean(double *v, int n)
{
    int k = kb_drop_outliers(v, n, OUTLIER, 20.0);
    lg_n_samples += n;
    lg_n_dropped += n - k;
    return kb_trimmed_mean(v, k, 0.1);
}

static void usage(FILE *f, const void *arg)
{
    (void)arg;
    if (kb_rank != 0)
        return;
    fprintf(f, "Usage: kport-bench loggp [-o params.json] [-m MIN:MAX] [-i N] [-x N] [-n N] [--blocking] [-c]\n"
               "                         [--format json]\n"
               "Measures LogGP parameters (L, o_s, o_r, g, G, O) of MPI point-to-point between rank 0 and\n"
               "a rank of its host (and of another host, if any) by parameterised round trips, and\n"
               "kport's shared-memory costs (flag, copies, single copy) and the combine of reductions\n"
               "(MPI_SUM on doubles with kport's kernel); fits them and writes the\n"
               "parameter file (docs/PARAMETERS.md) with -o. -m: sizes (default 1:1M, powers of two);\n"
               "-i / -x: timed / warm-up runs per point (default 30 / 3); -n: messages per train\n"
               "(default 8); --blocking: MPI_Send/MPI_Recv instead of kport's MPI_Isend/MPI_Irecv and\n"
               "a wait; -c: validate the data of every size.\n");
}

static void parse(int argc, char **argv, lg_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->iters = 30;
    o->warmup = 3;
    o->n = 8;
    const char *m = "1:1M";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val;
        if (kb_common_option(argc, argv, &i, usage, NULL, &o->json, &o->check))
            continue;
        if (strcmp(a, "--blocking") == 0) {
            lg_blocking = 1;
        } else if (strcmp(a, "-m") == 0 || strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0 || strcmp(a, "-n") == 0 ||
                   strcmp(a, "-o") == 0) {
            if (i + 1 >= argc)
                kb_bad_usage(usage, NULL, "option \"%s\" needs a value", a);
            val = argv[++i];
            if (a[1] == 'm')
                m = val;
            else if (a[1] == 'o')
                o->out = val;
            else if (a[1] == 'i' && (kb_parse_int(val, 1, &o->iters) || o->iters > 100000))
                kb_bad_usage(usage, NULL, "bad -i \"%s\" (an integer 1..100000)", val);
            else if (a[1] == 'x' && (kb_parse_int(val, 0, &o->warmup) || o->warmup > 100000))
                kb_bad_usage(usage, NULL, "bad -x \"%s\" (an integer 0..100000)", val);
            else if (a[1] == 'n' && (kb_parse_int(val, 2, &o->n) || o->n > 1000))
                kb_bad_usage(usage, NULL, "bad -n \"%s\" (an integer 2..1000)", val);
        } else {
            kb_bad_usage(usage, NULL, "unknown option \"%s\"", a);
        }
    }
    o->nsizes = kb_size_option(m, o->sizes, LG_MAX_SIZES, usage, NULL);
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof(o->command); i++) {
        int w = snprintf(o->command + used, sizeof(o->command) - used, "%s%s", i ? " " : "",
                         i == 0 ? "kport-bench" : argv[i]);
        if (w < 0 || (size_t)w >= sizeof(o->command) - used)
            break;
        used += (size_t)w;
    }
}

void lg_show_progress(const char *what, size_t size)
{
    if (lg_progress) {
        fprintf(stderr, "\rloggp: %-10s %8zu B   ", what, size);
        fflush(stderr);
    }
}

/* bytes of buf[0..n) that differ from id's pattern for iter */
long long lg_count_bad(const unsigned char *buf, size_t n, uint64_t id, int iter, unsigned char *scratch)
{
    kb_fill_pattern(scratch, n, id, iter, 0);
    long long bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += buf[i] != scratch[i];
    return bad;
}

/* ------------------------------------------------------------------------- */
/* main                                                                       */
/* ------------------------------------------------------------------------- */

/* Ranks that share this machine's kernel outnumber its cores, though no MPI
 * node does: hosts that are namespaces of one machine (scripts/cluster.sh,
 * 2 hosts x 2 ranks on 2 cores). kb_oversubscribed counts an MPI node's
 * ranks; a waiting rank that spins there keeps a core the other host's
 * ranks need, and a flag's round trip measured ~100-250 us instead of
 * ~0.2 us. Ranks are on one machine when /proc/sys/kernel/random/boot_id
 * (the kernel's, the same in every namespace) is the same. */
static int machine_oversubscribed(MPI_Comm comm, int cores)
{
    char id[40] = {0};
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(id, sizeof(id), f))
            id[0] = '\0';
        fclose(f);
    }
    int P, same = 0;
    MPI_Comm_size(comm, &P);
    char *all = malloc((size_t)P * sizeof(id));
    if (!all)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allgather(id, (int)sizeof(id), MPI_CHAR, all, (int)sizeof(id), MPI_CHAR, comm);
    for (int r = 0; r < P; r++)
        same += id[0] && memcmp(all + (size_t)r * sizeof(id), id, sizeof(id)) == 0;
    free(all);
    int mine = same > cores, any;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    return any;
}

static int loggp_main(int argc, char **argv)
{
    lg_opts o;
    parse(argc, argv, &o);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P < 2)
        kb_bad_usage(usage, NULL, "loggp needs at least 2 ranks%s", "");
    lg_progress = kb_rank == 0 && isatty(STDERR_FILENO);

    int *host = malloc((size_t)P * sizeof(int));
    if (!host)
        MPI_Abort(MPI_COMM_WORLD, 1);
    kb_host_map(MPI_COMM_WORLD, host);
    int intra_peer = -1, inter_peer = -1;
    for (int r = P - 1; r >= 1; r--) {
        if (host[r] == host[0])
            intra_peer = r;
        else
            inter_peer = r;
    }
    free(host);
    int cores, oversub = kb_oversubscribed(MPI_COMM_WORLD, &cores);
    oversub = oversub || machine_oversubscribed(MPI_COMM_WORLD, cores);

    size_t maxs = o.sizes[o.nsizes - 1];
    /* two messages of the largest size at once (the exchange of two) */
    unsigned char *buf = malloc(2 * maxs), *buf2 = malloc(2 * maxs), *scratch = malloc(maxs);
    int vn = o.iters * o.nsizes > 1000 ? o.iters * o.nsizes : 1000;
    double *v = malloc((size_t)vn * sizeof(double));
    int ok = buf && buf2 && scratch && v, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!gok) {
        if (kb_rank == 0)
            fprintf(stderr, "kport-bench: loggp: cannot allocate buffers of %zu bytes\n", maxs);
        return 1;
    }
    memset(buf, 0, 2 * maxs);
    memset(buf2, 0, 2 * maxs);

    char mpi[256], knodes[256];
    kb_mpi_library_name(mpi, sizeof(mpi));
    kb_kport_layout(MPI_COMM_WORLD, knodes, sizeof(knodes));
    int hosts, rmin, rmax;
    kb_node_layout(MPI_COMM_WORLD, &hosts, &rmin, &rmax);

    const double load0 = lg_load_average();
    kp_machine m;
    double entry_gap = -1; /* measure_call's diagnostic: how far apart the ranks left the start line (ns) */
    double post_wait = -1; /* and the skew before its cap at one flag (ns) */
    kp_params_init(&m);
    m.cores = cores;
    if (kb_rank == 0 && !o.json) {
        printf("# kport-bench loggp\n# MPI: %s\n# P = %d, %d host%s; kport node layout: %s\n", mpi, P, hosts,
               hosts == 1 ? "" : "s", knodes);
        printf("# sizes %zu..%zu B, %d timed runs (+%d warm-up) per point, trains of %d messages%s\n", o.sizes[0],
               maxs, o.iters, o.warmup, o.n, oversub ? "; OVERSUBSCRIBED (ranks > cores)" : "");
        printf("# messages: %s\n", lg_blocking ? "MPI_Send / MPI_Recv (--blocking)"
                                              : "MPI_Isend / MPI_Irecv + MPI_Wait, as kport's executor");
        printf("# PRTT(n,d,s) (Kielmann et al.): RTT = PRTT(1,0,s); g(s) = (PRTT(n,0,s)-RTT)/(n-1);\n"
               "#   o_s(s) = (PRTT(n,d,s)-RTT)/(n-1) - d; o_r(s) = the receive of a message already there\n");
        fflush(stdout);
    }

    int failures = 0;
    const int peers[2] = {intra_peer, inter_peer};
    kp_channel *chs[2] = {&m.intra, &m.inter};
    kp_linear *hock[2] = {&m.hockney_intra, &m.hockney_inter};
    int measured[2] = {0, 0};
    shm_result shm;
    memset(&shm, 0, sizeof(shm));
    for (int c = 0; c < 2; c++) {
        if (peers[c] < 0)
            continue;
        int color = kb_rank == 0 || kb_rank == peers[c] ? 1 : MPI_UNDEFINED;
        MPI_Comm pc;
        MPI_Comm_split(MPI_COMM_WORLD, color, kb_rank, &pc);
        lg_point pt[LG_MAX_SIZES];
        kb_pieces pcs;
        memset(pt, 0, sizeof(pt));
        memset(&pcs, 0, sizeof(pcs));
        long long bad = 0;
        double scale[KB_MAX_PIECES];
        int xs[KB_MAX_PIECES + 1] = {0};
        for (int p = 0; p < KB_MAX_PIECES; p++)
            scale[p] = 1.0;
        if (pc != MPI_COMM_NULL) {
            lg_measure_p2p(pc, &o, c == 0 ? "intra" : "inter", pt, &bad, buf, buf2, scratch, v);
            if (kb_rank == 0)
                lg_fit_channel(&o, pt, chs[c], &pcs, hock[c], scale, xs);
            if (c == 0) {
                lg_measure_shm(pc, &o, oversub, &shm, buf, buf2, scratch);
                lg_measure_call(pc, &o, oversub, &shm, &m.call, &entry_gap, &post_wait);
            }
            MPI_Comm_free(&pc);
        }
        kb_sleepy_barrier(MPI_COMM_WORLD); /* the other ranks wait here without polling */
        measured[c] = 1;
        if (kb_rank != 0)
            continue;
        if (lg_progress)
            fprintf(stderr, "\r%40s\r", "");
        if (bad) {
            failures++;
            fprintf(stderr, "kport-bench: loggp: p2p.%s: %lld wrong bytes\n", c == 0 ? "intra" : "inter", bad);
        }
        if (!o.json)
            printf("# p2p.%s: MPI point-to-point between world ranks 0 and %d (%s host)\n", c == 0 ? "intra" : "inter",
                   peers[c], c == 0 ? "one" : "two hosts: another");
        lg_print_channel(&o, c == 0 ? "intra" : "inter", pt, chs[c], &pcs, scale, xs, mpi, P, bad);
        fflush(stdout);
    }
    /* the combine of reductions: rank 0 alone, the others asleep */
    lg_reduce red;
    memset(&red, 0, sizeof(red));
    if (kb_rank == 0)
        lg_measure_reduce(&o, &red, buf, buf2);
    kb_sleepy_barrier(MPI_COMM_WORLD);
    if (kb_rank == 0) {
        if (lg_progress)
            fprintf(stderr, "\r%40s\r", "");
        lg_print_reduce(&o, &red, mpi, P);
        if (red.ok) {
            m.reduce = red.fit;
            m.reduce_given = 1;
            snprintf(m.reduce_kernel, sizeof(m.reduce_kernel), "%s", red.kernel);
        }
        if (!measured[1]) {
            m.inter = m.intra;
            m.hockney_inter = m.hockney_intra;
            if (!o.json)
                printf("# p2p.inter = p2p.intra: every rank is on one host, where MPI carries messages between\n"
                       "#   kport's (emulated) nodes through the same shared memory\n");
        } else if (!measured[0]) {
            m.intra = m.inter;
            m.hockney_intra = m.hockney_inter;
            if (!o.json)
                printf("# p2p.intra = p2p.inter: no two ranks share a host; shared-memory costs not measured\n");
        }
        if (measured[0]) {
            if (shm.bad) {
                failures++;
                fprintf(stderr, "kport-bench: loggp: shm: %s\n",
                        shm.bad < 0 ? "not measured" : "wrong bytes after copies or single copies");
            }
            if (shm.bad >= 0)
                lg_print_shm(&o, &shm, mpi, P);
            lg_print_call(&o, &m, post_wait, entry_gap, mpi, P);
            m.flag = shm.fit[OP_FLAG];
            m.copy_in = shm.fit[OP_COPY_IN];
            m.copy_out = shm.fit[OP_COPY_OUT];
            m.memcpy_ = shm.fit[OP_MEMCPY];
            m.peer_read = shm.fit[OP_PEER_READ];
            m.peer_write = shm.fit[OP_PEER_WRITE];
            m.data_line = shm.data_line;
        }
        if (!red.ok) /* the file's default, from the memcpy just measured (docs/PARAMETERS.md) */
            m.reduce = kp_params_reduce_default(&m);
        if (!o.json && oversub)
            printf("# OVERSUBSCRIBED: %d cores, more ranks on a host or the machine: waiting ranks yield, "
                   "times include "
                   "scheduling\n",
                   cores);
    }

    lg_report_load(load0, &o, mpi, P);
    if (o.out && kb_rank == 0)
        failures += lg_write_params(&o, &m, mpi, P);
    if (kb_rank == 0 && !o.json && o.check)
        printf("# Validation: %s\n", failures ? "FAILED" : "passed");
    MPI_Bcast(&failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(buf);
    free(buf2);
    free(scratch);
    free(v);
    return failures ? 1 : 0;
}

const kb_command kb_cmd_loggp = {"loggp", "LogGP parameters and shared-memory costs; writes the parameter file", NULL,
                                 loggp_main};
