/* `stackcheck capture OUT.tar.gz`: a passive run on the live system (or a --sysroot) whose every
 * read through the sysroot layer is logged, then the files, directories, symlinks and device-node
 * metadata it touched written, redacted, into a tarball with a manifest; and the way back, a
 * tarball unpacked with every guard for --sysroot to replay. */
#ifndef SC_CAPTURE_H
#define SC_CAPTURE_H

#include <stddef.h>

#include "sc_types.h"

/* A capture's default and largest limits: a file's content, and all content together. A file
 * over the limits is omitted (its path stays, with its size and why). The largest are what a
 * replay's reader accepts. */
#define SC_CAPTURE_FILE_DEFAULT (64ull << 20)
#define SC_CAPTURE_TOTAL_DEFAULT (512ull << 20)
#define SC_CAPTURE_FILE_MAX (1ull << 30)
#define SC_CAPTURE_TOTAL_MAX (2ull << 30)

/* `stackcheck capture [OPTIONS] OUT.tar.gz`; returns the exit status. */
int sc_cmd_capture(int argc, char **argv);

/* Unpacks the capture tarball at path (gzip or plain tar) into the directory "root" (0755, as a
 * system's / is) of a new private directory (0700, under $TMPDIR or /tmp); the root's path goes
 * to dir. Only files, directories and symbolic links with
 * clean relative names are made; nothing is created through a symlink, nothing outside the
 * directory; entries, sizes and names are bounded. On failure nothing is left. Returns 0 or
 * -errno with err filled. */
int sc_capture_unpack(const char *path, char *dir, size_t size, sc_error *err);
/* Unpacks from an open descriptor (the same guards); dir as above. */
int sc_capture_unpack_fd(int fd, char *dir, size_t size, sc_error *err);
/* Removes what sc_capture_unpack made: the root at dir and its private parent. */
int sc_capture_remove_unpacked(const char *dir);

#endif
