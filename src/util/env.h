/*
 * The floor of the house (src/util): settings read from the environment
 * that every layer may need. The settings of the choice (forced
 * algorithms, the fallback policy, thresholds) are src/select's.
 */
#ifndef KP_UTIL_ENV_H
#define KP_UTIL_ENV_H

/* An integer environment variable the transports read when they set up:
 * def when unset or empty, KP_ENV_BAD when it is not an integer in lo..hi
 * (lo >= -1, so the two never meet); the caller reports it. */
#define KP_ENV_BAD (-2)
int kp_env_int(const char *name, int def, int lo, int hi);
/* KPORT_VERBOSE (read once): rank 0 says what runs and why. */
int kp_verbose(void);
/* KPORT_CALIBRATE (read once): 0 never, 1 once per process (default), 2
 * force; -1 when the value is none of 0, 1, force (kp_settings_load
 * reports it). */
int kp_calibrate_mode(void);

#endif
