/*
 * The tuning file (KPORT_TUNING_FILE, docs/TUNING.md): an ordered list of
 * rules "collective, communicator size, node layout, bytes per rank ->
 * algorithm with parameters"; the first rule that matches a call and whose
 * algorithm applies at its P runs it. kport-tune writes such files from
 * measurements (kport-bench) or simulations (kport-sim).
 *
 * The parser (kp_tuning_parse) and the matcher (kp_tuning_match) are pure:
 * no MPI, tested in tests/tune/test_tuning.c. The process-wide file is read
 * once by kp_settings_load (kp_tuning_load); select.c asks kp_tuning_select
 * for a call's plan before the automatic choice.
 */
#ifndef KP_SELECT_TUNING_H
#define KP_SELECT_TUNING_H

#include "algo/algo.h"

#include <stddef.h>
#include <stdint.h>

#define KP_TUNING_VERSION 1
#define KP_TUNING_UNBOUNDED INT64_MAX

/* An inclusive range [lo, hi]; hi = KP_TUNING_UNBOUNDED has no upper end.
 * "any" is [0, KP_TUNING_UNBOUNDED]. */
typedef struct kp_tuning_range {
    int64_t lo, hi;
} kp_tuning_range;

typedef struct kp_tuning_rule {
    int coll;                /* enum kp_coll */
    kp_tuning_range P;       /* communicator size */
    kp_tuning_range nodes;   /* nodes of the communicator's layout */
    kp_tuning_range ppn;     /* ranks per node: every node's count within it */
    kp_tuning_range bytes;   /* bytes of one rank's block */
    const kp_algo *algo;     /* NULL: "auto" (the built-in choice) */
    kp_params prm;           /* as kp_algo_parse gives them */
    char spec[128];          /* the algorithm as written */
    int line;                /* where the rule starts in the file */
} kp_tuning_rule;

typedef struct kp_tuning {
    char name[256];          /* the file, as named in messages */
    int n;
    kp_tuning_rule *rule;    /* [n], in file order */
} kp_tuning;

/* Parse text[0..len) (named `name` in messages) into t. KP_SUCCESS, or
 * KP_ERR_PARAM / KP_ERR_NOMEM and a message naming the file, the line and
 * the field: "t.json, line 9: rules[1].bytes: min 64 above max 8". t is
 * empty on failure. */
int kp_tuning_parse(const char *text, size_t len, const char *name, kp_tuning *t, char *err, int errlen);
/* Read and parse the file at path (unreadable: the same kind of message). */
int kp_tuning_read(const char *path, kp_tuning *t, char *err, int errlen);
void kp_tuning_free(kp_tuning *t);
/* The index of the first rule at or after `from` that matches the call, or
 * -1. ppn_min / ppn_max: the fewest and most ranks any node holds. */
int kp_tuning_match(const kp_tuning *t, int from, int coll, int P, int nnodes, int ppn_min, int ppn_max,
                    int64_t bytes);

/* KPORT_TUNING_FILE, read once (kp_settings_load). A bad or unreadable
 * file is reported on rank 0 of MPI_COMM_WORLD, once, and ignored (the
 * built-in rules stay in force); it never fails the caller. */
void kp_tuning_load(int verbose);
/* The loaded rules (NULL: no file, or a bad one). */
const kp_tuning *kp_tuning_active(void);
/* The message the bad file gave ("" when it loaded or none was named). */
const char *kp_tuning_error(void);

struct kp_comm;
struct kp_plan;
/* The plan of the first rule that matches the call on c and whose builder
 * accepts it (a refused rule falls through to the next; KPORT_VERBOSE says
 * so on rank 0). *out NULL when no rule decides (none matches, or the rule
 * that matches says "auto"); why: "tuning file t.json rule 3, line 17".
 * Collective over c (plans may bring up resources). */
int kp_tuning_select(struct kp_comm *c, int coll, int64_t bytes, int root, int inplace, struct kp_plan **out,
                     char *why, int whylen);

#endif /* KP_SELECT_TUNING_H */
