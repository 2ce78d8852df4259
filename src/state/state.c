/*
 * The per-communicator state's helpers every layer uses (state/comm.h):
 * set-up accounting, the agreement on a set-up outcome, and the note that
 * says what MPI refused.
 */
#include "state/comm.h"
#include "util/env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- set-up accounting ----------------------------------------------------- */

static struct {
    long count[KP_SETUP_NPARTS];
    double secs[KP_SETUP_NPARTS];
} acct;

/* see comm.h: defined away from its users on purpose */
MPI_Status *const kp_statuses_ignore = MPI_STATUSES_IGNORE;

static int live_segments; /* allocated and not yet freed, this process */

void kp_setup_segments(int delta)
{
    live_segments += delta;
}

int kp_setup_live_segments(void)
{
    return live_segments;
}

void kp_setup_account(int part, double seconds)
{
    acct.count[part]++;
    acct.secs[part] += seconds;
}

void kp_setup_print(void)
{
    static const char *names[KP_SETUP_NPARTS] = {
        "communicator states", "  from the pool", "  layout derived", "  layout communicated",
        "private duplicates",  "node communicators", "segments allocated", "cma probes",
        "calibrations",
        "pooled at free",      "releases"};
    const char *e = getenv("KPORT_SETUP_STATS");
    int wrank = 0;
    if (!e || !*e || strcmp(e, "0") == 0)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (wrank != 0)
        return;
    fprintf(stderr, "kport: set-up on rank 0 (count, total us, us each):\n");
    for (int i = 0; i < KP_SETUP_NPARTS; i++)
        fprintf(stderr, "kport:   %-22s %8ld %10.1f %8.2f\n", names[i], acct.count[i], acct.secs[i] * 1e6,
                acct.count[i] ? acct.secs[i] * 1e6 / (double)acct.count[i] : 0.0);
    fprintf(stderr, "kport:   segments live at exit %d\n", live_segments);
    fflush(stderr);
}

/* ---- agreement and refusals ----------------------------------------------- */

int kp_comm_agree(kp_comm *c, int ok)
{
    int all = ok != 0;
    if (c->size > 1 && PMPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, c->user) != MPI_SUCCESS)
        all = 0; /* not reached under a fatal handler; under another, MPI is broken anyway */
    return all;
}

void kp_comm_refusal_note(kp_comm *c, unsigned kind, const char *what)
{
    if (c->noted & kind)
        return;
    c->noted |= kind;
    if (c->rank == 0 && kp_verbose()) {
        fprintf(stderr, "kport: P=%d: %s\n", c->size, what);
        fflush(stderr);
    }
}

