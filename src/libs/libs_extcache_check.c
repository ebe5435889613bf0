/* One cached extension against the current environment: its shared objects analysed by the
 * libraries layer (the GPU runtime each resolves and its install root, the GPU code against the
 * target devices, the CPython tag of the name) and the build.ninja torch left beside them (the
 * torch, Python, compiler and library directories it built with). Any difference is a reason the
 * entry is stale: libs.stale-extension, with the directory to delete. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libs_extcache_internal.h"

#define NINJA_MAX (1u << 20) /* a build.ninja beyond this is cut */
#define SO_DEPTH 3           /* build/lib.linux-x86_64-cpython-311/pkg/x.so */

typedef struct {
    const sc_ctx *ctx;
    const extcache_env *env;
    sc_buf reasons; /* "; "-joined, for the message */
    cJSON *reason_list;
} entry_check;

static void reason(entry_check *ec, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void reason(entry_check *ec, const char *fmt, ...)
{
    char text[3 * PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sc_buf_printf(&ec->reasons, "%s%s", ec->reasons.len ? "; " : "", text);
    cJSON_AddItemToArray(ec->reason_list, cJSON_CreateString(text));
}

static bool is_shared_object(const char *name)
{
    return sc_ends_with(name, ".so") || strstr(name, ".so.") != NULL;
}

/* The regular shared objects under dir (depth SO_DEPTH), at most SC_EXTCACHE_FILES_MAX. */
static int find_files(const sc_root *root, const char *dir, int depth, char files[][PATH_MAX],
                      int n)
{
    DIR *d = sc_root_opendir(root, dir);
    struct dirent *e;
    for (int read = 0;
         d && n < SC_EXTCACHE_FILES_MAX && read < SC_EXTCACHE_READ_MAX && (e = readdir(d)) != NULL;
         read++) {
        char path[PATH_MAX];
        struct stat st;
        if (e->d_name[0] == '.' || !sc_fmt(path, sizeof path, "%s/%s", dir, e->d_name) ||
            sc_root_stat(root, path, &st, false) < 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < SO_DEPTH)
            n = find_files(root, path, depth + 1, files, n);
        else if (S_ISREG(st.st_mode) && is_shared_object(e->d_name))
            sc_fmt(files[n++], PATH_MAX, "%s", path);
    }
    if (d)
        closedir(d);
    return n;
}

/* The GPU runtime libraries file resolves, each against the runtime layer's install. */
static void check_runtimes(entry_check *ec, const char *path, const cJSON *analysis, cJSON *o)
{
    cJSON *runtimes = cJSON_AddArrayToObject(o, "runtimes");
    const cJSON *l;
    cJSON_ArrayForEach (l, sc_json_member(analysis, "libraries")) {
        const char *name = sc_json_str(l, "name"), *root = sc_json_str(l, "root");
        for (int b = 0; b < ec->env->backend_count; b++) {
            const sc_install_root *rt = &ec->env->backends[b].runtime;
            if (!sc_backend_is_runtime_name(ec->env->backends[b].desc, name))
                continue;
            cJSON_AddItemToArray(runtimes, cJSON_Duplicate(l, true));
            /* only where the build itself leads: its RPATH or RUNPATH (LD_LIBRARY_PATH is
             * left out of the analysis; a plain -L build is judged by its build.ninja) */
            const char *via = sc_json_str(l, "found_via") ?: "";
            bool own = strcmp(via, "rpath") == 0 || strcmp(via, "runpath") == 0;
            bool known = root && strcmp(sc_json_str(l, "root_kind") ?: "", "other") != 0;
            if (own && known && rt->kind != SC_ROOT_OTHER && strcmp(root, rt->path) != 0)
                reason(ec,
                       "%s was linked against the runtime %s of %s (its %s), the runtime "
                       "layer's is from %s",
                       path, name, root, strcmp(via, "rpath") == 0 ? "RPATH" : "RUNPATH", rt->path);
        }
    }
}

/* The analysis's own findings that say the entry cannot run here (no code for the device). */
static void check_code(entry_check *ec, const cJSON *analysis, cJSON *o)
{
    const cJSON *f;
    cJSON_AddItemToObject(o, "offload", cJSON_Duplicate(sc_json_member(analysis, "offload"), true));
    cJSON_ArrayForEach (f, sc_json_member(analysis, "findings"))
        if (strcmp(sc_json_str(f, "id") ?: "", "libs.no-code-for-device") == 0)
            reason(ec, "%s", sc_json_str(f, "message") ?: "no code for the device");
}

static void check_file(entry_check *ec, const char *path, sc_libs_cache *parsed, cJSON *files)
{
    const char *archs[SC_LIBS_MAX_ARCHS];
    sc_libs_config cfg = {.archs = archs,
                          .arch_count = sc_libs_run_archs(ec->ctx, archs, SC_LIBS_MAX_ARCHS),
                          .ld_library_path = ec->env->ld_library_path,
                          .no_symbol_check = true,
                          .cache = parsed};
    cJSON *o = cJSON_CreateObject(), *analysis = NULL;
    sc_error err = {0};
    char tag[16];
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddItemToArray(files, o);
    bool tagged = sc_ext_python_tag(path, tag, sizeof tag);
    sc_fact_str(o, "python_tag", tagged ? tag : NULL, "the file name has no cpython-XY tag");
    if (tagged && ec->env->python_tag[0] && strcmp(tag, ec->env->python_tag) != 0)
        reason(ec, "%s is built for CPython %s, the interpreter is %s", path, tag,
               ec->env->python_tag);
    if (sc_libs_analyze(ec->ctx->root, path, &cfg, &analysis, &err) < 0) {
        sc_fact_null(o, "runtimes", "%s", err.message);
        return;
    }
    check_runtimes(ec, path, analysis, o);
    check_code(ec, analysis, o);
    cJSON_Delete(analysis);
}

/* The library directories of the build against the runtime layer's install of their stack. */
static void check_lib_dirs(entry_check *ec, const sc_ext_build *b, sc_roots *roots)
{
    for (int i = 0; i < b->lib_dir_count; i++) {
        sc_install_root ir;
        sc_roots_of_dir(roots, b->lib_dirs[i], &ir);
        for (int k = 0; ir.stack && k < ec->env->backend_count; k++) {
            const sc_install_root *rt = &ec->env->backends[k].runtime;
            if (ec->env->backends[k].desc == ir.stack && rt->kind != SC_ROOT_OTHER &&
                strcmp(ir.path, rt->path) != 0)
                reason(ec, "it linked with -L%s (install %s), the runtime layer's is %s",
                       b->lib_dirs[i], ir.path, rt->path);
        }
    }
}

/* The compiler of the build against the one extensions build with now, by install root. */
static void check_compiler(entry_check *ec, const sc_ext_build *b, sc_roots *roots)
{
    sc_install_root ir;
    if (!b->compiler[0])
        return;
    sc_roots_of(roots, b->compiler, &ir);
    for (int k = 0; ir.stack && k < ec->env->backend_count; k++) {
        const char *now = ec->env->backends[k].compiler_root;
        if (ec->env->backends[k].desc == ir.stack && now && strcmp(ir.path, now) != 0)
            reason(ec, "it was built with %s (install %s), extensions now build with %s",
                   b->compiler, ir.path, ec->env->backends[k].compiler);
    }
}

/* The build file torch left in the entry: what it was built with. */
static void check_build_file(entry_check *ec, const char *dir, cJSON *o)
{
    char path[PATH_MAX], *text = NULL, real[PATH_MAX];
    sc_ext_build *b = calloc(1, sizeof *b);
    long len = b && sc_fmt(path, sizeof path, "%s/build.ninja", dir)
                   ? sc_root_read(ec->ctx->root, path, &text, NINJA_MAX)
                   : -1;
    if (len < 0 || sc_ext_build_parse(text, (size_t)len, b) < 0) {
        sc_fact_null(o, "build", "no readable build.ninja of an extension build");
        free(text);
        free(b);
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, "build");
    sc_fact_str(j, "compiler", b->compiler[0] ? b->compiler : NULL, "no nvcc = line");
    sc_fact_str(j, "torch_dir", b->torch_dir[0] ? b->torch_dir : NULL, "no torch include flag");
    sc_fact_str(j, "python", b->python[0] ? b->python : NULL, "no Python include flag");
    const extcache_env *env = ec->env;
    if (b->torch_dir[0] && env->torch_dir[0] &&
        (sc_root_realpath(ec->ctx->root, b->torch_dir, real, sizeof real) < 0 ||
         strcmp(real, env->torch_dir) != 0))
        reason(ec, "it was built against the torch in %s, the current torch is %s", b->torch_dir,
               env->torch_dir);
    if (b->python[0] && env->python[0] && strcmp(b->python, env->python) != 0)
        reason(ec, "it was built for Python %s (%s), the interpreter is %s", b->python,
               b->python_include, env->python);
    sc_roots *roots = sc_roots_new(ec->ctx->root);
    check_lib_dirs(ec, b, roots);
    check_compiler(ec, b, roots);
    sc_roots_free(roots);
    free(text);
    free(b);
}

void sc_extcache_examine(const sc_ctx *ctx, const extcache_env *env, const extcache_dir *cache,
                         const extcache_entry *entry, sc_libs_cache *parsed, sc_result *res,
                         cJSON *out)
{
    entry_check ec = {.ctx = ctx, .env = env};
    char(*files)[PATH_MAX] = calloc(SC_EXTCACHE_FILES_MAX, PATH_MAX);
    cJSON *o = cJSON_CreateObject();
    if (!files || !o) {
        free(files);
        cJSON_Delete(o);
        return;
    }
    cJSON_AddItemToArray(out, o);
    cJSON_AddStringToObject(o, "dir", entry->dir);
    cJSON_AddStringToObject(o, "cache", cache->path);
    cJSON_AddNumberToObject(o, "mtime", entry->mtime);
    ec.reason_list = cJSON_AddArrayToObject(o, "stale_because");
    sc_buf_init(&ec.reasons);
    int n = find_files(ctx->root, entry->dir, 0, files, 0);
    cJSON *arr = cJSON_AddArrayToObject(o, "files");
    for (int i = 0; i < n; i++)
        check_file(&ec, files[i], parsed, arr);
    check_build_file(&ec, entry->dir, o);
    cJSON_AddBoolToObject(o, "stale", ec.reasons.len > 0);
    char hint[2 * PATH_MAX + 160];
    if (strcmp(cache->kind, "egg-link") == 0) /* a source tree: never advise deleting it */
        sc_fmt(hint, sizeof hint,
               "delete the stale shared objects the message names and rebuild in place in the "
               "current environment (pip install -e %s, or setup.py build_ext --inplace)",
               entry->dir);
    else
        sc_fmt(hint, sizeof hint,
               "delete %s: torch rebuilds a JIT extension on its next load; rebuild a build/ "
               "tree in the current environment",
               entry->dir);
    if (ec.reasons.len)
        sc_finding(res, "libs.stale-extension", SC_SEV_WARN, hint,
                   "the cached extension %s (%s cache %s) was built in another environment: %s",
                   entry->dir, cache->kind, cache->path, ec.reasons.data);
    sc_buf_free(&ec.reasons);
    free(files);
}
