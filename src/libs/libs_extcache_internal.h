/* What the files of the extension-cache check share: the current environment an entry is compared
 * with, the caches found and their entries. Private to src/libs/libs_extcache*.c. */
#ifndef LIBS_EXTCACHE_INTERNAL_H
#define LIBS_EXTCACHE_INTERNAL_H

#include "sc_backend.h"
#include "sc_extcache.h"
#include "sc_json.h"
#include "sc_libs.h"
#include "sc_roots.h"
#include "sc_util.h"

#define MAX_CACHES 32    /* cache directories looked at (default cache folders included) */
#define MAX_ENTRIES 4096 /* entries kept for choosing the newest; beyond, only counted */
#define MAX_BACKENDS 8

/* The environment a cached build must match: this Python, this torch, and per backend the
 * compiler extensions now build with and the runtime layer's library's install. */
typedef struct {
    char python[16];                /* "3.11"; "" unknown (offline) */
    char python_tag[16];            /* "311", "313t" */
    char torch_dir[PATH_MAX];       /* real path of libraries.torch's torch_dir; "" unknown */
    char torch_version[128];        /* from its metadata */
    char torch_tag[32];             /* the cache folder's build part: "cu121", "cpu"; "" unknown */
    char ld_library_path[PATH_MAX]; /* torch/lib: where its libc10 and libtorch are */
    struct {
        const sc_backend_desc *desc;
        const char *compiler;      /* the compiler extensions build with now, or NULL */
        const char *compiler_root; /* its install root */
        sc_install_root runtime;   /* the runtime layer's library's install; kind other: none */
        char runtime_file[PATH_MAX];
    } backends[MAX_BACKENDS];
    int backend_count;
} extcache_env;

typedef struct {
    char path[PATH_MAX];
    const char *kind;   /* "TORCH_EXTENSIONS_DIR", "default", "build", "egg-link" */
    char via[PATH_MAX]; /* the .egg-link file, for kind egg-link */
    bool per_entry;     /* one entry per subdirectory (torch's caches), else the directory is one */
    char folder_py[16]; /* the default cache's folder: its Python and build tag */
    char folder_tag[32];
    bool used;      /* the current environment loads from it */
    long seen;      /* entries read */
    bool truncated; /* more than SC_EXTCACHE_READ_MAX */
} extcache_dir;

typedef struct {
    char *dir; /* the directory to delete */
    double mtime;
    int cache; /* index into the caches */
} extcache_entry;

typedef struct {
    extcache_dir caches[MAX_CACHES];
    int cache_count;
    extcache_entry *entries;
    size_t entry_count, entry_cap;
    long dropped; /* entries beyond MAX_ENTRIES */
} extcache_scan;

/* libs_extcache_env.c: the current environment from the interpreter and the earlier probes;
 * written to facts.environment. */
void sc_extcache_env(const sc_ctx *ctx, extcache_env *env, cJSON *facts);

/* libs_extcache_scan.c: the caches (facts.caches) and the entries of those the current
 * environment uses. */
void sc_extcache_find(const sc_ctx *ctx, const extcache_env *env, extcache_scan *scan);
void sc_extcache_read_entries(const sc_ctx *ctx, extcache_scan *scan);
void sc_extcache_scan_free(extcache_scan *scan);

/* libs_extcache_check.c: one entry's files and build file against env; appends its object to out
 * and reports libs.stale-extension into res. */
void sc_extcache_examine(const sc_ctx *ctx, const extcache_env *env, const extcache_dir *cache,
                         const extcache_entry *entry, sc_libs_cache *parsed, sc_result *res,
                         cJSON *out);

#endif
