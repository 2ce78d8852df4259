/*
 * Selection (src/select): which algorithm runs a call. Forcing, the
 * fallback policy, the tuning file, the built-in rules, the cost model's
 * pick on one node with calibrated costs, and the check of that pick by
 * measurement. Above plan (it asks for plans); below core.
 */
#ifndef KP_SELECT_H
#define KP_SELECT_H

#include "plan/plan.h"
#include "util/env.h"
#include "util/error.h"

typedef struct kp_choice {
    const kp_algo *algo;
    kp_params prm;
    const kp_algo *alt; /* the calibrated choice's other priced candidate, else NULL */
    kp_params alt_prm;
    int forced;        /* 1 when forced by kp_set_algorithm or the environment */
    char why[160];
} kp_choice;

/* Settings from the environment, read once (KPORT_<COLL>, KPORT_FALLBACK,
 * thresholds; KPORT_VERBOSE and KPORT_CALIBRATE through util/env.h).
 * Returns KP_ERR_PARAM (with message) on a bad variable. */
int kp_settings_load(void);
int kp_fallback_policy(void);
/* The forced choice for coll, if any (algo NULL = auto). */
int kp_select_forced(int coll, kp_choice *ch);
/* Built-in automatic rules. */
void kp_select_auto(int coll, const kp_layout *L, int P, int64_t bytes, kp_choice *ch);
/* ... for a reduction whose operation commutes or not (kp_select_auto: 1). */
void kp_select_auto_red(int coll, const kp_layout *L, int P, int64_t bytes, int commute, kp_choice *ch);
/* kp_select_auto on c's layout, bringing up the node tier (and its
 * calibration) first when the rules pick a shared-memory algorithm (their
 * choice depends on whether cross-memory attach works, which the node tier
 * probes); then, on one node with calibrated costs, the cost model's
 * choice among the candidates the rules allow (calibrate.c); remembered
 * per group (auto.c). */
int kp_select_auto_on(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch);
/* Thresholds of the rules (select.c), for the calibrated choice. */
int kp_single_copy_min_set(void); /* KPORT_SINGLE_COPY_MIN given: keep the fixed rule */
int64_t kp_shm_max(void);
int kp_shm_chunk_kb(void);


/* ---- the cost model's pick on one node (calibrate.c) ---- */
/* Price the rules' one-node candidates with the model; 1 and *ch set when
 * the model chose, 0 when the rules decide. */
int kp_calibrated_choice(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_choice *ch);
/* The model's pick among the one-node candidates of coll on layout L with
 * machine m (kp_calibrated_choice's core, pure: tests call it with fixed
 * machines): 1 and *ch set, or 0 when no candidate applies. The
 * single-copy candidate runs only when predicted KP_PICK_MARGIN times
 * cheaper than the two-copy one (calibrate.c says why). */
#define KP_PICK_MARGIN 1.15
int kp_model_pick(const kp_machine *m, int coll, const kp_layout *L, int P, int64_t bytes, int root, int inplace,
                  kp_choice *ch);
/* KPORT_VERIFY (select.c): 0 the model's choice stays, 1 checked by
 * measurement (default; select/verify.c). */
int kp_verify_mode(void);
/* Resolve the plan to run: forced plan, or auto plan (falling back as the
 * policy says when the forced algorithm refuses). */
int kp_select_plan(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **out);
void kp_set_last_algorithm(int coll, const kp_plan *pl);

/* ---- the calibrated choice checked by measurement (select/verify.c) ---- */
/* calls moving fewer bytes in all (P x block) are never checked */
#define KP_VERIFY_MIN ((int64_t)8192)
/* whether a call's choice may be checked: the calibrated choice (c->alt
 * set) and at least KP_VERIFY_MIN bytes in all; inline, so that the other
 * calls do not call into verify.c to find out (that call cost ~40
 * instructions, ~10 ns, on every `auto` all-gather of 8 B) */
static inline int kp_verify_applies(const kp_comm *c, int coll, int64_t bytes)
{
    return c->alt[coll] && (int64_t)c->size * bytes >= KP_VERIFY_MIN;
}
/* Before a call for which kp_verify_applies: *pl becomes the plan to run
 * (the other candidate where a trial or an earlier trial says so); *token
 * and *side to pass to kp_verify_end
 * (token NULL: nothing to do). Every rank must make the same calls. */
int kp_verify_begin(kp_comm *c, int coll, int64_t bytes, int root, int inplace, kp_plan **pl, void **token,
                    int *side);
/* After it: ns is what the call took on this rank; the trial's last call
 * agrees (MPI_Allreduce on c's private duplicate) and decides. */
int kp_verify_end(kp_comm *c, int coll, const kp_algo *pick, void *token, int side, double ns);
void kp_verify_free(kp_comm *c);

#endif
