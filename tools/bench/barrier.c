/*
 * kport-bench barrier: MPI_Barrier beside kp_barrier.
 *
 *   mpirun -np P kport-bench barrier [-i N] [-x N] [-f] [-c] [-a native,auto,dissemination,...]
 *                                    [--b2b N] [--format json]
 *
 * A barrier has no size: one row of size 0 (-m is ignored). One call:
 * MPI_Barrier(comm) or kp_barrier(comm) under the forced algorithm.
 *
 * -c: there is no data to compare, so besides every call's return code,
 * after the timed calls of each algorithm an untimed test checks the
 * semantics (no rank leaves the barrier before every rank has entered it).
 * In round v one rank is held back: it polls for KB_BARRIER_DELAY seconds
 * before entering, every other rank sends it a notice as soon as it leaves
 * the barrier, and a notice that arrives while the held-back rank has not
 * yet entered is an early exit. Each rank is held back once (at most
 * KB_BARRIER_ROUNDS rounds, spread over the ranks). A correct barrier never
 * reports one; a broken one is caught when a rank leaves within the delay.
 *
 * Options, timing and output are the collective runner's (collective.c).
 */
#include "collective.h"

#define KB_BARRIER_TAG 7301
#define KB_BARRIER_DELAY 0.002 /* seconds; the note below says "2 ms" */
#define KB_BARRIER_ROUNDS 64

static int barrier_run(kb_ctx *cx)
{
    if (cx->native)
        return MPI_Barrier(cx->comm) == MPI_SUCCESS ? KP_SUCCESS : KP_ERR_MPI;
    return kp_barrier(cx->comm);
}

static long long barrier_selftest(kb_ctx *cx, MPI_Comm sync, int *rc)
{
    const int P = cx->P, me = cx->rank;
    const int rounds = P < KB_BARRIER_ROUNDS ? P : KB_BARRIER_ROUNDS;
    long long bad = 0;
    *rc = KP_SUCCESS;
    for (int v = 0; v < rounds; v++) {
        const int late = (int)((long long)v * P / rounds);
        int got = 0, tok;
        MPI_Barrier(sync);
        if (me == late) {
            double t0 = MPI_Wtime();
            do {
                int flag = 0;
                MPI_Status st;
                MPI_Iprobe(MPI_ANY_SOURCE, KB_BARRIER_TAG, sync, &flag, &st);
                if (flag) {
                    MPI_Recv(&tok, 1, MPI_INT, st.MPI_SOURCE, KB_BARRIER_TAG, sync, MPI_STATUS_IGNORE);
                    got++;
                    bad++;
                    if (cx->reported++ < KB_MAX_REPORTS)
                        fprintf(stderr,
                                "kport-bench: rank %d: %s, barrier test round %d: rank %d left the barrier before "
                                "rank %d (held back) entered it%s\n",
                                me, cx->label, v, st.MPI_SOURCE, me,
                                cx->reported == KB_MAX_REPORTS ? " (further violations not shown)" : "");
                }
            } while (MPI_Wtime() - t0 < KB_BARRIER_DELAY);
        }
        int r = barrier_run(cx);
        if (r != KP_SUCCESS && *rc == KP_SUCCESS)
            *rc = r;
        if (me == late) {
            for (; got < P - 1; got++)
                MPI_Recv(&tok, 1, MPI_INT, MPI_ANY_SOURCE, KB_BARRIER_TAG, sync, MPI_STATUS_IGNORE);
        } else {
            tok = v;
            MPI_Send(&tok, 1, MPI_INT, late, KB_BARRIER_TAG, sync);
        }
    }
    return bad;
}

static const kb_coll kb_coll_barrier = {
    .name = "barrier", .kcoll = KP_COLL_BARRIER, .native_call = "MPI_Barrier", .sizes = KB_SIZELESS,
    .size_desc = "none (one row, size 0; -m is ignored)",
    .bad_unit = "early exits (a rank left the barrier before the held-back rank entered it; summed over test "
                "rounds)",
    .buffers = NULL, .run = barrier_run, .selftest = barrier_selftest,
    .check_note = "# Validation: return codes of every call, and an untimed test per algorithm: each rank in turn\n"
                  "#   is held back 2 ms before entering; no other rank may leave the barrier before it enters\n"};

static int barrier_main(int argc, char **argv) { return kb_coll_main(&kb_coll_barrier, argc, argv); }

const kb_command kb_cmd_barrier = {"barrier", "MPI_Barrier beside every kport barrier algorithm (no sizes)",
                                   &kb_coll_barrier, barrier_main};
