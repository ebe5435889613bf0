/* The text behind the Ascend driver's kernel fit: the installer's file list (which records where
 * it put its kernel modules) and the words of a module's vermagic. Buffers in, bounded copies out;
 * nothing here reads a file. */
#include "sc_ascend.h"

#include <string.h>

/* Copies n bytes of s into buf when they fit, are printable and hold no space. */
static bool copy_word(const char *s, size_t n, char *buf, size_t size)
{
    if (n == 0 || n >= size)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

bool sc_ascend_filelist_next(const char **cursor, const char *tag, char *path, size_t size)
{
    size_t tlen = strlen(tag);
    for (const char *line = *cursor; line && *line;) {
        const char *eol = strchr(line, '\n');
        const char *end = eol ? eol : line + strlen(line);
        const char *p = line + strspn(line, " \t");
        line = eol ? eol + 1 : NULL;
        *cursor = line ? line : end;
        if ((size_t)(end - p) < tlen + 3 || p[0] != '[' || strncmp(p + 1, tag, tlen) != 0 ||
            p[tlen + 1] != ']')
            continue;
        p += tlen + 2;
        p += strspn(p, " \t");
        size_t n = strcspn(p, " \t\r\n");
        if (p < end && *p == '/' && copy_word(p, n, path, size))
            return true;
    }
    return false;
}

bool sc_kernel_vermagic_release(const char *vermagic, char *release, size_t size)
{
    const char *p = vermagic + strspn(vermagic, " ");
    return copy_word(p, strcspn(p, " "), release, size);
}

bool sc_kernel_release_base(const char *release, char *base, size_t size)
{
    return copy_word(release, strcspn(release, "-+ "), base, size);
}

bool sc_kernel_vermagic_modversions(const char *vermagic)
{
    for (const char *p = vermagic; (p = strstr(p, "modversions")) != NULL; p++)
        if ((p == vermagic || p[-1] == ' ') && (p[11] == '\0' || p[11] == ' '))
            return true;
    return false;
}
