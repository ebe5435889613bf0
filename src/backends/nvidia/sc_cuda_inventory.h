/* The passive CUDA inventory: installed toolkits (/usr/local/cuda, /usr/local/cuda-*, CUDA_HOME,
 * CUDA_PATH) with their versions, where the /usr/local/cuda link points, and which libcuda.so.1
 * the dynamic loader would pick (LD_LIBRARY_PATH, ld.so.cache, default directories) without
 * loading it. Reads files through the sysroot only, so it works offline. */
#ifndef SC_CUDA_INVENTORY_H
#define SC_CUDA_INVENTORY_H

#include <limits.h>
#include <stdbool.h>

#include "sc_sysroot.h"

#define SC_CUDA_MAX_TOOLKITS 16
#define SC_CUDA_MAX_VIA 4

typedef struct {
    char root[PATH_MAX]; /* real path inside the sysroot: "/usr/local/cuda-12.4" */
    char version[64];    /* "12.4.1"; "" when unreadable (reason in version_error) */
    char version_error[160];
    char via[SC_CUDA_MAX_VIA][PATH_MAX + 16]; /* "/usr/local/cuda", "CUDA_HOME=/opt/cuda" */
    int via_count;
} sc_cuda_toolkit;

typedef struct {
    bool found;
    char path[PATH_MAX];     /* what the loader opens: "/usr/lib/x86_64-linux-gnu/libcuda.so.1" */
    char realpath[PATH_MAX]; /* the file behind it */
    char found_via[32];      /* "ld_library_path", "cache", "default" */
    char driver_version[64]; /* from the file name, "" when it has none */
    bool is_stub;            /* inside a toolkit's lib64/stubs: never works at run time */
} sc_cuda_lib_pick;

typedef struct {
    const char *ld_library_path; /* NULL when unset */
    const char *cuda_home;
    const char *cuda_path;
} sc_cuda_env;

typedef struct {
    sc_cuda_toolkit toolkits[SC_CUDA_MAX_TOOLKITS];
    int count;
    bool link_present;          /* /usr/local/cuda exists as a link */
    char link_target[PATH_MAX]; /* its real path, "" when dangling */
    sc_cuda_lib_pick libcuda;
} sc_cuda_inventory;

/* The version of the toolkit at tk->root into tk->version (or why not into tk->version_error):
 * version.json first (CUDA 11.1+), then version.txt (older). */
void sc_cuda_toolkit_read_version(const sc_root *root, sc_cuda_toolkit *tk);
/* Fills inv: toolkits deduplicated by real path, the link, and the libcuda.so.1 pick. */
void sc_cuda_inventory_collect(const sc_root *root, const sc_cuda_env *env, sc_cuda_inventory *inv);
/* The toolkit version that matters most: the /usr/local/cuda link's, else the first found; NULL
 * when none is known. */
const char *sc_cuda_inventory_main_version(const sc_cuda_inventory *inv);

#endif
