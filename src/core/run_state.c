/* The run state: outcomes indexed by the probe table, the report order, layer statuses and the
 * verdict computed from typed outcomes, and the one pass through the door at the end of a run. */
#include "sc_run_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sc_json.h"
#include "sc_redact.h"
#include "sc_util.h"

int sc_run_state_init(sc_run_state *rs, const sc_probe *const *table)
{
    memset(rs, 0, sizeof *rs);
    rs->table = table;
    while (table[rs->count])
        rs->count++;
    rs->outcomes = calloc(rs->count ? rs->count : 1, sizeof *rs->outcomes);
    rs->order = calloc(rs->count ? rs->count : 1, sizeof *rs->order);
    if (!rs->outcomes || !rs->order) {
        sc_run_state_free(rs);
        return -ENOMEM;
    }
    size_t k = 0;
    for (int l = 0; l < SC_LAYER_COUNT; l++)
        for (size_t i = 0; i < rs->count; i++)
            if (table[i]->layer == (sc_layer)l)
                rs->order[k++] = i;
    for (size_t i = 0; i < rs->count; i++) {
        rs->outcomes[i].probe = table[i];
        rs->outcomes[i].status = SC_STATUS_UNSET;
        rs->outcomes[i].applicable = true;
    }
    for (int l = 0; l < SC_LAYER_COUNT; l++)
        rs->layer_status[l] = SC_STATUS_SKIP;
    if (k == rs->count)
        return 0;
    sc_run_state_free(rs); /* a probe outside every layer could never run */
    return -EINVAL;
}

void sc_run_state_free(sc_run_state *rs)
{
    for (size_t i = 0; rs->outcomes && i < rs->count; i++) {
        sc_outcome *o = &rs->outcomes[i];
        cJSON_Delete(o->facts);
        cJSON_Delete(o->findings);
        free(o->reason);
        free(o->output_tail);
        cJSON_Delete(o->steps);
    }
    free(rs->outcomes);
    free(rs->order);
    memset(rs, 0, sizeof *rs);
}

ptrdiff_t sc_run_state_index(const sc_run_state *rs, const char *probe_id)
{
    for (size_t k = 0; probe_id && k < rs->count; k++)
        if (strcmp(rs->table[rs->order[k]]->id, probe_id) == 0)
            return (ptrdiff_t)rs->order[k];
    return -1;
}

const sc_outcome *sc_run_state_at(const sc_run_state *rs, size_t k)
{
    return &rs->outcomes[rs->order[k]];
}

/* Gives o's open step its duration. */
static void close_step(sc_outcome *o, double now_ms)
{
    cJSON *last = o->steps ? cJSON_GetArrayItem(o->steps, cJSON_GetArraySize(o->steps) - 1) : NULL;
    if (last && !cJSON_HasObjectItem(last, "duration_ms"))
        cJSON_AddNumberToObject(last, "duration_ms",
                                (double)(long long)((now_ms - o->step_since_ms) * 10.0) / 10.0);
}

/* A run names few steps; a probe that names more than this keeps its first ones, and its last slot
 * follows the newest step, so that the live report and a timeout still name the current one. */
#define STEPS_MAX 64

void sc_outcome_step(sc_outcome *o, const char *name, double now_ms)
{
    if (!o->steps)
        o->steps = cJSON_CreateArray();
    if (!o->steps)
        return;
    if (cJSON_GetArraySize(o->steps) >= STEPS_MAX)
        cJSON_DeleteItemFromArray(o->steps, STEPS_MAX - 1);
    else
        close_step(o, now_ms);
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "name", name);
    cJSON_AddItemToArray(o->steps, s);
    o->step_since_ms = now_ms;
}

const char *sc_outcome_current_step(const sc_outcome *o)
{
    int n = o->steps ? cJSON_GetArraySize(o->steps) : 0;
    return n ? sc_json_str(cJSON_GetArrayItem(o->steps, n - 1), "name") : NULL;
}

