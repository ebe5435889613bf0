/* Temporary files of a run: a private directory for the work directories of the probes' children,
 * removed whole when the run ends (a child killed at its deadline, or whose speculative result
 * was discarded, cannot clean up after itself), and tree removal. */
#ifndef SC_SCRATCH_H
#define SC_SCRATCH_H

#include <stddef.h>

#include "sc_types.h"

/* Makes a new private (0700) directory "PREFIX-XXXXXX" into dir, under the directory under, or
 * under $TMPDIR (or /tmp) when under is NULL or ""; returns 0 or a negative errno with err set
 * and dir "". */
int sc_private_dir(const char *under, const char *prefix, char *dir, size_t size, sc_error *err);
/* Makes the run's private directory under $TMPDIR or /tmp (nothing when there is one); returns 0
 * or a negative errno. Children forked afterwards inherit it. */
int sc_scratch_begin(void);
/* The run's private directory, or "" when there is none. */
const char *sc_scratch_dir(void);
/* Removes the run's directory and everything in it. */
void sc_scratch_end(void);

/* Removes the directory tree at path without following symlinks; returns 0 or -errno. */
int sc_remove_tree(const char *path);

#endif
