/* Extension caches: the shared objects built earlier and kept for reuse
 * (torch.utils.cpp_extension's TORCH_EXTENSIONS_DIR and default cache
 * ~/.cache/torch_extensions/py<XY>_<cpu|cuXYZ>/NAME, the build/ directory of an --ext project and
 * the directories *.egg-link files name), each compared with the current Python, torch, compiler
 * and runtime: the seed's "is the compile cache from an old environment?". The work is bounded: a
 * cache of ten thousand entries costs a directory read and a few dozen analyses, and says what it
 * left out. */
#ifndef SC_EXTCACHE_H
#define SC_EXTCACHE_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "sc_probe.h"

#define SC_EXTCACHE_READ_MAX 4096  /* directory entries read from one cache directory */
#define SC_EXTCACHE_EXAMINE_MAX 32 /* entries examined (their files analysed) in one run */
#define SC_EXTCACHE_FILES_MAX 4    /* shared objects analysed in one entry */
#define SC_EXTCACHE_LIB_DIRS 8

/* What a torch.utils.cpp_extension build.ninja says about the build (all "" when not said). */
typedef struct {
    char compiler[PATH_MAX];       /* its "nvcc =" line: the hipcc or nvcc it built with */
    char torch_dir[PATH_MAX];      /* ".../site-packages/torch" of "-isystem .../torch/include" */
    char python_include[PATH_MAX]; /* "-isystem .../include/python3.11" */
    char python[16];               /* "3.11" of that directory's name */
    char lib_dirs[SC_EXTCACHE_LIB_DIRS][PATH_MAX]; /* "-L" directories of ldflags, in order */
    int lib_dir_count;
} sc_ext_build;

/* Parses build.ninja text (len bytes, need not be NUL-terminated): the top-level "nvcc =",
 * "cflags =", "cuda_cflags =" and "ldflags =" assignments, ninja's $-escapes undone. Returns 0,
 * or -EINVAL when it holds none of them (not an extension build file). */
int sc_ext_build_parse(const char *text, size_t len, sc_ext_build *out);
/* The CPython tag of an extension file name ("x.cpython-311-x86_64-linux-gnu.so" -> "311",
 * "x.cpython-313t-..." -> "313t") into buf; false when the name has none (a JIT "x.so"). */
bool sc_ext_python_tag(const char *name, char *buf, size_t size);
/* The Python of a default-cache folder name ("py311_cu121" -> "311", "py313t_cpu" -> "313t") and
 * its build tag ("cu121", "cpu") into the buffers; false when name is not such a folder. */
bool sc_ext_folder_parse(const char *name, char *py, size_t py_size, char *tag, size_t tag_size);

/* libraries.ext_cache's run: finds the caches, examines their newest entries and reports
 * libs.stale-extension and libs.extension-cache-budget into res. */
void sc_extcache_run(const sc_ctx *ctx, sc_result *res);

#endif
