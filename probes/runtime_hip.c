/* runtime.hip: which HIP runtime (ROCm or DTK) and which install, and does it see and drive the
 * devices. The inventory is passive and always runs, offline too; the active part (load, init,
 * enumerate, allocate, copy, compile and launch a kernel) runs only live, in the isolated child. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes.h"
#include "sc_hip_api.h"
#include "sc_hip_inventory.h"
#include "sc_redact.h"
#include "sc_util.h"

#define MAX_DEVICES 1024        /* more than this is a garbage answer, not a machine */
#define WORK_DEVICES 16         /* devices the allocate/copy/kernel check runs on */
#define MAX_MEMORY (1ULL << 50) /* 1 PiB: a larger device memory is a garbage answer */
#define PATTERN_BYTES (1u << 20)
#define KERNEL_N 8
#define MAX_CODE_BYTES (64u << 20)

static const char kernel_source[] =
    "extern \"C\" __global__ void sc_double(const float *x, float *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = x[i] * 2.0f;\n"
    "}\n";

/* One compile per architecture, so devices of one arch compile (or fail) once. */
typedef struct {
    char arch[256];
    char *code; /* NULL: the compile failed, already reported */
    size_t size;
} code_cache;

typedef struct {
    const sc_ctx *ctx;
    sc_result *res;
    sc_hip_inventory *inv;
    sc_dl_lib lib, rtc_lib;
    sc_hip_fns fns;
    sc_hiprtc_fns rtc;
    bool have_rtc;
    long version;
    int count;
    cJSON *runtime; /* facts.runtime */
    cJSON *devices; /* facts.devices */
    cJSON *timing;  /* facts.timing */
    sc_buf bad;     /* garbage answers, reported together as hip.invalid-answer */
    code_cache codes[4];
    int code_count;
    double start_ms;
} hip_run;

/* ---- inventory (passive) ---- */

static void add_install_json(cJSON *arr, const sc_hip_install *in)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddStringToObject(o, "root", in->root);
    cJSON_AddStringToObject(o, "kind", sc_root_kind_name(in->kind));
    if (in->version[0])
        cJSON_AddStringToObject(o, "version", in->version);
    else
        sc_fact_null(o, "version", "%s", in->version_error);
    sc_fact_str(o, "hip_version", in->hip_version[0] ? in->hip_version : NULL,
                "no readable share/hip/version");
    cJSON *via = cJSON_AddArrayToObject(o, "via");
    for (int i = 0; i < in->via_count; i++)
        cJSON_AddItemToArray(via, cJSON_CreateString(in->via[i]));
    cJSON_AddItemToArray(arr, o);
}

static void installs_facts(hip_run *r)
{
    cJSON *arr = cJSON_AddArrayToObject(r->res->facts, "installs");
    for (int i = 0; i < r->inv->install_count && arr; i++)
        add_install_json(arr, &r->inv->installs[i]);
    cJSON *links = cJSON_AddObjectToObject(r->res->facts, "links");
    for (int i = 0; i < r->inv->link_count && links; i++) {
        const sc_hip_link *l = &r->inv->links[i];
        if (l->target[0])
            cJSON_AddStringToObject(links, l->name, l->target);
        else
            sc_fact_null(links, l->name, "dangling link");
    }
}

/* hip.multiple-installs: two or more distinct ROCm or DTK roots. */
static void check_multiple_installs(hip_run *r)
{
    sc_buf list;
    sc_buf_init(&list);
    int n = 0;
    for (int i = 0; i < r->inv->install_count; i++) {
        const sc_hip_install *in = &r->inv->installs[i];
        if (in->kind != SC_ROOT_ROCM && in->kind != SC_ROOT_DTK)
            continue;
        n++;
        sc_buf_printf(&list, "%s%s (%s %s)", list.len ? ", " : "", in->root,
                      sc_root_kind_name(in->kind),
                      in->version[0] ? in->version : "version unknown");
    }
    for (int i = 0; i < r->inv->link_count; i++)
        sc_buf_printf(&list, "; %s -> %s", r->inv->links[i].name,
                      r->inv->links[i].target[0] ? r->inv->links[i].target : "(dangling)");
    if (n >= 2)
        sc_finding(
            r->res, "hip.multiple-installs", SC_SEV_WARN,
            "make sure LD_LIBRARY_PATH, ROCM_PATH and the /opt/rocm or /opt/dtk link name the "
            "one install you mean (source that install's env.sh), or remove the others",
            "%d HIP installs: %s", n, list.data ? list.data : "");
    sc_buf_free(&list);
}

static void check_path_roots(hip_run *r, const sc_hip_env *env)
{
    char roots[2048];
    if (sc_hip_path_roots(r->ctx->root, env->ld_library_path, roots, sizeof roots) >= 2)
        sc_finding(r->res, "hip.path-mixes-roots", SC_SEV_WARN,
                   "keep the lib directories of one ROCm/DTK install in LD_LIBRARY_PATH: start "
                   "from a clean shell and source only that install's env.sh",
                   "LD_LIBRARY_PATH names lib directories of different installs: %s", roots);
}

