/* The human report (text, colour on a terminal) and the JUnit file, both from the ended run state.
 */
#ifndef SC_REPORT_H
#define SC_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "sc_run_state.h"
#include "sc_types.h"

/* Prints the layered report and the verdict of the ended run rs to out, under a header line from
 * the snapshot's header (tool, host, sysroot). verbosity: -1 verdict only, 0 one line per probe,
 * 1 also every finding and each probe's duration. */
void sc_report_print(FILE *out, const cJSON *header, const sc_run_state *rs, bool color,
                     int verbosity);
/* Writes one JUnit test case per probe of the ended run rs to path; returns 0 or -errno and fills
 * err. */
int sc_junit_write(const sc_run_state *rs, const char *path, sc_error *err);

#endif
