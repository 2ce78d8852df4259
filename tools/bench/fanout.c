/*
 * kport-bench fanout: the 1:n n:1 benchmark (Hoefler et al., "A new
 * barrier algorithm for InfiniBand": the root sends one message to each
 * of n peers, all in flight, and waits for every reply), beside its LogP
 * prediction.
 *
 *   mpirun -np N kport-bench fanout [-P MAX] [-m SIZES] [-i N] [-x N] [--params FILE] [-c] [--format json]
 *
 * For P = 2 .. MAX (default: every rank of the run) the first P ranks form
 * a communicator; the other ranks wait without polling (kb_sleepy_barrier).
 * One measured interval, after an MPI_Barrier on a communicator of the
 * bench: the root (rank 0) posts P-1 receives, starts P-1 sends of `size`
 * bytes (one per peer), and waits for all of them; each peer receives and
 * answers with `size` bytes. The root takes the time alone (RTT(P)); the
 * table shows the minimal and median RTT(P) over -i runs (default 100,
 * after -x warm-up runs, default 10) and the median divided by P. -m: the
 * sizes, a list or MIN:MAX in powers of two (default 8,1K,64K).
 *
 * --params FILE (kport-bench loggp -o FILE): the prediction
 *     RTT(P)/P = (4o + 2L + (P-1) * max{g, o}) / P
 * with LogGP's size terms, at s bytes: o = (o_s + o_r + O*s)/2 (a
 * message's CPU time o_s + O*s + o_r split over its two ends), L = L +
 * (s-1)*G, g = max(g, (s-1)*G) (at small s, the paper's LogP formula);
 * the parameters of the piece of the channel the size uses (p2p.intra when
 * the P ranks share a host, else p2p.inter; the piece's index is printed).
 *
 * Oversubscription: when a host runs more of the P ranks than it has
 * cores, the row is marked (text: "oversubscribed", JSON:
 * "oversubscribed": true); ranks then wait for the CPU, which the LogP
 * prediction does not know.
 *
 * -c: every message carries the validation pattern of its (sender,
 * receiver) pair and run (written before the timed interval), and every
 * received byte is compared after it.
 *
 * --format json: one object per (P, size): "coll": "fanout", "mpi", "P",
 * "size", "channel", "rtt_min_us", "rtt_median_us", "rtt_per_p_us",
 * "predicted_per_p_us" and "piece" (null without --params),
 * "oversubscribed" (this P), "run_oversubscribed" (the whole run: MPI may
 * then wait by yielding even at small P), "iterations", "validated",
 * "status", "errors".
 */
#include "fit.h"
#include "harness.h"
#include "params/params.h"
#include "probe.h"

#include <stdlib.h>
#include <string.h>

#define FO_MAX_SIZES 32
#define TAG 78

typedef struct fo_opts {
    size_t sizes[FO_MAX_SIZES];
    int nsizes, maxP, iters, warmup, check, json;
    const char *params;
} fo_opts;

static void usage(FILE *f, const void *arg)
{
    (void)arg;
    if (kb_rank != 0)
        return;
    fprintf(f, "Usage: kport-bench fanout [-P MAX] [-m SIZES] [-i N] [-x N] [--params FILE] [-c] [--format json]\n"
               "The 1:n n:1 benchmark: the root sends one message to each of P-1 peers (all in flight)\n"
               "and waits for every reply; minimal and median RTT(P) and RTT(P)/P for P = 2..MAX\n"
               "(default: all ranks), beside the LogP prediction from --params (kport-bench loggp -o).\n"
               "-m: sizes, MIN:MAX or a list (default 8,1K,64K); -i / -x: timed / warm-up runs\n"
               "(default 100 / 10); -c: validate every message.\n");
}

