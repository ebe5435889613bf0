/* runtime.cuda's cross-checks: the driver API's devices against what driver.nvidia saw (count, PCI
 * addresses) and CUDA_VISIBLE_DEVICES, which hides devices. A disagreement names both sides, so the
 * user sees which layer is wrong. */
#include <stdlib.h>

#include "sc_accel.h"
#include "sc_backend.h"
#include "sc_cuda_run.h"

const cJSON *sc_cuda_driver_devices(const sc_cuda_run *r)
{
    return sc_accel_driver_devices(r->ctx, sc_backend_get(SC_BACKEND_NVIDIA)->driver_probe);
}

const char *sc_cuda_module_version(const sc_cuda_run *r)
{
    return sc_json_str(sc_ctx_facts(r->ctx, sc_backend_get(SC_BACKEND_NVIDIA)->driver_probe),
                       SC_FACT_DRIVER_VERSION);
}

/* The NVIDIA descriptor's visibility variables (CUDA_VISIBLE_DEVICES="...", scrubbed) in buf;
 * false when none is set. */
static bool visibility_var(char *buf, size_t size)
{
    return sc_accel_visibility_vars(getenv, sc_backend_get(SC_BACKEND_NVIDIA)->visibility_vars,
                                    true, buf, size) > 0;
}

void sc_cuda_report_no_device(sc_cuda_run *r, const char *why)
{
    char evidence[1024], var[300];
    sc_accel_driver_evidence(r->ctx, sc_backend_get(SC_BACKEND_NVIDIA)->driver_probe, "GPU(s)",
                             SC_FACT_MODEL, evidence, sizeof evidence);
    if (visibility_var(var, sizeof var) && sc_cuda_driver_devices(r))
        sc_finding(r->res, "cuda.devices-hidden", SC_SEV_ERROR,
                   "unset CUDA_VISIBLE_DEVICES or give it indices or UUIDs that exist (an empty "
                   "value or -1 hides every GPU)",
                   "CUDA sees no device (%s) but %s; hidden by %s", why, evidence, var);
    else
        sc_finding(r->res, "cuda.no-device", SC_SEV_ERROR,
                   "fix the driver layer first (see driver.nvidia); inside a container use --gpus "
                   "all; check dmesg for NVRM errors",
                   "CUDA sees no device (%s); %s", why, evidence);
}

void sc_cuda_check_against_driver(sc_cuda_run *r)
{
    const cJSON *devs = sc_cuda_driver_devices(r);
    sc_buf missing;
    sc_buf_init(&missing);
    int agree = sc_accel_driver_agrees(r->res->facts, r->devices, r->count, devs,
                                       "driver.nvidia has no devices to compare", &missing);
    int nd = cJSON_GetArraySize(devs);
    char var[300];
    bool hidden = agree == 0 && visibility_var(var, sizeof var);
    if (agree == 0 && hidden && r->count < nd && !missing.len)
        sc_fact_str(r->res->facts, "hidden_by", var, NULL);
    else if (agree == 0)
        sc_finding(r->res, "cuda.device-mismatch", SC_SEV_WARN,
                   "check that libcuda and the kernel module come from the same driver, and "
                   "nvidia-smi for GPUs the driver could not initialise",
                   "driver.nvidia sees %d GPU(s), CUDA %d%s%s%s%s", nd, r->count,
                   missing.len ? "; not in the driver layer: " : "",
                   missing.data ? missing.data : "", hidden ? "; set: " : "", hidden ? var : "");
    sc_buf_free(&missing);
}
