/* runtime.cuda: which CUDA toolkits and which driver library (libcuda.so.1), and does the CUDA
 * driver API see and drive the devices. The inventory is passive and always runs, offline too; the
 * active part (load, init, enumerate, memory, copy, compile with nvrtc and launch) runs only live,
 * in the isolated child. */
#include <stdlib.h>

#include "probes.h"
#include "sc_cuda_run.h"
#include "sc_step.h"

/* Starts a run: the inventory is always the first step. Returns false when out of memory. */
static bool start_run(sc_cuda_run *r, const sc_ctx *ctx, sc_result *res)
{
    *r = (sc_cuda_run){.ctx = ctx, .res = res, .count = -1};
    for (int i = 0; i < SC_CUDA_WORK_DEVICES; i++)
        r->handles[i] = -1;
    sc_buf_init(&r->bad);
    r->inv = calloc(1, sizeof *r->inv);
    if (!r->inv) {
        sc_result_error(res, "out of memory");
        return false;
    }
    sc_cuda_env env = {getenv("LD_LIBRARY_PATH"), getenv("CUDA_HOME"), getenv("CUDA_PATH")};
    sc_cuda_inventory_facts(r, &env);
    return true;
}

static void free_run(sc_cuda_run *r)
{
    sc_buf_free(&r->bad);
    /* the libraries stay mapped: unloading a GPU driver library can hang, and the child exits */
    free(r->inv);
}

static void run_active(sc_cuda_run *r)
{
    r->driver = cJSON_AddObjectToObject(r->res->facts, "driver_api");
    sc_step("loading the driver API");
    if (!r->driver || !sc_cuda_load_driver(r) || !sc_cuda_bind_driver(r))
        return;
    sc_step("initialising");
    r->count = sc_cuda_init_and_count(r);
    r->devices = cJSON_AddArrayToObject(r->res->facts, "devices");
    if (r->count <= 0 || !r->devices)
        return;
    sc_cuda_read_devices(r);
    sc_cuda_check_against_driver(r);
    sc_cuda_memory_baselines(r);
    sc_step("running the kernel");
    sc_cuda_work_on_devices(r);
}

/* The passive part alone: what the runner records when the probe is gated or offline, or when
 * the isolated child did not finish. */
static void inventory(const sc_ctx *ctx, sc_result *res)
{
    sc_cuda_run r;
    if (!start_run(&r, ctx, res))
        return;
    sc_cuda_check_picked_version(&r);
    sc_fact_null(res->facts, "driver_api", "libcuda was not loaded (%s)",
                 ctx->offline ? "offline (--sysroot)"
                              : "the active part did not run or did not finish");
    sc_fact_null(res->facts, "devices", "libcuda was not loaded");
    free_run(&r);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    sc_cuda_run r;
    if (!start_run(&r, ctx, res))
        return;
    run_active(&r);
    sc_cuda_report_bad_answers(&r);
    free_run(&r);
}

const sc_probe sc_probe_runtime_cuda = {
    .id = "runtime.cuda",
    .layer = SC_LAYER_RUNTIME,
    .backend = SC_BACKEND_NVIDIA,
    .isolated = true,
    .active = true,
    .timeout_s = 60,
    .summary = "CUDA driver API: toolkits, which libcuda loads, devices, memory, a copy and an "
               "nvrtc-compiled kernel's round trip",
    .run = run,
    .inventory = inventory,
};
