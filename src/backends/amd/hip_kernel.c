/* runtime.hip's kernel check: compile y = 2x with hiprtc for the device's own architecture (once
 * per arch), load it as a module, launch it twice (first launch, then steady state) and check the
 * numbers that come back. This is the smallest thing that proves the stack computes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_accel.h"
#include "sc_hip_run.h"

#define KERNEL_N SC_ACCEL_KERNEL_N
#define MAX_CODE_BYTES (64u << 20)
#define HIPRTC_ERROR_COMPILATION 6 /* the only error that comes with a compiler log */

/* hiprtc's error string, or its number. */
static void rtc_describe(const sc_hip_run *r, int rc, char *buf, size_t size)
{
    char text[128];
    sc_accel_copy_text(text, sizeof text,
                       r->rtc.get_error_string ? r->rtc.get_error_string(rc) : NULL, 127,
                       "HIPRTC_ERROR");
    sc_fmt(buf, size, "%s (%d)", text, rc);
}

/* Copies the compiled code out of prog; returns it (malloc'd) or NULL, with the code in *rc. */
static char *take_code(sc_hip_run *r, int dev, void *prog, size_t *size, int *rc)
{
    char *code = NULL;
    if ((*rc = r->rtc.get_code_size(prog, size)) != 0)
        return NULL;
    if (*size == 0 || *size > MAX_CODE_BYTES) {
        sc_accel_note_bad(&r->bad, "device %d: %s", dev, "hiprtc code size impossible");
        return NULL;
    }
    if ((code = malloc(*size)) && (*rc = r->rtc.get_code(prog, code)) != 0) {
        free(code);
        code = NULL;
    }
    return code;
}

/* Compiles the kernel for arch with hiprtc; returns the code object (malloc'd) or NULL. */
static char *compile_kernel(sc_hip_run *r, int dev, const char *arch, size_t *size)
{
    void *prog = NULL;
    char opt[300], d[160], log[600] = "";
    const char *opts[1] = {opt};
    sc_fmt(opt, sizeof opt, "--gpu-architecture=%s", arch);
    int rc = r->rtc.create_program(&prog, sc_accel_kernel_source, "sc_double.hip", 0, NULL, NULL);
    if (rc == 0 && (rc = r->rtc.compile_program(prog, arch[0] ? 1 : 0, opts)) != 0)
        sc_accel_rtc_log(r->rtc.get_program_log_size, r->rtc.get_program_log, prog, log,
                         sizeof log);
    char *code = rc == 0 ? take_code(r, dev, prog, size, &rc) : NULL;
    if (rc != 0) {
        bool with_log = rc == HIPRTC_ERROR_COMPILATION;
        rtc_describe(r, rc, d, sizeof d);
        sc_finding(r->res, "hip.kernel-failed", SC_SEV_ERROR,
                   "the runtime compiler does not work for this device: check that hiprtc and "
                   "the device libraries (amdgcn bitcode) come from the same release",
                   "device %d: hiprtc could not compile a kernel for %s: %s%s%s", dev,
                   arch[0] ? arch : "the default arch", d, log[0] && with_log ? ": " : "",
                   with_log ? log : "");
    }
    if (prog)
        r->rtc.destroy_program(&prog);
    return code;
}

/* The code object for arch, compiled once; NULL when the cache is full. */
static const sc_hip_code *code_for(sc_hip_run *r, int dev, const char *arch, cJSON *timing)
{
    for (int k = 0; k < r->code_count; k++)
        if (strcmp(r->codes[k].arch, arch) == 0)
            return &r->codes[k];
    if (r->code_count >= SC_HIP_MAX_ARCHS)
        return NULL;
    sc_hip_code *c = &r->codes[r->code_count++];
    double t = sc_now_ms();
    snprintf(c->arch, sizeof c->arch, "%s", arch);
    c->code = compile_kernel(r, dev, arch, &c->size);
    if (c->code)
        cJSON_AddNumberToObject(timing, "compile_ms", sc_now_ms() - t);
    return c;
}

/* The kernel's arguments as hipModuleLaunchKernel's "extra" buffer lays them out. */
typedef struct {
    void *x, *y;
    int n, pad;
} kernel_args;

/* Launches f on KERNEL_N elements and waits; returns the runtime's code. */
static int launch(sc_hip_run *r, void *f, kernel_args *args)
{
    size_t args_size = sizeof *args;
    void *extra[] = {(void *)1 /* BUFFER_POINTER */, args, (void *)2 /* BUFFER_SIZE */, &args_size,
                     (void *)3 /* END */};
    int rc = r->fns.module_launch_kernel(f, 1, 1, 1, KERNEL_N, 1, 1, 0, NULL, NULL, extra);
    return rc ? rc : r->fns.device_synchronize();
}

