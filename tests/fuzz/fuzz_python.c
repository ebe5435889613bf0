/* Fuzz target for the outside text the framework layer parses: the interpreter's self-report (JSON
 * after a marker), package metadata headers, and dynamic loader error messages from exceptions. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_python.h"

static sc_python_info info;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_error err;
    if (sc_python_info_parse((const char *)data, size, &info, &err) == 0 &&
        (info.executable[0] != '/' || info.site_count > 8))
        __builtin_trap();
    char version[32];
    if (sc_pkg_metadata_version((const char *)data, size, version, sizeof version) &&
        (strlen(version) == 0 || strlen(version) >= sizeof version))
        __builtin_trap();
    char *msg = malloc(size + 1);
    if (!msg)
        return 0;
    memcpy(msg, data, size);
    msg[size] = '\0';
    char file[64], kind[32], subject[48];
    if (sc_loader_error_parse(msg, file, sizeof file, kind, sizeof kind, subject, sizeof subject) &&
        (kind[0] == '\0' || (file[0] && file[0] != '/')))
        __builtin_trap();
    free(msg);
    return 0;
}
