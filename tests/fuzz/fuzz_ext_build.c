/* Fuzz target for what an extension build leaves behind: torch.utils.cpp_extension's build.ninja
 * (compiler, torch and Python include directories, library directories), the CPython tag of an
 * extension's file name and a default-cache folder name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_extcache.h"

static sc_ext_build build;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (sc_ext_build_parse((const char *)data, size, &build) == 0) {
        if (build.lib_dir_count > SC_EXTCACHE_LIB_DIRS ||
            (build.compiler[0] && build.compiler[0] != '/') ||
            (build.torch_dir[0] && build.torch_dir[0] != '/'))
            __builtin_trap();
        for (int i = 0; i < build.lib_dir_count; i++)
            if (build.lib_dirs[i][0] != '/')
                __builtin_trap();
    }
    char *name = malloc(size + 1);
    if (!name)
        return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    char py[16], tag[32];
    if (sc_ext_python_tag(name, py, sizeof py) && strlen(py) < 2)
        __builtin_trap();
    if (sc_ext_folder_parse(name, py, sizeof py, tag, sizeof tag) && (strlen(py) < 2 || !tag[0]))
        __builtin_trap();
    free(name);
    return 0;
}
