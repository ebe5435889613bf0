/* Running a program the user owns (their interpreter, their compiler) for what it prints: no shell,
 * its own process group, stdin and stderr on /dev/null, a deadline on every wait, and it and
 * everything it started killed before the call returns. */
#ifndef SC_SPAWN_H
#define SC_SPAWN_H

#include "sc_types.h"
#include "sc_util.h"

/* Runs argv (argv[0] searched on PATH when it has no slash, as execvp does) and appends what it
 * writes to stdout to out (at most max_output bytes kept). The call returns within timeout_ms
 * (plus the kill and reap): an exited program's output is read for 200 ms more, never waited for
 * from a child it left holding the pipe. The caller becomes a child subreaper, and the program's
 * group and every descendant (setsid'd ones too) are killed afterwards, so the caller must have
 * no other child it means to keep. Returns 0 with *status (a wait status) when it exited,
 * -ETIMEDOUT when the deadline passed (it was killed), or another negative errno with err filled
 * when it could not be started. */
int sc_spawn_capture(const char *const *argv, double timeout_ms, size_t max_output, sc_buf *out,
                     int *status, sc_error *err);

#endif
