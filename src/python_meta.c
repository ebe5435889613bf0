/* Python facts without running Python: versions from installed metadata (dist-info, egg-info),
 * other interpreters on the machine that have a package, the file a dynamic loader error message
 * points at, and an interpreter located from its files alone (binary, pyvenv.cfg, layout). All
 * reads go through the root, so they work under --sysroot too. */
#include "sc_python.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_elf.h"
#include "sc_ldcache.h"
#include "sc_util.h"

#define METADATA_MAX (256u << 10)

/* PEP 503 normalisation, enough for comparing: lower case, runs of - _ . are alike. */
static void normalise(const char *in, size_t n, char *out, size_t size)
{
    size_t o = 0;
    for (size_t i = 0; i < n && in[i] && o + 1 < size; i++) {
        char c = in[i];
        out[o++] = (c == '-' || c == '.') ? '_' : (char)tolower((unsigned char)c);
    }
    out[o] = '\0';
}

/* The project part of a metadata directory name (torch-2.1.0+rocm5.6.dist-info, or a bare
 * torch.egg-info of a development install), normalised. */
static bool entry_project(const char *name, char *out, size_t size)
{
    const char *suffix = strstr(name, ".dist-info");
    if (!suffix || suffix[10])
        suffix = strstr(name, ".egg-info");
    if (!suffix || (suffix[1] == 'e' ? suffix[9] : suffix[10]))
        return false;
    const char *dash = memchr(name, '-', (size_t)(suffix - name));
    normalise(name, (size_t)((dash ? dash : suffix) - name), out, size);
    return true;
}

/* Reads the Version header of one metadata directory (or egg-info file). */
static int read_version(const sc_root *root, const char *entry_path, bool dist_info, char *version,
                        size_t vsize, char *meta_path, size_t psize)
{
    char path[PATH_MAX];
    struct stat st;
    if (sc_root_stat(root, entry_path, &st, true) < 0)
        return -ENOENT;
    if (S_ISDIR(st.st_mode))
        sc_fmt(path, sizeof path, "%s/%s", entry_path, dist_info ? "METADATA" : "PKG-INFO");
    else
        sc_fmt(path, sizeof path, "%s", entry_path); /* old-style egg-info file */
    char *text = NULL;
    long n = sc_root_read(root, path, &text, METADATA_MAX);
    bool ok = n > 0 && sc_pkg_metadata_version(text, (size_t)n, version, vsize);
    free(text);
    if (ok)
        snprintf(meta_path, psize, "%s", path);
    return ok ? 0 : -ENOENT;
}

int sc_python_dist_version(const sc_root *root, const char *dir, const char *project, char *version,
                           size_t vsize, char *meta_path, size_t psize)
{
    char want[128], have[128], path[PATH_MAX];
    normalise(project, strlen(project), want, sizeof want);
    DIR *d = sc_root_opendir(root, dir);
    if (!d)
        return -ENOENT;
    int rc = -ENOENT;
    struct dirent *e;
    while (rc < 0 && (e = readdir(d))) {
        if (!entry_project(e->d_name, have, sizeof have) || strcmp(have, want) != 0)
            continue;
        if (sc_fmt(path, sizeof path, "%s/%s", dir, e->d_name))
            rc = read_version(root, path, sc_ends_with(e->d_name, ".dist-info"), version, vsize,
                              meta_path, psize);
    }
    closedir(d);
    return rc;
}

static bool skipped(const char *site, const char *const *skip)
{
    for (int i = 0; skip && skip[i]; i++)
        if (strcmp(site, skip[i]) == 0)
            return true;
    return false;
}

static void add_found(const sc_root *root, const char *python, const char *site,
                      const char *project, const char *const *skip, cJSON *out)
{
    char version[128], meta[PATH_MAX];
    if (skipped(site, skip) ||
        sc_python_dist_version(root, site, project, version, sizeof version, meta, sizeof meta) < 0)
        return;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddStringToObject(o, "python", python);
    cJSON_AddStringToObject(o, "site", site);
    cJSON_AddStringToObject(o, "version", version);
    cJSON_AddItemToArray(out, o);
}

