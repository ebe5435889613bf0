/* framework.torch: PyTorch in the user's own interpreter. The passive part (which Python, torch's
 * version from its metadata) runs here, in the runner's process, so it survives an import that
 * crashes or hangs; the import runs in an isolated child with its own deadline (see
 * docs/probes.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "sc_isolate.h"
#include "sc_libs.h"
#include "sc_python.h"
#include "sc_roots.h"
#include "sc_util.h"

extern const char sc_py_framework_torch[];

#define DEFAULT_TIMEOUT_S 60.0

static const char *const plugins[] = {"torch_npu", "intel_extension_for_pytorch", "torch_mlu",
                                      "torch_musa"};

typedef struct {
    sc_python_info info;
    char *config;
    char workdir[PATH_MAX]; /* made and removed here, so a crashed child leaves nothing behind */
} import_job;

/* ---- passive: interpreter and metadata ---- */

static void add_python_facts(cJSON *facts, const sc_python_info *info)
{
    cJSON *py = cJSON_AddObjectToObject(facts, "python");
    if (!py)
        return;
    cJSON_AddStringToObject(py, "mode", info->libpython[0] ? "embedded" : "subprocess");
    cJSON_AddStringToObject(py, "executable", info->executable);
    cJSON_AddStringToObject(py, "version", info->version);
    cJSON_AddStringToObject(py, "prefix", info->prefix);
    cJSON_AddStringToObject(py, "base_prefix", info->base_prefix);
    cJSON_AddStringToObject(py, "located", info->located[0] ? info->located : "ran");
    if (info->version_from[0])
        cJSON_AddStringToObject(py, "version_from", info->version_from);
    sc_fact_str(py, "libpython", info->libpython[0] ? info->libpython : NULL, info->no_libpython);
    cJSON *sites = cJSON_AddArrayToObject(py, "site_packages");
    for (int i = 0; sites && i < info->site_count; i++)
        cJSON_AddItemToArray(sites, cJSON_CreateString(info->site_packages[i]));
}

/* First installation of project along the import path, as {name, version, path}, or NULL. */
static cJSON *dist_of(const sc_ctx *ctx, const sc_python_info *info, const char *project)
{
    char version[128], path[PATH_MAX];
    for (int i = 0; i < info->site_count; i++) {
        if (sc_python_dist_version(ctx->root, info->site_packages[i], project, version,
                                   sizeof version, path, sizeof path) < 0)
            continue;
        cJSON *o = cJSON_CreateObject();
        if (o) {
            cJSON_AddStringToObject(o, "name", project);
            cJSON_AddStringToObject(o, "version", version);
            cJSON_AddStringToObject(o, "path", path);
        }
        return o;
    }
    return NULL;
}

static void add_metadata_facts(const sc_ctx *ctx, cJSON *facts, const sc_python_info *info)
{
    cJSON *meta = cJSON_AddObjectToObject(facts, "metadata");
    if (!meta)
        return;
    cJSON *torch = dist_of(ctx, info, "torch");
    if (torch)
        cJSON_AddItemToObject(meta, "torch", torch);
    else
        sc_fact_null(meta, "torch", "no torch metadata in %d site directories", info->site_count);
    cJSON *list = cJSON_AddArrayToObject(meta, "plugins");
    for (size_t i = 0; list && i < sizeof plugins / sizeof plugins[0]; i++) {
        cJSON *p = dist_of(ctx, info, plugins[i]);
        if (p)
            cJSON_AddItemToArray(list, p);
    }
}

/* ---- active: the import in an isolated child ---- */

/* True when an embedded run's import failed in a way the interpreter itself may not share: not a
 * plain "torch is not installed". */
static bool embedded_import_failed(const cJSON *result)
{
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(result, "import_error");
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "type"));
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(err, "name"));
    return err && !(type && strcmp(type, "ModuleNotFoundError") == 0 && name &&
                    strcmp(name, "torch") == 0);
}

/* Embedding shares this process's own libraries (libdrm, libelf, zlib...) with torch, which the
 * plain interpreter does not: an import that fails embedded is tried once more in a subprocess,
 * and when that works, its answer is the user's truth and the embedded failure is recorded. */
