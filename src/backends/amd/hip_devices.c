/* runtime.hip's enumeration step: hipInit, the device count, and each device's identity (name,
 * arch, memory, compute units, PCI address). Every answer is range-checked: a broken or impostor
 * runtime gives a null fact and one hip.invalid-answer, never a number we would trust. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_hip_run.h"
#include "sc_step.h"
#include "sc_text.h"

#define MAX_DEVICES 1024 /* more than this is a garbage answer, not a machine */
#define NAME_MAX_BYTES 256

void sc_hip_report_bad_answers(sc_hip_run *r)
{
    if (r->bad.len)
        sc_finding(r->res, "hip.invalid-answer", SC_SEV_ERROR,
                   "the runtime library is broken or is not the HIP runtime it claims to be: "
                   "reinstall it, and check which file was loaded (runtime.realpath)",
                   "the HIP runtime returned impossible values: %s", r->bad.data);
}

/* What hipInit and hipGetDeviceCount answered. */
typedef struct {
    int init_rc, count_rc, count;
    char init_desc[256], count_desc[256];
} start_answers;

/* hipInit; a driver too old for the runtime is its own finding. */
static int init_runtime(sc_hip_run *r, start_answers *a)
{
    int rc = r->fns.init(0);
    cJSON_AddNumberToObject(r->timing, "load_init_ms", sc_now_ms() - r->start_ms);
    if (rc != 0)
        sc_hip_describe(&r->fns, rc, a->init_desc, sizeof a->init_desc);
    if (rc == SC_HIP_ERR_INSUFFICIENT_DRIVER)
        sc_finding(r->res, "hip.insufficient-driver", SC_SEV_ERROR,
                   "install the kernel driver (amdgpu DKMS or hydcu) that this ROCm/DTK release "
                   "supports, or use the runtime release that matches the driver",
                   "hipInit: %s", a->init_desc);
    return rc;
}

/* Devices counted but hipInit failed, or no device: the finding with both calls' answers. */
static void explain_no_devices(sc_hip_run *r, start_answers *a)
{
    char why[600];
    if (a->count_rc == 0)
        sc_fmt(a->count_desc, sizeof a->count_desc, "%d devices", a->count);
    sc_fmt(why, sizeof why, "%s%s%shipGetDeviceCount: %s", a->init_rc ? "hipInit: " : "",
           a->init_desc, a->init_rc ? "; " : "", a->count_desc);
    if (a->count_rc == 0 && a->count > 0)
        sc_finding(r->res, "hip.init-failed", SC_SEV_ERROR,
                   "check the kernel log and the driver layer; run rocminfo for the runtime's view",
                   "%s", why);
    else
        sc_hip_report_no_device(r, why);
}

int sc_hip_init_and_count(sc_hip_run *r)
{
    start_answers a = {.count = -1};
    a.init_rc = init_runtime(r, &a);
    if (a.init_rc == SC_HIP_ERR_INSUFFICIENT_DRIVER)
        return -1;
    a.count_rc = r->fns.get_device_count(&a.count);
    if (a.count_rc != 0) {
        sc_hip_describe(&r->fns, a.count_rc, a.count_desc, sizeof a.count_desc);
    } else if (a.count < 0 || a.count > MAX_DEVICES) {
        sc_accel_note_bad(&r->bad, "device count %d", a.count);
        sc_fact_null(r->res->facts, "device_count", "impossible count %d", a.count);
        return -1;
    }
    cJSON_AddNumberToObject(r->res->facts, "device_count", a.count_rc == 0 ? a.count : 0);
    if (a.count_rc == 0 && a.count > 0 && a.init_rc == 0)
        return a.count;
    explain_no_devices(r, &a);
    return -1;
}

/* hipDeviceGetName, else the properties' name; an unterminated name is a garbage answer. */
static void device_name(sc_hip_run *r, int i, const sc_hip_props *p, cJSON *o)
{
    char raw[300] = {0}, name[NAME_MAX_BYTES] = "";
    if (r->fns.device_get_name && r->fns.device_get_name(raw, NAME_MAX_BYTES, i) == 0) {
        if (strnlen(raw, NAME_MAX_BYTES) == NAME_MAX_BYTES)
            sc_accel_note_bad(&r->bad, "device %d: %s", i, "name not terminated");
        else
            sc_accel_copy_text(name, sizeof name, raw, NAME_MAX_BYTES - 1, "");
    }
    if (!name[0] && p && !p->name_unterminated)
        snprintf(name, sizeof name, "%s", p->name);
    sc_fact_str(o, "name", name[0] ? name : NULL, "the runtime gave no name");
}

