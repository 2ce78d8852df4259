/*
 * The one-sided transport's private types (onesided.c: the data path;
 * onesided_setup.c: the windows). Not a layer's interface: only these two
 * files include it.
 */
#ifndef KP_EXEC_ONESIDED_INT_H
#define KP_EXEC_ONESIDED_INT_H

#include "exec/onesided.h"

#define CTRL 64 /* bytes per control word (own cache line) */
/* control lines per peer: arrived, consumed, posted, darrived, mailbox */
#define NCTRL 5
#define C_ARRIVED 0
#define C_CONSUMED 1
#define C_POSTED 2
#define C_DARRIVED 3
#define C_MBOX 4
#define MBOX (CTRL / 8) /* mailbox entries per peer: addresses of direct receives */
#define CDISP(L, kind, peer) (((MPI_Aint)(kind) * (L)->P + (peer)) * CTRL)
/* rma_path=auto: messages of at least this many KiB go straight into the
 * receive buffer, -1: none (KPORT_RMA_ATTACH_KB overrides). Measured in
 * commit 5a2ded8 (git show 5a2ded8:docs/bench/rma-paths/): under Open MPI attach is
 * even at 8 KiB and 0.41-0.74x of staging from 16 KiB for ring-like
 * algorithms (bruck loses 1.1-1.6x); under MPICH 4.0 it loses at every
 * size. */
#ifdef OPEN_MPI
#define KP_RMA_ATTACH_KB_DEFAULT 16
#else
#define KP_RMA_ATTACH_KB_DEFAULT (-1)
#endif

typedef struct rma_msg {
    char *p;         /* the message's bytes in this rank's buffers */
    int64_t len;
    int peer;
    int send;
    int direct;      /* attach path: put straight into the receive buffer */
    int64_t dseq;    /* direct: its number among the pair's direct messages */
    int published;   /* direct receive: its address is in the sender's mailbox */
    int entry;       /* direct receive: the attachment cache entry covering it */
    int64_t addr;    /* direct receive: MPI_Get_address of p (origin of the mailbox put) */
    char *blo, *bhi; /* direct receive: the buffer p lies in (attached whole) */
    int64_t cap;     /* bytes per piece */
    int64_t npieces; /* at least 1 (a zero-byte signal is one empty piece) */
    int64_t done;    /* pieces put (send) or copied out (receive) */
} rma_msg;

typedef struct rma_link { /* the windows of one rails count */
    int P;
    int rails, nslots;
    int shared;    /* windows from MPI_Win_allocate_shared (every rank on this machine) */
    int nlocal;    /* ranks of the communicator on this machine (each allocates its window in /dev/shm) */
    int putflag;   /* counters written by MPI_Put, read from memory (read_ctrl) */
    int64_t sb;    /* slot bytes in one rail's window */
    MPI_Aint ctrl; /* control bytes at the start of every window */
    MPI_Win win[KP_RAILS_MAX];
    char *base[KP_RAILS_MAX];
    int64_t *sent;    /* [P] pieces put into q's ring for me */
    int64_t *credit;  /* [P] of those, consumed by q (last read) */
    int64_t *recvd;   /* [P] pieces copied out of s's ring in my windows */
    int64_t *arrived; /* [P] pieces s has notified (last read) */
    int64_t *note;    /* [2P] origin values of notifications and credits (stable until flushed) */
    unsigned char *flags; /* [P] per sweep: bit 0 send blocked, 1 recv blocked, 2 put, 3 consumed */
    unsigned *rails_used; /* [P] rails with puts to q in this sweep */
    /* the attach path (rma_path=attach or auto above attach_bytes) */
    int dyn;          /* dynamic windows dwin[0..rails-1] exist and passed the probe */
    int64_t attach_bytes; /* auto: messages of at least this many bytes go direct */
    MPI_Win dwin[KP_RAILS_MAX];
    int64_t *dsent;   /* [P] direct messages to q put and notified */
    int64_t *dseen;   /* [P] addresses q has published to me (last read) */
    int64_t *dsend_n; /* [P] direct sends to q numbered so far */
    int64_t *drecv_n; /* [P] direct receives from s numbered so far */
    int64_t *dposted; /* [P] addresses published to s */
    int64_t *ddone;   /* [P] direct receives from s complete */
    int64_t *darrived;/* [P] direct messages s has notified (last read) */
    struct rma_att *att; /* attachment cache, KP_RMA_ATT entries */
    uint64_t stamp;
} rma_link;

/* the attachment cache: address ranges attached to every rail's dynamic
 * window, kept across calls (an RDMA registration cache's policy) */
#define KP_RMA_ATT 16
typedef struct rma_att {
    char *lo;
    int64_t len;    /* 0: free entry */
    int busy;       /* published receives into it not yet complete */
    uint64_t used;  /* last use (LRU) */
} rma_att;
/* MPI_Win_attach / MPI_Win_detach calls of the attachment cache (tests) */
extern long kp_osc_attach_calls, kp_osc_detach_calls;


typedef struct kp_rma {
    int P, me;
    MPI_Comm comm;
    rma_link *link[KP_RAILS_MAX + 1];
    /* the round in progress */
    rma_link *cur;
    int64_t stripe;
    rma_msg *msgs;
    int nmsgs, cap;
    int pending; /* messages added since the last sweep */
    int path;    /* the round's plan's rma_path */
    int oversub;
    int refused; /* MPI made no window on this communicator (agreed): why */
    char why[200];
} kp_rma;

#endif
