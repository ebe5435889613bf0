/* glibc's search for a DT_NEEDED name, reading files only. The order follows elf/dl-load.c
 * (_dl_map_object): RPATH chain, LD_LIBRARY_PATH, RUNPATH, cache, default directories. A candidate
 * that cannot be opened (missing, unreadable, a symlink loop) or is not ELF of the right class and
 * machine is passed over, as the loader passes it over; the kernel bounds each lookup. The lists
 * and directories come from the search state (ldsearch.c), which bounds the work of all lookups. */
#include "sc_ldresolve.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldsearch_internal.h"
#include "sc_elf.h"
#include "sc_util.h"

static const char *const via_names[] = {"direct",    "rpath",        "ld_library_path",
                                        "runpath",   "cache",        "default",
                                        "not_found", "not_searched", "ld.so.conf"};

const char *sc_found_via_name(sc_found_via via)
{
    return (via >= SC_VIA_DIRECT && via <= SC_VIA_CONF) ? via_names[via] : "?";
}

/* Length of the dynamic string token at p ("$ORIGIN" or "${ORIGIN}") named name, or 0. */
static size_t dst_len(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name), avail = (size_t)(end - p);
    if (avail > n + 2 && p[1] == '{' && strncmp(p + 2, name, n) == 0 && p[n + 2] == '}')
        return n + 3;
    if (avail > n && strncmp(p + 1, name, n) == 0) {
        char c = (p + n + 1 < end) ? p[n + 1] : '\0';
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return n + 1;
    }
    return 0;
}

bool sc_ld_expand(const char *entry, size_t len, const char *origin, char *out, size_t size)
{
    return sc_ld_expand_for(sc_ld_target_default(), entry, len, origin, out, size);
}

bool sc_ld_expand_for(const sc_ld_target *t, const char *entry, size_t len, const char *origin,
                      char *out, size_t size)
{
    const char *p = entry, *end = entry + len;
    size_t o = 0;
    while (p < end) {
        const char *repl = NULL;
        size_t skip = 0;
        if (*p == '$') {
            if ((skip = dst_len(p, end, "ORIGIN")) != 0)
                repl = origin ? origin : ".";
            else if ((skip = dst_len(p, end, "LIB")) != 0)
                repl = t->lib;
            else if ((skip = dst_len(p, end, "PLATFORM")) != 0)
                repl = t->platform;
        }
        if (!repl) {
            repl = p;
            skip = 1;
        }
        size_t n = (repl == p) ? 1 : strlen(repl);
        if (o + n >= size)
            return false;
        memcpy(out + o, repl, n);
        o += n;
        p += skip;
    }
    out[o] = '\0';
    return true;
}

/* The open file when path inside the root is where ld.so's search stops: a regular file that is
 * not ELF of another class or machine (those ld.so passes over: elf/dl-load.c open_verify); one
 * that is not ELF at all, or too short, stops it too, and ld.so fails there ("invalid ELF header",
 * "file too short"); -1 when it cannot be opened. A FIFO, socket or device is opened O_PATH only,
 * never read: ld.so would stop there (block or fail), and the caller's ELF open reports it as not
 * a regular file. */
static int usable(const sc_ldresolver *r, const char *path)
{
    int fd = sc_root_open_file(r->root, path, NULL);
    if (fd == -SC_ENOTREG) {
        fd = sc_root_openat(r->root, path, O_PATH);
        return fd >= 0 ? fd : -1;
    }
    if (fd < 0)
        return -1;
    uint8_t cls = 0;
    uint16_t mach = 0;
    int rc = sc_elf_ident(fd, &cls, &mach);
    bool other = rc == 0 && r->elf_class != 0 && (cls != r->elf_class || mach != r->machine);
    if (other || (rc < 0 && rc != -ENOEXEC)) {
        close(fd);
        return -1;
    }
    return fd;
}

static bool hit_set(sc_ld_hit *hit, int fd, const char *path, sc_found_via via, const char *entry,
                    const char *source)
{
    hit->fd = fd;
    snprintf(hit->path, sizeof hit->path, "%s", path);
    hit->via = via;
    snprintf(hit->entry, sizeof hit->entry, "%s", entry);
    snprintf(hit->source, sizeof hit->source, "%s", source);
    return true;
}

