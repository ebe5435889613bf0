/* Per-fact outliers among nodes that run the same stack: each probe's duration and timings, and
 * the device memory in use before any work (the memory baseline), sampled per group (a fixed
 * sample for the median, the few largest and smallest values with their nodes), so memory grows
 * with groups, not nodes; and the groups that differ from the majority only by having fewer
 * devices. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sc_diff.h"
#include "sc_fleet.h"
#include "sc_json.h"
#include "sc_stack.h"

#define MIN_SLOWER_MS 5.0             /* a timing this close to the median is noise, whatever x */
#define MEMORY_FAR_BYTES (1ull << 30) /* a baseline within 1 GiB of the median is not far */
#define MEMORY_FAR_SHARE 0.10         /* nor within a tenth of the device memory */
#define MIN_NODES 3                   /* fewer nodes have no meaningful median */

void sc_fleet_metrics_free(sc_fleet_group *group)
{
    for (int i = 0; i < group->metric_count; i++) {
        sc_fleet_metric *m = group->metrics[i];
        for (int k = 0; k < SC_FLEET_EXTREMES; k++) {
            free(m->high[k].node);
            free(m->low[k].node);
        }
        free(m->name);
        free(m);
    }
    group->metric_count = 0;
}

static sc_fleet_metric *metric_of(sc_fleet_group *g, const char *name, bool memory)
{
    for (int i = 0; i < g->metric_count; i++)
        if (strcmp(g->metrics[i]->name, name) == 0)
            return g->metrics[i];
    sc_fleet_metric *m = g->metric_count < SC_FLEET_METRICS_MAX ? calloc(1, sizeof *m) : NULL;
    if (!m || !(m->name = strdup(name))) {
        free(m);
        return NULL;
    }
    m->memory = memory;
    g->metrics[g->metric_count++] = m;
    return m;
}

/* Keeps (v, node) in list when it is among the SC_FLEET_EXTREMES largest (sign 1) or smallest
 * (sign -1) so far. */
static void keep_extreme(sc_fleet_extreme *list, double v, const char *node, int sign)
{
    int slot = -1;
    for (int k = 0; k < SC_FLEET_EXTREMES && slot < 0; k++)
        if (!list[k].node)
            slot = k;
    for (int k = 0; k < SC_FLEET_EXTREMES && slot < 0; k++)
        if (sign * v > sign * list[k].value &&
            (slot < 0 || sign * list[k].value < sign * list[slot].value))
            slot = k;
    if (slot < 0)
        return;
    char *copy = strdup(node);
    if (!copy)
        return;
    free(list[slot].node);
    list[slot] = (sc_fleet_extreme){v, copy};
}

/* A reservoir sample (Vitter's algorithm R, with a fixed generator: the same input gives the
 * same answer). */
static void sample_value(sc_fleet_metric *m, double v)
{
    if (m->seen < SC_FLEET_SAMPLE) {
        m->sample[m->seen] = v;
    } else {
        uint64_t x = (uint64_t)m->seen * 0x9E3779B97F4A7C15ull;
        x ^= x >> 31;
        uint64_t j = x % (uint64_t)(m->seen + 1);
        if (j < SC_FLEET_SAMPLE)
            m->sample[j] = v;
    }
    m->seen++;
}

static void observe(sc_fleet_group *g, const char *fact, bool memory, double v, const char *node)
{
    sc_fleet_metric *m = isfinite(v) && v >= 0 ? metric_of(g, fact, memory) : NULL;
    if (!m)
        return;
    sample_value(m, v);
    keep_extreme(m->high, v, node, 1);
    if (memory)
        keep_extreme(m->low, v, node, -1);
}

typedef struct {
    sc_fleet_group *g;
    const char *node;
    double used, total;
} measure_job;

static void memory_of(const cJSON *dev, void *arg)
{
    measure_job *job = arg;
    const cJSON *mem = sc_diff_get(dev, "memory");
    double free_b = cJSON_GetNumberValue(sc_diff_get(mem, "free_bytes"));
    double total = cJSON_GetNumberValue(sc_diff_get(mem, "total_bytes"));
    if (isfinite(free_b) && isfinite(total) && total >= free_b) {
        job->used += total - free_b;
        job->total = total > job->total ? total : job->total;
    }
}

