/*
 * The SMP-aware builders through the checker, on node layouts: all-gather
 * smp_gather_bcast (tree 1, 2), smp_direct and smp_bruck (k 1..4), barrier
 * smp (n 1..3) and gather smp (every root for small P, a few for larger).
 *
 * Layouts for every P 1..64: no layout (every rank its own node), nodes of
 * n consecutive ranks (node = r / n, every n for P <= 24; above: n = 1, 2,
 * 3, P/2 + 1, P - 1, P), cyclic placement (node = r % N, the same
 * selection), the uneven layouts 3,1,2 / 1,5 / 2,3,1,4 (interleaved) and
 * two random ones per P. k = 3 is skipped above P = 24, and above P = 32
 * each layout and parameter is run either with or without MPI_IN_PLACE,
 * alternating (time).
 * Sizes 0 and 7 for everything, 1 and 4096 for P <= 16 (the checker works
 * in granules of the gcd of all offsets, so every multiple of the block is
 * the same symbolic run: the extra sizes guard against size-dependent
 * code). With and without MPI_IN_PLACE. The checker runs schedules that
 * use shared memory for three consecutive calls, so races between calls
 * that reuse the same half of the segment are covered. Every combination
 * must pass, and the operation counts must stay O(node size + nodes) per
 * rank (not O(P^2)). The checker also demands the node fence of
 * algo/smp_common.h (no rank leaves a shared-memory call before it has
 * heard from every node-mate in it), which makes sequences of different
 * shared-memory algorithms safe too.
 *
 * Negative tests show the checker catches what matters here: a hand-made
 * shared-memory schedule with a missing wait (race within a call), one
 * that is correct within a call but races across calls, one waiting for a
 * post that never comes (deadlock), the real builders' schedules with a
 * wait or a post removed, and a gather whose root posts before it has
 * seen its node enter (no race when the same schedules repeat, but no node
 * fence either). Builders must refuse bad parameters and a
 * layout of the wrong size.
 */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"
#include "sweep.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long passed, failed;

static void result(int good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int good, const char *fmt, ...)
{
    if (good) {
        passed++;
        return;
    }
    if (failed++ < 30) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "FAIL ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
}

/* ---- layouts ----------------------------------------------------------------- */

typedef struct {
    char name[64];
    int null;     /* no layout */
    kp_layout L;
} layout;

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static int add_layout(layout *out, int *cnt, int P, const int *ids, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int add_layout(layout *out, int *cnt, int P, const int *ids, const char *fmt, ...)
{
    layout *l = &out[*cnt];
    memset(l, 0, sizeof(*l));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->name, sizeof(l->name), fmt, ap);
    va_end(ap);
    if (!ids) {
        l->null = 1;
    } else if (kp_layout_init(&l->L, P, ids, 0)) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    (*cnt)++;
    return 0;
}

/* is the block size / node count n in the selection for P? */
static int selected(int P, int n)
{
    return P <= 24 || n <= 3 || n == P / 2 + 1 || n == P - 1 || n == P;
}

static int make_layouts(int P, layout *out)
{
    int cnt = 0, ids[64];
    add_layout(out, &cnt, P, NULL, "none");
    for (int n = 1; n <= P; n++) {
        if (!selected(P, n))
            continue;
        for (int r = 0; r < P; r++)
            ids[r] = r / n;
        add_layout(out, &cnt, P, ids, "blocks of %d", n);
    }
    for (int N = 2; N <= P; N++) { /* N = 1 is "blocks of P" */
        if (!selected(P, N))
            continue;
        for (int r = 0; r < P; r++)
            ids[r] = r % N;
        add_layout(out, &cnt, P, ids, "cyclic over %d", N);
    }
    static const int uneven[][6] = {{3, 1, 2}, {1, 5}, {2, 3, 1, 4}};
    static const int nuneven[] = {3, 2, 4};
    for (int u = 0; u < 3; u++) {
        int tot = 0;
        for (int i = 0; i < nuneven[u]; i++)
            tot += uneven[u][i];
        if (tot != P)
            continue;
        for (int i = 0, r = 0; i < nuneven[u]; i++)
            for (int j = 0; j < uneven[u][i]; j++)
                ids[r++] = i;
        if (u == 2) /* interleave: swap some ranks across nodes */
            for (int r = 0; r + 3 < P; r += 3) {
                int t = ids[r];
                ids[r] = ids[r + 3];
                ids[r + 3] = t;
            }
        add_layout(out, &cnt, P, ids, "uneven #%d", u);
    }
    for (int t = 0; t < 2; t++) {
        const unsigned N = 1 + rnd(t == 0 ? (unsigned)P : 1 + (unsigned)P / 4); /* #1: big nodes */
        for (int r = 0; r < P; r++)
            ids[r] = (int)rnd(N) * 7 + 3;
        add_layout(out, &cnt, P, ids, "random #%d", t);
    }
    return cnt;
}

