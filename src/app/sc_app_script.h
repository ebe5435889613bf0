/* The judging half of app.script: what the helper module reported from the user's interpreter,
 * turned into facts and findings in the runner's process. */
#ifndef SC_APP_SCRIPT_H
#define SC_APP_SCRIPT_H

#include <stdio.h>

#include "sc_probe.h"

/* Takes the helper's result r apart into res->facts (runs, stages, metrics, timing, memory,
 * numerics, profile, train_watch, scaling) and adds the findings on it (app.failed,
 * app.memory-growth, app.first-nonfinite-module and those of the calls below). */
void sc_app_script_result(sc_result *res, cJSON *r);

/* facts.memory: the device and host series after each repetition (runs[].memory), each with its
 * least-squares fit; app.memory-growth when a fit says it keeps growing. */
void sc_app_check_memory(sc_result *res, const cJSON *runs);
/* facts.profile (the helper's operator profile, taken over): app.cpu-fallback,
 * app.host-device-traffic, app.recompiles. */
void sc_app_check_profile(sc_result *res, cJSON *profile);
/* facts.train_watch: app.nonfinite-after-steps naming the first step and module. */
void sc_app_check_train(sc_result *res, cJSON *watch);
/* facts.scaling: app.poor-scaling when all devices together do far less than their number
 * times one device's work. */
void sc_app_check_scaling(sc_result *res, cJSON *scaling);
/* --app-trace: copies the trace the helper wrote at src to dest through the door out; records
 * facts.profile.trace_file, or app.trace-not-written. */
void sc_app_write_trace(sc_result *res, const char *src, const char *dest);

/* The report's lines under a probe's line from its facts (the top operators of an app profile);
 * nothing when quiet (verbosity < 0) or when the facts hold none. */
void sc_app_report_detail(FILE *out, const cJSON *facts, int verbosity);

#endif
