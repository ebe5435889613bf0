/* Locating the user's Python: run the interpreter once per run (no shell, a deadline on every
 * wait, everything it starts killed afterwards) with a tiny script that reports its version,
 * prefixes, sysconfig build variables and import path, then pick the shared libpython that
 * embedding it needs. Nothing is imported beyond the standard library. */
#include "sc_python.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sc_exec.h"
#include "sc_util.h"

#define LOCATE_TIMEOUT_MS 20000.0
#define MARKER "SC-PYINFO:"

/* The script the interpreter runs to report itself (probes/python_locate.py, embedded). */
extern const char sc_py_python_locate[];

/* Copies a string member of obj into buf; returns false when missing, not a string or too long. */
static bool copy_member(const cJSON *obj, const char *key, char *buf, size_t size)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
    buf[0] = '\0';
    if (!v || strlen(v) >= size)
        return false;
    memcpy(buf, v, strlen(v) + 1);
    return true;
}

static void copy_site_dirs(const cJSON *dirs, sc_python_info *info)
{
    const cJSON *d;
    info->site_count = 0;
    cJSON_ArrayForEach (d, dirs) {
        const char *p = cJSON_GetStringValue(d);
        if (info->site_count >= 8)
            break;
        if (p && p[0] == '/' && strlen(p) < PATH_MAX)
            memcpy(info->site_packages[info->site_count++], p, strlen(p) + 1);
    }
}

int sc_python_info_parse(const char *text, size_t len, sc_python_info *info, sc_error *err)
{
    memset(info, 0, sizeof *info);
    const char *json = NULL;
    for (const char *p = text; p && (size_t)(p - text) < len;) {
        p = memmem(p, len - (size_t)(p - text), MARKER, strlen(MARKER));
        if (p)
            json = p += strlen(MARKER);
    }
    if (!json)
        return sc_error_set(err, -EINVAL, "the interpreter printed no " MARKER " line");
    const char *end = memchr(json, '\n', len - (size_t)(json - text));
    cJSON *obj = cJSON_ParseWithLength(json, (size_t)((end ? end : text + len) - json));
    int rc = 0;
    if (!cJSON_IsObject(obj) || !copy_member(obj, "executable", info->executable, PATH_MAX) ||
        info->executable[0] != '/' || !copy_member(obj, "version", info->version, 32) ||
        !copy_member(obj, "prefix", info->prefix, PATH_MAX)) {
        rc = sc_error_set(err, -EINVAL, "the interpreter's report is malformed or incomplete");
        goto out;
    }
    if (!copy_member(obj, "base_prefix", info->base_prefix, PATH_MAX))
        memcpy(info->base_prefix, info->prefix, strlen(info->prefix) + 1);
    copy_member(obj, "libdir", info->libdir, sizeof info->libdir);
    copy_member(obj, "ldversion", info->ldversion, sizeof info->ldversion);
    copy_member(obj, "instsoname", info->instsoname, sizeof info->instsoname);
    copy_member(obj, "ldlibrary", info->ldlibrary, sizeof info->ldlibrary);
    info->enable_shared = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, "shared"));
    copy_site_dirs(cJSON_GetObjectItemCaseSensitive(obj, "site_dirs"), info);
out:
    cJSON_Delete(obj);
    return rc;
}

/* A shared-object name ("x.so" or "x.so.1.0") with no directory part. */
static bool is_shared_name(const char *name)
{
    return name[0] && !strchr(name, '/') && (sc_ends_with(name, ".so") || strstr(name, ".so."));
}

static bool try_candidate(sc_python_info *info, const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    if (!dir[0] || !is_shared_name(name) || !sc_fmt(path, sizeof path, "%s/%s", dir, name))
        return false;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return false;
    memcpy(info->libpython, path, strlen(path) + 1);
    return true;
}

void sc_python_find_libpython(sc_python_info *info)
{
    char so[160], so10[160], base_lib[PATH_MAX];
    const char *names[4] = {info->instsoname, info->ldlibrary, so10, so};
    info->libpython[0] = info->no_libpython[0] = '\0';
    /* Static builds report libpythonX.Y.a here; the .so may still be installed beside it
     * (conda, Debian), and it is the same build, so the versioned names are tried too. */
    snprintf(so, sizeof so, "libpython%s.so", info->ldversion);
    snprintf(so10, sizeof so10, "libpython%s.so.1.0", info->ldversion);
    if (!sc_fmt(base_lib, sizeof base_lib, "%s/lib", info->base_prefix))
        base_lib[0] = '\0';
    const char *dirs[2] = {info->libdir, base_lib};
    for (int d = 0; d < 2; d++)
        for (int n = 0; n < 4; n++)
            if (info->ldversion[0] && try_candidate(info, dirs[d], names[n]))
                return;
    sc_fmt(info->no_libpython, sizeof info->no_libpython,
           "no shared libpython%s in %s or %s (Py_ENABLE_SHARED=%d, LDLIBRARY=%s)", info->ldversion,
           info->libdir[0] ? info->libdir : "(no LIBDIR)", base_lib, info->enable_shared,
           info->ldlibrary[0] ? info->ldlibrary : "?");
}

