/*
 * The shared path of the reductions (redargs.h): kp_reduce, kp_allreduce,
 * kp_reduce_scatter_block, kp_reduce_scatter.
 *
 * The operation and the datatype decide how the data are combined (a
 * kp_reducer, exec/reduce.h, chosen once per call and handed to the
 * executor; plans never hold it) and how they lie in kport's buffers (the
 * images the plan runs on; sched.elem is one element's bytes there):
 *  - a builtin operation on a predefined type: in place, elem = the type's
 *    extent. That is its size for every type but the pair types of
 *    MAXLOC/MINLOC (MPI_DOUBLE_INT: 12 bytes of data in a 16-byte extent),
 *    which are moved with their padding: buffers of count pair elements
 *    are count * extent bytes, as the C arrays of the pair structs are;
 *  - a builtin operation on a derived type whose type map is one basic
 *    type (decoded with MPI_Type_get_envelope / _contents): reduced as that
 *    type (elem = its size), in place when the type has no gaps (size ==
 *    extent == true extent), else packed into the staging buffer with
 *    MPI_Pack, reduced there and unpacked into the receive buffer (so its
 *    gaps are never written). A derived type of a pair type with padding,
 *    or of several basic types, is KP_ERR_UNSUPPORTED;
 *  - a user-defined operation: MPI_Reduce_local on the user's type, one
 *    element = one extent, on types without gaps and on predefined types;
 *    a type with gaps is KP_ERR_UNSUPPORTED (the drop-in hands it to MPI).
 *    Commutativity from MPI_Op_commutative: non-commutative operations are
 *    combined in rank order (sched.commute).
 * Under MPI_IN_PLACE the input is in the receive buffer (reduce_scatter:
 * the whole vector, result at its start) and the plan's send image is its
 * receive image.
 */
#include "core/args.h"
#include "core/redargs.h"
#include "exec/exec.h"

#include <stdint.h>
#include <stdlib.h>

/* ---- the operation and the datatype -------------------------------------- */

/* how a call's data lie in kport's images */
typedef struct redtype {
    kp_reducer r;
    int packed;  /* staged with MPI_Pack (a derived type with gaps) */
    int64_t ub;  /* bytes of one user element in the image */
} redtype;

/* The one basic (named) type the type map of t consists of: 1 and *b, or 0
 * when it has several or cannot be decoded. */
static int basic_of(MPI_Datatype t, MPI_Datatype *b, int depth)
{
    int ni, na, nd, comb;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
        return 0;
    if (comb == MPI_COMBINER_NAMED) {
        *b = t;
        return 1;
    }
    if (depth > 32 || nd < 1)
        return 0;
    int *ints = malloc(sizeof(int) * (size_t)(ni > 0 ? ni : 1));
    MPI_Aint *addrs = malloc(sizeof(MPI_Aint) * (size_t)(na > 0 ? na : 1));
    MPI_Datatype *ts = malloc(sizeof(MPI_Datatype) * (size_t)nd);
    int ok = ints && addrs && ts && MPI_Type_get_contents(t, ni, na, nd, ints, addrs, ts) == MPI_SUCCESS;
    int got = 0;
    for (int i = 0; ok && i < nd; i++) {
        MPI_Datatype bi = MPI_DATATYPE_NULL;
        ok = basic_of(ts[i], &bi, depth + 1) && (!got || bi == *b);
        *b = bi;
        got = 1;
    }
    if (ts && ok) /* get_contents returned copies of the derived ones */
        for (int i = 0; i < nd; i++) {
            int n2, a2, d2, c2;
            if (MPI_Type_get_envelope(ts[i], &n2, &a2, &d2, &c2) == MPI_SUCCESS && c2 != MPI_COMBINER_NAMED)
                MPI_Type_free(&ts[i]);
        }
    free(ints);
    free(addrs);
    free(ts);
    return ok;
}

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, comb;
    return MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb == MPI_COMBINER_NAMED;
}

