/* The native side of an --import MODULE that loaded: the runtime its import mapped (a second HIP
 * or CUDA runtime beside torch's, or one from another install than the runtime layer's, is an
 * extension built against another install), and the GPU code of the module's own shared objects
 * against the target devices, read by the libraries layer's analysis in an isolated child. */
#include <stdlib.h>
#include <string.h>

#include "sc_libs.h"
#include "sc_roots.h"
#include "sc_torch.h"
#include "sc_util.h"

#define MAX_NATIVE_FILES 4 /* the module's own shared objects analysed */

/* A runtime library the import mapped for desc, against torch's (a second one) or, when torch
 * mapped none, against the runtime layer's file by install root. */
static void check_runtime(const sc_ctx *ctx, sc_result *res, const cJSON *m, const cJSON *torch,
                          const sc_backend_desc *desc)
{
    const cJSON *mine = sc_torch_mapped_runtime(sc_json_member(m, "native_libraries"), desc);
    const cJSON *theirs = sc_torch_mapped_runtime(sc_json_member(torch, "mapped_libraries"), desc);
    const char *version, *file = theirs ? sc_json_str(theirs, "realpath") : NULL;
    sc_install_root ir = {.kind = SC_ROOT_OTHER};
    if (!mine || !sc_json_str(mine, "realpath"))
        return;
    if (!file && (file = sc_torch_runtime_library(ctx, desc, &version)) != NULL)
        sc_install_root_in(ctx->root, file, &ir);
    const char *their_root = theirs ? sc_json_str(theirs, "root") : file ? ir.path : NULL;
    const char *mine_root = sc_json_str(mine, "root") ? sc_json_str(mine, "root") : "?";
    if (!file || (!theirs && their_root && strcmp(their_root, mine_root) == 0))
        return;
    const char *module = sc_json_str(m, "module") ? sc_json_str(m, "module") : "?";
    sc_finding(res, "torch.module-runtime-mismatch", SC_SEV_ERROR,
               "rebuild the module against the install torch and the runtime layer use (source "
               "its env script first), or remove the RPATH/RUNPATH or LD_LIBRARY_PATH entry that "
               "leads it to the other install",
               "import %s mapped %s (root %s) %s %s%s (root %s): the module was built against "
               "another install",
               module, sc_json_str(mine, "realpath"), mine_root,
               theirs ? "beside torch's" : "while the runtime layer found", file,
               theirs ? ", a second runtime in one process" : "", their_root ? their_root : "?");
}

/* The module's own shared objects: its file when it is one, and what its import mapped from its
 * directory; returns how many (at most MAX_NATIVE_FILES). */
static int native_files(const cJSON *m, const char **files)
{
    const char *file = sc_json_str(m, "file");
    char dir[PATH_MAX];
    int n = 0;
    if (!file)
        return 0;
    if (strstr(file, ".so"))
        files[n++] = file;
    sc_path_dirname(file, dir, sizeof dir);
    size_t len = strlen(dir);
    const cJSON *l;
    cJSON_ArrayForEach (l, sc_json_member(m, "native_libraries")) {
        const char *real = sc_json_str(l, "realpath");
        bool dup = false;
        for (int i = 0; real && i < n; i++)
            dup = dup || strcmp(files[i], real) == 0;
        if (real && !dup && n < MAX_NATIVE_FILES && strncmp(real, dir, len) == 0 &&
            real[len] == '/')
            files[n++] = real;
    }
    return n;
}

/* Analyses one file's GPU code; appends {path, format, targets} to gpu and the no-code findings
 * to res. */
static void check_file_code(const sc_ctx *ctx, sc_result *res, const char *module, const char *file,
                            const sc_libs_config *cfg, cJSON *gpu)
{
    cJSON *analysis = NULL, *o = cJSON_CreateObject();
    sc_error err = {0};
    double deadline = ctx->opt->timeout_s > 0 ? ctx->opt->timeout_s : SC_LIBS_TIMEOUT_S;
    cJSON_AddStringToObject(o, "path", file);
    cJSON_AddItemToArray(gpu, o);
    if (sc_libs_analyze_isolated(ctx->root, file, cfg, deadline, &analysis, &err) < 0) {
        sc_fact_null(o, "offload", "%s", err.message);
        return;
    }
    cJSON_AddItemToObject(o, "offload", cJSON_DetachItemFromObject(analysis, "offload"));
    const cJSON *f;
    cJSON_ArrayForEach (f, sc_json_member(analysis, "findings"))
        if (sc_json_str(f, "id") && strcmp(sc_json_str(f, "id"), "libs.no-code-for-device") == 0)
            sc_finding(res, "torch.module-no-code-for-device", SC_SEV_ERROR,
                       "rebuild the module for the device's architecture (--offload-arch, "
                       "PYTORCH_ROCM_ARCH or TORCH_CUDA_ARCH_LIST), or install a build that "
                       "includes it",
                       "import %s: %s", module, sc_json_str(f, "message") ?: "?");
    cJSON_Delete(analysis);
}

void sc_torch_check_import_native(const sc_ctx *ctx, sc_result *res, cJSON *m, const cJSON *torch)
{
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        check_runtime(ctx, res, m, torch, *b);
    const char *files[MAX_NATIVE_FILES], *archs[SC_LIBS_MAX_ARCHS];
    int n = native_files(m, files);
    if (n == 0)
        return;
    sc_libs_config cfg = {.archs = archs,
                          .arch_count = sc_libs_run_archs(ctx, archs, SC_LIBS_MAX_ARCHS),
                          .ld_library_path = getenv("LD_LIBRARY_PATH"),
                          .no_symbol_check = true};
    cJSON *gpu = cJSON_AddArrayToObject(m, "gpu_code");
    const char *module = sc_json_str(m, "module") ? sc_json_str(m, "module") : "?";
    for (int i = 0; gpu && i < n; i++)
        check_file_code(ctx, res, module, files[i], &cfg, gpu);
}
