/*
 * A small JSON reader: recursive descent over the text, one kp_json per
 * value. See json.h.
 */
#include "util/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KP_JSON_MAX_DEPTH 64

typedef struct parser {
    const char *s;
    size_t len, pos;
    int depth;
    char *err;
    int errlen;
    int failed;
} parser;

static void where(const parser *p, size_t pos, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < pos && i < p->len; i++) {
        if (p->s[i] == '\n') {
            (*line)++;
            *col = 1;
        } else
            (*col)++;
    }
}

static void fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(parser *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = 1;
    if (!p->err || p->errlen <= 0)
        return;
    int line, col;
    where(p, p->pos, &line, &col);
    int n = snprintf(p->err, (size_t)p->errlen, "line %d, column %d: ", line, col);
    if (n < 0 || n >= p->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, (size_t)(p->errlen - n), fmt, ap);
    va_end(ap);
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            p->pos++;
        else
            break;
    }
}

static int at_end(parser *p, const char *inside)
{
    if (p->pos < p->len)
        return 0;
    fail(p, "unexpected end of file%s%s (truncated file?)", inside ? " inside " : "", inside ? inside : "");
    return 1;
}

static kp_json *new_value(parser *p, int type)
{
    kp_json *v = calloc(1, sizeof *v);
    if (!v) {
        fail(p, "out of memory");
        return NULL;
    }
    v->type = type;
    int col;
    where(p, p->pos, &v->line, &col);
    return v;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int read_hex4(parser *p, unsigned *out)
{
    unsigned u = 0;
    for (int i = 0; i < 4; i++) {
        if (at_end(p, "a string"))
            return -1;
        int h = hexval(p->s[p->pos]);
        if (h < 0) {
            fail(p, "expected a hexadecimal digit in a \\u escape");
            return -1;
        }
        u = u * 16 + (unsigned)h;
        p->pos++;
    }
    *out = u;
    return 0;
}

static size_t put_utf8(char *d, unsigned cp)
{
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xc0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xe0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        d[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    d[0] = (char)(0xf0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    d[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* p->pos at the opening quote; returns a malloc'd string */
static char *parse_string_raw(parser *p)
{
    p->pos++; /* '"' */
    /* the decoded string is never longer than the raw text */
    size_t start = p->pos, end = start;
    while (end < p->len && p->s[end] != '"') {
        if (p->s[end] == '\\')
            end++;
        end++;
    }
    size_t cap = (end > p->len ? p->len : end) - start + 1;
    char *d = malloc(cap + 4);
    if (!d) {
        fail(p, "out of memory");
        return NULL;
    }
    size_t n = 0;
    for (;;) {
        if (at_end(p, "a string"))
            break;
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            d[n] = '\0';
            return d;
        }
        if (c < 0x20) {
            fail(p, "control character in a string (a newline must be written \\n)");
            break;
        }
        if (c != '\\') {
            d[n++] = (char)c;
            p->pos++;
            continue;
        }
        p->pos++;
        if (at_end(p, "a string"))
            break;
        char e = p->s[p->pos++];
        switch (e) {
        case '"': d[n++] = '"'; break;
        case '\\': d[n++] = '\\'; break;
        case '/': d[n++] = '/'; break;
        case 'b': d[n++] = '\b'; break;
        case 'f': d[n++] = '\f'; break;
        case 'n': d[n++] = '\n'; break;
        case 'r': d[n++] = '\r'; break;
        case 't': d[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (read_hex4(p, &cp))
                goto fail;
            if (cp >= 0xd800 && cp < 0xdc00 && p->pos + 1 < p->len && p->s[p->pos] == '\\' &&
                p->s[p->pos + 1] == 'u') {
                unsigned lo;
                p->pos += 2;
                if (read_hex4(p, &lo))
                    goto fail;
                if (lo >= 0xdc00 && lo < 0xe000)
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                else {
                    fail(p, "a high surrogate \\u escape not followed by a low one");
                    goto fail;
                }
            }
            if (cp == 0) {
                fail(p, "\\u0000 in a string");
                goto fail;
            }
            n += put_utf8(d + n, cp); /* an escape of 6 or 12 chars yields at most 4 bytes */
            break;
        }
        default:
            p->pos--;
            fail(p, "unknown escape '\\%c' in a string", e);
            goto fail;
        }
    }
fail:
    free(d);
    return NULL;
}

static kp_json *parse_value(parser *p);

static kp_json *parse_number(parser *p)
{
    size_t st = p->pos;
    int integral = 1;
    if (p->s[p->pos] == '-')
        p->pos++;
    if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
        fail(p, "expected a digit");
        return NULL;
    }
    if (p->s[p->pos] == '0')
        p->pos++;
    else
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '.') {
        integral = 0;
        p->pos++;
        if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
            fail(p, "expected a digit after '.'");
            return NULL;
        }
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integral = 0;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
            p->pos++;
        if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9') {
            fail(p, "expected a digit in an exponent");
            return NULL;
        }
        while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
            p->pos++;
    }
    char buf[64];
    size_t n = p->pos - st;
    if (n >= sizeof buf) {
        p->pos = st;
        fail(p, "a number of more than %d characters", (int)sizeof buf - 1);
        return NULL;
    }
    memcpy(buf, p->s + st, n);
    buf[n] = '\0';
    size_t save = p->pos;
    p->pos = st;
    kp_json *v = new_value(p, KP_JSON_NUMBER);
    p->pos = save;
    if (!v)
        return NULL;
    v->number = strtod(buf, NULL);
    v->integral = integral;
    return v;
}