/* builtin operation: see the top of the file */
static int builtin_type(const char *fn, MPI_Op op, MPI_Datatype t, const kp_tinfo *ti, redtype *rt)
{
    char why[200];
    const int named = is_named(t);
    MPI_Datatype b = t;
    if (!named && !basic_of(t, &b, 0))
        return kp_error(KP_ERR_UNSUPPORTED,
                        "%s: a builtin operation on a derived datatype whose type map is not one basic type", fn);
    int rc = kp_reducer_builtin(op, b, &rt->r, why, sizeof why);
    if (rc)
        return kp_error(rc, "%s: %s%s", fn, why, named ? "" : " (the basic type of the derived datatype)");
    if (named) {
        rt->packed = 0;
        rt->ub = rt->r.elem;
        return KP_SUCCESS;
    }
    MPI_Count bsize;
    if (MPI_Type_size_x(b, &bsize) != MPI_SUCCESS || bsize != rt->r.elem)
        return kp_error(KP_ERR_UNSUPPORTED, "%s: a derived datatype of %s, whose extent has padding", fn, rt->r.name);
    rt->packed = !(ti->size == ti->extent && ti->size == ti->true_extent);
    rt->ub = ti->size;
    return KP_SUCCESS;
}

static int classify(const kp_red_call *k, const kp_tinfo *ti, redtype *rt)
{
    /* a builtin operation on a predefined type: the last one's answer */
    static _Thread_local struct {
        MPI_Op op;
        MPI_Datatype t;
        redtype rt;
        int valid;
    } last;
    if (last.valid && last.op == k->op && last.t == k->type) {
        *rt = last.rt;
        return KP_SUCCESS;
    }
    const char *opname;
    if (k->op == MPI_OP_NULL)
        return kp_error(KP_ERR_ARG, "%s: the operation is MPI_OP_NULL", k->fn);
    if (k->op == MPI_REPLACE || k->op == MPI_NO_OP)
        return kp_error(KP_ERR_ARG, "%s: MPI_REPLACE and MPI_NO_OP apply only to one-sided accumulates", k->fn);
    if (kp_op_builtin(k->op, &opname)) {
        int rc = builtin_type(k->fn, k->op, k->type, ti, rt);
        if (!rc && is_named(k->type)) {
            last.op = k->op;
            last.t = k->type;
            last.rt = *rt;
            last.valid = 1;
        }
        return rc;
    }
    int commute = 0;
    if (MPI_Op_commutative(k->op, &commute) != MPI_SUCCESS)
        return kp_error(KP_ERR_ARG, "%s: the operation is not a valid MPI_Op", k->fn);
    const int gapfree = ti->size == ti->extent && ti->size == ti->true_extent;
    if (!gapfree && !is_named(k->type))
        return kp_error(KP_ERR_UNSUPPORTED,
                        "%s: a user-defined operation on a datatype with gaps (size %lld, extent %lld, "
                        "true extent %lld)",
                        k->fn, (long long)ti->size, (long long)ti->extent, (long long)ti->true_extent);
    if (ti->extent <= 0)
        return kp_error(KP_ERR_DATATYPE, "%s: a datatype of extent %lld", k->fn, (long long)ti->extent);
    kp_reducer_user(k->op, k->type, ti->extent, commute, &rt->r);
    rt->packed = 0;
    rt->ub = ti->extent;
    return KP_SUCCESS;
}

/* ---- the call ------------------------------------------------------------ */

/* elements of the call's input vector, of this rank's result, and the
 * plan's bytes (sched.h: reduce_scatter_block's per-rank block, the
 * others' whole vector) */
typedef struct counts {
    int64_t in, out, plan_elems;
} counts;

static int count_of(const kp_red_call *k, int P, int me, counts *n)
{
    if (k->coll == KP_COLL_REDUCE_SCATTER) {
        if (!k->recvcounts)
            return kp_error(KP_ERR_ARG, "%s: recvcounts is NULL", k->fn);
        int64_t total = 0;
        for (int j = 0; j < P; j++) {
            if (k->recvcounts[j] < 0)
                return kp_error(KP_ERR_COUNT, "%s: negative recvcounts[%d] = %d", k->fn, j, k->recvcounts[j]);
            total += k->recvcounts[j];
        }
        *n = (counts){total, k->recvcounts[me], total};
        return KP_SUCCESS;
    }
    if (k->count < 0)
        return kp_error(KP_ERR_COUNT, "%s: negative count %lld", k->fn, (long long)k->count);
    if (k->coll == KP_COLL_REDUCE_SCATTER_BLOCK) {
        if (k->count > INT64_MAX / 4 / P)
            return kp_error(KP_ERR_COUNT, "%s: recvcount %lld overflows", k->fn, (long long)k->count);
        *n = (counts){(int64_t)k->count * P, k->count, k->count};
    } else {
        *n = (counts){k->count, k->count, k->count};
    }
    return KP_SUCCESS;
}

