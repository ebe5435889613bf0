/* runtime.cuda: which CUDA toolkits and which driver library (libcuda.so.1), and does the CUDA
 * driver API see and drive the devices. The inventory is passive and always runs, offline too;
 * the active part (load, init, enumerate, memory, copy, compile with nvrtc and launch) runs only
 * live, in the isolated child. libcuda is loaded by soname, as every CUDA program loads it, so
 * LD_LIBRARY_PATH overrides it the same way. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "sc_cuda.h"
#include "sc_cuda_inventory.h"
#include "sc_redact.h"
#include "sc_util.h"

#define MAX_DEVICES 1024        /* more than this is a garbage answer, not a machine */
#define WORK_DEVICES 16         /* devices the copy/kernel check runs on */
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

typedef struct {
    const sc_ctx *ctx;
    sc_result *res;
    sc_cuda_inventory *inv;
    sc_dl_lib lib, rtc_lib;
    sc_cuda_fns fns;
    sc_nvrtc_fns rtc;
    bool have_rtc;
    int count;
    int handles[WORK_DEVICES]; /* CUdevice of each index, -1 when cuDeviceGet failed */
    void *contexts[WORK_DEVICES];
    cJSON *driver;  /* facts.driver_api */
    cJSON *devices; /* facts.devices */
    sc_buf bad;     /* impossible answers, reported together as cuda.invalid-answer */
    double start_ms;
} cuda_run;

/* ---- inventory (passive) ---- */

