/* The checks on an imported torch: the kind of build against the installed runtime, the devices it
 * sees, the runtime it mapped and whether a device tensor round trip gives the right values. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sc_backend.h"
#include "sc_facts.h"
#include "sc_torch.h"
#include "sc_util.h"

/* The runtime library desc's runtime probe found: the one it loaded, else the one its loader
 * search picked (the descriptor's runtime_library_facts, in order); *version gets its version when
 * the probe read one. NULL when it found none. */
static const char *runtime_library(const sc_ctx *ctx, const sc_backend_desc *desc,
                                   const char **version)
{
    const cJSON *facts = sc_ctx_facts(ctx, desc->runtime_probe);
    for (const char *const *k = desc->runtime_library_facts; k && *k; k++) {
        const cJSON *o = sc_json_member(facts, *k);
        if (sc_json_str(o, SC_FACT_REALPATH)) {
            *version = sc_json_str(o, SC_FACT_VERSION);
            return sc_json_str(o, SC_FACT_REALPATH);
        }
    }
    return NULL;
}

/* The first of names installed in dir, into evidence; false when none is. */
static bool file_in(const sc_ctx *ctx, const char *dir, const char *const *names, char *evidence,
                    size_t size)
{
    char path[PATH_MAX], real[PATH_MAX];
    for (; names && *names; names++)
        if (sc_fmt(path, sizeof path, "%s/%s", dir, *names) &&
            sc_root_realpath(ctx->root, path, real, sizeof real) == 0) {
            sc_fmt(evidence, size, "%s is installed (%s)", *names, real);
            return true;
        }
    return false;
}

/* An installed runtime file of desc in its install prefixes' lib or the system's library
 * directories, into evidence; false when none. */
static bool runtime_file(const sc_ctx *ctx, const sc_backend_desc *desc, char *evidence,
                         size_t size)
{
    static const char *const system_dirs[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", NULL};
    char dir[PATH_MAX];
    for (const char *const *p = desc->root_prefixes; p && *p; p++)
        if (sc_fmt(dir, sizeof dir, "%s/lib", *p) &&
            file_in(ctx, dir, desc->runtime_libraries, evidence, size))
            return true;
    for (const char *const *d = system_dirs; *d; d++)
        if (file_in(ctx, *d, desc->runtime_libraries, evidence, size))
            return true;
    return false;
}

/* A GPU runtime installed on the machine for a backend torch builds exist for: what the runtime
 * layer found, else a known file; the backend, with the evidence, or NULL. */
static const sc_backend_desc *runtime_installed(const sc_ctx *ctx, char *evidence, size_t size)
{
    const char *version = NULL, *lib;
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        if ((*b)->torch_build && (lib = runtime_library(ctx, *b, &version)) != NULL) {
            sc_fmt(evidence, size, "the runtime layer (%s) found %s%s%s", (*b)->runtime_probe, lib,
                   version ? ", version " : "", version ? version : "");
            return *b;
        }
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        if ((*b)->torch_build && runtime_file(ctx, *b, evidence, size))
            return *b;
    return NULL;
}

/* The library among torch's mapped ones that is desc's runtime (a soname stem of its runtime
 * libraries followed by ".so": libamdhip64.so.6, not libamdhip64_extra), or NULL. */
static const cJSON *mapped_runtime(const cJSON *libs, const sc_backend_desc *desc)
{
    const cJSON *l;
    cJSON_ArrayForEach (l, libs) {
        const char *name = sc_json_str(l, "name");
        for (const char *const *r = desc->runtime_libraries; name && r && *r; r++) {
            const char *so = strstr(*r, ".so");
            size_t stem = so ? (size_t)(so - *r) + 3 : strlen(*r);
            if (strncmp(name, *r, stem) == 0)
                return l;
        }
    }
    return NULL;
}

static void check_runtime_mismatch(const sc_ctx *ctx, sc_result *res, const cJSON *torch,
                                   const sc_backend_desc *desc)
{
    const char *version = NULL;
    const char *theirs = runtime_library(ctx, desc, &version);
    const cJSON *mine = mapped_runtime(sc_json_member(torch, "mapped_libraries"), desc);
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

/* The backend torch was built for: the first descriptor whose torch.version field (torch_build:
 * "hip", "cuda") is set, with that version in *version; NULL for a CPU-only build. */
static const sc_backend_desc *torch_backend(const cJSON *torch, const char **version)
{
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        if ((*b)->torch_build && (*version = sc_json_str(torch, (*b)->torch_build)) != NULL)
            return *b;
    return NULL;
}

static void report_cpu_only(const sc_ctx *ctx, sc_result *res, const char *version)
{
    char evidence[PATH_MAX + 128];
    const sc_backend_desc *found = runtime_installed(ctx, evidence, sizeof evidence);
    if (!found)
        return;
    sc_buf fields; /* "torch.version.hip and .cuda" */
    sc_buf_init(&fields);
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        if ((*b)->torch_build)
            sc_buf_printf(&fields, fields.len ? " and .%s" : "torch.version.%s", (*b)->torch_build);
    sc_finding(res, "torch.cpu-only-build", SC_SEV_ERROR, found->torch_install,
               "torch %s is a CPU-only build (%s are None) but a GPU runtime is present: %s",
               version, fields.data ? fields.data : "", evidence);
    sc_buf_free(&fields);
}

/* desc's no-device finding: its devices are missing, hidden by one of its visibility variables or
 * not accessible. The build's name is its torch.version field in capitals ("HIP", "CUDA"). */
static void report_no_device(sc_result *res, const sc_backend_desc *desc, const char *version,
                             const char *build_version, const char *avail)
{
    char build[16], hint[512];
    size_t i = 0;
    for (; desc->torch_build[i] && i + 1 < sizeof build; i++)
        build[i] = (char)toupper((unsigned char)desc->torch_build[i]);
    build[i] = '\0';
    sc_buf vars;
    sc_buf_init(&vars);
    for (const char *const *v = desc->visibility_vars; v && *v; v++)
        sc_buf_printf(&vars, "%s%s", vars.len ? ", " : "", *v);
    sc_fmt(hint, sizeof hint,
           "see the driver and runtime layers: the device is missing, hidden (%s) or not "
           "accessible to this user",
           vars.data ? vars.data : "");
    sc_buf_free(&vars);
    if (desc->torch_no_device)
        sc_finding(res, desc->torch_no_device, SC_SEV_ERROR, hint,
                   "torch %s is a %s %s build but torch.cuda.device_count() is 0 (is_available %s)",
                   version, build, build_version, avail);
}

void sc_torch_check_build(const sc_ctx *ctx, sc_result *res, const cJSON *torch)
{
    const char *build_version = NULL;
    const sc_backend_desc *desc = torch_backend(torch, &build_version);
    const char *version = sc_json_str(torch, "version") ? sc_json_str(torch, "version") : "?";
    double count = cJSON_GetNumberValue(sc_json_member(torch, "device_count"));
    if (!desc) {
        report_cpu_only(ctx, res, version);
        return;
    }
    const char *avail = cJSON_IsTrue(sc_json_member(torch, "is_available")) ? "true" : "false";
    if (!(count > 0))
        report_no_device(res, desc, version, build_version, avail);
    check_runtime_mismatch(ctx, res, torch, desc);
    check_devices(res, torch);
}
