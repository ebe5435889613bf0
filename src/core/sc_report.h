/* The human report (text, colour on a terminal) and the JUnit file, both from the snapshot. */
#ifndef SC_REPORT_H
#define SC_REPORT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "sc_types.h"

/* Prints the layered report and the verdict of snapshot to out. verbosity: -1 verdict only,
 * 0 one line per probe, 1 also every finding and fact summary. */
void sc_report_print(FILE *out, const cJSON *snapshot, bool color, int verbosity);
/* Writes one JUnit test case per probe to path; returns 0 or -errno and fills err. */
int sc_junit_write(const cJSON *snapshot, const char *path, sc_error *err);

#endif