static int add_member(parser *p, kp_json *v, char *key, kp_json *item)
{
    if (v->n == 0 || (v->n >= 4 && (v->n & (v->n - 1)) == 0)) { /* capacity 4, 8, 16, ... */
        int cap = v->n ? 2 * v->n : 4;
        kp_json **ni = realloc(v->item, (size_t)cap * sizeof *ni);
        if (!ni)
            goto oom;
        v->item = ni;
        if (v->type == KP_JSON_OBJECT) {
            char **nk = realloc(v->key, (size_t)cap * sizeof *nk);
            if (!nk)
                goto oom;
            v->key = nk;
        }
    }
    v->item[v->n] = item;
    if (v->type == KP_JSON_OBJECT)
        v->key[v->n] = key;
    v->n++;
    return 0;
oom:
    fail(p, "out of memory");
    free(key);
    kp_json_free(item);
    return -1;
}

static kp_json *parse_container(parser *p, int type)
{
    const char *what = type == KP_JSON_OBJECT ? "an object" : "an array";
    char close = type == KP_JSON_OBJECT ? '}' : ']';
    if (++p->depth > KP_JSON_MAX_DEPTH) {
        fail(p, "nested more than %d levels deep", KP_JSON_MAX_DEPTH);
        return NULL;
    }
    kp_json *v = new_value(p, type);
    if (!v)
        return NULL;
    p->pos++;
    skip_ws(p);
    if (at_end(p, what))
        goto fail;
    if (p->s[p->pos] == close) {
        p->pos++;
        p->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(p);
        if (at_end(p, what))
            goto fail;
        if (type == KP_JSON_OBJECT) {
            if (p->s[p->pos] != '"') {
                fail(p, "expected a member name in double quotes");
                goto fail;
            }
            key = parse_string_raw(p);
            if (!key)
                goto fail;
            skip_ws(p);
            if (at_end(p, what)) {
                free(key);
                goto fail;
            }
            if (p->s[p->pos] != ':') {
                fail(p, "expected ':' after the member name \"%s\"", key);
                free(key);
                goto fail;
            }
            p->pos++;
        }
        kp_json *item = parse_value(p);
        if (!item) {
            free(key);
            goto fail;
        }
        if (add_member(p, v, key, item))
            goto fail;
        skip_ws(p);
        if (at_end(p, what))
            goto fail;
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->s[p->pos] == close) {
            p->pos++;
            break;
        }
        fail(p, "expected ',' or '%c' after %s", close, type == KP_JSON_OBJECT ? "an object member" : "an array element");
        goto fail;
    }
    p->depth--;
    return v;
