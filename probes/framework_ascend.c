/* framework.ascend: the Ascend parts of the framework layer, passive: torch, torch_npu and CANN as
 * a triple (versions from framework.torch, torch_npu's metadata in the same site directories, and
 * driver.ascend's toolkit), and the operator cache and kernel_meta directories CANN would use for
 * this user. The rules are in src/backends/ascend/ascend_torch_npu.c and ascend_cache_dirs.c. */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "probes.h"
#include "sc_ascend_ops.h"
#include "sc_json.h"
#include "sc_python.h"

/* torch_npu's version from its metadata in the site directories framework.torch listed. */
static bool torch_npu_version(const sc_ctx *ctx, const cJSON *python, char *version, size_t size)
{
    char meta[PATH_MAX];
    const cJSON *dir;
    cJSON_ArrayForEach (dir, sc_json_member(python, "site_packages"))
        if (cJSON_GetStringValue(dir) &&
            sc_python_dist_version(ctx->root, cJSON_GetStringValue(dir), "torch_npu", version, size,
                                   meta, sizeof meta) == 0)
            return true;
    return false;
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    const cJSON *ft = sc_ctx_facts(ctx, "framework.torch");
    const char *torch = sc_json_str(sc_json_member(ft, "torch"), "version");
    if (!torch)
        torch = sc_json_str(sc_json_member(ft, "metadata"), "version");
    char npu[64];
    bool have_npu = torch_npu_version(ctx, sc_json_member(ft, "python"), npu, sizeof npu);
    const char *cann =
        sc_json_str(sc_json_member(sc_ctx_facts(ctx, "driver.ascend"), "toolkit"), "version");
    sc_ascend_check_triple(res, torch, have_npu ? npu : NULL, cann);
    char cwd[PATH_MAX];
    sc_ascend_dirs_in in = {.cache_env = getenv("ASCEND_CACHE_PATH"),
                            .work_env = getenv("ASCEND_WORK_PATH"),
                            .home = getenv("HOME"),
                            .cwd = ctx->offline ? NULL : getcwd(cwd, sizeof cwd),
                            .uid = geteuid(),
                            .gid = getegid()};
    sc_ascend_check_cache_dirs(ctx->root, res, &in);
}

const sc_probe sc_probe_framework_ascend = {
    .id = "framework.ascend",
    .layer = SC_LAYER_FRAMEWORK,
    /* every layer below, and framework.torch before it in its own layer */
    .needs = SC_NEEDS(SC_LAYER_DRIVER) | SC_NEEDS(SC_LAYER_RUNTIME) | SC_NEEDS(SC_LAYER_LIBRARIES) |
             SC_NEEDS(SC_LAYER_FRAMEWORK),
    .backend = SC_BACKEND_ASCEND,
    .isolated = false,
    .active = false,
    .timeout_s = 10.0,
    .summary = "torch, torch_npu and CANN as a triple; the operator cache and kernel_meta "
               "directories: owner, mode, writable, shared",
    .run = run,
};