/* The verdict on the interpreter's wait status. */
static int locate_status(const char *python, int status, sc_error *err)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return sc_error_set(err, -ENOENT, "cannot run %s (not found or not executable)", python);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return sc_error_set(err, -EIO, "%s failed to report itself (%s %d)", python,
                            WIFEXITED(status) ? "exit status" : "signal",
                            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return 0;
}

/* Runs the locate script with a deadline of timeout_ms; out receives the interpreter's stdout.
 * Whatever it started (in its group or not) is killed before this returns. */
static int run_locate(const char *python, double timeout_ms, sc_buf *out, sc_error *err)
{
    const char *const argv[] = {python, "-c", sc_py_python_locate, NULL};
    int status = 0;
    int rc = sc_exec_capture(argv, timeout_ms, false, out, &status, err);
    return rc < 0 ? rc : locate_status(python, status, err);
}

/* One run asks up to three times (the libraries, framework and app layers): the interpreter's
 * answer, a failure included, is kept for the process's lifetime, keyed by the name it was asked
 * by, so an interpreter that hangs costs one deadline per run, not one per layer. */
static struct {
    char python[PATH_MAX];
    sc_python_info info;
    int rc;
    sc_error err;
    bool valid;
} cache;

void sc_python_apply_subprocess_override(sc_python_info *info)
{
    const char *force = getenv("STACKCHECK_PYTHON_SUBPROCESS");
    if (!force || strcmp(force, "1") != 0)
        return;
    info->libpython[0] = '\0';
    snprintf(info->no_libpython, sizeof info->no_libpython,
             "not embedded: STACKCHECK_PYTHON_SUBPROCESS=1");
}

/* Asks the interpreter itself; returns 0 or a negative errno with err filled. */
static int locate_by_running(const char *python, double timeout_s, sc_python_info *info,
                             sc_error *err)
{
    double timeout_ms = LOCATE_TIMEOUT_MS;
    if (timeout_s > 0 && timeout_s * 1000.0 < timeout_ms)
        timeout_ms = timeout_s * 1000.0;
    sc_buf out;
    sc_buf_init(&out);
    memset(info, 0, sizeof *info);
    int rc = run_locate(python, timeout_ms, &out, err);
    if (rc == 0 && out.oom)
        rc = sc_error_set(err, -ENOMEM, "out of memory reading %s's report", python);
    if (rc == 0)
        rc = sc_python_info_parse(out.data ? out.data : "", out.len, info, err);
    sc_buf_free(&out);
    if (rc < 0)
        return rc;
    sc_python_find_libpython(info);
    snprintf(info->located, sizeof info->located, "ran");
    return 0;
}

int sc_python_locate(const char *python, double timeout_s, sc_python_info *info, sc_error *err)
{
    if (!python || !python[0])
        python = "python3";
    if (strlen(python) >= sizeof cache.python)
        return sc_error_set(err, -ENAMETOOLONG, "the interpreter's name is too long");
    if (!cache.valid || strcmp(cache.python, python) != 0) {
        memcpy(cache.python, python, strlen(python) + 1);
        memset(&cache.err, 0, sizeof cache.err);
        cache.rc = locate_by_running(python, timeout_s, &cache.info, &cache.err);
        cache.valid = true;
    }
    if (cache.rc < 0) {
        if (err)
            *err = cache.err;
        return cache.rc;
    }
    *info = cache.info;
    sc_python_apply_subprocess_override(info);
    return 0;
}

bool sc_pkg_metadata_version(const char *text, size_t len, char *buf, size_t size)
{
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        size_t n = (size_t)(line_end - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (n == 0)
            return false; /* end of the header block: the description follows */
        if (n > 8 && strncasecmp(p, "Version:", 8) == 0) {
            const char *v = p + 8;
            while (v < p + n && (*v == ' ' || *v == '\t'))
                v++;
            size_t vn = (size_t)(p + n - v);
            while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
                vn--;
            if (vn == 0 || vn >= size || memchr(v, '\0', vn))
                return false;
            memcpy(buf, v, vn);
            buf[vn] = '\0';
            return true;
        }
        p = line_end + 1;
    }
    return false;
}

void sc_python_prepare(const sc_ctx *ctx)
{
    sc_python_info info;
    sc_error err = {0};
    if (!ctx->offline)
        sc_python_locate(ctx->opt->python, ctx->opt->timeout_s, &info, &err);
}
