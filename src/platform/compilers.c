/* Finding a backend's compilers: the first of each name on PATH, those under the install
 * variables the descriptor names, each file's install root by the shared classifier, the install's
 * env script, and the versions (files first; running the compiler only for one the user runs). */
#include "sc_compilers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sc_util.h"

/* True when path names an executable regular file inside root. */
static bool is_program(const sc_root *root, const char *path)
{
    struct stat st;
    return sc_root_stat(root, path, &st, true) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111);
}

static void add_via(sc_compiler *c, const char *via)
{
    for (int i = 0; i < c->via_count; i++)
        if (strcmp(c->via[i], via) == 0)
            return;
    if (c->via_count < SC_COMPILER_MAX_VIA)
        snprintf(c->via[c->via_count++], sizeof c->via[0], "%s", via);
}

/* The entry for the compiler at path (reached via), made on first sight of its real path; NULL
 * when the list is full or the path cannot be resolved. */
static sc_compiler *add_compiler(const sc_root *root, sc_compilers *out, const char *name,
                                 const char *path, const char *via)
{
    char real[PATH_MAX];
    if (sc_root_realpath(root, path, real, sizeof real) < 0)
        return NULL;
    for (int i = 0; i < out->count; i++)
        if (strcmp(out->items[i].realpath, real) == 0) {
            add_via(&out->items[i], via);
            return &out->items[i];
        }
    if (out->count >= SC_MAX_COMPILERS)
        return NULL;
    sc_compiler *c = &out->items[out->count++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->realpath, sizeof c->realpath, "%s", real);
    add_via(c, via);
    return c;
}

/* The first of each compiler name along PATH's absolute entries, as a shell would run it. */
static void scan_path(const sc_root *root, const sc_backend_desc *desc, const char *path_var,
                      sc_compilers *out)
{
    for (const char *const *n = desc->compilers; n && *n; n++) {
        int entries = 0;
        for (const char *p = path_var; p && *p && entries < SC_COMPILER_PATH_ENTRIES; entries++) {
            size_t len = strcspn(p, ":");
            char file[PATH_MAX];
            bool found = p[0] == '/' && sc_fmt(file, sizeof file, "%.*s/%s", (int)len, p, *n) &&
                         is_program(root, file);
            p += len + (p[len] == ':');
            sc_compiler *c = found ? add_compiler(root, out, *n, file, "PATH") : NULL;
            if (found) {
                if (c)
                    c->first_on_path = true;
                break;
            }
        }
    }
}

/* The compilers of the install the variable var names; extensions: whether it is the first
 * variable torch's extension builder reads that is set. */
static void scan_home(const sc_root *root, const sc_backend_desc *desc, const char *var,
                      const char *home, bool extensions, sc_compilers *out)
{
    char via[PATH_MAX + 32];
    sc_fmt(via, sizeof via, "%s=%s", var, home);
    for (const char *const *d = desc->compiler_dirs; d && *d; d++)
        for (const char *const *n = desc->compilers; n && *n; n++) {
            char file[PATH_MAX];
            if (!sc_fmt(file, sizeof file, "%s/%s/%s", home, *d, *n) || !is_program(root, file))
                continue;
            sc_compiler *c = add_compiler(root, out, *n, file, via);
            if (c && extensions)
                c->for_extensions = true;
        }
}

/* The variable torch's extension builder takes its install from: the first of desc's
 * extension_homes that is set (absolute), or NULL. */
static const char *extension_home(const sc_backend_desc *desc, char *(*env)(const char *))
{
    for (const char *const *v = desc->extension_homes; v && *v; v++) {
        const char *value = env(*v);
        if (value && value[0] == '/')
            return *v;
    }
    return NULL;
}

bool sc_compiler_env_script(const sc_root *root, const sc_backend_desc *desc, const char *dir,
                            char *buf, size_t size)
{
    for (const char *const *s = desc->env_scripts; s && *s && dir[0] == '/'; s++) {
        char path[PATH_MAX + 64];
        struct stat st;
        if (sc_fmt(path, sizeof path, "%s/%s", dir, *s) &&
            sc_root_stat(root, path, &st, true) == 0 && S_ISREG(st.st_mode) &&
            sc_root_realpath(root, path, buf, size) == 0)
            return true;
    }
    return false;
}

/* Root, env script and versions of c; runs it when it is the user's and no file said. */
static void describe(const sc_root *root, sc_roots *roots, const sc_backend_desc *desc,
                     const sc_compiler_scan *scan, sc_compiler *c)
{
    sc_roots_of(roots, c->realpath, &c->root);
    if (!sc_compiler_env_script(root, desc, c->root.path, c->env_script, sizeof c->env_script))
        c->env_script[0] = '\0';
    if (scan->version_files)
        scan->version_files(root, c);
    bool users = c->first_on_path || c->for_extensions;
    if (c->version[0] || !scan->parse_version)
        return;
    if (scan->may_run && users) {
        sc_compiler_run_version(c, scan->parse_version, scan->timeout_ms);
        return;
    }
    char why[sizeof c->version_error];
    snprintf(why, sizeof why, "%s", c->version_error[0] ? c->version_error : "no version file");
    sc_fmt(c->version_error, sizeof c->version_error, "%s; %s", why,
           !scan->may_run ? "offline (--sysroot): not run"
                          : "not run: neither the one on PATH nor the one extensions build with");
}

sc_compiler_scan sc_compiler_scan_for(const sc_ctx *ctx, sc_compiler_version_files_fn files,
                                      sc_compiler_parse_fn parse)
{
    double timeout_ms = SC_COMPILER_TIMEOUT_MS;
    if (ctx->opt->timeout_s > 0 && ctx->opt->timeout_s * 1000 < timeout_ms)
        timeout_ms = ctx->opt->timeout_s * 1000;
    return (sc_compiler_scan){.env = getenv,
                              .may_run = !ctx->offline,
                              .timeout_ms = timeout_ms,
                              .version_files = files,
                              .parse_version = parse};
}

void sc_compilers_collect(const sc_root *root, const sc_backend_desc *desc,
                          const sc_compiler_scan *scan, sc_compilers *out)
{
    memset(out, 0, sizeof *out);
    scan_path(root, desc, scan->env("PATH"), out);
    const char *ext = extension_home(desc, scan->env);
    for (const char *const *v = desc->compiler_homes; v && *v; v++) {
        const char *home = scan->env(*v);
        if (home && home[0] == '/')
            scan_home(root, desc, *v, home, ext && strcmp(ext, *v) == 0, out);
    }
    for (int i = 0; !ext && desc->extension_homes && i < out->count; i++)
        out->items[i].for_extensions = out->items[i].first_on_path;
    sc_roots *roots = sc_roots_new(root);
    for (int i = 0; i < out->count; i++)
        describe(root, roots, desc, scan, &out->items[i]);
    sc_roots_free(roots);
}
