/* Small helpers shared by the core and the probes: time, strings, bounded buffers. */
#ifndef SC_UTIL_H
#define SC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Monotonic time in milliseconds. */
double sc_now_ms(void);
/* The current UTC time as RFC 3339 ("2026-11-29T17:00:00Z") in buf. */
void sc_utc_now(char *buf, size_t size);
/* snprintf that always terminates and reports truncation: returns true when it all fit. */
bool sc_fmt(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Removes trailing whitespace in place; returns s. */
char *sc_rstrip(char *s);
/* True when s starts with prefix. */
bool sc_starts_with(const char *s, const char *prefix);
/* True when s ends with suffix. */
bool sc_ends_with(const char *s, const char *suffix);
/* The directory part of path into out ("." without a slash, "/" for "/x"); returns the last
 * component (the part after the last slash, "" when path ends with one). */
const char *sc_path_dirname(const char *path, char *out, size_t size);
/* Parses a decimal or 0x-hex unsigned integer that fills the whole string (spaces around allowed);
 * returns 0 or -EINVAL / -ERANGE. */
int sc_parse_u64(const char *s, uint64_t *out);
/* Looks up "key" in text made of "key value" or "key=value" lines (sep is ' ' or '='); copies the
 * value (trimmed, quotes removed) into buf. Returns true when found. */
bool sc_kv_lookup(const char *text, const char *key, char sep, char *buf, size_t size);

/* A growable string buffer; on allocation failure it stays valid and sets oom. */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
    bool oom;
} sc_buf;

void sc_buf_init(sc_buf *b);
void sc_buf_free(sc_buf *b);
/* Appends n bytes. */
void sc_buf_append(sc_buf *b, const void *p, size_t n);
/* Appends printf-style text. */
void sc_buf_printf(sc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
