/* Where extension builds are kept: TORCH_EXTENSIONS_DIR, torch's default cache
 * ($XDG_CACHE_HOME or ~/.cache, then torch_extensions/py<XY>_<tag>/), and for each --ext directory
 * its build/ tree and the directories its *.egg-link files name; then the entries of the caches
 * the current environment loads from, read with a bound. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libs_extcache_internal.h"

static bool is_dir(const sc_root *root, const char *path)
{
    struct stat st;
    return sc_root_stat(root, path, &st, true) == 0 && S_ISDIR(st.st_mode);
}

static extcache_dir *add_cache(extcache_scan *scan, const char *path, const char *kind,
                               bool per_entry)
{
    for (int i = 0; i < scan->cache_count; i++)
        if (strcmp(scan->caches[i].path, path) == 0)
            return NULL;
    if (scan->cache_count >= MAX_CACHES)
        return NULL;
    extcache_dir *c = &scan->caches[scan->cache_count++];
    memset(c, 0, sizeof *c);
    snprintf(c->path, sizeof c->path, "%s", path);
    c->kind = kind;
    c->per_entry = per_entry;
    c->used = true;
    return c;
}

/* The default cache's folders; a folder of another Python or torch build is listed, not used
 * (torch loads from py<this Python>_<this build> only, and not at all under TORCH_EXTENSIONS_DIR).
 */
static void find_default(const sc_ctx *ctx, const extcache_env *env, bool custom,
                         extcache_scan *scan)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char base[PATH_MAX];
    if (!(xdg && xdg[0] == '/'     ? sc_fmt(base, sizeof base, "%s/torch_extensions", xdg)
          : home && home[0] == '/' ? sc_fmt(base, sizeof base, "%s/.cache/torch_extensions", home)
                                   : false))
        return;
    DIR *d = sc_root_opendir(ctx->root, base);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[PATH_MAX], py[16], tag[32];
        if (!sc_ext_folder_parse(e->d_name, py, sizeof py, tag, sizeof tag) ||
            !sc_fmt(path, sizeof path, "%s/%s", base, e->d_name) || !is_dir(ctx->root, path))
            continue;
        extcache_dir *c = add_cache(scan, path, "default", true);
        if (!c)
            continue;
        snprintf(c->folder_py, sizeof c->folder_py, "%s", py);
        snprintf(c->folder_tag, sizeof c->folder_tag, "%s", tag);
        c->used = !custom && (!env->python_tag[0] || strcmp(py, env->python_tag) == 0) &&
                  (!env->torch_tag[0] || strcmp(tag, env->torch_tag) == 0);
    }
    if (d)
        closedir(d);
}

/* The directory a .egg-link file names (its first line; relative to the file's directory). */
static void add_egg_link(const sc_ctx *ctx, const char *dir, const char *file, extcache_scan *scan)
{
    char link[PATH_MAX], target[PATH_MAX], line[PATH_MAX];
    if (!sc_fmt(link, sizeof link, "%s/%s", dir, file) ||
        sc_root_read_line(ctx->root, link, line, sizeof line) < 0 || !line[0])
        return;
    if (!(line[0] == '/' ? sc_fmt(target, sizeof target, "%s", line)
                         : sc_fmt(target, sizeof target, "%s/%s", dir, line)) ||
        !is_dir(ctx->root, target))
        return;
    extcache_dir *c = add_cache(scan, target, "egg-link", false);
    if (c)
        snprintf(c->via, sizeof c->via, "%s", link);
}

static void find_ext_dirs(const sc_ctx *ctx, extcache_scan *scan)
{
    for (int i = 0; i < ctx->opt->ext.count; i++) {
        const char *dir = ctx->opt->ext.items[i];
        char build[PATH_MAX];
        if (!is_dir(ctx->root, dir))
            continue;
        if (sc_fmt(build, sizeof build, "%s/build", dir) && is_dir(ctx->root, build))
            add_cache(scan, build, "build", false);
        DIR *d = sc_root_opendir(ctx->root, dir);
        struct dirent *e;
        for (int n = 0; d && (e = readdir(d)) != NULL && n < SC_EXTCACHE_READ_MAX; n++)
            if (sc_ends_with(e->d_name, ".egg-link"))
                add_egg_link(ctx, dir, e->d_name, scan);
        if (d)
            closedir(d);
    }
}

void sc_extcache_find(const sc_ctx *ctx, const extcache_env *env, extcache_scan *scan)
{
    const char *custom = getenv("TORCH_EXTENSIONS_DIR");
    if (custom && custom[0] == '/' && is_dir(ctx->root, custom))
        add_cache(scan, custom, "TORCH_EXTENSIONS_DIR", true);
    find_default(ctx, env, custom && custom[0] == '/', scan);
    find_ext_dirs(ctx, scan);
}

static void add_entry(extcache_scan *scan, const sc_root *root, const char *dir, int cache)
{
    struct stat st;
    if (scan->entry_count >= MAX_ENTRIES) {
        scan->dropped++;
        return;
    }
    if (scan->entry_count == scan->entry_cap) {
        size_t cap = scan->entry_cap ? 2 * scan->entry_cap : 64;
        extcache_entry *grown = realloc(scan->entries, cap * sizeof *grown);
        if (!grown)
            return;
        scan->entries = grown;
        scan->entry_cap = cap;
    }
    char *copy = strdup(dir);
    if (!copy)
        return;
    extcache_entry *e = &scan->entries[scan->entry_count++];
    e->dir = copy;
    e->mtime = sc_root_stat(root, dir, &st, true) == 0 ? (double)st.st_mtime : 0;
    e->cache = cache;
}

/* A torch cache's entries: its subdirectories (one per extension name); the read stops after
 * SC_EXTCACHE_READ_MAX of them (truncated). */
static void read_per_entry(const sc_ctx *ctx, extcache_scan *scan, int i)
{
    extcache_dir *c = &scan->caches[i];
    DIR *d = sc_root_opendir(ctx->root, c->path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[PATH_MAX];
        if (e->d_name[0] == '.' || !sc_fmt(path, sizeof path, "%s/%s", c->path, e->d_name) ||
            !is_dir(ctx->root, path))
            continue;
        if (c->seen++ >= SC_EXTCACHE_READ_MAX) {
            c->truncated = true;
            break;
        }
        add_entry(scan, ctx->root, path, i);
    }
    if (d)
        closedir(d);
}

void sc_extcache_read_entries(const sc_ctx *ctx, extcache_scan *scan)
{
    for (int i = 0; i < scan->cache_count; i++) {
        extcache_dir *c = &scan->caches[i];
        if (!c->used)
            continue;
        if (c->per_entry)
            read_per_entry(ctx, scan, i);
        else {
            c->seen = 1;
            add_entry(scan, ctx->root, c->path, i);
        }
    }
}

void sc_extcache_scan_free(extcache_scan *scan)
{
    for (size_t i = 0; i < scan->entry_count; i++)
        free(scan->entries[i].dir);
    free(scan->entries);
    scan->entries = NULL;
    scan->entry_count = scan->entry_cap = 0;
}
