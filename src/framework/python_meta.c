/* Python package facts without running Python: versions from installed metadata (dist-info,
 * egg-info) and the other interpreters on the machine that have a package. All reads go through
 * the root, so they work under --sysroot too. */
#include "sc_python.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
