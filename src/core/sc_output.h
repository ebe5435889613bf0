/* Every file stackcheck writes (snapshot, JUnit, metrics, capture) goes through one writer, which
 * never replaces what the path names: a regular file or a new path is replaced atomically, a
 * symlink is written through, a character device, FIFO or socket is written directly. */
#ifndef SC_OUTPUT_H
#define SC_OUTPUT_H

#include <stddef.h>

#include "sc_types.h"

/* Temporaries are ".NAME.stackcheck-" and 16 hex digits beside the target; one of ours older
 * than this is left from a killed run and removed. */
#define SC_OUTPUT_STALE_SECONDS 3600

/* Writes len bytes of data to path:
 * - "-": standard output;
 * - a regular file or a new path: a temporary in the same directory (O_CREAT|O_EXCL|O_NOFOLLOW,
 *   random name; mode 0644 less the umask, or the existing file's mode and owner), fsync, rename;
 *   missing directories of a new path are created first (see sc_output_open_dir);
 * - a symlink: resolved link by link, the file it ends at is written as above (a dangling link
 *   creates its target); a /proc magic link to one of our descriptors (/dev/stdout, /dev/fd/N)
 *   writes that descriptor as it is, at its offset; another process's FIFO or device through it;
 * - a character device, FIFO or socket: opened (a FIFO without a reader is an error, never a
 *   wait) or connected, and written, never replaced;
 * - a directory or block device: an error.
 * Returns 0 or -errno and fills err. */
int sc_output_write(const char *path, const void *data, size_t len, sc_error *err);

/* Output path templates, for the paths users give to output options (--json, --junit,
 * --prometheus, fleet --json): %h the short host name, %j $SLURM_JOB_ID ("none" without one),
 * %t the run's UTC time (20261201T170000Z, the same for every output of one process), %% a '%'.
 * A host name or job id is reduced to letters, digits, '.', '_' and '-' and never starts with
 * '.', so no expansion adds a directory or a "..". Expands tmpl into out; returns 0, or -EINVAL
 * (an unknown conversion) / -ENAMETOOLONG with err filled. */
int sc_output_path(const char *tmpl, char *out, size_t size, sc_error *err);
/* Opens directory dir for writing an output into, creating the components that are missing (mode
 * 0755 less the umask), each opened after its mkdir without following a link and checked to be
 * ours, so a link or directory planted in a shared parent meanwhile is refused. Existing
 * components are followed as they are. Returns an fd or -errno with err filled (shown names the
 * output in the message). */
int sc_output_open_dir(const char *dir, const char *shown, sc_error *err);

#endif
