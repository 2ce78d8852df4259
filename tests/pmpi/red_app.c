/*
 * red_app: an ordinary MPI program (it knows nothing of kport) that checks
 * MPI_Bcast, MPI_Scatter, MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block
 * and MPI_Reduce_scatter against formulas. tests/pmpi/test_preload_red.sh
 * runs it as is and with LD_PRELOAD=libkport-pmpi.so; both runs must pass.
 *
 * Covered: MPI_COMM_WORLD, a split communicator in reversed rank order, an
 * inter-communicator (kport passes it to PMPI_), every root, MPI_IN_PLACE,
 * zero, small and large counts, MPI_SUM on int, MPI_MAX on double,
 * MPI_MAXLOC on MPI_DOUBLE_INT with ties (the smaller index wins), a
 * user-defined non-commutative operation (2x2 integer matrix product: the
 * result must be M_0 M_1 ... M_{P-1}), a vector datatype with gaps broadcast
 * and reduced with a user-defined sum (kport hands that one to MPI; the gaps
 * must stay untouched), reduce_scatter with uneven counts.
 *
 * Prints "red_app: N passed, M failed" on rank 0; exits 1 on any failure.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JUNK (-7)

static int wrank, npass, nfail;

static void check(int ok, const char *what, int tag)
{
    if (ok) {
        npass++;
        return;
    }
    if (nfail++ < 20)
        fprintf(stderr, "red_app: rank %d: FAIL %s (test %d)\n", wrank, what, tag);
}

/* rank r's element i in test tag: small, so sums of many stay exact */
static int V(int tag, int r, long i)
{
    return (int)((tag * 131 + r * 17 + i * 7) % 97) - 40;
}

static void matmul(const unsigned *x, const unsigned *y, unsigned *r)
{
    unsigned t[4] = {x[0] * y[0] + x[1] * y[2], x[0] * y[1] + x[1] * y[3], x[2] * y[0] + x[3] * y[2],
                     x[2] * y[1] + x[3] * y[3]};
    memcpy(r, t, sizeof t);
}

/* inout = in x inout: non-commutative */
static void matop(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        matmul((unsigned *)in + 4 * i, (unsigned *)inout + 4 * i, (unsigned *)inout + 4 * i);
}

/* inout += in on items of 2 ints in 3 (the vector type) */
static void vsum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (long i = 0; i < *len; i++)
        for (int e = 0; e < 2; e++)
            ((int *)inout)[3 * i + e] += ((int *)in)[3 * i + e];
}

static void mat_of(int tag, int r, long i, unsigned *m)
{
    for (int e = 0; e < 4; e++)
        m[e] = (unsigned)((tag + r * 3 + i + e * 5) % 4);
}