static void retry_in_subprocess(import_job *job, const char *const *argv, cJSON **result,
                                const char **mode, cJSON *out)
{
    sc_python_info *plain = &job->info;
    cJSON *again = NULL;
    const char *again_mode = NULL;
    sc_error err = {0};
    char saved[PATH_MAX];
    snprintf(saved, sizeof saved, "%s", plain->libpython);
    plain->libpython[0] = '\0';
    int rc = sc_python_run_in(plain, job->workdir, sc_py_framework_torch, argv, &again, &again_mode,
                              &err);
    snprintf(plain->libpython, sizeof plain->libpython, "%s", saved);
    if (rc < 0 || !again || embedded_import_failed(again)) {
        cJSON_Delete(again);
        return;
    }
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(*result, "import_error");
    char why[1024];
    snprintf(why, sizeof why, "import torch failed only when embedded (%s: %.800s)",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "type")) ?: "?",
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "message")) ?: "");
    cJSON_AddStringToObject(out, "embed_error", why);
    cJSON_Delete(*result);
    *result = again;
    *mode = again_mode;
}

static cJSON *import_child(void *arg)
{
    import_job *job = arg;
    const char *argv[] = {"stackcheck-framework-torch", job->config, NULL};
    cJSON *result = NULL, *out = cJSON_CreateObject();
    const char *mode = NULL;
    sc_error err = {0};
    int rc = sc_python_run_in(&job->info, job->workdir, sc_py_framework_torch, argv, &result, &mode,
                              &err);
    if (rc == -ENOEXEC || rc == -ENOSYS) {
        /* libpython would not load (wrong architecture, missing symbols): the interpreter can
         * still run the same code itself. */
        cJSON_AddStringToObject(out, "embed_error", err.message);
        job->info.libpython[0] = '\0';
        rc = sc_python_run_in(&job->info, job->workdir, sc_py_framework_torch, argv, &result, &mode,
                              &err);
    } else if (rc == 0 && job->info.libpython[0] && embedded_import_failed(result)) {
        retry_in_subprocess(job, argv, &result, &mode, out);
    }
    cJSON_AddStringToObject(out, "mode", mode ? mode : "?");
    if (rc < 0)
        cJSON_AddStringToObject(out, "error", err.message);
    if (result)
        cJSON_AddItemToObject(out, "result", result);
    return out;
}

static char *import_config(const sc_options *opt)
{
    cJSON *cfg = cJSON_CreateObject();
    cJSON *list = cfg ? cJSON_AddArrayToObject(cfg, "imports") : NULL;
    for (int i = 0; list && i < opt->imports.count; i++)
        cJSON_AddItemToArray(list, cJSON_CreateString(opt->imports.items[i]));
    char *text = list ? cJSON_PrintUnformatted(cfg) : NULL;
    cJSON_Delete(cfg);
    return text;
}

/* Runs the import; returns the child's {mode, result|error} or NULL with res marked. */
static cJSON *run_import(const sc_ctx *ctx, sc_result *res, const sc_python_info *info)
{
    import_job *job = malloc(sizeof *job);
    char *config = import_config(ctx->opt);
    if (!job || !config) {
        free(job);
        free(config);
        sc_result_error(res, "out of memory");
        return NULL;
    }
    job->info = *info;
    job->config = config;
    sc_error err = {0};
    if (sc_python_workdir(job->workdir, sizeof job->workdir, &err) < 0) {
        sc_result_error(res, "%s", err.message);
        free(config);
        free(job);
        return NULL;
    }
    double timeout = ctx->opt->timeout_s > 0 ? ctx->opt->timeout_s : DEFAULT_TIMEOUT_S;
    sc_isolate_report rep;
    int rc = sc_isolate_run(import_child, job, timeout, &rep);
    sc_python_workdir_remove(job->workdir);
    free(config);
    free(job);
    if (rc < 0) {
        sc_result_error(res, "could not start the import child: %s", strerror(-rc));
        return NULL;
    }
    if (rep.outcome == SC_ISOLATE_CRASH) {
        res->status = SC_STATUS_CRASH;
        snprintf(res->reason, sizeof res->reason, "import torch crashed: %s", rep.detail);
        sc_finding(res, "torch.import-crashed", SC_SEV_ERROR,
                   "run `python3 -X faulthandler -c 'import torch'` to see where it dies",
                   "importing torch in %s killed the process (%s)", info->executable, rep.detail);
    } else if (rep.outcome == SC_ISOLATE_TIMEOUT) {
        res->status = SC_STATUS_TIMEOUT;
        snprintf(res->reason, sizeof res->reason, "import torch timed out: %s", rep.detail);
        sc_finding(
            res, "torch.import-hangs", SC_SEV_ERROR,
            "run `python3 -X faulthandler -c 'import torch'` and interrupt it to see the stack",
            "importing torch in %s did not finish within %.0f s", info->executable, timeout);
    } else if (rep.outcome == SC_ISOLATE_ERROR) {
        sc_result_error(res, "the import child failed: %s; output: %.300s", rep.detail,
                        rep.output_tail);
    }
    return rep.outcome == SC_ISOLATE_OK ? rep.result : NULL;
}

