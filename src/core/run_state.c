/* The run state: outcomes indexed by the probe table, the report order, layer statuses and the
 * verdict computed from typed outcomes, and the one pass through the door at the end of a run. */
#include "sc_run_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sc_redact.h"

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
    }
    rs->summary = sc_run_state_summary(rs);
}
