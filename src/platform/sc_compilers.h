/* A backend's compilers as the runtime layer's inventory sees them: which hipcc, nvcc, ccec or atc
 * PATH and the install variables (ROCM_PATH, CUDA_HOME, ASCEND_TOOLKIT_HOME...) reach, the install
 * root each belongs to (the install-root classifier, sc_roots.h), its version from the install's
 * files (each backend reads its own), and the install's script to source. Nothing is run unless a
 * compiler the user would run has no version file; then it runs isolated, with a deadline, and
 * everything it started is reaped. */
#ifndef SC_COMPILERS_H
#define SC_COMPILERS_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>

#include "sc_backend.h"
#include "sc_loader.h"
#include "sc_probe.h"
#include "sc_roots.h"
#include "sc_sysroot.h"

#define SC_MAX_COMPILERS 12
#define SC_COMPILER_MAX_VIA 4
#define SC_COMPILER_PATH_ENTRIES 256   /* PATH entries looked at; beyond, ignored */
#define SC_COMPILER_TIMEOUT_MS 10000.0 /* a version query that takes longer is killed */

typedef struct {
    char name[32];                                /* "hipcc" */
    char path[PATH_MAX];                          /* as reached: "/opt/dtk/bin/hipcc" */
    char realpath[PATH_MAX];                      /* the file behind it, inside the root */
    char via[SC_COMPILER_MAX_VIA][PATH_MAX + 32]; /* "PATH", "ROCM_PATH=/opt/dtk" */
    int via_count;
    bool first_on_path;       /* what a shell runs for this name */
    bool for_extensions;      /* what torch.utils.cpp_extension would build with */
    sc_install_root root;     /* the install it belongs to */
    char install_version[64]; /* the install's version (DTK, ROCm, CUDA, CANN); "" unknown */
    char version[64];         /* the compiler's own (HIP, CUDA); "" unknown, see version_error */
    char version_from[PATH_MAX + 32]; /* the file read, or "ran PATH --version" */
    char version_error[256];
    char env_script[PATH_MAX]; /* the install's script to source; "" none */
} sc_compiler;

typedef struct {
    sc_compiler items[SC_MAX_COMPILERS];
    int count;
} sc_compilers;

/* How a backend reads a compiler's versions from files: fills c->install_version and c->version
 * with c->version_from (or c->version_error), reading through root. */
typedef void (*sc_compiler_version_files_fn)(const sc_root *root, sc_compiler *c);
/* A parser of a compiler's `--version` output into buf; returns 0 or -EINVAL. */
typedef int (*sc_compiler_parse_fn)(const char *text, char *buf, size_t size);

/* What the collection may do beyond reading files. */
typedef struct {
    char *(*env)(const char *name); /* getenv-like: PATH and the descriptor's homes */
    bool may_run;                   /* live: a compiler the user runs may be run for its version */
    double timeout_ms;              /* the version query's deadline */
    sc_compiler_version_files_fn version_files;
    sc_compiler_parse_fn parse_version; /* NULL: the compiler is never run */
} sc_compiler_scan;

/* The scan of a probe: the process environment, running allowed only live (not under --sysroot),
 * the deadline SC_COMPILER_TIMEOUT_MS or --timeout when shorter. */
sc_compiler_scan sc_compiler_scan_for(const sc_ctx *ctx, sc_compiler_version_files_fn files,
                                      sc_compiler_parse_fn parse);
/* Fills out with desc's compilers: the first of each name on PATH (absolute entries, looked up
 * inside root), then those under each of desc's compiler_homes, deduplicated by real path; each
 * with its install root, env script and versions. A compiler the user runs (first on PATH, or the
 * one extensions build with) whose version no file gives is run when scan->may_run. */
void sc_compilers_collect(const sc_root *root, const sc_backend_desc *desc,
                          const sc_compiler_scan *scan, sc_compilers *out);
/* The first of desc's env_scripts that exists under install root dir (normalised, inside root),
 * into buf; false when none does. */
bool sc_compiler_env_script(const sc_root *root, const sc_backend_desc *desc, const char *dir,
                            char *buf, size_t size);
/* Runs `path --version` in an isolated child with a deadline of timeout_ms (everything it starts
 * killed), and parses what it printed into c->version (c->version_from "ran PATH --version"), or
 * says why not in c->version_error. */
void sc_compiler_run_version(sc_compiler *c, sc_compiler_parse_fn parse, double timeout_ms);

/* facts.compilers: one object per compiler ({name, path, realpath, via[], first_on_path,
 * for_extensions, root, root_kind, install_version, version, version_from, env_script}). */
void sc_compilers_facts(cJSON *facts, const sc_compilers *cs);
/* finding_id (warn) for each install root of cs's compilers that is not the root of runtime, the
 * runtime library the loader picks (what code built by them needs; runtime_version its install's
 * version, or NULL), naming the env script to source. Roots known only by their directory (kind
 * other) are not compared. */
void sc_compilers_check_runtime(sc_result *res, const sc_root *root, const sc_backend_desc *desc,
                                const sc_compilers *cs, const sc_loader_pick *runtime,
                                const char *runtime_version, const char *finding_id);

#endif
