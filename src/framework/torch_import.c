/* The active part of framework.torch: the import in an isolated child with its own deadline,
 * embedded in libpython when it loads, else (or when only the embedded import fails) as a
 * subprocess of the user's interpreter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_backend.h"
#include "sc_isolate.h"
#include "sc_redact.h"
#include "sc_step.h"
#include "sc_torch.h"

extern const char sc_py_framework_torch[];

typedef struct {
    sc_python_info info;
    char *config;
    char workdir[PATH_MAX]; /* made and removed here, so a crashed child leaves nothing behind */
} import_job;

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
    sc_redact_format(why, sizeof why, "import torch failed only when embedded (%s: %s)",
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
    sc_step("starting python");
    /* in a parallel run, forked from the warm interpreter that imported torch at the start */
    int rc = sc_python_run_warm(&job->info, job->workdir, sc_py_framework_torch, argv,
                                SC_WARM_SAME_MODE, &result, &mode, &err);
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

/* What the child needs from the backend table: the torch.version fields of GPU builds ("hip",
 * "cuda") and the soname stems of every backend's stack, whose mapped files it lists. */
static bool add_backend_config(cJSON *cfg)
{
    cJSON *builds = cJSON_AddArrayToObject(cfg, "builds");
    cJSON *libs = cJSON_AddArrayToObject(cfg, "libraries");
    for (const sc_backend_desc *const *b = sc_backends; builds && libs && *b; b++) {
        if ((*b)->torch_build)
            cJSON_AddItemToArray(builds, cJSON_CreateString((*b)->torch_build));
        for (const char *const *l = (*b)->stack_libraries; l && *l; l++)
            cJSON_AddItemToArray(libs, cJSON_CreateString(*l));
    }
    return builds && libs;
}

static char *import_config(const sc_options *opt)
{
    cJSON *cfg = cJSON_CreateObject();
    cJSON *list = cfg ? cJSON_AddArrayToObject(cfg, "imports") : NULL;
    for (int i = 0; list && i < opt->imports.count; i++)
        cJSON_AddItemToArray(list, cJSON_CreateString(opt->imports.items[i]));
    char *text = list && add_backend_config(cfg) ? cJSON_PrintUnformatted(cfg) : NULL;
    cJSON_Delete(cfg);
    return text;
}

/* Marks res with what stopped the import child: a crash, a missed deadline or a failure. */
static void report_outcome(sc_result *res, const sc_python_info *info, const sc_isolate_report *rep,
                           double timeout)
{
    if (rep->outcome == SC_ISOLATE_CRASH) {
        res->status = SC_STATUS_CRASH;
        snprintf(res->reason, sizeof res->reason, "import torch crashed: %s", rep->detail);
        sc_finding(res, "torch.import-crashed", SC_SEV_ERROR,
                   "run `python3 -X faulthandler -c 'import torch'` to see where it dies",
                   "importing torch in %s killed the process (%s)", info->executable, rep->detail);
    } else if (rep->outcome == SC_ISOLATE_TIMEOUT) {
        res->status = SC_STATUS_TIMEOUT;
        snprintf(res->reason, sizeof res->reason, "import torch timed out: %s", rep->detail);
        sc_finding(
            res, "torch.import-hangs", SC_SEV_ERROR,
            "run `python3 -X faulthandler -c 'import torch'` and interrupt it to see the stack",
            "importing torch in %s did not finish within %.0f s", info->executable, timeout);
    } else if (rep->outcome == SC_ISOLATE_ERROR) {
        sc_result_error(res, "the import child failed: %s; output: %s", rep->detail,
                        rep->output_tail);
    }
}

/* Runs the import; returns the child's {mode, result|error} or NULL with res marked. */
cJSON *sc_torch_run_import(const sc_ctx *ctx, sc_result *res, const sc_python_info *info,
                           double timeout)
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
    sc_isolate_report rep;
    int rc = sc_isolate_run(import_child, job, timeout, &rep);
    sc_python_workdir_remove(job->workdir);
    free(config);
    free(job);
    if (rc < 0) {
        sc_result_error(res, "could not start the import child: %s", strerror(-rc));
        return NULL;
    }
    report_outcome(res, info, &rep, timeout);
    return rep.outcome == SC_ISOLATE_OK ? rep.result : NULL;
}
