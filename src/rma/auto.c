/*
 * Method "auto": the paper's cost model (section 4) chooses per call.
 *
 *   T_direct   = k * ts + tn * N                      (equation 1)
 *   T_pack     = n * tp + tn * N + 2 * (tm * N + tc * k)   (equation 2, per piece)
 *   T_datatype = td0 + td1 * k + tn * N               (measured, as the paper's NIC method)
 *
 * k chunks of count[0] bytes, N bytes in all, n = ceil(N / slot bytes)
 * pieces. ts: cost of one MPI operation in an epoch; tn: per byte moved;
 * tm: per byte copied (packing, unpacking), tc: per chunk copied; tp: the
 * slot protocol per piece (the paper's ts for one packed message plus the
 * flow control); td0, td1: the datatype method's fixed and per-chunk cost.
 * A get by pack pays one more round trip per piece (tp counts it twice).
 *
 * The parameters come from the "rma" object of the parameter file named by
 * KPORT_PARAMS (docs/PARAMETERS.md; written by kport-bench strided
 * --calibrate), else the defaults below (measured on the development
 * machine, Open MPI 4.1 osc/sm, 2 ranks of one node). The choice is
 * local: origins may pick different methods, which is safe (every method
 * keeps the same completion and atomicity rules).
 */
#include "rma/rma.h"

#include "core/core.h"
#include "model/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[KP_M_COUNT] = {"auto", "direct", "datatype", "pack"};

const char *kp_rma_method_name(int m)
{
    return m >= 0 && m < KP_M_COUNT ? names[m] : "?";
}

int kp_rma_method_parse(const char *s)
{
    for (int m = 0; m < KP_M_COUNT; m++)
        if (strcmp(s, names[m]) == 0)
            return m;
    return -1;
}

void kp_rma_params_default(kp_win w)
{
    /* kport-bench strided --calibrate, Open MPI 4.1.4 osc/sm, 2 ranks */
    w->ts = 29.0;    /* ns per MPI operation */
    w->tn = 0.045;   /* ns per byte moved */
    w->tm = 0.05;    /* ns per byte copied */
    w->tc = 3.5;     /* ns per chunk copied */
    w->tp = 1200.0;  /* ns per slot (protocol) */
    w->td0 = 1600.0; /* ns per datatype operation */
    w->td1 = 5.6;    /* ns per chunk the datatype walks */
}

int kp_rma_params_load(kp_win w, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return kp_error(KP_ERR_PARAM, "%s: cannot open (KPORT_PARAMS)", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = malloc((size_t)len + 1);
    if (!text) {
        fclose(f);
        return kp_error(KP_ERR_NOMEM, "%s: out of memory", path);
    }
    size_t got = fread(text, 1, (size_t)len, f);
    fclose(f);
    char err[256];
    kp_json *root = kp_json_parse(text, got, err, sizeof(err));
    free(text);
    if (!root)
        return kp_error(KP_ERR_PARAM, "%s: malformed JSON: %s", path, err);
    int rc = KP_SUCCESS;
    const kp_json *rma = kp_json_get(root, "rma");
    if (rma) { /* optional; every field in it optional */
        static const char *const keys[] = {"ts", "tn", "tm", "tc", "tp", "td0", "td1"};
        double *vals[] = {&w->ts, &w->tn, &w->tm, &w->tc, &w->tp, &w->td0, &w->td1};
        if (rma->type != KP_JSON_OBJECT)
            rc = kp_error(KP_ERR_PARAM, "%s: rma: %s, expected an object", path, kp_json_type_name(rma->type));
        for (int i = 0; rc == KP_SUCCESS && i < 7; i++) {
            const kp_json *v = kp_json_get(rma, keys[i]);
            if (!v)
                continue;
            if (v->type != KP_JSON_NUMBER || !(v->number >= 0) || v->number > 1e12)
                rc = kp_error(KP_ERR_PARAM, "%s: rma.%s: expected a non-negative number", path, keys[i]);
            else
                *vals[i] = v->number;
        }
    }
    kp_json_free(root);
    return rc;
}

static int forced = -1; /* -1: not read yet */

int kp_strided_set_method(const char *name)
{
    if (name == NULL) {
        forced = -1;
        return KP_SUCCESS;
    }
    int m = kp_rma_method_parse(name);
    if (m < 0)
        return kp_error(KP_ERR_PARAM, "kp_strided_set_method: \"%s\" is not direct, datatype, pack or auto", name);
    forced = m;
    return KP_SUCCESS;
}

int kp_rma_forced(void)
{
    static int env = -2; /* KPORT_STRIDED_METHOD, read once (-1: invalid) */
    if (forced >= 0)
        return forced;
    if (env == -2) {
        const char *e = getenv("KPORT_STRIDED_METHOD");
        env = (e && *e) ? kp_rma_method_parse(e) : KP_M_AUTO;
    }
    return env;
}

double kp_rma_cost(kp_win w, int m, int kind, int64_t k, int64_t N)
{
    double n = (double)((N + w->slot_bytes - 1) / w->slot_bytes);
    switch (m) {
    case KP_M_DIRECT: return (double)k * w->ts + w->tn * (double)N;
    case KP_M_DATATYPE: return w->td0 + w->td1 * (double)k + w->tn * (double)N;
    default:
        return n * w->tp * (kind == KP_RMA_GET ? 2.0 : 1.0) + w->tn * (double)N +
               2.0 * (w->tm * (double)N + w->tc * (double)k);
    }
}

int kp_rma_choose(kp_win w, const kp_rma_op *op)
{
    int64_t k = op->sd.nchunks, N = op->sd.total;
    if (k <= 1)
        return KP_M_DIRECT; /* one contiguous block: one operation */
    int best = KP_M_DIRECT;
    double bc = kp_rma_cost(w, KP_M_DIRECT, op->kind, k, N);
    for (int m = KP_M_DATATYPE; m <= KP_M_PACK; m++) {
        if (m == KP_M_DATATYPE) {
            int fits = 1;
            for (int i = 0; i <= op->sd.levels; i++)
                fits &= op->sd.count[i] <= 0x7fffffff;
            if (!fits)
                continue;
        }
        double c = kp_rma_cost(w, m, op->kind, k, N);
        if (c < bc) {
            bc = c;
            best = m;
        }
    }
    return best;
}
