/*
 * kport-bench loggp: its output. Per channel the points and the fitted
 * pieces, the shared-memory table and fits, kport's cost per call, the
 * machine's load (text, or one JSON object per point and fit: the formats
 * are in the manual at the top of loggp.c), and the parameter file of -o.
 */
#include "loggp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const op_names[OP_COUNT] = {"flag", "copy_in", "copy_out", "memcpy", "peer_read", "peer_write"};

/* the 1-minute load average (/proc/loadavg), -1 if unknown */
double lg_load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static void copy_str(char *dst, size_t n, const char *src)
{
    size_t l = strnlen(src, n - 1);
    memcpy(dst, src, l);
    dst[l] = '\0';
}

void lg_json_tail(const char *mpi, int P, const lg_opts *o, long long bad)
{
    printf(",\"mpi\":");
    kb_json_string(stdout, mpi);
    printf(",\"P\":%d,\"iterations\":%d,\"validated\":%s,\"status\":\"%s\"", P, o->iters,
           o->check && bad == 0 ? "true" : "false", bad ? "invalid" : "ok");
    if (o->check)
        printf(",\"errors\":%lld", bad);
    printf("}\n");
}

/* How loaded the machine looked (rank 0 prints; collective over
 * MPI_COMM_WORLD): the load average before and after, on how many cores,
 * and the samples dropped as descheduled or with both ranks on one core.
 * Loaded: other processes kept at least half the cores busy before the
 * run (our P ranks want cores of their own), or more than 1% of the
 * samples were dropped, or any ran with both ranks on one core. */
