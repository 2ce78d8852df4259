/*
 * Shared pieces of the broadcast builders:
 *  1. the k-nomial tree broadcast (knomial.c; binomial.c is k = 1);
 *  2. chunks of a message (chain, shm_flat, smp);
 *  3. the node broadcast through the shared segment (shm_flat, smp): one
 *     writer per node (the root, or the node's master that receives the
 *     message), every other rank of the node a reader.
 *
 * The node broadcast. The message is cut into nch chunks of ch bytes (the
 * last shorter). The writer puts chunk i into segment slot i mod S
 * (S = min(nch, KP_NBC_SLOTS) slots of ch bytes) and makes its post i + 1
 * ("chunk i is in its slot") in the round after; readers wait for that
 * post and copy the chunk out to their receive buffers, so chunk i + 1
 * arrives while chunk i is copied out. A message of at most KP_LINE - 8
 * bytes travels in the writer's flag line instead (one chunk; post_line /
 * wait_line: the reader gets flag and data with one transfer).
 * Posts of a reader: 1 on entry, then c + 2 once it has copied chunk c out,
 * for the chunks whose slot is used again (c + S < nch). The writer waits
 * for every reader's post c + 2 before it puts chunk c + S into that slot.
 * The node fence (algo/smp_common.h): every reader waits for the writer's
 * chunk posts (made after the writer entered the call), and every rank
 * waits for the post 1 of every reader but itself in its last round
 * (readers of other readers too: a later call may run another algorithm in
 * which this reader writes the segment), so no rank leaves a call before
 * every rank of its node has entered it, and call c + 2 (which uses call
 * c's half of the segment) cannot touch bytes a rank still reads in call c.
 * Those waits cost nothing on a node of two ranks and little elsewhere: by
 * the last round the node's ranks have long entered.
 */
#ifndef KP_ALGO_BCAST_COMMON_H
#define KP_ALGO_BCAST_COMMON_H

#include "algo/algo.h"
#include "algo/bcast/peers_bcast.h"
#include "algo/smp_common.h"
#include "kport.h"

/* the k-nomial broadcast (knomial.c), k children per level; name for errors */
int kp_bcast_knomial_tree(kp_sched *s, int k, const char *name);

/* The scatter + all-gather broadcasts (scatter_allgather.c, scatter_ring.c):
 * pieces kp_piece_off of the receive buffer, piece rel owned by relative
 * rank rel = (p - root) mod P. */
/* send (receive) pieces [a, a + cnt) (mod P) to (from) rank peer: one
 * message per region (two when the range wraps past piece P-1) */
void kp_bcast_pieces_xfer(kp_sched *s, int send, int peer, int a, int cnt);
/* the binomial scatter of the pieces: rel ends up holding its subtree's
 * pieces [rel, rel + kp_knom_subtree(rel, P, 1)) */
void kp_bcast_scatter_pieces(kp_sched *s);
/* how many of the pieces [a, a + cnt) (mod P; a range that does not wrap
 * past q) relative rank q holds after the scatter: always a prefix */
int kp_bcast_pieces_known(int q, int P, int a, int cnt);

/* automatic chunk sizes (chunk_kb = 0): the node broadcast's (shm_flat.c)
 * and the chain's (chain.c) */
int64_t kp_bcast_node_chunk(int64_t bytes, const kp_params *prm);
int64_t kp_bcast_chain_chunk(int64_t bytes, int P, const kp_params *prm);

/* ---- chunks of a message ----------------------------------------------------- */

typedef struct kp_chunks {
    int64_t bytes, ch; /* message and chunk size (ch >= 1) */
    int nch;           /* ceil(bytes / ch); 0 for an empty message */
} kp_chunks;

static inline kp_chunks kp_chunks_of(int64_t bytes, int64_t ch)
{
    kp_chunks c = {bytes, ch < 1 ? 1 : ch, 0};
    if (c.ch > bytes && bytes > 0)
        c.ch = bytes;
    c.nch = bytes > 0 ? (int)((bytes + c.ch - 1) / c.ch) : 0;
    return c;
}
static inline int64_t kp_chunk_off(const kp_chunks *c, int i) { return (int64_t)i * c->ch; }
static inline int64_t kp_chunk_len(const kp_chunks *c, int i)
{
    const int64_t rest = c->bytes - (int64_t)i * c->ch;
    return rest < c->ch ? rest : c->ch;
}

