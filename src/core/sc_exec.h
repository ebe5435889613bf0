/* Running a program without a shell, as a child with a deadline: its output captured (bounded), it
 * and everything it starts killed when the deadline passes or when it leaves processes behind. */
#ifndef SC_EXEC_H
#define SC_EXEC_H

#include <stdbool.h>

#include "sc_types.h"
#include "sc_util.h"

#define SC_EXEC_OUTPUT_MAX (1u << 20) /* output beyond this is read and dropped */

/* Runs argv (argv[0] looked up on PATH as execvp does, /bin:/usr/bin without a PATH) with standard
 * input from /dev/null and standard output (with standard error too when with_stderr, else
 * standard error to /dev/null) appended to out, in its own process group, killed when this process
 * dies. Waits at most timeout_ms. The caller becomes a child subreaper and every descendant it has
 * is killed afterwards, so it must have no other child it means to keep. Returns 0 with *status
 * (a wait status; exit 127: it could not be run) when it exited, -ETIMEDOUT when it was killed at
 * the deadline, or another -errno (pipe, fork), err filled but for 0. */
int sc_exec_capture(const char *const argv[], double timeout_ms, bool with_stderr, sc_buf *out,
                    int *status, sc_error *err);

#endif