static void parse(int argc, char **argv, int world, fo_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->iters = 100;
    o->warmup = 10;
    o->maxP = world;
    const char *m = "8,1K,64K";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *val;
        if (kb_common_option(argc, argv, &i, usage, NULL, &o->json, &o->check))
            continue;
        if ((val = kb_long_option(argc, argv, &i, "--params", usage, NULL))) {
            o->params = val;
        } else if (strcmp(a, "-m") == 0 || strcmp(a, "-i") == 0 || strcmp(a, "-x") == 0 || strcmp(a, "-P") == 0) {
            if (i + 1 >= argc)
                kb_bad_usage(usage, NULL, "option \"%s\" needs a value", a);
            val = argv[++i];
            if (a[1] == 'm')
                m = val;
            else if (a[1] == 'i' && (kb_parse_int(val, 1, &o->iters) || o->iters > 1000000))
                kb_bad_usage(usage, NULL, "bad -i \"%s\" (an integer 1..1000000)", val);
            else if (a[1] == 'x' && (kb_parse_int(val, 0, &o->warmup) || o->warmup > 1000000))
                kb_bad_usage(usage, NULL, "bad -x \"%s\" (an integer 0..1000000)", val);
            else if (a[1] == 'P' && (kb_parse_int(val, 2, &o->maxP) || o->maxP > world)) {
                char msg[128];
                snprintf(msg, sizeof(msg), "bad -P \"%s\" (an integer 2..%d, the ranks of the run)", val, world);
                kb_bad_usage(usage, NULL, "%s", msg);
            }
        } else {
            kb_bad_usage(usage, NULL, "unknown option \"%s\"", a);
        }
    }
    o->nsizes = kb_size_option(m, o->sizes, FO_MAX_SIZES, usage, NULL);
    for (int i = 0; i < o->nsizes; i++)
        if (o->sizes[i] > ((size_t)1 << 30) / (size_t)(world > 1 ? world : 1))
            kb_bad_usage(usage, NULL, "-m \"%s\": sizes times ranks must stay below 1 GiB", m);
}

/* LogP's RTT(P)/P in ns with LogGP's size terms (fanout.c's header). */
static double predict(const kp_loggp *q, int P, size_t s)
{
    double sm1 = s > 0 ? (double)(s - 1) : 0.0;
    double o = 0.5 * (q->o_s + q->o_r + q->O * (double)s);
    double L = q->L + sm1 * q->G;
    double g = q->g > sm1 * q->G ? q->g : sm1 * q->G;
    return (4 * o + 2 * L + (P - 1) * (g > o ? g : o)) / P;
}

typedef struct fo_row {
    double min, median; /* ns */
    long long bad;
} fo_row;

/* Runs of one (P, size) on sub (rank 0 the root); the row on the root. */
static void run_size(const fo_opts *o, MPI_Comm sub, MPI_Comm sync, size_t s, unsigned char *sbuf,
                     unsigned char *rbuf, MPI_Request *reqs, double *v, fo_row *row)
{
    int me, P;
    MPI_Comm_rank(sub, &me);
    MPI_Comm_size(sub, &P);
    long long bad = 0;
    for (int r = 0; r < o->warmup + o->iters; r++) {
        if (o->check) {
            if (me == 0)
                for (int p = 1; p < P; p++) {
                    kb_fill_pattern(sbuf + (size_t)p * s, s, kb_pair_id(0, p), r, 0);
                    kb_fill_pattern(rbuf + (size_t)p * s, s, kb_pair_id(p, 0), r, 1);
                }
            else {
                kb_fill_pattern(sbuf, s, kb_pair_id(me, 0), r, 0);
                kb_fill_pattern(rbuf, s, kb_pair_id(0, me), r, 1);
            }
        }
        MPI_Barrier(sync);
        if (me == 0) {
            double t0 = kb_now_ns();
            for (int p = 1; p < P; p++)
                MPI_Irecv(rbuf + (size_t)p * s, (int)s, MPI_BYTE, p, TAG, sub, &reqs[p - 1]);
            for (int p = 1; p < P; p++)
                MPI_Isend(sbuf + (size_t)p * s, (int)s, MPI_BYTE, p, TAG, sub, &reqs[P - 1 + p - 1]);
            MPI_Waitall(2 * (P - 1), reqs, kb_statuses_ignore);
            double t1 = kb_now_ns();
            if (r >= o->warmup)
                v[r - o->warmup] = t1 - t0;
        } else {
            MPI_Recv(rbuf, (int)s, MPI_BYTE, 0, TAG, sub, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)s, MPI_BYTE, 0, TAG, sub);
        }
        if (o->check) {
            if (me == 0) {
                for (int p = 1; p < P; p++) {
                    kb_fill_pattern(sbuf, s, kb_pair_id(p, 0), r, 0); /* block 0 is unused on the root */
                    for (size_t j = 0; j < s; j++)
                        bad += rbuf[(size_t)p * s + j] != sbuf[j];
                }
            } else {
                kb_fill_pattern(sbuf, s, kb_pair_id(0, me), r, 0);
                for (size_t j = 0; j < s; j++)
                    bad += rbuf[j] != sbuf[j];
            }
        }
    }
    MPI_Allreduce(&bad, &row->bad, 1, MPI_LONG_LONG, MPI_SUM, sub);
    if (me == 0) {
        row->median = kb_median(v, o->iters); /* sorted: v[0] is the minimum */
        row->min = v[0];
    }
}

