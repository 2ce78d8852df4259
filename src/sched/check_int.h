/*
 * The schedule checker's private state, shared by check.c (matching,
 * ordering, hazards, races, data collectives) and check_red.c (values of
 * reductions as expressions). Not part of the IR's interface: see check.h.
 */
#ifndef KP_CHECK_INT_H
#define KP_CHECK_INT_H

#include "sched/check.h"
#include "kport.h"

#include <stdint.h>

#define GARBAGE UINT64_MAX
#define NCALLS_MAX 3

typedef struct {
    uint64_t *tok;
    int64_t n;       /* granules */
    int tracked;     /* race-checked */
    int owner_node;  /* node whose ranks may access it (tracked memory) */
    int32_t *wr_rank; /* last writer, -1 none */
    uint32_t *wr_time;
    uint32_t *rd;    /* [n * node size]: last read time + 1 per local rank */
    unsigned char *flag; /* shared segments: granules holding post/wait flag words */
} mem;

typedef struct {
    int op;
    int peer;
} pend;

typedef struct {
    pend *v;
    int n, cap;
} pendq;

typedef struct {
    int call, n, line;
    uint32_t *vc;
} postrec;

typedef struct {
    int call;           /* current call 0 .. ncalls-1 */
    int cur, end;       /* current round's ops [cur, end) */
    int posted, finished;
    int in_call;        /* entered the current call */
    unsigned char *done;
    pendq sends_to_me, recvs;
    uint32_t t;         /* round clock */
    uint32_t *vc, *pend; /* [P] clock and joins pending until round end */
    uint32_t start[NCALLS_MAX];
    int posts_in_call;
    postrec *posts;
    int nposts, capposts;
    mem send[NCALLS_MAX], recv[NCALLS_MAX], scratch;
} rstate;

typedef struct {
    kp_sched *sc;
    rstate *rs;
    mem *shm;         /* [nnodes] */
    mem *line;        /* [nnodes] flag lines */
    const kp_layout *L;
    kp_layout flat;
    int P, ncalls, peer_reads;
    int64_t bytes, g;
    int inplace, coll, root;
    /* reductions (sched.h): element size, commutativity, result blocks */
    int64_t elem;
    int commute;
    const int64_t *block_off;
    struct kp_red *red; /* values as expressions (check_red.c); NULL for data collectives */
    kp_check_result *res;
} ctx;

typedef struct {
    mem *m;
    int64_t lo, n;
} phys;

/* Report the first problem found (later ones are ignored); returns 1. */
int kp_chk_fail(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define fail kp_chk_fail
const char *kp_chk_bname(int buf); /* "send", "recv", ... */

/* ---- reductions (check_red.c) ----
 * A granule of a reduction's data holds (value, part): value is an interned
 * expression (a leaf: call, rank, element position; or combine(a, b)), part
 * the granule's index inside its element (elements are elem / g granules). */
int kp_red_setup(ctx *c); /* shape checks, the table; 1 on failure */
/* rank r's input leaves into in[0 .. avail) (granules) */
int kp_red_fill(ctx *c, int r, int call, uint64_t *in, int64_t avail);
int kp_red_combine(ctx *c, int r, int opi, phys a, phys b, phys dst); /* 1 on failure */
int kp_red_final(ctx *c, int r, int call, const uint64_t *out);      /* rank r's result; 1 on failure */
void kp_red_free(ctx *c);
static inline int kp_red_coll(int coll)
{
    return coll == KP_COLL_REDUCE || coll == KP_COLL_ALLREDUCE || coll == KP_COLL_REDUCE_SCATTER_BLOCK ||
           coll == KP_COLL_REDUCE_SCATTER;
}

#endif /* KP_CHECK_INT_H */
