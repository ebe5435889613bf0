/* A stand-in libcuda.so.1 (and nvrtc) for the runtime.cuda tests, loaded by soname from a
 * directory put first on LD_LIBRARY_PATH. SC_CUDASTUB_MODE picks its behaviour from the shared
 * vocabulary (stub_mode.h): ok (H200-like devices, CC 9.0, 132 SMs, 141 GiB, host memory behind
 * allocations, a "compiler" and a launch that computes x*2 on the host), no-device, error (cuInit
 * answers CUDA_ERROR_OPERATING_SYSTEM), crash, hang (both in cuInit), garbage, permission; and
 * CUDA's own: insufficient-driver, driver-mismatch, stub-library, in-use. A real nvrtc's output
 * loads too (the launch still runs on the host), so the probe's nvrtc calls can be tried against
 * the real compiler. SC_CUDASTUB_DEVICES sets the device count (1..4, default 2). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stub_mode.h"

#define STUB_MEMORY (141ULL << 30)
#define CUBIN_MAGIC "SCSTUB-CUBIN "

typedef unsigned long long cu_ptr;

static int current_device;

static const char *const modes[] = {
    "ok",         "no-device",           "error",           "crash",        "hang",   "garbage",
    "permission", "insufficient-driver", "driver-mismatch", "stub-library", "in-use", NULL};

static int mode_is(const char *m)
{
    return stub_mode_is("SC_CUDASTUB_MODE", modes, m);
}

static int device_count(void)
{
    const char *n = getenv("SC_CUDASTUB_DEVICES");
    int v = n ? atoi(n) : 2;
    return v >= 1 && v <= 4 ? v : 2;
}

int cuDriverGetVersion(int *v)
{
    *v = mode_is("garbage") ? -7 : mode_is("insufficient-driver") ? 11040 : 12040;
    return 0;
}

int cuInit(unsigned flags)
{
    (void)flags;
    if (mode_is("crash"))
        raise(SIGSEGV);
    while (mode_is("hang"))
        pause();
    if (mode_is("insufficient-driver"))
        return 35;
    if (mode_is("driver-mismatch"))
        return 803;
    if (mode_is("stub-library"))
        return 34;
    if (mode_is("no-device"))
        return 100;
    if (mode_is("error"))
        return 304;
    /* permission: a device node the driver needs cannot be opened (EPERM on /dev/nvidia-uvm in
     * NVIDIA/k8s-device-plugin#222 surfaces as cudaErrorUnknown, the driver's CUDA_ERROR_UNKNOWN)
     */
    return mode_is("permission") ? 999 : 0;
}

int cuGetErrorName(int e, const char **s)
{
    switch (e) {
    case 34: *s = "CUDA_ERROR_STUB_LIBRARY"; return 0;
    case 35: *s = "CUDA_ERROR_INSUFFICIENT_DRIVER"; return 0;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 304: *s = "CUDA_ERROR_OPERATING_SYSTEM"; return 0;
    case 803: *s = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"; return 0;
    case 999: *s = "CUDA_ERROR_UNKNOWN"; return 0;
    default: *s = mode_is("garbage") ? "CUDA\x01\x02garbage" : NULL; return *s ? 0 : 1;
    }
}

int cuGetErrorString(int e, const char **s)
{
    switch (e) {
    case 35: *s = "CUDA driver version is insufficient for CUDA runtime version"; return 0;
    case 100: *s = "no CUDA-capable device is detected"; return 0;
    case 304: *s = "OS call failed or operation not supported on this OS"; return 0;
    case 999: *s = "unknown error"; return 0;
    default: return 1;
    }
}

/* The driver's private tables: a real nvrtc loaded beside the stub asks for them; "not found"
 * makes it carry on without, where a missing symbol would make it crash. */
int cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    *table = NULL;
    return 500;
}

int cuDeviceGetCount(int *n)
{
    *n = mode_is("garbage") ? 2 : device_count();
    return 0;
}

int cuDeviceGet(int *dev, int ordinal)
{
    if (ordinal < 0 || ordinal >= device_count())
        return 101;
    *dev = ordinal;
    return 0;
}

int cuDeviceGetName(char *name, int len, int dev)
{
    if (mode_is("garbage")) {
        memset(name, 'G', (size_t)len); /* not terminated */
        return 0;
    }
    snprintf(name, (size_t)len, "NVIDIA H200 (stub #%d)", dev);
    return 0;
}

int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    (void)dev;
    switch (attr) {
    case 75: *v = mode_is("garbage") ? 99 : 9; return 0;
    case 76: *v = 0; return 0;
    case 16: *v = mode_is("garbage") ? -3 : 132; return 0;
    case 10: *v = 32; return 0;
    default: return 1;
    }
}

int cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
    (void)dev;
    *bytes = mode_is("garbage") ? 0 : STUB_MEMORY;
    return 0;
}

