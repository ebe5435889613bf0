/* The live report: the header at once, each layer's lines as soon as its probes are final, and
 * while probes run, one status line rewritten in place on a terminal (erased before each result)
 * or plain "still running" lines at a slow interval off one. */
#ifndef SC_LIVE_H
#define SC_LIVE_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "sc_options.h"
#include "sc_run_state.h"

typedef struct sc_live sc_live;

/* Starts the live report on out under header (through the door already), as opt says (-q: none,
 * --progress, -v); prints the header. NULL when nothing is printed while the run goes (then the
 * whole report is printed at the end with sc_report_print). */
sc_live *sc_live_new(FILE *out, const cJSON *header, const sc_options *opt, bool color);
/* The observer to hand to the runner. */
const sc_run_observer *sc_live_observer(sc_live *live);
/* Prints what is left of the report of the ended run rs (the layers not printed yet, the verdict)
 * and frees live. */
void sc_live_finish(sc_live *live, const sc_run_state *rs);

#endif