static bool inventory_prefers_dtk(const sc_hip_inventory *inv)
{
    for (int i = 0; i < inv->install_count; i++)
        if (inv->installs[i].kind == SC_ROOT_DTK)
            return true;
    return false;
}

static void pick_facts(hip_run *r, const sc_hip_env *env)
{
    const char *const *names = sc_hip_runtime_names(inventory_prefers_dtk(r->inv));
    for (int i = 0; names[i] && !r->inv->pick.found; i++)
        sc_hip_loader_find(r->ctx->root, env->ld_library_path, names[i], &r->inv->pick);
    const sc_hip_pick *p = &r->inv->pick;
    if (!p->found) {
        sc_fact_null(r->res->facts, "runtime_library", "the loader would find no HIP runtime");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(r->res->facts, "runtime_library");
    if (!o)
        return;
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON_AddStringToObject(o, "path", p->path);
    cJSON_AddStringToObject(o, "realpath", p->realpath);
    cJSON_AddStringToObject(o, "found_via", p->found_via);
    cJSON_AddStringToObject(o, "root", p->root.path);
    cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(p->root.kind));
    const sc_hip_install *in = sc_hip_inventory_install_of(r->inv, p->realpath);
    sc_fact_str(o, "install_version", in && in->version[0] ? in->version : NULL,
                in ? in->version_error : "not inside a ROCm or DTK install");
}

/* hip.runtime-not-found, unless a live load by name found what the search did not (the search
 * is a prediction; the loader's answer wins). */
static void report_not_found(hip_run *r, bool loaded_by_name)
{
    if (r->inv->pick.found || loaded_by_name)
        return;
    sc_finding(r->res, "hip.runtime-not-found", SC_SEV_WARN,
               "install ROCm or DTK, or add its lib directory to LD_LIBRARY_PATH (source the "
               "install's env.sh)",
               "no %s or %s in LD_LIBRARY_PATH, the ld.so.conf directories or the default "
               "directories (%d installs seen)",
               "libamdhip64.so*", "libgalaxyhip.so*", r->inv->install_count);
}

static void run_inventory(hip_run *r, const sc_hip_env *env)
{
    sc_hip_inventory_installs(r->ctx->root, env, r->inv);
    installs_facts(r);
    check_multiple_installs(r);
    check_path_roots(r, env);
    pick_facts(r, env);
}

/* ---- loading and binding ---- */

static void loaded_facts(hip_run *r)
{
    cJSON_AddStringToObject(r->runtime, "path", r->lib.path);
    cJSON_AddStringToObject(r->runtime, "realpath", r->lib.realpath);
    sc_install_root ir;
    sc_install_root_of(r->lib.realpath, &ir);
    cJSON_AddStringToObject(r->runtime, "root", ir.path);
    cJSON_AddStringToObject(r->runtime, "root_kind", sc_root_kind_name(ir.kind));
    if (r->inv->pick.found)
        cJSON_AddBoolToObject(r->runtime, "matches_loader_pick",
                              strcmp(r->inv->pick.realpath, r->lib.realpath) == 0);
}

static bool load_runtime(hip_run *r)
{
    const char *candidates[12];
    int n = 0;
    if (r->ctx->opt->hip_library) {
        candidates[n++] = r->ctx->opt->hip_library;
    } else {
        if (r->inv->pick.found)
            candidates[n++] = r->inv->pick.name;
        const char *const *names = sc_hip_runtime_names(inventory_prefers_dtk(r->inv));
        for (int i = 0; names[i] && n < 11; i++)
            candidates[n++] = names[i];
    }
    candidates[n] = NULL;
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

static void record_version(hip_run *r, const char *key, int (*fn)(int *), long *out)
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
        sc_buf_printf(&r->bad, "%s%s %d", r->bad.len ? "; " : "", key, v);
    } else {
        sc_fact_null(r->runtime, key, fn ? "the call failed with code %d" : "no such call (%d)",
                     rc);
    }
}

static bool bind_runtime(hip_run *r)
{
    sc_error err = {0};
    int rc = sc_dl_bind(&r->lib, sc_hip_symbols, sc_hip_symbol_count, &r->fns, &err);
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

/* ---- init, count, cross-checks ---- */

/* The driver layer's devices array, or NULL when it has none to compare with. */
static const cJSON *driver_devices(const hip_run *r)
{
    const cJSON *d = cJSON_GetObjectItem(sc_ctx_facts(r->ctx, "driver.amd"), "devices");
    return cJSON_IsArray(d) && cJSON_GetArraySize(d) > 0 ? d : NULL;
}

/* "8 devices (gfx90a at 0000:c1:00.0, ...)" from the driver layer, or its status and finding. */
static void driver_evidence(const hip_run *r, char *buf, size_t size)
{
    const cJSON *devs = driver_devices(r), *d;
    if (devs) {
        sc_buf b;
        sc_buf_init(&b);
        cJSON_ArrayForEach (d, devs) {
            const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(d, "gfx_target"));
            const char *pci = cJSON_GetStringValue(cJSON_GetObjectItem(d, "pci_address"));
            sc_buf_printf(&b, "%s%s at %s", b.len ? ", " : "", arch ?: "?", pci ?: "?");
        }
        sc_fmt(buf, size, "driver.amd sees %d devices (%s)", cJSON_GetArraySize(devs),
               b.data ? b.data : "");
        sc_buf_free(&b);
        return;
    }
    sc_status st = sc_ctx_status(r->ctx, "driver.amd");
    const cJSON *f = sc_ctx_finding(r->ctx, "driver.no-accelerator");
    if (!f)
        f = sc_ctx_finding(r->ctx, "amd.kfd-no-gpu");
    sc_fmt(buf, size, "driver.amd: %s%s%s",
           st == SC_STATUS_UNSET ? "did not run" : sc_status_name(st), f ? ", " : "",
           f ? cJSON_GetStringValue(cJSON_GetObjectItem(f, "message")) : "");
}

