/* The findings of a failed import: torch not installed for this interpreter, or a loader error,
 * whose file the libraries layer then analyses to name the cause. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_libs.h"
#include "sc_redact.h"
#include "sc_text.h"
#include "sc_torch.h"
#include "sc_util.h"

/* The most telling finding of a libraries analysis: an error about subject, else any error. */
static const char *decisive_finding(const cJSON *analysis, const char *subject)
{
    const cJSON *f, *first = NULL;
    cJSON_ArrayForEach (f, sc_json_member(analysis, "findings")) {
        const char *msg = sc_json_str(f, "message");
        if (!msg ||
            strcmp(sc_json_str(f, "severity") ? sc_json_str(f, "severity") : "", "error") != 0)
            continue;
        if (subject[0] && strstr(msg, subject))
            return msg;
        if (!first)
            first = f;
    }
    return first ? sc_json_str(first, "message") : NULL;
}

/* Names the file a loader error points at and analyses it with the libraries layer; appends
 * what it found to summary. */
static void analyse_loader_error(const sc_ctx *ctx, cJSON *err_obj, sc_buf *summary)
{
    char file[PATH_MAX], kind[32], subject[512];
    const char *msg = sc_json_str(err_obj, "message");
    if (!msg ||
        !sc_loader_error_parse(msg, file, sizeof file, kind, sizeof kind, subject, sizeof subject))
        return;
    if (!file[0] && sc_json_str(err_obj, "path") && sc_json_str(err_obj, "path")[0] == '/')
        sc_fmt(file, sizeof file, "%s", sc_json_str(err_obj, "path"));
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
    double deadline = ctx->opt->timeout_s > 0 ? ctx->opt->timeout_s : SC_LIBS_TIMEOUT_S;
    if (sc_libs_analyze_isolated(ctx->root, file, &cfg, deadline, &analysis, &e) < 0 || !analysis) {
        sc_fact_null(err_obj, "analysis", "%s", e.message);
        return;
    }
    cJSON_AddItemToObject(err_obj, "analysis", analysis);
    const char *decisive = decisive_finding(analysis, subject);
    if (decisive)
        sc_buf_printf(summary, "; analysis: %s", decisive);
}

void sc_torch_report_not_installed(const sc_ctx *ctx, sc_result *res, const sc_python_info *info)
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
               sc_json_str(first, "python"), info->executable);
    else
        sc_fmt(hint, sizeof hint, "install a ROCm/DTK (or CUDA) build of torch for %s",
               info->executable);
    sc_finding(res, "torch.not-installed", SC_SEV_ERROR, hint,
               "torch is not installed for %s (Python %s)%s%s%s%s", info->executable, info->version,
               first ? "; " : "", first ? sc_json_str(first, "python") : "",
               first ? " has torch " : "", first ? sc_json_str(first, "version") : "");
}

/* First line of s, redacted before it is cut to at most 300 bytes on a character boundary. */
static const char *first_line(const char *s, char *buf, size_t size)
{
    char *clean = sc_redact_value(s ? s : "");
    const char *p = clean ? clean : "";
    size_t n = sc_utf8_prefix(p, strcspn(p, "\n"), size - 1 < 300 ? size - 1 : 300);
    snprintf(buf, size, "%.*s", (int)n, p);
    free(clean);
    return buf;
}

void sc_torch_report_import_failed(const sc_ctx *ctx, sc_result *res, cJSON *err_obj,
                                   const char *module)
{
    sc_buf summary;
    char line[512];
    sc_buf_init(&summary);
    analyse_loader_error(ctx, err_obj, &summary);
    const char *type = sc_json_str(err_obj, "type") ? sc_json_str(err_obj, "type") : "?";
    first_line(sc_json_str(err_obj, "message"), line, sizeof line);
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
