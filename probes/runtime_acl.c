/* runtime.acl: which CANN toolkit and which libascendcl.so, and does ACL see and drive the NPUs.
 * The inventory is passive and always runs, offline too; the active part (load, aclInit, count,
 * per device SetDevice, SoC name, HBM, a copy round trip) runs only live, in the isolated child. */
#include <stdlib.h>

#include "probes.h"
#include "sc_acl_run.h"
#include "sc_step.h"

static void start_run(sc_acl_run *r, const sc_ctx *ctx, sc_result *res)
{
    *r = (sc_acl_run){.ctx = ctx, .res = res, .count = -1};
    sc_buf_init(&r->bad);
    sc_acl_inventory_facts(r, getenv("LD_LIBRARY_PATH"));
}

static void run_active(sc_acl_run *r)
{
    r->api = cJSON_AddObjectToObject(r->res->facts, "acl");
    sc_step("loading the runtime");
    if (!r->api || !sc_acl_load(r))
        return;
    sc_step("initialising");
    r->count = sc_acl_init_and_count(r);
    r->devices = cJSON_AddArrayToObject(r->res->facts, "devices");
    if (r->count > 0 && r->devices) {
        sc_step("running work on the devices");
        sc_acl_work_on_devices(r);
    }
    if (r->inited)
        r->fns.finalize();
}

/* The passive part alone: gated, offline, or after the child crashed or timed out. */
static void inventory(const sc_ctx *ctx, sc_result *res)
{
    sc_acl_run r;
    start_run(&r, ctx, res);
    sc_fact_null(res->facts, "acl", "libascendcl was not loaded (%s)",
                 ctx->offline ? "offline (--sysroot)"
                              : "the active part did not run or did not finish");
    sc_fact_null(res->facts, "devices", "libascendcl was not loaded");
    sc_buf_free(&r.bad);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    sc_acl_run r;
    start_run(&r, ctx, res);
    run_active(&r);
    sc_acl_report_bad_answers(&r);
    /* the library stays mapped: unloading a device runtime can hang, and the child exits */
    sc_buf_free(&r.bad);
}

const sc_probe sc_probe_runtime_acl = {
    .id = "runtime.acl",
    .layer = SC_LAYER_RUNTIME,
    .backend = SC_BACKEND_ASCEND,
    .isolated = true,
    .active = true,
    .timeout_s = 60,
    .summary = "Ascend ACL runtime: CANN toolkits, which libascendcl loads, aclInit, devices, "
               "SoC names, HBM, a copy round trip (no kernel)",
    .run = run,
    .inventory = inventory,
};
