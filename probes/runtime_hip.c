/* runtime.hip: which HIP runtime (ROCm or DTK) and which install, and does it see and drive the
 * devices. The inventory is passive and always runs, offline too; the active part (load, init,
 * enumerate, allocate, copy, compile and launch a kernel) runs only live, in the isolated child. */
#include <stdlib.h>

#include "probes.h"
#include "sc_hip_run.h"
#include "sc_step.h"

/* Starts a run: the inventory is always the first step. Returns false when out of memory. */
static bool start_run(sc_hip_run *r, const sc_ctx *ctx, sc_result *res)
{
    *r = (sc_hip_run){.ctx = ctx, .res = res, .count = -1};
    sc_buf_init(&r->bad);
    r->inv = calloc(1, sizeof *r->inv);
    if (!r->inv) {
        sc_result_error(res, "out of memory");
        return false;
    }
    sc_hip_env env = {getenv("LD_LIBRARY_PATH"), getenv("ROCM_PATH"), getenv("HIP_PATH")};
    sc_hip_inventory_facts(r, &env);
    return true;
}

static void free_run(sc_hip_run *r)
{
    sc_hip_kernel_free(r);
    sc_buf_free(&r->bad);
    /* the runtimes stay mapped: unloading a GPU runtime at exit can hang or crash, and the child
     * exits right after */
    free(r->inv);
}

static void run_active(sc_hip_run *r)
{
    r->runtime = cJSON_AddObjectToObject(r->res->facts, "runtime");
    r->timing = cJSON_AddObjectToObject(r->res->facts, "timing");
    sc_step("loading the runtime");
    if (!r->runtime || !r->timing || !sc_hip_load_runtime(r) || !sc_hip_bind_runtime(r))
        return;
    sc_step("initialising");
    r->count = sc_hip_init_and_count(r);
    r->devices = cJSON_AddArrayToObject(r->res->facts, "devices");
    if (r->count > 0 && r->devices) {
        sc_hip_read_devices(r);
        sc_hip_check_against_driver(r);
        sc_hip_memory_baselines(r);
        sc_step("compiling and running the kernel");
        sc_hip_work_on_devices(r);
    }
    sc_hip_check_arch_override(r);
}

/* The passive part alone: what the runner records when the probe is gated or offline, or when
 * the isolated child did not finish. */
static void inventory(const sc_ctx *ctx, sc_result *res)
{
    sc_hip_run r;
    if (!start_run(&r, ctx, res))
        return;
    sc_fact_null(res->facts, "runtime", "the runtime was not loaded (%s)",
                 ctx->offline ? "offline (--sysroot)"
                              : "the active part did not run or did not finish");
    sc_fact_null(res->facts, "devices", "the runtime was not loaded");
    sc_hip_report_not_found(&r, false);
    free_run(&r);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    sc_hip_run r;
    if (!start_run(&r, ctx, res))
        return;
    run_active(&r);
    sc_hip_report_not_found(&r, r.lib.handle && !ctx->opt->hip_library);
    sc_hip_report_bad_answers(&r);
    free_run(&r);
}

const sc_probe sc_probe_runtime_hip = {
    .id = "runtime.hip",
    .layer = SC_LAYER_RUNTIME,
    .backend = SC_BACKEND_AMD,
    .isolated = true,
    .active = true,
    .timeout_s = 60,
    .summary = "HIP runtime (ROCm or DTK): installs, which library loads, devices, memory, a "
               "compiled kernel's round trip",
    .run = run,
    .inventory = inventory,
};
