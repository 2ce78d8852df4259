/*
 * The executor: runs a plan's schedule (MPI point-to-point messages, the
 * node's shared memory, single-copy peer reads and writes, the one-sided
 * transport).
 *
 * Walks the schedule round by round. In each round it first publishes the
 * round's posts (they announce that all earlier rounds are complete), posts
 * the receives and then the sends (nonblocking, in schedule order, so MPI's
 * non-overtaking rule matches them as the checker assumes), runs the local
 * and shared-memory copies, single-copy peer reads and combines (reductions:
 * the call's kp_reducer, exec/reduce.h) while the messages fly, waits for
 * the peers' posts the round asks for (spinning, then
 * yielding, and progressing this round's messages meanwhile), and finally
 * waits for the round's messages. Messages above 2^30 bytes go as several
 * MPI messages of at most 2^30 bytes.
 *
 * With transport=rma the same walk hands the round's sends and receives to
 * the one-sided transport (onesided.c) instead: they are started where the
 * point-to-point messages would be posted, progressed while waiting for
 * flags, and completed where MPI_Waitall would be.
 */
#define _GNU_SOURCE
#include "exec/exec.h"
#include "exec/onesided.h"
#include "topo/topo.h"
#include "util/clock.h"
#include "util/copy.h"
#include "util/error.h"
#include "util/spin.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/uio.h>

#define KP_CHUNK ((int64_t)1 << 30)
#define KP_TAG 7001
#define KP_SEQ_SHIFT 20

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

/* single copy between this rank's memory and a region of a peer's buffers
 * (Linux cross-memory attach); the peer published the addresses */
static int peer_copy(kp_comm *c, int peer, char *mine, const kp_region *theirs, int write)
{
    const kp_shm_slot *ps = &c->shm.slots[c->layout.local[peer]];
    uint64_t base = ps->addr[theirs->buf == KP_BUF_SEND ? 0 : theirs->buf == KP_BUF_RECV ? 1 : 2];
    int64_t done = 0;
    while (done < theirs->len) {
        struct iovec l = {mine + done, (size_t)(theirs->len - done)};
        struct iovec r = {(void *)(uintptr_t)(base + (uint64_t)(theirs->off + done)), (size_t)(theirs->len - done)};
        ssize_t n = write ? process_vm_writev((pid_t)ps->pid, &l, 1, &r, 1, 0)
                          : process_vm_readv((pid_t)ps->pid, &l, 1, &r, 1, 0);
        if (n <= 0)
            return kp_error(KP_ERR_INTERNAL, "process_vm_%s of %lld bytes %s rank %d failed: %s",
                            write ? "writev" : "readv", (long long)(theirs->len - done), write ? "to" : "from", peer,
                            n < 0 ? strerror(errno) : "no data");
        done += n;
    }
    return KP_SUCCESS;
}

/* The resources a plan needs were brought up, collectively, when it was
 * built (kp_plan_ready); a plan that needs more than its algorithm's class
 * promised is a bug, reported rather than left to hang. A one-rank
 * communicator has nobody to agree with: it brings them up here. */
static int resources(kp_plan *pl, kp_comm *c)
{
    if (pl->maxreq > 0 && c->comm == MPI_COMM_NULL && c->size > 1)
        return kp_error(KP_ERR_INTERNAL, "%s sends MPI messages, but its communicator has no private duplicate",
                        pl->name);
    if ((pl->uses_flags || pl->uses_segment) && !c->node_ready && c->size > 1)
        return kp_error(KP_ERR_INTERNAL, "%s uses shared memory, but its node tier is not set up", pl->name);
    int rc = pl->maxreq > 0 ? kp_topo_private(c) : KP_SUCCESS;
    if (!rc && (pl->uses_flags || pl->uses_segment))
        rc = kp_topo_node(c);
    return rc;
}

int kp_exec_run(kp_plan *pl, const void *sbuf, void *rbuf)
{
    return kp_exec_run_red(pl, sbuf, rbuf, NULL);
}

