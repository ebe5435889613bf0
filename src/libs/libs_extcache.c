/* libraries.ext_cache's run: the caches, their newest entries examined against the current
 * environment (at most SC_EXTCACHE_EXAMINE_MAX a run), what was left out said by
 * libs.extension-cache-budget. */
#include <stdlib.h>
#include <string.h>

#include "libs_extcache_internal.h"

static int newest_first(const void *a, const void *b)
{
    double x = ((const extcache_entry *)a)->mtime, y = ((const extcache_entry *)b)->mtime;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void caches_facts(const extcache_scan *scan, cJSON *facts)
{
    cJSON *arr = cJSON_AddArrayToObject(facts, "caches");
    for (int i = 0; arr && i < scan->cache_count; i++) {
        const extcache_dir *c = &scan->caches[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "path", c->path);
        cJSON_AddStringToObject(o, "kind", c->kind);
        sc_fact_str(o, "via", c->via[0] ? c->via : NULL, "not reached through an .egg-link");
        sc_fact_str(o, "python_tag", c->folder_py[0] ? c->folder_py : NULL,
                    "not a default-cache folder");
        sc_fact_str(o, "build_tag", c->folder_tag[0] ? c->folder_tag : NULL,
                    "not a default-cache folder");
        cJSON_AddBoolToObject(o, "used", c->used);
        cJSON_AddNumberToObject(o, "entries", (double)c->seen);
        cJSON_AddBoolToObject(o, "truncated", c->truncated);
    }
}

static void budget(sc_result *res, const extcache_scan *scan, size_t examined)
{
    long truncated = 0;
    for (int i = 0; i < scan->cache_count; i++)
        truncated += scan->caches[i].truncated;
    if (examined == scan->entry_count && !truncated && !scan->dropped)
        return;
    sc_finding(res, "libs.extension-cache-budget", SC_SEV_INFO,
               "none needed; remove old entries of the cache if it keeps growing",
               "examined the %zu newest of %zu cache entries read%s%s", examined, scan->entry_count,
               truncated ? "; a cache directory held more than the entries read" : "",
               scan->dropped ? "; more entries than kept for sorting" : "");
}

void sc_extcache_run(const sc_ctx *ctx, sc_result *res)
{
    extcache_env *env = calloc(1, sizeof *env);
    extcache_scan *scan = calloc(1, sizeof *scan);
    sc_libs_cache *parsed = sc_libs_cache_new();
    if (!env || !scan || !parsed) {
        sc_result_skip(res, false, "out of memory");
        goto out;
    }
    sc_extcache_find(ctx, env, scan);
    if (scan->cache_count == 0) {
        sc_result_skip(res, true,
                       "no extension cache (TORCH_EXTENSIONS_DIR, "
                       "~/.cache/torch_extensions, build/ or .egg-link of --ext)");
        goto out;
    }
    /* the environment is needed (a Python run) only when a cache exists; then which default
     * folders it uses is known */
    sc_extcache_env(ctx, env, res->facts);
    scan->cache_count = 0;
    sc_extcache_find(ctx, env, scan);
    sc_extcache_read_entries(ctx, scan);
    caches_facts(scan, res->facts);
    qsort(scan->entries, scan->entry_count, sizeof *scan->entries, newest_first);
    size_t n =
        scan->entry_count < SC_EXTCACHE_EXAMINE_MAX ? scan->entry_count : SC_EXTCACHE_EXAMINE_MAX;
    cJSON *entries = cJSON_AddArrayToObject(res->facts, "entries");
    for (size_t i = 0; entries && i < n; i++)
        sc_extcache_examine(ctx, env, &scan->caches[scan->entries[i].cache], &scan->entries[i],
                            parsed, res, entries);
    budget(res, scan, n);
out:
    if (scan)
        sc_extcache_scan_free(scan);
    sc_libs_cache_free(parsed);
    free(scan);
    free(env);
}