static void run_comm(MPI_Comm comm, int tag0, MPI_Op matop_h, MPI_Datatype mat, MPI_Op vsum_h, MPI_Datatype vec)
{
    int P, me;
    MPI_Comm_size(comm, &P);
    MPI_Comm_rank(comm, &me);
    const long counts[] = {0, 1, 5, 97, 1000, 70001};
    for (int ci = 0; ci < 6; ci++) {
        const long n = counts[ci];
        for (int root = 0; root < P; root++) {
            const int tag = tag0 + ci * 100 + root;
            int *a = malloc(sizeof(int) * (size_t)(n * P + 1)), *b = malloc(sizeof(int) * (size_t)(n * P + 1));
            /* bcast */
            for (long i = 0; i < n; i++)
                a[i] = me == root ? V(tag, root, i) : JUNK;
            MPI_Bcast(a, (int)n, MPI_INT, root, comm);
            int ok = 1;
            for (long i = 0; i < n; i++)
                ok &= a[i] == V(tag, root, i);
            check(ok, "MPI_Bcast", tag);
            /* scatter (in place at the root every other test) */
            const int ip = (tag & 1) && n > 0;
            for (long i = 0; i < n * P; i++)
                a[i] = me == root ? V(tag, root, i) : JUNK;
            for (long i = 0; i < n; i++)
                b[i] = JUNK;
            MPI_Scatter(a, (int)n, MPI_INT, ip && me == root ? MPI_IN_PLACE : b, (int)n, MPI_INT, root, comm);
            ok = 1;
            for (long i = 0; i < n; i++)
                ok &= (ip && me == root) ? a[me * n + i] == V(tag, root, me * n + i) : b[i] == V(tag, root, me * n + i);
            check(ok, "MPI_Scatter", tag);
            /* reduce, MPI_SUM on int (in place at root 0 every other test:
             * MPICH 4.0.2's own MPI_Reduce segfaults in place at a root
             * other than 0 from 1000 ints on, test_red covers kport there) */
            const int rip = ip && root == 0;
            for (long i = 0; i < n; i++)
                a[i] = V(tag, me, i), b[i] = me == root && rip ? V(tag, me, i) : JUNK;
            MPI_Reduce(rip && me == root ? MPI_IN_PLACE : a, b, (int)n, MPI_INT, MPI_SUM, root, comm);
            ok = 1;
            for (long i = 0; i < n && me == root; i++) {
                int s = 0;
                for (int r = 0; r < P; r++)
                    s += V(tag, r, i);
                ok &= b[i] == s;
            }
            check(ok, "MPI_Reduce", tag);
            free(a);
            free(b);
        }
        const int tag = tag0 + ci * 100 + 50;
        /* allreduce: MPI_MAX on double, in place */
        double *d = malloc(sizeof(double) * (size_t)(n + 1));
        for (long i = 0; i < n; i++)
            d[i] = V(tag, me, i);
        MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_DOUBLE, MPI_MAX, comm);
        int ok = 1;
        for (long i = 0; i < n; i++) {
            int m = V(tag, 0, i);
            for (int r = 1; r < P; r++)
                m = V(tag, r, i) > m ? V(tag, r, i) : m;
            ok &= d[i] == m;
        }
        check(ok, "MPI_Allreduce MAX double in place", tag);
        free(d);
        /* allreduce: MAXLOC on MPI_DOUBLE_INT, values from 3 so ties happen */
        struct di {
            double v;
            int i;
        } *x = malloc(sizeof(struct di) * (size_t)(n + 1)), *y = malloc(sizeof(struct di) * (size_t)(n + 1));
        for (long i = 0; i < n; i++)
            x[i].v = (V(tag, me, i) + 40) % 3, x[i].i = (me * 5 + (int)i) % 4;
        MPI_Allreduce(x, y, (int)n, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
        ok = 1;
        for (long i = 0; i < n; i++) {
            double bv = -1;
            int bi = 0;
            for (int r = 0; r < P; r++) {
                double v = (V(tag, r, i) + 40) % 3;
                int k = (r * 5 + (int)i) % 4;
                if (v > bv || (v == bv && k < bi))
                    bv = v, bi = k;
            }
            ok &= y[i].v == bv && y[i].i == bi;
        }
        check(ok, "MPI_Allreduce MAXLOC double_int", tag);
        free(x);
        free(y);
        /* allreduce: non-commutative user operation */
        unsigned *ma = malloc(16 * (size_t)(n + 1)), *mb = malloc(16 * (size_t)(n + 1));
        for (long i = 0; i < n; i++)
            mat_of(tag, me, i, ma + 4 * i);
        MPI_Allreduce(ma, mb, (int)n, mat, matop_h, comm);
        ok = 1;
        for (long i = 0; i < n; i++) {
            unsigned acc[4], m[4];
            mat_of(tag, 0, i, acc);
            for (int r = 1; r < P; r++) {
                mat_of(tag, r, i, m);
                matmul(acc, m, acc);
            }
            ok &= memcmp(acc, mb + 4 * i, 16) == 0;
        }
        check(ok, "MPI_Allreduce non-commutative user op", tag);
        free(ma);
        free(mb);
        /* a vector type with gaps (2 ints of every 3): broadcast, and a
         * user-defined sum over it (kport hands that to MPI: a user
         * operation on a type with gaps); the gaps must stay untouched */
        int *va = malloc(sizeof(int) * (size_t)(3 * n + 1)), *vb = malloc(sizeof(int) * (size_t)(3 * n + 1));
        for (long i = 0; i < 3 * n; i++)
            va[i] = me == 0 ? V(tag, 0, i) : JUNK;
        MPI_Bcast(va, (int)n, vec, 0, comm);
        ok = 1;
        for (long i = 0; i < 3 * n; i++)
            ok &= va[i] == (me != 0 && i % 3 == 2 ? JUNK : V(tag, 0, i));
        check(ok, "MPI_Bcast of a vector type", tag);
        for (long i = 0; i < 3 * n; i++)
            va[i] = V(tag, me, i), vb[i] = JUNK;
        MPI_Allreduce(va, vb, (int)n, vec, vsum_h, comm);
        ok = 1;
        for (long i = 0; i < 3 * n; i++) {
            int s = 0;
            for (int r = 0; r < P; r++)
                s += V(tag, r, i);
            ok &= i % 3 == 2 ? vb[i] == JUNK : vb[i] == s;
        }
        check(ok, "MPI_Allreduce of a user-defined sum on a vector type", tag);
        free(va);
        free(vb);
        /* reduce_scatter_block (in place every other count) and reduce_scatter */
        int *a = malloc(sizeof(int) * (size_t)(n * P + 1)), *b = malloc(sizeof(int) * (size_t)(n * P + 1));
        const int ip = ci & 1;
        for (long i = 0; i < n * P; i++)
            a[i] = V(tag, me, i), b[i] = ip ? a[i] : JUNK;
        MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : a, b, (int)n, MPI_INT, MPI_SUM, comm);
        ok = 1;
        for (long i = 0; i < n; i++) {
            int s = 0;
            for (int r = 0; r < P; r++)
                s += V(tag, r, me * n + i);
            ok &= b[i] == s;
        }
        check(ok, "MPI_Reduce_scatter_block", tag);
        int *rc = malloc(sizeof(int) * (size_t)P);
        long first = 0, total = 0;
        for (int r = 0; r < P; r++) {
            rc[r] = (int)((n * (r + 1)) / P) - (int)((n * r) / P) + (r == P - 1 ? 3 : 0);
            if (r < me)
                first += rc[r];
            total += rc[r];
        }
        int *c = malloc(sizeof(int) * (size_t)(total + 1)), *e = malloc(sizeof(int) * (size_t)(total + 1));
        for (long i = 0; i < total; i++)
            c[i] = V(tag + 1, me, i), e[i] = JUNK;
        MPI_Reduce_scatter(c, e, rc, MPI_INT, MPI_SUM, comm);
        ok = 1;
        for (long i = 0; i < rc[me]; i++) {
            int s = 0;
            for (int r = 0; r < P; r++)
                s += V(tag + 1, r, first + i);
            ok &= e[i] == s;
        }
        check(ok, "MPI_Reduce_scatter", tag);
        free(rc);
        free(c);
        free(e);
        free(a);
        free(b);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Op mop, vop;
    MPI_Op_create(matop, 0, &mop);
    MPI_Op_create(vsum, 1, &vop);
    MPI_Datatype mat, vec0, vec;
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mat);
    MPI_Type_commit(&mat);
    MPI_Type_vector(1, 2, 3, MPI_INT, &vec0);
    MPI_Type_create_resized(vec0, 0, 3 * sizeof(int), &vec);
    MPI_Type_commit(&vec);
    MPI_Type_free(&vec0);

    run_comm(MPI_COMM_WORLD, 1, mop, mat, vop, vec);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - wrank, &rev);
    run_comm(rev, 20000, mop, mat, vop, vec);
    MPI_Comm_free(&rev);
    /* an inter-communicator between the two halves: MPI serves it */
    if (P >= 2) {
        MPI_Comm half, inter;
        const int low = wrank < P / 2;
        MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? P / 2 : 0, 99, &inter);
        int x = wrank + 1, sum = -1;
        MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, inter);
        int want = 0; /* the sum over the other group */
        for (int r = 0; r < P; r++)
            if ((r < P / 2) != low)
                want += r + 1;
        check(sum == want, "MPI_Allreduce on an inter-communicator", 0);
        int v = wrank == 0 ? 4242 : -1;
        MPI_Bcast(&v, 1, MPI_INT, low ? (wrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter);
        check(low || v == 4242, "MPI_Bcast on an inter-communicator", 0);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    int tot[2], mine[2] = {npass, nfail};
    MPI_Reduce(mine, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("red_app: %d passed, %d failed\n", tot[0], tot[1]);
    MPI_Bcast(tot, 2, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Type_free(&mat);
    MPI_Type_free(&vec);
    MPI_Op_free(&mop);
    MPI_Op_free(&vop);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
