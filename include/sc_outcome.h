/* The outcome of one probe in a run, as the runner keeps it: typed status and marks, and the facts
 * and findings the probe reported. Later probes read earlier outcomes through sc_ctx_outcome; the
 * report, JUnit and the snapshot read the whole run from the run state (src/core/sc_run_state.h).
 */
#ifndef SC_OUTCOME_H
#define SC_OUTCOME_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "sc_types.h"

struct sc_probe;

/* Where an outcome stands: not started, running, or final (never changes again). */
typedef enum { SC_OUTCOME_PENDING, SC_OUTCOME_RUNNING, SC_OUTCOME_FINAL } sc_outcome_phase;

typedef struct {
    const struct sc_probe *probe;
    sc_outcome_phase phase;
    sc_status status;   /* never SC_STATUS_UNSET once final */
    bool applicable;    /* false: skipped because its backend is absent */
    bool offline;       /* skipped because the run is offline and the probe is active */
    char *reason;       /* why skip, error, crash or timeout; NULL when none */
    double duration_ms; /* to the microsecond */
    cJSON *facts;       /* object */
    /* Array of {id, severity, message, hint}, as sc_finding made them. Findings stay JSON: they
     * are made in isolated children and travel the pipe as JSON, the libraries analysis nests and
     * copies them, and the snapshot writes them as they are; sc_finding_read gives the typed view.
     */
    cJSON *findings;
    char *output_tail; /* the end of an isolated child's output, kept when it did not pass */
} sc_outcome;

/* A finding read through its type: severity as the enum, the texts as they are. */
typedef struct {
    const char *id;
    sc_severity severity;
    const char *message;
    const char *hint; /* NULL when none */
} sc_finding_view;

/* Reads finding f into v; false (v unusable) when f lacks an id or a known severity. */
bool sc_finding_read(const cJSON *f, sc_finding_view *v);
/* The first finding of o with severity sev, or NULL. */
const cJSON *sc_outcome_first_finding(const sc_outcome *o, sc_severity sev);

#endif