static void free_layouts(layout *ls, int cnt)
{
    for (int i = 0; i < cnt; i++)
        if (!ls[i].null)
            kp_layout_free(&ls[i].L);
}

/* ---- sweep ------------------------------------------------------------------- */

typedef struct {
    int coll;
    const char *name;
    int param; /* 'k', 't' (tree), 'n' or 0 */
    int lo, hi;
} algo_case;

static const algo_case cases[] = {
    {KP_COLL_ALLGATHER, "smp_gather_bcast", 't', 1, 2},
    {KP_COLL_ALLGATHER, "smp_direct", 'k', 1, 4},
    {KP_COLL_ALLGATHER, "smp_bruck", 'k', 1, 4},
    {KP_COLL_BARRIER, "smp", 'n', 1, 3},
    {KP_COLL_GATHER, "smp", 0, 0, 0},
};

static int ilog2c(int x)
{
    int l = 0;
    while ((1 << l) < x)
        l++;
    return l;
}

/* a loose O(c + log N + k log N / N) bound per rank for block layouts, and
 * O(P) when the placement scatters every node (copies per run) */
static int ops_bound(const algo_case *c, int val, const kp_layout *L, int P)
{
    int maxc = 1, N = L ? L->nnodes : P;
    for (int n = 0; L && n < N; n++)
        if (maxc < kp_layout_node_size(L, n))
            maxc = kp_layout_node_size(L, n);
    int b = 8 + 2 * maxc + 2 * P; /* waits + copies: at most one copy per block */
    if (c->coll == KP_COLL_ALLGATHER && !strcmp(c->name, "smp_direct"))
        b += 2 * N;
    else if (c->coll == KP_COLL_ALLGATHER && !strcmp(c->name, "smp_bruck"))
        b += 4 * val * (ilog2c(N) + 1);
    else if (c->coll == KP_COLL_ALLGATHER)
        b += val == 2 ? N + 4 * ilog2c(N) : 6 * ilog2c(N) + 4;
    else if (c->coll == KP_COLL_BARRIER)
        b += 2 * 3 * (ilog2c(N) + 1);
    else
        b += N;
    return b;
}

static long nchecks;

static void check_one(const algo_case *c, int val, const layout *ly, int P, int64_t bytes, int root, int inplace)
{
    const kp_algo *a = kp_algo_find(c->coll, c->name);
    if (!a) {
        result(0, "%s: not in the registry", c->name);
        return;
    }
    kp_params prm;
    memset(&prm, 0, sizeof(prm));
    if (c->param == 'k')
        prm.k = val;
    else if (c->param == 't')
        prm.tree = val;
    else if (c->param == 'n')
        prm.n = val;
    kp_check_result res;
    const kp_layout *L = ly->null ? NULL : &ly->L;
    kp_check_algo_on(a, &prm, L, P, bytes, root, inplace, &res);
    nchecks++;
    result(res.ok, "%s %c=%d P=%d layout %s bytes=%lld root=%d inplace=%d: %s", c->name, c->param ? c->param : '-',
           val, P, ly->name, (long long)bytes, root, inplace, res.msg);
    if (res.ok) {
        int bound = ops_bound(c, val, L, P);
        result(res.max_ops <= bound, "%s %c=%d P=%d layout %s: %d operations on some rank, bound %d", c->name,
               c->param ? c->param : '-', val, P, ly->name, res.max_ops, bound);
    }
}

