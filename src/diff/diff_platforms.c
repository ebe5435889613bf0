/* Two platforms side by side: each side's roles (diff_roles.c) as one line of text a role
 * (diff_cells.c), so an NVIDIA node against a DCU node reads as one table (2 x H100 (sm_90) | 8 x
 * MI250X (gfx90a), driver, firmware, runtime, toolkit, collective library, torch build). When the
 * sides run on different backends, the per-probe changes of a backend only one side has are what
 * the table sums up: their probe ids are listed for the text output to fold. */
#include <stdio.h>
#include <string.h>

#include "sc_backend.h"
#include "sc_diff_roles.h"
#include "sc_json.h"

static void add_row(cJSON *rows, const char *role, const cJSON *pa, const cJSON *pb)
{
    cJSON *row = cJSON_CreateObject(), *a = sc_diff_cell(pa, role), *b = sc_diff_cell(pb, role);
    bool same = cJSON_Compare(a, b, true);
    cJSON_AddStringToObject(row, "role", role);
    cJSON_AddItemToObject(row, "a", a);
    cJSON_AddItemToObject(row, "b", b);
    cJSON_AddBoolToObject(row, "differs", !same);
    cJSON_AddItemToArray(rows, row);
}

static cJSON *rows_of(const cJSON *pa, const cJSON *pb)
{
    cJSON *rows = cJSON_CreateArray();
    add_row(rows, "backend", pa, pb);
    add_row(rows, "devices", pa, pb);
    for (size_t r = 0; sc_diff_stack_roles[r].role; r++)
        add_row(rows, sc_diff_stack_roles[r].role, pa, pb);
    add_row(rows, "collective", pa, pb);
    add_row(rows, "torch", pa, pb);
    return rows;
}

/* ---- which backends, and the probes the table sums up ---- */

static bool runs_on(const cJSON *platform, const char *backend)
{
    const cJSON *b;
    cJSON_ArrayForEach (b, sc_diff_get(platform, "backends")) {
        if (backend && strcmp(sc_json_str(b, "name") ? sc_json_str(b, "name") : "", backend) == 0)
            return true;
    }
    return false;
}

/* The backend a probe belongs to: its "backend" field, else the descriptor naming it. */
static const sc_backend_desc *backend_of_probe(const cJSON *probe)
{
    const char *id = sc_json_str(probe, "id");
    const sc_backend_desc *b = sc_backend_by_name(sc_json_str(probe, "backend"));
    for (size_t i = 0; !b && id && sc_backends[i]; i++)
        if (strcmp(sc_backends[i]->driver_probe, id) == 0 ||
            strcmp(sc_backends[i]->runtime_probe, id) == 0)
            b = sc_backends[i];
    return b;
}

/* Both run on the same backends (however each was recognised). */
static bool same_backends(const cJSON *pa, const cJSON *pb)
{
    const cJSON *la = sc_diff_get(pa, "backends"), *lb = sc_diff_get(pb, "backends");
    const cJSON *x = la ? la->child : NULL, *y = lb ? lb->child : NULL;
    for (; x && y; x = x->next, y = y->next)
        if (strcmp(sc_json_str(x, "name"), sc_json_str(y, "name")) != 0)
            return false;
    return !x && !y;
}

typedef struct {
    cJSON *list;
    sc_diff_acc *acc;
    const cJSON *pa, *pb;
    bool b_side;
} summary_job;

static void summarise_probe(const cJSON *probe, void *arg)
{
    summary_job *job = arg;
    const char *id = sc_json_str(probe, "id");
    const sc_backend_desc *b = backend_of_probe(probe);
    if (!sc_diff_side_first(job->b_side ? job->acc->b : job->acc->a, probe) || !b)
        return;
    if (job->b_side && sc_diff_side_probe(job->acc->a, id))
        return; /* decided on the a side */
    if (!(runs_on(job->pa, b->name) && runs_on(job->pb, b->name)))
        cJSON_AddItemToArray(job->list, cJSON_CreateString(id));
}

static cJSON *summarised(sc_diff_acc *acc, const cJSON *pa, const cJSON *pb)
{
    summary_job job = {cJSON_CreateArray(), acc, pa, pb, false};
    sc_diff_each_probe(acc->a->snapshot, summarise_probe, &job);
    job.b_side = true;
    sc_diff_each_probe(acc->b->snapshot, summarise_probe, &job);
    return job.list;
}

cJSON *sc_diff_platforms(sc_diff_acc *acc)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *pa = sc_diff_platform(acc->a, &acc->oom), *pb = sc_diff_platform(acc->b, &acc->oom);
    if (!out || !pa || !pb) {
        acc->oom = true;
        cJSON_Delete(pa);
        cJSON_Delete(pb);
        return out;
    }
    bool differ = !same_backends(pa, pb);
    cJSON_AddBoolToObject(out, "differ", differ);
    cJSON_AddItemToObject(out, "a", pa);
    cJSON_AddItemToObject(out, "b", pb);
    cJSON_AddItemToObject(out, "rows", rows_of(pa, pb));
    cJSON_AddItemToObject(out, "summarised",
                          differ ? summarised(acc, pa, pb) : cJSON_CreateArray());
    return out;
}
