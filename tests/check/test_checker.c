/* The checker must catch every kind of broken schedule it promises to:
 * hand-made bad schedules, each asserted to fail with the right message. */
#include "kport.h"
#include "algo/algo.h"
#include "sched/check.h"

#include <stdio.h>
#include <string.h>

static int passed, failed;

static void expect(const char *what, kp_sched *s, int P, int64_t bytes, int inplace, const char *needle)
{
    kp_check_result res;
    for (int r = 0; r < P; r++)
        kp_sched_finish(&s[r]);
    kp_check_allgather_scheds(s, P, bytes, inplace, &res);
    int good = needle ? (!res.ok && strstr(res.msg, needle) != NULL) : res.ok;
    if (good)
        passed++;
    else {
        failed++;
        fprintf(stderr, "FAIL %s: expected %s, got ok=%d msg=\"%s\"\n", what, needle ? needle : "ok", res.ok, res.msg);
    }
    for (int r = 0; r < P; r++)
        kp_sched_free(&s[r]);
}

static void init(kp_sched *s, int P, int64_t b)
{
    for (int r = 0; r < P; r++)
        kp_sched_init(&s[r], r, P, b);
}

/* a correct 2-rank exchange, optionally broken by `mode` */
static void pair(kp_sched *s, int mode)
{
    const int64_t b = 8;
    init(s, 2, b);
    for (int r = 0; r < 2; r++) {
        int o = 1 - r;
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * b, b);
        if (!(mode == 1 && r == 1))
            kp_sched_send(&s[r], o, KP_BUF_SEND, 0, b);
        kp_sched_recv(&s[r], o, KP_BUF_RECV, o * b, mode == 2 && r == 0 ? 4 : b);
    }
}