static void report_no_device(hip_run *r, const char *why)
{
    char evidence[1024], vars[512];
    driver_evidence(r, evidence, sizeof evidence);
    int nvars = sc_hip_visibility_vars(getenv, vars, sizeof vars);
    if (driver_devices(r) && nvars > 0)
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

/* hipInit then hipGetDeviceCount; returns the count, or -1 when the probe must stop. */
static int init_and_count(hip_run *r)
{
    char init_desc[256] = "", count_desc[256] = "";
    int rc = r->fns.init(0);
    cJSON_AddNumberToObject(r->timing, "load_init_ms", sc_now_ms() - r->start_ms);
    if (rc == SC_HIP_ERR_INSUFFICIENT_DRIVER) {
        sc_hip_describe(&r->fns, rc, init_desc, sizeof init_desc);
        sc_finding(r->res, "hip.insufficient-driver", SC_SEV_ERROR,
                   "install the kernel driver (amdgpu DKMS or hydcu) that this ROCm/DTK release "
                   "supports, or use the runtime release that matches the driver",
                   "hipInit: %s", init_desc);
        return -1;
    }
    if (rc != 0)
        sc_hip_describe(&r->fns, rc, init_desc, sizeof init_desc);
    int count = -1;
    int crc = r->fns.get_device_count(&count);
    if (crc != 0)
        sc_hip_describe(&r->fns, crc, count_desc, sizeof count_desc);
    if (crc == 0 && (count < 0 || count > MAX_DEVICES)) {
        sc_buf_printf(&r->bad, "%sdevice count %d", r->bad.len ? "; " : "", count);
        sc_fact_null(r->res->facts, "device_count", "impossible count %d", count);
        return -1;
    }
    cJSON_AddNumberToObject(r->res->facts, "device_count", crc == 0 ? count : 0);
    if (crc == 0 && count > 0 && rc == 0)
        return count;
    char why[600];
    if (crc == 0)
        sc_fmt(count_desc, sizeof count_desc, "%d devices", count);
    sc_fmt(why, sizeof why, "%s%s%shipGetDeviceCount: %s", rc ? "hipInit: " : "", init_desc,
           rc ? "; " : "", count_desc);
    if (crc == 0 && count > 0)
        sc_finding(r->res, "hip.init-failed", SC_SEV_ERROR,
                   "check the kernel log and the driver layer; run rocminfo for the runtime's view",
                   "%s", why);
    else
        report_no_device(r, why);
    return -1;
}

static void check_arch_override(hip_run *r)
{
    const char *ov = getenv("HSA_OVERRIDE_GFX_VERSION");
    if (!ov)
        return;
    char hw[256] = "", rt[256] = "";
    const cJSON *d, *devs = driver_devices(r);
    cJSON_ArrayForEach (d, devs) {
        const char *a = cJSON_GetStringValue(cJSON_GetObjectItem(d, "gfx_target"));
        if (a && !strstr(hw, a))
            sc_fmt(hw + strlen(hw), sizeof hw - strlen(hw), "%s%s", hw[0] ? "," : "", a);
    }
    cJSON_ArrayForEach (d, r->devices) {
        const char *a = cJSON_GetStringValue(cJSON_GetObjectItem(d, "arch"));
        if (a && !strstr(rt, a))
            sc_fmt(rt + strlen(rt), sizeof rt - strlen(rt), "%s%s", rt[0] ? "," : "", a);
    }
    char *clean = sc_redact_value(ov);
    sc_finding(r->res, "hip.arch-overridden", SC_SEV_WARN,
               "unset HSA_OVERRIDE_GFX_VERSION unless you know the code you run matches this "
               "device; prefer a build that targets the device's own architecture",
               "HSA_OVERRIDE_GFX_VERSION=%s: the runtime reports %s, the hardware is %s",
               clean ? clean : "?", rt[0] ? rt : "no arch",
               hw[0] ? hw : "unknown (driver layer has no devices)");
    free(clean);
}

/* Count and PCI addresses of the runtime's devices against the driver layer's. */
static void check_against_driver(hip_run *r)
{
    const cJSON *devs = driver_devices(r), *d;
    if (!devs) {
        sc_fact_null(r->res->facts, "driver_agrees", "driver.amd has no devices to compare with");
        return;
    }
    sc_buf missing;
    sc_buf_init(&missing);
    cJSON_ArrayForEach (d, r->devices) {
        const char *pci = cJSON_GetStringValue(cJSON_GetObjectItem(d, "pci_address"));
        bool found = false;
        const cJSON *k;
        cJSON_ArrayForEach (k, devs) {
            const char *kp = cJSON_GetStringValue(cJSON_GetObjectItem(k, "pci_address"));
            found = found || (pci && kp && strcasecmp(pci, kp) == 0);
        }
        if (pci && !found)
            sc_buf_printf(&missing, "%s%s", missing.len ? ", " : "", pci);
    }
    int nd = cJSON_GetArraySize(devs);
    bool agree = nd == r->count && !missing.len;
    cJSON_AddBoolToObject(r->res->facts, "driver_agrees", agree);
    if (!agree) {
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

/* ---- one device's identity ---- */

static void note_bad(hip_run *r, int dev, const char *what)
{
    sc_buf_printf(&r->bad, "%sdevice %d: %s", r->bad.len ? "; " : "", dev, what);
}

static void device_name(hip_run *r, int i, const sc_hip_props *p, cJSON *o)
{
    char raw[300] = {0}, name[256] = "";
    if (r->fns.device_get_name && r->fns.device_get_name(raw, 256, i) == 0) {
        if (strnlen(raw, 256) == 256)
            note_bad(r, i, "name not terminated");
        else
            sc_hip_copy_text(name, sizeof name, raw, 255, "");
    }
    if (!name[0] && p && !p->name_unterminated)
        snprintf(name, sizeof name, "%s", p->name);
    sc_fact_str(o, "name", name[0] ? name : NULL, "the runtime gave no name");
}

static void device_arch(hip_run *r, int i, const sc_hip_props *p, cJSON *o)
{
    sc_hip_arch a;
    if (!p) {
        sc_fact_null(o, "arch", "the runtime has no hipGetDeviceProperties");
    } else if (p->arch_unterminated || sc_hip_arch_parse(p->arch, &a) < 0) {
        note_bad(r, i, p->arch_unterminated ? "arch name not terminated" : "arch name malformed");
        sc_fact_null(o, "arch", "the runtime gave a malformed gcnArchName \"%.64s\"", p->arch);
    } else {
        cJSON_AddStringToObject(o, "arch", p->arch);
    }
}

static void device_int_attr(hip_run *r, int i, int attr, const char *key, int lo, int hi, cJSON *o)
{
    int v = 0, rc = r->fns.device_get_attribute(&v, attr, i);
    if (rc != 0) {
        char d[256];
        sc_hip_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, key, "hipDeviceGetAttribute(%d): %s", attr, d);
    } else if (v < lo || v > hi) {
        char what[96];
        sc_fmt(what, sizeof what, "%s %d", key, v);
        note_bad(r, i, what);
        sc_fact_null(o, key, "impossible value %d", v);
    } else {
        cJSON_AddNumberToObject(o, key, v);
    }
}

static void device_memory_total(hip_run *r, int i, cJSON *o)
{
    size_t bytes = 0;
    int rc = r->fns.device_total_mem(&bytes, i);
    if (rc != 0) {
        char d[256];
        sc_hip_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, "total_memory_bytes", "hipDeviceTotalMem: %s", d);
    } else if (bytes == 0 || bytes > MAX_MEMORY) {
        char what[96];
        sc_fmt(what, sizeof what, "total memory %zu bytes", bytes);
        note_bad(r, i, what);
        sc_fact_null(o, "total_memory_bytes", "impossible size %zu", bytes);
    } else {
        cJSON_AddNumberToObject(o, "total_memory_bytes", (double)bytes);
    }
}

static void device_pci(hip_run *r, int i, cJSON *o)
{
    char raw[80] = {0}, pci[32];
    if (r->fns.device_get_pci_bus_id && r->fns.device_get_pci_bus_id(raw, 64, i) == 0 &&
        sc_hip_pci_normalize(raw, pci, sizeof pci) == 0) {
        cJSON_AddStringToObject(o, "pci_address", pci);
        return;
    }
    const sc_hip_attr_ids *ids = sc_hip_attr_ids_for(r->version);
    int dom = 0, bus = -1, dev = -1;
    if ((ids->pci_domain >= 0 && r->fns.device_get_attribute(&dom, ids->pci_domain, i) != 0) ||
        r->fns.device_get_attribute(&bus, ids->pci_bus, i) != 0 ||
        r->fns.device_get_attribute(&dev, ids->pci_device, i) != 0 || bus < 0 || bus > 255 ||
        dev < 0 || dev > 31 || dom < 0 || dom > 0xffff) {
        if (raw[0])
            note_bad(r, i, "PCI bus id malformed");
        sc_fact_null(o, "pci_address",
                     "neither hipDeviceGetPCIBusId nor the PCI attributes gave "
                     "a valid address");
        return;
    }
    sc_hip_pci_format(pci, sizeof pci, dom, bus, dev, 0);
    cJSON_AddStringToObject(o, "pci_address", pci);
}

/* Calls the properties function into a zeroed buffer far larger than any known layout. */
static bool device_props(hip_run *r, int i, sc_hip_props *p)
{
    bool r0600 = !r->fns.get_device_properties && r->fns.get_device_properties_r0600;
    int (*fn)(void *, int) =
        r0600 ? r->fns.get_device_properties_r0600 : r->fns.get_device_properties;
    unsigned char *buf = fn ? calloc(1, SC_HIP_PROPS_BUF) : NULL;
    bool ok = buf && fn(buf, i) == 0 && sc_hip_props_read(buf, SC_HIP_PROPS_BUF, r0600, p) == 0;
    free(buf);
    return ok;
}

static cJSON *read_device(hip_run *r, int i)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "index", i);
    sc_hip_props props;
    bool have = device_props(r, i, &props);
    device_name(r, i, have ? &props : NULL, o);
    device_arch(r, i, have ? &props : NULL, o);
    device_memory_total(r, i, o);
    const sc_hip_attr_ids *ids = sc_hip_attr_ids_for(r->version);
    device_int_attr(r, i, ids->compute_units, "compute_units", 1, 1024, o);
    device_int_attr(r, i, ids->warp_size, "warp_size", 16, 128, o);
    device_pci(r, i, o);
    cJSON_AddItemToArray(r->devices, o);
    return o;
}

