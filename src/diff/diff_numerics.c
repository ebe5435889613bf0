/* Numerics of two snapshots compared: for each app probe that recorded a numerics watch, walk the
 * modules in call order and name the first whose output statistics (shape, dtype, NaN and Inf
 * counts exactly; mean, std, max abs within tolerance) differ, or that only one side has. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_diff.h"

#define MODULES_MAX 16384 /* modules compared per watch; the helper records at most 4096 */

static const char *const exact_stats[] = {"shape", "dtype", "nan", "inf"};
static const char *const close_stats[] = {"mean", "std", "max_abs"};

bool sc_diff_close(const cJSON *a, const cJSON *b, const sc_diff_options *opt)
{
    bool a_num = cJSON_IsNumber(a), b_num = cJSON_IsNumber(b);
    if (!a_num || !b_num)
        return a_num == b_num && cJSON_IsNull(a) == cJSON_IsNull(b);
    double x = a->valuedouble, y = b->valuedouble;
    double scale = fabs(x) > fabs(y) ? fabs(x) : fabs(y);
    return fabs(x - y) <= opt->atol + opt->rtol * scale;
}

/* The first statistic of two module records that differs, or NULL. */
static const char *stat_differs(const cJSON *ma, const cJSON *mb, const sc_diff_options *opt)
{
    for (size_t i = 0; i < sizeof exact_stats / sizeof exact_stats[0]; i++) {
        const cJSON *a = sc_diff_get(ma, exact_stats[i]), *b = sc_diff_get(mb, exact_stats[i]);
        if ((a || b) && !(a && b && cJSON_Compare(a, b, true)))
            return exact_stats[i];
    }
    for (size_t i = 0; i < sizeof close_stats / sizeof close_stats[0]; i++)
        if (!sc_diff_close(sc_diff_get(ma, close_stats[i]), sc_diff_get(mb, close_stats[i]), opt))
            return close_stats[i];
    return NULL;
}

static const char *module_name(const cJSON *m)
{
    return cJSON_GetStringValue(sc_diff_get(m, "module"));
}

/* The first MODULES_MAX records of a watch, by position and by name. */
typedef struct {
    const cJSON **at;
    int count;
    sc_diff_index by_name;
} module_table;

static void table_init(module_table *t, const cJSON *list, bool *oom)
{
    const cJSON *m;
    int n = 0;
    memset(t, 0, sizeof *t);
    sc_diff_index_init(&t->by_name, oom);
    cJSON_ArrayForEach (m, list) {
        if (++n >= MODULES_MAX)
            break;
    }
    t->at = n ? calloc((size_t)n, sizeof *t->at) : NULL;
    if (n && !t->at) {
        *oom = true;
        return;
    }
    cJSON_ArrayForEach (m, list) {
        if (t->count >= n)
            break;
        t->at[t->count++] = m;
        sc_diff_index_add(&t->by_name, module_name(m), NULL, m);
    }
}

static void table_free(module_table *t)
{
    free(t->at);
    sc_diff_index_free(&t->by_name);
}

/* The module named name, trying position hint first (the usual case: same model). */
static const cJSON *find_module(module_table *t, const char *name, int hint)
{
    const char *n = hint < t->count ? module_name(t->at[hint]) : NULL;
    if (n && strcmp(n, name) == 0)
        return t->at[hint];
    return sc_diff_index_find(&t->by_name, name, NULL);
}

static cJSON *divergence(const cJSON *ma, const cJSON *mb, const char *name, int index,
                         const char *stat)
{
    cJSON *d = cJSON_CreateObject();
    const char *type = cJSON_GetStringValue(sc_diff_get(ma ? ma : mb, "type"));
    cJSON_AddStringToObject(d, "module", name);
    if (type)
        cJSON_AddStringToObject(d, "type", type);
    else
        cJSON_AddNullToObject(d, "type");
    cJSON_AddNumberToObject(d, "index", index);
    cJSON_AddStringToObject(d, "stat", stat);
    const cJSON *va = ma ? sc_diff_get(ma, stat) : NULL, *vb = mb ? sc_diff_get(mb, stat) : NULL;
    if (strcmp(stat, "presence") == 0) {
        cJSON_AddItemToObject(d, "a", ma ? cJSON_CreateString("present") : cJSON_CreateNull());
        cJSON_AddItemToObject(d, "b", mb ? cJSON_CreateString("present") : cJSON_CreateNull());
    } else {
        cJSON_AddItemToObject(d, "a", va ? cJSON_Duplicate(va, true) : cJSON_CreateNull());
        cJSON_AddItemToObject(d, "b", vb ? cJSON_Duplicate(vb, true) : cJSON_CreateNull());
    }
    return d;
}