void sc_outcome_finish(sc_outcome *o, sc_result *res, sc_status st, double ms, const char *tail,
                       bool offline)
{
    o->status = st;
    o->applicable = !res->not_applicable;
    o->offline = offline;
    o->reason = res->reason[0] ? strdup(res->reason) : NULL;
    o->duration_ms = (double)(long long)(ms * 1000.0) / 1000.0;
    o->facts = res->facts;
    o->findings = res->findings;
    res->facts = res->findings = NULL;
    o->output_tail = tail && tail[0] ? sc_redact_value(tail) : NULL;
    /* Every error counts: an error finding fails its probe whichever path made it (run, or the
     * inventory of a gated, offline or crashed probe); a worse status than fail stays. */
    if (!sc_status_is_failure(st) && sc_outcome_first_finding(o, SC_SEV_ERROR))
        o->status = SC_STATUS_FAIL;
    close_step(o, sc_now_ms());
    o->phase = SC_OUTCOME_FINAL;
}

sc_status sc_run_state_layer_status(const sc_run_state *rs, sc_layer layer)
{
    sc_status worst = SC_STATUS_SKIP;
    bool ran = false;
    for (size_t k = 0; k < rs->count; k++) {
        const sc_outcome *o = sc_run_state_at(rs, k);
        if (o->probe->layer != layer || o->phase != SC_OUTCOME_FINAL || o->status == SC_STATUS_SKIP)
            continue;
        if (!ran || o->status > worst)
            worst = o->status;
        ran = true;
    }
    return worst;
}

sc_run_summary sc_run_state_summary(const sc_run_state *rs)
{
    sc_run_summary s = {.status = SC_STATUS_PASS};
    sc_status worst = SC_STATUS_PASS;
    for (size_t k = 0; k < rs->count; k++) {
        const sc_outcome *o = sc_run_state_at(rs, k);
        if (o->phase != SC_OUTCOME_FINAL || o->status == SC_STATUS_SKIP)
            continue;
        if (o->status > worst)
            worst = o->status;
        if (!s.first_failure && sc_status_is_failure(o->status)) {
            s.first_failure = o;
            s.first_error = sc_outcome_first_finding(o, SC_SEV_ERROR);
        }
    }
    s.exit_code = sc_status_is_failure(worst) ? 1 : 0;
    s.status = s.exit_code               ? SC_STATUS_FAIL
               : worst == SC_STATUS_WARN ? SC_STATUS_WARN
                                         : SC_STATUS_PASS;
    return s;
}

void sc_outcome_sealed_copy(const sc_outcome *o, sc_outcome *copy)
{
    *copy = *o;
    copy->reason = o->reason ? sc_redact_value(o->reason) : NULL;
    copy->output_tail = NULL;
    copy->steps = NULL;
    copy->facts = cJSON_Duplicate(o->facts, true);
    copy->findings = cJSON_Duplicate(o->findings, true);
    sc_redact_json(copy->facts);
    sc_redact_json(copy->findings);
}

void sc_outcome_copy_free(sc_outcome *copy)
{
    free(copy->reason);
    cJSON_Delete(copy->facts);
    cJSON_Delete(copy->findings);
}

/* *text through the door, in place (hidden rather than leaked when memory runs out). */
static void seal_text(char **text)
{
    if (!*text)
        return;
    char *clean = sc_redact_value(*text);
    free(*text);
    *text = clean ? clean : strdup("[redacted]");
}

void sc_run_state_finish(sc_run_state *rs)
{
    for (int l = 0; l < SC_LAYER_COUNT; l++)
        rs->layer_status[l] = sc_run_state_layer_status(rs, (sc_layer)l);
    for (size_t k = 0; k < rs->count; k++) {
        sc_outcome *o = &rs->outcomes[rs->order[k]];
        seal_text(&o->reason);
        seal_text(&o->output_tail);
        sc_redact_json(o->facts);
        sc_redact_json(o->findings);
        sc_redact_json(o->steps);
    }
    rs->summary = sc_run_state_summary(rs);
}
