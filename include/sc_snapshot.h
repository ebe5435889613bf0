/* The JSON snapshot (schema stackcheck/snapshot/v1): header, host, environment, layers, summary. */
#ifndef SC_SNAPSHOT_H
#define SC_SNAPSHOT_H

#include <cjson/cJSON.h>

#include "sc_options.h"
#include "sc_sysroot.h"
#include "sc_types.h"

#define SC_SNAPSHOT_SCHEMA "stackcheck/snapshot/v1"

/* A new snapshot with schema, tool, created, argv, host and env filled; NULL on allocation failure.
 */
cJSON *sc_snapshot_new(const sc_options *opt, const sc_root *root);
/* Writes json to path atomically (temporary file in the same directory, fsync, rename), or to
 * standard output for "-". Returns 0 or -errno and fills err. */
int sc_snapshot_write(const cJSON *json, const char *path, sc_error *err);
/* Reads and parses a JSON file of at most max_bytes; NULL and err filled on failure. */
cJSON *sc_json_read_file(const char *path, size_t max_bytes, sc_error *err);

#endif
