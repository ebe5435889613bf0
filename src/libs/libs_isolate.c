/* The libraries analysis of one file in an isolated child with a deadline, for the callers that
 * run in the parent (the framework layer's analysis of a file an import error names): a hung file
 * system, a damaged file or a demangler on a hostile name then costs that analysis, never the run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sc_isolate.h"
#include "sc_json.h"
#include "sc_libs.h"

typedef struct {
    const sc_root *root;
    const char *path;
    const sc_libs_config *cfg;
} analysis_job;

/* {"file": {...}} or {"error": message, "code": errno}. */
static cJSON *analyse_in_child(void *arg)
{
    const analysis_job *job = arg;
    cJSON *file = NULL, *out = cJSON_CreateObject();
    sc_error err = {0};
    if (sc_libs_analyze(job->root, job->path, job->cfg, &file, &err) == 0) {
        cJSON_AddItemToObject(out, "file", file);
        return out;
    }
    cJSON_AddStringToObject(out, "error", err.message);
    cJSON_AddNumberToObject(out, "code", err.code);
    return out;
}

/* The file object or the error of a child that sent a result. */
static int take_result(cJSON *result, cJSON **out, sc_error *err)
{
    cJSON *file = cJSON_DetachItemFromObjectCaseSensitive(result, "file");
    const char *msg = sc_json_str(result, "error");
    int code = (int)cJSON_GetNumberValue(sc_json_member(result, "code"));
    if (cJSON_IsObject(file)) {
        *out = file;
        return 0;
    }
    cJSON_Delete(file);
    return sc_error_set(err, code < 0 ? code : -EIO, "%s",
                        msg ? msg : "the analysis sent a result of the wrong shape");
}

int sc_libs_analyze_isolated(const sc_root *root, const char *path, const sc_libs_config *cfg,
                             double timeout_s, cJSON **out, sc_error *err)
{
    analysis_job job = {root, path, cfg};
    sc_isolate_report rep;
    *out = NULL;
    int rc = sc_isolate_run(analyse_in_child, &job, timeout_s, &rep);
    if (rc < 0)
        return sc_error_set(err, rc, "could not start an isolated child: %s", strerror(-rc));
    switch (rep.outcome) {
    case SC_ISOLATE_OK: rc = take_result(rep.result, out, err); break;
    case SC_ISOLATE_TIMEOUT:
        rc = sc_error_set(err, -ETIMEDOUT, "the analysis of %s timed out: %s", path, rep.detail);
        break;
    case SC_ISOLATE_CRASH:
        rc = sc_error_set(err, -ECHILD, "the analysis of %s crashed: %s", path, rep.detail);
        break;
    case SC_ISOLATE_ERROR:
        rc = sc_error_set(err, -EIO, "the analysis of %s failed: %s", path, rep.detail);
        break;
    }
    cJSON_Delete(rep.result);
    return rc;
}