/* A list's origin for the evidence of a hit: "RPATH of libx.so", "LD_LIBRARY_PATH". */
typedef struct {
    const char *what;
    const sc_ld_object *owner; /* NULL: what alone */
} list_source;

/* Looks for name in directory d: 1 found (hit filled), 0 not there, or -EDQUOT. */
static int search_dir(const sc_ldresolver *r, sc_ld_dir *d, const char *name, sc_found_via via,
                      list_source src, sc_ld_hit *hit)
{
    char path[PATH_MAX], source[PATH_MAX + 32];
    int may = sc_ld_search_may_hold(r->search, d, name), fd;
    if (may < 0)
        return may;
    if (!may || !sc_fmt(path, sizeof path, "%s/%s", d->path, name))
        return 0;
    if (!sc_ld_search_charge(r->search))
        return -EDQUOT;
    if ((fd = usable(r, path)) < 0) {
        sc_ld_search_missed(r->search, d);
        return 0;
    }
    if (src.owner)
        snprintf(source, sizeof source, "%s of %s", src.what,
                 src.owner->name ? src.owner->name : "?");
    else
        snprintf(source, sizeof source, "%s", src.what);
    return hit_set(hit, fd, path, via, d->path, source);
}

/* Searches each directory of list for name, each after its hardware-capability subdirectories
 * (none exists where the directory does not, and one found absent costs nothing again): 1 found
 * (hit filled), 0 not there, or -EDQUOT. */
static int search_list(const sc_ldresolver *r, const sc_ld_list *list, const char *name,
                       sc_found_via via, list_source src, sc_ld_hit *hit)
{
    for (int i = 0; list && i < list->count; i++) {
        sc_ld_dir *d = list->dirs[i], **subs;
        int n = sc_ld_search_subdirs(r->search, d, &subs), rc = 0;
        if (n > 0 && (rc = sc_ld_search_present(r->search, d)) < 0)
            return rc;
        for (int j = 0; rc > 0 && j < n; j++) {
            int found =
                subs[j]->state == SC_DIR_ABSENT ? 0 : search_dir(r, subs[j], name, via, src, hit);
            if (found != 0)
                return found;
        }
        if ((rc = search_dir(r, d, name, via, src, hit)) != 0)
            return rc;
    }
    return 0;
}

/* The object's DT_RPATH or DT_RUNPATH as a list: prepared once, or parsed now. */
static const sc_ld_list *list_of(const sc_ldresolver *r, const sc_ld_object *o, bool runpath)
{
    if (o->lists)
        return runpath ? o->lists->runpath : o->lists->rpath;
    char source[PATH_MAX + 32];
    snprintf(source, sizeof source, "%s of %s", runpath ? "RUNPATH" : "RPATH",
             o->name ? o->name : "?");
    return sc_ld_search_parse(r->search, runpath ? o->runpath : o->rpath, ":", o->origin, source);
}

/* DT_RPATH of the requester, of each loader up the chain, then of the main object. */
static int search_rpaths(const sc_ldresolver *r, const sc_ld_object *req, const char *name,
                         sc_ld_hit *hit)
{
    int steps = 0, rc;
    bool main_seen = false;
    for (const sc_ld_object *l = req; l && steps < 4096; l = l->loader, steps++) {
        main_seen |= (l == r->main);
        if (!l->rpath || l->runpath) /* DT_RUNPATH makes the loader ignore the DT_RPATH */
            continue;
        rc = search_list(r, list_of(r, l, false), name, SC_VIA_RPATH, (list_source){"RPATH", l},
                         hit);
        if (rc != 0)
            return rc;
    }
    const sc_ld_object *m = r->main;
    if (!main_seen && m && m->rpath && !m->runpath)
        return search_list(r, list_of(r, m, false), name, SC_VIA_RPATH, (list_source){"RPATH", m},
                           hit);
    return 0;
}

/* The cache's entry for name, as the target's loader picks it among the hardware-capability
 * subdirectories it searches. */