/* One installation prefix: PREFIX/lib/python3.X/{site,dist}-packages, run by PREFIX/bin/python3.X
 * (or python3 when that is missing). */
static void scan_prefix(const sc_root *root, const char *prefix, const char *project,
                        const char *const *skip, cJSON *out)
{
    char lib[PATH_MAX], site[PATH_MAX], python[PATH_MAX];
    sc_fmt(lib, sizeof lib, "%s/lib", prefix);
    DIR *d = sc_root_opendir(root, lib);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!sc_starts_with(e->d_name, "python3.") || strlen(e->d_name) > 16)
            continue;
        sc_fmt(python, sizeof python, "%s/bin/%s", prefix, e->d_name);
        if (!sc_root_exists(root, python))
            sc_fmt(python, sizeof python, "%s/bin/python3", prefix);
        for (int k = 0; k < 2; k++) {
            sc_fmt(site, sizeof site, "%s/%s/%s", lib, e->d_name,
                   k ? "dist-packages" : "site-packages");
            /* Debian's /usr/local/lib/python3.X/dist-packages belongs to /usr/bin/python3. */
            bool debian_local = k == 1 && strcmp(prefix, "/usr/local") == 0;
            add_found(root, debian_local ? "/usr/bin/python3" : python, site, project, skip, out);
        }
    }
    closedir(d);
}

/* Every subdirectory of dir as a prefix (pyenv versions, conda envs). */
static void scan_children(const sc_root *root, const char *dir, const char *project,
                          const char *const *skip, cJSON *out)
{
    char prefix[PATH_MAX];
    DIR *d = sc_root_opendir(root, dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] != '.' && sc_fmt(prefix, sizeof prefix, "%s/%s", dir, e->d_name))
            scan_prefix(root, prefix, project, skip, out);
    }
    closedir(d);
}

static void scan_home(const sc_root *root, const char *home, const char *project,
                      const char *const *skip, cJSON *out)
{
    static const char *const conda[] = {"miniconda3", "anaconda3", "miniforge3", "mambaforge"};
    char dir[PATH_MAX];
    const char *pyenv = getenv("PYENV_ROOT");
    if (pyenv && pyenv[0] == '/' && sc_fmt(dir, sizeof dir, "%s/versions", pyenv))
        scan_children(root, dir, project, skip, out);
    else if (sc_fmt(dir, sizeof dir, "%s/.pyenv/versions", home))
        scan_children(root, dir, project, skip, out);
    for (size_t i = 0; i < sizeof conda / sizeof conda[0]; i++) {
        if (!sc_fmt(dir, sizeof dir, "%s/%s", home, conda[i]))
            continue;
        scan_prefix(root, dir, project, skip, out);
        if (sc_fmt(dir, sizeof dir, "%s/%s/envs", home, conda[i]))
            scan_children(root, dir, project, skip, out);
    }
}

void sc_python_find_elsewhere(const sc_root *root, const char *project, const char *const *skip,
                              cJSON *out)
{
    add_found(root, "/usr/bin/python3", "/usr/lib/python3/dist-packages", project, skip, out);
    scan_prefix(root, "/usr/local", project, skip, out);
    scan_prefix(root, "/opt/conda", project, skip, out);
    scan_children(root, "/opt/conda/envs", project, skip, out);
    const char *home = getenv("HOME");
    if (home && home[0] == '/' && strcmp(home, "/") != 0)
        scan_home(root, home, project, skip, out);
}

/* The whitespace-delimited token that ends right before p (at most back to start). */
static void token_before(const char *start, const char *p, char *buf, size_t size)
{
    const char *b = p;
    while (b > start && !isspace((unsigned char)b[-1]) && !strchr("'\"(`", b[-1]))
        b--;
    size_t n = (size_t)(p - b) < size - 1 ? (size_t)(p - b) : size - 1;
    memcpy(buf, b, n);
    buf[n] = '\0';
}

