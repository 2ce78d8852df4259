/*
 * MPI point-to-point executor. Walks the schedule round by round: posts the
 * round's receives, then its sends (both nonblocking, in schedule order, so
 * MPI's non-overtaking rule matches them as the checker assumes), runs its
 * local copies while the messages fly, then waits for the round. Messages
 * above 2^30 bytes go as several MPI messages of at most 2^30 bytes.
 */
#include "core/core.h"

#include <string.h>

#define KP_CHUNK ((int64_t)1 << 30)
#define KP_TAG 7001

static int post(char *p, int64_t len, int peer, int is_send, MPI_Comm comm, MPI_Request *reqs, int *n)
{
    do { /* a zero-byte signal is one empty message */
        int c = (int)(len < KP_CHUNK ? len : KP_CHUNK);
        int rc = is_send ? MPI_Isend(p, c, MPI_BYTE, peer, KP_TAG, comm, &reqs[*n])
                         : MPI_Irecv(p, c, MPI_BYTE, peer, KP_TAG, comm, &reqs[*n]);
        if (rc != MPI_SUCCESS)
            return kp_error(KP_ERR_MPI, "MPI_%s of %d bytes %s rank %d failed", is_send ? "Isend" : "Irecv", c,
                            is_send ? "to" : "from", peer);
        (*n)++;
        p += c;
        len -= c;
    } while (len > 0);
    return KP_SUCCESS;
}

int kp_exec_p2p(kp_plan *pl, MPI_Comm comm, const void *sbuf, void *rbuf)
{
    const kp_sched *s = &pl->sched;
    char *base[KP_BUF_COUNT] = {(char *)sbuf, (char *)rbuf, (char *)pl->scratch};
    const kp_op *ops = s->ops;
    int i = 0, rc = KP_SUCCESS;
    while (i < s->nops) {
        int round = ops[i].round, end = i, n = 0;
        while (end < s->nops && ops[end].round == round)
            end++;
        for (int j = i; j < end && !rc; j++)
            if (ops[j].kind == KP_OP_RECV)
                rc = post(base[ops[j].u.recv.dst.buf] + ops[j].u.recv.dst.off, ops[j].u.recv.dst.len,
                          ops[j].u.recv.peer, 0, comm, pl->reqs, &n);
        for (int j = i; j < end && !rc; j++)
            if (ops[j].kind == KP_OP_SEND)
                rc = post(base[ops[j].u.send.src.buf] + ops[j].u.send.src.off, ops[j].u.send.src.len,
                          ops[j].u.send.peer, 1, comm, pl->reqs, &n);
        for (int j = i; j < end; j++) {
            if (ops[j].kind != KP_OP_COPY)
                continue;
            const char *src = base[ops[j].u.copy.src.buf] + ops[j].u.copy.src.off;
            char *dst = base[ops[j].u.copy.dst.buf] + ops[j].u.copy.dst.off;
            if (src != dst)
                memcpy(dst, src, (size_t)ops[j].u.copy.src.len);
        }
        if (n > 0 && MPI_Waitall(n, pl->reqs, MPI_STATUSES_IGNORE) != MPI_SUCCESS && !rc)
            rc = kp_error(KP_ERR_MPI, "MPI_Waitall failed in round %d", round);
        if (rc)
            return rc;
        i = end;
    }
    return KP_SUCCESS;
}