void lg_report_load(double load0, const lg_opts *o, const char *mpi, int P)
{
    long long mine[2] = {lg_n_samples, lg_n_dropped}, all[2];
    MPI_Reduce(mine, all, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (kb_rank != 0)
        return;
    double load1 = lg_load_average();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int loaded = (load0 >= 0 && cores > 0 && load0 >= 0.5 * (double)cores) || all[1] * 100 > all[0] ||
                 lg_n_same_cpu > 0;
    if (o->json) {
        printf("{\"coll\":\"loggp\",\"kind\":\"load\",\"load_average_start\":%.2f,\"load_average_end\":%.2f,"
               "\"cores\":%ld,\"samples\":%lld,\"dropped\":%lld,\"same_core\":%lld,\"loaded\":%s",
               load0, load1, cores, all[0], all[1], lg_n_same_cpu, loaded ? "true" : "false");
        lg_json_tail(mpi, P, o, 0);
        return;
    }
    printf("# machine load: 1-minute load average %.2f before, %.2f after, %ld cores; %lld of %lld samples\n"
           "#   dropped (> %.0fx the median: descheduled), %lld copy samples with both ranks on one core\n",
           load0, load1, cores, all[1], all[0], OUTLIER, lg_n_same_cpu);
    if (loaded)
        printf("# LOADED: other work shared the cores; the parameters may be high (rerun when quiet)\n");
}

void lg_print_channel(const lg_opts *o, const char *name, const lg_point *pt, const kp_channel *ch,
                      const kb_pieces *pcs, const double *scale, const int *xs, const char *mpi, int P,
                      long long bad)
{
    if (o->json) {
        for (int i = 0; i < o->nsizes; i++) {
            printf("{\"coll\":\"loggp\",\"kind\":\"p2p\",\"channel\":\"%s\",\"size\":%zu,\"rtt_half_us\":%.4f,"
                   "\"gap_us\":%.4f,\"o_s_us\":%.4f,\"o_r_us\":%.4f,\"xchg_us\":%.4f,\"xchg2_us\":%.4f,"
                   "\"piece\":%d",
                   name, o->sizes[i], pt[i].rtt_half * 1e-3, pt[i].gap * 1e-3, pt[i].o_s * 1e-3, pt[i].o_r * 1e-3,
                   pt[i].xchg * 1e-3, pt[i].xchg2 * 1e-3, pt[i].piece);
            lg_json_tail(mpi, P, o, bad);
        }
        for (int p = 0; p < ch->npieces; p++) {
            const kp_loggp *q = &ch->piece[p];
            printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"channel\":\"%s\",\"piece\":%d,\"max_bytes\":%lld,"
                   "\"L_ns\":%.2f,\"o_s_ns\":%.2f,\"o_r_ns\":%.2f,\"g_ns\":%.2f,\"G_ns_per_byte\":%.5f,"
                   "\"O_ns_per_byte\":%.5f,\"X_ns\":%.2f,\"XG_ns_per_byte\":%.5f,\"X2_ns\":%.2f,"
                   "\"X2G_ns_per_byte\":%.5f,\"rms\":%.4f",
                   name, p, (long long)q->max_bytes, q->L, q->o_s, q->o_r, q->g, q->G, q->O, q->X, q->XG, q->X2,
                   q->X2G, pcs->piece[p].rms);
            lg_json_tail(mpi, P, o, bad);
        }
        return;
    }
    printf("%-12s%14s%12s%12s%12s%12s%12s%7s\n", "# size(B)", "RTT/2(us)", "g(s)(us)", "o_s(us)", "o_r(us)",
           "xchg(us)", "xchg2(us)", "piece");
    for (int i = 0; i < o->nsizes; i++)
        printf("%-12zu%14.3f%12.3f%12.3f%12.3f%12.3f%12.3f%7d\n", o->sizes[i], pt[i].rtt_half * 1e-3,
               pt[i].gap * 1e-3, pt[i].o_s * 1e-3, pt[i].o_r * 1e-3, pt[i].xchg * 1e-3, pt[i].xchg2 * 1e-3,
               pt[i].piece);
    printf("# p2p.%s: %d piece%s (rms error of RTT/2: one line %.1f%%", name, pcs->npieces,
           pcs->npieces == 1 ? "" : "s", 100 * pcs->rms_one);
    for (int p = 0; p < pcs->npieces && pcs->npieces > 1; p++)
        printf("%s%.1f%%", p == 0 ? "; pieces " : ", ", 100 * pcs->piece[p].rms);
    printf(")\n");
    for (int p = 1; p < pcs->npieces; p++)
        printf("#   %s between %zu and %zu bytes\n",
               xs[p] ? "the exchange's slope changes" : "a protocol change", o->sizes[pcs->start[p] - 1],
               o->sizes[pcs->start[p]]);
    if (ch->eager_max >= 0)
        printf("#   eager limit: %lld bytes (the first jump; larger messages rendezvous)\n", (long long)ch->eager_max);
    else
        printf("#   eager limit: none found (no jump between pieces: every message eager)\n");
    printf("%-9s%11s%10s%10s%10s%10s%12s%12s%10s%12s%10s%12s\n", "# piece", "max_bytes", "L(ns)", "o_s(ns)",
           "o_r(ns)", "g(ns)", "G(ns/B)", "O(ns/B)", "X(ns)", "XG(ns/B)", "X2(ns)", "X2G(ns/B)");
    for (int p = 0; p < ch->npieces; p++) {
        const kp_loggp *q = &ch->piece[p];
        printf("# %-7d%11lld%10.1f%10.1f%10.1f%10.1f%12.5f%12.5f%10.1f%12.5f%10.1f%12.5f", p, (long long)q->max_bytes,
               q->L, q->o_s, q->o_r, q->g, q->G, q->O, q->X, q->XG, q->X2, q->X2G);
        if (scale[p] <= 0.0)
            printf("  (RTT/2's line starts below 0: fixed costs 0)");
        else if (q->L < 0)
            printf("  (L < 0: the overheads overlap the transfer)");
        printf("\n");
    }
}

