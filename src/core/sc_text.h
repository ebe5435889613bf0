/* Text hygiene in one place: what is read from outside becomes valid UTF-8 (each invalid byte
 * replaced with U+FFFD), cuts fall on character boundaries, and text printed to a terminal has its
 * C0, C1 and bidirectional controls escaped. */
#ifndef SC_TEXT_H
#define SC_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s (n bytes left, n > 0), or 0 when the byte at s does not
 * start one. NUL counts as invalid (it cannot travel in a C string), and so do the noncharacters
 * U+FFFE and U+FFFF (XML 1.0, the JUnit file, forbids them). */
size_t sc_utf8_seq_len(const char *s, size_t n);
/* True when the n bytes at s are valid UTF-8 without NUL. */
bool sc_utf8_valid(const char *s, size_t n);
/* A malloc'd copy of n bytes with every byte that is not part of a valid UTF-8 sequence (NUL
 * included) replaced with U+FFFD; NULL on allocation failure. */
char *sc_utf8_clean(const char *s, size_t n);
/* The longest prefix of s (n bytes) of at most max bytes that ends on a character boundary. */
size_t sc_utf8_prefix(const char *s, size_t n, size_t max);
/* Where the longest suffix of s (n bytes) of at most max bytes starts on a character boundary. */
size_t sc_utf8_suffix_start(const char *s, size_t n, size_t max);
/* The same as sc_utf8_prefix for a printf precision: "%.*s", sc_utf8_prec(s, 300), s. */
int sc_utf8_prec(const char *s, int max);
/* Copies src into dst (size > 0), cut on a character boundary when it does not fit. */
void sc_text_copy(char *dst, size_t size, const char *src);

/* Prints at most max bytes of s (never part of a character) to a terminal or log: newline and tab
 * as \n and \t, other C0 bytes, DEL and bytes that are not valid UTF-8 as \xNN, C1 controls
 * (U+0080-U+009F), bidirectional controls (U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069)
 * and line separators (U+2028, U+2029) as \uNNNN. NULL prints nothing. */
void sc_term_print(
    FILE *out, const char *s,
    size_t max); /* printf for the terminal: the format is stackcheck's own and printed as it is;
                  * every %s argument goes through sc_term_print (%.*s takes its byte limit first),
                  * %c too; %d and %% as printf. No other conversion is understood. */
void sc_term_printf(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