/* ---- node broadcast through the segment --------------------------------------- */

#define KP_NBC_SLOTS 8

typedef struct kp_nbc {
    kp_chunks c;
    int slots;  /* segment slots of c.ch bytes */
    int line;   /* 1: the message rides in the writer's flag line */
    int direct; /* 1: the writer is alone on its node: its "slot" is its receive buffer */
    int writer; /* the writer's rank */
    int wlocal; /* its local index */
} kp_nbc;

static inline kp_nbc kp_nbc_make(const kp_smp *v, int writer, int64_t bytes, int64_t ch)
{
    kp_nbc b;
    const int ns = kp_smp_size(v, kp_smp_node_of(v, writer));
    b.line = ns > 1 && bytes <= KP_LINE - 8;
    b.direct = ns == 1;
    b.c = kp_chunks_of(bytes, b.line ? bytes : ch); /* the same chunks on every node */
    b.slots = b.c.nch < KP_NBC_SLOTS ? b.c.nch : KP_NBC_SLOTS;
    b.writer = writer;
    b.wlocal = kp_smp_local(v, writer);
    return b;
}

/* size the segment (every rank of the node calls it alike) */
static inline void kp_nbc_need(kp_sched *s, const kp_nbc *b)
{
    if (!b->line && !b->direct)
        kp_sched_need_shm(s, (int64_t)b->slots * b->c.ch);
}

/* where chunk i lives for the node: buffer and offset */
static inline int kp_nbc_buf(const kp_nbc *b)
{
    return b->direct ? KP_BUF_RECV : b->line ? KP_BUF_LINE : KP_BUF_SHM;
}
static inline int64_t kp_nbc_off(const kp_nbc *b, int i)
{
    if (b->direct)
        return kp_chunk_off(&b->c, i);
    if (b->line)
        return (int64_t)b->wlocal * KP_LINE + 8;
    return (int64_t)(i % b->slots) * b->c.ch;
}

/* the writer's post "chunk i-1 is in its slot" (none when alone) */
static inline void kp_nbc_publish(kp_sched *s, const kp_nbc *b)
{
    if (b->direct)
        return;
    if (b->line)
        kp_sched_post_line(s);
    else
        kp_sched_post(s);
}

/* the writer, in the round before it fills chunk i + 1: wait until every
 * reader has copied out the chunk that slot held (post c + 2) */
static inline void kp_nbc_wait_slot(kp_sched *s, const kp_smp *v, const kp_nbc *b, int i)
{
    const int c = i + 1 - b->slots;
    if (!b->direct && c >= 0 && i + 1 < b->c.nch)
        kp_smp_wait_node(s, v, kp_smp_node_of(v, b->writer), c + 2, -1);
}

/* the writer's last round: every reader has entered (its post 1) */
static inline void kp_nbc_fence(kp_sched *s, const kp_smp *v, const kp_nbc *b)
{
    if (!b->direct)
        kp_smp_wait_node(s, v, kp_smp_node_of(v, b->writer), 1, -1);
}

/* a reader's whole schedule: entry post, then per chunk wait and copy out;
 * in its last round it waits for the other readers' post 1 (the fence) */
static inline int kp_nbc_reader(kp_sched *s, const kp_smp *v, const kp_nbc *b)
{
    kp_sched_post(s); /* post 1: entered */
    for (int i = 0; i <= b->c.nch; i++) {
        if (i < b->c.nch) {
            if (b->line)
                kp_sched_wait_line(s, b->writer, i + 1);
            else
                kp_sched_wait(s, b->writer, i + 1);
        }
        if (i >= 1)
            kp_sched_copy(s, kp_nbc_buf(b), kp_nbc_off(b, i - 1), KP_BUF_RECV, kp_chunk_off(&b->c, i - 1),
                          kp_chunk_len(&b->c, i - 1));
        if (i >= 2 && i - 2 + b->slots < b->c.nch)
            kp_sched_post(s); /* post i: chunk i - 2 copied out, its slot is free */
        if (i == b->c.nch)
            kp_smp_wait_node(s, v, kp_smp_node_of(v, b->writer), 1, b->writer);
        kp_sched_next_round(s);
    }
    return kp_sched_finish(s);
}

#endif /* KP_ALGO_BCAST_COMMON_H */