void lg_print_shm(const lg_opts *o, const shm_result *r, const char *mpi, int P)
{
    if (o->json) {
        for (int op = 0; op < OP_COUNT; op++) {
            if ((op == OP_PEER_READ || op == OP_PEER_WRITE) && !r->cma)
                continue;
            for (int i = 0; i < (op == OP_FLAG ? 1 : o->nsizes); i++) {
                printf("{\"coll\":\"loggp\",\"kind\":\"shm\",\"op\":\"%s\",\"size\":%zu,\"time_us\":%.5f",
                       op_names[op], op == OP_FLAG ? (size_t)8 : o->sizes[i], r->t[op][i] * 1e-3);
                lg_json_tail(mpi, P, o, r->bad);
            }
            printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"op\":\"%s\",\"fixed_ns\":%.3f,\"per_byte_ns\":%.6f",
                   op_names[op], r->fit[op].fixed, r->fit[op].per_byte);
            if (r->fit[op].large_from > 0)
                printf(",\"large_from\":%lld,\"large_per_byte_ns\":%.6f", (long long)r->fit[op].large_from,
                       r->fit[op].large_per_byte);
            lg_json_tail(mpi, P, o, r->bad);
        }
        printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"op\":\"data_line\",\"fixed_ns\":%.3f,\"per_byte_ns\":0,"
               "\"round_flag_line_us\":%.5f,\"round_own_line_us\":%.5f",
               r->data_line, r->round_line * 1e-3, r->round_own * 1e-3);
        lg_json_tail(mpi, P, o, r->bad);
        return;
    }
    printf("# shm: kport's shared-memory operations (ns per operation, medians)\n");
    printf("# flag: a post seen by a waiting peer: %.1f ns\n", r->t[OP_FLAG][0]);
    printf("# data_line: a copy-in, post, wait, copy-out round of 8 B takes %.1f ns with the block in the\n"
           "#   flag's line, %.1f ns in a line of its own: %.1f ns more\n",
           r->round_line, r->round_own, r->data_line);
    printf("%-12s%12s%12s%12s%12s%12s\n", "# size(B)", "copy_in", "copy_out", "memcpy", "peer_read", "peer_write");
    for (int i = 0; i < o->nsizes; i++) {
        printf("%-12zu%12.1f%12.1f%12.1f", o->sizes[i], r->t[OP_COPY_IN][i], r->t[OP_COPY_OUT][i],
               r->t[OP_MEMCPY][i]);
        if (r->cma)
            printf("%12.1f%12.1f\n", r->t[OP_PEER_READ][i], r->t[OP_PEER_WRITE][i]);
        else
            printf("%12s%12s\n", "-", "-");
    }
    printf("%-12s%12s%14s\n", "# op", "fixed(ns)", "per_byte(ns)");
    for (int op = 0; op < OP_COUNT; op++) {
        if ((op == OP_PEER_READ || op == OP_PEER_WRITE) && !r->cma) {
            printf("# %-10s%12s%14s  (cross-memory attach not permitted: not measured, written as 0)\n",
                   op_names[op], "-", "-");
            continue;
        }
        printf("# %-10s%12.1f%14.5f", op_names[op], r->fit[op].fixed, r->fit[op].per_byte);
        if (r->fit[op].large_from > 0)
            printf("  beyond %lld B: %.5f ns/B", (long long)r->fit[op].large_from, r->fit[op].large_per_byte);
        printf("\n");
    }
}

