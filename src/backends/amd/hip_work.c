/* runtime.hip's work step: each device's memory baseline (and who else holds its memory, from the
 * KFD), a host -> device -> host copy of a known pattern, then the kernel check. A runtime error
 * here becomes the finding for the step that failed. */
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sc_accel.h"
#include "sc_hip_run.h"

#define WORK_DEVICES 16 /* devices the copy and kernel checks run on */
#define PATTERN_BYTES SC_ACCEL_PATTERN_BYTES
#define MAX_VRAM_USERS 32

/* The driver layer's gpu_id for the device at this PCI address, or 0. */
static unsigned long long driver_gpu_id(const sc_hip_run *r, const char *pci)
{
    const cJSON *id = sc_json_member(sc_hip_driver_device_at(r, pci), SC_FACT_GPU_ID);
    return cJSON_IsNumber(id) && id->valuedouble > 0 ? (unsigned long long)id->valuedouble : 0;
}

/* Adds the other processes using the device (KFD proc) to mem and their "pid (command)" list to
 * pids; returns their bytes. */
static unsigned long long other_users(sc_hip_run *r, cJSON *dev, cJSON *mem, char *pids,
                                      size_t size)
{
    unsigned long long gpu_id = driver_gpu_id(r, sc_json_str(dev, SC_FACT_PCI_ADDRESS));
    sc_hip_vram_user users[MAX_VRAM_USERS];
    int n =
        gpu_id ? sc_hip_kfd_vram_users(r->ctx->root, gpu_id, getpid(), users, MAX_VRAM_USERS) : -1;
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

/* hipMemGetInfo on device i into mem; false (fact null, garbage noted) when it fails or is
 * impossible. */
static bool memory_info(sc_hip_run *r, int i, cJSON *mem, size_t *free_b, size_t *total_b)
{
    char d[256] = "";
    int rc = r->fns.set_device(i);
    if (rc == 0)
        rc = r->fns.mem_get_info(free_b, total_b);
    if (rc != 0)
        sc_hip_describe(&r->fns, rc, d, sizeof d);
    return sc_accel_memory_answer(mem, &r->bad, i, "hipMemGetInfo", rc, d, *free_b, *total_b);
}

static void memory_baseline(sc_hip_run *r, int i, cJSON *dev)
{
    cJSON *mem = cJSON_AddObjectToObject(dev, "memory");
    size_t free_b = 0, total_b = 0;
    if (!memory_info(r, i, mem, &free_b, &total_b))
        return;
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

void sc_hip_memory_baselines(sc_hip_run *r)
{
    cJSON *o;
    int i = 0;
    cJSON_ArrayForEach (o, r->devices)
        memory_baseline(r, i++, o);
}

void sc_hip_work_error(sc_hip_run *r, int dev, const char *what, int rc)
{
    char d[256];
    sc_hip_describe(&r->fns, rc, d, sizeof d);
    if (rc == SC_HIP_ERR_OUT_OF_MEMORY || rc == SC_HIP_ERR_RUNTIME_MEMORY)
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

/* The copy check's calls through the runtime. */
static int copy_alloc(void *run, int dev, sc_accel_dptr *d, size_t size)
{
    sc_hip_run *r = run;
    void *p = NULL;
    int rc = r->fns.malloc_(&p, size);
    *d = (sc_accel_dptr)(uintptr_t)p;
    if (rc != 0)
        sc_hip_work_error(r, dev, "hipMalloc(1 MiB)", rc);
    return rc;
}

static int copy_round_trip(void *run, int dev, sc_accel_dptr d, const void *src, void *back)
{
    sc_hip_run *r = run;
    void *p = (void *)(uintptr_t)d;
    int rc = r->fns.memcpy_(p, src, PATTERN_BYTES, SC_HIP_MEMCPY_H2D);
    if (rc != 0) {
        sc_hip_work_error(r, dev, "hipMemcpy host to device", rc);
        return rc;
    }
    if ((rc = r->fns.memcpy_(back, p, PATTERN_BYTES, SC_HIP_MEMCPY_D2H)) != 0)
        sc_hip_work_error(r, dev, "hipMemcpy device to host", rc);
    return rc;
}

static void copy_release(void *run, sc_accel_dptr d)
{
    ((sc_hip_run *)run)->fns.free_((void *)(uintptr_t)d);
}

static void copy_differs(void *run, int dev)
{
    sc_hip_run *r = run;
    sc_finding(r->res, "hip.wrong-result", SC_SEV_ERROR,
               "the device or its memory is faulty or misconfigured: check dmesg and the "
               "driver version",
               "device %d: " SC_ACCEL_COPY_DIFFERS, dev);
}

static const sc_accel_copy_ops copy_ops = {copy_alloc, copy_round_trip, copy_release, copy_differs};

void sc_hip_work_on_devices(sc_hip_run *r)
{
    bool have_rtc = sc_hip_load_hiprtc(r);
    cJSON *o;
    int dev = 0;
    cJSON_ArrayForEach (o, r->devices) {
        if (dev >= WORK_DEVICES)
            break;
        int rc = r->fns.set_device(dev);
        if (rc != 0)
            sc_hip_work_error(r, dev, "hipSetDevice", rc);
        else if (sc_accel_copy_check(&copy_ops, r, dev, r->res, o) && have_rtc)
            sc_hip_kernel_check(r, dev, o);
        dev++;
    }
}
