/* The state runtime.acl carries from step to step, and the steps, each in the file that does that
 * job: the passive inventory (acl_inventory.c), loading and device enumeration (acl_devices.c),
 * memory and the copy check (acl_work.c). probes/runtime_acl.c is only the order of these calls. */
#ifndef SC_ACL_RUN_H
#define SC_ACL_RUN_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "sc_acl.h"
#include "sc_dl.h"
#include "sc_loader.h"
#include "sc_probe.h"
#include "sc_util.h"

#define SC_ACL_WORK_DEVICES 16  /* devices the memory and copy checks run on */
#define SC_ACL_MAX_DEVICES 1024 /* a larger count is a garbage answer */

typedef struct {
    const sc_ctx *ctx;
    sc_result *res;
    sc_dl_lib lib;
    sc_acl_fns fns;
    int count;                       /* devices ACL reports, -1 until known */
    bool inited;                     /* aclInit succeeded: aclFinalize at the end */
    cJSON *api;                      /* facts.acl */
    cJSON *devices;                  /* facts.devices */
    sc_buf bad;                      /* impossible answers, reported as acl.invalid-answer */
    char toolkit_lib[PATH_MAX + 16]; /* a toolkit's lib64 holding libascendcl.so, "" if none */
} sc_acl_run;

/* acl_inventory.c: toolkits, install path and the loader's libascendcl.so pick into facts. */
void sc_acl_inventory_facts(sc_acl_run *r, const char *ld_library_path);
/* acl_inventory_compilers.c: facts.compilers (ccec, bisheng, atc) and acl.compiler-other-root
 * against the libascendcl.so the loader picks (pick). */
void sc_acl_compiler_facts(sc_acl_run *r, const sc_loader_pick *pick);

/* acl_devices.c */
/* Loads libascendcl.so by soname and binds it; false (reported) when it cannot. */
bool sc_acl_load(sc_acl_run *r);
/* aclInit, versions, aclrtGetDeviceCount; returns the count, or -1 (reported). */
int sc_acl_init_and_count(sc_acl_run *r);
/* acl.invalid-answer with every impossible answer noted, when there was one. */
void sc_acl_report_bad_answers(sc_acl_run *r);

/* acl_work.c: per device SetDevice, SoC name, memory, copy check, ResetDevice. */
void sc_acl_work_on_devices(sc_acl_run *r);

#endif