fail:
    kp_json_free(v);
    return NULL;
}

static kp_json *parse_literal(parser *p, const char *word, int type, int b)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) {
        if (p->len - p->pos < n && memcmp(p->s + p->pos, word, p->len - p->pos) == 0)
            fail(p, "unexpected end of file in '%s' (truncated file?)", word);
        else
            fail(p, "expected a value (object, array, string, number, true, false or null)");
        return NULL;
    }
    kp_json *v = new_value(p, type);
    if (v)
        v->boolean = b;
    p->pos += n;
    return v;
}

static kp_json *parse_value(parser *p)
{
    skip_ws(p);
    if (at_end(p, NULL))
        return NULL;
    char c = p->s[p->pos];
    switch (c) {
    case '{': return parse_container(p, KP_JSON_OBJECT);
    case '[': return parse_container(p, KP_JSON_ARRAY);
    case '"': {
        kp_json *v = new_value(p, KP_JSON_STRING);
        if (!v)
            return NULL;
        v->string = parse_string_raw(p);
        if (!v->string) {
            free(v);
            return NULL;
        }
        return v;
    }
    case 't': return parse_literal(p, "true", KP_JSON_BOOL, 1);
    case 'f': return parse_literal(p, "false", KP_JSON_BOOL, 0);
    case 'n': return parse_literal(p, "null", KP_JSON_NULL, 0);
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return parse_number(p);
        fail(p, "expected a value (object, array, string, number, true, false or null)");
        return NULL;
    }
}

kp_json *kp_json_parse(const char *text, size_t len, char *err, int errlen)
{
    parser p = {.s = text, .len = len, .err = err, .errlen = errlen};
    if (err && errlen > 0)
        err[0] = '\0';
    skip_ws(&p);
    if (p.pos >= p.len) {
        fail(&p, "empty file: expected a JSON value");
        return NULL;
    }
    kp_json *v = parse_value(&p);
    if (!v)
        return NULL;
    skip_ws(&p);
    if (p.pos < p.len) {
        fail(&p, "text after the end of the JSON value");
        kp_json_free(v);
        return NULL;
    }
    return v;
}

void kp_json_free(kp_json *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->n; i++) {
        kp_json_free(v->item[i]);
        if (v->key)
            free(v->key[i]);
    }
    free(v->item);
    free(v->key);
    free(v->string);
    free(v);
}

const kp_json *kp_json_get(const kp_json *obj, const char *key)
{
    if (!obj || obj->type != KP_JSON_OBJECT)
        return NULL;
    for (int i = obj->n - 1; i >= 0; i--)
        if (!strcmp(obj->key[i], key))
            return obj->item[i];
    return NULL;
}

const char *kp_json_type_name(int type)
{
    switch (type) {
    case KP_JSON_NULL: return "null";
    case KP_JSON_BOOL: return "a boolean";
    case KP_JSON_NUMBER: return "a number";
    case KP_JSON_STRING: return "a string";
    case KP_JSON_ARRAY: return "an array";
    case KP_JSON_OBJECT: return "an object";
    default: return "?";
    }
}

int kp_json_read_file(const char *path, size_t max, char **text, size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return KP_READ_OPEN;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : KP_READ_NOMEM;
    while (!rc) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) {
            if (ferror(f))
                rc = KP_READ_IO;
            break;
        }
        if (max > 0 && cap >= max) {
            rc = KP_READ_BIG;
            break;
        }
        char *p = realloc(buf, cap * 2);
        if (!p) {
            rc = KP_READ_NOMEM;
            break;
        }
        buf = p;
        cap *= 2;
    }
    const int e = errno; /* fclose must not change the read's errno */
    fclose(f);
    errno = e;
    if (rc) {
        free(buf);
        return rc;
    }
    *text = buf;
    *len = n;
    return 0;
}