static void toolkit_facts(cuda_run *r)
{
    cJSON *arr = cJSON_AddArrayToObject(r->res->facts, "toolkits");
    for (int i = 0; i < r->inv->count && arr; i++) {
        const sc_cuda_toolkit *tk = &r->inv->toolkits[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddStringToObject(o, "root", tk->root);
        sc_fact_str(o, "version", tk->version[0] ? tk->version : NULL, tk->version_error);
        cJSON *via = cJSON_AddArrayToObject(o, "via");
        for (int k = 0; k < tk->via_count && via; k++)
            cJSON_AddItemToArray(via, cJSON_CreateString(tk->via[k]));
        cJSON_AddItemToArray(arr, o);
    }
    if (!r->inv->link_present)
        sc_fact_null(r->res->facts, "cuda_link", "/usr/local/cuda is not a link");
    else
        sc_fact_str(r->res->facts, "cuda_link", r->inv->link_target[0] ? r->inv->link_target : NULL,
                    "/usr/local/cuda is a dangling link");
    sc_fact_str(r->res->facts, "toolkit_version", sc_cuda_inventory_main_version(r->inv),
                "no toolkit with a readable version");
}

static void libcuda_facts(cuda_run *r)
{
    const sc_cuda_lib_pick *p = &r->inv->libcuda;
    if (!p->found) {
        sc_fact_null(r->res->facts, "driver_library",
                     "no libcuda.so.1 in LD_LIBRARY_PATH, the ld.so.cache or the default "
                     "directories");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(r->res->facts, "driver_library");
    if (!o)
        return;
    cJSON_AddStringToObject(o, "path", p->path);
    cJSON_AddStringToObject(o, "realpath", p->realpath);
    cJSON_AddStringToObject(o, "found_via", p->found_via);
    sc_fact_str(o, "driver_version", p->driver_version[0] ? p->driver_version : NULL,
                "the file name carries no driver version");
    cJSON_AddBoolToObject(o, "is_stub", p->is_stub);
}

static void run_inventory(cuda_run *r)
{
    sc_cuda_env env = {getenv("LD_LIBRARY_PATH"), getenv("CUDA_HOME"), getenv("CUDA_PATH")};
    sc_cuda_inventory_collect(r->ctx->root, &env, r->inv);
    toolkit_facts(r);
    libcuda_facts(r);
}

/* ---- the driver layer's view ---- */

static const cJSON *driver_devices(const cuda_run *r)
{
    const cJSON *d = cJSON_GetObjectItem(sc_ctx_facts(r->ctx, "driver.nvidia"), "devices");
    return cJSON_IsArray(d) && cJSON_GetArraySize(d) > 0 ? d : NULL;
}

static const char *driver_version(const cuda_run *r)
{
    return cJSON_GetStringValue(
        cJSON_GetObjectItem(sc_ctx_facts(r->ctx, "driver.nvidia"), "driver_version"));
}

/* "driver.nvidia sees 2 GPU(s) (NVIDIA H200 at 0000:18:00.0, ...)" or its status. */
static void driver_evidence(const cuda_run *r, char *buf, size_t size)
{
    const cJSON *devs = driver_devices(r), *d;
    if (!devs) {
        sc_status st = sc_ctx_status(r->ctx, "driver.nvidia");
        sc_fmt(buf, size, "driver.nvidia: %s",
               st == SC_STATUS_UNSET ? "did not run" : sc_status_name(st));
        return;
    }
    sc_buf b;
    sc_buf_init(&b);
    cJSON_ArrayForEach (d, devs) {
        const char *model = cJSON_GetStringValue(cJSON_GetObjectItem(d, "model"));
        const char *pci = cJSON_GetStringValue(cJSON_GetObjectItem(d, "pci_address"));
        sc_buf_printf(&b, "%s%s at %s", b.len ? ", " : "", model ? model : "?", pci ? pci : "?");
    }
    sc_fmt(buf, size, "driver.nvidia sees %d GPU(s) (%s)", cJSON_GetArraySize(devs),
           b.data ? b.data : "");
    sc_buf_free(&b);
}

/* CUDA_VISIBLE_DEVICES as "CUDA_VISIBLE_DEVICES=..." (scrubbed), "" when unset. */
static bool visibility_var(char *buf, size_t size)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    buf[0] = '\0';
    if (!v)
        return false;
    char *clean = sc_redact_value(v);
    sc_fmt(buf, size, "CUDA_VISIBLE_DEVICES=\"%s\"", clean ? clean : "?");
    free(clean);
    return true;
}

/* ---- load, bind, versions ---- */

static bool load_driver(cuda_run *r)
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
static void check_library_version(cuda_run *r)
{
    char lib_version[64];
    const char *kernel = driver_version(r);
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

static bool bind_driver(cuda_run *r)
{
    sc_error err = {0};
    if (sc_dl_bind(&r->lib, sc_cuda_symbols, sc_cuda_symbol_count, &r->fns, &err) < 0) {
        sc_finding(r->res, "cuda.init-failed", SC_SEV_ERROR,
                   "the library is not a working libcuda (or is very old): check which file was "
                   "loaded (driver_api.realpath) and reinstall the driver",
                   "%s in %s", err.message, r->lib.realpath);
        return false;
    }
    int v = 0, rc = r->fns.driver_get_version(&v);
    char text[32];
    if (rc == 0 && sc_cuda_version_decode(v, text, sizeof text) == 0) {
        cJSON_AddStringToObject(r->driver, "cuda_version", text);
        cJSON_AddNumberToObject(r->driver, "cuda_version_raw", v);
    } else if (rc == 0) {
        sc_fact_null(r->driver, "cuda_version", "cuDriverGetVersion gave %d", v);
        sc_buf_printf(&r->bad, "%sdriver version %d", r->bad.len ? "; " : "", v);
    } else {
        sc_fact_null(r->driver, "cuda_version", "cuDriverGetVersion failed with %d", rc);
    }
    check_library_version(r);
    return true;
}

/* ---- init and count ---- */

static void insufficient_finding(cuda_run *r, const char *desc)
{
    const char *drv = cJSON_GetStringValue(cJSON_GetObjectItem(r->driver, "cuda_version"));
    const char *tk = sc_cuda_inventory_main_version(r->inv);
    sc_finding(r->res, "cuda.insufficient-driver", SC_SEV_ERROR,
               "install a driver that supports this CUDA release (see NVIDIA's CUDA toolkit/driver "
               "table), or use a toolkit and framework build no newer than the driver; a "
               "cuda-compat package only helps on data-centre GPUs",
               "cuInit: %s; the driver supports CUDA %s, the toolkit is %s (kernel module %s)",
               desc, drv ? drv : "unknown", tk ? tk : "unknown",
               driver_version(r) ? driver_version(r) : "unknown");
}

static void no_device_finding(cuda_run *r, const char *why)
{
    char evidence[1024], var[300];
    driver_evidence(r, evidence, sizeof evidence);
    if (visibility_var(var, sizeof var) && driver_devices(r))
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

/* cuInit then cuDeviceGetCount; returns the count, or -1 when the probe must stop. */
static int init_and_count(cuda_run *r)
{
    char desc[256];
    int rc = r->fns.init(0);
    cJSON_AddNumberToObject(r->driver, "load_init_ms", sc_now_ms() - r->start_ms);
    if (rc != 0) {
        sc_cuda_describe(&r->fns, rc, desc, sizeof desc);
        if (rc == SC_CU_ERR_INSUFFICIENT_DRIVER || rc == SC_CU_ERR_SYSTEM_DRIVER_MISMATCH ||
            rc == SC_CU_ERR_COMPAT_NOT_SUPPORTED)
            insufficient_finding(r, desc);
        else if (rc == SC_CU_ERR_NO_DEVICE)
            no_device_finding(r, desc);
        else
            sc_finding(r->res, "cuda.init-failed", SC_SEV_ERROR,
                       rc == SC_CU_ERR_STUB_LIBRARY
                           ? "a toolkit's lib64/stubs directory is in the library path: remove it "
                             "from LD_LIBRARY_PATH so the driver's real libcuda is loaded"
                           : "check the kernel log for NVRM errors and the driver layer; run "
                             "nvidia-smi for the driver's own view",
                       "cuInit: %s (%s)", desc, r->lib.realpath);
        return -1;
    }
    int count = -1;
    rc = r->fns.device_get_count(&count);
    if (rc != 0 || count < 0 || count > MAX_DEVICES) {
        if (rc == 0)
            sc_buf_printf(&r->bad, "%sdevice count %d", r->bad.len ? "; " : "", count);
        sc_cuda_describe(&r->fns, rc, desc, sizeof desc);
        sc_fact_null(r->res->facts, "device_count", "cuDeviceGetCount: %s",
                     rc ? desc : "impossible count");
        return -1;
    }
    cJSON_AddNumberToObject(r->res->facts, "device_count", count);
    if (count == 0)
        no_device_finding(r, "cuDeviceGetCount gave 0");
    return count > 0 ? count : -1;
}

/* ---- one device's identity ---- */

static void note_bad(cuda_run *r, int dev, const char *what)
{
    sc_buf_printf(&r->bad, "%sdevice %d: %s", r->bad.len ? "; " : "", dev, what);
}

static void device_name(cuda_run *r, int dev, int handle, cJSON *o)
{
    char raw[300] = {0}, name[256] = "";
    int rc = r->fns.device_get_name(raw, 256, handle);
    if (rc == 0 && strnlen(raw, 256) == 256)
        note_bad(r, dev, "name not terminated");
    else if (rc == 0)
        sc_cuda_copy_text(name, sizeof name, raw, 255, "");
    sc_fact_str(o, "name", name[0] ? name : NULL, "cuDeviceGetName gave no name");
}

static int device_attr(cuda_run *r, int dev, int handle, int attr, const char *key, int lo, int hi,
                       cJSON *o)
{
    int v = 0, rc = r->fns.device_get_attribute(&v, attr, handle);
    if (rc != 0) {
        char d[256];
        sc_cuda_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, key, "cuDeviceGetAttribute(%d): %s", attr, d);
        return -1;
    }
    if (v < lo || v > hi) {
        char what[96];
        sc_fmt(what, sizeof what, "%s %d", key, v);
        note_bad(r, dev, what);
        sc_fact_null(o, key, "impossible value %d", v);
        return -1;
    }
    cJSON_AddNumberToObject(o, key, v);
    return v;
}

static void device_memory_total(cuda_run *r, int dev, int handle, cJSON *o)
{
    size_t bytes = 0;
    int rc = r->fns.device_total_mem(&bytes, handle);
    if (rc != 0) {
        char d[256];
        sc_cuda_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, "total_memory_bytes", "cuDeviceTotalMem: %s", d);
    } else if (bytes == 0 || bytes > MAX_MEMORY) {
        note_bad(r, dev, "total memory impossible");
        sc_fact_null(o, "total_memory_bytes", "impossible size %zu", bytes);
    } else {
        cJSON_AddNumberToObject(o, "total_memory_bytes", (double)bytes);
    }
}

static void device_pci(cuda_run *r, int dev, int handle, cJSON *o)
{
    char raw[80] = {0}, pci[32];
    if (!r->fns.device_get_pci_bus_id || r->fns.device_get_pci_bus_id(raw, 64, handle) != 0) {
        sc_fact_null(o, "pci_address", "cuDeviceGetPCIBusId failed or is absent");
        return;
    }
    if (strnlen(raw, 64) == 64 || sc_cuda_pci_normalize(raw, pci, sizeof pci) < 0) {
        note_bad(r, dev, "PCI bus id malformed");
        sc_fact_null(o, "pci_address", "cuDeviceGetPCIBusId gave a malformed address");
        return;
    }
    cJSON_AddStringToObject(o, "pci_address", pci);
}

static void read_device(cuda_run *r, int i)
{
    cJSON *o = cJSON_CreateObject();
    int handle = -1;
    if (!o)
        return;
    cJSON_AddNumberToObject(o, "index", i);
    cJSON_AddItemToArray(r->devices, o);
    int rc = r->fns.device_get(&handle, i);
    if (rc != 0) {
        char d[256];
        sc_cuda_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, "name", "cuDeviceGet: %s", d);
        return;
    }
    if (i < WORK_DEVICES)
        r->handles[i] = handle;
    device_name(r, i, handle, o);
    int major = device_attr(r, i, handle, SC_CU_ATTR_CC_MAJOR, "cc_major", 1, 20, o);
    int minor = device_attr(r, i, handle, SC_CU_ATTR_CC_MINOR, "cc_minor", 0, 9, o);
    char sm[16];
    if (major > 0 && minor >= 0 && sc_cuda_sm_name(major, minor, sm, sizeof sm) == 0)
        cJSON_AddStringToObject(o, "arch", sm);
    else
        sc_fact_null(o, "arch", "no valid compute capability");
    device_attr(r, i, handle, SC_CU_ATTR_SM_COUNT, "sm_count", 1, 4096, o);
    device_attr(r, i, handle, SC_CU_ATTR_WARP_SIZE, "warp_size", 1, 128, o);
    device_memory_total(r, i, handle, o);
    device_pci(r, i, handle, o);
}

