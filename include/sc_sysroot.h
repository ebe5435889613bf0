/* Every path stackcheck reads goes through a root: "/" on the live system, or --sysroot DIR.
 * Paths are resolved inside the root (RESOLVE_IN_ROOT), so absolute symlinks cannot escape it. */
#ifndef SC_SYSROOT_H
#define SC_SYSROOT_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "sc_types.h"

typedef struct {
    int dirfd;       /* the root directory, O_PATH */
    bool is_host;    /* true: the live system, paths used as they are */
    char path[4096]; /* the root as given ("/" for the host) */
    bool walk_only;  /* resolve by component walk, as on kernels without openat2 */
} sc_root;

/* Opens root dir (NULL or "/" for the host); returns 0 or a negative errno and fills err. */
int sc_root_open(sc_root *root, const char *dir, sc_error *err);
/* Releases the root's descriptor. */
void sc_root_close(sc_root *root);
/* Opens an absolute path inside the root with open(2) flags; returns an fd or -errno. */
int sc_root_openat(const sc_root *root, const char *path, int flags);
/* Reads a whole small file (at most max bytes, NUL-terminated) into *out (malloc'd);
 * returns the length or -errno. A file longer than max is cut at max. */
long sc_root_read(const sc_root *root, const char *path, char **out, size_t max);
/* Reads the first line of a small text file, trailing whitespace removed, into buf;
 * returns 0 or -errno. */
int sc_root_read_line(const sc_root *root, const char *path, char *buf, size_t size);
/* Opens a directory inside the root; NULL with errno set on failure. */
DIR *sc_root_opendir(const sc_root *root, const char *path);
/* stat(2) (follow = true) or lstat(2) inside the root; returns 0 or -errno. */
int sc_root_stat(const sc_root *root, const char *path, struct stat *st, bool follow);
/* readlink(2) of the last component inside the root, NUL-terminated; returns length or -errno. */
long sc_root_readlink(const sc_root *root, const char *path, char *buf, size_t size);
/* access(2) with the effective ids (R_OK, W_OK...) inside the root; returns 0 or -errno. */
int sc_root_access(const sc_root *root, const char *path, int mode);
/* True when path exists inside the root (following symlinks). */
bool sc_root_exists(const sc_root *root, const char *path);
/* Canonical absolute path of path inside the root (symlinks resolved inside the root), without
 * the root prefix; returns 0 or -errno. */
int sc_root_realpath(const sc_root *root, const char *path, char *buf, size_t size);

#endif