/* ---- reading the child's answer ---- */

static const cJSON *member(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *str_of(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(member(o, key));
}

/* Adds root and root_kind (the install each file belongs to) to every library object. */
static void classify_libraries(cJSON *libs)
{
    cJSON *l;
    cJSON_ArrayForEach (l, libs) {
        const char *real = str_of(l, "realpath");
        if (!real)
            continue;
        sc_install_root ir;
        sc_install_root_of(real, &ir);
        cJSON_AddStringToObject(l, "root", ir.path);
        cJSON_AddStringToObject(l, "root_kind", sc_root_kind_name(ir.kind));
    }
}

/* The HIP runtime file the runtime layer loaded (facts.runtime), else the one its loader search
 * picked (facts.runtime_library). */
static const char *runtime_hip_library(const sc_ctx *ctx)
{
    const cJSON *f = sc_ctx_facts(ctx, "runtime.hip");
    const char *loaded = str_of(member(f, "runtime"), "realpath");
    return loaded ? loaded : str_of(member(f, "runtime_library"), "realpath");
}

/* A GPU runtime installed on the machine: what the runtime layer loaded, else a known file. */
static bool runtime_installed(const sc_ctx *ctx, char *evidence, size_t size)
{
    static const char *const dirs[] = {"/opt/dtk/lib", "/opt/rocm/lib", "/usr/lib/x86_64-linux-gnu",
                                       "/usr/lib64"};
    static const char *const names[] = {"libgalaxyhip.so.5", "libamdhip64.so.6", "libamdhip64.so.5",
                                        "libcuda.so.1"};
    char path[PATH_MAX], real[PATH_MAX];
    const char *lib = runtime_hip_library(ctx);
    const char *version = str_of(member(sc_ctx_facts(ctx, "runtime.hip"), "runtime"), "version");
    const cJSON *cuda = sc_ctx_facts(ctx, "runtime.cuda");
    const char *cuda_lib = str_of(member(cuda, "driver_api"), "realpath");
    if (!cuda_lib)
        cuda_lib = str_of(member(cuda, "driver_library"), "realpath");
    if (lib) {
        sc_fmt(evidence, size, "the runtime layer loaded HIP %s (%s)", version ? version : "?",
               lib);
        return true;
    }
    if (cuda_lib) {
        sc_fmt(evidence, size, "the runtime layer found the CUDA driver %s", cuda_lib);
        return true;
    }
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++)
        for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
            sc_fmt(path, sizeof path, "%s/%s", dirs[d], names[n]);
            if (sc_root_realpath(ctx->root, path, real, sizeof real) == 0) {
                sc_fmt(evidence, size, "%s is installed (%s)", names[n], real);
                return true;
            }
        }
    return false;
}

static const cJSON *mapped_runtime(const cJSON *libs)
{
    const cJSON *l;
    cJSON_ArrayForEach (l, libs) {
        const char *name = str_of(l, "name");
        if (name && (sc_starts_with(name, "libamdhip64") || sc_starts_with(name, "libgalaxyhip")))
            return l;
    }
    return NULL;
}