/* ---- cross-checks with the driver layer ---- */

static void check_against_driver(cuda_run *r)
{
    const cJSON *devs = driver_devices(r), *d, *k;
    if (!devs) {
        sc_fact_null(r->res->facts, "driver_agrees", "driver.nvidia has no devices to compare");
        return;
    }
    sc_buf missing;
    sc_buf_init(&missing);
    cJSON_ArrayForEach (d, r->devices) {
        const char *pci = cJSON_GetStringValue(cJSON_GetObjectItem(d, "pci_address"));
        bool found = false;
        cJSON_ArrayForEach (k, devs) {
            const char *kp = cJSON_GetStringValue(cJSON_GetObjectItem(k, "pci_address"));
            found = found || (pci && kp && strcasecmp(pci, kp) == 0);
        }
        if (pci && !found)
            sc_buf_printf(&missing, "%s%s", missing.len ? ", " : "", pci);
    }
    int nd = cJSON_GetArraySize(devs);
    bool agree = nd == r->count && !missing.len;
    char var[300];
    bool hidden = visibility_var(var, sizeof var);
    cJSON_AddBoolToObject(r->res->facts, "driver_agrees", agree);
    if (!agree && hidden && r->count < nd && !missing.len)
        sc_fact_str(r->res->facts, "hidden_by", var, NULL);
    else if (!agree)
        sc_finding(r->res, "cuda.device-mismatch", SC_SEV_WARN,
                   "check that libcuda and the kernel module come from the same driver, and "
                   "nvidia-smi for GPUs the driver could not initialise",
                   "driver.nvidia sees %d GPU(s), CUDA %d%s%s%s%s", nd, r->count,
                   missing.len ? "; not in the driver layer: " : "",
                   missing.data ? missing.data : "", hidden ? "; set: " : "", hidden ? var : "");
    sc_buf_free(&missing);
}

