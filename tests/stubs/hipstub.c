/* A stand-in HIP runtime (libamdhip64 + hiprtc) for the runtime.hip tests. SC_HIPSTUB_MODE picks
 * its behaviour from the shared vocabulary (stub_mode.h): ok (two devices, host memory behind
 * allocations, a "compiler" and a launch that computes x*2 on the host), no-device, error (hipInit
 * answers hipErrorUnknown), crash (in hipInit), hang (in hipGetDeviceCount), garbage, permission;
 * and HIP's own: garbage-count, insufficient-driver, oom, no-binary, wrong-result, compile-fail,
 * launch-fail. SC_HIPSTUB_DAEMON=FILE makes loading it leave daemons behind (see start_daemons). */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stub_mode.h"

#define STUB_DEVICES 2
#define STUB_MEMORY (64ULL << 30)
#define CODE_MAGIC "SCSTUB-CODE-OBJECT "

static int current_device;

/* A daemon's life: its pid appended to file, a byte on ready, then sleep (ten minutes at most,
 * should it outlive a failed test). */
static void daemon_main(const char *file, int ready)
{
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        dprintf(fd, "%d\n", (int)getpid());
        close(fd);
    }
    if (write(ready, "", 1) != 1)
        _exit(1);
    for (int i = 0; i < 600; i++)
        sleep(1);
    _exit(0);
}

/* SC_HIPSTUB_DAEMON=FILE: loading the library starts helpers the way some runtimes do, and they
 * escape the loader's process group: one setsid()s and stays the loader's child, another setsid()s
 * in a child that exits at once (the classic double fork), so it is orphaned. Both keep the
 * loader's descriptors (its output pipes) open. The constructor returns once both have recorded
 * their pids. */
__attribute__((constructor)) static void start_daemons(void)
{
    const char *file = getenv("SC_HIPSTUB_DAEMON");
    int ready[2];
    char byte;
    if (!file || !file[0] || pipe(ready) < 0)
        return;
    if (fork() == 0) {
        setsid();
        daemon_main(file, ready[1]);
    }
    if (fork() == 0) {
        setsid();
        if (fork() == 0)
            daemon_main(file, ready[1]);
        _exit(0);
    }
    close(ready[1]);
    for (int i = 0; i < 2 && read(ready[0], &byte, 1) == 1; i++)
        ;
    close(ready[0]);
}

static const char *const modes[] = {
    "ok",          "no-device",           "error", "crash",     "hang",         "garbage",
    "permission",  "garbage-count",       "oom",   "no-binary", "wrong-result", "compile-fail",
    "launch-fail", "insufficient-driver", NULL};

static int mode_is(const char *m)
{
    return stub_mode_is("SC_HIPSTUB_MODE", modes, m);
}

int hipRuntimeGetVersion(int *v)
{
    *v = mode_is("garbage") ? -42 : 60241133;
    return 0;
}

int hipDriverGetVersion(int *v)
{
    *v = 60241133;
    return 0;
}

const char *hipGetErrorName(int e)
{
    if (mode_is("garbage"))
        return "hipError\x01\x02Garbage";
    switch (e) {
    case 0: return "hipSuccess";
    case 2: return "hipErrorOutOfMemory";
    case 35: return "hipErrorInsufficientDriver";
    case 100: return "hipErrorNoDevice";
    case 209: return "hipErrorNoBinaryForGpu";
    case 719: return "hipErrorLaunchFailure";
    case 999: return "hipErrorUnknown";
    default: return "hipErrorUnknown";
    }
}

const char *hipGetErrorString(int e)
{
    switch (e) {
    case 2: return "out of memory";
    case 35: return "driver version is insufficient for runtime version";
    case 100: return "no ROCm-capable device is detected";
    case 209: return "no kernel image is available for execution on the device";
    case 719: return "unspecified launch failure";
    default: return "unknown error";
    }
}