int kp_exec_run_red(kp_plan *pl, const void *sbuf, void *rbuf, const kp_reducer *red)
{
    const kp_sched *s = &pl->sched;
    kp_comm *c = pl->owner;
    int rc = KP_SUCCESS;
    if (((pl->maxreq > 0 && c->comm == MPI_COMM_NULL) || ((pl->uses_flags || pl->uses_segment) && !c->node_ready)) &&
        (rc = resources(pl, c)))
        return rc;
    const MPI_Comm comm = c->comm;
    const int rma = pl->prm.transport == KP_TRANSPORT_RMA && pl->maxreq > 0;
    /* calls with flags are counted (flag values never repeat); calls that
     * put data in the segment alternate its halves */
    const uint64_t seq = pl->uses_flags ? ++c->shm.seq : c->shm.seq;
    char *base[KP_BUF_COUNT] = {(char *)sbuf, (char *)rbuf, (char *)pl->scratch, NULL, NULL};
    kp_shm_slot *me = NULL;
    if (pl->uses_flags || pl->uses_segment) {
        if ((rc = kp_shm_reserve(c, s->shm_bytes)))
            return rc;
        const uint64_t half = pl->uses_segment ? ++c->shm.parity & 1 : c->shm.parity & 1;
        base[KP_BUF_SHM] = c->shm.data + half * c->shm.half;
        base[KP_BUF_LINE] = c->shm.lines + half * (int64_t)c->node_size * KP_LINE;
        me = &c->shm.slots[c->local];
        /* published by the first post's release: a peer may read them even
         * when this rank's own schedule reads nobody (gather's senders) */
        me->addr[0] = (uint64_t)(uintptr_t)sbuf;
        me->addr[1] = (uint64_t)(uintptr_t)rbuf;
        me->addr[2] = (uint64_t)(uintptr_t)pl->scratch;
    }
    /* plan.c ordered each round: posts, receives, sends, copies, peer reads
     * and combines, waits */
    const kp_op *ops = s->ops, *end = ops + s->nops;
    const kp_op *op = ops;
    while (op < end) {
        const int round = op->round;
        int n = 0, started = 0;
        if (rma && (rc = kp_rma_round_begin(pl)))
            return rc;
        for (; op < end && op->round == round && !rc; op++) {
            if (rma && !started && op->kind != KP_OP_POST && op->kind != KP_OP_RECV && op->kind != KP_OP_SEND) {
                started = 1; /* every send of the round in flight before the copies */
                if ((rc = kp_rma_poll(pl)))
                    break;
            }
            switch (op->kind) {
            case KP_OP_POST:
                atomic_store_explicit(op->u.post.line ? (_Atomic uint64_t *)(base[KP_BUF_LINE] + c->local * KP_LINE)
                                                      : &me->flag,
                                      (seq << KP_SEQ_SHIFT) | (uint64_t)op->u.post.n, memory_order_release);
                break;
            case KP_OP_RECV:
                if (rma) {
                    rc = kp_rma_add(pl, op, base[op->u.recv.dst.buf] + op->u.recv.dst.off);
                    break;
                }
                rc = post(base[op->u.recv.dst.buf] + op->u.recv.dst.off, op->u.recv.dst.len, op->u.recv.peer, 0, comm,
                          pl->reqs, &n);
                break;
            case KP_OP_SEND:
                if (rma) {
                    rc = kp_rma_add(pl, op, base[op->u.send.src.buf] + op->u.send.src.off);
                    break;
                }
                rc = post(base[op->u.send.src.buf] + op->u.send.src.off, op->u.send.src.len, op->u.send.peer, 1, comm,
                          pl->reqs, &n);
                break;
            case KP_OP_COPY: {
                const char *src = base[op->u.copy.src.buf] + op->u.copy.src.off;
                char *dst = base[op->u.copy.dst.buf] + op->u.copy.dst.off;
                if (src != dst)
                    kp_copy(dst, src, (size_t)op->u.copy.src.len);
                break;
            }
            case KP_OP_REDUCE: {
                const kp_region *a = &op->u.reduce.a, *b = &op->u.reduce.b, *d = &op->u.reduce.dst;
                rc = red ? kp_reduce_apply(red, base[d->buf] + d->off, base[a->buf] + a->off, base[b->buf] + b->off,
                                           d->len)
                         : kp_error(KP_ERR_INTERNAL, "%s combines data, but the call gave no operation", pl->name);
                break;
            }
            case KP_OP_PEER_READ:
                rc = peer_copy(c, op->u.peer_read.peer, base[op->u.peer_read.dst.buf] + op->u.peer_read.dst.off,
                               &op->u.peer_read.src, 0);
                break;
            case KP_OP_PEER_WRITE:
                rc = peer_copy(c, op->u.peer_write.peer, base[op->u.peer_write.src.buf] + op->u.peer_write.src.off,
                               &op->u.peer_write.dst, 1);
                break;
            case KP_OP_WAIT: {
                const int ql = c->layout.local[op->u.wait.peer];
                _Atomic uint64_t *f = op->u.wait.line ? (_Atomic uint64_t *)(base[KP_BUF_LINE] + ql * KP_LINE)
                                                      : &c->shm.slots[ql].flag;
                const uint64_t want = (seq << KP_SEQ_SHIFT) | (uint64_t)op->u.wait.n;
                if (atomic_load_explicit(f, memory_order_acquire) < want) {
                    if (rma)
                        rc = kp_rma_wait_flag(pl, f, want);
                    else
                        kp_shm_wait(c, f, want, pl->reqs, n);
                }
                break;
            }
            }
        }
        while (op < end && op->round == round) /* after an error: skip the rest of the round */
            op++;
        if (n > 0 && MPI_Waitall(n, pl->reqs, kp_statuses_ignore) != MPI_SUCCESS && !rc)
            rc = kp_error(KP_ERR_MPI, "MPI_Waitall failed in round %d", round);
        if (rma && !rc)
            rc = kp_rma_round_end(pl);
        if (rc)
            return rc;
    }
    return KP_SUCCESS;
}