static void check_runtime_mismatch(const sc_ctx *ctx, sc_result *res, const cJSON *torch)
{
    const char *theirs = runtime_hip_library(ctx);
    const cJSON *mine = mapped_runtime(member(torch, "mapped_libraries"));
    const char *real = str_of(mine, "realpath");
    char canon[PATH_MAX];
    if (!theirs || !real)
        return;
    if (sc_root_realpath(ctx->root, theirs, canon, sizeof canon) == 0)
        theirs = canon;
    if (strcmp(theirs, real) == 0)
        return;
    sc_finding(res, "torch.runtime-mismatch", SC_SEV_WARN,
               "make torch and the runtime use one install: fix LD_LIBRARY_PATH, or install the "
               "torch build made for this runtime",
               "torch loaded %s (root %s) but the runtime layer loaded %s", real,
               str_of(mine, "root") ? str_of(mine, "root") : "?", theirs);
}

/* Whether torch's arch list has code for arch ("gfx90a:sramecc+:xnack-" matches "gfx90a";
 * "sm_86" matches sm_86, or compute_XY PTX with XY <= 86). */
static bool arch_covered(const char *arch, const cJSON *list)
{
    size_t base = strcspn(arch, ":");
    int dev_cc = sc_starts_with(arch, "sm_") ? atoi(arch + 3) : -1;
    const cJSON *a;
    cJSON_ArrayForEach (a, list) {
        const char *s = cJSON_GetStringValue(a);
        if (!s)
            continue;
        if (strcspn(s, ":") == base && strncmp(s, arch, base) == 0)
            return true;
        if (dev_cc > 0 && sc_starts_with(s, "compute_") && atoi(s + 8) <= dev_cc)
            return true;
    }
    return false;
}

static void check_devices(sc_result *res, const cJSON *torch)
{
    const cJSON *list = member(torch, "arch_list"), *d;
    if (cJSON_GetArraySize(list) == 0)
        return;
    cJSON_ArrayForEach (d, member(torch, "devices")) {
        const char *arch = str_of(d, "arch");
        if (arch && !arch_covered(arch, list)) {
            char *archs = cJSON_PrintUnformatted(list);
            sc_finding(res, "torch.no-arch-for-device", SC_SEV_ERROR,
                       "install a torch build compiled for this architecture",
                       "device %s (%s) has no code in torch's arch list %s",
                       str_of(d, "name") ? str_of(d, "name") : "?", arch, archs ? archs : "?");
            free(archs);
        }
    }
}

static void check_round_trip(sc_result *res, const cJSON *rt)
{
    if (!rt || cJSON_IsTrue(member(rt, "ok")))
        return;
    const cJSON *e = member(rt, "error");
    char *values = cJSON_PrintUnformatted(member(rt, "values"));
    sc_finding(res, "torch.device-tensor-mismatch", SC_SEV_ERROR,
               "the device computes wrong results: check the runtime layer's kernel test and the "
               "arch torch was built for",
               "x = torch.arange(8, device='%s'); (x*2).cpu() gave %s instead of [0,2,...,14]%s%s",
               str_of(rt, "device") ? str_of(rt, "device") : "?", values ? values : "no values",
               e ? ": " : "", e && str_of(e, "message") ? str_of(e, "message") : "");
    free(values);
}

#define NO_DEVICE_HINT                                                                             \
    "see the driver and runtime layers: the device is missing, hidden (HIP_VISIBLE_DEVICES, "      \
    "CUDA_VISIBLE_DEVICES) or not accessible to this user"

