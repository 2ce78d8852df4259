/*
 * The floor of the house (src/util): errors. kp_error records the detailed
 * message kp_last_error() returns (per thread) and returns its code; the
 * codes and kp_strerror are in include/kport.h.
 */
#ifndef KP_UTIL_ERROR_H
#define KP_UTIL_ERROR_H

#include "kport.h"

#include <stdarg.h>

/* Record the detailed message for kp_last_error() and return code. */
int kp_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kp_clear_error(void);
/* MPI's text for error code e in buf (MPI_MAX_ERROR_STRING bytes), for
 * messages that say what MPI refused; returns buf. */
const char *kp_mpi_reason(int e, char *buf);
/* Append to a message being built in buf (len bytes, *n used so far: a
 * prefix, then the reason, as the parameter and tuning files' readers
 * report a bad field); nothing once it is full. vappend: the same with a
 * va_list. */
void kp_err_append(char *buf, int len, int *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void kp_err_vappend(char *buf, int len, int *n, const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

#endif