int hipInit(unsigned flags)
{
    (void)flags;
    if (mode_is("crash"))
        raise(SIGSEGV);
    if (mode_is("insufficient-driver"))
        return 35;
    return mode_is("error") ? 999 : 0;
}

int hipGetDeviceCount(int *n)
{
    if (mode_is("hang"))
        for (;;)
            pause();
    /* permission: ROCr cannot open /dev/kfd or the render nodes, and HIP then enumerates no device
     * (ROCm/rocminfo#34: the open's EACCES comes back as an out-of-resources error; ROCm/vllm#893:
     * "HIP enumerates zero devices") */
    if (mode_is("no-device") || mode_is("permission")) {
        *n = 0;
        return 100;
    }
    *n = mode_is("garbage-count") ? -7 : mode_is("garbage") ? 1 : STUB_DEVICES;
    return 0;
}

static int bad_device(int dev)
{
    return dev < 0 || dev >= STUB_DEVICES;
}

int hipDeviceGetName(char *buf, int len, int dev)
{
    if (bad_device(dev) || len <= 0)
        return 101;
    if (mode_is("garbage"))
        memset(buf, 'A', (size_t)len); /* no terminating NUL */
    else
        snprintf(buf, (size_t)len, "Stub Instinct MI210 #%d", dev);
    return 0;
}

static void put_i32(unsigned char *p, size_t off, int v)
{
    memcpy(p + off, &v, sizeof v);
}

/* Fills the R0000 layout: name 0, totalGlobalMem 256, warpSize 276, multiProcessorCount 336,
 * pciDomainID 364, pciBusID 368, pciDeviceID 372, gcnArchName 396. */
int hipGetDeviceProperties(void *props, int dev)
{
    if (bad_device(dev))
        return 101;
    unsigned char *p = props;
    uint64_t mem = STUB_MEMORY;
    if (mode_is("garbage"))
        memset(p, 'B', 256); /* a name without NUL */
    else
        snprintf((char *)p, 256, "Stub Instinct MI210 #%d", dev);
    memcpy(p + 256, &mem, sizeof mem);
    put_i32(p, 276, 64);
    put_i32(p, 336, 104);
    put_i32(p, 368, dev ? 0xd1 : 0xc1);
    if (mode_is("garbage"))
        memset(p + 396, 'x', 256); /* an arch name without NUL */
    else
        snprintf((char *)p + 396, 256, "gfx90a:sramecc+:xnack-");
    return 0;
}

int hipDeviceTotalMem(size_t *bytes, int dev)
{
    if (bad_device(dev))
        return 101;
    *bytes = mode_is("garbage") ? SIZE_MAX : STUB_MEMORY;
    return 0;
}

int hipDeviceGetAttribute(int *v, int attr, int dev)
{
    if (bad_device(dev))
        return 101;
    int garbage = mode_is("garbage");
    switch (attr) {
    case 63: *v = garbage ? 0 : 104; return 0;                    /* MultiprocessorCount */
    case 87: *v = garbage ? -1 : 64; return 0;                    /* WarpSize */
    case 67: *v = garbage ? 9999 : (dev ? 0xd1 : 0xc1); return 0; /* PciBusId */
    case 68: *v = 0; return 0;                                    /* PciDeviceId */
    case 69: *v = 0; return 0;                                    /* PciDomainID */
    default: return 1;
    }
}

int hipDeviceGetPCIBusId(char *buf, int len, int dev)
{
    if (bad_device(dev) || len <= 0)
        return 101;
    if (mode_is("garbage"))
        memset(buf, 'Z', (size_t)len);
    else
        snprintf(buf, (size_t)len, "0000:%s:00.0", dev ? "D1" : "C1"); /* upper case, as HIP */
    return 0;
}

int hipSetDevice(int dev)
{
    if (bad_device(dev))
        return 101;
    current_device = dev;
    return 0;
}

int hipMemGetInfo(size_t *free_bytes, size_t *total)
{
    *total = STUB_MEMORY;
    *free_bytes = mode_is("garbage") ? STUB_MEMORY * 2 : STUB_MEMORY - (1ULL << 30);
    return 0;
}

