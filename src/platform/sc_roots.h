/* Which install a file belongs to: a DTK, ROCm, CUDA or CANN root, a Python package, the system.
 * One classifier serves the runtime, libraries and framework layers, so they agree. */
#ifndef SC_ROOTS_H
#define SC_ROOTS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    SC_ROOT_SYSTEM, /* /usr/lib, /lib...: the distribution */
    SC_ROOT_DTK,    /* /opt/dtk, /opt/dtk-25.04 */
    SC_ROOT_ROCM,   /* /opt/rocm, /opt/rocm-6.2.0 */
    SC_ROOT_HYHAL,  /* /opt/hyhal */
    SC_ROOT_CUDA,   /* /usr/local/cuda, /usr/local/cuda-12.4, /opt/nvidia... */
    SC_ROOT_CANN,   /* /usr/local/Ascend/... */
    SC_ROOT_PYTHON, /* .../site-packages/<pkg> or dist-packages/<pkg> */
    SC_ROOT_OTHER   /* anything else: the file's directory */
} sc_root_kind;

typedef struct {
    sc_root_kind kind;
    char path[4096]; /* the root: "/opt/dtk-24.04", ".../site-packages/torch", "/usr" */
} sc_install_root;

/* Classifies an absolute path (ideally a real path) into its install root. */
void sc_install_root_of(const char *path, sc_install_root *out);
/* "system", "dtk", "rocm", "hyhal", "cuda", "cann", "python", "other". */
const char *sc_root_kind_name(sc_root_kind kind);

#endif