static int fanout_main(int argc, char **argv)
{
    int world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (world < 2)
        kb_bad_usage(usage, NULL, "fanout needs at least 2 ranks%s", "");
    fo_opts o;
    parse(argc, argv, world, &o);

    kp_machine m;
    int have_params = 0;
    if (o.params) {
        char err[KB_ERR_LEN];
        int rc = kp_params_load(o.params, &m, err, (int)sizeof(err));
        if (rc != KP_SUCCESS)
            kb_bad_usage(usage, NULL, "--params: %s", err);
        have_params = 1;
    }

    size_t maxs = o.sizes[o.nsizes - 1];
    unsigned char *sbuf = malloc(maxs * (size_t)o.maxP), *rbuf = malloc(maxs * (size_t)o.maxP);
    MPI_Request *reqs = malloc(2 * (size_t)o.maxP * sizeof(MPI_Request));
    double *v = malloc((size_t)o.iters * sizeof(double));
    int *host = malloc((size_t)world * sizeof(int));
    int ok = sbuf && rbuf && reqs && v && host, gok;
    MPI_Allreduce(&ok, &gok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!gok) {
        if (kb_rank == 0)
            fprintf(stderr, "kport-bench: fanout: cannot allocate buffers of %zu bytes\n", maxs * (size_t)o.maxP);
        return 1;
    }
    memset(sbuf, 0, maxs * (size_t)o.maxP);
    memset(rbuf, 0, maxs * (size_t)o.maxP);
    kb_host_map(MPI_COMM_WORLD, host);
    char mpi[256];
    kb_mpi_library_name(mpi, sizeof(mpi));
    int cores, run_oversub = kb_oversubscribed(MPI_COMM_WORLD, &cores);

    if (kb_rank == 0 && !o.json) {
        printf("# kport-bench fanout (1:n n:1)\n# MPI: %s\n# P = 2..%d of %d ranks; %d cores per host; %d timed runs "
               "(+%d warm-up); validation: %s\n",
               mpi, o.maxP, world, cores, o.iters, o.warmup, o.check ? "on" : "off");
        if (run_oversub)
            printf("# the run has more ranks than cores: MPI may wait by yielding the CPU (Open MPI does with\n"
                   "#   --oversubscribe) even in rows of P <= cores; measure those in a run of as many ranks as cores\n");
        printf("# RTT(P): root's time to send one message to each of P-1 peers and receive every reply (us)\n");
        if (have_params)
            printf("# predicted: (4o + 2L + (P-1)*max{g,o})/P from %s, at s bytes o = (o_s+o_r+O*s)/2,\n"
                   "#   L = L + (s-1)*G, g = max(g, (s-1)*G); channel: intra when the P ranks share a host\n",
                   o.params);
        printf("%-5s%10s%10s%14s%14s%14s%15s%10s\n", "# P", "size(B)", "channel", "RTT min(us)", "RTT med(us)",
               "RTT/P(us)", "predicted/P", "meas/pred");
        fflush(stdout);
    }

    int failures = 0;
    for (int P = 2; P <= o.maxP; P++) {
        MPI_Comm sub, sync;
        MPI_Comm_split(MPI_COMM_WORLD, kb_rank < P ? 0 : MPI_UNDEFINED, kb_rank, &sub);
        if (sub != MPI_COMM_NULL) {
            int oversub = kb_oversubscribed(sub, NULL), onehost = 1;
            for (int r = 1; r < P; r++)
                onehost &= host[r] == host[0];
            const kp_channel *ch = have_params ? (onehost ? &m.intra : &m.inter) : NULL;
            MPI_Comm_dup(sub, &sync);
            for (int i = 0; i < o.nsizes; i++) {
                size_t s = o.sizes[i];
                fo_row row;
                memset(&row, 0, sizeof(row));
                run_size(&o, sub, sync, s, sbuf, rbuf, reqs, v, &row);
                if (row.bad)
                    failures++;
                if (kb_rank != 0)
                    continue;
                const kp_loggp *q = ch ? kp_channel_piece(ch, (int64_t)s) : NULL;
                int piece = q ? (int)(q - ch->piece) : -1;
                double pred = q ? predict(q, P, s) : 0;
                if (row.bad)
                    fprintf(stderr, "kport-bench: fanout P = %d, %zu B: %lld wrong bytes\n", P, s, row.bad);
                if (o.json) {
                    printf("{\"coll\":\"fanout\",\"mpi\":");
                    kb_json_string(stdout, mpi);
                    printf(",\"P\":%d,\"size\":%zu,\"channel\":\"%s\",\"rtt_min_us\":%.3f,\"rtt_median_us\":%.3f,"
                           "\"rtt_per_p_us\":%.4f",
                           P, s, onehost ? "intra" : "inter", row.min * 1e-3, row.median * 1e-3,
                           row.median * 1e-3 / P);
                    if (q)
                        printf(",\"predicted_per_p_us\":%.4f,\"piece\":%d", pred * 1e-3, piece);
                    else
                        printf(",\"predicted_per_p_us\":null,\"piece\":null");
                    printf(",\"oversubscribed\":%s,\"run_oversubscribed\":%s,\"iterations\":%d,\"validated\":%s,"
                           "\"status\":\"%s\"",
                           oversub ? "true" : "false", run_oversub ? "true" : "false", o.iters, o.check && !row.bad ? "true" : "false",
                           row.bad ? "invalid" : "ok");
                    if (o.check)
                        printf(",\"errors\":%lld", row.bad);
                    printf("}\n");
                } else {
                    printf("%-5d%10zu%10s%14.2f%14.2f%14.3f", P, s, onehost ? "intra" : "inter", row.min * 1e-3,
                           row.median * 1e-3, row.median * 1e-3 / P);
                    if (q)
                        printf("%11.3f (%d)%10.2f", pred * 1e-3, piece, pred > 0 ? row.median / P / pred : 0.0);
                    else
                        printf("%15s%10s", "-", "-");
                    printf("%s%s\n", oversub ? "  oversubscribed" : "", row.bad ? "  INVALID" : "");
                }
                fflush(stdout);
            }
            MPI_Comm_free(&sync);
            MPI_Comm_free(&sub);
        }
        kb_sleepy_barrier(MPI_COMM_WORLD);
    }
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (kb_rank == 0 && !o.json && o.check)
        printf("# Validation: %s\n", failures ? "FAILED" : "passed");
    free(sbuf);
    free(rbuf);
    free(reqs);
    free(v);
    free(host);
    return failures ? 1 : 0;
}

const kb_command kb_cmd_fanout = {"fanout", "the 1:n n:1 benchmark: RTT(P)/P beside its LogP prediction", NULL,
                                  fanout_main};
