/* The findings catalogue read from the embedded docs/findings.md: an entry starts at a line
 * "### `id`", its severity is on a "**Severity:** X" line, and it ends at the next heading. */
#include "sc_findings_doc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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

int sc_findings_each(void (*fn)(const char *id, const char *severity, void *arg), void *arg)
{
    int count = 0;
    for (const char *p = strstr(sc_findings_md, "\n### `"); p; p = strstr(p + 1, "\n### `")) {
        const char *start = p + 6, *tick = strchr(start, '`');
        if (!tick || tick - start >= 128)
            continue;
        char id[128], severity[16] = "?";
        memcpy(id, start, (size_t)(tick - start));
        id[tick - start] = '\0';
        const char *end = entry_end(p + 1);
        const char *sev = strstr(p, "**Severity:** ");
        if (sev && sev < end)
            sscanf(sev + 14, "%15[a-z]", severity);
        fn(id, severity, arg);
        count++;
    }
    return count;
}