static void device_arch(sc_hip_run *r, int i, const sc_hip_props *p, cJSON *o)
{
    sc_hip_arch a;
    if (!p) {
        sc_fact_null(o, "arch", "the runtime has no hipGetDeviceProperties");
    } else if (p->arch_unterminated || sc_hip_arch_parse(p->arch, &a) < 0) {
        sc_accel_note_bad(&r->bad, "device %d: %s", i,
                          p->arch_unterminated ? "arch name not terminated"
                                               : "arch name malformed");
        sc_fact_null(o, "arch", "the runtime gave a malformed gcnArchName \"%.*s\"",
                     sc_utf8_prec(p->arch, 64), p->arch);
    } else {
        cJSON_AddStringToObject(o, "arch", p->arch);
    }
}

static void device_int_attr(sc_hip_run *r, int i, int attr, const char *key, int lo, int hi,
                            cJSON *o)
{
    int v = 0, rc = r->fns.device_get_attribute(&v, attr, i);
    if (rc != 0) {
        char d[256];
        sc_hip_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, key, "hipDeviceGetAttribute(%d): %s", attr, d);
    } else if (v < lo || v > hi) {
        sc_accel_note_bad(&r->bad, "device %d: %s %d", i, key, v);
        sc_fact_null(o, key, "impossible value %d", v);
    } else {
        cJSON_AddNumberToObject(o, key, v);
    }
}

static void device_memory_total(sc_hip_run *r, int i, cJSON *o)
{
    size_t bytes = 0;
    int rc = r->fns.device_total_mem(&bytes, i);
    if (rc != 0) {
        char d[256];
        sc_hip_describe(&r->fns, rc, d, sizeof d);
        sc_fact_null(o, "total_memory_bytes", "hipDeviceTotalMem: %s", d);
    } else if (bytes == 0 || bytes > SC_ACCEL_MAX_MEMORY) {
        sc_accel_note_bad(&r->bad, "device %d: total memory %zu bytes", i, bytes);
        sc_fact_null(o, "total_memory_bytes", "impossible size %zu", bytes);
    } else {
        cJSON_AddNumberToObject(o, "total_memory_bytes", (double)bytes);
    }
}

/* The PCI address from the domain, bus and device attributes; false when one is missing or
 * out of range. */
static bool pci_from_attributes(sc_hip_run *r, int i, char *pci, size_t size)
{
    const sc_hip_attr_ids *ids = sc_hip_attr_ids_for(r->version);
    int dom = 0, bus = -1, dev = -1;
    if ((ids->pci_domain >= 0 && r->fns.device_get_attribute(&dom, ids->pci_domain, i) != 0) ||
        r->fns.device_get_attribute(&bus, ids->pci_bus, i) != 0 ||
        r->fns.device_get_attribute(&dev, ids->pci_device, i) != 0 || bus < 0 || bus > 255 ||
        dev < 0 || dev > 31 || dom < 0 || dom > 0xffff)
        return false;
    sc_hip_pci_format(pci, size, dom, bus, dev, 0);
    return true;
}

/* hipDeviceGetPCIBusId, else the PCI attributes (runtimes without the call, or a bad answer). */
static void device_pci(sc_hip_run *r, int i, cJSON *o)
{
    char raw[80] = {0}, pci[32];
    if ((r->fns.device_get_pci_bus_id && r->fns.device_get_pci_bus_id(raw, 64, i) == 0 &&
         sc_hip_pci_normalize(raw, pci, sizeof pci) == 0) ||
        pci_from_attributes(r, i, pci, sizeof pci)) {
        cJSON_AddStringToObject(o, "pci_address", pci);
        return;
    }
    if (raw[0])
        sc_accel_note_bad(&r->bad, "device %d: %s", i, "PCI bus id malformed");
    sc_fact_null(o, "pci_address",
                 "neither hipDeviceGetPCIBusId nor the PCI attributes gave a valid address");
}

/* Calls the properties function into a zeroed buffer far larger than any known layout, so a
 * runtime with a bigger struct than we know still writes inside it. */
static bool device_props(sc_hip_run *r, int i, sc_hip_props *p)
{
    bool r0600 = !r->fns.get_device_properties && r->fns.get_device_properties_r0600;
    int (*fn)(void *, int) =
        r0600 ? r->fns.get_device_properties_r0600 : r->fns.get_device_properties;
    unsigned char *buf = fn ? calloc(1, SC_HIP_PROPS_BUF) : NULL;
    bool ok = buf && fn(buf, i) == 0 && sc_hip_props_read(buf, SC_HIP_PROPS_BUF, r0600, p) == 0;
    free(buf);
    return ok;
}

static void read_device(sc_hip_run *r, int i)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
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
}

void sc_hip_read_devices(sc_hip_run *r)
{
    for (int i = 0; i < r->count; i++) {
        sc_step("device %d of %d", i + 1, r->count);
        read_device(r, i);
    }
}
