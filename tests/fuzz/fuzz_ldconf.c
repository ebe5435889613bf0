/* Fuzz target: /etc/ld.so.conf text (directories, comments, include and hwcap lines). Every
 * directory handed on must be absolute and without a trailing slash (but "/"). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_ldconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_dir(void *arg, const char *dir)
{
    size_t n = strlen(dir);
    (void)arg;
    if (dir[0] != '/' || (n > 1 && dir[n - 1] == '/'))
        __builtin_trap();
}

static void on_include(void *arg, const char *pattern)
{
    (void)arg;
    if (!pattern[0] || strpbrk(pattern, " \t\n"))
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    sc_ldconf_parse(text, &(sc_ldconf_sink){on_dir, on_include, NULL});
    free(text);
    return 0;
}