static const char *cache_lookup(const sc_ldresolver *r, const char *name)
{
    const sc_ld_target *t = r->target;
    const char *subdirs[SC_LD_MAX_SUBDIRS + 1];
    int n = 0;
    for (; n < t->subdir_count; n++)
        subdirs[n] = t->subdirs[n];
    subdirs[n] = NULL;
    return sc_ldcache_lookup_subdirs(r->cache, name, sc_ldcache_flags_for(r->elf_class, r->machine),
                                     t->glibc_minor >= 0 ? subdirs : NULL);
}

static int search_system(const sc_ldresolver *r, const char *name, sc_ld_hit *hit)
{
    if (r->cache) {
        const char *path = cache_lookup(r, name);
        if (path && !sc_ld_search_charge(r->search))
            return -EDQUOT;
        int fd = path ? usable(r, path) : -1;
        if (fd >= 0)
            return hit_set(hit, fd, path, SC_VIA_CACHE, "", "/etc/ld.so.cache");
    }
    int rc;
    if (!r->cache && r->conf_dirs &&
        (rc = search_list(r, sc_ld_search_fixed(r->search, r->conf_dirs, "/etc/ld.so.conf"), name,
                          SC_VIA_CONF, (list_source){"/etc/ld.so.conf", NULL}, hit)) != 0)
        return rc;
    const char *const *dirs = r->default_dirs ? r->default_dirs : r->target->default_dirs;
    return search_list(r, sc_ld_search_fixed(r->search, dirs, "the default directories"), name,
                       SC_VIA_DEFAULT, (list_source){"default directories", NULL}, hit);
}

/* The loader's search for name; 1 found, 0 not found, or -EDQUOT. */
static int search(const sc_ldresolver *r, const sc_ld_object *req, const char *name, sc_ld_hit *hit)
{
    int rc;
    if (sc_ld_search_budget(r->search)->spent)
        return -EDQUOT;
    if (strchr(name, '/')) {
        char path[PATH_MAX];
        if (!sc_ld_expand_for(r->target, name, strlen(name), req ? req->origin : NULL, path,
                              sizeof path))
            return 0;
        if (!sc_ld_search_charge(r->search))
            return -EDQUOT;
        int fd = usable(r, path);
        return fd >= 0 && hit_set(hit, fd, path, SC_VIA_DIRECT, "", "file name");
    }
    if (req && !req->runpath && (rc = search_rpaths(r, req, name, hit)) != 0)
        return rc;
    if (r->ld_library_path && *r->ld_library_path &&
        (rc = search_list(
             r, sc_ld_search_env(r->search, r->ld_library_path, r->main ? r->main->origin : NULL),
             name, SC_VIA_LD_LIBRARY_PATH, (list_source){"LD_LIBRARY_PATH", NULL}, hit)) != 0)
        return rc;
    if (req && req->runpath &&
        (rc = search_list(r, list_of(r, req, true), name, SC_VIA_RUNPATH,
                          (list_source){"RUNPATH", req}, hit)) != 0)
        return rc;
    if (req && (req->flags_1 & 0x800)) /* DF_1_NODEFLIB: no cache, no default directories */
        return 0;
    return search_system(r, name, hit);
}

int sc_ldresolve(const sc_ldresolver *r, const sc_ld_object *req, const char *name, sc_ld_hit *hit)
{
    hit->path[0] = hit->entry[0] = hit->source[0] = '\0'; /* not a memset: 12 KiB per lookup */
    hit->via = SC_VIA_NOT_FOUND;
    hit->fd = -1;
    sc_ldresolver with_search = *r;
    sc_ld_search *private = NULL;
    if (!r->search && !(with_search.search = private = sc_ld_search_new(r->root)))
        return -ENOMEM;
    with_search.target = sc_ld_search_target_for(with_search.search, r);
    int rc = search(&with_search, req, name, hit);
    if (rc < 0) {
        hit->via = SC_VIA_NOT_SEARCHED;
        sc_ld_search_gave_up(with_search.search, name);
    }
    sc_ld_search_free(private);
    return rc > 0 ? 0 : rc == 0 ? -ENOENT : rc;
}