/* A wait polls flat out, then pauses, and once it has lasted KP_WAIT_YIELD_NS
 * it yields at every poll: the poster may be waiting for this core. Counting
 * polls (4096, ~4000 pauses of ~26 ns on this EPYC, before the first yield)
 * instead of time let a waiting rank keep its core for 100+ us per wait when
 * more ranks than cores run on one machine that kport cannot see as one node
 * (hosts as namespaces: scripts/cluster.sh, 2 hosts x 2 ranks on 2 cores,
 * each host's c->oversub 0), while its node's leader needed that core to
 * drive TCP: 8 B smp_bruck took 218-249 us against native's 43-51, now
 * 23-53 against 33-49 (docs/DESIGN.md, "The schedule IR"). A yield with
 * nobody else to run returns at once: on one node with a core per rank
 * nothing changed. */
#define KP_WAIT_YIELD_NS 1000.0

void kp_shm_wait(kp_comm *c, _Atomic uint64_t *flag, uint64_t target, MPI_Request *reqs, int n)
{
    unsigned spins = 0;
    int yield = c->oversub; /* more ranks than cores: let the poster run at once */
    double t0 = 0;
    while (atomic_load_explicit(flag, memory_order_acquire) < target) {
        spins++;
        if (!yield && (spins & 63) == 0) { /* the clock every 64 polls (~20 ns a read) */
            const double t = kp_now_ns();
            if (t0 == 0)
                t0 = t;
            else if (t - t0 > KP_WAIT_YIELD_NS)
                yield = 1;
        }
        if (yield)
            sched_yield();
        else if (spins > 128)
            kp_cpu_relax(); /* the first polls go flat out: pause costs ~100 cycles */
        if (n > 0 && (spins & 31) == 0) { /* the poster may need our messages to move */
            int done;
            MPI_Testall(n, reqs, &done, kp_statuses_ignore);
        } else if (n == 0 && yield && (spins & 15) == 0) {
            /* A wait that lasts: drive MPI's progress, which a peer's
             * one-sided call may need from this rank (MPICH 4.0.2 over UCX:
             * a gather root's MPI_Win_flush of kport's transport waited
             * for its sender, who had gone on into a shared-memory
             * allreduce and only polled flags: the drop-in's plain_app
             * hung). Probing is what MPI offers without a request. */
            int any;
            PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c->user, &any, MPI_STATUS_IGNORE);
        }
    }
}
