/* A run state made from snapshot-like JSON, for tests of what reads earlier outcomes (the driver
 * layer's evidence, runtime cross-checks) and of the report: each probe object of the layers
 * becomes the final outcome of a probe made for it. Header-only, for cmocka tests. */
#ifndef SC_TEST_RUN_STATE_FIXTURE_H
#define SC_TEST_RUN_STATE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_backend.h"
#include "sc_json.h"
#include "sc_run_state.h"

#define SC_TEST_MAX_PROBES 16

typedef struct {
    sc_probe probes[SC_TEST_MAX_PROBES];
    const sc_probe *table[SC_TEST_MAX_PROBES + 1];
    sc_run_state rs;
} sc_test_run;

/* Adds the probe object p of layer to t's table; returns its index. */
static size_t sc_test_run_add_probe(sc_test_run *t, size_t n, sc_layer layer, const cJSON *p)
{
    assert_true(n < SC_TEST_MAX_PROBES);
    const sc_backend_desc *desc = sc_backend_by_name(sc_json_str(p, "backend"));
    t->probes[n] = (sc_probe){.id = strdup(sc_json_str(p, "id")),
                              .layer = layer,
                              .backend = desc ? desc->id : SC_BACKEND_NONE};
    t->table[n] = &t->probes[n];
    return n;
}

/* Fills outcome o from the probe object p, as the runner would have made it. */
static void sc_test_run_fill(sc_outcome *o, const cJSON *p)
{
    sc_result res = {.facts = cJSON_Duplicate(sc_json_member(p, "facts"), 1),
                     .findings = cJSON_Duplicate(sc_json_member(p, "findings"), 1),
                     .not_applicable = cJSON_IsFalse(sc_json_member(p, "applicable"))};
    if (!res.facts)
        res.facts = cJSON_CreateObject();
    if (!res.findings)
        res.findings = cJSON_CreateArray();
    snprintf(res.reason, sizeof res.reason, "%s", sc_json_str(p, "reason") ?: "");
    sc_outcome_finish(o, &res, sc_status_parse(sc_json_str(p, "status")),
                      cJSON_GetNumberValue(sc_json_member(p, "duration_ms")),
                      sc_json_str(p, "output_tail"), cJSON_IsTrue(sc_json_member(p, "offline")));
}

/* Makes t's run state from layers_json ([{name, probes: [{id, backend, status, ...}]}]), ended as
 * a run ends (layer statuses and summary set). */
static void sc_test_run_from_json(sc_test_run *t, const char *layers_json)
{
    memset(t, 0, sizeof *t);
    cJSON *layers = cJSON_Parse(layers_json);
    assert_non_null(layers);
    const cJSON *layer, *p;
    size_t n = 0;
    cJSON_ArrayForEach (layer, layers) {
        int l = 0;
        while (l < SC_LAYER_COUNT && strcmp(sc_layer_name((sc_layer)l), sc_json_str(layer, "name")))
            l++;
        cJSON_ArrayForEach (p, sc_json_member(layer, "probes"))
            n = sc_test_run_add_probe(t, n, (sc_layer)l, p) + 1;
    }
    assert_int_equal(sc_run_state_init(&t->rs, t->table), 0);
    cJSON_ArrayForEach (layer, layers)
        cJSON_ArrayForEach (p, sc_json_member(layer, "probes"))
            sc_test_run_fill(&t->rs.outcomes[sc_run_state_index(&t->rs, sc_json_str(p, "id"))], p);
    cJSON_Delete(layers);
    sc_run_state_finish(&t->rs);
}

static void sc_test_run_free(sc_test_run *t)
{
    sc_run_state_free(&t->rs);
    for (size_t i = 0; t->table[i]; i++)
        free((char *)t->probes[i].id);
}

#endif
