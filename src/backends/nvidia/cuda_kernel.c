/* runtime.cuda's kernel check: compile y = 2x with nvrtc for the device's own architecture (a
 * cubin, or PTX from an nvrtc without cubin output), load it as a module, launch it and check the
 * numbers that come back. This is the smallest thing that proves the stack computes. */
#include <stdlib.h>

#include "sc_accel.h"
#include "sc_cuda_run.h"

#define KERNEL_N SC_ACCEL_KERNEL_N
#define MAX_CODE_BYTES (64u << 20)

/* Fetches the compiled image: a cubin when nvrtc can give one, else PTX (NUL-terminated). */
static char *fetch_code(sc_cuda_run *r, int dev, void *prog, int *rc)
{
    bool cubin = r->rtc.get_cubin_size && r->rtc.get_cubin;
    size_t size = 0;
    *rc = cubin ? r->rtc.get_cubin_size(prog, &size) : r->rtc.get_ptx_size(prog, &size);
    if (*rc != 0)
        return NULL;
    if (size == 0 || size > MAX_CODE_BYTES) {
        sc_accel_note_bad(&r->bad, "device %d: %s", dev, "nvrtc code size impossible");
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
static char *compile_kernel(sc_cuda_run *r, int dev, const char *arch)
{
    void *prog = NULL;
    char opt[64], log[600] = "", d[160];
    const char *opts[1] = {opt};
    bool cubin = r->rtc.get_cubin_size && r->rtc.get_cubin;
    sc_fmt(opt, sizeof opt, "--gpu-architecture=%s%s", cubin ? "sm_" : "compute_", arch + 3);
    int rc = r->rtc.create_program(&prog, sc_accel_kernel_source, "sc_double.cu", 0, NULL, NULL);
    if (rc == 0 && (rc = r->rtc.compile_program(prog, 1, opts)) != 0)
        sc_accel_rtc_log(r->rtc.get_program_log_size, r->rtc.get_program_log, prog, log,
                         sizeof log);
    char *code = rc == 0 ? fetch_code(r, dev, prog, &rc) : NULL;
    if (!code && rc != 0) {
        sc_accel_copy_text(d, sizeof d,
                           r->rtc.get_error_string ? r->rtc.get_error_string(rc) : NULL, 159,
                           "NVRTC_ERROR");
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
static int kernel_round_trip(sc_cuda_run *r, void *f, float *y, const char **step)
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

/* Checks y = 2x and records y in o.kernel_result. */
static bool verify_result(sc_cuda_run *r, int dev, const float *y, cJSON *o)
{
    char why[256];
    if (sc_accel_check_doubled(y, KERNEL_N, o, why, sizeof why))
        return true;
    sc_finding(r->res, "cuda.wrong-result", SC_SEV_ERROR,
               "the GPU computes wrong numbers: check dmesg for Xid errors and nvidia-smi -q -d "
               "ECC; drain the node",
               "device %d: %s", dev, why);
    return false;
}

/* Loads code as a module and runs the kernel; returns true when the numbers came back right. */
static bool run_kernel(sc_cuda_run *r, int dev, const char *code, cJSON *o)
{
    void *module = NULL, *f = NULL;
    float y[KERNEL_N] = {0};
    const char *step = "cuModuleLoadData";
    int rc = r->fns.module_load_data(&module, code);
    if (rc == 0 && (step = "cuModuleGetFunction",
                    rc = r->fns.module_get_function(&f, module, "sc_double")) == 0)
        rc = kernel_round_trip(r, f, y, &step);
    if (rc != 0)
        sc_cuda_work_error(r, dev, step, rc);
    bool ok = rc == 0 && verify_result(r, dev, y, o);
    if (module)
        r->fns.module_unload(module);
    return ok;
}

void sc_cuda_kernel_check(sc_cuda_run *r, int dev, cJSON *o)
{
    const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(o, "arch"));
    bool ok = false;
    double t = sc_now_ms();
    char *code = arch ? compile_kernel(r, dev, arch) : NULL;
    if (code) {
        cJSON_AddNumberToObject(o, "compile_ms", sc_now_ms() - t);
        ok = run_kernel(r, dev, code, o);
    }
    free(code);
    cJSON_AddBoolToObject(o, "kernel_verified", ok);
}