/* Checks y = 2x and records y in o.kernel_result. */
static bool verify_result(sc_hip_run *r, int dev, const float *y, cJSON *o)
{
    char why[256];
    if (sc_accel_check_doubled(y, KERNEL_N, o, why, sizeof why))
        return true;
    sc_finding(r->res, "hip.wrong-result", SC_SEV_ERROR,
               "the device computes wrong numbers: check HSA_OVERRIDE_GFX_VERSION, the firmware "
               "and dmesg for GPU faults",
               "device %d: %s", dev, why);
    return false;
}

/* Launches twice, timing each: the first launch pays for loading, the second is steady state. */
static int timed_launches(sc_hip_run *r, void *f, kernel_args *args, const char **step,
                          cJSON *timing)
{
    static const char *const steps[] = {"hipModuleLaunchKernel (first)",
                                        "hipModuleLaunchKernel (second)"};
    static const char *const keys[] = {"first_launch_ms", "steady_launch_ms"};
    for (int k = 0; k < 2; k++) {
        *step = steps[k];
        double t = sc_now_ms();
        int rc = launch(r, f, args);
        if (rc != 0)
            return rc;
        cJSON_AddNumberToObject(timing, keys[k], sc_now_ms() - t);
    }
    return 0;
}

/* Input to the device, the launches, the result back; returns the runtime's code, with the
 * failing step in *step. */
static int kernel_round_trip(sc_hip_run *r, void *f, float *y, const char **step, cJSON *timing)
{
    float x[KERNEL_N];
    for (int k = 0; k < KERNEL_N; k++)
        x[k] = (float)k;
    void *dx = NULL, *dy = NULL;
    kernel_args args = {0};
    int rc;
    *step = "hipMalloc";
    if ((rc = r->fns.malloc_(&dx, sizeof x)) != 0 || (rc = r->fns.malloc_(&dy, sizeof x)) != 0)
        goto out;
    *step = "hipMemcpy of the input";
    if ((rc = r->fns.memcpy_(dx, x, sizeof x, SC_HIP_MEMCPY_H2D)) != 0)
        goto out;
    args = (kernel_args){dx, dy, KERNEL_N, 0};
    if ((rc = timed_launches(r, f, &args, step, timing)) != 0)
        goto out;
    *step = "hipMemcpy of the result";
    rc = r->fns.memcpy_(y, dy, KERNEL_N * sizeof *y, SC_HIP_MEMCPY_D2H);
out:
    if (dx)
        r->fns.free_(dx);
    if (dy)
        r->fns.free_(dy);
    return rc;
}

static void run_kernel(sc_hip_run *r, int dev, void *module, cJSON *o, cJSON *timing)
{
    void *f = NULL;
    float y[KERNEL_N] = {0};
    const char *step = "hipModuleGetFunction";
    int rc = r->fns.module_get_function(&f, module, "sc_double");
    if (rc == 0)
        rc = kernel_round_trip(r, f, y, &step, timing);
    if (rc != 0)
        sc_hip_work_error(r, dev, step, rc);
    bool ok = rc == 0 && verify_result(r, dev, y, o);
    cJSON_AddBoolToObject(o, "kernel_verified", ok);
}

void sc_hip_kernel_check(sc_hip_run *r, int dev, cJSON *o)
{
    const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(o, "arch"));
    cJSON *timing = cJSON_AddObjectToObject(o, "timing");
    const sc_hip_code *c = code_for(r, dev, arch ? arch : "", timing);
    if (!c || !c->code) {
        cJSON_AddBoolToObject(o, "kernel_verified", false);
        return;
    }
    void *module = NULL;
    double t = sc_now_ms();
    int rc = r->fns.module_load_data(&module, c->code);
    cJSON_AddNumberToObject(timing, "module_load_ms", sc_now_ms() - t);
    if (rc != 0) {
        sc_hip_work_error(r, dev, "hipModuleLoadData", rc);
        cJSON_AddBoolToObject(o, "kernel_verified", false);
        return;
    }
    run_kernel(r, dev, module, o, timing);
    r->fns.module_unload(module);
}

void sc_hip_kernel_free(sc_hip_run *r)
{
    for (int k = 0; k < r->code_count; k++)
        free(r->codes[k].code);
}
