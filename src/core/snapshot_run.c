/* The snapshot's layers and summary, written once at the end of a run from the run state: every
 * final outcome in report order, each layer's status and the verdict with its first failure. */
#include <stdio.h>

#include "sc_json.h"
#include "sc_snapshot.h"

static cJSON *string_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *outcome_json(const sc_outcome *o)
{
    cJSON *p = cJSON_CreateObject();
    if (!p)
        return NULL;
    cJSON_AddStringToObject(p, "id", o->probe->id);
    cJSON_AddStringToObject(p, "backend", sc_backend_name(o->probe->backend));
    cJSON_AddStringToObject(p, "status", sc_status_name(o->status));
    cJSON_AddItemToObject(p, "reason", string_or_null(o->reason));
    cJSON_AddNumberToObject(p, "duration_ms", o->duration_ms);
    cJSON_AddBoolToObject(p, "applicable", o->applicable);
    if (o->offline)
        cJSON_AddBoolToObject(p, "offline", true);
    cJSON_AddItemToObject(p, "facts", cJSON_Duplicate(o->facts, true));
    cJSON_AddItemToObject(p, "findings", cJSON_Duplicate(o->findings, true));
    if (o->output_tail)
        cJSON_AddStringToObject(p, "output_tail", o->output_tail);
    return p;
}

static cJSON *layer_json(const sc_run_state *rs, sc_layer layer)
{
    cJSON *l = cJSON_CreateObject();
    if (!l)
        return NULL;
    cJSON_AddStringToObject(l, "name", sc_layer_name(layer));
    cJSON_AddStringToObject(l, "status", sc_status_name(rs->layer_status[layer]));
    cJSON *probes = cJSON_AddArrayToObject(l, "probes");
    for (size_t k = 0; k < rs->count; k++) {
        const sc_outcome *o = sc_run_state_at(rs, k);
        if (o->probe->layer == layer && o->phase == SC_OUTCOME_FINAL)
            cJSON_AddItemToArray(probes, outcome_json(o));
    }
    return l;
}

/* {layer, probe, status, finding, message, hint} of the first failure, or null. */
static cJSON *first_failure_json(const sc_run_summary *s)
{
    const sc_outcome *o = s->first_failure;
    if (!o)
        return cJSON_CreateNull();
    sc_finding_view v = {0};
    bool err = s->first_error && sc_finding_read(s->first_error, &v);
    cJSON *ff = cJSON_CreateObject();
    cJSON_AddStringToObject(ff, "layer", sc_layer_name(o->probe->layer));
    cJSON_AddStringToObject(ff, "probe", o->probe->id);
    cJSON_AddStringToObject(ff, "status", sc_status_name(o->status));
    cJSON_AddItemToObject(ff, "finding", string_or_null(err ? v.id : NULL));
    cJSON_AddItemToObject(ff, "message", string_or_null(err ? v.message : o->reason));
    cJSON_AddItemToObject(ff, "hint", string_or_null(err ? v.hint : NULL));
    return ff;
}

void sc_snapshot_add_run(cJSON *snapshot, const sc_run_state *rs)
{
    cJSON *layers = cJSON_AddArrayToObject(snapshot, "layers");
    for (int l = 0; layers && l < SC_LAYER_COUNT; l++)
        cJSON_AddItemToArray(layers, layer_json(rs, (sc_layer)l));
    cJSON *summary = cJSON_CreateObject();
    cJSON_AddStringToObject(summary, "status", sc_status_name(rs->summary.status));
    cJSON_AddNumberToObject(summary, "exit_code", rs->summary.exit_code);
    cJSON_AddItemToObject(summary, "first_failure", first_failure_json(&rs->summary));
    cJSON_AddItemToObject(snapshot, "summary", summary);
}
