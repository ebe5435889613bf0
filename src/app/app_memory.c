/* Memory across repetitions of the app script: the device allocator's and the process's resident
 * set after every repetition as two series, each with a least-squares line through the steady
 * repetitions, and app.memory-growth when a line says memory keeps growing. */
#include <stdio.h>
#include <stdlib.h>

#include "sc_app.h"
#include "sc_app_script.h"
#include "sc_json.h"

#define MIN_GROWTH_BYTES (4.0 * 1024 * 1024) /* RSS moves by pages; a leak shows in megabytes */
#define SERIES_MAX 10000                     /* --app-repeat's bound */

bool sc_app_memory_fit(const double *values, int n, sc_app_fit *fit)
{
    const double *y = values + 1;
    int m = n - 1;
    if (m < 3)
        return false;
    double sx = 0, sy = 0;
    for (int i = 0; i < m; i++) {
        sx += i;
        sy += y[i];
    }
    double mx = sx / m, my = sy / m, sxx = 0, sxy = 0, syy = 0;
    for (int i = 0; i < m; i++) {
        sxx += (i - mx) * (i - mx);
        sxy += (i - mx) * (y[i] - my);
        syy += (y[i] - my) * (y[i] - my);
    }
    fit->points = m;
    fit->bytes_per_step = sxy / sxx;
    fit->intercept = my - fit->bytes_per_step * mx;
    fit->r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0; /* a flat series is a perfect line */
    fit->growth = fit->bytes_per_step * (m - 1);
    return true;
}

bool sc_app_memory_growing(const sc_app_fit *fit, double min_rise)
{
    return fit->points >= 3 && fit->growth >= min_rise && fit->r2 >= SC_APP_FIT_R2;
}

/* One series: runs[].memory[key] as numbers (a run without one is left out). */
static int read_series(const cJSON *runs, const char *key, double *values, cJSON *list)
{
    int n = 0;
    const cJSON *run;
    cJSON_ArrayForEach (run, runs) {
        const cJSON *v = sc_json_member(sc_json_member(run, "memory"), key);
        if (!cJSON_IsNumber(v) || n >= SERIES_MAX)
            continue;
        values[n++] = v->valuedouble;
        cJSON_AddItemToArray(list, cJSON_CreateNumber(v->valuedouble));
    }
    return n;
}

/* x rounded to a whole number (bytes are whole; libm is not linked). */
static double whole(double x)
{
    return (double)(long long)(x < 0 ? x - 0.5 : x + 0.5);
}

static void add_fit(cJSON *series, const double *values, int n, sc_app_fit *fit, bool *have)
{
    *have = sc_app_memory_fit(values, n, fit);
    if (!*have) {
        sc_fact_null(series, "fit",
                     "needs --app-repeat 4 or more (the first repetition is "
                     "start-up and is left out)");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(series, "fit");
    cJSON_AddNumberToObject(o, "bytes_per_step", whole(fit->bytes_per_step));
    cJSON_AddNumberToObject(o, "intercept", whole(fit->intercept));
    cJSON_AddNumberToObject(o, "r2", whole(fit->r2 * 10000) / 10000);
    cJSON_AddNumberToObject(o, "steady_runs", fit->points);
    cJSON_AddNumberToObject(o, "growth_bytes", whole(fit->growth));
}

/* facts.memory[name] = {source, after_each_run[], fit}; true when the series keeps growing. */
static bool series(cJSON *mem, const char *name, const char *source, const cJSON *runs,
                   const char *key, double *values, sc_app_fit *fit)
{
    cJSON *list = cJSON_CreateArray();
    int n = read_series(runs, key, values, list);
    if (n == 0) {
        cJSON_Delete(list);
        sc_fact_null(mem, name, "not measured (%s)", source);
        return false;
    }
    cJSON *s = cJSON_AddObjectToObject(mem, name);
    cJSON_AddStringToObject(s, "source", source);
    cJSON_AddItemToObject(s, "after_each_run", list);
    bool have;
    add_fit(s, values, n, fit, &have);
    return have && sc_app_memory_growing(fit, MIN_GROWTH_BYTES);
}

/* The device allocator's name as the helper reported it ("cuda", "npu"). */
static const char *device_kind(const cJSON *runs)
{
    const cJSON *run;
    cJSON_ArrayForEach (run, runs) {
        const char *d = sc_json_str(sc_json_member(run, "memory"), "device");
        if (d)
            return d;
    }
    return NULL;
}

static void report_growth(sc_result *res, const char *what, const sc_app_fit *fit, int n)
{
    sc_finding(res, "app.memory-growth", SC_SEV_WARN,
               "look for state kept across steps (caches, lists of tensors, graphs kept by "
               "requires_grad outputs); confirm with more repetitions (--app-repeat)",
               "%s grew by %.1f MiB per repetition over repetitions 2 to %d (least-squares line, "
               "r2 %.2f): %.1f MiB in all",
               what, fit->bytes_per_step / 1048576.0, n, fit->r2, fit->growth / 1048576.0);
}

/* The 0.1 facts: the measure a repetition reported as its value, its source, the list. */
static void legacy_series(cJSON *mem, const cJSON *runs, double *values)
{
    const char *source = NULL;
    const cJSON *run;
    cJSON_ArrayForEach (run, runs)
        source = source ? source : sc_json_str(sc_json_member(run, "memory"), "source");
    sc_fact_str(mem, "source", source, "no repetition reported its memory");
    cJSON *list = cJSON_CreateArray();
    read_series(runs, "value", values, list);
    cJSON_AddItemToObject(mem, "after_each_run", list);
}

void sc_app_check_memory(sc_result *res, const cJSON *runs)
{
    double *values = malloc(sizeof *values * SERIES_MAX);
    cJSON *mem = cJSON_AddObjectToObject(res->facts, "memory");
    if (!values || !mem) {
        free(values);
        return;
    }
    legacy_series(mem, runs, values);
    const char *dev = device_kind(runs);
    char source[64], what[96];
    snprintf(source, sizeof source, "torch.%s.memory_allocated", dev ? dev : "<device>");
    sc_app_fit fit;
    int n = cJSON_GetArraySize(runs);
    bool device = series(mem, "device", dev ? source : "torch used no device", runs,
                         "device_allocated_bytes", values, &fit);
    if (device) { /* one finding: the device's growth when it grows, else the host's */
        snprintf(what, sizeof what, "device memory (%s)", source);
        report_growth(res, what, &fit, n);
    }
    if (series(mem, "host", "process RSS (/proc/self/statm)", runs, "rss_bytes", values, &fit) &&
        !device)
        report_growth(res, "host memory (process RSS)", &fit, n);
    free(values);
}
