/* The state runtime.hip carries from step to step, and the steps themselves, each in the file that
 * does that job: inventory facts, loading, devices, cross-checks, memory and copy, kernels. The
 * probe file (probes/runtime_hip.c) is only the order of these calls. */
#ifndef SC_HIP_RUN_H
#define SC_HIP_RUN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "sc_accel.h"
#include "sc_dl.h"
#include "sc_hip_api.h"
#include "sc_hip_inventory.h"
#include "sc_probe.h"
#include "sc_util.h"

#define SC_HIP_MAX_ARCHS 4 /* distinct architectures a run compiles the kernel for */

/* One compile per architecture, so devices of one arch compile (or fail) once. */
typedef struct {
    char arch[256];
    char *code; /* NULL: the compile failed, already reported */
    size_t size;
} sc_hip_code;

typedef struct {
    const sc_ctx *ctx;
    sc_result *res;
    sc_hip_inventory *inv;
    sc_dl_lib lib, rtc_lib;
    sc_hip_fns fns;
    sc_hiprtc_fns rtc;
    long version;   /* HIP_VERSION, picks the attribute numbering */
    int count;      /* devices the runtime reports, -1 until known */
    cJSON *runtime; /* facts.runtime */
    cJSON *devices; /* facts.devices */
    cJSON *timing;  /* facts.timing */
    sc_buf bad;     /* garbage answers (sc_accel_note_bad), reported as hip.invalid-answer */
    sc_hip_code codes[SC_HIP_MAX_ARCHS];
    int code_count;
    double start_ms; /* when loading began: load_init_ms counts from here */
} sc_hip_run;

/* hip_inventory_facts.c: the passive part. */
/* Collects the installs and the loader's pick into facts, with their findings. */
void sc_hip_inventory_facts(sc_hip_run *r, const sc_hip_env *env);
/* hip_inventory_compilers.c: facts.compilers and hip.compiler-other-root (after the pick). */
void sc_hip_compiler_facts(sc_hip_run *r);
/* hip.runtime-not-found, unless the loader's pick or a live load by name found a runtime. */
void sc_hip_report_not_found(sc_hip_run *r, bool loaded_by_name);

/* hip_load.c: dlopen and bind. */
/* Loads the HIP runtime (--hip-library, else the loader's pick, else the known names) into r->lib
 * and records it in facts.runtime; false (reported) when none loads. */
bool sc_hip_load_runtime(sc_hip_run *r);
/* Binds the runtime's entry points and records its versions; false (reported) when too old. */
bool sc_hip_bind_runtime(sc_hip_run *r);
/* Binds hiprtc from the runtime itself or a libhiprtc beside it; false (reported) when absent. */
bool sc_hip_load_hiprtc(sc_hip_run *r);

/* hip_devices.c: enumerate and validate. */
/* hipInit then hipGetDeviceCount; returns the count, or -1 (reported) when the probe must stop. */
int sc_hip_init_and_count(sc_hip_run *r);
/* Reads every device's identity into r->devices, noting impossible answers. */
void sc_hip_read_devices(sc_hip_run *r);
/* hip.invalid-answer with every impossible answer noted, when there was one. */
void sc_hip_report_bad_answers(sc_hip_run *r);

/* hip_checks.c: the runtime's view against the driver layer and the environment. */
/* The driver layer's devices array, or NULL when it has none to compare with. */
const cJSON *sc_hip_driver_devices(const sc_hip_run *r);
/* The driver layer's device at PCI address pci (any case), or NULL. */
const cJSON *sc_hip_driver_device_at(const sc_hip_run *r, const char *pci);
/* hip.devices-hidden when a visibility variable explains it, else hip.no-device. */
void sc_hip_report_no_device(sc_hip_run *r, const char *why);
/* facts.driver_agrees, and hip.device-mismatch when count or PCI addresses differ. */
void sc_hip_check_against_driver(sc_hip_run *r);
/* hip.arch-overridden when HSA_OVERRIDE_GFX_VERSION is set. */
void sc_hip_check_arch_override(sc_hip_run *r);

/* hip_work.c: memory, copy, and the per-device work loop. */
/* Free and total memory of every device, and hip.memory-in-use when others hold most of it. */
void sc_hip_memory_baselines(sc_hip_run *r);
/* The finding for a runtime error during the work; what names the failing step. */
void sc_hip_work_error(sc_hip_run *r, int dev, const char *what, int rc);
/* Copy check and kernel check on each of the first devices. */
void sc_hip_work_on_devices(sc_hip_run *r);

/* hip_kernel.c: compile with hiprtc, launch, verify. */
/* Compiles (once per arch), loads and launches the kernel on device dev, whose facts are o. */
void sc_hip_kernel_check(sc_hip_run *r, int dev, cJSON *o);
/* Frees the compiled code objects. */
void sc_hip_kernel_free(sc_hip_run *r);

#endif
