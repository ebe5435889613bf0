/* The checks on an imported torch: the kind of build against the installed runtime, the devices it
 * sees, the runtime it mapped and whether a device tensor round trip gives the right values. */
#include <stdlib.h>
#include <string.h>

#include "sc_facts.h"
#include "sc_torch.h"
#include "sc_util.h"

/* The HIP runtime file the runtime layer loaded (facts.runtime), else the one its loader search
 * picked (facts.runtime_library). */
static const char *runtime_hip_library(const sc_ctx *ctx)
{
    const cJSON *f = sc_ctx_facts(ctx, SC_PROBE_RUNTIME_HIP);
    const char *loaded = sc_json_str(sc_json_member(f, SC_FACT_RUNTIME), SC_FACT_REALPATH);
    return loaded ? loaded
                  : sc_json_str(sc_json_member(f, SC_FACT_RUNTIME_LIBRARY), SC_FACT_REALPATH);
}

/* A GPU runtime installed on the machine: what the runtime layer loaded, else a known file. */
static bool runtime_installed(const sc_ctx *ctx, char *evidence, size_t size)
{
    static const char *const dirs[] = {"/opt/dtk/lib", "/opt/rocm/lib", "/usr/lib/x86_64-linux-gnu",
                                       "/usr/lib64"};
    static const char *const names[] = {"libgalaxyhip.so.5", "libamdhip64.so.6", "libamdhip64.so.5",
                                        "libcuda.so.1"};
    char path[PATH_MAX], real[PATH_MAX];
    const char *lib = runtime_hip_library(ctx);
    const char *version = sc_json_str(
        sc_json_member(sc_ctx_facts(ctx, SC_PROBE_RUNTIME_HIP), SC_FACT_RUNTIME), SC_FACT_VERSION);
    const cJSON *cuda = sc_ctx_facts(ctx, SC_PROBE_RUNTIME_CUDA);
    const char *cuda_lib = sc_json_str(sc_json_member(cuda, SC_FACT_DRIVER_API), SC_FACT_REALPATH);
    if (!cuda_lib)
        cuda_lib = sc_json_str(sc_json_member(cuda, SC_FACT_DRIVER_LIBRARY), SC_FACT_REALPATH);
    if (lib) {
        sc_fmt(evidence, size, "the runtime layer loaded HIP %s (%s)", version ? version : "?",
               lib);
        return true;
    }
    if (cuda_lib) {
        sc_fmt(evidence, size, "the runtime layer found the CUDA driver %s", cuda_lib);
        return true;
    }
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++)
        for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
            sc_fmt(path, sizeof path, "%s/%s", dirs[d], names[n]);
            if (sc_root_realpath(ctx->root, path, real, sizeof real) == 0) {
                sc_fmt(evidence, size, "%s is installed (%s)", names[n], real);
                return true;
            }
        }
    return false;
}

static const cJSON *mapped_runtime(const cJSON *libs)
{
    const cJSON *l;
    cJSON_ArrayForEach (l, libs) {
        const char *name = sc_json_str(l, "name");
        if (name && (sc_starts_with(name, "libamdhip64") || sc_starts_with(name, "libgalaxyhip")))
            return l;
    }
    return NULL;
}

static void check_runtime_mismatch(const sc_ctx *ctx, sc_result *res, const cJSON *torch)
{
    const char *theirs = runtime_hip_library(ctx);
    const cJSON *mine = mapped_runtime(sc_json_member(torch, "mapped_libraries"));
    const char *real = sc_json_str(mine, "realpath");
    char canon[PATH_MAX];
    if (!theirs || !real)
        return;
    if (sc_root_realpath(ctx->root, theirs, canon, sizeof canon) == 0)
        theirs = canon;
    if (strcmp(theirs, real) == 0)
        return;
    sc_finding(res, "torch.runtime-mismatch", SC_SEV_WARN,
               "make torch and the runtime use one install: fix LD_LIBRARY_PATH, or install the "
               "torch build made for this runtime",
               "torch loaded %s (root %s) but the runtime layer loaded %s", real,
               sc_json_str(mine, "root") ? sc_json_str(mine, "root") : "?", theirs);
}

/* Whether torch's arch list has code for arch ("gfx90a:sramecc+:xnack-" matches "gfx90a";
 * "sm_86" matches sm_86, or compute_XY PTX with XY <= 86). */