/* ---- memory baseline ---- */

/* The driver layer's gpu_id for the device at this PCI address, or 0. */
static unsigned long long driver_gpu_id(const hip_run *r, const char *pci)
{
    const cJSON *d;
    cJSON_ArrayForEach (d, driver_devices(r)) {
        const char *kp = cJSON_GetStringValue(cJSON_GetObjectItem(d, "pci_address"));
        const cJSON *id = cJSON_GetObjectItem(d, "gpu_id");
        if (pci && kp && strcasecmp(pci, kp) == 0 && cJSON_IsNumber(id) && id->valuedouble > 0)
            return (unsigned long long)id->valuedouble;
    }
    return 0;
}

/* Adds the other processes using the device (KFD proc) to mem; returns their bytes. */
static unsigned long long other_users(hip_run *r, cJSON *dev, cJSON *mem, char *pids, size_t size)
{
    unsigned long long gpu_id =
        driver_gpu_id(r, cJSON_GetStringValue(cJSON_GetObjectItem(dev, "pci_address")));
    sc_hip_vram_user users[32];
    int n = gpu_id ? sc_hip_kfd_vram_users(r->ctx->root, gpu_id, getpid(), users, 32) : -1;
    if (n < 0) {
        sc_fact_null(mem, "other_processes",
                     gpu_id ? "KFD proc directory unreadable" : "no gpu_id from the driver layer");
        return 0;
    }
    cJSON *arr = cJSON_AddArrayToObject(mem, "other_processes");
    unsigned long long sum = 0;
    pids[0] = '\0';
    for (int k = 0; k < n && arr; k++) {
        cJSON *u = cJSON_CreateObject();
        cJSON_AddNumberToObject(u, "pid", users[k].pid);
        cJSON_AddStringToObject(u, "command", users[k].comm);
        cJSON_AddNumberToObject(u, "vram_bytes", (double)users[k].vram_bytes);
        cJSON_AddItemToArray(arr, u);
        sum += users[k].vram_bytes;
        sc_fmt(pids + strlen(pids), size - strlen(pids), "%s%d (%s)", pids[0] ? ", " : "",
               users[k].pid, users[k].comm);
    }
    return sum;
}