static void sweep(void)
{
    static const int64_t sizes[] = {0, 7, 1, 4096};
    layout *ls = malloc(sizeof(layout) * 200);
    if (!ls) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (int P = 1; P <= sweep_pmax(); P++) {
        const int nl = make_layouts(P, ls);
        for (int li = 0; li < nl; li++) {
            for (int ci = 0; ci < (int)(sizeof(cases) / sizeof(cases[0])); ci++) {
                const algo_case *c = &cases[ci];
                const int nsizes = c->coll == KP_COLL_BARRIER ? 1 : P <= 16 ? 4 : 2;
                for (int val = c->lo; val <= c->hi; val++) {
                    if (P > 24 && c->param == 'k' && val == 3)
                        continue;
                    for (int si = 0; si < nsizes; si++) {
                        for (int inplace = 0; inplace <= (c->coll != KP_COLL_BARRIER); inplace++) {
                            if (P > 32 && c->coll != KP_COLL_BARRIER && inplace != (li + val) % 2)
                                continue; /* above 32 ranks: one of the two, alternating */
                            if (c->coll != KP_COLL_GATHER) {
                                check_one(c, val, &ls[li], P, sizes[si], 0, inplace);
                                continue;
                            }
                            for (int root = 0; root < P; root++) {
                                /* every root for small P; else a few, one of
                                 * them a non-leader on most layouts */
                                if (P > 12 && root != 0 && root != 1 && root != P / 2 && root != P - 1)
                                    continue;
                                check_one(c, val, &ls[li], P, sizes[si], root, inplace);
                            }
                        }
                    }
                }
            }
        }
        free_layouts(ls, nl);
    }
    free(ls);
}

/* ---- negative tests ------------------------------------------------------------ */

/* does msg contain one of the '|'-separated needles? */
static int matches(const char *msg, const char *needles)
{
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", needles);
    for (char *save = NULL, *n = strtok_r(buf, "|", &save); n; n = strtok_r(NULL, "|", &save))
        if (strstr(msg, n))
            return 1;
    return 0;
}

static void expect(const char *what, kp_sched *s, int P, const char *needle)
{
    kp_check_result res;
    kp_check_scheds(s, P, &res);
    if (!needle)
        result(res.ok, "%s: expected to pass, checker says: %s", what, res.msg);
    else
        result(!res.ok && matches(res.msg, needle), "%s: expected \"%s\", checker says: %s", what, needle,
               res.ok ? "ok" : res.msg);
}

/* Two ranks on one node, all-gather of 8 bytes through the segment:
 *   round 0  copy own block send -> shm[8 r]
 *   round 1  post 1; wait for the other's post 1 (unless drop_wait on rank 1)
 *   round 2  copy both blocks shm -> recv
 * wait_n: the post number rank 1 waits for (2 never comes: deadlock). */
static void handmade_allgather(kp_sched *s, const kp_layout *L, int drop_wait, int wait_n)
{
    for (int r = 0; r < 2; r++) {
        kp_sched_init_coll(&s[r], KP_COLL_ALLGATHER, r, 2, 8, 0, 0);
        s[r].layout = L;
        kp_sched_need_shm(&s[r], 16);
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_SHM, 8 * r, 8);
        kp_sched_next_round(&s[r]);
        kp_sched_post(&s[r]);
        if (!(r == 1 && drop_wait))
            kp_sched_wait(&s[r], 1 - r, r == 1 ? wait_n : 1);
        kp_sched_next_round(&s[r]);
        kp_sched_copy(&s[r], KP_BUF_SHM, 0, KP_BUF_RECV, 0, 16);
        kp_sched_finish(&s[r]);
    }
}

/* Two ranks on one node, gather to rank 0 of 8 bytes: rank 1 copies its
 * block into the segment and posts, rank 0 waits and copies it out. Right
 * within one call; without rank 1 waiting for rank 0's post (root_post), rank
 * 1's copy of call c+2 races with rank 0's read of call c. */
static void handmade_gather(kp_sched *s, const kp_layout *L, int root_post)
{
    for (int r = 0; r < 2; r++) {
        kp_sched_init_coll(&s[r], KP_COLL_GATHER, r, 2, 8, 0, 0);
        s[r].layout = L;
        kp_sched_need_shm(&s[r], 16);
    }
    kp_sched_copy(&s[1], KP_BUF_SEND, 0, KP_BUF_SHM, 8, 8);
    kp_sched_next_round(&s[1]);
    kp_sched_post(&s[1]);
    if (root_post)
        kp_sched_wait(&s[1], 0, 1);
    kp_sched_finish(&s[1]);
    kp_sched_copy(&s[0], KP_BUF_SEND, 0, KP_BUF_RECV, 0, 8);
    if (root_post)
        kp_sched_post(&s[0]);
    kp_sched_wait(&s[0], 1, 1);
    kp_sched_next_round(&s[0]);
    kp_sched_copy(&s[0], KP_BUF_SHM, 8, KP_BUF_RECV, 8, 8);
    kp_sched_finish(&s[0]);
}

/* Three ranks on one node, gather to rank 0 of 8 bytes: ranks 1, 2 copy
 * their blocks into the segment, post and wait for the root's post; the
 * root posts on entry (early = 1: no race when these schedules repeat, but
 * rank 1 may leave before rank 2 entered, so a different shared-memory
 * algorithm in the next calls could race: no node fence) or after its
 * waits (early = 0: fence kept). */
