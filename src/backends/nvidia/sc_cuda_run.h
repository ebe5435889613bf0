/* The state runtime.cuda carries from step to step, and the steps themselves, each in the file that
 * does that job: inventory facts, loading, devices, cross-checks, memory and copy, kernels. The
 * probe file (probes/runtime_cuda.c) is only the order of these calls. */
#ifndef SC_CUDA_RUN_H
#define SC_CUDA_RUN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "sc_accel.h"
#include "sc_cuda.h"
#include "sc_cuda_inventory.h"
#include "sc_dl.h"
#include "sc_probe.h"
#include "sc_util.h"

#define SC_CUDA_WORK_DEVICES 16 /* devices the copy and kernel checks run on */

typedef struct {
    const sc_ctx *ctx;
    sc_result *res;
    sc_cuda_inventory *inv;
    sc_dl_lib lib, rtc_lib;
    sc_cuda_fns fns;
    sc_nvrtc_fns rtc;
    int count;                         /* devices the driver API reports, -1 until known */
    int handles[SC_CUDA_WORK_DEVICES]; /* CUdevice of each index, -1 when cuDeviceGet failed */
    void *contexts[SC_CUDA_WORK_DEVICES];
    cJSON *driver;   /* facts.driver_api */
    cJSON *devices;  /* facts.devices */
    sc_buf bad;      /* impossible answers (sc_accel_note_bad), reported as cuda.invalid-answer */
    double start_ms; /* when loading began: load_init_ms counts from here */
} sc_cuda_run;

/* cuda_inventory_facts.c: the passive part. */
/* Collects the toolkits and the loader's libcuda pick into facts. */
void sc_cuda_inventory_facts(sc_cuda_run *r, const sc_cuda_env *env);
/* cuda_inventory_compilers.c: facts.compilers, facts.cudart_library and
 * cuda.compiler-other-root. */
void sc_cuda_compiler_facts(sc_cuda_run *r);
/* nvidia.module-version-mismatch when the picked libcuda's file name names another release than
 * the kernel module: works offline, on an image with a baked-in libcuda. */
void sc_cuda_check_picked_version(sc_cuda_run *r);

/* cuda_load.c: dlopen and bind. */
/* Loads libcuda.so.1 by soname into r->lib and records it in facts.driver_api; false (reported)
 * when it does not load. */
bool sc_cuda_load_driver(sc_cuda_run *r);
/* Binds the driver API and records its CUDA version; false (reported) when a symbol is missing. */
bool sc_cuda_bind_driver(sc_cuda_run *r);
/* Loads and binds nvrtc; false (reported as info) when absent: the kernel check is left out. */
bool sc_cuda_load_nvrtc(sc_cuda_run *r);

/* cuda_devices.c: enumerate and validate. */
/* cuInit then cuDeviceGetCount; returns the count, or -1 (reported) when the probe must stop. */
int sc_cuda_init_and_count(sc_cuda_run *r);
/* Reads every device's identity into r->devices, noting impossible answers. */
void sc_cuda_read_devices(sc_cuda_run *r);
/* cuda.invalid-answer with every impossible answer noted, when there was one. */
void sc_cuda_report_bad_answers(sc_cuda_run *r);

/* cuda_checks.c: the driver API's view against the driver layer and the environment. */
/* The driver layer's devices array, or NULL when it has none to compare with. */
const cJSON *sc_cuda_driver_devices(const sc_cuda_run *r);
/* The kernel module's version as driver.nvidia read it, or NULL. */
const char *sc_cuda_module_version(const sc_cuda_run *r);
/* cuda.devices-hidden when CUDA_VISIBLE_DEVICES explains it, else cuda.no-device. */
void sc_cuda_report_no_device(sc_cuda_run *r, const char *why);
/* facts.driver_agrees, and cuda.device-mismatch (or facts.hidden_by) when they differ. */
void sc_cuda_check_against_driver(sc_cuda_run *r);

/* cuda_work.c: memory, copy, and the per-device work loop. */
/* Free and total memory of the first devices, and cuda.memory-in-use when most is taken. */
void sc_cuda_memory_baselines(sc_cuda_run *r);
/* The finding for a driver API error during the work; what names the failing step. */
void sc_cuda_work_error(sc_cuda_run *r, int dev, const char *what, int rc);
/* Copy check and kernel check on each of the first devices. */
void sc_cuda_work_on_devices(sc_cuda_run *r);

/* cuda_kernel.c: compile with nvrtc, load, launch, verify. */
/* Compiles, loads and launches the kernel on device dev, whose facts are o. */
void sc_cuda_kernel_check(sc_cuda_run *r, int dev, cJSON *o);

#endif
