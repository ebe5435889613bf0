/* framework.collective: torch.distributed between one process per visible device
 * (--collective-ranks to choose), on the backend torch's build implies: an all-reduce and a
 * broadcast of known values, verified and timed, and the collective library each rank loaded. The
 * launcher and the ranks are probes/framework_collective.py, run in the framework layer's
 * interpreter. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes.h"
#include "sc_collective.h"
#include "sc_json.h"
#include "sc_python.h"
#include "sc_redact.h"
#include "sc_scratch.h"
#include "sc_util.h"

#define DEFAULT_TIMEOUT_S 180.0
#define COLLECTIVE_DEADLINE_S 30.0 /* after the rendezvous; collectives of a few MiB take ms */

extern const char sc_py_framework_collective[];

static int acl_devices(const sc_ctx *ctx)
{
    return cJSON_GetArraySize(sc_json_member(sc_ctx_facts(ctx, "runtime.acl"), "devices"));
}

/* One rank per device torch counted (framework.torch), else per device the NPU runtime listed,
 * at least one; --collective-ranks overrides. 0 when framework.torch is not final yet (the probe
 * started beside it): rank 0 then counts by the same rule (framework_collective.py). */
static int world_size(const sc_ctx *ctx)
{
    if (ctx->opt->collective_ranks > 0)
        return ctx->opt->collective_ranks;
    if (!sc_ctx_outcome(ctx, "framework.torch"))
        return 0;
    const cJSON *torch = sc_json_member(sc_ctx_facts(ctx, "framework.torch"), "torch");
    int n = (int)sc_json_num(torch, "device_count", 0);
    if (n < 1)
        n = acl_devices(ctx);
    return n > 0 ? n : 1;
}

/* The launcher's configuration: ranks, deadlines, where the ranks' code and files are. */
static char *config_text(const sc_ctx *ctx, const sc_python_info *info, const char *dir,
                         const char *self)
{
    double probe_s = ctx->opt->timeout_s > 0 ? ctx->opt->timeout_s : DEFAULT_TIMEOUT_S;
    double deadline =
        probe_s * 0.25 < COLLECTIVE_DEADLINE_S ? probe_s * 0.25 : COLLECTIVE_DEADLINE_S;
    cJSON *cfg = cJSON_CreateObject();
    int world = world_size(ctx);
    if (world > 0)
        cJSON_AddNumberToObject(cfg, "world", world);
    else
        cJSON_AddNullToObject(cfg, "world");
    cJSON_AddNumberToObject(cfg, "acl_devices", acl_devices(ctx));
    cJSON_AddNumberToObject(cfg, "deadline_s", deadline);
    cJSON_AddNumberToObject(cfg, "startup_s", probe_s * 0.6);
    cJSON_AddStringToObject(cfg, "executable", info->executable);
    cJSON_AddStringToObject(cfg, "dir", dir);
    cJSON_AddStringToObject(cfg, "self", self);
    char *text = cJSON_PrintUnformatted(cfg);
    cJSON_Delete(cfg);
    return text;
}

/* Runs the launcher as a subprocess of the interpreter (the ranks are started with its
 * sys.executable's equal, info->executable); returns its result or NULL with err set. */
static cJSON *launch(const sc_ctx *ctx, sc_python_info *info, const char *dir, sc_error *err)
{
    char self[PATH_MAX + 32], config[PATH_MAX + 32];
    if (sc_python_write_file(dir, "ranks.py", sc_py_framework_collective, self, sizeof self, err) <
        0)
        return NULL;
    char *cfg = config_text(ctx, info, dir, self);
    if (!cfg) {
        sc_error_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    int rc = sc_python_write_file(dir, "config.json", cfg, config, sizeof config, err);
    free(cfg);
    if (rc < 0)
        return NULL;
    const char *argv[] = {"stackcheck-collective", config, NULL};
    cJSON *result = NULL;
    const char *mode = NULL;
    info->libpython[0] = '\0'; /* a subprocess: the ranks are its siblings, not this process's */
    /* in a parallel run, the launcher and its ranks are forked from the warm interpreter, which
     * has torch imported already; first, as it still forks its ranks */
    if (sc_python_run_warm(info, dir, sc_py_framework_collective, argv,
                           SC_WARM_ANY_MODE | SC_WARM_FIRST, &result, &mode, err) < 0) {
        cJSON_Delete(result);
        return NULL;
    }
    return result;
}

/* At its turn: framework.torch imported torch (when it is in the run). */
static bool torch_imported(const sc_ctx *ctx, char *why, size_t size)
{
    if (sc_ctx_status(ctx, "framework.torch") != SC_STATUS_SKIP &&
        sc_json_str(sc_json_member(sc_ctx_facts(ctx, "framework.torch"), "torch"), "version"))
        return true;
    snprintf(why, size, "torch could not be imported (framework.torch)");
    return false;
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    sc_python_info *info = calloc(1, sizeof *info);
    char dir[PATH_MAX] = "";
    sc_error err = {0};
    cJSON *result = NULL;
    if (!info)
        sc_result_error(res, "out of memory");
    else if (sc_python_locate(ctx->opt->python, ctx->opt->timeout_s, info, &err) < 0 ||
             sc_python_workdir(dir, sizeof dir, &err) < 0 ||
             !(result = launch(ctx, info, dir, &err)))
        sc_result_error(res, "cannot run the collective check: %s", err.message);
    else
        sc_collective_check(ctx, res, result);
    if (dir[0]) /* everything the launcher and the ranks left: the directory is this probe's */
        sc_remove_tree(dir);
    cJSON_Delete(result);
    free(info);
    sc_redact_json(res->facts);
}

const sc_probe sc_probe_framework_collective = {
    .id = "framework.collective",
    .layer = SC_LAYER_FRAMEWORK,
    /* every layer below; framework.torch's facts only at its turn (turn_gate) or, when final at
     * its start, for the world size: it starts beside framework.torch */
    .needs = SC_NEEDS(SC_LAYER_DRIVER) | SC_NEEDS(SC_LAYER_RUNTIME) | SC_NEEDS(SC_LAYER_LIBRARIES),
    .turn_gate = torch_imported,
    .backend = SC_BACKEND_NONE,
    .isolated = true,
    .active = true,
    .timeout_s = DEFAULT_TIMEOUT_S,
    .summary = "torch.distributed: all-reduce and broadcast between one process per device, "
               "verified and timed, and the collective library loaded",
    .run = run,
};
