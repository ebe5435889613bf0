/* The JSON snapshot (schema stackcheck/snapshot/v1): header, host, environment, layers, summary. */
#ifndef SC_SNAPSHOT_H
#define SC_SNAPSHOT_H

#include <cjson/cJSON.h>

#include "sc_options.h"
#include "sc_run_state.h"
#include "sc_sysroot.h"
#include "sc_types.h"

#define SC_SNAPSHOT_SCHEMA "stackcheck/snapshot/v1"

/* A new snapshot with schema, tool, created, argv, host and env filled; NULL on allocation failure.
 */
cJSON *sc_snapshot_new(const sc_options *opt, const sc_root *root);
/* Adds "layers" (every final outcome of rs, in report order) and "summary" from the ended run
 * state rs (see sc_run_state_finish: its texts have passed the door already). */
void sc_snapshot_add_run(cJSON *snapshot, const sc_run_state *rs);
/* Adds "not_read": the files the run refused to read (a FIFO, socket or device where a regular
 * file was expected), from sc_root_refusals(), through the door. */
void sc_snapshot_add_not_read(cJSON *snapshot);
/* Writes json and a newline to path through sc_output_write ("-": standard output). Returns 0 or
 * -errno and fills err. */
int sc_snapshot_write(const cJSON *json, const char *path, sc_error *err);
/* Reads and parses a JSON file of at most max_bytes: a regular file, "-" (standard input), or a
 * pipe, FIFO or character device named by the user, read as a stream within the same bound (a
 * FIFO waits for its writer, as cat does); never a directory or socket. NULL and err filled on
 * failure. */
cJSON *sc_json_read_file(const char *path, size_t max_bytes, sc_error *err);
/* The same for a regular file only, opened without ever waiting (sc_open_regular): a FIFO, socket,
 * device or directory is refused, never opened. For the many files of a directory, where nothing
 * may block. */
cJSON *sc_json_read_regular(const char *path, size_t max_bytes, sc_error *err);

#endif
