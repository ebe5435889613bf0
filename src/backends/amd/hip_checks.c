/* runtime.hip's cross-checks: the runtime's devices against what the driver layer saw (count,
 * PCI addresses), the visibility variables that hide devices, and an architecture override. A
 * disagreement names both sides, so the user sees which layer is wrong. */
#include <stdlib.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_backend.h"
#include "sc_hip_run.h"
#include "sc_redact.h"

const cJSON *sc_hip_driver_devices(const sc_hip_run *r)
{
    return sc_accel_driver_devices(r->ctx, sc_backend_get(SC_BACKEND_AMD)->driver_probe);
}

const cJSON *sc_hip_driver_device_at(const sc_hip_run *r, const char *pci)
{
    return sc_accel_device_at(sc_hip_driver_devices(r), pci);
}

void sc_hip_report_no_device(sc_hip_run *r, const char *why)
{
    char evidence[1024], vars[512];
    sc_accel_driver_evidence(r->ctx, sc_backend_get(SC_BACKEND_AMD)->driver_probe, "devices",
                             SC_FACT_GFX_TARGET, evidence, sizeof evidence);
    int nvars = sc_hip_visibility_vars(getenv, vars, sizeof vars);
    if (sc_hip_driver_devices(r) && nvars > 0)
        sc_finding(r->res, "hip.devices-hidden", SC_SEV_ERROR,
                   "unset the visibility variable or give it indices that exist (they count from 0 "
                   "among the devices the driver shows)",
                   "the runtime sees no device (%s) but %s; hidden by %s", why, evidence, vars);
    else
        sc_finding(r->res, "hip.no-device", SC_SEV_ERROR,
                   "fix the driver layer first (see driver.amd); inside a container map /dev/kfd "
                   "and /dev/dri; check the runtime matches the device generation",
                   "the HIP runtime sees no device (%s); %s%s%s", why, evidence,
                   nvars ? "; set: " : "", nvars ? vars : "");
}

void sc_hip_check_against_driver(sc_hip_run *r)
{
    const cJSON *devs = sc_hip_driver_devices(r);
    sc_buf missing;
    sc_buf_init(&missing);
    int nd = cJSON_GetArraySize(devs);
    if (sc_accel_driver_agrees(r->res->facts, r->devices, r->count, devs,
                               "driver.amd has no devices to compare with", &missing) == 0) {
        char vars[512];
        int nvars = sc_hip_visibility_vars(getenv, vars, sizeof vars);
        sc_finding(r->res, "hip.device-mismatch", SC_SEV_WARN,
                   "check the visibility variables and that the runtime and driver come from "
                   "matching releases",
                   "driver.amd sees %d devices, the runtime %d%s%s%s%s", nd, r->count,
                   missing.len ? "; not in the driver layer: " : "",
                   missing.data ? missing.data : "", nvars ? "; set: " : "", nvars ? vars : "");
    }
    sc_buf_free(&missing);
}

/* The distinct values of key among arr's objects, ","-joined into buf ("" when none). */
static void join_distinct(const cJSON *arr, const char *key, char *buf, size_t size)
{
    const cJSON *d;
    buf[0] = '\0';
    cJSON_ArrayForEach (d, arr) {
        const char *a = sc_json_str(d, key);
        if (a && !strstr(buf, a))
            sc_fmt(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? "," : "", a);
    }
}

void sc_hip_check_arch_override(sc_hip_run *r)
{
    const char *ov = getenv("HSA_OVERRIDE_GFX_VERSION");
    if (!ov)
        return;
    char hw[256], rt[256];
    join_distinct(sc_hip_driver_devices(r), SC_FACT_GFX_TARGET, hw, sizeof hw);
    join_distinct(r->devices, SC_FACT_ARCH, rt, sizeof rt);
    char *clean = sc_redact_value(ov); /* the value lands in a finding: scrub it like the env */
    sc_finding(r->res, "hip.arch-overridden", SC_SEV_WARN,
               "unset HSA_OVERRIDE_GFX_VERSION unless you know the code you run matches this "
               "device; prefer a build that targets the device's own architecture",
               "HSA_OVERRIDE_GFX_VERSION=%s: the runtime reports %s, the hardware is %s",
               clean ? clean : "?", rt[0] ? rt : "no arch",
               hw[0] ? hw : "unknown (driver layer has no devices)");
    free(clean);
}
