/* The app.script helper's result taken apart: runs, stages, metrics and timing into facts, and the
 * findings on them: a failed stage, the first module to produce non-finite values; memory, the
 * profile, the training watch and the scaling have their own files. Reads the JSON the
 * interpreter child reported; no I/O. */
#include <string.h>

#include "sc_app.h"
#include "sc_app_script.h"
#include "sc_json.h"
#include "sc_probe.h"

/* Moves obj[key] into facts (null with a reason when absent or of the wrong type). */
static void move_fact(cJSON *facts, cJSON *obj, const char *key, cJSON_bool (*is)(const cJSON *))
{
    cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(obj, key);
    if (v && is(v)) {
        cJSON_AddItemToObject(facts, key, v);
        return;
    }
    cJSON_Delete(v);
    sc_fact_null(facts, key, "not reported by the script run");
}

/* Takes r[key] over into the facts when it is an object and judges it with check; else the fact
 * is null with the reason. */
static void take_object(sc_result *res, cJSON *r, const char *key,
                        void (*check)(sc_result *, cJSON *), const char *why_absent)
{
    cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(r, key);
    if (cJSON_IsObject(item)) {
        cJSON_AddItemToObject(res->facts, key, item);
        check(res, item);
        return;
    }
    cJSON_Delete(item);
    sc_fact_null(res->facts, key, "%s", why_absent);
}

static void check_numerics(sc_result *res, const cJSON *numerics)
{
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(numerics, "first_nonfinite");
    const char *module = sc_json_str(first, "module");
    if (!module)
        return;
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(numerics, "input");
    const cJSON *in_nan = cJSON_GetObjectItemCaseSensitive(input, "nan");
    const cJSON *in_inf = cJSON_GetObjectItemCaseSensitive(input, "inf");
    bool bad_input = (cJSON_IsNumber(in_nan) && in_nan->valuedouble > 0) ||
                     (cJSON_IsNumber(in_inf) && in_inf->valuedouble > 0);
    const cJSON *nan = cJSON_GetObjectItemCaseSensitive(first, "nan");
    const cJSON *inf = cJSON_GetObjectItemCaseSensitive(first, "inf");
    sc_finding(
        res, "app.first-nonfinite-module", SC_SEV_ERROR,
        "inspect that module's weights and inputs (facts.numerics.modules has each module's "
        "statistics); compare with a snapshot from a machine where it works: stackcheck diff",
        "module '%s' (%s) is the first to produce non-finite values in the forward of '%s': "
        "%.0f NaN, %.0f Inf%s",
        module, sc_json_str(first, "type") ? sc_json_str(first, "type") : "?",
        sc_json_str(numerics, "name") ? sc_json_str(numerics, "name") : "model",
        cJSON_IsNumber(nan) ? nan->valuedouble : 0, cJSON_IsNumber(inf) ? inf->valuedouble : 0,
        bad_input ? "; the input itself already held non-finite values" : "");
}

static void check_failure(sc_result *res, const cJSON *r)
{
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ok")))
        return;
    const char *error = sc_json_str(r, "error"), *stage = sc_json_str(r, "failed_stage");
    char line[400];
    sc_app_one_line(error ? error : "", error ? strlen(error) : 0, line, sizeof line);
    const char *last = strrchr(line, '|'); /* the exception itself is the traceback's last line */
    sc_finding(res, "app.failed", SC_SEV_ERROR,
               "fix the first failed stage: its output tail and the traceback are in facts.stages "
               "and facts.error",
               "the app script failed in stage '%s': %s", stage ? stage : "?",
               last      ? last + 2
               : line[0] ? line
                         : "(no error text)");
}

void sc_app_script_result(sc_result *res, cJSON *r)
{
    cJSON *facts = res->facts;
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(r, "runs");
    cJSON_AddNumberToObject(facts, "runs", cJSON_IsArray(runs) ? cJSON_GetArraySize(runs) : 0);
    cJSON_AddBoolToObject(facts, "ok", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "ok")));
    if (sc_json_str(r, "failed_stage"))
        cJSON_AddStringToObject(facts, "first_failed_stage", sc_json_str(r, "failed_stage"));
    else
        sc_fact_null(facts, "first_failed_stage", "no stage failed");
    if (sc_json_str(r, "error"))
        cJSON_AddStringToObject(facts, "error", sc_json_str(r, "error"));
    else
        sc_fact_null(facts, "error", "the script raised nothing");
    move_fact(facts, r, "stages", cJSON_IsArray);
    move_fact(facts, r, "metrics", cJSON_IsObject);
    cJSON_AddItemToObject(facts, "timing", sc_app_timing_json(cJSON_IsArray(runs) ? runs : NULL));
    sc_app_check_memory(res, runs);
    check_failure(res, r);
    cJSON *numerics = cJSON_DetachItemFromObjectCaseSensitive(r, "numerics");
    if (cJSON_IsObject(numerics)) {
        check_numerics(res, numerics);
        cJSON_AddItemToObject(facts, "numerics", numerics);
    } else {
        cJSON_Delete(numerics);
        sc_fact_null(facts, "numerics", "the script did not call stackcheck.watch()");
    }
    take_object(res, r, "profile", sc_app_check_profile,
                cJSON_IsTrue(sc_json_member(r, "app_profile"))
                    ? "the profiled repetition did not finish"
                    : "neither --app-profile nor stackcheck.profile() was used");
    take_object(res, r, "train_watch", sc_app_check_train,
                "the script did not call stackcheck.train_watch()");
    take_object(res, r, "scaling", sc_app_check_scaling,
                "the script did not call stackcheck.scaling()");
}