static void handmade_gather3(kp_sched *s, const kp_layout *L, int early)
{
    for (int r = 0; r < 3; r++) {
        kp_sched_init_coll(&s[r], KP_COLL_GATHER, r, 3, 8, 0, 0);
        s[r].layout = L;
        kp_sched_need_shm(&s[r], 24);
        if (r > 0) {
            kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_SHM, 8 * r, 8);
            kp_sched_next_round(&s[r]);
            kp_sched_post(&s[r]);
            kp_sched_wait(&s[r], 0, 1);
            kp_sched_finish(&s[r]);
        }
    }
    kp_sched_copy(&s[0], KP_BUF_SEND, 0, KP_BUF_RECV, 0, 8);
    if (early)
        kp_sched_post(&s[0]);
    kp_sched_wait(&s[0], 1, 1);
    kp_sched_wait(&s[0], 2, 1);
    kp_sched_next_round(&s[0]);
    if (!early)
        kp_sched_post(&s[0]);
    kp_sched_copy(&s[0], KP_BUF_SHM, 8, KP_BUF_RECV, 8, 16);
    kp_sched_finish(&s[0]);
}

/* remove operation i of s (rounds unchanged) */
static void drop_op(kp_sched *s, int i)
{
    memmove(&s->ops[i], &s->ops[i + 1], (size_t)(s->nops - i - 1) * sizeof(kp_op));
    s->nops--;
}

static int find_op(const kp_sched *s, int kind)
{
    for (int i = 0; i < s->nops; i++)
        if (s->ops[i].kind == kind)
            return i;
    return -1;
}

static void free_scheds(kp_sched *s, int P)
{
    for (int r = 0; r < P; r++)
        kp_sched_free(&s[r]);
}

/* build the schedules of every rank; returns 0 on success */
static int build_all(kp_sched *s, int coll, const char *name, const kp_params *prm, const kp_layout *L, int P,
                     int64_t bytes, int root)
{
    const kp_algo *a = kp_algo_find(coll, name);
    for (int r = 0; r < P; r++)
        if (!a || kp_algo_build_on(a, prm, L, r, P, bytes, root, 0, &s[r]) != KP_SUCCESS)
            return -1;
    return 0;
}

