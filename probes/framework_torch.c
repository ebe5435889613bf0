/* framework.torch: PyTorch in the user's own interpreter. The passive part (which Python, torch's
 * version from its metadata) runs here, in the runner's process, so it survives an import that
 * crashes or hangs; the import runs in an isolated child with its own deadline (see
 * docs/probes.md). The steps are in src/torch_*.c; this file is the flow. */
#include <errno.h>
#include <stdlib.h>

#include "probes.h"
#include "sc_torch.h"

#define DEFAULT_TIMEOUT_S 60.0

/* The import's own deadline: the runner's deadline does not cover it (the probe is not isolated
 * by the runner). */
static double import_timeout_s(const sc_ctx *ctx)
{
    return ctx->opt->timeout_s > 0 ? ctx->opt->timeout_s : DEFAULT_TIMEOUT_S;
}

/* Called by the runner instead of run when the layers below failed: the snapshot still gets the
 * interpreter and torch's version from metadata. It reads files; only when the interpreter
 * cannot be known from them (a script wrapper) does it run it (importing nothing but os and
 * sysconfig). It loads nothing into this process. */
static void inventory(const sc_ctx *ctx, sc_result *res)
{
    sc_error err = {0};
    free(sc_torch_collect_passive(ctx, res, true, &err));
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    sc_error err = {0};
    sc_python_info *info = sc_torch_collect_passive(ctx, res, false, &err);
    if (!info) {
        if (!ctx->offline && err.code == -ENOMEM)
            sc_result_error(res, "out of memory");
        else if (!ctx->offline)
            sc_finding(res, "torch.python-not-found", SC_SEV_ERROR,
                       "pass the interpreter you use with --python PATH", "%s", err.message);
        return;
    }
    /* torch has needed Python 3 since 1.5; the probe code uses 3.6 features. */
    cJSON *child = NULL;
    if (info->version[0] < '3')
        sc_result_error(res, "%s is Python %s; the framework probe needs Python 3.6 or newer",
                        info->executable, info->version);
    else
        child = sc_torch_run_import(ctx, res, info, import_timeout_s(ctx));
    if (child)
        sc_torch_check_result(ctx, res, info, child);
    cJSON_Delete(child);
    free(info);
}

/* The warm interpreter of a parallel run: torch is imported from the run's first moment, and this
 * probe's import and framework.collective's ranks are forked from it (src/framework/python_warm.c).
 */
static void warm_up(const sc_ctx *ctx)
{
    sc_python_info *fast = malloc(sizeof *fast), *asked = malloc(sizeof *asked);
    sc_error err = {0};
    /* started at once from the interpreter's files (reading them takes no time, asking the
     * interpreter about 50 ms), then checked against its own answer, which the probes use */
    bool started = fast && sc_python_locate_static(ctx->root, ctx->opt->python, fast, &err) == 0;
    if (started) {
        sc_python_apply_subprocess_override(fast);
        started = sc_python_warm_start(fast) == 0;
    }
    bool located =
        asked && sc_python_locate(ctx->opt->python, ctx->opt->timeout_s, asked, &err) == 0;
    if (started && !(located && sc_python_warm_serves(asked))) {
        sc_python_warm_stop(true); /* another interpreter or mode than the probes' */
        started = false;
    }
    if (located && !started)
        sc_python_warm_start(asked);
    free(fast);
    free(asked);
}

const sc_probe sc_probe_framework_torch = {
    .id = "framework.torch",
    .layer = SC_LAYER_FRAMEWORK,
    .backend = SC_BACKEND_NONE,
    /* Not isolated by the runner: the import is isolated here, so that the passive facts (the
     * metadata version) stay in the snapshot when the import crashes or hangs. Active: offline the
     * runner skips it and records its inventory (the torch installations in the root). */
    .isolated = false,
    .active = true,
    .timeout_s = DEFAULT_TIMEOUT_S,
    /* It reads the runtime layer's facts only: its import starts while the libraries layer's
     * passive analyses run. */
    .needs = SC_NEEDS(SC_LAYER_DRIVER) | SC_NEEDS(SC_LAYER_RUNTIME),
    .prepare = sc_python_prepare, /* run beside others, it still asks the interpreter once */
    .summary =
        "PyTorch in the user's Python: build (HIP/CUDA/CPU), devices, round trip, loaded runtime",
    .run = run,
    .inventory = inventory,
    .warm_up = warm_up,
    .cool_down = sc_python_warm_stop,
};
