/* libraries.hip: the dependency tree, ABI and install-root checks of the HIP runtime library that
 * runtime.hip found (the one it loaded, else the one the loader would pick). Passive: reads files
 * only, so it runs offline (--sysroot) too. */
#include <string.h>

#include "probes.h"
#include "sc_backend.h"
#include "sc_facts.h"
#include "sc_json.h"
#include "sc_libs.h"

/* The real path of the HIP runtime in runtime.hip's facts (the one it loaded, else the loader's
 * pick: the AMD descriptor's runtime_library_facts), or NULL. */
static const char *runtime_path(const sc_ctx *ctx)
{
    const sc_backend_desc *amd = sc_backend_get(SC_BACKEND_AMD);
    const cJSON *facts = sc_ctx_facts(ctx, amd->runtime_probe);
    for (const char *const *k = amd->runtime_library_facts; k && *k; k++) {
        const char *p = sc_json_str(sc_json_member(facts, *k), SC_FACT_REALPATH);
        if (p && *p)
            return p;
    }
    return NULL;
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    const char *path = runtime_path(ctx);
    if (!path) {
        sc_result_skip(res, true, "runtime.hip found no HIP runtime library");
        return;
    }
    cJSON_AddStringToObject(res->facts, "library", path);
    const char *archs[SC_LIBS_MAX_ARCHS];
    int n = sc_libs_run_archs(ctx, archs, SC_LIBS_MAX_ARCHS);
    cJSON *a = cJSON_AddArrayToObject(res->facts, "target_archs");
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(archs[i]));
    sc_libs_probe_file(ctx, res, path, cJSON_AddArrayToObject(res->facts, "files"));
}

const sc_probe sc_probe_libraries_hip = {
    .id = "libraries.hip",
    .layer = SC_LAYER_LIBRARIES,
    .backend = SC_BACKEND_AMD,
    .isolated = true,
    .timeout_s = SC_LIBS_TIMEOUT_S,
    .summary = "the HIP runtime library's dependencies, symbol versions and install roots",
    .run = run,
};