/* The text after p up to the first character of stop (or the end), bounded. */
static void token_after(const char *p, const char *stop, char *buf, size_t size)
{
    size_t n = strcspn(p, stop);
    if (n > size - 1)
        n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

bool sc_loader_error_parse(const char *msg, char *file, size_t fsize, char *kind, size_t ksize,
                           char *subject, size_t ssize)
{
    const char *p;
    file[0] = kind[0] = subject[0] = '\0';
    if ((p = strstr(msg, ": undefined symbol: "))) {
        snprintf(kind, ksize, "undefined-symbol");
        token_before(msg, p, file, fsize);
        token_after(p + 20, " \t\r\n,'\"", subject, ssize);
    } else if ((p = strstr(msg, "' not found (required by ")) && strstr(msg, "version `")) {
        const char *v = strstr(msg, "version `") + 9;
        snprintf(kind, ksize, "version-not-found");
        token_after(v, "'", subject, ssize);
        token_after(p + 25, ")", file, fsize);
    } else if ((p = strstr(msg, ": cannot open shared object file"))) {
        snprintf(kind, ksize, "missing-library");
        token_before(msg, p, subject, ssize);
    } else {
        return false;
    }
    if (file[0] != '/')
        file[0] = '\0';
    return true;
}

/* ---- the interpreter, located without running it ------------------------------------------- */

/* The value of `#define PY_VERSION "3.11.7"` in patchlevel.h text (len bytes) into buf. */
bool sc_python_patchlevel_version(const char *text, size_t len, char *buf, size_t size)
{
    static const char key[] = "#define PY_VERSION";
    const char *p = memmem(text, len, key, sizeof key - 1), *end = text + len;
    if (!p)
        return false;
    p += sizeof key - 1;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p >= end || *p != '"')
        return false;
    p++;
    const char *q = memchr(p, '"', (size_t)(end - p));
    if (!q || q == p || (size_t)(q - p) >= size || memchr(p, '\n', (size_t)(q - p)))
        return false;
    memcpy(buf, p, (size_t)(q - p));
    buf[q - p] = '\0';
    return true;
}

/* The value of `key = value` in pyvenv.cfg text (len bytes) into buf; false when absent. */
bool sc_pyvenv_value(const char *text, size_t len, const char *key, char *buf, size_t size)
{
    size_t kl = strlen(key);
    for (const char *p = text, *end = text + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
        while (p < le && isspace((unsigned char)*p))
            p++;
        const char *eq = memchr(p, '=', (size_t)(le - p));
        const char *ke = eq;
        while (ke && ke > p && isspace((unsigned char)ke[-1]))
            ke--;
        if (eq && (size_t)(ke - p) == kl && strncasecmp(p, key, kl) == 0) {
            const char *v = eq + 1, *ve = le;
            while (v < ve && isspace((unsigned char)*v))
                v++;
            while (ve > v && isspace((unsigned char)ve[-1]))
                ve--;
            if ((size_t)(ve - v) >= size || memchr(v, '\0', (size_t)(ve - v)))
                return false;
            memcpy(buf, v, (size_t)(ve - v));
            buf[ve - v] = '\0';
            return true;
        }
        p = le + 1;
    }
    return false;
}

/* "3.11" (and ldversion "3.11t") from a file name "python3.11" / "python3.13t"; false otherwise. */
bool sc_python_name_version(const char *name, char *version, size_t vsize, char *ld, size_t lsize)
{
    int major = 0, minor = 0, n = 0;
    if (sscanf(name, "python%d.%d%n", &major, &minor, &n) != 2 || major < 2 || minor < 0)
        return false;
    const char *flags = name + n;
    if (strlen(flags) > 3 || strspn(flags, "dmt") != strlen(flags))
        return false;
    snprintf(version, vsize, "%d.%d", major, minor);
    snprintf(ld, lsize, "%d.%d%s", major, minor, flags);
    return true;
}

/* The executable python names: itself when it has a slash, else the first executable regular
 * file of that name along PATH, as execvp finds it. */
