/* runtime.hip's loading step: dlopen the HIP runtime and hiprtc through the table-driven loader,
 * bind their entry points, and record what was loaded and its versions. The libraries stay mapped
 * until the isolated child exits: unloading a GPU runtime can hang or crash. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_hip_run.h"

#define MAX_CANDIDATES 12

static void loaded_facts(sc_hip_run *r)
{
    cJSON_AddStringToObject(r->runtime, "path", r->lib.path);
    cJSON_AddStringToObject(r->runtime, "realpath", r->lib.realpath);
    sc_install_root ir;
    sc_install_root_in(r->ctx->root, r->lib.realpath, &ir);
    cJSON_AddStringToObject(r->runtime, "root", ir.path);
    cJSON_AddStringToObject(r->runtime, "root_kind", sc_root_kind_name(ir.kind));
    if (r->inv->pick.found)
        cJSON_AddBoolToObject(r->runtime, "matches_loader_pick",
                              strcmp(r->inv->pick.realpath, r->lib.realpath) == 0);
}

/* --hip-library alone when given; else the loader's pick, then every known name. */
static void runtime_candidates(const sc_hip_run *r, const char **out)
{
    int n = 0;
    if (r->ctx->opt->hip_library) {
        out[n++] = r->ctx->opt->hip_library;
    } else {
        if (r->inv->pick.found)
            out[n++] = r->inv->pick.name;
        const char *const *names = sc_hip_runtime_names(sc_hip_inventory_has_dtk(r->inv));
        for (int i = 0; names[i] && n < MAX_CANDIDATES - 1; i++)
            out[n++] = names[i];
    }
    out[n] = NULL;
}

bool sc_hip_load_runtime(sc_hip_run *r)
{
    const char *candidates[MAX_CANDIDATES];
    runtime_candidates(r, candidates);
    sc_error err = {0};
    r->start_ms = sc_now_ms();
    if (sc_dl_open(&r->lib, candidates, RTLD_NOW | RTLD_LOCAL, &err) == 0) {
        loaded_facts(r);
        return true;
    }
    if (strstr(err.message, "version `") && strstr(err.message, "not found"))
        sc_finding(r->res, "hip.runtime-too-old", SC_SEV_ERROR,
                   "use a runtime at least as new as what links against it, or the matching build",
                   "the HIP runtime needs a symbol version its dependencies lack: %s", err.message);
    else
        sc_finding(r->res, "hip.runtime-load-failed", SC_SEV_ERROR,
                   "install ROCm or DTK (or pass --hip-library PATH); if the file exists, its "
                   "dependencies are missing: check it with `stackcheck libs FILE`",
                   "could not load a HIP runtime: %s", err.message);
    return false;
}

/* runtime.KEY and KEY_raw from a version call; a value no release has is a garbage answer. */
static void record_version(sc_hip_run *r, const char *key, int (*fn)(int *), long *out)
{
    int v = -1, rc = fn ? fn(&v) : -1;
    char text[32], raw_key[48];
    sc_fmt(raw_key, sizeof raw_key, "%s_raw", key);
    if (rc == 0 && sc_hip_version_decode(v, text, sizeof text) == 0) {
        cJSON_AddStringToObject(r->runtime, key, text);
        cJSON_AddNumberToObject(r->runtime, raw_key, v);
        if (out)
            *out = v;
    } else if (rc == 0) {
        sc_fact_null(r->runtime, key, "the runtime returned an impossible version %d", v);
        sc_accel_note_bad(&r->bad, "%s %d", key, v);
    } else {
        sc_fact_null(r->runtime, key, fn ? "the call failed with code %d" : "no such call (%d)",
                     rc);
    }
}

bool sc_hip_bind_runtime(sc_hip_run *r)
{
    sc_error err = {0};
    int rc = sc_dl_bind(&r->lib, sc_hip_symbols, sc_hip_symbol_count, &r->fns, &err);
    /* the identity calls bind first, so a runtime missing a later symbol still says its version */
    record_version(r, "version", r->fns.runtime_get_version, &r->version);
    record_version(r, "driver_version", r->fns.driver_get_version, NULL);
    if (rc == 0)
        return true;
    sc_finding(r->res, "hip.runtime-too-old", SC_SEV_ERROR,
               "install a newer ROCm or DTK (this check needs the HIP API of ROCm 4.x or later)",
               "%s (runtime version %s)", err.message,
               cJSON_GetStringValue(cJSON_GetObjectItem(r->runtime, "version")) ?: "unknown");
    return false;
}

/* libhiprtc beside the runtime first (the same release), then by name. */
static void hiprtc_candidates(const char *runtime_path, char paths[4][PATH_MAX + 32],
                              const char **out)
{
    static const char *const names[] = {"libhiprtc.so", "libhiprtc.so.7", "libhiprtc.so.6",
                                        "libhiprtc.so.5"};
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", runtime_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    for (int i = 0; i < 4; i++) {
        sc_fmt(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
        out[i] = paths[i];
        out[4 + i] = names[i];
    }
    out[8] = NULL;
}

/* ROCm 5 has hiprtc inside libamdhip64; later releases ship it as libhiprtc. */
bool sc_hip_load_hiprtc(sc_hip_run *r)
{
    sc_error err = {0};
    if (sc_dl_bind(&r->lib, sc_hiprtc_symbols, sc_hiprtc_symbol_count, &r->rtc, &err) == 0) {
        cJSON_AddStringToObject(r->runtime, "hiprtc", r->lib.realpath);
        return true;
    }
    memset(&r->rtc, 0, sizeof r->rtc);
    char paths[4][PATH_MAX + 32];
    const char *cands[9];
    hiprtc_candidates(r->lib.realpath, paths, cands);
    if (sc_dl_open(&r->rtc_lib, cands, RTLD_NOW | RTLD_LOCAL, &err) == 0 &&
        sc_dl_bind(&r->rtc_lib, sc_hiprtc_symbols, sc_hiprtc_symbol_count, &r->rtc, &err) == 0) {
        cJSON_AddStringToObject(r->runtime, "hiprtc", r->rtc_lib.realpath);
        return true;
    }
    sc_fact_null(r->runtime, "hiprtc", "%s", err.message);
    sc_finding(
        r->res, "hip.hiprtc-not-found", SC_SEV_WARN,
        "install the runtime compiler of the same release (libhiprtc; hiprtc-dev/hip-runtime "
        "packages); without it no kernel can be compiled at run time",
        "no hiprtc beside %s: %s", r->lib.realpath, err.message);
    return false;
}
