/* The file a dynamic loader error message points at ("X: undefined symbol: S", "version `V' not
 * found (required by Y)"...): the text Python's ImportError carries, parsed so the libraries layer
 * can analyse that file. */
#include "sc_python.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The whitespace-delimited token that ends right before p (at most back to start). */
static void token_before(const char *start, const char *p, char *buf, size_t size)
{
    const char *b = p;
    while (b > start && !isspace((unsigned char)b[-1]) && !strchr("'\"(`", b[-1]))
        b--;
    size_t n = (size_t)(p - b) < size - 1 ? (size_t)(p - b) : size - 1;
    memcpy(buf, b, n);
    buf[n] = '\0';
}

/* The text after p up to the first character of stop (or the end), bounded. */
static void token_after(const char *p, const char *stop, char *buf, size_t size)
{
    size_t n = strcspn(p, stop);
    if (n > size - 1)
        n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

bool sc_loader_error_parse(const char *msg, char *file, size_t fsize, char *kind, size_t ksize,
                           char *subject, size_t ssize)
{
    const char *p;
    file[0] = kind[0] = subject[0] = '\0';
    if ((p = strstr(msg, ": undefined symbol: "))) {
        snprintf(kind, ksize, "undefined-symbol");
        token_before(msg, p, file, fsize);
        token_after(p + 20, " \t\r\n,'\"", subject, ssize);
    } else if ((p = strstr(msg, "' not found (required by ")) && strstr(msg, "version `")) {
        const char *v = strstr(msg, "version `") + 9;
        snprintf(kind, ksize, "version-not-found");
        token_after(v, "'", subject, ssize);
        token_after(p + 25, ")", file, fsize);
    } else if ((p = strstr(msg, ": cannot open shared object file"))) {
        snprintf(kind, ksize, "missing-library");
        token_before(msg, p, subject, ssize);
    } else {
        return false;
    }
    if (file[0] != '/')
        file[0] = '\0';
    return true;
}
