/* The user's own Python: find an interpreter's libpython without importing anything, and run probe
 * code in it, embedded through dlopen(RTLD_GLOBAL) in the calling (isolated) process, or as a
 * subprocess of the interpreter when it has no shared libpython. Shared by the framework and app
 * layers. Only isolated children call sc_python_run. */
#ifndef SC_PYTHON_H
#define SC_PYTHON_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>

#include "sc_probe.h"
#include "sc_sysroot.h"
#include "sc_types.h"

typedef struct {
    char executable[PATH_MAX];       /* absolute path of the interpreter */
    char version[32];                /* "3.11.7" */
    char prefix[PATH_MAX];           /* sys.prefix (the venv's when in one) */
    char base_prefix[PATH_MAX];      /* sys.base_prefix */
    char libpython[PATH_MAX];        /* the shared libpython to embed; "" when there is none */
    char site_packages[8][PATH_MAX]; /* the interpreter's site directories, in order */
    int site_count;
    /* Added for the framework layer: what the interpreter said about its build. */
    char ldversion[16];     /* sysconfig LDVERSION: "3.11", "3.7m" */
    char libdir[PATH_MAX];  /* sysconfig LIBDIR (the base install's, also in a venv) */
    char instsoname[128];   /* sysconfig INSTSONAME: "libpython3.11.so.1.0" */
    char ldlibrary[128];    /* sysconfig LDLIBRARY: "libpython3.11.so" or ".a" */
    bool enable_shared;     /* sysconfig Py_ENABLE_SHARED */
    char no_libpython[256]; /* why libpython is "" (subprocess mode), else "" */
    char located[8];        /* "ran" (the interpreter reported itself) or "static" (its files) */
    char version_from[16];  /* static: "file name", "patchlevel.h" or "pyvenv.cfg" */
} sc_python_info;

/* Locates python (a path, a name on PATH, or NULL for "python3") by running it, and fills info.
 * The interpreter gets timeout_s seconds (at most 20; 0 for 20): every wait has that deadline, and
 * it and everything it started are killed when it is missed, or when it leaves processes behind.
 * The answer, a failure included, is computed once per process and name. Returns 0 or a negative
 * errno with err filled. */
int sc_python_locate(const char *python, double timeout_s, sc_python_info *info, sc_error *err);
/* STACKCHECK_PYTHON_SUBPROCESS=1, an escape hatch for interpreters that misbehave when embedded
 * (and for tests): clears info's libpython, with the reason. sc_python_locate applies it. */
void sc_python_apply_subprocess_override(sc_python_info *info);
/* A probe's prepare hook (sc_probe.prepare): in the runner's process, before the probe's child is
 * forked, locates --python once for the run (online only), so every child inherits the answer and
 * the interpreter is asked once however many layers, side by side or not, need it. */
void sc_python_prepare(const sc_ctx *ctx);
/* Locates python without running anything: through PATH to the file, its real path (an ELF
 * binary, else -ENOEXEC: "a script wrapper: PATH"), the version from its name (python3.11) or
 * the prefix's only lib/pythonX.Y (refined by the prefix's patchlevel.h or a venv's pyvenv.cfg),
 * prefix from the path, venvs through pyvenv.cfg, the site directories of the layout (Debian's
 * for /usr, PREFIX/lib/pythonX.Y/site-packages otherwise, PYTHONPATH and the user site first) and
 * libpython. .pth files and sitecustomize are not followed. -ENOENT when there is no static
 * answer. err says why. */
int sc_python_locate_static(const sc_root *root, const char *python, sc_python_info *info,
                            sc_error *err);
/* Buffer parsers of sc_python_locate_static: PY_VERSION of patchlevel.h, one value of
 * pyvenv.cfg, and "3.11" / ldversion "3.13t" from a file name "python3.11" / "python3.13t". */
bool sc_python_patchlevel_version(const char *text, size_t len, char *buf, size_t size);
bool sc_pyvenv_value(const char *text, size_t len, const char *key, char *buf, size_t size);
bool sc_python_name_version(const char *name, char *version, size_t vsize, char *ld, size_t lsize);
/* Runs code (Python source) with sys.argv = argv (NULL-terminated) in the interpreter: embedded
 * when info->libpython is set, else as a subprocess. The code reports its result by writing one
 * JSON document to the file named by the environment variable STACKCHECK_RESULT. *result receives
 * it (caller frees); *mode is set to "embedded" or "subprocess". Returns 0 or a negative errno. */
int sc_python_run(const sc_python_info *info, const char *code, const char *const *argv,
                  cJSON **result, const char **mode, sc_error *err);

/* sc_python_run with the result (and code) files in workdir, an existing private directory made
 * by sc_python_workdir: a parent that runs this in a child which may crash or be killed cleans up
 * with sc_python_workdir_remove afterwards. */