static void check_build(const sc_ctx *ctx, sc_result *res, const cJSON *torch)
{
    const char *hip = str_of(torch, "hip"), *cuda = str_of(torch, "cuda");
    const char *version = str_of(torch, "version") ? str_of(torch, "version") : "?";
    double count = cJSON_GetNumberValue(member(torch, "device_count"));
    char evidence[PATH_MAX + 64];
    if (!hip && !cuda) {
        if (runtime_installed(ctx, evidence, sizeof evidence))
            sc_finding(res, "torch.cpu-only-build", SC_SEV_ERROR,
                       "install a ROCm (AMD) or DTK (Hygon DCU) build of torch, e.g. from "
                       "https://download.pytorch.org/whl/rocm6.2, or your vendor's DTK wheel",
                       "torch %s is a CPU-only build (torch.version.hip and .cuda are None) but "
                       "a GPU runtime is present: %s",
                       version, evidence);
        return;
    }
    const char *avail = cJSON_IsTrue(member(torch, "is_available")) ? "true" : "false";
    if (!(count > 0) && hip)
        sc_finding(
            res, "torch.hip-build-no-device", SC_SEV_ERROR, NO_DEVICE_HINT,
            "torch %s is a HIP %s build but torch.cuda.device_count() is 0 (is_available %s)",
            version, hip, avail);
    else if (!(count > 0))
        sc_finding(res, "torch.cuda-build-no-device", SC_SEV_ERROR, NO_DEVICE_HINT,
                   "torch %s is a CUDA %s build but torch.cuda.device_count() is 0 (is_available "
                   "%s)",
                   version, cuda, avail);
    check_runtime_mismatch(ctx, res, torch);
    check_devices(res, torch);
}

/* ---- import failures ---- */

/* The most telling finding of a libraries analysis: an error about subject, else any error. */
static const char *decisive_finding(const cJSON *analysis, const char *subject)
{
    const cJSON *f, *first = NULL;
    cJSON_ArrayForEach (f, member(analysis, "findings")) {
        const char *msg = str_of(f, "message");
        if (!msg || strcmp(str_of(f, "severity") ? str_of(f, "severity") : "", "error") != 0)
            continue;
        if (subject[0] && strstr(msg, subject))
            return msg;
        if (!first)
            first = f;
    }
    return first ? str_of(first, "message") : NULL;
}

/* Names the file a loader error points at and analyses it with the libraries layer; appends
 * what it found to summary. */
static void analyse_loader_error(const sc_ctx *ctx, cJSON *err_obj, sc_buf *summary)
{
    char file[PATH_MAX], kind[32], subject[512];
    const char *msg = str_of(err_obj, "message");
    if (!msg ||
        !sc_loader_error_parse(msg, file, sizeof file, kind, sizeof kind, subject, sizeof subject))
        return;
    if (!file[0] && str_of(err_obj, "path") && str_of(err_obj, "path")[0] == '/')
        sc_fmt(file, sizeof file, "%s", str_of(err_obj, "path"));
    cJSON *loader = cJSON_AddObjectToObject(err_obj, "loader");
    cJSON_AddStringToObject(loader, "kind", kind);
    cJSON_AddStringToObject(loader, "subject", subject);
    sc_fact_str(loader, "file", file[0] ? file : NULL, "the message names no file");
    sc_buf_printf(summary, "; loader: %s %s in %s", kind, subject, file[0] ? file : "?");
    if (!file[0])
        return;
    cJSON *analysis = NULL;
    sc_error e = {0};
    sc_libs_config cfg = {.ld_library_path = getenv("LD_LIBRARY_PATH")};
    if (sc_libs_analyze(ctx->root, file, &cfg, &analysis, &e) < 0 || !analysis) {
        sc_fact_null(err_obj, "analysis", "%s", e.message);
        return;
    }
    cJSON_AddItemToObject(err_obj, "analysis", analysis);
    const char *decisive = decisive_finding(analysis, subject);
    if (decisive)
        sc_buf_printf(summary, "; analysis: %s", decisive);
}

static bool is_not_installed(const cJSON *err, const char *module)
{
    const char *type = str_of(err, "type"), *name = str_of(err, "name");
    return type && strcmp(type, "ModuleNotFoundError") == 0 && name && strcmp(name, module) == 0;
}

static void report_not_installed(const sc_ctx *ctx, sc_result *res, const sc_python_info *info)
{
    const char *skip[9] = {0};
    for (int i = 0; i < info->site_count; i++)
        skip[i] = info->site_packages[i];
    cJSON *others = cJSON_AddArrayToObject(res->facts, "torch_elsewhere");
    if (others)
        sc_python_find_elsewhere(ctx->root, "torch", skip, others);
    const cJSON *first = cJSON_GetArrayItem(others, 0);
    char hint[PATH_MAX + 128];
    if (first)
        sc_fmt(hint, sizeof hint, "run with --python %s, or install torch for %s",
               str_of(first, "python"), info->executable);
    else
        sc_fmt(hint, sizeof hint, "install a ROCm/DTK (or CUDA) build of torch for %s",
               info->executable);
    sc_finding(res, "torch.not-installed", SC_SEV_ERROR, hint,
               "torch is not installed for %s (Python %s)%s%s%s%s", info->executable, info->version,
               first ? "; " : "", first ? str_of(first, "python") : "", first ? " has torch " : "",
               first ? str_of(first, "version") : "");
}

