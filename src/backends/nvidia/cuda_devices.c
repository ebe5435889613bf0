/* runtime.cuda's enumeration step: cuInit, the device count, and each device's identity (name,
 * compute capability, SMs, memory, PCI address). Every answer is range-checked: a broken or
 * impostor libcuda gives a null fact and one cuda.invalid-answer, never a number we would trust. */
#include <string.h>

#include "sc_accel.h"
#include "sc_cuda_run.h"

#define MAX_DEVICES 1024 /* more than this is a garbage answer, not a machine */
#define NAME_MAX_BYTES 256

void sc_cuda_report_bad_answers(sc_cuda_run *r)
{
    if (r->bad.len)
        sc_finding(r->res, "cuda.invalid-answer", SC_SEV_ERROR,
                   "the library is broken or is not NVIDIA's libcuda: check which file was loaded "
                   "(driver_api.realpath) and reinstall the driver",
                   "libcuda returned impossible values: %s", r->bad.data);
}

static void insufficient_finding(sc_cuda_run *r, const char *desc)
{
    const char *drv = cJSON_GetStringValue(cJSON_GetObjectItem(r->driver, "cuda_version"));
    const char *tk = sc_cuda_inventory_main_version(r->inv);
    const char *kernel = sc_cuda_module_version(r);
    sc_finding(r->res, "cuda.insufficient-driver", SC_SEV_ERROR,
               "install a driver that supports this CUDA release (see NVIDIA's CUDA toolkit/driver "
               "table), or use a toolkit and framework build no newer than the driver; a "
               "cuda-compat package only helps on data-centre GPUs",
               "cuInit: %s; the driver supports CUDA %s, the toolkit is %s (kernel module %s)",
               desc, drv ? drv : "unknown", tk ? tk : "unknown", kernel ? kernel : "unknown");
}

/* cuInit failed: the finding for its code. */
static void init_failed(sc_cuda_run *r, int rc)
{
    char desc[256];
    sc_cuda_describe(&r->fns, rc, desc, sizeof desc);
    if (rc == SC_CU_ERR_INSUFFICIENT_DRIVER || rc == SC_CU_ERR_SYSTEM_DRIVER_MISMATCH ||
        rc == SC_CU_ERR_COMPAT_NOT_SUPPORTED)
        insufficient_finding(r, desc);
    else if (rc == SC_CU_ERR_NO_DEVICE)
        sc_cuda_report_no_device(r, desc);
    else
        sc_finding(r->res, "cuda.init-failed", SC_SEV_ERROR,
                   rc == SC_CU_ERR_STUB_LIBRARY
                       ? "a toolkit's lib64/stubs directory is in the library path: remove it "
                         "from LD_LIBRARY_PATH so the driver's real libcuda is loaded"
                       : "check the kernel log for NVRM errors and the driver layer; run "
                         "nvidia-smi for the driver's own view",
                   "cuInit: %s (%s)", desc, r->lib.realpath);
}

int sc_cuda_init_and_count(sc_cuda_run *r)
{
    int rc = r->fns.init(0);
    cJSON_AddNumberToObject(r->driver, "load_init_ms", sc_now_ms() - r->start_ms);
    if (rc != 0) {
        init_failed(r, rc);
        return -1;
    }
    int count = -1;
    rc = r->fns.device_get_count(&count);
    if (rc != 0 || count < 0 || count > MAX_DEVICES) {
        char desc[256];
        if (rc == 0)
            sc_accel_note_bad(&r->bad, "device count %d", count);
        sc_cuda_describe(&r->fns, rc, desc, sizeof desc);
        sc_fact_null(r->res->facts, "device_count", "cuDeviceGetCount: %s",
                     rc ? desc : "impossible count");
        return -1;
    }
    cJSON_AddNumberToObject(r->res->facts, "device_count", count);
    if (count == 0)
        sc_cuda_report_no_device(r, "cuDeviceGetCount gave 0");
    return count > 0 ? count : -1;
}

