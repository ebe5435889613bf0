/* The run state: one outcome per probe of the table, filled in whatever order the runner runs
 * them, read in report order (layer by layer, table order within a layer) by gating, the summary,
 * the report, JUnit and the snapshot. The snapshot is written from it once, at the end. */
#ifndef SC_RUN_STATE_H
#define SC_RUN_STATE_H

#include <stddef.h>

#include "sc_outcome.h"
#include "sc_probe.h"

typedef struct sc_run_state sc_run_state;

/* What the runner tells while it runs; every member may be NULL. An outcome is handed over when it
 * starts and once when it is final. Until the run ends its texts have not passed the door: what
 * an observer prints goes through sc_redact (sc_redact_format, sc_print_line). */
typedef struct {
    void (*started)(const sc_run_state *rs, size_t index, void *arg);
    void (*final)(const sc_run_state *rs, size_t index, void *arg);
    void *arg;
} sc_run_observer;

/* The verdict of a run, from its outcomes. */
typedef struct {
    sc_status status;                /* SC_STATUS_PASS, SC_STATUS_WARN or SC_STATUS_FAIL */
    int exit_code;                   /* 0 or 1 */
    const sc_outcome *first_failure; /* the first failed outcome in report order, or NULL */
    const cJSON *first_error;        /* its first error finding, or NULL */
} sc_run_summary;

struct sc_run_state {
    const sc_probe *const *table;
    size_t count;
    sc_outcome *outcomes; /* outcomes[i] is table[i]'s, whatever order they were filled in */
    size_t *order;        /* report order: outcome indices by layer, table order within one */
    sc_status layer_status[SC_LAYER_COUNT]; /* set by sc_run_state_finish */
    sc_run_summary summary;                 /* set by sc_run_state_finish */
};

/* Makes rs for table (NULL-terminated): every outcome pending. Returns 0, -ENOMEM, or -EINVAL
 * when a probe is in no layer. */
int sc_run_state_init(sc_run_state *rs, const sc_probe *const *table);
/* Frees what rs owns (not the table). */
void sc_run_state_free(sc_run_state *rs);
/* The index of probe_id in rs's table, or -1. */
ptrdiff_t sc_run_state_index(const sc_run_state *rs, const char *probe_id);
/* The k-th outcome in report order (k < rs->count). */
const sc_outcome *sc_run_state_at(const sc_run_state *rs, size_t k);

/* Makes o final: status st, res's reason and applicability, its facts and findings (taken from
 * res), duration ms (kept to the microsecond), tail (NULL or "" for none) and offline. */
void sc_outcome_finish(sc_outcome *o, sc_result *res, sc_status st, double ms, const char *tail,
                       bool offline);

/* A layer's status: the worst of its final outcomes that ran (not skip); skip when none ran. */
sc_status sc_run_state_layer_status(const sc_run_state *rs, sc_layer layer);
/* The run's verdict from its final outcomes. */
sc_run_summary sc_run_state_summary(const sc_run_state *rs);
/* Ends the run: sets the layer statuses and the summary, and passes every outcome's texts through
 * the door once (valid UTF-8, redacted), so the report, JUnit and the snapshot read clean text. */
void sc_run_state_finish(sc_run_state *rs);

#endif
