/* The text parsers of the static interpreter locate: the version in patchlevel.h, a value of
 * pyvenv.cfg and the version in an interpreter's file name. Buffers only, so fuzz targets drive
 * them; the files are read by python_static.c. */
#include "sc_python.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The value of `#define PY_VERSION "3.11.7"` in patchlevel.h text (len bytes) into buf. */
bool sc_python_patchlevel_version(const char *text, size_t len, char *buf, size_t size)
{
    static const char key[] = "#define PY_VERSION";
    const char *p = memmem(text, len, key, sizeof key - 1), *end = text + len;
    if (!p)
        return false;
    p += sizeof key - 1;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p != '"')
        return false;
    p++;
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (!q || q == p || (size_t)(q - p) >= size || memchr(p, '\n', (size_t)(q - p)))
        return false;
    memcpy(buf, p, (size_t)(q - p));
    buf[q - p] = '\0';
    return true;
}

/* The value of `key = value` in pyvenv.cfg text (len bytes) into buf; false when absent. */
bool sc_pyvenv_value(const char *text, size_t len, const char *key, char *buf, size_t size)
{
    size_t kl = strlen(key);
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        while (p < le && isspace((unsigned char)*p))
            p++;
        const char *eq = memchr(p, '=', (size_t)(le - p));
        const char *ke = eq;
        while (ke && ke > p && isspace((unsigned char)ke[-1]))
            ke--;
        if (eq && (size_t)(ke - p) == kl && strncasecmp(p, key, kl) == 0) {
            const char *v = eq + 1, *ve = le;
            while (v < ve && isspace((unsigned char)*v))
                v++;
            while (ve > v && isspace((unsigned char)ve[-1]))
                ve--;
            if ((size_t)(ve - v) >= size || memchr(v, '\0', (size_t)(ve - v)))
                return false;
            memcpy(buf, v, (size_t)(ve - v));
            buf[ve - v] = '\0';
            return true;
        }
        p = le + 1;
    }
    return false;
}

/* "3.11" (and ldversion "3.11t") from a file name "python3.11" / "python3.13t"; false otherwise. */
bool sc_python_name_version(const char *name, char *version, size_t vsize, char *ld, size_t lsize)
{
    int major = 0, minor = 0, n = 0;
    if (sscanf(name, "python%d.%d%n", &major, &minor, &n) != 2 || major < 2 || minor < 0)
        return false;
    const char *flags = name + n;
    if (strlen(flags) > 3 || strspn(flags, "dmt") != strlen(flags))
        return false;
    snprintf(version, vsize, "%d.%d", major, minor);
    snprintf(ld, lsize, "%d.%d%s", major, minor, flags);
    return true;
}
