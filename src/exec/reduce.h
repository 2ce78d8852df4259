/*
 * The combine kernels of reductions (src/exec/reduce.c): what KP_OP_REDUCE
 * (dst = a op b, a the left operand: the lower ranks' contributions) runs.
 *
 * A kp_reducer is chosen once per call from (MPI_Op, datatype) by the core
 * and handed to the executor at run time (kp_exec_run_red); a cached plan
 * never holds one, so it never points at a user's operation. It is either
 * an inline kernel (a builtin operation on a common C type: loops the
 * compiler vectorises; MPI_MAXLOC / MPI_MINLOC on the C pair types with
 * MPI's tie rule, the smaller index) or MPI_Reduce_local with the
 * operation and type (user-defined operations, long double, complex,
 * Fortran types, ...).
 */
#ifndef KP_EXEC_REDUCE_H
#define KP_EXEC_REDUCE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* dst = a op b over n elements; dst is a, b, or disjoint from both */
typedef void (*kp_combine_fn)(void *dst, const void *a, const void *b, size_t n);

typedef struct kp_reducer {
    kp_combine_fn fn;  /* inline kernel, or NULL: MPI_Reduce_local(op, type) */
    MPI_Op op;
    MPI_Datatype type; /* the type of one element as it lies in memory */
    int64_t elem;      /* bytes one element takes in memory (its extent) */
    int commute;       /* the operation commutes */
    const char *name;  /* "MPI_SUM on MPI_DOUBLE (inline)", for messages and tests */
} kp_reducer;

/* A builtin operation (MPI_SUM ... MPI_MINLOC; not MPI_REPLACE / MPI_NO_OP,
 * which only one-sided accumulates take)? Sets *name ("MPI_SUM"). */
int kp_op_builtin(MPI_Op op, const char **name);

/* The reducer of builtin operation op on the predefined type t. Returns
 * KP_SUCCESS; KP_ERR_ARG when op is not a builtin operation valid in a
 * collective; KP_ERR_DATATYPE when MPI does not define op on t (MPI_SUM on
 * MPI_DOUBLE_INT, MPI_MAXLOC on MPI_INT, a bitwise operation on MPI_FLOAT);
 * KP_ERR_UNSUPPORTED when t is a type kport does not know (MPI_CHAR,
 * MPI_WCHAR, ...: MPI itself decides). why says which (fn-less text). */
int kp_reducer_builtin(MPI_Op op, MPI_Datatype t, kp_reducer *r, char *why, size_t whylen);

/* The reducer of a user-defined operation on type t whose elements take
 * elem bytes: always MPI_Reduce_local; commute from MPI_Op_commutative. */
void kp_reducer_user(MPI_Op op, MPI_Datatype t, int64_t elem, int commute, kp_reducer *r);

/* dst = a op b over len bytes (a multiple of r->elem); dst is exactly a,
 * exactly b, or overlaps neither. Returns KP_SUCCESS or KP_ERR_MPI /
 * KP_ERR_NOMEM (with message). */
int kp_reduce_apply(const kp_reducer *r, void *dst, const void *a, const void *b, int64_t len);

#endif