int main(void)
{
    kp_sched s[4];

    pair(s, 0);
    expect("correct exchange", s, 2, 8, 0, NULL);
    pair(s, 0);
    expect("correct exchange in place", s, 2, 8, 1, NULL);
    pair(s, 1);
    expect("missing send", s, 2, 8, 0, "deadlock: rank 0 round 0");
    pair(s, 2);
    expect("size mismatch", s, 2, 8, 0, "size mismatch");

    /* both ranks receive first, send in the next round: a cycle */
    init(s, 2, 8);
    for (int r = 0; r < 2; r++) {
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * 8, 8);
        kp_sched_recv(&s[r], 1 - r, KP_BUF_RECV, (1 - r) * 8, 8);
        kp_sched_next_round(&s[r]);
        kp_sched_send(&s[r], 1 - r, KP_BUF_SEND, 0, 8);
    }
    expect("receive-before-send cycle", s, 2, 8, 0, "deadlock");

    /* a send that reads the region a receive of the same round writes */
    init(s, 2, 8);
    for (int r = 0; r < 2; r++) {
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * 8, 8);
        kp_sched_next_round(&s[r]);
        kp_sched_send(&s[r], 1 - r, KP_BUF_RECV, 0, 16);
        kp_sched_recv(&s[r], 1 - r, KP_BUF_SCRATCH, 0, 16);
        kp_sched_recv(&s[r], 1 - r, KP_BUF_RECV, (1 - r) * 8, 8);
        kp_sched_send(&s[r], 1 - r, KP_BUF_SEND, 0, 8);
        kp_sched_need_scratch(&s[r], 16);
    }
    expect("read/write hazard in a round", s, 2, 8, 0, "touch the same region");

    /* copy of the own block into place in the same round as a receive into
     * it: fine normally, a hazard when the send buffer aliases (in place) */
    for (int ip = 0; ip < 2; ip++) {
        init(s, 2, 8);
        for (int r = 0; r < 2; r++) {
            kp_sched_send(&s[r], 1 - r, KP_BUF_SEND, 0, 8);
            kp_sched_recv(&s[r], 1 - r, KP_BUF_SCRATCH, 0, 8);
            kp_sched_next_round(&s[r]);
            kp_sched_copy(&s[r], KP_BUF_SCRATCH, 0, KP_BUF_RECV, (1 - r) * 8, 8);
            kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * 8, 8);
            kp_sched_need_scratch(&s[r], 8);
        }
        expect(ip ? "aliasing copy in place is a no-op" : "two copies", s, 2, 8, ip, NULL);
    }
    init(s, 2, 8);
    for (int r = 0; r < 2; r++) {
        kp_sched_send(&s[r], 1 - r, KP_BUF_SEND, 0, 8);
        kp_sched_recv(&s[r], 1 - r, KP_BUF_RECV, r * 8, 8); /* overwrites own block */
        kp_sched_next_round(&s[r]);
        kp_sched_copy(&s[r], KP_BUF_RECV, r * 8, KP_BUF_RECV, (1 - r) * 8, 8);
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * 8, 8);
    }
    expect("in-place: send buffer aliased and overwritten", s, 2, 8, 1, "touch the same region");

    /* block placed at the wrong offset */
    init(s, 2, 8);
    for (int r = 0; r < 2; r++) {
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * 8, 8);
        kp_sched_send(&s[r], 1 - r, KP_BUF_SEND, 0, 8);
        kp_sched_recv(&s[r], 1 - r, KP_BUF_RECV, r == 0 ? 8 : 0, 8);
    }
    expect("correct placement", s, 2, 8, 0, NULL);
    init(s, 3, 4);
    for (int r = 0; r < 3; r++) {
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * 4, 4);
        kp_sched_send(&s[r], (r + 1) % 3, KP_BUF_SEND, 0, 4);
        kp_sched_recv(&s[r], (r + 2) % 3, KP_BUF_RECV, ((r + 1) % 3) * 4, 4); /* wrong slot */
    }
    expect("wrong placement", s, 3, 4, 0, "holds block");
    init(s, 2, 4);
    for (int r = 0; r < 2; r++)
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * 4, 4);
    expect("missing block", s, 2, 4, 0, "never written");
    init(s, 2, 4);
    for (int r = 0; r < 2; r++)
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, 4, 4);
    expect("overlapping half block", s, 2, 4, 0, "");

    /* structural errors */
    init(s, 2, 4);
    kp_sched_copy(&s[0], KP_BUF_SEND, 0, KP_BUF_RECV, 6, 4);
    expect("out of bounds", s, 2, 4, 0, "outside the buffer");
    init(s, 2, 4);
    kp_sched_send(&s[0], 5, KP_BUF_SEND, 0, 4);
    expect("peer out of range", s, 2, 4, 0, "out of range");
    init(s, 2, 4);
    kp_sched_recv(&s[0], 1, KP_BUF_SEND, 0, 4);
    kp_sched_send(&s[1], 0, KP_BUF_SEND, 0, 4);
    expect("writes the send buffer", s, 2, 4, 0, "writes the user's send buffer");
    init(s, 2, 4);
    kp_sched_copy(&s[0], KP_BUF_SCRATCH, 0, KP_BUF_RECV, 0, 4);
    expect("scratch not provided", s, 2, 4, 0, "outside the buffer");

    /* ordered matching: two messages to one peer, sizes swapped */
    init(s, 2, 8);
    for (int r = 0; r < 2; r++) {
        kp_sched_copy(&s[r], KP_BUF_SEND, 0, KP_BUF_RECV, r * 8, 8);
        kp_sched_send(&s[r], 1 - r, KP_BUF_SEND, 0, 3);
        kp_sched_send(&s[r], 1 - r, KP_BUF_SEND, 3, 5);
        kp_sched_recv(&s[r], 1 - r, KP_BUF_RECV, (1 - r) * 8, r ? 3 : 5);
        kp_sched_recv(&s[r], 1 - r, KP_BUF_RECV, (1 - r) * 8 + (r ? 3 : 5), r ? 5 : 3);
    }
    expect("messages matched in posting order", s, 2, 8, 0, "size mismatch");

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