static void negative(void)
{
    kp_layout one, two, three;
    const int ids1[3] = {0, 0, 0}, ids4[4] = {0, 0, 1, 1};
    if (kp_layout_init(&one, 2, ids1, 0) || kp_layout_init(&two, 4, ids4, 0) || kp_layout_init(&three, 3, ids1, 0)) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    kp_sched s[8];

    handmade_allgather(s, &one, 0, 1);
    expect("hand-made all-gather, both wait", s, 2, NULL);
    free_scheds(s, 2);
    handmade_allgather(s, &one, 1, 1);
    expect("hand-made all-gather, rank 1 does not wait", s, 2, "race");
    free_scheds(s, 2);
    handmade_allgather(s, &one, 0, 2);
    expect("hand-made all-gather, rank 1 waits for a post 2 that never comes", s, 2, "deadlock");
    free_scheds(s, 2);
    handmade_gather(s, &one, 1);
    expect("hand-made gather, root posts on entry", s, 2, NULL);
    free_scheds(s, 2);
    handmade_gather(s, &one, 0);
    expect("hand-made gather, no release: race across calls", s, 2, "race|may leave");
    free_scheds(s, 2);

    handmade_gather3(s, &three, 0);
    expect("hand-made 3-rank gather, root posts after its waits", s, 3, NULL);
    free_scheds(s, 3);
    handmade_gather3(s, &three, 1);
    expect("hand-made 3-rank gather, root posts on entry: no node fence", s, 3, "may leave");
    free_scheds(s, 3);

    /* the real schedules, mutilated: P = 4 on two nodes {0,1} {2,3} */
    static const char *ags[] = {"smp_gather_bcast", "smp_direct", "smp_bruck"};
    for (int i = 0; i < 3; i++) {
        kp_params prm = {.k = 2, .tree = 1};
        char what[128];
        if (build_all(s, KP_COLL_ALLGATHER, ags[i], &prm, &two, 4, 8, 0)) {
            result(0, "%s: does not build", ags[i]);
            free_scheds(s, 4);
            continue;
        }
        snprintf(what, sizeof(what), "%s, the leader's post 2 removed", ags[i]);
        int w = find_op(&s[0], KP_OP_POST), w2 = -1;
        for (int j = w + 1; w >= 0 && j < s[0].nops && w2 < 0; j++)
            if (s[0].ops[j].kind == KP_OP_POST)
                w2 = j;
        if (w2 >= 0)
            drop_op(&s[0], w2);
        result(w2 >= 0, "%s: leader 0 makes no post 2", ags[i]);
        expect(what, s, 4, "deadlock");
        free_scheds(s, 4);

        build_all(s, KP_COLL_ALLGATHER, ags[i], &prm, &two, 4, 8, 0);
        snprintf(what, sizeof(what), "%s, a non-leader's wait for its node-mate removed", ags[i]);
        w = find_op(&s[1], KP_OP_WAIT);
        if (w >= 0)
            drop_op(&s[1], w);
        expect(what, s, 4, "race");
        free_scheds(s, 4);
    }
    /* gather: a non-master that does not wait for its master races across calls */
    {
        kp_params prm = {0};
        build_all(s, KP_COLL_GATHER, "smp", &prm, &two, 4, 8, 0);
        int w = find_op(&s[3], KP_OP_WAIT);
        if (w >= 0)
            drop_op(&s[3], w);
        expect("gather smp, rank 3 does not wait for its leader's post", s, 4, "race|may leave");
        free_scheds(s, 4);
    }
    /* barrier: a leader that does not wait for its node-mate's arrival */
    {
        kp_params prm = {.n = 1};
        build_all(s, KP_COLL_BARRIER, "smp", &prm, &two, 4, 0, 0);
        int w = find_op(&s[2], KP_OP_WAIT);
        if (w >= 0)
            drop_op(&s[2], w);
        expect("barrier smp, leader 2 does not wait for rank 3", s, 4, "barrier");
        free_scheds(s, 4);
    }

    /* refusals */
    {
        kp_sched x;
        kp_params bad = {.tree = 3};
        const kp_algo *a = kp_algo_find(KP_COLL_ALLGATHER, "smp_gather_bcast");
        int rc = a ? kp_algo_build_on(a, &bad, &two, 0, 4, 8, 0, 0, &x) : -1;
        result(rc == KP_ERR_PARAM, "smp_gather_bcast tree=3: expected KP_ERR_PARAM, got %d", rc);
        kp_sched_free(&x);
        kp_params zero = {0};
        static const struct {
            int coll;
            const char *name;
        } all[] = {{KP_COLL_ALLGATHER, "smp_gather_bcast"},
                   {KP_COLL_ALLGATHER, "smp_direct"},
                   {KP_COLL_ALLGATHER, "smp_bruck"},
                   {KP_COLL_BARRIER, "smp"},
                   {KP_COLL_GATHER, "smp"}};
        for (int i = 0; i < 5; i++) {
            a = kp_algo_find(all[i].coll, all[i].name);
            rc = a ? kp_algo_build_on(a, &zero, &two, 0, 5, 8, 0, 0, &x) : -1; /* layout of 4 ranks, P = 5 */
            result(rc == KP_ERR_ARG, "%s with a layout of the wrong size: expected KP_ERR_ARG, got %d", all[i].name,
                   rc);
            kp_sched_free(&x);
        }
        static const char *kalgos[] = {"smp_direct", "smp_bruck"};
        for (int i = 0; i < 2; i++) {
            kp_sched_init_coll(&x, KP_COLL_ALLGATHER, 0, 4, 8, 0, 0);
            x.layout = &two;
            kp_params k0 = {.k = 0};
            a = kp_algo_find(KP_COLL_ALLGATHER, kalgos[i]);
            rc = a ? a->build(&x, &k0) : -1;
            result(rc == KP_ERR_PARAM, "%s builder with k=0: expected KP_ERR_PARAM, got %d", kalgos[i], rc);
            kp_sched_free(&x);
        }
        kp_sched_init_coll(&x, KP_COLL_BARRIER, 0, 4, 0, 0, 0);
        kp_params n0 = {.n = 0};
        a = kp_algo_find(KP_COLL_BARRIER, "smp");
        rc = a ? a->build(&x, &n0) : -1;
        result(rc == KP_ERR_PARAM, "barrier smp builder with n=0: expected KP_ERR_PARAM, got %d", rc);
        kp_sched_free(&x);
    }
    kp_layout_free(&one);
    kp_layout_free(&two);
    kp_layout_free(&three);
}

int main(void)
{
    negative();
    sweep();
    printf("%ld checks\n", nchecks);
    printf("%ld passed, %ld failed\n", passed, failed);
    return failed ? 1 : 0;
}