static int find_on_path(const sc_root *root, const char *python, char *out, size_t size)
{
    struct stat st;
    if (strchr(python, '/')) {
        char cwd[PATH_MAX];
        if (python[0] != '/' && getcwd(cwd, sizeof cwd))
            return sc_fmt(out, size, "%s/%s", cwd, python) ? 0 : -ENAMETOOLONG;
        return sc_fmt(out, size, "%s", python) ? 0 : -ENAMETOOLONG;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && p[0] == '/' && sc_fmt(out, size, "%.*s/%s", (int)n, p, python) &&
            sc_root_stat(root, out, &st, true) == 0 && S_ISREG(st.st_mode) &&
            sc_root_access(root, out, X_OK) == 0)
            return 0;
        p += n + (p[n] == ':');
    }
    return -ENOENT;
}

/* Whether path is an ELF binary (0), a script (-ENOEXEC, "#!"), or something else. */
static int executable_kind(const sc_root *root, const char *path)
{
    unsigned char head[4] = {0};
    int fd = sc_root_openat(root, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fd;
    ssize_t n = pread(fd, head, sizeof head, 0);
    close(fd);
    if (n == 4 && memcmp(head, "\177ELF", 4) == 0)
        return 0;
    return n >= 2 && head[0] == '#' && head[1] == '!' ? -ENOEXEC : -EINVAL;
}

static void add_site_dir(const sc_root *root, sc_python_info *info, const char *dir)
{
    struct stat st;
    for (int i = 0; i < info->site_count; i++)
        if (strcmp(info->site_packages[i], dir) == 0)
            return;
    if (info->site_count < 8 && strlen(dir) < PATH_MAX && sc_root_stat(root, dir, &st, true) == 0 &&
        S_ISDIR(st.st_mode))
        memcpy(info->site_packages[info->site_count++], dir, strlen(dir) + 1);
}

/* The site directories of an installation prefix, in import order: Debian's for /usr (its site.py
 * puts /usr/local's dist-packages first), else PREFIX/lib/pythonX.Y/site-packages. */
static void prefix_sites(const sc_root *root, sc_python_info *info, const char *prefix,
                         const char *xy)
{
    char dir[PATH_MAX];
    if (strcmp(prefix, "/usr") == 0) {
        if (sc_fmt(dir, sizeof dir, "/usr/local/lib/python%s/dist-packages", xy))
            add_site_dir(root, info, dir);
        add_site_dir(root, info, "/usr/lib/python3/dist-packages");
        if (sc_fmt(dir, sizeof dir, "/usr/lib/python%s/dist-packages", xy))
            add_site_dir(root, info, dir);
    }
    if (sc_fmt(dir, sizeof dir, "%s/lib/python%s/site-packages", prefix, xy))
        add_site_dir(root, info, dir);
}

/* PYTHONPATH entries and the user's site directory, which the interpreter puts before the
 * installation's own (the user site only without a venv, or with system site packages). */
static void front_sites(const sc_root *root, sc_python_info *info, const char *xy, bool user)
{
    char dir[PATH_MAX];
    const char *pp = getenv("PYTHONPATH"), *home = getenv("HOME");
    for (const char *p = pp ? pp : ""; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && p[0] == '/' && sc_fmt(dir, sizeof dir, "%.*s", (int)n, p))
            add_site_dir(root, info, dir);
        p += n + (p[n] == ':');
    }
    if (user && !getenv("PYTHONNOUSERSITE") && home && home[0] == '/' && getuid() == geteuid() &&
        sc_fmt(dir, sizeof dir, "%s/.local/lib/python%s/site-packages", home, xy))
        add_site_dir(root, info, dir);
}