/* ---- memory baseline, copy, kernel ---- */

/* Makes device i's primary context current; returns the CUresult. */
static int use_device(cuda_run *r, int i)
{
    if (r->handles[i] < 0)
        return SC_CU_ERR_NO_DEVICE;
    int rc = r->contexts[i] ? 0 : r->fns.primary_ctx_retain(&r->contexts[i], r->handles[i]);
    return rc ? rc : r->fns.ctx_set_current(r->contexts[i]);
}

static void work_error(cuda_run *r, int dev, const char *what, int rc)
{
    char d[256];
    sc_cuda_describe(&r->fns, rc, d, sizeof d);
    if (strstr(what, "Memcpy") || strstr(what, "MemAlloc") || strstr(what, "context"))
        sc_finding(r->res, "cuda.copy-failed", SC_SEV_ERROR,
                   "check the kernel log for Xid errors (dmesg | grep NVRM), other processes "
                   "holding the GPU (nvidia-smi) and the driver layer",
                   "device %d: %s: %s", dev, what, d);
    else
        sc_finding(r->res, "cuda.kernel-failed", SC_SEV_ERROR,
                   rc == SC_CU_ERR_UNSUPPORTED_PTX_VERSION || rc == SC_CU_ERR_NO_BINARY_FOR_GPU
                       ? "the code was built by a newer compiler (nvrtc) than the driver "
                         "understands, or not for this GPU: update the driver or use the "
                         "toolkit release that matches it"
                       : "check the kernel log for Xid errors (dmesg | grep NVRM); run a CUDA "
                         "sample (deviceQuery, vectorAdd) to confirm",
                   "device %d: %s: %s", dev, what, d);
}