int sc_python_run_in(const sc_python_info *info, const char *workdir, const char *code,
                     const char *const *argv, cJSON **result, const char **mode, sc_error *err);
/* How a request may be served by the warm interpreter: in the mode info says (embedded or
 * subprocess) or any; first: ahead of the requests waiting with it (the longest chain of work). */
enum { SC_WARM_SAME_MODE = 0, SC_WARM_ANY_MODE = 1, SC_WARM_FIRST = 2 };

/* sc_python_run_in through the warm interpreter of a parallel run when this process has one for
 * info (the same interpreter, in the mode that flags, SC_WARM_*, allows), so torch is
 * already imported; else exactly as sc_python_run_in. */
int sc_python_run_warm(const sc_python_info *info, const char *workdir, const char *code,
                       const char *const *argv, int flags, cJSON **result, const char **mode,
                       sc_error *err);
/* In the runner's process: starts the warm interpreter (probes/torch_host.py) for info in an
 * isolated child, which imports torch at once and then serves sc_python_run_warm in every process
 * forked after this call. Returns 0 or a negative errno (-EALREADY when one runs). */
int sc_python_warm_start(const sc_python_info *info);
/* True when the warm interpreter runs info's interpreter the way info says (embedded in the same
 * libpython, or as a subprocess), so it can serve info's requests. */
bool sc_python_warm_serves(const sc_python_info *info);
/* Stops the warm interpreter: no request is served after it, and it is killed without waiting
 * (run_ends false), or it is ended and everything of it removed (run_ends true). Nothing when
 * there is none. */
void sc_python_warm_stop(bool run_ends);
/* The client side of sc_python_run_warm: code in code_path, result in res_path. Returns 0, a
 * negative errno when the code failed after a worker started (a worker killed by a signal kills
 * this process with it, as a crash embedded would), or -EAGAIN when no warm interpreter takes the
 * request: the caller runs it itself. */
int sc_python_warm_run(const sc_python_info *info, int flags, const char *code_path,
                       const char *res_path, const char *const *argv, sc_error *err);
/* Makes a private directory into dir, under the run's private directory (sc_scratch.h) when there
 * is one, else under $TMPDIR or /tmp; returns 0 or a negative errno. */
int sc_python_workdir(char *dir, size_t size, sc_error *err);
/* Removes a directory made by sc_python_workdir and the files sc_python_run_in puts there. */
void sc_python_workdir_remove(const char *dir);

/* Parses the output of the locate script (text, len bytes: the line after the last
 * "SC-PYINFO:" marker is JSON) into info; libpython is not looked for. Returns 0 or -EINVAL. */
int sc_python_info_parse(const char *text, size_t len, sc_python_info *info, sc_error *err);
/* Picks the shared libpython for info from its LIBDIR/INSTSONAME/LDLIBRARY/base prefix, checking
 * that the file exists; fills info->libpython, or info->no_libpython with the reason. */
void sc_python_find_libpython(sc_python_info *info);
/* Reads "Version:" from package metadata (METADATA / PKG-INFO text, len bytes) into buf; returns
 * true when found. Only the header block (up to the first empty line) is read. */
bool sc_pkg_metadata_version(const char *text, size_t len, char *buf, size_t size);

/* Finds the installed distribution `project` (normalised: case, '-', '.' and '_' alike) in the
 * site directory dir under root, from its *.dist-info/METADATA or *.egg-info (PKG-INFO), never
 * importing it. Fills version and meta_path (the metadata file); returns 0 or -ENOENT. */
int sc_python_dist_version(const sc_root *root, const char *dir, const char *project, char *version,
                           size_t vsize, char *meta_path, size_t psize);
/* Looks for other Python installations under root that have `project` installed (Debian's
 * dist-packages, /usr/local, pyenv versions, conda and its envs), by metadata only, skipping the
 * site directories in skip (NULL-terminated). Appends {python, site, version} objects to out. */
void sc_python_find_elsewhere(const sc_root *root, const char *project, const char *const *skip,
                              cJSON *out);
/* Parses a dynamic loader error message ("X: undefined symbol: S", "X: version `V' not found
 * (required by Y)", "X: cannot open shared object file") into the file to analyse (Y for version
 * errors, else X), kind ("undefined-symbol", "version-not-found", "missing-library") and the
 * subject (the symbol, the version or the missing name). Returns false when msg is no loader error;
 * file is "" when the message names no absolute path. */
bool sc_loader_error_parse(const char *msg, char *file, size_t fsize, char *kind, size_t ksize,
                           char *subject, size_t ssize);

/* Creates dir/name (a new file, mode 0600, never followed) holding text, for code and
 * configuration handed to an interpreter; path receives its path. Returns 0 or a negative errno. */
int sc_python_write_file(const char *dir, const char *name, const char *text, char *path,
                         size_t size, sc_error *err);

#endif
