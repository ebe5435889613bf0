/* Every path stackcheck reads goes through a root: "/" on the live system, or --sysroot DIR (or a
 * capture's tarball, unpacked into a private directory). Paths are resolved inside the root
 * (RESOLVE_IN_ROOT), so absolute symlinks cannot escape it. A capture turns on a log of every call
 * below; a capture's root (its manifest, /.stackcheck/capture.json) answers them as the captured
 * machine did (see sc_sysroot_capture.h). */
#ifndef SC_SYSROOT_H
#define SC_SYSROOT_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "sc_types.h"

struct sc_root_log;
struct sc_replay;

typedef struct {
    int dirfd;                /* the root directory, O_PATH */
    bool is_host;             /* true: the live system, paths used as they are */
    char path[4096];          /* the root directory ("/" for the host) */
    char given[4096];         /* what the user named: the directory, or the capture's tarball */
    bool walk_only;           /* resolve by component walk, as on kernels without openat2 */
    int unpacked_by;          /* the pid that unpacked a tarball into path (and removes it), or 0 */
    struct sc_root_log *log;  /* a capture's log of the calls below, or NULL */
    struct sc_replay *replay; /* a capture's manifest, or NULL */
} sc_root;

/* Opens root dir (NULL or "/" for the host): a directory, or a capture's tarball (.tar.gz, .tar),
 * unpacked with every guard into a private temporary directory. A directory or tarball holding a
 * capture manifest is replayed (and its captured environment set in this process). Returns 0 or a
 * negative errno and fills err. */
int sc_root_open(sc_root *root, const char *dir, sc_error *err);
/* Releases the root's descriptor and manifest; removes the directory a tarball was unpacked into
 * (only in the process that unpacked it). */
void sc_root_close(sc_root *root);
/* True when the root stands for a live system: the host itself, or a replay of a capture of one.
 * Sources no file tree holds (the kernel ring buffer, uname, the environment) are then the live
 * ones, or their record in the capture. */
bool sc_root_live(const sc_root *root);
/* True while a capture records the calls made through root: a reader that would use a source
 * outside the file tree (libdrm, an ioctl) reads the files a replay will have instead. */
bool sc_root_recording(const sc_root *root);
/* Records text that a reader got from a live source outside the file tree (/dev/kmsg read record
 * by record, uname) as the content of path in a capture, or, with code < 0, the error it got
 * (a replay of the capture then gets code reading path). Nothing happens unless recording. */
void sc_root_note_live(const sc_root *root, const char *path, const char *text, size_t len,
                       int code);
/* Opens an absolute path inside the root with open(2) flags; returns an fd or -errno. For reading
 * a file use sc_root_open_file: this one opens whatever the path names, a FIFO included. */
int sc_root_openat(const sc_root *root, const char *path, int flags);

/* Reads of outside data never wait: a file is looked up without being opened (O_PATH), fstat must
 * say regular file (sysfs and procfs attributes are regular files too), and only then is it opened
 * O_RDONLY|O_NONBLOCK|O_NOCTTY, through the looked-up inode. A FIFO, socket or device is never
 * opened: the call fails with -SC_ENOTREG and the path is recorded as refused. */

/* An errno-style code beyond the system's: a FIFO, socket or device where a regular file was
 * expected. sc_root_strerror() words it. */
#define SC_ENOTREG 1000
/* A file a capture holds no content of: over its size limits, or one that may hold secrets. */
#define SC_EOMITTED 1001
/* What the refusals list keeps of each path (the first SC_ROOT_REFUSED_MAX, each once). */
#define SC_ROOT_REFUSED_MAX 64

typedef struct {
    char path[512];   /* as asked for: inside the root, or a host path */
    const char *type; /* "FIFO", "socket", "character device", "block device" */
} sc_root_refusal;

/* Opens a regular file inside the root for reading (see above); st filled when not NULL. Returns
 * the fd or -errno: -EISDIR for a directory, -SC_ENOTREG for a FIFO, socket or device. */
int sc_root_open_file(const sc_root *root, const char *path, struct stat *st);
/* sc_root_open_file for a reader of the last tail bytes only (a log): a capture keeps just those.
 */
int sc_root_open_tail(const sc_root *root, const char *path, struct stat *st, size_t tail);
/* The same for a host path taken as it is (relative to the working directory). */
int sc_open_regular(const char *path, struct stat *st);
/* strerror() for the codes of this layer: -SC_ENOTREG reads "not a regular file (a FIFO, socket
 * or device)", -SC_EOMITTED "omitted from the capture"; code is negative. */
const char *sc_root_strerror(int code);
/* The reads refused so far in this process, in order; *count gets how many (at most
 * SC_ROOT_REFUSED_MAX). */
const sc_root_refusal *sc_root_refusals(size_t *count);
/* Records a refusal another process reported (an isolated child's; type as sc_root_refusal's). */
void sc_root_refusal_note(const char *path, const char *type);
/* Forgets the refusals (for tests). */
void sc_root_refusals_clear(void);
/* Reads fd to its end, at most max bytes, into *out (malloc'd, NUL-terminated), the buffer sized
 * from hint (st_size: exact for files, 4096 or 0 for sysfs and procfs attributes) and grown as
 * needed; returns the length or -errno (-EAGAIN when a read would wait). */
long sc_read_fd(int fd, size_t hint, size_t max, char **out);
/* Reads a whole small file (at most max bytes, NUL-terminated) into *out (malloc'd) through
 * sc_root_open_file; returns the length or -errno. A file longer than max is cut at max. */
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
