/* The steps of the framework.torch probe: the passive facts (interpreter, torch's metadata), the
 * import in an isolated child, and the checks on what the child reported. */
#ifndef SC_TORCH_H
#define SC_TORCH_H

#include <stdbool.h>

#include "sc_backend.h"
#include "sc_json.h"
#include "sc_probe.h"
#include "sc_python.h"

/* The interpreter's facts and torch's metadata into res->facts (offline: the installations found
 * in the root). static_first derives the interpreter from its files when it can. Returns info
 * (caller frees) when the interpreter was found, else NULL with facts.python null and err
 * filled. */
sc_python_info *sc_torch_collect_passive(const sc_ctx *ctx, sc_result *res, bool static_first,
                                         sc_error *err);

/* Imports torch in an isolated child with a deadline of timeout_s; returns the child's
 * {mode, result|error} or NULL with res marked (crash, timeout, error). */
cJSON *sc_torch_run_import(const sc_ctx *ctx, sc_result *res, const sc_python_info *info,
                           double timeout_s);

/* Moves the child's answer into res->facts and adds the findings it calls for. */
void sc_torch_check_result(const sc_ctx *ctx, sc_result *res, const sc_python_info *info,
                           cJSON *child);

/* Findings on an imported torch: CPU-only build beside a GPU runtime, no device, another runtime
 * than the runtime layer's, devices without code in its arch list. */
void sc_torch_check_build(const sc_ctx *ctx, sc_result *res, const cJSON *torch);
/* The runtime library desc's runtime probe found: the one it loaded, else the one its loader
 * search picked (the descriptor's runtime_library_facts, in order); *version gets its version when
 * the probe read one. NULL when it found none. */
const char *sc_torch_runtime_library(const sc_ctx *ctx, const sc_backend_desc *desc,
                                     const char **version);
/* What Python really imports for --import MODULE (m: one facts.imports[] entry; torch: facts.torch
 * or NULL): torch.import-shadowed when a newer copy further along the search path is never
 * reached; the module's native files: torch.module-runtime-mismatch when its import mapped a
 * second runtime, torch.module-no-code-for-device when its GPU code lacks the target devices. */
void sc_torch_check_import_candidates(const sc_ctx *ctx, sc_result *res, cJSON *m,
                                      const cJSON *torch);
/* The native half of that (torch_import_native.c): the runtime the import mapped and the GPU code
 * of the module's own shared objects (m gets "gpu_code"). */
void sc_torch_check_import_native(const sc_ctx *ctx, sc_result *res, cJSON *m, const cJSON *torch);
/* The library among torch's mapped ones (libs) that is desc's runtime (a soname stem of its
 * runtime libraries followed by ".so": libamdhip64.so.6, not libamdhip64_extra), or NULL. */
const cJSON *sc_torch_mapped_runtime(const cJSON *libs, const sc_backend_desc *desc);
/* torch.compiler-mismatch: the compiler extensions would build with (runtime probe's
 * facts.compilers) is another HIP/CUDA major.minor than the one torch was built for
 * (build_version: torch.version.hip or .cuda), or from another install than the runtime torch
 * loaded. */
void sc_torch_check_compiler(const sc_ctx *ctx, sc_result *res, const cJSON *torch,
                             const sc_backend_desc *desc, const char *build_version);
/* A finding when the device round trip (facts.round_trip) gave wrong values. */
void sc_torch_check_round_trip(sc_result *res, const cJSON *rt);

/* torch.not-installed, naming the interpreters that do have torch. */
void sc_torch_report_not_installed(const sc_ctx *ctx, sc_result *res, const sc_python_info *info);
/* torch.import-failed (module "torch") or torch.module-import-failed, with the libraries layer's
 * analysis of the file the loader error names added to err_obj. */
void sc_torch_report_import_failed(const sc_ctx *ctx, sc_result *res, cJSON *err_obj,
                                   const char *module);

/* The runtime library desc's runtime probe found: the one it loaded, else the one its loader
 * search picked (the descriptor's runtime_library_facts, in order); *version gets its version when
 * the probe read one. NULL when it found none. */
const char *sc_torch_runtime_library(const sc_ctx *ctx, const sc_backend_desc *desc,
                                     const char **version);

#endif