static void memory_baseline(cuda_run *r, int i, cJSON *dev)
{
    cJSON *mem = cJSON_AddObjectToObject(dev, "memory");
    size_t free_b = 0, total_b = 0;
    int rc = use_device(r, i);
    if (rc == 0)
        rc = r->fns.mem_get_info(&free_b, &total_b);
    if (rc != 0 || total_b == 0 || total_b > MAX_MEMORY || free_b > total_b) {
        char d[256] = "impossible values";
        if (rc != 0)
            sc_cuda_describe(&r->fns, rc, d, sizeof d);
        else
            note_bad(r, i, "cuMemGetInfo free/total impossible");
        sc_fact_null(mem, "free_bytes", "cuMemGetInfo: %s", d);
        return;
    }
    cJSON_AddNumberToObject(mem, "free_bytes", (double)free_b);
    cJSON_AddNumberToObject(mem, "total_bytes", (double)total_b);
    if (total_b - free_b > total_b / 2)
        sc_finding(r->res, "cuda.memory-in-use", SC_SEV_WARN,
                   "see nvidia-smi for the processes on this GPU; wait for them, kill leftovers "
                   "you own, or pick another GPU (CUDA_VISIBLE_DEVICES)",
                   "device %d: %zu of %zu MiB in use before any allocation; %zu MiB free", i,
                   (total_b - free_b) >> 20, total_b >> 20, free_b >> 20);
}

/* Host -> device -> host with a known pattern; returns true when the bytes came back. */
static bool copy_check(cuda_run *r, int dev, cJSON *o)
{
    unsigned char *src = malloc(PATTERN_BYTES), *back = calloc(1, PATTERN_BYTES);
    sc_cu_ptr d = 0;
    bool ok = false;
    int rc = src && back ? r->fns.mem_alloc(&d, PATTERN_BYTES) : -1;
    if (!src || !back)
        sc_result_error(r->res, "out of host memory");
    else if (rc != 0)
        work_error(r, dev, "cuMemAlloc(1 MiB)", rc);
    else {
        for (size_t k = 0; k < PATTERN_BYTES; k++)
            src[k] = (unsigned char)((k * 2654435761u) >> 13);
        if ((rc = r->fns.memcpy_htod(d, src, PATTERN_BYTES)) != 0)
            work_error(r, dev, "cuMemcpyHtoD", rc);
        else if ((rc = r->fns.memcpy_dtoh(back, d, PATTERN_BYTES)) != 0)
            work_error(r, dev, "cuMemcpyDtoH", rc);
        else if (!(ok = memcmp(src, back, PATTERN_BYTES) == 0))
            sc_finding(r->res, "cuda.wrong-result", SC_SEV_ERROR,
                       "the GPU or its memory is faulty: check dmesg for Xid 48/63/64/94/95 (ECC) "
                       "and nvidia-smi -q -d ECC; drain the node",
                       "device %d: a 1 MiB pattern copied host -> device -> host came back "
                       "different",
                       dev);
    }
    if (d)
        r->fns.mem_free(d);
    free(src);
    free(back);
    cJSON_AddBoolToObject(o, "copy_verified", ok);
    return rc == 0;
}

