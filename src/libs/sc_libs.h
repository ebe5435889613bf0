/* The libraries analysis: resolve an ELF file's dependencies exactly like glibc's loader, reading
 * files only (never executing or loading them); check symbol versions and undefined symbols; find
 * libraries of one stack from two install roots; list GPU code (clang offload bundles, NVIDIA fat
 * binaries) and compare it with the target devices. Shared by `stackcheck libs`, the libraries
 * layer, and the framework layer's import-failure analysis. */
#ifndef SC_LIBS_H
#define SC_LIBS_H

#include <cjson/cJSON.h>

#include "sc_probe.h"
#include "sc_sysroot.h"
#include "sc_types.h"

/* The parsed ELF files of a run, shared by its analyses (keyed by what was read, the root and the
 * real path; bounded): the files of one package share most of their dependency tree, which is then
 * read and indexed once. Not thread-safe; the files must not change while it lives. */
typedef struct sc_libs_cache sc_libs_cache;
/* Returns an empty cache, or NULL when out of memory. */
sc_libs_cache *sc_libs_cache_new(void);
/* Unmaps and frees every file of the cache, then the cache (NULL is allowed). */
void sc_libs_cache_free(sc_libs_cache *cache);

typedef struct {
    const char *const *archs; /* target architectures ("gfx90a:sramecc+:xnack-", "sm_90") */
    int arch_count;
    const char *ld_library_path; /* as the loader would see it; NULL for none */
    bool no_symbol_check;        /* skip the undefined-symbol check (the costliest part) */
    sc_libs_cache *cache;        /* shared parsed files; NULL: private to the call */
} sc_libs_config;

/* Analyses one ELF file under root. *out receives the file's JSON object
 * {path, realpath, soname, libraries[], offload{format, targets[]}, findings[]}; the caller owns
 * it. Returns 0, or a negative errno (unreadable, not ELF) with err filled and *out NULL. */
int sc_libs_analyze(const sc_root *root, const char *path, const sc_libs_config *cfg, cJSON **out,
                    sc_error *err);
/* sc_libs_analyze in an isolated child with a deadline of timeout_s seconds (cfg->cache must be
 * NULL: nothing is shared with the child). A timeout or crash is an error (-ETIMEDOUT, -ECHILD)
 * whose message says so. */
int sc_libs_analyze_isolated(const sc_root *root, const char *path, const sc_libs_config *cfg,
                             double timeout_s, cJSON **out, sc_error *err);
/* The worst severity among the findings of a file object from sc_libs_analyze: -1 when none,
 * else SC_SEV_INFO, SC_SEV_WARN or SC_SEV_ERROR. */
int sc_libs_worst(const cJSON *file);

/* ---- for the libraries probes ---- */
#define SC_LIBS_MAX_ARCHS 64
/* The libraries probes run isolated, with this deadline unless --timeout gives one: the analysis
 * reads outside files in bulk (a hung file system, a damaged file, a demangler on a hostile name
 * must cost one probe, not the run), and its own budgets keep it far below. */
#define SC_LIBS_TIMEOUT_S 300
/* The target architectures of a run: --arch, else, for each backend whose descriptor has an
 * arch_prefix, its runtime probe's devices (runtime.hip devices[].arch, runtime.cuda's sm_XY),
 * else its driver probe's (driver.amd devices[].gfx_target): the first of the descriptor's
 * arch_facts that starts with the prefix. Fills archs (pointers into the options or the snapshot)
 * and returns how many. */
int sc_libs_run_archs(const sc_ctx *ctx, const char **archs, int max);
/* Analyses path for a probe: appends the file object to files (an array) and adds its findings to
 * res. An unreadable or non-ELF file becomes the finding libs.unreadable. */
void sc_libs_probe_file(const sc_ctx *ctx, sc_result *res, const char *path, cJSON *files);
/* sc_libs_probe_file with a cache shared by the probe's files (NULL: none). */
void sc_libs_probe_file_cached(const sc_ctx *ctx, sc_result *res, const char *path, cJSON *files,
                               sc_libs_cache *cache);

#endif