static bool arch_covered(const char *arch, const cJSON *list)
{
    size_t base = strcspn(arch, ":");
    int dev_cc = sc_starts_with(arch, "sm_") ? atoi(arch + 3) : -1;
    const cJSON *a;
    cJSON_ArrayForEach (a, list) {
        const char *s = cJSON_GetStringValue(a);
        if (!s)
            continue;
        if (strcspn(s, ":") == base && strncmp(s, arch, base) == 0)
            return true;
        if (dev_cc > 0 && sc_starts_with(s, "compute_") && atoi(s + 8) <= dev_cc)
            return true;
    }
    return false;
}

static void check_devices(sc_result *res, const cJSON *torch)
{
    const cJSON *list = sc_json_member(torch, "arch_list"), *d;
    if (cJSON_GetArraySize(list) == 0)
        return;
    cJSON_ArrayForEach (d, sc_json_member(torch, "devices")) {
        const char *arch = sc_json_str(d, "arch");
        if (arch && !arch_covered(arch, list)) {
            char *archs = cJSON_PrintUnformatted(list);
            sc_finding(res, "torch.no-arch-for-device", SC_SEV_ERROR,
                       "install a torch build compiled for this architecture",
                       "device %s (%s) has no code in torch's arch list %s",
                       sc_json_str(d, "name") ? sc_json_str(d, "name") : "?", arch,
                       archs ? archs : "?");
            free(archs);
        }
    }
}

void sc_torch_check_round_trip(sc_result *res, const cJSON *rt)
{
    if (!rt || cJSON_IsTrue(sc_json_member(rt, "ok")))
        return;
    const cJSON *e = sc_json_member(rt, "error");
    char *values = cJSON_PrintUnformatted(sc_json_member(rt, "values"));
    sc_finding(res, "torch.device-tensor-mismatch", SC_SEV_ERROR,
               "the device computes wrong results: check the runtime layer's kernel test and the "
               "arch torch was built for",
               "x = torch.arange(8, device='%s'); (x*2).cpu() gave %s instead of [0,2,...,14]%s%s",
               sc_json_str(rt, "device") ? sc_json_str(rt, "device") : "?",
               values ? values : "no values", e ? ": " : "",
               e && sc_json_str(e, "message") ? sc_json_str(e, "message") : "");
    free(values);
}

#define NO_DEVICE_HINT                                                                             \
    "see the driver and runtime layers: the device is missing, hidden (HIP_VISIBLE_DEVICES, "      \
    "CUDA_VISIBLE_DEVICES) or not accessible to this user"

void sc_torch_check_build(const sc_ctx *ctx, sc_result *res, const cJSON *torch)
{
    const char *hip = sc_json_str(torch, "hip"), *cuda = sc_json_str(torch, "cuda");
    const char *version = sc_json_str(torch, "version") ? sc_json_str(torch, "version") : "?";
    double count = cJSON_GetNumberValue(sc_json_member(torch, "device_count"));
    char evidence[PATH_MAX + 64];
    if (!hip && !cuda) {
        if (runtime_installed(ctx, evidence, sizeof evidence))
            sc_finding(res, "torch.cpu-only-build", SC_SEV_ERROR,
                       "install a ROCm (AMD) or DTK (Hygon DCU) build of torch, e.g. from "
                       "https://download.pytorch.org/whl/rocm6.2, or your vendor's DTK wheel",
                       "torch %s is a CPU-only build (torch.version.hip and .cuda are None) but "
                       "a GPU runtime is present: %s",
                       version, evidence);
        return;
    }
    const char *avail = cJSON_IsTrue(sc_json_member(torch, "is_available")) ? "true" : "false";
    if (!(count > 0) && hip)
        sc_finding(
            res, "torch.hip-build-no-device", SC_SEV_ERROR, NO_DEVICE_HINT,
            "torch %s is a HIP %s build but torch.cuda.device_count() is 0 (is_available %s)",
            version, hip, avail);
    else if (!(count > 0))
        sc_finding(res, "torch.cuda-build-no-device", SC_SEV_ERROR, NO_DEVICE_HINT,
                   "torch %s is a CUDA %s build but torch.cuda.device_count() is 0 (is_available "
                   "%s)",
                   version, cuda, avail);
    check_runtime_mismatch(ctx, res, torch);
    check_devices(res, torch);
}
