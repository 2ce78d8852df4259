/*
 * The timing engine's event queue (des.c only; static inline so the hot
 * loop keeps its calls inlined). A radix heap (monotone priority queue):
 * the simulation never queues an event before the current time, and
 * non-negative doubles order as their bit patterns, so an event goes to
 * bucket 64 - clz(key ^ last) of the last time taken out (bucket 0: equal to
 * it). Bucket 0 is kept sorted by the first-queued order k and read from the
 * front: events queued at the current time are new, so their k is the
 * largest yet and they are appended in order. When bucket 0 runs out, the
 * lowest non-empty bucket is spread out around its smallest time, and what
 * lands in bucket 0 is sorted by k. Every operation is a sequential append:
 * no cache-missing sift through a heap of millions of events.
 */
#ifndef KP_TIMING_QUEUE_H
#define KP_TIMING_QUEUE_H

#include "timing/engine.h"

#define NB 65

static inline uint64_t tkey(double t)
{
    uint64_t u;
    if (!(t > 0))
        return 0;
    memcpy(&u, &t, sizeof u);
    return u;
}

static inline int bucket_of(uint64_t key, uint64_t last)
{
    return key == last ? 0 : 64 - __builtin_clzll(key ^ last);
}

static inline int bpush(sim *s, int b, ev e)
{
    evb *B = &s->bk[b];
    if (B->n == B->cap && kp_eng_grow(s, (void **)&B->e, &B->cap, B->n + 1, sizeof(ev)))
        return kp_eng_nomem(s);
    B->e[B->n++] = e;
    return 0;
}

static inline int hpush(sim *s, ev e)
{
    uint64_t key = tkey(e.t);
    if (key < s->last) { /* never before the current time */
        key = s->last;
        e.t = s->now;
    }
    s->nheap++;
    return bpush(s, bucket_of(key, s->last), e);
}

static inline int ev_k_cmp(const void *a, const void *b)
{
    const uint64_t x = ((const ev *)a)->k, y = ((const ev *)b)->k;
    return x < y ? -1 : x > y;
}

/* the next event; s->nheap > 0 */
static inline ev hpop(sim *s)
{
    evb *Z = &s->bk[0];
    if (s->zpos == Z->n) {
        Z->n = s->zpos = 0;
        int b = 1;
        while (s->bk[b].n == 0)
            b++;
        evb *B = &s->bk[b];
        uint64_t m = UINT64_MAX;
        double mt = 0;
        for (size_t i = 0; i < B->n; i++) {
            const uint64_t k = tkey(B->e[i].t);
            if (k < m) {
                m = k;
                mt = B->e[i].t;
            }
        }
        s->last = m;
        s->now = mt;
        const size_t n = B->n;
        B->n = 0;
        for (size_t i = 0; i < n; i++) /* every element goes to a lower bucket: B is not appended to */
            bpush(s, bucket_of(tkey(B->e[i].t), m), B->e[i]);
        if (B->cap > 65536) { /* give large empty buckets back: only the live events hold memory */
            free(B->e);
            s->mem -= B->cap * sizeof(ev);
            B->e = NULL;
            B->cap = 0;
        }
        int sorted = 1;
        for (size_t i = 1; i < Z->n && sorted; i++)
            sorted = Z->e[i - 1].k < Z->e[i].k;
        if (!sorted)
            qsort(Z->e, Z->n, sizeof(ev), ev_k_cmp);
    }
    s->nheap--;
    return Z->e[s->zpos++];
}

static inline int qnew(sim *s, double t, int type, uint32_t host, uint32_t x)
{
    ev e = {t, (s->ts++ << 3) | (uint64_t)type, host, x};
    return hpush(s, e);
}

static inline int qagain(sim *s, ev e, double t)
{
    e.t = t;
    return hpush(s, e);
}
#endif /* KP_TIMING_QUEUE_H */