static void memory_baseline(hip_run *r, int i, cJSON *dev)
{
    cJSON *mem = cJSON_AddObjectToObject(dev, "memory");
    size_t free_b = 0, total_b = 0;
    int rc = r->fns.set_device(i);
    if (rc == 0)
        rc = r->fns.mem_get_info(&free_b, &total_b);
    if (rc != 0 || total_b == 0 || total_b > MAX_MEMORY || free_b > total_b) {
        char d[256] = "impossible values";
        if (rc != 0)
            sc_hip_describe(&r->fns, rc, d, sizeof d);
        else
            note_bad(r, i, "hipMemGetInfo free/total impossible");
        sc_fact_null(mem, "free_bytes", "hipMemGetInfo: %s", d);
        return;
    }
    cJSON_AddNumberToObject(mem, "free_bytes", (double)free_b);
    cJSON_AddNumberToObject(mem, "total_bytes", (double)total_b);
    char pids[512];
    unsigned long long others = other_users(r, dev, mem, pids, sizeof pids);
    if (!others && total_b - free_b > total_b / 2)
        others = total_b - free_b; /* no per-process view: the runtime's own numbers */
    if (others > total_b / 2)
        sc_finding(r->res, "hip.memory-in-use", SC_SEV_WARN,
                   "wait for the other jobs or pick another device (HIP_VISIBLE_DEVICES); "
                   "kill leftover processes you own",
                   "device %d: %llu of %zu MiB used by others (%s); %zu MiB free", i, others >> 20,
                   total_b >> 20, pids[0] ? pids : "processes unknown", free_b >> 20);
}

/* ---- work: allocate, copy, compile, launch ---- */

