/* Folding one snapshot into the fleet: a failed node goes to its cause (first failing layer and
 * finding), a healthy one to the group of its stack fingerprint (sc_stack_key, found by hash),
 * where its timings and memory baseline are sampled. Names are kept up to a bound per list. */
#include <stdlib.h>
#include <string.h>

#include "sc_diff.h"
#include "sc_fleet.h"
#include "sc_json.h"
#include "sc_stack.h"

void sc_fleet_init(sc_fleet *fleet, double factor)
{
    memset(fleet, 0, sizeof *fleet);
    fleet->factor = factor;
    fleet->skipped_files = cJSON_CreateArray();
    fleet->oom = !fleet->skipped_files;
}

void sc_fleet_names_add(sc_fleet_names *names, const char *name, bool *oom)
{
    if (names->count == SC_FLEET_NAMES_KEPT) {
        names->more++;
        return;
    }
    if ((names->names[names->count] = strdup(name)) != NULL)
        names->count++;
    else
        *oom = true;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

cJSON *sc_fleet_names_json(sc_fleet_names *names)
{
    cJSON *arr = cJSON_CreateArray();
    qsort(names->names, (size_t)names->count, sizeof names->names[0], by_name);
    for (int i = 0; arr && i < names->count; i++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(names->names[i]));
    if (arr && names->more) {
        char more[48];
        snprintf(more, sizeof more, "+%ld more", names->more);
        cJSON_AddItemToArray(arr, cJSON_CreateString(more));
    }
    return arr;
}

void sc_fleet_names_free(sc_fleet_names *names)
{
    for (int i = 0; i < names->count; i++)
        free(names->names[i]);
    names->count = 0;
}

void sc_fleet_free(sc_fleet *fleet)
{
    for (int i = 0; i < fleet->group_count; i++) {
        sc_fleet_group *g = fleet->groups[i];
        free(g->key);
        cJSON_Delete(g->stack);
        sc_fleet_names_free(&g->names);
        sc_fleet_metrics_free(g);
        free(g);
    }
    for (int i = 0; i < fleet->cause_count; i++) {
        sc_fleet_cause *c = fleet->causes[i];
        free(c->layer);
        free(c->finding);
        free(c->probe);
        free(c->status);
        sc_fleet_names_free(&c->names);
        free(c);
    }
    cJSON_Delete(fleet->skipped_files);
    memset(fleet, 0, sizeof *fleet);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static bool same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The cause of first failure ff, found or added; NULL when the table is full or memory is out. */
static sc_fleet_cause *cause_of(sc_fleet *fleet, const cJSON *ff)
{
    const char *layer = sc_json_str(ff, "layer"), *finding = sc_json_str(ff, "finding");
    const char *probe = sc_json_str(ff, "probe"), *status = sc_json_str(ff, "status");
    for (int i = 0; i < fleet->cause_count; i++) {
        sc_fleet_cause *c = fleet->causes[i];
        if (same(c->layer, layer) && same(c->finding, finding) &&
            (finding || (same(c->probe, probe) && same(c->status, status))))
            return c;
    }
    sc_fleet_cause *c = fleet->cause_count < SC_FLEET_CAUSES_MAX ? calloc(1, sizeof *c) : NULL;
    if (!c)
        return NULL;
    c->layer = dup_or_null(layer ? layer : "?");
    c->finding = dup_or_null(finding);
    c->probe = dup_or_null(probe);
    c->status = dup_or_null(status);
    fleet->causes[fleet->cause_count++] = c;
    return c;
}

static void add_failed(sc_fleet *fleet, const cJSON *snapshot, const char *name)
{
    const cJSON *ff = sc_diff_get(sc_diff_get(snapshot, "summary"), "first_failure");
    sc_fleet_cause *c = cause_of(fleet, ff);
    fleet->failed++;
    if (!c) {
        fleet->causes_dropped++;
        return;
    }
    c->nodes++;
    sc_fleet_names_add(&c->names, name, &fleet->oom);
}

/* The group of stack (whose key is key), found or added (taking stack and key); NULL when the
 * table is full or memory is out (stack and key are then the caller's to free). */
static sc_fleet_group *group_of(sc_fleet *fleet, cJSON **stack, char **key)
{
    uint64_t h = fnv1a(*key);
    for (int i = 0; i < fleet->group_count; i++)
        if (fleet->groups[i]->hash == h && strcmp(fleet->groups[i]->key, *key) == 0)
            return fleet->groups[i];
    sc_fleet_group *g = fleet->group_count < SC_FLEET_GROUPS_MAX ? calloc(1, sizeof *g) : NULL;
    if (!g)
        return NULL;
    g->hash = h;
    g->key = *key;
    g->stack = *stack;
    *key = NULL;
    *stack = NULL;
    fleet->groups[fleet->group_count++] = g;
    return g;
}

void sc_fleet_add_snapshot(sc_fleet *fleet, const cJSON *snapshot, const char *name)
{
    fleet->nodes++;
    const char *status = sc_json_str(sc_diff_get(snapshot, "summary"), "status");
    if (status && strcmp(status, "fail") == 0) {
        add_failed(fleet, snapshot, name);
        return;
    }
    cJSON *stack = sc_stack_of(snapshot, NULL);
    char *key = stack ? sc_stack_key(stack) : NULL;
    sc_fleet_group *g = key ? group_of(fleet, &stack, &key) : NULL;
    if (g) {
        g->nodes++;
        sc_fleet_names_add(&g->names, name, &fleet->oom);
        sc_fleet_measure(fleet, g, snapshot, name);
    } else {
        fleet->ungrouped++;
        fleet->oom |= !key;
    }
    free(key);
    cJSON_Delete(stack);
}
