/* Reads of files that can never wait: the inode is checked to be a regular file before it is
 * opened (a FIFO blocks open and read; opening a device node can act on the hardware), reads are
 * bounded, and every refusal is kept so the snapshot can say what was not read and why. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_sysroot.h"
#include "sc_sysroot_capture.h"
#include "sc_text.h"
#include "sc_util.h"

#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY)

/* One process reads one root: the refusals of the run, for the snapshot. */
static sc_root_refusal refused[SC_ROOT_REFUSED_MAX];
static size_t refused_count;

static const char *special_type(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "FIFO";
    if (S_ISSOCK(mode))
        return "socket";
    if (S_ISCHR(mode))
        return "character device";
    return S_ISBLK(mode) ? "block device" : "special file";
}

static void refusal_add_type(const char *path, const char *type)
{
    for (size_t i = 0; i < refused_count; i++)
        if (strcmp(refused[i].path, path) == 0)
            return;
    if (refused_count == SC_ROOT_REFUSED_MAX)
        return;
    snprintf(refused[refused_count].path, sizeof refused[0].path, "%s", path);
    refused[refused_count++].type = type;
}

static void refusal_add(const char *path, mode_t mode)
{
    refusal_add_type(path, special_type(mode));
}

void sc_root_refusal_note(const char *path, const char *type)
{
    static const char *const types[] = {"FIFO", "socket", "character device", "block device"};
    const char *known = "special file";
    for (size_t i = 0; type && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(type, types[i]) == 0)
            known = types[i];
    refusal_add_type(path, known);
}

const sc_root_refusal *sc_root_refusals(size_t *count)
{
    *count = refused_count;
    return refused;
}

void sc_root_refusals_clear(void)
{
    refused_count = 0;
}

const char *sc_root_strerror(int code)
{
    if (code == -SC_EOMITTED)
        return "omitted from the capture (over its size limits, or it may hold secrets)";
    return code == -SC_ENOTREG ? "not a regular file (a FIFO, socket or device)" : strerror(-code);
}

/* 0 when fd is a regular file (st filled); -EISDIR, or -SC_ENOTREG with path recorded. Inside a
 * capture's root (root not NULL) st says what the captured machine's file was. */
static int check_regular(const sc_root *root, int fd, const char *path, struct stat *st)
{
    if (fstat(fd, st) < 0)
        return -errno;
    if (root && sc_replay_fix_stat(root, st) == -SC_EOMITTED)
        return -SC_EOMITTED;
    if (S_ISREG(st->st_mode))
        return 0;
    if (S_ISDIR(st->st_mode))
        return -EISDIR;
    refusal_add(path, st->st_mode);
    return -SC_ENOTREG;
}

/* Opens path for reading through the lookup function open_fn (O_PATH first; root is NULL for a
 * host path); see sc_sysroot.h. */
static int open_regular(int (*open_fn)(const sc_root *, const char *, int), const sc_root *root,
                        const char *path, struct stat *st)
{
    struct stat looked, opened;
    int pfd = open_fn(root, path, O_PATH);
    if (pfd < 0)
        return pfd;
    int rc = check_regular(root, pfd, path, &looked);
    int fd = rc;
    if (rc == 0) { /* the inode just checked, not whatever the path names by now */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
        fd = open(proc, READ_FLAGS | O_CLOEXEC);
        fd = fd >= 0 ? fd : errno == ENOENT ? open_fn(root, path, READ_FLAGS) : -errno;
    }
    close(pfd);
    if (fd < 0)
        return fd;
    rc = check_regular(root, fd, path, &opened);
    if (rc == 0 && (opened.st_dev != looked.st_dev || opened.st_ino != looked.st_ino))
        rc = -ESTALE; /* replaced between lookup and open (only without /proc) */
    if (rc < 0) {
        close(fd);
        return rc;
    }
    if (st)
        *st = opened;
    return fd;
}

static int host_lookup(const sc_root *unused, const char *path, int flags)
{
    (void)unused;
    int fd = open(path, flags | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* Opens a file for reading as the captured machine answered (an error it gave is given again);
 * the call is logged as op with arg. */
static int open_logged(const sc_root *root, const char *path, struct stat *st, char op, int arg)
{
    int fd = sc_replay_error(root, SC_REC_READ, path);
    if (fd == 0)
        fd = open_regular(sc_root_lookup, root, path, st);
    sc_root_log_note(root, op, path, arg, fd < 0 ? fd : 0);
    return fd;
}

int sc_root_open_file(const sc_root *root, const char *path, struct stat *st)
{
    return open_logged(root, path, st, SC_REC_READ, 0);
}

int sc_root_open_tail(const sc_root *root, const char *path, struct stat *st, size_t tail)
{
    return open_logged(root, path, st, SC_REC_TAIL, tail > INT_MAX ? INT_MAX : (int)tail);
}

int sc_open_regular(const char *path, struct stat *st)
{
    return open_regular(host_lookup, NULL, path, st);
}

long sc_read_fd(int fd, size_t hint, size_t max, char **out)
{
    size_t cap = hint > 0 && hint < max ? hint : max < 65536 ? max : 65536;
    char *buf = malloc(cap + 1);
    size_t len = 0;
    long rc = buf ? 0 : -ENOMEM;
    while (rc == 0 && len < max) {
        if (len == cap) {
            size_t ncap = cap * 2 < max ? cap * 2 : max;
            char *grown = realloc(buf, ncap + 1);
            rc = grown ? 0 : -ENOMEM;
            buf = grown ? grown : buf;
            cap = grown ? ncap : cap;
            continue;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n == 0)
            break;
        if (n < 0 && errno != EINTR) /* EAGAIN included: what would make us wait is not read */
            rc = -errno;
        len += n > 0 ? (size_t)n : 0;
    }
    if (rc < 0) {
        free(buf);
        return rc;
    }
    buf[len] = '\0';
    *out = buf;
    return (long)len;
}

long sc_root_read(const sc_root *root, const char *path, char **out, size_t max)
{
    *out = NULL;
    struct stat st;
    int fd = sc_root_open_file(root, path, &st);
    if (fd < 0)
        return fd;
    long n = sc_read_fd(fd, st.st_size > 0 ? (size_t)st.st_size : 0, max, out);
    close(fd);
    return n;
}

int sc_root_read_line(const sc_root *root, const char *path, char *buf, size_t size)
{
    char *text;
    long n = sc_root_read(root, path, &text, 4096);
    if (n < 0)
        return (int)n;
    char *nl = strchr(text, '\n');
    if (nl)
        *nl = '\0';
    sc_text_copy(buf, size, sc_rstrip(text));
    free(text);
    return 0;
}