/* The version: X.Y from the file name, or from the only PREFIX/lib/pythonX.Y with os.py. */
static bool static_version(const sc_root *root, const char *real, const char *prefix,
                           sc_python_info *info)
{
    const char *base = strrchr(real, '/') + 1;
    char lib[PATH_MAX], os_py[PATH_MAX + 300], only[256] = "", v[32], ld[16];
    if (sc_python_name_version(base, info->version, sizeof info->version, info->ldversion,
                               sizeof info->ldversion))
        return true;
    DIR *d = sc_fmt(lib, sizeof lib, "%s/lib", prefix) ? sc_root_opendir(root, lib) : NULL;
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)))
        if (sc_python_name_version(e->d_name, v, sizeof v, ld, sizeof ld) &&
            sc_fmt(os_py, sizeof os_py, "%s/%s/os.py", lib, e->d_name) &&
            sc_root_exists(root, os_py) && found++ == 0)
            snprintf(only, sizeof only, "%s", e->d_name);
    if (d)
        closedir(d);
    return found == 1 && sc_python_name_version(only, info->version, sizeof info->version,
                                                info->ldversion, sizeof info->ldversion);
}

/* The patch level from PREFIX/include/pythonX.Y/patchlevel.h when it agrees with X.Y. */
static void refine_version(const sc_root *root, const char *prefix, const char *libname,
                           sc_python_info *info)
{
    char path[PATH_MAX], full[32], *text = NULL;
    if (!sc_fmt(path, sizeof path, "%s/include/%s/patchlevel.h", prefix, libname))
        return;
    long n = sc_root_read(root, path, &text, 64u << 10);
    size_t xy = strlen(info->version);
    if (n > 0 && sc_python_patchlevel_version(text, (size_t)n, full, sizeof full) &&
        strncmp(full, info->version, xy) == 0 && full[xy] == '.') {
        snprintf(info->version, sizeof info->version, "%s", full);
        snprintf(info->version_from, sizeof info->version_from, "patchlevel.h");
    }
    free(text);
}

/* Debian's /usr keeps libpython in the multiarch directory (its LIBDIR), found through
 * ld.so.cache for the interpreter's class and machine; Debian builds it shared. */
static void debian_libdir(const sc_root *root, const sc_elf_info *elf, sc_python_info *info)
{
    sc_ldcache cache;
    sc_error err = {0};
    if (strcmp(info->base_prefix, "/usr") != 0 || sc_ldcache_load(root, &cache, &err) < 0)
        return;
    const char *hit = sc_ldcache_lookup(&cache, info->instsoname,
                                        sc_ldcache_flags_for(elf->elf_class, elf->machine));
    /* merged /usr: the cache may name /lib/<triplet>, which is /usr/lib/<triplet> */
    const char *usr = hit && sc_starts_with(hit, "/lib/") ? "/usr" : "";
    if (hit && (usr[0] || sc_starts_with(hit, "/usr/lib/")) &&
        sc_fmt(info->libdir, sizeof info->libdir, "%s%.*s", usr, (int)(strrchr(hit, '/') - hit),
               hit))
        info->enable_shared = true;
    sc_ldcache_free(&cache);
}

/* The shared libpython as the interpreter's sysconfig would name it: LIBDIR is PREFIX/lib, or
 * Debian's multiarch directory for /usr; Py_ENABLE_SHARED when the binary needs libpython. */
static void static_libpython(const sc_root *root, const char *real, sc_python_info *info)
{
    sc_elf_file f;
    sc_error err = {0};
    bool have_elf = sc_elf_open(root, real, 0, &f, &err) == 0;
    for (int i = 0; have_elf && i < f.info.needed_count; i++)
        info->enable_shared |= sc_starts_with(f.info.needed[i], "libpython");
    snprintf(info->instsoname, sizeof info->instsoname, "libpython%s.so.1.0", info->ldversion);
    sc_fmt(info->libdir, sizeof info->libdir, "%s/lib", info->base_prefix);
    if (have_elf)
        debian_libdir(root, &f.info, info);
    snprintf(info->ldlibrary, sizeof info->ldlibrary, "libpython%s.%s", info->ldversion,
             info->enable_shared ? "so" : "a");
    if (have_elf)
        sc_elf_close(&f);
    sc_python_find_libpython(info);
}

/* A venv (pyvenv.cfg beside the executable or one directory up): its prefix and site
 * directory first, then the base's when include-system-site-packages is not false. */