static bool load_nvrtc(cuda_run *r)
{
    sc_error err = {0};
    if (sc_dl_open(&r->rtc_lib, sc_nvrtc_names, RTLD_NOW | RTLD_LOCAL, &err) == 0 &&
        sc_dl_bind(&r->rtc_lib, sc_nvrtc_symbols, sc_nvrtc_symbol_count, &r->rtc, &err) == 0) {
        cJSON *o = cJSON_AddObjectToObject(r->driver, "nvrtc");
        int major = 0, minor = 0;
        cJSON_AddStringToObject(o, "realpath", r->rtc_lib.realpath);
        if (r->rtc.version(&major, &minor) == 0 && major > 0 && major < 100 && minor >= 0 &&
            minor < 100) {
            char v[16];
            sc_fmt(v, sizeof v, "%d.%d", major, minor);
            cJSON_AddStringToObject(o, "version", v);
        }
        return true;
    }
    sc_fact_null(r->driver, "nvrtc", "%s", err.message);
    sc_finding(r->res, "cuda.nvrtc-not-found", SC_SEV_INFO,
               "install the CUDA runtime compiler (libnvrtc, e.g. cuda-nvrtc-12-x) to let "
               "stackcheck run a kernel; without it only memory and copies are checked",
               "no libnvrtc.so*: the kernel check is left out (%s)", err.message);
    return false;
}

/* The compiler's log, one line, its last part. */
static void rtc_log(const cuda_run *r, void *prog, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    if (r->rtc.get_program_log_size(prog, &n) != 0 || n == 0 || n > (1u << 24))
        return;
    char *log = calloc(1, n + 1);
    if (log && r->rtc.get_program_log(prog, log) == 0) {
        for (char *p = log; *p; p++)
            if (*p == '\n' || *p == '\r' || *p == '\t')
                *p = ' ';
        size_t len = strnlen(log, n);
        const char *tail = len > size - 1 ? log + len - (size - 1) : log;
        sc_cuda_copy_text(buf, size, tail, size - 1, "");
    }
    free(log);
}

/* Fetches the compiled image: a cubin when nvrtc can give one, else PTX (NUL-terminated). */
static char *fetch_code(cuda_run *r, int dev, void *prog, int *rc)
{
    bool cubin = r->rtc.get_cubin_size && r->rtc.get_cubin;
    size_t size = 0;
    *rc = cubin ? r->rtc.get_cubin_size(prog, &size) : r->rtc.get_ptx_size(prog, &size);
    if (*rc != 0)
        return NULL;
    if (size == 0 || size > MAX_CODE_BYTES) {
        note_bad(r, dev, "nvrtc code size impossible");
        return NULL;
    }
    char *code = calloc(1, size + 1);
    if (code && (*rc = cubin ? r->rtc.get_cubin(prog, code) : r->rtc.get_ptx(prog, code)) != 0) {
        free(code);
        code = NULL;
    }
    return code;
}