static void measure_probe(const cJSON *probe, void *arg)
{
    measure_job *job = arg;
    const char *id = sc_json_str(probe, "id"), *status = sc_json_str(probe, "status");
    char fact[160];
    if (!id || !status || strcmp(status, "skip") == 0)
        return;
    snprintf(fact, sizeof fact, "%.100s duration", id);
    observe(job->g, fact, false, cJSON_GetNumberValue(sc_diff_get(probe, "duration_ms")),
            job->node);
    const cJSON *facts = sc_diff_get(probe, "facts"), *t;
    cJSON_ArrayForEach (t, sc_diff_get(facts, "timing")) {
        snprintf(fact, sizeof fact, "%.100s timing.%.40s", id, t->string ? t->string : "?");
        if (cJSON_IsNumber(t))
            observe(job->g, fact, false, t->valuedouble, job->node);
    }
    if (strncmp(id, "runtime.", 8) == 0)
        sc_diff_path_each(facts, "devices[]", memory_of, job);
}

void sc_fleet_measure(sc_fleet *fleet, sc_fleet_group *group, const cJSON *snapshot,
                      const char *name)
{
    (void)fleet;
    measure_job job = {group, name, 0, 0};
    sc_diff_each_probe(snapshot, measure_probe, &job);
    if (job.total > 0) {
        sc_fleet_metric *m = metric_of(group, "memory in use before any work", true);
        if (m && job.total > m->total_bytes)
            m->total_bytes = job.total;
        observe(group, "memory in use before any work", true, job.used, name);
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(const sc_fleet_metric *m)
{
    int n = m->seen < SC_FLEET_SAMPLE ? (int)m->seen : SC_FLEET_SAMPLE;
    double v[SC_FLEET_SAMPLE];
    memcpy(v, m->sample, (size_t)n * sizeof v[0]);
    qsort(v, (size_t)n, sizeof v[0], by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void add_outlier(cJSON *list, const char *node, const char *fact, const char *unit,
                        double value, double median, const char *why)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "node", node);
    cJSON_AddStringToObject(o, "fact", fact);
    cJSON_AddStringToObject(o, "unit", unit);
    cJSON_AddNumberToObject(o, "value", value);
    cJSON_AddNumberToObject(o, "median", median);
    cJSON_AddStringToObject(o, "why", why);
    cJSON_AddItemToArray(list, o);
}

/* Adds the outliers of one fact; true when every value kept was one (there may be more). */
static bool metric_outliers(cJSON *list, const sc_fleet_metric *m, double factor)
{
    int before = cJSON_GetArraySize(list), kept = 0;
    double median = median_of(m);
    double far = m->total_bytes * MEMORY_FAR_SHARE;
    char why[96];
    far = far > (double)MEMORY_FAR_BYTES ? far : (double)MEMORY_FAR_BYTES;
    for (int k = 0; k < SC_FLEET_EXTREMES; k++) {
        const sc_fleet_extreme *h = &m->high[k], *l = &m->low[k];
        kept += (h->node != NULL) + (m->memory && l->node != NULL);
        if (!m->memory && h->node && h->value > factor * median &&
            h->value - median > MIN_SLOWER_MS) {
            snprintf(why, sizeof why, "x%.1f the median of its stack's nodes",
                     median > 0 ? h->value / median : INFINITY);
            add_outlier(list, h->node, m->name, "ms", h->value, median, why);
        }
        if (m->memory && h->node && h->value - median > far)
            add_outlier(list, h->node, m->name, "bytes", h->value, median, "far above the median");
        if (m->memory && l->node && median - l->value > far)
            add_outlier(list, l->node, m->name, "bytes", l->value, median, "far below the median");
    }
    return kept > 0 && cJSON_GetArraySize(list) - before == kept;
}

/* Every node of a group whose stack is the majority's but for fewer devices. */
static void device_outliers(cJSON *list, sc_fleet_group *g, const sc_fleet_group *majority)
{
    double n = sc_stack_device_count(g->stack), want = sc_stack_device_count(majority->stack);
    if (g == majority || n >= want || !sc_stack_same_but_counts(g->stack, majority->stack))
        return;
    for (int i = 0; i < g->names.count; i++)
        add_outlier(list, g->names.names[i], "devices", "devices", n, want,
                    "fewer devices than the majority, otherwise the same stack");
}

cJSON *sc_fleet_outliers(sc_fleet *fleet, const sc_fleet_group *majority, bool *complete)
{
    *complete = true;
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; list && i < fleet->group_count; i++) {
        sc_fleet_group *g = fleet->groups[i];
        if (majority)
            device_outliers(list, g, majority);
        for (int k = 0; g->nodes >= MIN_NODES && k < g->metric_count; k++)
            if (metric_outliers(list, g->metrics[k], fleet->factor))
                *complete = false;
    }
    return list;
}
