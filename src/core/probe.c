/* What probes write (findings, facts, skip and error marks), the typed view of a finding, and
 * what probes may read of the outcomes of the probes that ran before them. */
#include "sc_probe.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sc_json.h"
#include "sc_redact.h"
#include "sc_run_state.h"

int sc_result_init(sc_result *res)
{
    memset(res, 0, sizeof *res);
    res->status = SC_STATUS_UNSET;
    res->facts = cJSON_CreateObject();
    res->findings = cJSON_CreateArray();
    if (!res->facts || !res->findings) {
        sc_result_free(res);
        return -ENOMEM;
    }
    return 0;
}

void sc_result_free(sc_result *res)
{
    cJSON_Delete(res->facts);
    cJSON_Delete(res->findings);
    res->facts = res->findings = NULL;
}

void sc_finding(sc_result *res, const char *id, sc_severity sev, const char *hint, const char *fmt,
                ...)
{
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    sc_redact_vformat(message, sizeof message, fmt, ap);
    va_end(ap);
    cJSON *f = cJSON_CreateObject();
    if (!f)
        return;
    cJSON_AddStringToObject(f, "id", id);
    cJSON_AddStringToObject(f, "severity", sc_severity_name(sev));
    cJSON_AddStringToObject(f, "message", message);
    if (hint)
        cJSON_AddStringToObject(f, "hint", hint);
    else
        cJSON_AddNullToObject(f, "hint");
    cJSON_AddItemToArray(res->findings, f);
}

void sc_result_skip(sc_result *res, bool not_applicable, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sc_redact_vformat(res->reason, sizeof res->reason, fmt, ap);
    va_end(ap);
    res->status = SC_STATUS_SKIP;
    res->not_applicable = not_applicable;
}

void sc_result_error(sc_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sc_redact_vformat(res->reason, sizeof res->reason, fmt, ap);
    va_end(ap);
    res->status = SC_STATUS_ERROR;
}

sc_status sc_result_status(const sc_result *res)
{
    if (res->status != SC_STATUS_UNSET)
        return res->status;
    sc_status worst = SC_STATUS_PASS;
    const cJSON *f;
    sc_finding_view v;
    cJSON_ArrayForEach (f, res->findings) {
        if (!sc_finding_read(f, &v))
            continue;
        if (v.severity == SC_SEV_ERROR)
            return SC_STATUS_FAIL;
        if (v.severity == SC_SEV_WARN)
            worst = SC_STATUS_WARN;
    }
    return worst;
}

bool sc_finding_read(const cJSON *f, sc_finding_view *v)
{
    int sev = sc_severity_parse(sc_json_str(f, "severity"));
    v->id = sc_json_str(f, "id");
    v->severity = sev < 0 ? SC_SEV_INFO : (sc_severity)sev;
    v->message = sc_json_str(f, "message");
    v->hint = sc_json_str(f, "hint");
    return v->id && sev >= 0;
}

const cJSON *sc_outcome_first_finding(const sc_outcome *o, sc_severity sev)
{
    const cJSON *f;
    sc_finding_view v;
    cJSON_ArrayForEach (f, o->findings)
        if (sc_finding_read(f, &v) && v.severity == sev)
            return f;
    return NULL;
}

const sc_outcome *sc_ctx_outcome(const sc_ctx *ctx, const char *probe_id)
{
    ptrdiff_t i = ctx->run ? sc_run_state_index(ctx->run, probe_id) : -1;
    const sc_outcome *o = i < 0 ? NULL : &ctx->run->outcomes[i];
    return o && o->phase == SC_OUTCOME_FINAL ? o : NULL;
}

const cJSON *sc_ctx_facts(const sc_ctx *ctx, const char *probe_id)
{
    const sc_outcome *o = sc_ctx_outcome(ctx, probe_id);
    return o ? o->facts : NULL;
}

sc_status sc_ctx_status(const sc_ctx *ctx, const char *probe_id)
{
    const sc_outcome *o = sc_ctx_outcome(ctx, probe_id);
    return o ? o->status : SC_STATUS_UNSET;
}

const cJSON *sc_ctx_finding(const sc_ctx *ctx, const char *finding_id)
{
    for (size_t k = 0; ctx->run && k < ctx->run->count; k++) {
        const sc_outcome *o = sc_run_state_at(ctx->run, k);
        const cJSON *f, *findings = o->phase == SC_OUTCOME_FINAL ? o->findings : NULL;
        sc_finding_view v;
        cJSON_ArrayForEach (f, findings)
            if (sc_finding_read(f, &v) && strcmp(v.id, finding_id) == 0)
                return f;
    }
    return NULL;
}

void sc_fact_null(cJSON *obj, const char *key, const char *reason_fmt, ...)
{
    char reason[512];
    va_list ap;
    va_start(ap, reason_fmt);
    sc_redact_vformat(reason, sizeof reason, reason_fmt, ap);
    va_end(ap);
    cJSON_DeleteItemFromObject(obj, key);
    cJSON_AddNullToObject(obj, key);
    cJSON *why = cJSON_GetObjectItem(obj, "unavailable");
    if (!why)
        why = cJSON_AddObjectToObject(obj, "unavailable");
    if (why) {
        cJSON_DeleteItemFromObject(why, key);
        cJSON_AddStringToObject(why, key, reason);
    }
}

void sc_fact_str(cJSON *obj, const char *key, const char *value, const char *reason_if_null)
{
    if (value)
        cJSON_AddStringToObject(obj, key, value);
    else
        sc_fact_null(obj, key, "%s", reason_if_null ? reason_if_null : "not available");
}