/* First line of s, at most 300 characters, into buf. */
static const char *first_line(const char *s, char *buf, size_t size)
{
    size_t n = strcspn(s ? s : "", "\n");
    snprintf(buf, size, "%.*s", (int)(n < 300 ? n : 300), s ? s : "");
    return buf;
}

static void report_import_failed(const sc_ctx *ctx, sc_result *res, cJSON *err_obj,
                                 const char *module)
{
    sc_buf summary;
    char line[512];
    sc_buf_init(&summary);
    analyse_loader_error(ctx, err_obj, &summary);
    const char *type = str_of(err_obj, "type") ? str_of(err_obj, "type") : "?";
    first_line(str_of(err_obj, "message"), line, sizeof line);
    const char *extra = summary.data && !summary.oom ? summary.data : "";
    if (strcmp(module, "torch") == 0)
        sc_finding(res, "torch.import-failed", SC_SEV_ERROR,
                   "fix what the loader names (see facts.import_error.analysis), or reinstall a "
                   "torch build that matches the installed runtime",
                   "import torch failed: %s: %s%s", type, line, extra);
    else
        sc_finding(res, "torch.module-import-failed", SC_SEV_ERROR,
                   "fix what the loader names (see facts.imports[].error.analysis), or rebuild the "
                   "module against this torch and runtime",
                   "import %s failed: %s: %s%s", module, type, line, extra);
    sc_buf_free(&summary);
}

static void check_imports(const sc_ctx *ctx, sc_result *res, cJSON *imports)
{
    cJSON *m;
    cJSON_ArrayForEach (m, imports) {
        classify_libraries(cJSON_GetObjectItemCaseSensitive(m, "native_libraries"));
        cJSON *err = cJSON_GetObjectItemCaseSensitive(m, "error");
        if (err)
            report_import_failed(ctx, res, err, str_of(m, "module") ? str_of(m, "module") : "?");
    }
}

static void record_mode(sc_result *res, const cJSON *child)
{
    cJSON *py = cJSON_GetObjectItemCaseSensitive(res->facts, "python");
    const char *mode = str_of(child, "mode");
    if (!py || !mode)
        return;
    cJSON_ReplaceItemInObjectCaseSensitive(py, "mode", cJSON_CreateString(mode));
    if (str_of(child, "embed_error"))
        cJSON_AddStringToObject(py, "embed_error", str_of(child, "embed_error"));
}

/* Moves key from the child's result into the facts (NULL when absent). */
static cJSON *take(cJSON *result, sc_result *res, const char *key)
{
    cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(result, key);
    if (item)
        cJSON_AddItemToObject(res->facts, key, item);
    return item;
}

static void check_result(const sc_ctx *ctx, sc_result *res, const sc_python_info *info,
                         cJSON *child)
{
    cJSON *result = cJSON_GetObjectItemCaseSensitive(child, "result");
    record_mode(res, child);
    if (!result || member(result, "probe_error")) {
        const cJSON *pe = member(result, "probe_error");
        sc_result_error(res, "the probe code failed in %s: %s", info->executable,
                        pe ? str_of(pe, "message") : str_of(child, "error"));
        return;
    }
    cJSON *torch = take(result, res, "torch"), *err = take(result, res, "import_error");
    cJSON *libs = cJSON_DetachItemFromObjectCaseSensitive(result, "mapped_libraries");
    classify_libraries(libs);
    if (torch && libs)
        cJSON_AddItemToObject(torch, "mapped_libraries", libs);
    else if (libs)
        cJSON_AddItemToObject(res->facts, "mapped_libraries", libs);
    take(result, res, "import_ms");
    if (err && is_not_installed(err, "torch"))
        report_not_installed(ctx, res, info);
    else if (err)
        report_import_failed(ctx, res, err, "torch");
    if (torch)
        check_build(ctx, res, torch);
    check_round_trip(res, take(result, res, "round_trip"));
    check_imports(ctx, res, take(result, res, "imports"));
}