/* Run pl with the data packed into the staging buffer. */
static int run_packed(kp_comm *c, kp_plan *pl, const kp_red_call *k, const kp_tinfo *ti, const redtype *rt,
                      const counts *n, int inplace, int has_recv)
{
    int rc;
    if ((rc = kp_pack_size_ok(k->fn, c->user, "data", n->in, k->type, ti)))
        return rc;
    const int64_t rlen = has_recv ? (inplace ? n->in : n->out) * rt->ub : 0, slen = inplace ? 0 : n->in * rt->ub;
    void *stage;
    if ((rc = kp_comm_stage(c, rlen + slen, &stage)))
        return rc;
    char *rimg = has_recv ? (char *)stage : NULL, *simg = inplace ? rimg : (char *)stage + rlen;
    if ((rc = kp_pack_n(k->fn, c->user, inplace ? k->rbuf : k->sbuf, n->in, k->type, ti, simg)))
        return rc;
    if ((rc = kp_exec_run_red(pl, simg, rimg, &rt->r)))
        return rc;
    return has_recv ? kp_unpack_n(k->fn, c->user, rimg, n->out, k->rbuf, k->type, ti) : KP_SUCCESS;
}

int kp_red_call_run(const kp_red_call *k)
{
    const char *fn = k->fn;
    int rc, P, me;
    kp_comm *c;
    if ((rc = kp_call_enter(fn, k->comm, &c, &P, &me)))
        return rc;
    const int reduce = k->coll == KP_COLL_REDUCE, root = reduce ? k->root : 0;
    if (reduce && (root < 0 || root >= P))
        return kp_error(KP_ERR_ARG, "%s: root %d is not a rank of the communicator (size %d)", fn, root, P);
    const int inplace = k->sbuf == MPI_IN_PLACE;
    if (inplace && reduce && me != root)
        return kp_error(KP_ERR_ARG, "%s: MPI_IN_PLACE is only valid at the root (this is rank %d, root %d)", fn, me,
                        root);
    kp_tinfo ti;
    redtype rt = {0};
    counts n = {0, 0, 0};
    if ((rc = kp_type_info(k->type, fn, "the", &ti)) || (rc = classify(k, &ti, &rt)) || (rc = count_of(k, P, me, &n)))
        return rc;
    if (n.in > INT64_MAX / 4 / rt.ub)
        return kp_error(KP_ERR_COUNT, "%s: %lld elements of %lld bytes overflow", fn, (long long)n.in,
                        (long long)rt.ub);
    if (n.in == 0 || ti.size == 0)
        return KP_SUCCESS;
    const int has_recv = reduce ? me == root : inplace || n.out > 0;
    if (!inplace && k->sbuf == NULL && ti.true_lb == 0)
        return kp_error(KP_ERR_ARG, "%s: sendbuf is NULL with %lld elements", fn, (long long)n.in);
    if (has_recv && k->rbuf == NULL && ti.true_lb == 0)
        return kp_error(KP_ERR_ARG, "%s: recvbuf is NULL with %lld elements", fn, (long long)(inplace ? n.in : n.out));

    /* reduce_scatter's result blocks, in bytes of the image */
    int64_t off_small[65], *block_off = NULL;
    if (k->coll == KP_COLL_REDUCE_SCATTER) {
        block_off = P < 65 ? off_small : malloc(sizeof(int64_t) * (size_t)(P + 1));
        if (!block_off)
            return kp_error(KP_ERR_NOMEM, "%s: no memory for %d block offsets", fn, P + 1);
        block_off[0] = 0;
        for (int j = 0; j < P; j++)
            block_off[j + 1] = block_off[j] + (int64_t)k->recvcounts[j] * rt.ub;
    }
    if (!c && (rc = kp_comm_get(k->comm, &c)))
        goto out;
    c->calls++;
    c->red = (kp_red){rt.r.elem, rt.r.commute, block_off};
    const int64_t bytes = n.plan_elems * rt.ub;
    kp_run run;
    if ((rc = kp_run_begin(c, k->coll, bytes, root, inplace, inplace, &run)))
        goto out;
    if (rt.packed) {
        rc = run_packed(c, run.pl, k, &ti, &rt, &n, inplace, has_recv);
    } else {
        char *rimg = has_recv ? (char *)k->rbuf + ti.true_lb : NULL;
        const char *simg = inplace ? rimg : (const char *)k->sbuf + ti.true_lb;
        rc = kp_exec_run_red(run.pl, simg, rimg, &rt.r);
    }
    rc = kp_run_end(c, k->coll, &run, rc);
out:
    if (c)
        c->red.block_off = NULL; /* the plans keep their own copy */
    if (block_off && block_off != off_small)
        free(block_off);
    return rc;
}