/* A runtime error during the work becomes its finding; what says which step. */
static void work_error(hip_run *r, int dev, const char *what, int rc)
{
    char d[256];
    sc_hip_describe(&r->fns, rc, d, sizeof d);
    if (rc == SC_HIP_ERR_OUT_OF_MEMORY || rc == 1052)
        sc_finding(r->res, "hip.out-of-memory", SC_SEV_ERROR,
                   "free device memory (other processes, see memory.other_processes) or use "
                   "another device",
                   "device %d: %s: %s", dev, what, d);
    else if (rc == SC_HIP_ERR_NO_BINARY_FOR_GPU)
        sc_finding(r->res, "hip.no-binary-for-gpu", SC_SEV_ERROR,
                   "use a ROCm/DTK release that supports this architecture; do not force another "
                   "with HSA_OVERRIDE_GFX_VERSION",
                   "device %d: %s: %s", dev, what, d);
    else if (strstr(what, "hipMemcpy"))
        sc_finding(r->res, "hip.copy-failed", SC_SEV_ERROR,
                   "check the kernel log for GPU faults (dmesg) and the driver layer",
                   "device %d: %s: %s", dev, what, d);
    else
        sc_finding(r->res, "hip.kernel-failed", SC_SEV_ERROR,
                   "check the kernel log for GPU faults (dmesg); run a ROCm sample to confirm",
                   "device %d: %s: %s", dev, what, d);
}

/* Host -> device -> host with a known pattern; returns true when the bytes came back. */
static bool copy_check(hip_run *r, int dev, cJSON *o)
{
    unsigned char *src = malloc(PATTERN_BYTES), *back = calloc(1, PATTERN_BYTES);
    void *d = NULL;
    bool ok = false;
    int rc = src && back ? r->fns.malloc_(&d, PATTERN_BYTES) : -1;
    if (!src || !back)
        sc_result_error(r->res, "out of host memory");
    else if (rc != 0)
        work_error(r, dev, "hipMalloc(1 MiB)", rc);
    else {
        for (size_t k = 0; k < PATTERN_BYTES; k++)
            src[k] = (unsigned char)((k * 2654435761u) >> 13);
        if ((rc = r->fns.memcpy_(d, src, PATTERN_BYTES, SC_HIP_MEMCPY_H2D)) != 0)
            work_error(r, dev, "hipMemcpy host to device", rc);
        else if ((rc = r->fns.memcpy_(back, d, PATTERN_BYTES, SC_HIP_MEMCPY_D2H)) != 0)
            work_error(r, dev, "hipMemcpy device to host", rc);
        else if (!(ok = memcmp(src, back, PATTERN_BYTES) == 0))
            sc_finding(r->res, "hip.wrong-result", SC_SEV_ERROR,
                       "the device or its memory is faulty or misconfigured: check dmesg and "
                       "the driver version",
                       "device %d: a 1 MiB pattern copied host -> device -> host came back "
                       "different",
                       dev);
    }
    if (d)
        r->fns.free_(d);
    free(src);
    free(back);
    cJSON_AddBoolToObject(o, "copy_verified", ok);
    return rc == 0;
}

