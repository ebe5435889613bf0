/* The part of the libraries probes they share: the target devices of the run, and one file
 * analysed into the probe's result. */
#include <stdlib.h>
#include <string.h>

#include "libs_internal.h"
#include "sc_backend.h"
#include "sc_facts.h"
#include "sc_json.h"
#include "sc_util.h"

/* The first of desc's arch facts of device d that names a GPU code target (starts with its
 * arch_prefix), or NULL. */
static const char *device_arch(const sc_backend_desc *desc, const cJSON *d)
{
    for (const char *const *k = desc->arch_facts; k && *k; k++) {
        const char *a = sc_json_str(d, *k);
        if (a && sc_starts_with(a, desc->arch_prefix))
            return a;
    }
    return NULL;
}

/* Adds the archs of probe_id's devices to archs[n..max), without repeats; returns the new n. */
static int archs_from(const sc_ctx *ctx, const sc_backend_desc *desc, const char *probe_id,
                      const char **archs, int n, int max)
{
    const cJSON *d;
    cJSON_ArrayForEach (d, sc_json_member(sc_ctx_facts(ctx, probe_id), SC_FACT_DEVICES)) {
        const char *a = device_arch(desc, d);
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
    if (n > 0)
        return n;
    /* each backend whose GPU code is checked: its runtime's devices, else its driver's */
    for (const sc_backend_desc *const *b = sc_backends; *b; b++) {
        if (!(*b)->arch_prefix)
            continue;
        int before = n;
        n = archs_from(ctx, *b, (*b)->runtime_probe, archs, n, max);
        if (n == before)
            n = archs_from(ctx, *b, (*b)->driver_probe, archs, n, max);
    }
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
