/* The part of the libraries probes they share: the target devices of the run, and one file
 * analysed into the probe's result. */
#include <stdlib.h>
#include <string.h>

#include "libs_internal.h"
#include "sc_facts.h"
#include "sc_json.h"

static int archs_from(const cJSON *facts, const char *key, const char **archs, int n, int max)
{
    const cJSON *d;
    cJSON_ArrayForEach (d, sc_json_member(facts, SC_FACT_DEVICES)) {
        const char *a = sc_json_str(d, key);
        bool dup = false;
        for (int i = 0; a && i < n; i++)
            dup |= strcmp(archs[i], a) == 0;
        if (a && !dup && n < max)
            archs[n++] = a;
    }
    return n;
}

int sc_libs_run_archs(const sc_ctx *ctx, const char **archs, int max)
{
    int n = 0;
    for (int i = 0; i < ctx->opt->archs.count && n < max; i++)
        archs[n++] = ctx->opt->archs.items[i];
    if (n == 0)
        n = archs_from(sc_ctx_facts(ctx, SC_PROBE_RUNTIME_HIP), SC_FACT_ARCH, archs, n, max);
    if (n == 0)
        n = archs_from(sc_ctx_facts(ctx, SC_PROBE_DRIVER_AMD), SC_FACT_GFX_TARGET, archs, n, max);
    return n;
}

void sc_libs_probe_file(const sc_ctx *ctx, sc_result *res, const char *path, cJSON *files)
{
    sc_libs_probe_file_cached(ctx, res, path, files, NULL);
}

void sc_libs_probe_file_cached(const sc_ctx *ctx, sc_result *res, const char *path, cJSON *files,
                               sc_libs_cache *cache)
{
    const char *archs[SC_LIBS_MAX_ARCHS];
    sc_libs_config cfg = {.archs = archs,
                          .arch_count = sc_libs_run_archs(ctx, archs, SC_LIBS_MAX_ARCHS),
                          .ld_library_path = ctx->offline ? NULL : getenv("LD_LIBRARY_PATH"),
                          .cache = cache};
    cJSON *file = NULL;
    sc_error err = {0};
    if (sc_libs_analyze(ctx->root, path, &cfg, &file, &err) < 0) {
        sc_finding(res, "libs.unreadable", SC_SEV_ERROR,
                   "check that the file exists, is readable by this user and is a complete ELF "
                   "shared object (reinstall it if truncated)",
                   "%s", err.message);
        return;
    }
    cJSON *f;
    cJSON_ArrayForEach (f, sc_json_member(file, "findings"))
        cJSON_AddItemToArray(res->findings, cJSON_Duplicate(f, true));
    cJSON_AddItemToArray(files, file);
}
