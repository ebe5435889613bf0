/* Fuzz target for the one door out: the UTF-8 cleaner, the redactor, output windows and the
 * terminal escaping. The cleaned text must be valid UTF-8 and stay so through redaction (twice),
 * and every cut must fit and keep characters whole. Large inputs find quadratic paths. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_redact.h"
#include "sc_text.h"

static FILE *sink;

static void check_redaction(const char *clean)
{
    char *once = sc_redact_text(clean, strlen(clean));
    if (!once)
        return;
    if (!sc_utf8_valid(once, strlen(once)))
        __builtin_trap();
    /* The door may be passed more than once: a second pass may hide more (a shorter text brings
     * a program name within reach of its option), never less. */
    char *twice = sc_redact_text(once, strlen(once));
    if (twice && (!sc_utf8_valid(twice, strlen(twice)) ||
                  (strstr(once, "[redacted]") && !strstr(twice, "[redacted]"))))
        __builtin_trap();
    free(twice);
    free(once);
}

static void check_cuts(const char *clean, size_t keep)
{
    size_t n = strlen(clean), p = sc_utf8_prefix(clean, n, keep);
    size_t s = sc_utf8_suffix_start(clean, n, keep);
    if (p > keep || p > n || n - s > keep || !sc_utf8_valid(clean, p) ||
        !sc_utf8_valid(clean + s, n - s))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sink)
        sink = fopen("/dev/null", "w");
    const char *raw = (const char *)data;
    char *clean = sc_utf8_clean(raw, size);
    if (!clean)
        return 0;
    if (!sc_utf8_valid(clean, strlen(clean)))
        __builtin_trap();
    check_redaction(clean);
    size_t keep = size > 0 ? data[0] : 0;
    check_cuts(clean, keep);
    char *tail = sc_redact_tail(raw, size, size > 0 && (data[0] & 1), keep);
    if (tail && (strlen(tail) > keep || !sc_utf8_valid(tail, strlen(tail))))
        __builtin_trap();
    free(tail);
    char *str = malloc(size + 1); /* the raw bytes as a C string, for the terminal printer */
    if (str && sink) {
        memcpy(str, raw, size);
        str[size] = '\0';
        sc_term_print(sink, str, size / 2);
        sc_term_print(sink, clean, (size_t)-1);
    }
    free(str);
    free(clean);
    return 0;
}