void lg_print_reduce(const lg_opts *o, const lg_reduce *r, const char *mpi, int P)
{
    if (!r->ok)
        return;
    if (o->json) {
        for (int i = 0; i < o->nsizes; i++) {
            if (r->t[i] < 0)
                continue;
            printf("{\"coll\":\"loggp\",\"kind\":\"compute\",\"op\":\"reduce\",\"size\":%zu,\"time_us\":%.5f",
                   o->sizes[i], r->t[i] * 1e-3);
            lg_json_tail(mpi, P, o, 0);
        }
        printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"op\":\"reduce\",\"fixed_ns\":%.3f,\"per_byte_ns\":%.6f",
               r->fit.fixed, r->fit.per_byte);
        if (r->fit.large_from > 0)
            printf(",\"large_from\":%lld,\"large_per_byte_ns\":%.6f", (long long)r->fit.large_from,
                   r->fit.large_per_byte);
        printf(",\"kernel\":\"%s\"", r->kernel);
        lg_json_tail(mpi, P, o, 0);
        return;
    }
    printf("# compute.reduce: the combine of reductions, %s (ns per combine of s bytes, medians)\n", r->kernel);
    printf("%-12s%12s%12s\n", "# size(B)", "reduce", "ns/B");
    for (int i = 0; i < o->nsizes; i++)
        if (r->t[i] >= 0)
            printf("%-12zu%12.1f%12.5f\n", o->sizes[i], r->t[i], r->t[i] / (double)o->sizes[i]);
    printf("# reduce    %12.1f%14.5f", r->fit.fixed, r->fit.per_byte);
    if (r->fit.large_from > 0)
        printf("  beyond %lld B: %.5f ns/B", (long long)r->fit.large_from, r->fit.large_per_byte);
    printf("  (fixed ns, ns per byte: gamma)\n");
}

void lg_print_call(const lg_opts *o, const kp_machine *m, double post_wait, double entry_gap, const char *mpi,
                   int P)
{
    if (o->json) {
        printf("{\"coll\":\"loggp\",\"kind\":\"fit\",\"op\":\"call\",\"fixed_ns\":%.3f,\"skew_ns\":%.3f",
               m->call.fixed, m->call.skew);
        if (post_wait >= 0)
            printf(",\"post_wait_skew_ns\":%.3f", post_wait);
        if (entry_gap >= 0)
            printf(",\"entry_gap_ns\":%.3f", entry_gap);
        lg_json_tail(mpi, P, o, 0);
    } else {
        printf("# call: kport's own cost per call %.1f ns (kp_allgather on MPI_COMM_SELF less its copy);\n"
               "#   entry skew after the start line %.1f ns (a timed post and wait, max over ranks, less the "
               "flag;\n#   the clock's cost included)\n",
               m->call.fixed, m->call.skew);
        if (post_wait > m->call.skew)
            printf("#   (capped at one flag, as a start line of flags lets the ranks go at most one flag "
                   "apart: %.1f ns uncapped)\n",
                   post_wait);
        if (entry_gap >= 0)
            printf("#   the ranks left the start line %.1f ns apart (median, one clock; not used by the model)\n",
                   entry_gap);
    }
}

int lg_write_params(const lg_opts *o, kp_machine *m, const char *mpi, int P)
{
    char err[KB_ERR_LEN];
    char hostname[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(hostname, &len);
    copy_str(m->host, sizeof(m->host), hostname);
    copy_str(m->mpi, sizeof(m->mpi), mpi);
    char cmd[sizeof(m->command) + 32];
    snprintf(cmd, sizeof(cmd), "mpirun -np %d ", P);
    copy_str(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), o->command);
    copy_str(m->command, sizeof(m->command), cmd);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f))
            if (strncmp(line, "model name", 10) == 0) {
                const char *c = strchr(line, ':');
                copy_str(m->cpu, sizeof(m->cpu), c ? c + 2 : "");
                m->cpu[strcspn(m->cpu, "\n")] = '\0';
                break;
            }
        fclose(f);
    }
    time_t now = time(NULL);
    struct tm tmv;
    strftime(m->date, sizeof(m->date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tmv));
    if (kp_params_check(m, err, (int)sizeof(err)) != KP_SUCCESS) {
        fprintf(stderr, "kport-bench: loggp: the measured parameters are refused: %s\n", err);
        return 1;
    } else if (kp_params_save(o->out, m) != KP_SUCCESS) {
        fprintf(stderr, "kport-bench: loggp: cannot write %s: %s\n", o->out, strerror(errno));
        return 1;
    } else if (!o->json) {
        printf("# written: %s\n", o->out);
    }
    return 0;
}
