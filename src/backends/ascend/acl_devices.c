/* runtime.acl's loading and enumeration: dlopen libascendcl.so by soname (as every CANN program
 * loads it, so LD_LIBRARY_PATH from set_env.sh decides which), bind it, aclInit, the interface and
 * CANN versions, and the device count, with the driver layer's evidence when there is none. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_acl_run.h"
#include "sc_backend.h"

bool sc_acl_load(sc_acl_run *r)
{
    sc_error err = {0};
    if (sc_dl_open(&r->lib, sc_acl_names, RTLD_NOW | RTLD_LOCAL, &err) < 0) {
        char hint[PATH_MAX + 200];
        sc_fmt(hint, sizeof hint,
               "install the CANN toolkit and source its environment (. /usr/local/Ascend/"
               "ascend-toolkit/set_env.sh) so libascendcl.so is on LD_LIBRARY_PATH%s%s",
               r->toolkit_lib[0] ? "; one is in " : "", r->toolkit_lib);
        sc_finding(r->res, "acl.library-not-found", SC_SEV_ERROR, hint,
                   "could not load libascendcl.so: %s", err.message);
        return false;
    }
    cJSON_AddStringToObject(r->api, "path", r->lib.path);
    cJSON_AddStringToObject(r->api, "realpath", r->lib.realpath);
    if (sc_dl_bind(&r->lib, sc_acl_symbols, sc_acl_symbol_count, &r->fns, &err) == 0)
        return true;
    sc_finding(r->res, "acl.init-failed", SC_SEV_ERROR,
               "the library is not a working libascendcl (or is very old): check which file was "
               "loaded (acl.realpath) and reinstall the CANN toolkit",
               "%s in %s", err.message, r->lib.realpath);
    return false;
}

/* acl.interface_version from aclrtGetVersion and acl.cann_version from aclsysGetCANNVersion. */
static void record_versions(sc_acl_run *r)
{
    int32_t major = -1, minor = -1, patch = -1;
    if (!r->fns.get_version)
        sc_fact_null(r->api, "interface_version", "no aclrtGetVersion in this library");
    else if (r->fns.get_version(&major, &minor, &patch) != 0)
        sc_fact_null(r->api, "interface_version", "aclrtGetVersion failed");
    else if (major < 0 || minor < 0 || patch < 0 || major > 1000) {
        sc_fact_null(r->api, "interface_version", "impossible answer");
        sc_accel_note_bad(&r->bad, "aclrtGetVersion gave %d.%d.%d", major, minor, patch);
    } else {
        char v[48];
        sc_fmt(v, sizeof v, "%d.%d.%d", major, minor, patch);
        cJSON_AddStringToObject(r->api, "interface_version", v);
    }
    sc_acl_cann_version cv;
    memset(&cv, 0, sizeof cv);
    if (r->fns.get_cann_version && r->fns.get_cann_version(SC_ACL_PKG_CANN, &cv) == 0) {
        char v[sizeof cv.version];
        sc_accel_copy_text(v, sizeof v, cv.version, sizeof cv.version, "");
        sc_fact_str(r->api, "cann_version", v[0] ? v : NULL, "aclsysGetCANNVersion gave nothing");
    } else {
        sc_fact_null(r->api, "cann_version", "no aclsysGetCANNVersion, or it failed");
    }
}

static void report_no_device(sc_acl_run *r, const char *why)
{
    char evidence[1024], var[300];
    sc_accel_driver_evidence(r->ctx, sc_backend_get(SC_BACKEND_ASCEND)->driver_probe, "NPU(s)",
                             SC_FACT_MODEL, evidence, sizeof evidence);
    if (sc_accel_visibility_vars(getenv, sc_backend_get(SC_BACKEND_ASCEND)->visibility_vars, true,
                                 var, sizeof var) > 0)
        sc_finding(r->res, "acl.devices-hidden", SC_SEV_ERROR,
                   "unset ASCEND_RT_VISIBLE_DEVICES / ASCEND_VISIBLE_DEVICES or give them device "
                   "ids that exist (npu-smi info lists them)",
                   "ACL sees no device (%s) but %s; hidden by %s", why, evidence, var);
    else
        sc_finding(r->res, "acl.no-device", SC_SEV_ERROR,
                   "fix the driver layer first (see driver.ascend); inside a container map "
                   "/dev/davinci<N>, davinci_manager, devmm_svm and hisi_hdc; check npu-smi "
                   "info and dmesg",
                   "ACL sees no device (%s); %s", why, evidence);
}

/* aclInit (a repeated init is fine); false (reported) when it fails. */
static bool init(sc_acl_run *r)
{
    int rc = r->fns.init(NULL);
    if (rc == 0 || rc == SC_ACL_ERR_REPEAT_INITIALIZE) {
        r->inited = rc == 0;
        return true;
    }
    char d[256];
    sc_acl_describe(&r->fns, rc, d, sizeof d);
    if (rc == SC_ACL_ERR_RT_NO_DEVICE) {
        report_no_device(r, d);
        return false;
    }
    sc_finding(r->res, "acl.init-failed", SC_SEV_ERROR,
               "check the driver layer (driver.ascend), that the toolkit matches the driver "
               "(CANN release notes list the pairs), and the logs under ~/ascend/log",
               "aclInit failed: %s", d);
    return false;
}

int sc_acl_init_and_count(sc_acl_run *r)
{
    if (!init(r))
        return -1;
    record_versions(r);
    uint32_t n = 0;
    int rc = r->fns.get_device_count(&n);
    char d[256];
    if (rc != 0) {
        sc_acl_describe(&r->fns, rc, d, sizeof d);
        report_no_device(r, d);
        return -1;
    }
    if (n > SC_ACL_MAX_DEVICES) {
        sc_accel_note_bad(&r->bad, "aclrtGetDeviceCount gave %u", n);
        return -1;
    }
    cJSON_AddNumberToObject(r->res->facts, "device_count", n);
    if (n == 0)
        report_no_device(r, "aclrtGetDeviceCount gave 0");
    return (int)n;
}

void sc_acl_report_bad_answers(sc_acl_run *r)
{
    if (r->bad.len)
        sc_finding(
            r->res, "acl.invalid-answer", SC_SEV_ERROR,
            "the runtime answered what no device can be: check which libascendcl was "
            "loaded (acl.realpath), reinstall the CANN toolkit, and look at the driver layer",
            "impossible answers from ACL: %s", r->bad.data);
    else if (r->bad.oom)
        sc_result_error(r->res, "out of memory");
}
