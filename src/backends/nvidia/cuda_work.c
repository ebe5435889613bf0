/* runtime.cuda's work step: each device's primary context and memory baseline, a host -> device ->
 * host copy of a known pattern, then the kernel check. A driver API error here becomes the finding
 * for the step that failed. */
#include <string.h>

#include "sc_accel.h"
#include "sc_cuda_run.h"

/* Makes device i's primary context current; returns the CUresult. */
static int use_device(sc_cuda_run *r, int i)
{
    if (r->handles[i] < 0)
        return SC_CU_ERR_NO_DEVICE;
    int rc = r->contexts[i] ? 0 : r->fns.primary_ctx_retain(&r->contexts[i], r->handles[i]);
    return rc ? rc : r->fns.ctx_set_current(r->contexts[i]);
}

void sc_cuda_work_error(sc_cuda_run *r, int dev, const char *what, int rc)
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

/* cuMemGetInfo on device i into mem; false (fact null, garbage noted) when it fails or is
 * impossible. */
static bool memory_info(sc_cuda_run *r, int i, cJSON *mem, size_t *free_b, size_t *total_b)
{
    char d[256] = "";
    int rc = use_device(r, i);
    if (rc == 0)
        rc = r->fns.mem_get_info(free_b, total_b);
    if (rc != 0)
        sc_cuda_describe(&r->fns, rc, d, sizeof d);
    return sc_accel_memory_answer(mem, &r->bad, i, "cuMemGetInfo", rc, d, *free_b, *total_b);
}

static void memory_baseline(sc_cuda_run *r, int i, cJSON *dev)
{
    cJSON *mem = cJSON_AddObjectToObject(dev, "memory");
    size_t free_b = 0, total_b = 0;
    if (!memory_info(r, i, mem, &free_b, &total_b))
        return;
    if (total_b - free_b > total_b / 2)
        sc_finding(r->res, "cuda.memory-in-use", SC_SEV_WARN,
                   "see nvidia-smi for the processes on this GPU; wait for them, kill leftovers "
                   "you own, or pick another GPU (CUDA_VISIBLE_DEVICES)",
                   "device %d: %zu of %zu MiB in use before any allocation; %zu MiB free", i,
                   (total_b - free_b) >> 20, total_b >> 20, free_b >> 20);
}

void sc_cuda_memory_baselines(sc_cuda_run *r)
{
    cJSON *o;
    int i = 0;
    cJSON_ArrayForEach (o, r->devices)
        if (i < SC_CUDA_WORK_DEVICES)
            memory_baseline(r, i++, o);
}

/* The copy check's calls through the driver API. */
static int copy_alloc(void *run, int dev, sc_accel_dptr *d, size_t size)
{
    sc_cuda_run *r = run;
    int rc = r->fns.mem_alloc(d, size);
    if (rc != 0)
        sc_cuda_work_error(r, dev, "cuMemAlloc(1 MiB)", rc);
    return rc;
}

static int copy_round_trip(void *run, int dev, sc_accel_dptr d, const void *src, void *back)
{
    sc_cuda_run *r = run;
    int rc = r->fns.memcpy_htod(d, src, SC_ACCEL_PATTERN_BYTES);
    if (rc != 0) {
        sc_cuda_work_error(r, dev, "cuMemcpyHtoD", rc);
        return rc;
    }
    if ((rc = r->fns.memcpy_dtoh(back, d, SC_ACCEL_PATTERN_BYTES)) != 0)
        sc_cuda_work_error(r, dev, "cuMemcpyDtoH", rc);
    return rc;
}

static void copy_release(void *run, sc_accel_dptr d)
{
    ((sc_cuda_run *)run)->fns.mem_free(d);
}

static void copy_differs(void *run, int dev)
{
    sc_cuda_run *r = run;
    sc_finding(r->res, "cuda.wrong-result", SC_SEV_ERROR,
               "the GPU or its memory is faulty: check dmesg for Xid 48/63/64/94/95 (ECC) "
               "and nvidia-smi -q -d ECC; drain the node",
               "device %d: " SC_ACCEL_COPY_DIFFERS, dev);
}

static const sc_accel_copy_ops copy_ops = {copy_alloc, copy_round_trip, copy_release, copy_differs};

void sc_cuda_work_on_devices(sc_cuda_run *r)
{
    bool have_rtc = sc_cuda_load_nvrtc(r);
    cJSON *o;
    int dev = 0;
    cJSON_ArrayForEach (o, r->devices) {
        if (dev >= SC_CUDA_WORK_DEVICES)
            break;
        int rc = use_device(r, dev);
        if (rc != 0)
            sc_cuda_work_error(r, dev, "cuDevicePrimaryCtxRetain/cuCtxSetCurrent (context)", rc);
        else if (sc_accel_copy_check(&copy_ops, r, dev, r->res, o) && have_rtc)
            sc_cuda_kernel_check(r, dev, o);
        dev++;
    }
}
