/* runtime.acl's work step on each of the first devices: aclrtSetDevice, the SoC name (only valid
 * once a device is set), HBM free/total, a host -> device -> host copy of a known pattern through
 * sc_accel_copy_check, then aclrtResetDevice. No kernel runs: ACL has no runtime compiler to build
 * one from source, and shipping an operator binary per SoC is out of scope. */
#include <stdint.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_acl_run.h"

static void work_error(sc_acl_run *r, int dev, const char *what, int rc)
{
    char d[256];
    sc_acl_describe(&r->fns, rc, d, sizeof d);
    sc_finding(r->res, "acl.copy-failed", SC_SEV_ERROR,
               "check the kernel log (dmesg | grep -i ascend), npu-smi info for the NPU's health "
               "and other processes on it, and the driver layer",
               "device %d: %s: %s", dev, what, d);
}

static int copy_alloc(void *run, int dev, sc_accel_dptr *d, size_t size)
{
    sc_acl_run *r = run;
    void *p = NULL;
    int rc = r->fns.mem_malloc(&p, size, SC_ACL_MEM_MALLOC_HUGE_FIRST);
    if (rc != 0)
        work_error(r, dev, "aclrtMalloc(1 MiB)", rc);
    *d = (sc_accel_dptr)(uintptr_t)p;
    return rc;
}

static int copy_round_trip(void *run, int dev, sc_accel_dptr d, const void *src, void *back)
{
    sc_acl_run *r = run;
    void *p = (void *)(uintptr_t)d;
    size_t n = SC_ACCEL_PATTERN_BYTES;
    int rc = r->fns.mem_copy(p, n, src, n, SC_ACL_MEMCPY_H2D);
    if (rc != 0) {
        work_error(r, dev, "aclrtMemcpy host to device", rc);
        return rc;
    }
    if ((rc = r->fns.mem_copy(back, n, p, n, SC_ACL_MEMCPY_D2H)) != 0)
        work_error(r, dev, "aclrtMemcpy device to host", rc);
    return rc;
}

static void copy_release(void *run, sc_accel_dptr d)
{
    ((sc_acl_run *)run)->fns.mem_free((void *)(uintptr_t)d);
}

static void copy_differs(void *run, int dev)
{
    sc_finding(((sc_acl_run *)run)->res, "acl.copy-failed", SC_SEV_ERROR,
               "the NPU or its HBM is faulty: check npu-smi info -t health and dmesg; drain "
               "the node",
               "device %d: " SC_ACCEL_COPY_DIFFERS, dev);
}

static const sc_accel_copy_ops copy_ops = {copy_alloc, copy_round_trip, copy_release, copy_differs};

/* The SoC name, which must be a short printable string. */
static void soc_name(sc_acl_run *r, int dev, cJSON *o)
{
    const char *s = r->fns.get_soc_name ? r->fns.get_soc_name() : NULL;
    char name[64];
    if (!s) {
        sc_fact_null(o, "soc_name", "%s",
                     r->fns.get_soc_name ? "aclrtGetSocName gave NULL" : "no aclrtGetSocName");
        return;
    }
    size_t n = strnlen(s, sizeof name);
    sc_accel_copy_text(name, sizeof name, s, sizeof name - 1, "");
    if (n == sizeof name || strcmp(name, s) != 0 || !name[0]) {
        sc_fact_null(o, "soc_name", "not a short printable name");
        sc_accel_note_bad(&r->bad, "device %d: SoC name not terminated or not printable", dev);
        return;
    }
    cJSON_AddStringToObject(o, "soc_name", name);
}

static void memory(sc_acl_run *r, int dev, cJSON *o)
{
    cJSON *mem = cJSON_AddObjectToObject(o, "memory");
    size_t free_b = 0, total_b = 0;
    char d[256] = "";
    int rc = r->fns.get_mem_info(SC_ACL_HBM_MEM, &free_b, &total_b);
    if (rc != 0)
        sc_acl_describe(&r->fns, rc, d, sizeof d);
    if (!sc_accel_memory_answer(mem, &r->bad, dev, "aclrtGetMemInfo", rc, d, free_b, total_b))
        return;
    if (total_b - free_b > total_b / 2)
        sc_finding(r->res, "acl.memory-in-use", SC_SEV_WARN,
                   "see npu-smi info for the processes on this NPU; wait for them, kill leftovers "
                   "you own, or pick another NPU (ASCEND_RT_VISIBLE_DEVICES)",
                   "device %d: %zu of %zu MiB HBM in use before any allocation; %zu MiB free", dev,
                   (total_b - free_b) >> 20, total_b >> 20, free_b >> 20);
}

static void one_device(sc_acl_run *r, int dev, cJSON *o)
{
    int rc = r->fns.set_device(dev);
    if (rc != 0) {
        char d[256];
        sc_acl_describe(&r->fns, rc, d, sizeof d);
        sc_finding(r->res, "acl.device-setup-failed", SC_SEV_ERROR,
                   "the runtime could not open the NPU: check the device nodes and their "
                   "permissions (driver.ascend), other processes holding it (npu-smi info), the "
                   "firmware/driver pair, and dmesg",
                   "device %d: aclrtSetDevice: %s", dev, d);
        cJSON_AddBoolToObject(o, "set_device", false);
        return;
    }
    cJSON_AddBoolToObject(o, "set_device", true);
    soc_name(r, dev, o);
    memory(r, dev, o);
    sc_accel_copy_check(&copy_ops, r, dev, r->res, o);
    r->fns.reset_device(dev);
}

void sc_acl_work_on_devices(sc_acl_run *r)
{
    for (int i = 0; i < r->count && i < SC_ACL_WORK_DEVICES; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        cJSON_AddNumberToObject(o, "index", i);
        cJSON_AddItemToArray(r->devices, o);
        one_device(r, i, o);
    }
}
