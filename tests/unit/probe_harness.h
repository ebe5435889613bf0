/* Test helpers shared by the unit tests that run probes through the real runner: run a table on
 * the live root and find one probe's JSON, and read fields of it. Header-only (static functions),
 * for cmocka tests. */
#ifndef SC_TEST_PROBE_HARNESS_H
#define SC_TEST_PROBE_HARNESS_H

#include <stdio.h>
#include <string.h>

#include "sc_runner.h"
#include "sc_snapshot.h"

/* Runs table (NULL-terminated) on the live system with the given per-probe deadline (0: each
 * probe's own); returns the JSON of probe want_id, owned by *snap (the caller deletes *snap). */
static inline cJSON *sc_test_run_table(const sc_probe *const *table, double timeout_s,
                                       const char *want_id, cJSON **snap)
{
    sc_options opt;
    sc_options_init(&opt);
    opt.timeout_s = timeout_s;
    sc_root root = {.dirfd = -1, .is_host = true};
    snprintf(root.path, sizeof root.path, "/");
    *snap = cJSON_CreateObject();
    sc_run_state rs;
    sc_run_probes(table, &opt, &root, NULL, &rs);
    sc_snapshot_add_run(*snap, &rs);
    sc_run_state_free(&rs);
    const cJSON *layer, *p;
    cJSON_ArrayForEach (layer, cJSON_GetObjectItem(*snap, "layers"))
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes"))
            if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p, "id")), want_id) == 0)
                return (cJSON *)p;
    fail_msg("%s not in the snapshot", want_id);
    return NULL;
}

/* The string at key in o, or NULL. */
static inline const char *str(const cJSON *o, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(o, key));
}

/* The number at key in o; fails the test when it is not a number. */
static inline double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

/* The finding with id in probe p, or NULL. */
static inline const cJSON *finding(const cJSON *p, const char *id)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, cJSON_GetObjectItem(p, "findings"))
        if (strcmp(str(f, "id"), id) == 0)
            return f;
    return NULL;
}

#endif