/* The interpreter's facts from its files alone; false (why in static_error) when that needs
 * running it: a script wrapper such as pyenv's shim, or a layout with no static answer. */
static bool locate_static(const sc_ctx *ctx, sc_python_info *info, char *why, size_t size)
{
    sc_error err = {0};
    if (sc_python_locate_static(ctx->root, ctx->opt->python, info, &err) == 0)
        return true;
    snprintf(why, size, "%s", err.message);
    return false;
}

/* The passive part: the interpreter's facts and torch's metadata (offline: the installations
 * found in the root). The gated inventory (static_first) derives the interpreter from its files
 * when it can and runs it only when it cannot; the active path always asks the interpreter.
 * Returns info (caller frees) when the interpreter was found, else NULL with facts.python null
 * and err filled. */
static sc_python_info *collect_passive(const sc_ctx *ctx, sc_result *res, bool static_first,
                                       sc_error *err)
{
    if (ctx->offline) {
        cJSON *found = cJSON_AddArrayToObject(res->facts, "installations");
        if (found)
            sc_python_find_elsewhere(ctx->root, "torch", NULL, found);
        sc_fact_null(res->facts, "python", "offline (--sysroot): the interpreter is not run");
        return NULL;
    }
    sc_python_info *info = malloc(sizeof *info);
    if (!info) {
        sc_error_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    char why[512] = "";
    bool located = static_first && locate_static(ctx, info, why, sizeof why);
    if (!located && sc_python_locate(ctx->opt->python, info, err) < 0) {
        sc_fact_null(res->facts, "python", "%s", err->message);
        free(info);
        return NULL;
    }
    add_python_facts(res->facts, info);
    if (why[0])
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(res->facts, "python"),
                                "static_error", why);
    add_metadata_facts(ctx, res->facts, info);
    return info;
}

/* Called by the runner instead of run when the layers below failed: the snapshot still gets the
 * interpreter and torch's version from metadata. It reads files; only when the interpreter
 * cannot be known from them (a script wrapper) does it run it (importing nothing but os and
 * sysconfig). It loads nothing into this process. */
static void inventory(const sc_ctx *ctx, sc_result *res)
{
    sc_error err = {0};
    free(collect_passive(ctx, res, true, &err));
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    sc_error err = {0};
    sc_python_info *info = collect_passive(ctx, res, false, &err);
    if (!info) {
        if (!ctx->offline && err.code == -ENOMEM)
            sc_result_error(res, "out of memory");
        else if (!ctx->offline)
            sc_finding(res, "torch.python-not-found", SC_SEV_ERROR,
                       "pass the interpreter you use with --python PATH", "%s", err.message);
        return;
    }
    /* torch has needed Python 3 since 1.5; the probe code uses 3.6 features. */
    cJSON *child = NULL;
    if (info->version[0] < '3')
        sc_result_error(res, "%s is Python %s; the framework probe needs Python 3.6 or newer",
                        info->executable, info->version);
    else
        child = run_import(ctx, res, info);
    if (child)
        check_result(ctx, res, info, child);
    cJSON_Delete(child);
    free(info);
}

const sc_probe sc_probe_framework_torch = {
    .id = "framework.torch",
    .layer = SC_LAYER_FRAMEWORK,
    .backend = SC_BACKEND_NONE,
    /* Not isolated by the runner: the import is isolated here, so that the passive facts (the
     * metadata version) stay in the snapshot when the import crashes or hangs. Active: offline the
     * runner skips it and records its inventory (the torch installations in the root). */
    .isolated = false,
    .active = true,
    .timeout_s = DEFAULT_TIMEOUT_S,
    .summary =
        "PyTorch in the user's Python: build (HIP/CUDA/CPU), devices, round trip, loaded runtime",
    .run = run,
    .inventory = inventory,
};