static bool load_hiprtc(hip_run *r)
{
    sc_error err = {0};
    if (sc_dl_bind(&r->lib, sc_hiprtc_symbols, sc_hiprtc_symbol_count, &r->rtc, &err) == 0) {
        cJSON_AddStringToObject(r->runtime, "hiprtc", r->lib.realpath);
        return true;
    }
    memset(&r->rtc, 0, sizeof r->rtc);
    char dir[PATH_MAX], c[4][PATH_MAX + 32];
    snprintf(dir, sizeof dir, "%s", r->lib.realpath);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    sc_fmt(c[0], sizeof c[0], "%s/libhiprtc.so", dir);
    sc_fmt(c[1], sizeof c[1], "%s/libhiprtc.so.7", dir);
    sc_fmt(c[2], sizeof c[2], "%s/libhiprtc.so.6", dir);
    sc_fmt(c[3], sizeof c[3], "%s/libhiprtc.so.5", dir);
    const char *cands[] = {c[0],
                           c[1],
                           c[2],
                           c[3],
                           "libhiprtc.so",
                           "libhiprtc.so.7",
                           "libhiprtc.so.6",
                           "libhiprtc.so.5",
                           NULL};
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

/* hiprtc's error string, or its number. */
static void rtc_describe(const hip_run *r, int rc, char *buf, size_t size)
{
    char text[128];
    sc_hip_copy_text(text, sizeof text,
                     r->rtc.get_error_string ? r->rtc.get_error_string(rc) : NULL, 127,
                     "HIPRTC_ERROR");
    sc_fmt(buf, size, "%s (%d)", text, rc);
}

/* The compiler's log, one line, its last part. */
static void rtc_log(const hip_run *r, void *prog, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    if (r->rtc.get_program_log_size(prog, &n) != 0 || n == 0 || n > (1u << 24))
        return;
    char *log = calloc(1, n + 1);
    if (!log || r->rtc.get_program_log(prog, log) != 0) {
        free(log);
        return;
    }
    for (char *p = log; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t len = strnlen(log, n);
    const char *tail = len > size - 1 ? log + len - (size - 1) : log;
    sc_hip_copy_text(buf, size, tail, size - 1, "");
    free(log);
}

/* Compiles the kernel for arch with hiprtc; returns the code object (malloc'd) or NULL. */
static char *compile_kernel(hip_run *r, int dev, const char *arch, size_t *size)
{
    void *prog = NULL;
    char opt[300], d[160], log[600];
    const char *opts[1] = {opt};
    sc_fmt(opt, sizeof opt, "--gpu-architecture=%s", arch);
    int rc = r->rtc.create_program(&prog, kernel_source, "sc_double.hip", 0, NULL, NULL);
    if (rc == 0 && (rc = r->rtc.compile_program(prog, arch[0] ? 1 : 0, opts)) != 0)
        rtc_log(r, prog, log, sizeof log);
    char *code = NULL;
    if (rc == 0 && (rc = r->rtc.get_code_size(prog, size)) == 0) {
        if (*size == 0 || *size > MAX_CODE_BYTES)
            note_bad(r, dev, "hiprtc code size impossible");
        else if ((code = malloc(*size)) && (rc = r->rtc.get_code(prog, code)) != 0) {
            free(code);
            code = NULL;
        }
    }
    if (rc != 0) {
        rtc_describe(r, rc, d, sizeof d);
        sc_finding(r->res, "hip.kernel-failed", SC_SEV_ERROR,
                   "the runtime compiler does not work for this device: check that hiprtc and "
                   "the device libraries (amdgcn bitcode) come from the same release",
                   "device %d: hiprtc could not compile a kernel for %s: %s%s%s", dev,
                   arch[0] ? arch : "the default arch", d, log[0] && rc == 6 ? ": " : "",
                   rc == 6 ? log : "");
    }
    if (prog)
        r->rtc.destroy_program(&prog);
    return code;
}

/* The code object for arch, compiled once. */
static const code_cache *code_for(hip_run *r, int dev, const char *arch, cJSON *timing)
{
    for (int k = 0; k < r->code_count; k++)
        if (strcmp(r->codes[k].arch, arch) == 0)
            return &r->codes[k];
    if (r->code_count >= (int)(sizeof r->codes / sizeof r->codes[0]))
        return NULL;
    code_cache *c = &r->codes[r->code_count++];
    double t = sc_now_ms();
    snprintf(c->arch, sizeof c->arch, "%s", arch);
    c->code = compile_kernel(r, dev, arch, &c->size);
    if (c->code)
        cJSON_AddNumberToObject(timing, "compile_ms", sc_now_ms() - t);
    return c;
}

typedef struct {
    void *x, *y;
    int n, pad;
} kernel_args;

/* Launches f on n elements and waits; returns the runtime's code. */
static int launch(hip_run *r, void *f, kernel_args *args)
{
    size_t args_size = sizeof *args;
    void *extra[] = {(void *)1 /* BUFFER_POINTER */, args, (void *)2 /* BUFFER_SIZE */, &args_size,
                     (void *)3 /* END */};
    int rc = r->fns.module_launch_kernel(f, 1, 1, 1, KERNEL_N, 1, 1, 0, NULL, NULL, extra);
    return rc ? rc : r->fns.device_synchronize();
}

/* Verifies y = 2x; fills the result array. */
static bool verify_result(hip_run *r, int dev, const float *y, cJSON *o)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "kernel_result");
    bool ok = true;
    for (int k = 0; k < KERNEL_N; k++) {
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(y[k]));
        ok = ok && y[k] == 2.0f * (float)k;
    }
    if (!ok)
        sc_finding(r->res, "hip.wrong-result", SC_SEV_ERROR,
                   "the device computes wrong numbers: check HSA_OVERRIDE_GFX_VERSION, the "
                   "firmware and dmesg for GPU faults",
                   "device %d: the kernel x*2 on x=0..7 gave %g %g %g %g %g %g %g %g", dev, y[0],
                   y[1], y[2], y[3], y[4], y[5], y[6], y[7]);
    return ok;
}

/* Input to the device, two launches (first, then steady state), result back; returns the
 * runtime's code, with the failing step in *step. */
static int kernel_round_trip(hip_run *r, void *f, float *y, const char **step, cJSON *timing)
{
    float x[KERNEL_N];
    for (int k = 0; k < KERNEL_N; k++)
        x[k] = (float)k;
    void *dx = NULL, *dy = NULL;
    kernel_args args = {0};
    double t;
    int rc;
    *step = "hipMalloc";
    if ((rc = r->fns.malloc_(&dx, sizeof x)) != 0 || (rc = r->fns.malloc_(&dy, sizeof x)) != 0)
        goto out;
    *step = "hipMemcpy of the input";
    if ((rc = r->fns.memcpy_(dx, x, sizeof x, SC_HIP_MEMCPY_H2D)) != 0)
        goto out;
    args = (kernel_args){dx, dy, KERNEL_N, 0};
    *step = "hipModuleLaunchKernel (first)";
    t = sc_now_ms();
    if ((rc = launch(r, f, &args)) != 0)
        goto out;
    cJSON_AddNumberToObject(timing, "first_launch_ms", sc_now_ms() - t);
    *step = "hipModuleLaunchKernel (second)";
    t = sc_now_ms();
    if ((rc = launch(r, f, &args)) != 0)
        goto out;
    cJSON_AddNumberToObject(timing, "steady_launch_ms", sc_now_ms() - t);
    *step = "hipMemcpy of the result";
    rc = r->fns.memcpy_(y, dy, KERNEL_N * sizeof *y, SC_HIP_MEMCPY_D2H);
out:
    if (dx)
        r->fns.free_(dx);
    if (dy)
        r->fns.free_(dy);
    return rc;
}

