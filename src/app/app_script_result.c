/* The app.script helper's result taken apart: runs, stages, metrics and timing into facts, and the
 * findings on them: a failed stage, memory that rises with every repetition, the first module to
 * produce non-finite values. Reads the JSON the interpreter child reported; no I/O. */
#include <string.h>

#include "sc_app.h"
#include "sc_app_script.h"
#include "sc_json.h"
#include "sc_probe.h"

#define MIN_GROWTH_BYTES (4.0 * 1024 * 1024) /* RSS moves by pages; a leak shows in megabytes */

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

/* Memory after each repetition, and whether it keeps rising. */
static void check_memory(sc_result *res, const cJSON *runs)
{
    double values[512];
    int n = 0;
    const char *source = NULL;
    cJSON *mem = cJSON_AddObjectToObject(res->facts, "memory"), *list = cJSON_CreateArray();
    const cJSON *run;
    cJSON_ArrayForEach (run, runs) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(run, "memory");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "value");
        if (!cJSON_IsNumber(v) || n >= 512)
            continue;
        values[n++] = v->valuedouble;
        source = source ? source : sc_json_str(m, "source");
        cJSON_AddItemToArray(list, cJSON_CreateNumber(v->valuedouble));
    }
    sc_fact_str(mem, "source", source, "no repetition reported its memory");
    cJSON_AddItemToObject(mem, "after_each_run", list);
    if (!sc_app_memory_rising(values, n, MIN_GROWTH_BYTES))
        return;
    sc_finding(res, "app.memory-growth", SC_SEV_WARN,
               "look for state kept across steps (caches, lists of tensors, graphs kept by "
               "requires_grad outputs); compare with more repetitions (--app-repeat)",
               "memory (%s) rose after every repetition: %.1f MiB after the first, %.1f MiB after "
               "the last of %d",
               source ? source : "?", values[0] / 1048576.0, values[n - 1] / 1048576.0, n);
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
    check_memory(res, runs);
    check_failure(res, r);
    cJSON *numerics = cJSON_DetachItemFromObjectCaseSensitive(r, "numerics");
    if (cJSON_IsObject(numerics)) {
        check_numerics(res, numerics);
        cJSON_AddItemToObject(facts, "numerics", numerics);
    } else {
        cJSON_Delete(numerics);
        sc_fact_null(facts, "numerics", "the script did not call stackcheck.watch()");
    }
}
