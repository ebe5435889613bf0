/* The app layer's arithmetic: start-up kept apart from steady state (the first run against the
 * median of the others, never averaged together), memory that keeps rising across repetitions, and
 * the app's own deadline inside its probe's. */
#include <stdlib.h>
#include <string.h>

#include "sc_app.h"
#include "sc_json.h"
#include "sc_probe.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double sc_app_median(const double *values, int n)
{
    if (n <= 0)
        return 0;
    double *v = malloc(sizeof *v * (size_t)n);
    if (!v)
        return values[0];
    memcpy(v, values, sizeof *v * (size_t)n);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    free(v);
    return m;
}

bool sc_app_memory_rising(const double *values, int n, double min_rise)
{
    if (n < 4)
        return false;
    for (int i = 1; i + 1 < n; i++)
        if (!(values[i + 1] > values[i]))
            return false;
    return values[n - 1] - values[1] >= min_rise;
}

double sc_app_deadline_s(double probe_s)
{
    if (probe_s <= 1.0)
        return probe_s * 0.7;
    double margin = probe_s * 0.1;
    margin = margin < 0.5 ? 0.5 : margin > 5.0 ? 5.0 : margin;
    return probe_s - margin;
}

/* One run's duration: the whole run (stage NULL) or one stage's; negative when absent. */
static double run_value(const cJSON *run, const char *stage)
{
    const cJSON *v = stage ? sc_json_member(sc_json_member(run, "stages"), stage)
                           : sc_json_member(run, "duration_ms");
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static void add_split(cJSON *obj, const cJSON *runs, const char *stage)
{
    int total = cJSON_GetArraySize(runs), n = 0;
    double *values = malloc(sizeof *values * (size_t)(total > 0 ? total : 1));
    double first = -1;
    const cJSON *run;
    int index = 0;
    cJSON_ArrayForEach (run, runs) {
        double v = run_value(run, stage);
        if (index++ == 0)
            first = v;
        else if (v >= 0 && values)
            values[n++] = v;
    }
    if (first >= 0)
        cJSON_AddNumberToObject(obj, "first_ms", first);
    else
        sc_fact_null(obj, "first_ms", "not in the first run");
    if (n > 0)
        cJSON_AddNumberToObject(obj, "steady_median_ms", sc_app_median(values, n));
    else
        sc_fact_null(obj, "steady_median_ms", "needs --app-repeat 2 or more runs");
    cJSON_AddNumberToObject(obj, "steady_runs", n);
    free(values);
}

/* Stage names in order of first appearance over all runs. */
static cJSON *stage_names(const cJSON *runs)
{
    cJSON *names = cJSON_CreateObject();
    const cJSON *run, *s;
    cJSON_ArrayForEach (run, runs) {
        cJSON_ArrayForEach (s, sc_json_member(run, "stages")) {
            if (names && s->string && !sc_json_member(names, s->string))
                cJSON_AddTrueToObject(names, s->string);
        }
    }
    return names;
}

cJSON *sc_app_timing_json(const cJSON *runs)
{
    cJSON *t = cJSON_CreateObject(), *stages = cJSON_CreateArray(), *names = stage_names(runs);
    if (!t || !stages || !names) {
        cJSON_Delete(stages);
        cJSON_Delete(names);
        return t;
    }
    add_split(t, runs, NULL);
    const cJSON *name;
    cJSON_ArrayForEach (name, names) {
        cJSON *s = cJSON_CreateObject();
        if (!s)
            break;
        cJSON_AddStringToObject(s, "name", name->string);
        add_split(s, runs, name->string);
        cJSON_AddItemToArray(stages, s);
    }
    cJSON_AddItemToObject(t, "stages", stages);
    cJSON_Delete(names);
    return t;
}
