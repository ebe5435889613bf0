/* The human report (text, colour on a terminal) and the JUnit file, both from the ended run state.
 */
#ifndef SC_REPORT_H
#define SC_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "sc_run_state.h"
#include "sc_types.h"
#include "sc_util.h"

/* Prints the layered report and the verdict of the ended run rs to out, under a header line from
 * the snapshot's header (tool, host, sysroot). verbosity: -1 verdict only, 0 one line per probe,
 * 1 also every finding and each probe's duration. */
void sc_report_print(FILE *out, const cJSON *header, const sc_run_state *rs, bool color,
                     int verbosity);
/* The parts of the report, for a report printed as the run goes (src/core/live.c): the header
 * line (and a blank line), a layer's title line with its status, one probe's line (and its
 * findings with verbosity 1), and the verdict. Texts must have passed the door. */
void sc_report_header(FILE *out, const cJSON *header);
void sc_report_layer_title(FILE *out, sc_layer layer, sc_status st, bool color);
void sc_report_probe(FILE *out, const sc_outcome *o, bool color, int verbosity);
void sc_report_verdict(FILE *out, const sc_run_summary *s, bool color);

/* Appends to b the one line that says what o saw, from its facts (nothing when they say
 * nothing): devices and architectures, runtime version and root, libraries with their roots and
 * the runtime they link, torch's version, build and devices, the app's stages and median. */
void sc_report_summary(const sc_outcome *o, sc_buf *b);

/* Writes one JUnit test case per probe of the ended run rs to path; returns 0 or -errno and fills
 * err. */
int sc_junit_write(const sc_run_state *rs, const char *path, sc_error *err);

#endif
