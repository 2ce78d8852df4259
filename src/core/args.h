/*
 * The one path shared by the data-moving entry points (kp_allgather,
 * kp_gather, kp_alltoall, kp_scatter, kp_bcast): argument checks, datatype handling (in place for
 * gap-free types, packed staging through MPI_Pack / MPI_Unpack otherwise),
 * plan selection and execution. Not part of the API.
 */
#ifndef KP_ARGS_H
#define KP_ARGS_H

#include "core/core.h"

typedef struct kp_call {
    const char *fn; /* entry point, named in error messages */
    int coll;       /* KP_COLL_ALLGATHER, _GATHER, _ALLTOALL, _SCATTER or _BCAST */
    const void *sbuf; /* may be MPI_IN_PLACE (scatter: rbuf may); bcast: unused */
    MPI_Count scount;
    MPI_Datatype stype;
    void *rbuf;       /* bcast: the buffer */
    MPI_Count rcount;
    MPI_Datatype rtype;
    int root; /* gather, scatter, bcast */
    MPI_Comm comm;
} kp_call;

/* Check the arguments with MPI's semantics and run the call:
 *  - send count/type/buffer ignored under MPI_IN_PLACE; for gather the
 *    receive side is significant only at the root, for scatter the send
 *    side; MPI_IN_PLACE (gather: sendbuf, scatter: recvbuf) only valid at
 *    the root; a root outside [0, P) is KP_ERR_ARG;
 *  - MPI_COMM_NULL / inter-communicator -> KP_ERR_COMM; MPI_DATATYPE_NULL or
 *    an invalid type -> KP_ERR_DATATYPE; negative / overflowing counts or
 *    send size != receive size (where both are significant) -> KP_ERR_COUNT;
 *    then a zero-byte call succeeds at once; then a NULL buffer -> KP_ERR_ARG;
 *  - the plan is selected (kp_select_plan) and recorded with
 *    kp_set_last_algorithm, then executed on kport's private communicator.
 * A block of a type that is not one gap-free run is packed into the
 * communicator's staging buffer and unpacked block by block afterwards, so
 * gaps in the user's buffers are never written. */
int kp_call_run(const kp_call *k);

/* The start of every entry point's call: settings loaded, the
 * communicator checked (KP_ERR_COMM) unless kport knows it, *c its state
 * if kport has one already (else NULL), *P and *me its size and rank. */
int kp_call_enter(const char *fn, MPI_Comm comm, kp_comm **c, int *P, int *me);

/* The plan of a call (kp_select_plan with key_inplace, the plans' key),
 * the calibrated choice's check by measurement around it (select/verify.c)
 * and kp_set_last_algorithm: kp_run_begin before running run->pl,
 * kp_run_end after (returns rc, or the check's error). */
typedef struct kp_run {
    kp_plan *pl;
    const kp_algo *pick;
    void *vt;
    int side;
    double t0;
} kp_run;
int kp_run_begin(kp_comm *c, int coll, int64_t bytes, int root, int inplace, int key_inplace, kp_run *r);
int kp_run_end(kp_comm *c, int coll, const kp_run *r, int rc);

/* Staging (pack.c). One element of t must pack to exactly its type size
 * and count elements' extent must not overflow (else KP_ERR_DATATYPE /
 * KP_ERR_COUNT); n elements of t at in are packed to out (n * size bytes)
 * and back, in pieces within MPI's int counts. */
int kp_pack_size_ok(const char *fn, MPI_Comm comm, const char *which, MPI_Count count, MPI_Datatype t,
                    const kp_tinfo *ti);
int kp_pack_n(const char *fn, MPI_Comm comm, const void *in, int64_t n, MPI_Datatype t, const kp_tinfo *ti, char *out);
int kp_unpack_n(const char *fn, MPI_Comm comm, const char *in, int64_t n, void *out, MPI_Datatype t,
                const kp_tinfo *ti);

#endif /* KP_ARGS_H */