static void device_name(sc_cuda_run *r, int dev, int handle, cJSON *o)
{
    char raw[300] = {0}, name[NAME_MAX_BYTES] = "";
    int rc = r->fns.device_get_name(raw, NAME_MAX_BYTES, handle);
    if (rc == 0 && strnlen(raw, NAME_MAX_BYTES) == NAME_MAX_BYTES)
        sc_accel_note_bad(&r->bad, "device %d: %s", dev, "name not terminated");
    else if (rc == 0)
        sc_accel_copy_text(name, sizeof name, raw, NAME_MAX_BYTES - 1, "");
    sc_fact_str(o, "name", name[0] ? name : NULL, "cuDeviceGetName gave no name");
}

/* One attribute into o.key; returns it, or -1 (null fact) when it failed or is out of range. */
static int device_attr(sc_cuda_run *r, int dev, int handle, int attr, const char *key, int lo,
                       int hi, cJSON *o)
{
    int v = 0, rc = r->fns.device_get_attribute(&v, attr, handle);
    if (rc != 0) {
        char d[256];
        sc_cuda_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, key, "cuDeviceGetAttribute(%d): %s", attr, d);
        return -1;
    }
    if (v < lo || v > hi) {
        sc_accel_note_bad(&r->bad, "device %d: %s %d", dev, key, v);
        sc_fact_null(o, key, "impossible value %d", v);
        return -1;
    }
    cJSON_AddNumberToObject(o, key, v);
    return v;
}

static void device_memory_total(sc_cuda_run *r, int dev, int handle, cJSON *o)
{
    size_t bytes = 0;
    int rc = r->fns.device_total_mem(&bytes, handle);
    if (rc != 0) {
        char d[256];
        sc_cuda_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, "total_memory_bytes", "cuDeviceTotalMem: %s", d);
    } else if (bytes == 0 || bytes > SC_ACCEL_MAX_MEMORY) {
        sc_accel_note_bad(&r->bad, "device %d: %s", dev, "total memory impossible");
        sc_fact_null(o, "total_memory_bytes", "impossible size %zu", bytes);
    } else {
        cJSON_AddNumberToObject(o, "total_memory_bytes", (double)bytes);
    }
}

static void device_pci(sc_cuda_run *r, int dev, int handle, cJSON *o)
{
    char raw[80] = {0}, pci[32];
    if (!r->fns.device_get_pci_bus_id || r->fns.device_get_pci_bus_id(raw, 64, handle) != 0) {
        sc_fact_null(o, "pci_address", "cuDeviceGetPCIBusId failed or is absent");
        return;
    }
    if (strnlen(raw, 64) == 64 || sc_cuda_pci_normalize(raw, pci, sizeof pci) < 0) {
        sc_accel_note_bad(&r->bad, "device %d: %s", dev, "PCI bus id malformed");
        sc_fact_null(o, "pci_address", "cuDeviceGetPCIBusId gave a malformed address");
        return;
    }
    cJSON_AddStringToObject(o, "pci_address", pci);
}

/* cc_major, cc_minor and the sm_XY arch they name. */
static void device_arch(sc_cuda_run *r, int dev, int handle, cJSON *o)
{
    int major = device_attr(r, dev, handle, SC_CU_ATTR_CC_MAJOR, "cc_major", 1, 20, o);
    int minor = device_attr(r, dev, handle, SC_CU_ATTR_CC_MINOR, "cc_minor", 0, 9, o);
    char sm[16];
    if (major > 0 && minor >= 0 && sc_cuda_sm_name(major, minor, sm, sizeof sm) == 0)
        cJSON_AddStringToObject(o, "arch", sm);
    else
        sc_fact_null(o, "arch", "no valid compute capability");
}

static void read_device(sc_cuda_run *r, int i)
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
    if (i < SC_CUDA_WORK_DEVICES)
        r->handles[i] = handle;
    device_name(r, i, handle, o);
    device_arch(r, i, handle, o);
    device_attr(r, i, handle, SC_CU_ATTR_SM_COUNT, "sm_count", 1, 4096, o);
    device_attr(r, i, handle, SC_CU_ATTR_WARP_SIZE, "warp_size", 1, 128, o);
    device_memory_total(r, i, handle, o);
    device_pci(r, i, handle, o);
}

void sc_cuda_read_devices(sc_cuda_run *r)
{
    for (int i = 0; i < r->count; i++)
        read_device(r, i);
}
