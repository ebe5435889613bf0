/* The findings catalogue: docs/findings.md, embedded into the binary at build time, is the one
 * source for `stackcheck explain ID` and `stackcheck list`. */
#ifndef SC_FINDINGS_DOC_H
#define SC_FINDINGS_DOC_H

#include <stddef.h>
#include <stdio.h>

/* The embedded docs/findings.md text. */
extern const char sc_findings_md[];

/* Prints the docs entry of finding id to out; returns 0, or -ENOENT when it is not documented. */
int sc_findings_explain(FILE *out, const char *id);
/* The severity of finding id and the first sentence of its description (cut to size); returns 0,
 * or -ENOENT when it is not documented. */
int sc_findings_summary(const char *id, char *severity, size_t sev_size, char *line, size_t size);
/* Calls fn(id, severity, arg) for every documented finding id, in document order; returns count. */
int sc_findings_each(void (*fn)(const char *id, const char *severity, void *arg), void *arg);

#endif