/* Compiles the kernel for arch (sm_XY, or compute_XY when nvrtc gives only PTX). */
static char *compile_kernel(cuda_run *r, int dev, const char *arch)
{
    void *prog = NULL;
    char opt[64], log[600] = "", d[160];
    const char *opts[1] = {opt};
    bool cubin = r->rtc.get_cubin_size && r->rtc.get_cubin;
    sc_fmt(opt, sizeof opt, "--gpu-architecture=%s%s", cubin ? "sm_" : "compute_", arch + 3);
    int rc = r->rtc.create_program(&prog, kernel_source, "sc_double.cu", 0, NULL, NULL);
    if (rc == 0 && (rc = r->rtc.compile_program(prog, 1, opts)) != 0)
        rtc_log(r, prog, log, sizeof log);
    char *code = rc == 0 ? fetch_code(r, dev, prog, &rc) : NULL;
    if (!code && rc != 0) {
        sc_cuda_copy_text(d, sizeof d, r->rtc.get_error_string ? r->rtc.get_error_string(rc) : NULL,
                          159, "NVRTC_ERROR");
        sc_finding(r->res, "cuda.kernel-failed", SC_SEV_ERROR,
                   "nvrtc cannot compile for this GPU: use an nvrtc (toolkit) release that knows "
                   "the architecture and that the driver supports",
                   "device %d: nvrtc could not compile a kernel with %s: %s (%d)%s%s", dev, opt, d,
                   rc, log[0] ? ": " : "", log);
    }
    if (prog)
        r->rtc.destroy_program(&prog);
    return code;
}

/* Input to the device, one launch, result back; returns the CUresult, failing step in *step. */
static int kernel_round_trip(cuda_run *r, void *f, float *y, const char **step)
{
    float x[KERNEL_N];
    for (int k = 0; k < KERNEL_N; k++)
        x[k] = (float)k;
    sc_cu_ptr dx = 0, dy = 0;
    int n = KERNEL_N, rc;
    void *params[] = {&dx, &dy, &n};
    *step = "cuMemAlloc (kernel buffers)";
    if ((rc = r->fns.mem_alloc(&dx, sizeof x)) != 0 || (rc = r->fns.mem_alloc(&dy, sizeof x)) != 0)
        goto out;
    *step = "cuMemcpyHtoD (kernel input)";
    if ((rc = r->fns.memcpy_htod(dx, x, sizeof x)) != 0)
        goto out;
    *step = "cuLaunchKernel";
    if ((rc = r->fns.launch_kernel(f, 1, 1, 1, KERNEL_N, 1, 1, 0, NULL, params, NULL)) != 0)
        goto out;
    *step = "cuCtxSynchronize";
    if ((rc = r->fns.ctx_synchronize()) != 0)
        goto out;
    *step = "cuMemcpyDtoH (kernel result)";
    rc = r->fns.memcpy_dtoh(y, dy, KERNEL_N * sizeof *y);
out:
    if (dx)
        r->fns.mem_free(dx);
    if (dy)
        r->fns.mem_free(dy);
    return rc;
}

static bool verify_result(cuda_run *r, int dev, const float *y, cJSON *o)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "kernel_result");
    bool ok = true;
    for (int k = 0; k < KERNEL_N; k++) {
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(y[k]));
        ok = ok && y[k] == 2.0f * (float)k;
    }
    if (!ok)
        sc_finding(r->res, "cuda.wrong-result", SC_SEV_ERROR,
                   "the GPU computes wrong numbers: check dmesg for Xid errors and nvidia-smi -q "
                   "-d ECC; drain the node",
                   "device %d: the kernel x*2 on x=0..7 gave %g %g %g %g %g %g %g %g", dev, y[0],
                   y[1], y[2], y[3], y[4], y[5], y[6], y[7]);
    return ok;
}

static void kernel_check(cuda_run *r, int dev, cJSON *o)
{
    const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(o, "arch"));
    bool ok = false;
    double t = sc_now_ms();
    char *code = arch ? compile_kernel(r, dev, arch) : NULL;
    void *module = NULL, *f = NULL;
    float y[KERNEL_N] = {0};
    const char *step = "cuModuleLoadData";
    if (code) {
        cJSON_AddNumberToObject(o, "compile_ms", sc_now_ms() - t);
        int rc = r->fns.module_load_data(&module, code);
        if (rc == 0 && (step = "cuModuleGetFunction",
                        rc = r->fns.module_get_function(&f, module, "sc_double")) == 0)
            rc = kernel_round_trip(r, f, y, &step);
        if (rc != 0)
            work_error(r, dev, step, rc);
        ok = rc == 0 && verify_result(r, dev, y, o);
        if (module)
            r->fns.module_unload(module);
    }
    free(code);
    cJSON_AddBoolToObject(o, "kernel_verified", ok);
}

