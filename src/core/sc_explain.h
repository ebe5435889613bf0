/* `stackcheck explain TEXT` for error text: a table of raw error signatures (runtime error names
 * and numbers, status codes, loader messages) mapped to the findings that cover them and the
 * command that checks them. The table is data (explain_signatures.c); the matcher is explain.c. */
#ifndef SC_EXPLAIN_H
#define SC_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One raw error signature. A signature matches a text when any of its keys does:
 * - name: a word of the text (letters, digits, '_', '-') matches it as a case-insensitive
 *   fnmatch pattern (hipErrorNoDevice, EE1001, E[A-Z][0-9][0-9][0-9][0-9]);
 * - code: a word equals it and the code is distinctive (5 characters or more, e.g. 507033, -8005,
 *   0x1008), or the text is the code alone, or the text contains context (e.g. "hip");
 * - phrase: the whole text matches "*phrase*" as a case-insensitive fnmatch pattern.
 * A fallback signature is shown only when no other signature matches. */
typedef struct {
    const char *family;   /* whose error: "HIP runtime", "CUDA driver API", "dynamic loader"... */
    const char *name;     /* symbolic name or name pattern, or NULL */
    const char *code;     /* the number as printed, or NULL */
    const char *context;  /* a word that makes a short code count in a longer text, or NULL */
    const char *phrase;   /* message text pattern, or NULL */
    const char *meaning;  /* what the error means, one sentence */
    const char *findings; /* ids of the findings that cover it, separated by spaces */
    const char *check;    /* the stackcheck command that checks it */
    const char *example;  /* real text carrying the error: the tests match it, the docs show it */
    bool fallback;
} sc_error_signature;

/* The table, terminated by an entry whose family is NULL. */
extern const sc_error_signature sc_error_signatures[];

/* True when text matches sig by the rules above. */
bool sc_explain_matches(const sc_error_signature *sig, const char *text);
/* Calls fn for every signature text matches (fallbacks only when nothing else matched), in table
 * order; returns how many. */
int sc_explain_each_match(const char *text, void (*fn)(const sc_error_signature *, void *),
                          void *arg);
/* Prints every signature text matches, with its findings' meanings and the command that checks
 * it; returns the number printed. */
int sc_explain_text(FILE *out, const char *text);

#endif
