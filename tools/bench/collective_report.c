/*
 * kport-bench's collective runner: its output. The text table (OSU's
 * "# Size" columns, one per algorithm, named after what kport ran and,
 * under --transports, the transport), its header (the measured
 * environment, what each column is) and footer (refusals, failures, -f
 * blocks, the predictions, the verdict), one JSON line per (algorithm,
 * size), and --predict's cost-model times. The formats are the manual at
 * the top of collective.c.
 */
#include "collective.h"

#include "algo/algo.h"

#include <stdlib.h>
#include <string.h>

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

/* ------------------------------------------------------------------------- */
/* Output                                                                     */
/* ------------------------------------------------------------------------- */

static const char *status_name(int s)
{
    return s == RES_OK ? "ok" : s == RES_NA ? "n/a" : s == RES_ERR ? "error" : "invalid";
}

void kbc_json_line(const options *o, const char *mpi, int P, int hosts, size_t size, const alg_entry *a,
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
    if (o->coll->reduction)
        printf(",\"type\":\"%s\",\"op\":\"%s\"", kb_red_type_name(o->type), kb_red_op_name(o->op));
    if (o->b2b)
        printf(",\"mode\":\"b2b\",\"calls_per_batch\":%d,\"rewrite_us\":%.3f", o->b2b, rewrite / o->b2b * 1e6);
    else
        printf(",\"mode\":\"isolated\"");
    printf(",\"sync\":\"%s\"", kbc_start.shm ? "shm" : "mpi");
    if (r->status == RES_OK || r->status == RES_INVALID)
        printf(",\"median_us\":%.3f,\"min_us\":%.3f,\"avg_us\":%.3f,\"max_us\":%.3f,\"iterations\":%d",
               r->t.median * 1e6, r->t.min * 1e6, r->t.avg * 1e6, r->t.max * 1e6, r->iters);
    else
        printf(",\"median_us\":null,\"min_us\":null,\"avg_us\":null,\"max_us\":null,\"iterations\":0");
    if (r->has_limit) { /* the ratio only where the limit is a time (back to back it can be <= 0) */
        printf(",\"bw_limit_us\":%.3f", r->limit * 1e6);
        if (r->status == RES_OK && r->limit > 0)
            printf(",\"bw_limit_ratio\":%.3f", r->t.median / r->limit);
        else
            printf(",\"bw_limit_ratio\":null");
    }
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

void kbc_text_cell(const alg_entry *a, const result *r)
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

void kbc_print_header(options *o, const run_env *e)
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
    if (bc->reduction)
        printf("# Datatype: %s (%zu bytes), operation: %s; count = size / %zu elements\n",
               kb_red_type_name(o->type), kb_red_elem(o->type), kb_red_op_name(o->op), kb_red_elem(o->type));
    printf("# Size: %s\n", bc->size_desc);
    printf("# Start line of each timed call: %s\n", kb_sync_name(&kbc_start));
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
        else if (a->is_limit)
            printf("# %-28s reference: %s\n", a->label, bc->limit_desc);
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

/* After the table, when the collective has a bw_limit column that ran:
 * per size the limit and every other column's median over it. */
void kbc_print_limits(const options *o, const size_t *sizes, int nsizes, const result *res)
{
    int any = 0;
    for (int si = 0; si < nsizes; si++)
        any |= res[si].has_limit; /* the first column's row carries it as every row does */
    if (!any)
        return;
    printf("\n# Against the memory-bandwidth limit: median / bw_limit (1.00: at the limit)\n");
    printf("%-10s%12s", "# Size", "bw_limit");
    for (int ai = 0; ai < o->nalgs; ai++)
        if (!o->algs[ai].is_limit) {
            char name[KB_NAME_LEN + 48];
            col_name(&o->algs[ai], name, sizeof name);
            printf("%*s", col_width(&o->algs[ai]), name);
        }
    printf("\n");
    for (int si = 0; si < nsizes; si++) {
        if (!res[si].has_limit)
            continue;
        printf("%-10zu%12.2f", sizes[si], res[si].limit * 1e6);
        for (int ai = 0; ai < o->nalgs; ai++) {
            const result *r = &res[(size_t)ai * nsizes + si];
            if (o->algs[ai].is_limit)
                continue;
            char cell[32];
            if (r->status == RES_OK && r->limit > 0)
                snprintf(cell, sizeof cell, "%.2f", r->t.median / r->limit);
            else
                snprintf(cell, sizeof cell, "-");
            printf("%*s", col_width(&o->algs[ai]), cell);
        }
        printf("\n");
    }
}

/* After the table: refusals, renamed columns, failures, -f blocks, the verdict. */
void kbc_print_footer(const options *o, const size_t *sizes, int nsizes, const result *res, int failures)
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
int kbc_kport_layout(MPI_Comm comm, kp_layout *L)
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
void kbc_predict_row(const options *o, const kp_layout *L, int P, size_t size, const alg_entry *a, result *r)
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
    int rc;
    if (o->coll->reduction) { /* the element size, and reduce_scatter's blocks as kport-bench sizes them */
        const int64_t elem = (int64_t)kb_red_elem(o->type);
        int64_t *off = NULL;
        int *counts = NULL;
        if (o->coll->kcoll == KP_COLL_REDUCE_SCATTER) {
            off = malloc((size_t)(P + 1) * sizeof(*off));
            counts = malloc((size_t)P * sizeof(*counts));
            if (!off || !counts) {
                free(off);
                free(counts);
                return;
            }
            kb_rs_counts((int)(size / (size_t)elem), P, counts);
            off[0] = 0;
            for (int j = 0; j < P; j++)
                off[j + 1] = off[j] + counts[j] * elem;
        }
        rc = kp_model_predict_red(&o->machine, alg, &prm, L, P, (int64_t)size, o->root, 0, elem, 1, off,
                                  KP_RULES_EXECUTOR, &m);
        free(off);
        free(counts);
    } else {
        rc = kp_model_predict(&o->machine, alg, &prm, L, P, (int64_t)size, o->root, 0, &m);
    }
    if (rc != KP_SUCCESS || m.refused)
        return;
    r->has_pred = 1;
    r->pred = m.time_ns * 1e-9;
    r->pred_hockney = m.hockney_ns * 1e-9;
}
