/*
 * A small JSON reader (RFC 8259) for kport's own files: the machine
 * parameter file (docs/PARAMETERS.md). It builds a tree of values; objects
 * keep their members in file order. No library dependency.
 *
 * Errors name the line and column and what was expected:
 *   "line 3, column 14: expected ',' or '}' after an object member"
 *   "line 9, column 1: unexpected end of file inside an object"
 */
#ifndef KP_MODEL_JSON_H
#define KP_MODEL_JSON_H

#include <stddef.h>

enum kp_json_type { KP_JSON_NULL, KP_JSON_BOOL, KP_JSON_NUMBER, KP_JSON_STRING, KP_JSON_ARRAY, KP_JSON_OBJECT };

typedef struct kp_json {
    int type;             /* enum kp_json_type */
    int boolean;          /* KP_JSON_BOOL */
    double number;        /* KP_JSON_NUMBER */
    int integral;         /* KP_JSON_NUMBER written without fraction or exponent */
    char *string;         /* KP_JSON_STRING (NUL-terminated, UTF-8) */
    int n;                /* members of an array or object */
    struct kp_json **item; /* [n] values */
    char **key;           /* [n] keys (objects) */
    int line;             /* where the value starts in the text */
} kp_json;

/* Parse text[0..len) as one JSON value (and nothing but white space after
 * it). Returns the tree, or NULL with the reason in err (out of memory
 * included). Nesting deeper than 64 levels is refused. */
kp_json *kp_json_parse(const char *text, size_t len, char *err, int errlen);
void kp_json_free(kp_json *v);
/* Member `key` of an object (the last one if repeated), or NULL. */
const kp_json *kp_json_get(const kp_json *obj, const char *key);
/* The name of a type, for messages ("a number", "an object"). */
const char *kp_json_type_name(int type);
/* Read the whole file at path into a malloc'd buffer (*text, *len bytes;
 * the caller frees it). max > 0: a file of max bytes or more is refused.
 * Returns 0, or why not (*text NULL then): KP_READ_OPEN or KP_READ_IO with
 * errno saying why, KP_READ_NOMEM, KP_READ_BIG (at least max bytes). */
enum { KP_READ_OPEN = 1, KP_READ_IO, KP_READ_NOMEM, KP_READ_BIG };
int kp_json_read_file(const char *path, size_t max, char **text, size_t *len);

#endif /* KP_MODEL_JSON_H */
