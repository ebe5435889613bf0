/* The fleet's answer as JSON: the groups by size (the largest is the majority), what each other
 * group differs in, role by role; the failures by cause; the outliers; the files skipped; and the
 * exit code: 0 every node healthy and alike, 1 a node failed or differs, 2 nothing readable. */
#include <stdlib.h>
#include <string.h>

#include "sc_cli.h"
#include "sc_diff.h"
#include "sc_fleet.h"
#include "sc_stack.h"

static int by_nodes(const void *a, const void *b)
{
    const sc_fleet_group *x = *(sc_fleet_group *const *)a, *y = *(sc_fleet_group *const *)b;
    return (y->nodes > x->nodes) - (y->nodes < x->nodes);
}

static int cause_by_nodes(const void *a, const void *b)
{
    const sc_fleet_cause *x = *(sc_fleet_cause *const *)a, *y = *(sc_fleet_cause *const *)b;
    return (y->nodes > x->nodes) - (y->nodes < x->nodes);
}

/* The roles in which g's stack is not the majority's. */
static cJSON *differs(const sc_fleet_group *g, const sc_fleet_group *majority)
{
    cJSON *list = cJSON_CreateArray();
    for (const char *const *r = sc_stack_roles; list && *r; r++) {
        const cJSON *a = sc_diff_get(majority->stack, *r), *b = sc_diff_get(g->stack, *r);
        if (cJSON_Compare(a, b, true))
            continue;
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "role", *r);
        cJSON_AddItemToObject(d, "majority", cJSON_Duplicate(a, true));
        cJSON_AddItemToObject(d, "group", cJSON_Duplicate(b, true));
        cJSON_AddItemToArray(list, d);
    }
    return list;
}

static cJSON *group_json(sc_fleet_group *g, const sc_fleet_group *majority)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "nodes", (double)g->nodes);
    cJSON_AddItemToObject(o, "names", sc_fleet_names_json(&g->names));
    cJSON_AddBoolToObject(o, "majority", g == majority);
    cJSON_AddItemToObject(o, "stack", cJSON_Duplicate(g->stack, true));
    cJSON_AddItemToObject(o, "differs", differs(g, majority));
    return o;
}

static cJSON *cause_json(sc_fleet_cause *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "layer", c->layer);
    cJSON_AddItemToObject(o, "finding",
                          c->finding ? cJSON_CreateString(c->finding) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "probe", c->probe ? cJSON_CreateString(c->probe) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "status",
                          c->status ? cJSON_CreateString(c->status) : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "nodes", (double)c->nodes);
    cJSON_AddItemToObject(o, "names", sc_fleet_names_json(&c->names));
    return o;
}

static void add_counts(cJSON *r, const sc_fleet *fleet)
{
    cJSON_AddStringToObject(r, "schema", SC_FLEET_SCHEMA);
    cJSON_AddNumberToObject(r, "files", (double)fleet->files);
    cJSON_AddNumberToObject(r, "nodes", (double)fleet->nodes);
    cJSON_AddNumberToObject(r, "healthy", (double)(fleet->nodes - fleet->failed));
    cJSON_AddNumberToObject(r, "failed", (double)fleet->failed);
    cJSON *skipped = cJSON_AddObjectToObject(r, "skipped");
    cJSON_AddNumberToObject(skipped, "count", (double)fleet->skipped);
    cJSON_AddItemToObject(skipped, "files", cJSON_Duplicate(fleet->skipped_files, true));
    cJSON_AddNumberToObject(r, "ungrouped", (double)fleet->ungrouped);
    cJSON_AddNumberToObject(r, "causes_not_kept", (double)fleet->causes_dropped);
    cJSON_AddNumberToObject(r, "factor", fleet->factor);
}

static int exit_code(const sc_fleet *fleet, int outliers)
{
    if (fleet->nodes == 0)
        return SC_EXIT_USAGE;
    bool alike = fleet->group_count <= 1 && fleet->ungrouped == 0 && outliers == 0;
    return fleet->failed == 0 && alike ? SC_EXIT_OK : SC_EXIT_FAIL;
}

cJSON *sc_fleet_result(sc_fleet *fleet)
{
    cJSON *r = cJSON_CreateObject();
    if (!r)
        return NULL;
    qsort(fleet->groups, (size_t)fleet->group_count, sizeof fleet->groups[0], by_nodes);
    qsort(fleet->causes, (size_t)fleet->cause_count, sizeof fleet->causes[0], cause_by_nodes);
    const sc_fleet_group *majority = fleet->group_count ? fleet->groups[0] : NULL;
    add_counts(r, fleet);
    cJSON_AddNumberToObject(r, "groups_count", fleet->group_count);
    cJSON *groups = cJSON_AddArrayToObject(r, "groups");
    for (int i = 0; i < fleet->group_count; i++)
        cJSON_AddItemToArray(groups, group_json(fleet->groups[i], majority));
    cJSON *causes = cJSON_AddArrayToObject(r, "failures");
    for (int i = 0; i < fleet->cause_count; i++)
        cJSON_AddItemToArray(causes, cause_json(fleet->causes[i]));
    bool complete;
    cJSON *outliers = sc_fleet_outliers(fleet, majority, &complete);
    int n = cJSON_GetArraySize(outliers);
    cJSON_AddItemToObject(r, "outliers", outliers);
    cJSON_AddBoolToObject(r, "outliers_complete", complete);
    int code = exit_code(fleet, n);
    cJSON_AddBoolToObject(r, "identical",
                          fleet->group_count <= 1 && n == 0 && fleet->ungrouped == 0);
    cJSON_AddNumberToObject(r, "exit_code", code);
    if (fleet->oom) {
        cJSON_Delete(r);
        return NULL;
    }
    return r;
}