static bool static_venv(const sc_root *root, const char *exe, sc_python_info *info,
                        const char *libname, bool *system_site)
{
    char dir[PATH_MAX], cfg[PATH_MAX + 16], value[64], *text = NULL;
    long n = -1;
    snprintf(dir, sizeof dir, "%s", exe);
    for (int up = 0; up < 2 && n < 0; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return false;
        *slash = '\0';
        if (sc_fmt(cfg, sizeof cfg, "%s/pyvenv.cfg", dir))
            n = sc_root_read(root, cfg, &text, 64u << 10);
    }
    if (n < 0)
        return false;
    snprintf(info->prefix, sizeof info->prefix, "%s", dir);
    *system_site =
        !sc_pyvenv_value(text, (size_t)n, "include-system-site-packages", value, sizeof value) ||
        strcasecmp(value, "true") == 0;
    size_t xy = strlen(info->version);
    if ((sc_pyvenv_value(text, (size_t)n, "version", value, sizeof value) ||
         sc_pyvenv_value(text, (size_t)n, "version_info", value, sizeof value)) &&
        strncmp(value, info->version, xy) == 0 && value[xy] == '.') {
        value[xy + 1 + strspn(value + xy + 1, "0123456789")] = '\0';
        snprintf(info->version, sizeof info->version, "%.31s", value);
        snprintf(info->version_from, sizeof info->version_from, "pyvenv.cfg");
    }
    free(text);
    char site[PATH_MAX + 300];
    if (sc_fmt(site, sizeof site, "%s/lib/%s/site-packages", dir, libname))
        add_site_dir(root, info, site);
    return true;
}

int sc_python_locate_static(const sc_root *root, const char *python, sc_python_info *info,
                            sc_error *err)
{
    char exe[PATH_MAX], real[PATH_MAX], prefix[PATH_MAX], libname[64], os_py[PATH_MAX + 128];
    memset(info, 0, sizeof *info);
    python = python && python[0] ? python : "python3";
    if (find_on_path(root, python, exe, sizeof exe) < 0 ||
        sc_root_realpath(root, exe, real, sizeof real) < 0)
        return sc_error_set(err, -ENOENT, "%s: not found on PATH or not resolvable", python);
    int kind = executable_kind(root, real);
    if (kind == -ENOEXEC)
        return sc_error_set(err, -ENOEXEC, "a script wrapper: %s", exe);
    if (kind < 0)
        return sc_error_set(err, -ENOEXEC, "%s is not an ELF executable", real);
    char *slash = strrchr(real, '/');
    if (slash - real < 4 || strncmp(slash - 4, "/bin", 4) != 0)
        return sc_error_set(err, -ENOENT, "%s is not in a bin directory", real);
    snprintf(prefix, sizeof prefix, "%.*s", (int)(slash - 4 - real), real);
    if (!prefix[0])
        snprintf(prefix, sizeof prefix, "/");
    if (!static_version(root, real, prefix, info))
        return sc_error_set(err, -ENOENT, "no Python version in %s's name or under %s/lib", real,
                            prefix);
    snprintf(libname, sizeof libname, "python%s%s", info->version,
             strchr(info->ldversion, 't') ? "t" : "");
    if (!sc_fmt(os_py, sizeof os_py, "%s/lib/%s/os.py", prefix, libname) ||
        !sc_root_exists(root, os_py))
        return sc_error_set(err, -ENOENT, "no standard library at %s/lib/%s", prefix, libname);
    snprintf(info->version_from, sizeof info->version_from, "file name");
    snprintf(info->located, sizeof info->located, "static");
    snprintf(info->executable, sizeof info->executable, "%s", exe);
    snprintf(info->prefix, sizeof info->prefix, "%s", prefix);
    snprintf(info->base_prefix, sizeof info->base_prefix, "%s", prefix);
    refine_version(root, prefix, libname, info);
    front_sites(root, info, libname + 6, false);
    bool system_site = true, venv = static_venv(root, exe, info, libname, &system_site);
    if (system_site)
        front_sites(root, info, libname + 6, true);
    if (!venv || system_site)
        prefix_sites(root, info, prefix, libname + 6);
    static_libpython(root, real, info);
    return 0;
}