static void work_on_devices(cuda_run *r)
{
    r->have_rtc = load_nvrtc(r);
    cJSON *o;
    int dev = 0;
    cJSON_ArrayForEach (o, r->devices) {
        if (dev >= WORK_DEVICES)
            break;
        int rc = use_device(r, dev);
        if (rc != 0)
            work_error(r, dev, "cuDevicePrimaryCtxRetain/cuCtxSetCurrent (context)", rc);
        else if (copy_check(r, dev, o) && r->have_rtc)
            kernel_check(r, dev, o);
        dev++;
    }
}

/* ---- the probe ---- */

static void run_active(cuda_run *r)
{
    r->driver = cJSON_AddObjectToObject(r->res->facts, "driver_api");
    if (!r->driver || !load_driver(r) || !bind_driver(r))
        return;
    r->count = init_and_count(r);
    r->devices = cJSON_AddArrayToObject(r->res->facts, "devices");
    if (r->count <= 0 || !r->devices)
        return;
    for (int i = 0; i < r->count; i++)
        read_device(r, i);
    check_against_driver(r);
    cJSON *o;
    int i = 0;
    cJSON_ArrayForEach (o, r->devices)
        if (i < WORK_DEVICES)
            memory_baseline(r, i++, o);
    work_on_devices(r);
}

static void report_bad_answers(cuda_run *r)
{
    if (r->bad.len)
        sc_finding(r->res, "cuda.invalid-answer", SC_SEV_ERROR,
                   "the library is broken or is not NVIDIA's libcuda: check which file was loaded "
                   "(driver_api.realpath) and reinstall the driver",
                   "libcuda returned impossible values: %s", r->bad.data);
}

static bool start_run(cuda_run *r, const sc_ctx *ctx, sc_result *res)
{
    *r = (cuda_run){.ctx = ctx, .res = res, .count = -1};
    for (int i = 0; i < WORK_DEVICES; i++)
        r->handles[i] = -1;
    sc_buf_init(&r->bad);
    r->inv = calloc(1, sizeof *r->inv);
    if (!r->inv) {
        sc_result_error(res, "out of memory");
        return false;
    }
    run_inventory(r);
    return true;
}

/* The libcuda the loader would pick against the kernel module, by file name: works offline, on
 * an image whose baked-in libcuda does not match the host's driver. */
static void check_picked_version(cuda_run *r)
{
    const sc_cuda_lib_pick *p = &r->inv->libcuda;
    const char *kernel = driver_version(r);
    if (p->found && p->driver_version[0] && kernel && strcmp(kernel, p->driver_version) != 0)
        sc_finding(r->res, "nvidia.module-version-mismatch", SC_SEV_ERROR,
                   "install the user-space driver of the same release as the kernel module "
                   "(or reboot after a driver upgrade); in a container, do not bake libcuda "
                   "into the image: let nvidia-container-toolkit mount the host's",
                   "libcuda is %s (%s) but the kernel module is %s", p->driver_version, p->realpath,
                   kernel);
}

/* The passive part alone: what the runner records when the probe is gated, offline or died. */
static void inventory(const sc_ctx *ctx, sc_result *res)
{
    cuda_run r;
    if (!start_run(&r, ctx, res))
        return;
    check_picked_version(&r);
    sc_fact_null(res->facts, "driver_api", "libcuda was not loaded (%s)",
                 ctx->offline ? "offline (--sysroot)"
                              : "the active part did not run or did not finish");
    sc_fact_null(res->facts, "devices", "libcuda was not loaded");
    sc_buf_free(&r.bad);
    free(r.inv);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    cuda_run r;
    if (!start_run(&r, ctx, res))
        return;
    run_active(&r);
    report_bad_answers(&r);
    /* the libraries stay mapped: unloading a GPU driver library can hang, and the child exits */
    sc_buf_free(&r.bad);
    free(r.inv);
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
