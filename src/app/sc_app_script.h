/* The judging half of app.script: what the helper module reported from the user's interpreter,
 * turned into facts and findings in the runner's process. */
#ifndef SC_APP_SCRIPT_H
#define SC_APP_SCRIPT_H

#include "sc_probe.h"

/* Takes the helper's result r apart into res->facts (runs, stages, metrics, timing, memory,
 * numerics) and adds the findings on it (app.failed, app.memory-growth,
 * app.first-nonfinite-module). */
void sc_app_script_result(sc_result *res, cJSON *r);

#endif
