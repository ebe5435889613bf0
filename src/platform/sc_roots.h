/* Which install a file belongs to: a DTK, ROCm, CUDA or CANN root, a conda environment, a Python
 * package, the system. Roots are recognised by what they contain (the backends' root markers, a
 * conda-meta/ directory, site-packages/<pkg>), wherever they live; the path rules are the fallback.
 * One classifier serves the runtime, libraries and framework layers, so they agree. */
#ifndef SC_ROOTS_H
#define SC_ROOTS_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_backend.h"
#include "sc_sysroot.h"

typedef enum {
    SC_ROOT_SYSTEM, /* /usr/lib, /lib...: the distribution */
    SC_ROOT_DTK,    /* .info/version with Hygon's runtime or .hyhal; /opt/dtk-25.04 by path */
    SC_ROOT_ROCM,   /* .info/version with hipcc, libamdhip64 or share/hip; /opt/rocm-6.2.0 */
    SC_ROOT_HYHAL,  /* bin/hy-smi; /opt/hyhal */
    SC_ROOT_CUDA,   /* version.json or version.txt with bin/nvcc; /usr/local/cuda-12.4 */
    SC_ROOT_CANN,   /* ascend_toolkit_install.info, version.cfg; /usr/local/Ascend/<part> */
    SC_ROOT_PYTHON, /* .../site-packages/<pkg> or dist-packages/<pkg> */
    SC_ROOT_OTHER,  /* anything else: the file's directory */
    SC_ROOT_CONDA   /* a directory holding conda-meta/: a conda environment */
} sc_root_kind;

typedef struct {
    sc_root_kind kind;
    char path[4096]; /* the root: "/opt/dtk-24.04", ".../site-packages/torch", "/usr" */
    /* The GPU stack whose install this is (a marker or prefix of that backend, not one outside
     * its stack); NULL for the system, conda, Python, other roots and hyhal. */
    const sc_backend_desc *stack;
} sc_install_root;

/* Classifies an absolute path by its shape alone (the fallback of the classifier below): a Python
 * package, the backends' root_prefixes, the system's library directories, else other. */
void sc_install_root_of(const char *path, sc_install_root *out);
/* "system", "dtk", "rocm", "hyhal", "cuda", "cann", "python", "other", "conda". */
const char *sc_root_kind_name(sc_root_kind kind);
/* The kind spelled name; SC_ROOT_OTHER when none is. */
sc_root_kind sc_root_kind_by_name(const char *name);

/* The classifier of one root: what each directory holds is read once (through the root) and
 * kept, so a tree of hundreds of libraries in a few directories costs a few checks. */
typedef struct sc_roots sc_roots;
/* A classifier reading inside root; NULL when out of memory. */
sc_roots *sc_roots_new(const sc_root *root);
/* Frees it (NULL is allowed). */
void sc_roots_free(sc_roots *roots);
/* The root it reads inside. */
const sc_root *sc_roots_root(const sc_roots *roots);
/* The install a file belongs to: from the file's directory (symlinks resolved inside the root) up
 * to, not including, the root's top and /usr, the nearest directory that is a Python package, an
 * install root by its markers (then the outermost marked directory of that backend above it: a
 * DTK's hip/ looks like a ROCm), or a conda environment; else the path rules on the real path.
 * path is absolute inside the root; the file itself should be its real path. */
void sc_roots_of(sc_roots *roots, const char *path, sc_install_root *out);
/* The same for a directory, which may itself be the root (ROCM_PATH=/opt/dtk-24.04). */
void sc_roots_of_dir(sc_roots *roots, const char *dir, sc_install_root *out);
/* Both take roots NULL (a classifier that could not be made) as the path rules alone. */
/* sc_roots_of for one file, with a classifier of its own. */
void sc_install_root_in(const sc_root *root, const char *path, sc_install_root *out);
/* File-system checks made so far (stat, realpath): the cost the cache keeps down. */
unsigned long sc_roots_checks(const sc_roots *roots);

/* The GPU stack a library belongs to, for libs.mixed-roots: its root's stack; for a library in a
 * conda environment, a Python package or the system, the backend whose stack_libraries hold its
 * name's stem ("libhipblas" of "libhipblas.so.2") unless its driver_libraries do (libcuda comes
 * with the driver, beside any toolkit); NULL otherwise (other roots are only a guess at the
 * directory, hyhal and the drivers' directories sit beside every install). */
const sc_backend_desc *sc_roots_stack_of(const sc_install_root *root, const char *name);

#endif
