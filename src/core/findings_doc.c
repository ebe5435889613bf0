/* The findings catalogue read from the embedded docs/findings.md: an entry starts at a line
 * "### `id`", its severity is on a "**Severity:** X" line, and it ends at the next heading. */
#include "sc_findings_doc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sc_text.h"
#include "sc_util.h"

/* Finds the heading line of id; returns a pointer to it or NULL. */
static const char *find_entry(const char *id)
{
    char heading[300];
    if (!sc_fmt(heading, sizeof heading, "\n### `%s`\n", id))
        return NULL;
    const char *p = strstr(sc_findings_md, heading);
    return p ? p + 1 : NULL;
}

/* The end of the entry that starts at p: the next heading of level 1 to 3, or the end. */
static const char *entry_end(const char *p)
{
    const char *q = strchr(p, '\n');
    while (q) {
        if (q[1] == '#' &&
            (q[2] == ' ' || (q[2] == '#' && (q[3] == ' ' || (q[3] == '#' && q[4] == ' ')))))
            return q + 1;
        q = strchr(q + 1, '\n');
    }
    return p + strlen(p);
}

int sc_findings_explain(FILE *out, const char *id)
{
    const char *p = find_entry(id);
    if (!p)
        return -ENOENT;
    const char *end = entry_end(p);
    fwrite(p, 1, (size_t)(end - p), out);
    if (end > p && end[-1] != '\n')
        fputc('\n', out);
    return 0;
}

/* The severity word of the entry from p to end into severity (size > 0), "?" when there is none. */
static void entry_severity(const char *p, const char *end, char *severity, size_t size)
{
    sc_text_copy(severity, size, "?");
    const char *sev = strstr(p, "**Severity:** ");
    if (sev && sev < end && size >= 16)
        sscanf(sev + 14, "%15[a-z]", severity);
}

/* Copies the first sentence of the paragraph at p (up to end) into line (size > 0), its lines
 * joined by spaces and cut on a character boundary. */
static void first_sentence(const char *p, const char *end, char *line, size_t size)
{
    size_t span = 0;
    int depth = 0; /* a full stop inside parentheses ("e.g.", "...") does not end the sentence */
    while (p + span < end && !(p[span] == '\n' && (p + span + 1 == end || p[span + 1] == '\n'))) {
        char c = p[span++];
        depth += (c == '(') - (c == ')' && depth > 0);
        if (c == '.' && depth == 0 && (p + span == end || p[span] == ' ' || p[span] == '\n'))
            break;
    }
    size_t keep = sc_utf8_prefix(p, span, size - 1);
    for (size_t i = 0; i < keep; i++)
        line[i] = p[i] == '\n' ? ' ' : p[i];
    line[keep] = '\0';
}

int sc_findings_summary(const char *id, char *severity, size_t sev_size, char *line, size_t size)
{
    const char *p = find_entry(id);
    if (!p)
        return -ENOENT;
    const char *end = entry_end(p);
    entry_severity(p, end, severity, sev_size);
    /* The description is the first paragraph after the heading and the severity line. */
    const char *body = strchr(p, '\n');
    if (body && strncmp(body + 1, "**Severity:**", 13) == 0)
        body = strchr(body + 1, '\n');
    while (body && body < end && *body == '\n')
        body++;
    first_sentence(body && body < end ? body : end, end, line, size);
    return 0;
}

int sc_findings_each(void (*fn)(const char *id, const char *severity, void *arg), void *arg)
{
    int count = 0;
    for (const char *p = strstr(sc_findings_md, "\n### `"); p; p = strstr(p + 1, "\n### `")) {
        const char *start = p + 6, *tick = strchr(start, '`');
        if (!tick || tick - start >= 128)
            continue;
        char id[128], severity[16];
        memcpy(id, start, (size_t)(tick - start));
        id[tick - start] = '\0';
        entry_severity(p, entry_end(p + 1), severity, sizeof severity);
        fn(id, severity, arg);
        count++;
    }
    return count;
}
