/* A probe is data plus one run function. The runner decides whether and how it runs (gating,
 * isolation, deadline); the probe only adds facts and findings to its result. */
#ifndef SC_PROBE_H
#define SC_PROBE_H

#include <cjson/cJSON.h>

#include "sc_options.h"
#include "sc_outcome.h"
#include "sc_sysroot.h"
#include "sc_types.h"

struct sc_run_state;

/* What a probe sees: the options, the root to read through, and the run so far (read it through
 * the sc_ctx_* accessors below). */
typedef struct {
    const sc_options *opt;
    const sc_root *root;
    bool offline;                   /* --sysroot given: no active checks */
    const struct sc_run_state *run; /* the outcomes of the probes before this one */
} sc_ctx;

/* What a probe produces. The caller owns facts and findings. */
typedef struct {
    cJSON *facts;        /* object */
    cJSON *findings;     /* array of {id, severity, message, hint} */
    sc_status status;    /* SC_STATUS_UNSET: derived from the findings */
    bool not_applicable; /* with status skip: this backend is absent, nothing above depends on it */
    char reason[512];    /* why skip, error, crash or timeout */
} sc_result;

typedef struct sc_probe {
    const char *id; /* "layer.subject", stable */
    sc_layer layer;
    sc_backend backend;
    bool isolated;       /* run in a forked child with a deadline */
    bool active;         /* initialises a runtime or runs code: skipped offline (--sysroot) */
    double timeout_s;    /* default deadline when isolated */
    const char *summary; /* one line for `stackcheck list` */
    /* The layers whose probes' facts run reads, as SC_NEEDS(layer) bits; 0: every layer below. Its
     * own layer's bit: the probes before it in its layer too (a sibling's facts).
     * The runner may start the probe as soon as those are final (before its own gate is known:
     * a probe whose gate then closes is discarded and skipped as in a serial run). */
    unsigned needs;
    void (*run)(const sc_ctx *ctx, sc_result *res);
    /* Optional passive part (reads files only, never loads a library). Inventory is always
     * collected: when the probe is gated or offline, the runner calls this instead of run and the
     * probe is skip with its facts; when an isolated run crashes or times out, the runner calls it
     * in the parent so the passive facts survive. run itself does its full job, inventory included.
     */
    void (*inventory)(const sc_ctx *ctx, sc_result *res);
    /* Optional, for an isolated probe: runs in the parent just before the child is forked, to
     * compute what the whole run shares and the child then inherits (the Python interpreter,
     * located once per run), so that it is not computed again in every child. Never loads a
     * vendor library. */
    void (*prepare)(const sc_ctx *ctx);
    /* Optional: called in the runner's process for a probe that may run, to begin its slow part
     * early and share it: at the run's start when probes run side by side (--jobs above 1: the
     * framework layer's warm interpreter imports torch while the layers below are checked), at
     * the probe's turn in a serial run (the interpreter then serves the probes after it too). It
     * never changes a fact: run gives the same result with or without it. cool_down(false) stops
     * it when the probe's layer is final or its gate closes, without waiting for it to end (the
     * run goes on); cool_down(true) at the end of the run releases all that is left. */
    void (*warm_up)(const sc_ctx *ctx);
    void (*cool_down)(bool run_ends);
    /* Optional: the probe's own condition on the probes before it in its layer (a sibling whose
     * result it needs), checked at its turn after the layers' gate. False closes it: the probe is
     * skip with why as the reason, and a result it made before its turn is discarded. So the probe
     * need not wait for that sibling to start (see needs). */
    bool (*turn_gate)(const sc_ctx *ctx, char *why, size_t size);
} sc_probe;

#define SC_NEEDS(layer) (1u << (layer))

/* The ordered probe table (probes/probes.c), NULL-terminated. */
extern const sc_probe *const sc_probes[];

/* Adds a finding {id, severity, message, hint} to res; message is printf-style. The message
 * carries the evidence, hint says what to do (may be NULL). */
void sc_finding(sc_result *res, const char *id, sc_severity sev, const char *hint, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));
/* Marks res as skipped with a printf-style reason. */
void sc_result_skip(sc_result *res, bool not_applicable, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Marks res as error (the probe itself could not work) with a printf-style reason. */
void sc_result_error(sc_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Status of res: its explicit status, or the worst finding (error -> fail, warn -> warn). */
sc_status sc_result_status(const sc_result *res);
/* Initialises res with empty facts and findings; returns 0 or -ENOMEM. */
int sc_result_init(sc_result *res);
/* Frees res's facts and findings. */
void sc_result_free(sc_result *res);

/* The final outcome of an earlier probe (probe ids and the fact keys other probes read are named in
 * sc_facts.h), or NULL when it is not in the run or not final yet. */
const sc_outcome *sc_ctx_outcome(const sc_ctx *ctx, const char *probe_id);
/* The facts object of an earlier probe, or NULL when it has not run. */
const cJSON *sc_ctx_facts(const sc_ctx *ctx, const char *probe_id);
/* The status of an earlier probe, or SC_STATUS_UNSET when it has not run. */
sc_status sc_ctx_status(const sc_ctx *ctx, const char *probe_id);
/* The first finding with this id reported by any earlier probe (in layer order), or NULL. */
const cJSON *sc_ctx_finding(const sc_ctx *ctx, const char *finding_id);

/* Facts helpers. A fact that could not be read is null, and its reason is kept in the object's
 * "unavailable" map under the same key. */
void sc_fact_null(cJSON *obj, const char *key, const char *reason_fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Adds key = string, or null with reason when value is NULL. */
void sc_fact_str(cJSON *obj, const char *key, const char *value, const char *reason_if_null);

#endif