int hipMalloc(void **p, size_t n)
{
    if (mode_is("oom"))
        return 2;
    *p = malloc(n ? n : 1);
    return *p ? 0 : 2;
}

int hipFree(void *p)
{
    free(p);
    return 0;
}

int hipMemcpy(void *dst, const void *src, size_t n, int kind)
{
    (void)kind;
    memcpy(dst, src, n);
    return 0;
}

int hipDeviceSynchronize(void)
{
    return 0;
}

/* ---- modules: the "code object" is a tagged string naming the arch it was compiled for ---- */

int hipModuleLoadData(void **module, const void *image)
{
    if (mode_is("no-binary"))
        return 209;
    if (strncmp(image, CODE_MAGIC, strlen(CODE_MAGIC)) != 0)
        return 200;
    *module = strdup(image);
    return *module ? 0 : 2;
}

int hipModuleGetFunction(void **f, void *module, const char *name)
{
    (void)module;
    if (strcmp(name, "sc_double") != 0)
        return 500;
    *f = (void *)"sc_double";
    return 0;
}

struct stub_args {
    const float *x;
    float *y;
    int n;
};

int hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shmem, void *stream, void **params, void **extra)
{
    (void)f, (void)gy, (void)gz, (void)by, (void)bz, (void)shmem, (void)stream, (void)params;
    if (mode_is("launch-fail"))
        return 719;
    const struct stub_args *a = NULL;
    for (int k = 0; extra && extra[k] != (void *)3 && k < 8; k += 2)
        if (extra[k] == (void *)1)
            a = extra[k + 1];
    if (!a)
        return 1;
    float factor = mode_is("wrong-result") ? 3.0f : 2.0f;
    for (unsigned i = 0; i < gx * bx; i++)
        if ((int)i < a->n)
            a->y[i] = a->x[i] * factor;
    return 0;
}

int hipModuleUnload(void *module)
{
    free(module);
    return 0;
}

/* ---- hiprtc ---- */

typedef struct {
    char *source;
    char code[300];
    const char *log;
} stub_program;

int hiprtcCreateProgram(void **prog, const char *src, const char *name, int n, const char **h,
                        const char **inc)
{
    (void)name, (void)n, (void)h, (void)inc;
    stub_program *p = calloc(1, sizeof *p);
    if (!p || !(p->source = strdup(src))) {
        free(p);
        return 1;
    }
    *prog = p;
    return 0;
}

int hiprtcCompileProgram(void *prog, int n, const char **opts)
{
    stub_program *p = prog;
    if (mode_is("compile-fail") || !strstr(p->source, "sc_double")) {
        p->log = "sc_double.hip:3:5: error: use of undeclared identifier 'blockIdx'\n1 error "
                 "generated.\n";
        return 6;
    }
    snprintf(p->code, sizeof p->code, CODE_MAGIC "%s", n > 0 ? opts[0] : "--default-arch");
    p->log = "";
    return 0;
}

int hiprtcGetProgramLogSize(void *prog, size_t *n)
{
    *n = strlen(((stub_program *)prog)->log ? ((stub_program *)prog)->log : "") + 1;
    return 0;
}

int hiprtcGetProgramLog(void *prog, char *log)
{
    strcpy(log, ((stub_program *)prog)->log ? ((stub_program *)prog)->log : "");
    return 0;
}

int hiprtcGetCodeSize(void *prog, size_t *n)
{
    *n = strlen(((stub_program *)prog)->code) + 1;
    return 0;
}

int hiprtcGetCode(void *prog, char *code)
{
    strcpy(code, ((stub_program *)prog)->code);
    return 0;
}

int hiprtcDestroyProgram(void **prog)
{
    stub_program *p = *prog;
    free(p->source);
    free(p);
    *prog = NULL;
    return 0;
}

const char *hiprtcGetErrorString(int e)
{
    return e == 6 ? "HIPRTC_ERROR_COMPILATION" : "HIPRTC_ERROR";
}
