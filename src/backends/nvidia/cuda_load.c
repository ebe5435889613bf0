/* runtime.cuda's loading step: dlopen libcuda.so.1 by soname (as every CUDA program loads it, so
 * LD_LIBRARY_PATH overrides it the same way) and nvrtc, bind their entry points, and record what
 * was loaded and its versions. The libraries stay mapped until the isolated child exits. */
#include <dlfcn.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_cuda_run.h"

bool sc_cuda_load_driver(sc_cuda_run *r)
{
    static const char *const candidates[] = {"libcuda.so.1", NULL};
    sc_error err = {0};
    r->start_ms = sc_now_ms();
    if (sc_dl_open(&r->lib, candidates, RTLD_NOW | RTLD_LOCAL, &err) == 0) {
        cJSON_AddStringToObject(r->driver, "path", r->lib.path);
        cJSON_AddStringToObject(r->driver, "realpath", r->lib.realpath);
        return true;
    }
    sc_finding(r->res, "cuda.library-not-found", SC_SEV_ERROR,
               "install the NVIDIA driver's user-space part (libcuda.so.1, e.g. the "
               "libnvidia-compute package of the same version as the kernel module); in a "
               "container use --gpus all with nvidia-container-toolkit, which mounts it",
               "could not load libcuda.so.1: %s", err.message);
    return false;
}

/* libcuda's file name version against the kernel module's. */
static void check_library_version(sc_cuda_run *r)
{
    char lib_version[64];
    const char *kernel = sc_cuda_module_version(r);
    if (sc_cuda_libcuda_version(r->lib.realpath, lib_version, sizeof lib_version) < 0) {
        sc_fact_null(r->driver, "library_driver_version", "the file name carries no version");
        return;
    }
    cJSON_AddStringToObject(r->driver, "library_driver_version", lib_version);
    if (kernel && strcmp(kernel, lib_version) != 0)
        sc_finding(r->res, "nvidia.module-version-mismatch", SC_SEV_ERROR,
                   "install the user-space driver of the same release as the kernel module "
                   "(or reboot after a driver upgrade); in a container, do not bake libcuda "
                   "into the image: let nvidia-container-toolkit mount the host's",
                   "libcuda is %s (%s) but the kernel module is %s", lib_version, r->lib.realpath,
                   kernel);
}

/* driver_api.cuda_version from cuDriverGetVersion; a value no driver has is a garbage answer. */
static void record_version(sc_cuda_run *r)
{
    int v = 0, rc = r->fns.driver_get_version(&v);
    char text[32];
    if (rc == 0 && sc_cuda_version_decode(v, text, sizeof text) == 0) {
        cJSON_AddStringToObject(r->driver, "cuda_version", text);
        cJSON_AddNumberToObject(r->driver, "cuda_version_raw", v);
    } else if (rc == 0) {
        sc_fact_null(r->driver, "cuda_version", "cuDriverGetVersion gave %d", v);
        sc_accel_note_bad(&r->bad, "driver version %d", v);
    } else {
        sc_fact_null(r->driver, "cuda_version", "cuDriverGetVersion failed with %d", rc);
    }
}

bool sc_cuda_bind_driver(sc_cuda_run *r)
{
    sc_error err = {0};
    if (sc_dl_bind(&r->lib, sc_cuda_symbols, sc_cuda_symbol_count, &r->fns, &err) < 0) {
        sc_finding(r->res, "cuda.init-failed", SC_SEV_ERROR,
                   "the library is not a working libcuda (or is very old): check which file was "
                   "loaded (driver_api.realpath) and reinstall the driver",
                   "%s in %s", err.message, r->lib.realpath);
        return false;
    }
    record_version(r);
    check_library_version(r);
    return true;
}

/* driver_api.nvrtc: where nvrtc was loaded from and its version. */
static void nvrtc_facts(sc_cuda_run *r)
{
    cJSON *o = cJSON_AddObjectToObject(r->driver, "nvrtc");
    int major = 0, minor = 0;
    cJSON_AddStringToObject(o, "realpath", r->rtc_lib.realpath);
    if (r->rtc.version(&major, &minor) == 0 && major > 0 && major < 100 && minor >= 0 &&
        minor < 100) {
        char v[16];
        sc_fmt(v, sizeof v, "%d.%d", major, minor);
        cJSON_AddStringToObject(o, "version", v);
    }
}

bool sc_cuda_load_nvrtc(sc_cuda_run *r)
{
    sc_error err = {0};
    if (sc_dl_open(&r->rtc_lib, sc_nvrtc_names, RTLD_NOW | RTLD_LOCAL, &err) == 0 &&
        sc_dl_bind(&r->rtc_lib, sc_nvrtc_symbols, sc_nvrtc_symbol_count, &r->rtc, &err) == 0) {
        nvrtc_facts(r);
        return true;
    }
    sc_fact_null(r->driver, "nvrtc", "%s", err.message);
    sc_finding(r->res, "cuda.nvrtc-not-found", SC_SEV_INFO,
               "install the CUDA runtime compiler (libnvrtc, e.g. cuda-nvrtc-12-x) to let "
               "stackcheck run a kernel; without it only memory and copies are checked",
               "no libnvrtc.so*: the kernel check is left out (%s)", err.message);
    return false;
}