static void run_kernel(hip_run *r, int dev, void *module, cJSON *o, cJSON *timing)
{
    void *f = NULL;
    float y[KERNEL_N] = {0};
    const char *step = "hipModuleGetFunction";
    int rc = r->fns.module_get_function(&f, module, "sc_double");
    if (rc == 0)
        rc = kernel_round_trip(r, f, y, &step, timing);
    if (rc != 0)
        work_error(r, dev, step, rc);
    bool ok = rc == 0 && verify_result(r, dev, y, o);
    cJSON_AddBoolToObject(o, "kernel_verified", ok);
}

static void kernel_check(hip_run *r, int dev, cJSON *o)
{
    const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(o, "arch"));
    cJSON *timing = cJSON_AddObjectToObject(o, "timing");
    const code_cache *c = code_for(r, dev, arch ? arch : "", timing);
    if (!c || !c->code) {
        cJSON_AddBoolToObject(o, "kernel_verified", false);
        return;
    }
    void *module = NULL;
    double t = sc_now_ms();
    int rc = r->fns.module_load_data(&module, c->code);
    cJSON_AddNumberToObject(timing, "module_load_ms", sc_now_ms() - t);
    if (rc != 0) {
        work_error(r, dev, "hipModuleLoadData", rc);
        cJSON_AddBoolToObject(o, "kernel_verified", false);
        return;
    }
    run_kernel(r, dev, module, o, timing);
    r->fns.module_unload(module);
}

static void work_on_devices(hip_run *r)
{
    r->have_rtc = load_hiprtc(r);
    cJSON *o;
    int dev = 0;
    cJSON_ArrayForEach (o, r->devices) {
        if (dev >= WORK_DEVICES)
            break;
        int rc = r->fns.set_device(dev);
        if (rc != 0)
            work_error(r, dev, "hipSetDevice", rc);
        else if (copy_check(r, dev, o) && r->have_rtc)
            kernel_check(r, dev, o);
        dev++;
    }
}

/* ---- the probe ---- */

static void report_bad_answers(hip_run *r)
{
    if (r->bad.len)
        sc_finding(r->res, "hip.invalid-answer", SC_SEV_ERROR,
                   "the runtime library is broken or is not the HIP runtime it claims to be: "
                   "reinstall it, and check which file was loaded (runtime.realpath)",
                   "the HIP runtime returned impossible values: %s", r->bad.data);
}

static void run_active(hip_run *r)
{
    r->runtime = cJSON_AddObjectToObject(r->res->facts, "runtime");
    r->timing = cJSON_AddObjectToObject(r->res->facts, "timing");
    if (!r->runtime || !r->timing || !load_runtime(r) || !bind_runtime(r))
        return;
    r->count = init_and_count(r);
    r->devices = cJSON_AddArrayToObject(r->res->facts, "devices");
    if (r->count > 0 && r->devices) {
        for (int i = 0; i < r->count; i++)
            read_device(r, i);
        check_against_driver(r);
        cJSON *o;
        int i = 0;
        cJSON_ArrayForEach (o, r->devices)
            memory_baseline(r, i++, o);
        work_on_devices(r);
    }
    check_arch_override(r);
}

static void free_run(hip_run *r)
{
    for (int k = 0; k < r->code_count; k++)
        free(r->codes[k].code);
    sc_buf_free(&r->bad);
    /* the runtimes stay mapped: unloading a GPU runtime at exit can hang or crash, and the child
     * exits right after */
    free(r->inv);
}

/* Starts a run: the inventory is always the first step. Returns false when out of memory. */
static bool start_run(hip_run *r, const sc_ctx *ctx, sc_result *res)
{
    *r = (hip_run){.ctx = ctx, .res = res, .count = -1};
    sc_buf_init(&r->bad);
    r->inv = calloc(1, sizeof *r->inv);
    if (!r->inv) {
        sc_result_error(res, "out of memory");
        return false;
    }
    sc_hip_env env = {getenv("LD_LIBRARY_PATH"), getenv("ROCM_PATH"), getenv("HIP_PATH")};
    run_inventory(r, &env);
    return true;
}

/* The passive part alone: what the runner records when the probe is gated or offline. */
static void inventory(const sc_ctx *ctx, sc_result *res)
{
    hip_run r;
    if (!start_run(&r, ctx, res))
        return;
    sc_fact_null(res->facts, "runtime", "the runtime was not loaded (%s)",
                 ctx->offline ? "offline (--sysroot)" : "the active part did not run or did not finish");
    sc_fact_null(res->facts, "devices", "the runtime was not loaded");
    report_not_found(&r, false);
    free_run(&r);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    hip_run r;
    if (!start_run(&r, ctx, res))
        return;
    run_active(&r);
    report_not_found(&r, r.lib.handle && !ctx->opt->hip_library);
    report_bad_answers(&r);
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