/* Walks a's modules in call order, then b's that a lacks; returns the first divergence or NULL. */
static cJSON *first_divergence(const cJSON *la, const cJSON *lb, module_table *ta, module_table *tb,
                               const sc_diff_options *opt, int *compared)
{
    const cJSON *ma;
    int i = 0;
    *compared = 0;
    cJSON_ArrayForEach (ma, la) {
        const char *name = module_name(ma);
        if (i >= MODULES_MAX)
            break;
        if (!name) {
            i++;
            continue;
        }
        const cJSON *mb = find_module(tb, name, i);
        const char *stat = mb ? stat_differs(ma, mb, opt) : "presence";
        if (stat)
            return divergence(ma, mb, name, i, stat);
        (*compared)++;
        i++;
    }
    const cJSON *mb;
    i = 0;
    cJSON_ArrayForEach (mb, lb) {
        const char *name = module_name(mb);
        if (i >= MODULES_MAX)
            break;
        if (name && !find_module(ta, name, i))
            return divergence(NULL, mb, name, i, "presence");
        i++;
    }
    return NULL;
}

static bool input_differs(const cJSON *na, const cJSON *nb, const sc_diff_options *opt)
{
    const cJSON *ia = sc_diff_get(na, "input"), *ib = sc_diff_get(nb, "input");
    if (!cJSON_IsObject(ia) || !cJSON_IsObject(ib))
        return cJSON_IsObject(ia) != cJSON_IsObject(ib);
    return stat_differs(ia, ib, opt) != NULL;
}

static cJSON *compare_watch(sc_diff_acc *acc, const char *probe, const cJSON *na, const cJSON *nb,
                            const sc_diff_options *opt)
{
    cJSON *o = cJSON_CreateObject();
    const char *name = cJSON_GetStringValue(sc_diff_get(na, "name"));
    const cJSON *la = sc_diff_get(na, "modules"), *lb = sc_diff_get(nb, "modules");
    int compared = 0;
    cJSON_AddStringToObject(o, "probe", probe);
    cJSON_AddStringToObject(o, "name", name ? name : "model");
    cJSON_AddNumberToObject(o, "rtol", opt->rtol);
    cJSON_AddNumberToObject(o, "atol", opt->atol);
    bool inputs = input_differs(na, nb, opt);
    cJSON_AddBoolToObject(o, "input_differs", inputs);
    la = cJSON_IsArray(la) ? la : NULL;
    lb = cJSON_IsArray(lb) ? lb : NULL;
    module_table ta, tb;
    table_init(&ta, la, &acc->oom);
    table_init(&tb, lb, &acc->oom);
    cJSON *first = first_divergence(la, lb, &ta, &tb, opt, &compared);
    table_free(&ta);
    table_free(&tb);
    cJSON_AddNumberToObject(o, "modules_a", la ? cJSON_GetArraySize(la) : 0);
    cJSON_AddNumberToObject(o, "modules_b", lb ? cJSON_GetArraySize(lb) : 0);
    cJSON_AddNumberToObject(o, "compared", compared);
    cJSON_AddItemToObject(o, "first_divergent", first ? first : cJSON_CreateNull());
    acc->matters += (first != NULL) + inputs;
    return o;
}

cJSON *sc_diff_numerics(sc_diff_acc *acc, const sc_diff_options *opt)
{
    static const char *const probes[] = {"app.script", "app.smoke"};
    cJSON *list = cJSON_CreateArray();
    for (size_t i = 0; list && i < sizeof probes / sizeof probes[0]; i++) {
        const cJSON *na =
            sc_diff_path(sc_diff_get(sc_diff_side_probe(acc->a, probes[i]), "facts"), "numerics");
        const cJSON *nb =
            sc_diff_path(sc_diff_get(sc_diff_side_probe(acc->b, probes[i]), "facts"), "numerics");
        bool ha = cJSON_IsObject(na), hb = cJSON_IsObject(nb);
        if (ha && hb) {
            cJSON_AddItemToArray(list, compare_watch(acc, probes[i], na, nb, opt));
        } else if (ha || hb) {
            char what[64];
            snprintf(what, sizeof what, "%s numerics", probes[i]);
            cJSON *yes = cJSON_CreateString("recorded"), *no = cJSON_CreateNull();
            sc_diff_change(acc, "numerics", what, ha ? yes : no, hb ? yes : no, true);
            cJSON_Delete(yes);
            cJSON_Delete(no);
        }
    }
    return list;
}