int cuDeviceGetPCIBusId(char *buf, int len, int dev)
{
    static const char *const ids[] = {"0000:18:00.0", "0000:2A:00.0", "0000:3A:00.0",
                                      "0000:5D:00.0"};
    snprintf(buf, (size_t)len, "%s", mode_is("garbage") ? "zz:not-a-bus" : ids[dev & 3]);
    return 0;
}

int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    *ctx = (void *)(long)(dev + 1);
    return 0;
}

int cuCtxSetCurrent(void *ctx)
{
    current_device = (int)(long)ctx - 1;
    return 0;
}

int cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    *total = STUB_MEMORY;
    *free_b = mode_is("in-use")    ? STUB_MEMORY / 10
              : mode_is("garbage") ? STUB_MEMORY * 2
                                   : STUB_MEMORY - (512ULL << 20);
    return 0;
}

int cuMemAlloc_v2(cu_ptr *p, size_t size)
{
    void *m = malloc(size);
    *p = (cu_ptr)(size_t)m;
    return m ? 0 : 2;
}

int cuMemFree_v2(cu_ptr p)
{
    free((void *)(size_t)p);
    return 0;
}

int cuMemcpyHtoD_v2(cu_ptr dst, const void *src, size_t n)
{
    memcpy((void *)(size_t)dst, src, n);
    return 0;
}

int cuMemcpyDtoH_v2(void *dst, cu_ptr src, size_t n)
{
    memcpy(dst, (const void *)(size_t)src, n);
    if (mode_is("garbage") && n > 1)
        ((unsigned char *)dst)[n / 2] ^= 0x5a;
    return 0;
}

int cuCtxSynchronize(void)
{
    return 0;
}

static int the_module, the_function;

int cuModuleLoadData(void **module, const void *image)
{
    /* the stub compiler's image, a real nvrtc's cubin (ELF) or its PTX: "run" on the host */
    if (strncmp(image, CUBIN_MAGIC, strlen(CUBIN_MAGIC)) != 0 && memcmp(image, "\177ELF", 4) != 0 &&
        !strstr(image, ".entry sc_double"))
        return 200;
    *module = &the_module;
    return 0;
}

int cuModuleGetFunction(void **f, void *module, const char *name)
{
    if (module != &the_module || strcmp(name, "sc_double") != 0)
        return 500;
    *f = &the_function;
    return 0;
}

int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
    (void)gy, (void)gz, (void)by, (void)bz, (void)shmem, (void)stream, (void)extra;
    if (f != &the_function || !params)
        return 400;
    const float *x = (const float *)(size_t) * (cu_ptr *)params[0];
    float *y = (float *)(size_t) * (cu_ptr *)params[1];
    int n = *(int *)params[2];
    for (int i = 0; i < n && i < (int)(gx * bx); i++)
        y[i] = x[i] * (mode_is("garbage") ? 3.0f : 2.0f);
    return 0;
}

int cuModuleUnload(void *module)
{
    return module == &the_module ? 0 : 400;
}

/* ---- nvrtc ---- */

typedef struct {
    char code[64];
} stub_program;

int nvrtcVersion(int *major, int *minor)
{
    *major = 12, *minor = 4;
    return 0;
}

int nvrtcCreateProgram(void **prog, const char *src, const char *name, int n,
                       const char *const *headers, const char *const *names)
{
    (void)name, (void)n, (void)headers, (void)names;
    if (!strstr(src, "sc_double"))
        return 3;
    *prog = calloc(1, sizeof(stub_program));
    return *prog ? 0 : 1;
}

int nvrtcCompileProgram(void *prog, int n, const char *const *opts)
{
    const char *arch = n > 0 ? strstr(opts[0], "sm_") : NULL;
    if (!arch)
        return 5;
    snprintf(((stub_program *)prog)->code, sizeof((stub_program *)prog)->code, "%s%s", CUBIN_MAGIC,
             arch);
    return 0;
}

int nvrtcGetProgramLogSize(void *prog, size_t *n)
{
    (void)prog;
    *n = 1;
    return 0;
}

int nvrtcGetProgramLog(void *prog, char *log)
{
    (void)prog;
    log[0] = '\0';
    return 0;
}

int nvrtcGetCUBINSize(void *prog, size_t *n)
{
    *n = strlen(((stub_program *)prog)->code) + 1;
    return 0;
}

int nvrtcGetCUBIN(void *prog, char *out)
{
    strcpy(out, ((stub_program *)prog)->code);
    return 0;
}

int nvrtcGetPTXSize(void *prog, size_t *n)
{
    return nvrtcGetCUBINSize(prog, n);
}

int nvrtcGetPTX(void *prog, char *out)
{
    return nvrtcGetCUBIN(prog, out);
}

int nvrtcDestroyProgram(void **prog)
{
    free(*prog);
    *prog = NULL;
    return 0;
}

const char *nvrtcGetErrorString(int rc)
{
    return rc == 5 ? "NVRTC_ERROR_INVALID_OPTION" : "NVRTC_ERROR";
}
