/* An interpreter located from its files alone (binary, pyvenv.cfg, layout), without running it:
 * the gated inventory's way to report Python when the layers below failed. All reads go through
 * the root, so they work under --sysroot too. */
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
    int fd = sc_root_open_file(root, path, NULL);
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

/* The first version named in a pyenv version file ("3.11.7", or a virtualenv name), or false. */
static bool pyenv_file_version(const sc_root *root, const char *path, char *out, size_t size)
{
    char *text;
    if (sc_root_read(root, path, &text, 4096) < 0)
        return false;
    bool found = false;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line && !found;
         line = strtok_r(NULL, "\n", &save)) {
        line += strspn(line, " \t");
        size_t n = strcspn(line, " \t\r#");
        found = n > 0 && line[0] != '#' && sc_fmt(out, size, "%.*s", (int)n, line);
    }
    free(text);
    return found;
}

/* The version pyenv selects, in its own order: PYENV_VERSION, a .python-version in the working
 * directory or a parent, then PYENV_ROOT/version. */
static bool pyenv_version(const sc_root *root, const char *pyenv_root, char *out, size_t size)
{
    const char *env = getenv("PYENV_VERSION");
    if (env && *env)
        return sc_fmt(out, size, "%.*s", (int)strcspn(env, ":"), env);
    char dir[PATH_MAX], file[PATH_MAX + 32];
    if (getcwd(dir, sizeof dir)) {
        for (char *slash; dir[0]; *slash = '\0') {
            if (sc_fmt(file, sizeof file, "%s/.python-version", dir) &&
                pyenv_file_version(root, file, out, size))
                return true;
            if (!(slash = strrchr(dir, '/')))
                break;
        }
    }
    return sc_fmt(file, sizeof file, "%s/version", pyenv_root) &&
           pyenv_file_version(root, file, out, size);
}

/* A pyenv shim (PYENV_ROOT/shims/NAME, a script) resolved to the interpreter it would exec:
 * PYENV_ROOT/versions/VERSION/bin/NAME. False for "system" or anything else. */
static bool pyenv_shim_target(const sc_root *root, const char *shim, char *out, size_t size)
{
    const char *name = strrchr(shim, '/');
    char pyenv_root[PATH_MAX], version[256];
    if (!name || name - shim < 6 || strncmp(name - 6, "/shims", 6) != 0)
        return false;
    snprintf(pyenv_root, sizeof pyenv_root, "%.*s", (int)(name - 6 - shim), shim);
    if (!pyenv_version(root, pyenv_root, version, sizeof version) ||
        strcmp(version, "system") == 0 || strchr(version, '/'))
        return false;
    return sc_fmt(out, size, "%s/versions/%s/bin%s", pyenv_root, version, name) &&
           sc_root_exists(root, out);
}

/* The interpreter python names (exe, as found along PATH), its real path (an ELF binary in a bin
 * directory) and the prefix above that directory. 0 or a negative errno with err filled. */
static int locate_binary(const sc_root *root, const char *python, char *exe, char *real,
                         char *prefix, sc_error *err)
{
    if (find_on_path(root, python, exe, PATH_MAX) < 0 ||
        sc_root_realpath(root, exe, real, PATH_MAX) < 0)
        return sc_error_set(err, -ENOENT, "%s: not found on PATH or not resolvable", python);
    int kind = executable_kind(root, real);
    char target[PATH_MAX];
    if (kind == -ENOEXEC && pyenv_shim_target(root, real, target, sizeof target) &&
        sc_root_realpath(root, target, real, PATH_MAX) == 0) {
        snprintf(exe, PATH_MAX, "%s", target); /* what the shim execs, as sys.executable says */
        kind = executable_kind(root, real);
    }
    if (kind == -ENOEXEC)
        return sc_error_set(err, -ENOEXEC, "a script wrapper: %s", exe);
    if (kind < 0)
        return sc_error_set(err, -ENOEXEC, "%s is not an ELF executable", real);
    char *slash = strrchr(real, '/');
    if (slash - real < 4 || strncmp(slash - 4, "/bin", 4) != 0)
        return sc_error_set(err, -ENOENT, "%s is not in a bin directory", real);
    snprintf(prefix, PATH_MAX, "%.*s", (int)(slash - 4 - real), real);
    if (!prefix[0])
        snprintf(prefix, PATH_MAX, "/");
    return 0;
}

int sc_python_locate_static(const sc_root *root, const char *python, sc_python_info *info,
                            sc_error *err)
{
    char exe[PATH_MAX], real[PATH_MAX], prefix[PATH_MAX], libname[64], os_py[PATH_MAX + 128];
    memset(info, 0, sizeof *info);
    python = python && python[0] ? python : "python3";
    int rc = locate_binary(root, python, exe, real, prefix, err);
    if (rc < 0)
        return rc;
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
