/* The one writer of output files. It decides by what the path names: rename replaces a name, so it
 * is used only onto a regular file or a new path (never over /dev/null, a FIFO or a symlink), and
 * its temporary is created exclusively, never through a planted link. */
#include "sc_output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sc_util.h"

#define MAX_LINKS 40
#define TMP_TAG ".stackcheck-"
#define TMP_HEX 16
#define TMP_BASE_MAX 200 /* of the target's name in the temporary's, so it fits NAME_MAX */
#define STALE_SCAN_MAX 100000

static int write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* write_all with SIGPIPE held: a reader that goes away is an error (EPIPE), not our death. */
static int write_all_nosigpipe(int fd, const void *data, size_t len)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &pipe_set, &old);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    int rc = write_all(fd, data, len);
    if (rc == -EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* True when the link at path lives in procfs (/proc/self/fd/1 behind /dev/stdout): its target is
 * an open file of this process, maybe a pipe, and names no path to write beside. */
static bool link_in_procfs(const char *path)
{
    char dir[PATH_MAX];
    struct statfs fs;
    sc_path_dirname(path, dir, sizeof dir);
    return statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

/* Follows path's last component link by link into out: the file it ends at, which may not exist.
 * Stops at a /proc magic link (out is that link) and sets *via_proc. */
static int resolve_links(const char *path, char *out, size_t size, bool *via_proc)
{
    char cur[PATH_MAX], target[PATH_MAX], dir[PATH_MAX];
    if (!sc_fmt(cur, sizeof cur, "%s", path))
        return -ENAMETOOLONG;
    for (int hops = 0; hops <= MAX_LINKS; hops++) {
        struct stat st;
        int missing = lstat(cur, &st) < 0;
        if (missing && errno != ENOENT)
            return -errno;
        if (missing || !S_ISLNK(st.st_mode))
            return sc_fmt(out, size, "%s", cur) ? 0 : -ENAMETOOLONG;
        if (link_in_procfs(cur)) {
            *via_proc = true;
            return sc_fmt(out, size, "%s", cur) ? 0 : -ENAMETOOLONG;
        }
        ssize_t n = readlink(cur, target, sizeof target - 1);
        if (n < 0)
            return -errno;
        target[n] = '\0';
        sc_path_dirname(cur, dir, sizeof dir);
        if (!(target[0] == '/' ? sc_fmt(cur, sizeof cur, "%s", target)
                               : sc_fmt(cur, sizeof cur, "%s/%s", dir, target)))
            return -ENAMETOOLONG;
    }
    return -ELOOP;
}

static void random_hex(char *out)
{
    uint64_t r = 0;
    long got = -1;
#ifdef SYS_getrandom /* kernel headers before 3.17 lack it; the fallback is enough with O_EXCL */
    got = syscall(SYS_getrandom, &r, sizeof r, 1 /* GRND_NONBLOCK */);
#endif
    if (got != (long)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^
             ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&ts;
    }
    snprintf(out, TMP_HEX + 1, "%016llx", (unsigned long long)r);
}

/* ".BASE.stackcheck-" with BASE cut to TMP_BASE_MAX bytes: the prefix of every temporary. */
static void tmp_prefix(const char *base, char *out, size_t size)
{
    snprintf(out, size, ".%.*s" TMP_TAG, TMP_BASE_MAX, base);
}

/* Creates a new temporary beside base in dfd, never following a link; its name into name. */
static int create_temp(int dfd, const char *base, mode_t mode, char *name, size_t size)
{
    char prefix[NAME_MAX + 1], hex[TMP_HEX + 1];
    tmp_prefix(base, prefix, sizeof prefix);
    for (int tries = 0; tries < 16; tries++) {
        random_hex(hex);
        if (!sc_fmt(name, size, "%s%s", prefix, hex))
            return -ENAMETOOLONG;
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd >= 0 || errno != EEXIST)
            return fd < 0 ? -errno : fd;
    }
    return -EEXIST;
}

/* Removes our temporaries for base older than SC_OUTPUT_STALE_SECONDS: regular files we own whose
 * name is exactly the pattern (a link or anyone else's file is left alone). */
static void clean_stale(int dfd, const char *base)
{
    char prefix[NAME_MAX + 1];
    tmp_prefix(base, prefix, sizeof prefix);
    size_t plen = strlen(prefix);
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    time_t now = time(NULL);
    struct dirent *e;
    struct stat st;
    for (int seen = 0; (e = readdir(d)) != NULL && seen < STALE_SCAN_MAX; seen++) {
        const char *hex = e->d_name + plen;
        if (strncmp(e->d_name, prefix, plen) != 0 || strlen(hex) != TMP_HEX ||
            strspn(hex, "0123456789abcdef") != TMP_HEX)
            continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == geteuid() && st.st_mtime + SC_OUTPUT_STALE_SECONDS < now)
            unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
}

/* Writes, syncs and closes the temporary fd, then renames it over base. */
static int commit_temp(int dfd, int fd, const char *tmp, const char *base, const void *data,
                       size_t len)
{
    int rc = write_all(fd, data, len);
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && renameat(dfd, tmp, dfd, base) < 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dfd, tmp, 0);
    else
        fsync(dfd); /* the rename itself survives a crash */
    return rc;
}

/* Replaces (or creates) the regular file real atomically; old is its stat, NULL when new. */
static int write_atomic(const char *shown, const char *real, const struct stat *old,
                        const void *data, size_t len, sc_error *err)
{
    char dir[PATH_MAX], tmp[NAME_MAX + 1];
    const char *base = sc_path_dirname(real, dir, sizeof dir);
    if (!*base)
        return sc_error_set(err, -EISDIR, "cannot write %s: it names a directory", shown);
    int dfd = sc_output_open_dir(dir, shown, err);
    if (dfd < 0)
        return dfd;
    clean_stale(dfd, base);
    int fd = create_temp(dfd, base, 0644, tmp, sizeof tmp);
    if (fd < 0) {
        close(dfd);
        return sc_error_set(err, fd, "cannot create %s (its temporary in %s): %s", shown, dir,
                            strerror(-fd));
    }
    if (old && (old->st_uid != geteuid() || old->st_gid != getegid()))
        (void)!fchown(fd, old->st_uid, old->st_gid); /* only root can; others keep theirs */
    if (old)
        fchmod(fd, old->st_mode & 01777);
    int rc = commit_temp(dfd, fd, tmp, base, data, len);
    close(dfd);
    if (rc < 0)
        return sc_error_set(err, rc, "cannot write %s: %s", shown, strerror(-rc));
    return 0;
}

/* Opens a FIFO or character device and writes to it. An open that would wait (a FIFO without a
 * reader, a tty line without carrier) fails instead; follow is false unless path is a magic link.
 */
static int write_opened(const char *shown, const char *path, bool follow, const void *data,
                        size_t len, sc_error *err)
{
    struct stat st;
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
    if (fd < 0 && errno == ENXIO && stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
        return sc_error_set(err, -ENXIO, "cannot write %s: no reader on FIFO", shown);
    if (fd < 0)
        return sc_error_set(err, -errno, "cannot write %s: %s", shown, strerror(errno));
    int rc = fstat(fd, &st) < 0 ? -errno : 0;
    if (rc == 0 && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode))
        rc = -ESTALE; /* replaced since it was looked at: write nothing */
    int fl = rc == 0 ? fcntl(fd, F_GETFL) : 0;
    if (rc == 0 && (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) /* now writes may wait */
        rc = -errno;
    if (rc == 0)
        rc = write_all_nosigpipe(fd, data, len);
    if (close(fd) < 0 && rc == 0 && errno != EINTR)
        rc = -errno;
    if (rc == -ESTALE)
        return sc_error_set(err, rc, "cannot write %s: it changed while it was opened", shown);
    return rc < 0 ? sc_error_set(err, rc, "cannot write %s: %s", shown, strerror(-rc)) : 0;
}

/* The descriptor N when link is /proc/self/fd/N (or /dev/fd/N, /proc/PID/fd/N of this process)
 * and open; -1 otherwise. */
static int own_fd(const char *link)
{
    char dir[PATH_MAX], real[PATH_MAX], mine[64];
    const char *base = sc_path_dirname(link, dir, sizeof dir);
    snprintf(mine, sizeof mine, "/proc/%d/fd", (int)getpid());
    char *end;
    long n = strtol(base, &end, 10);
    if (!*base || *end || n < 0 || n > INT_MAX || !realpath(dir, real) || strcmp(real, mine) != 0)
        return -1;
    return fcntl((int)n, F_GETFD) < 0 ? -1 : (int)n;
}

/* A /proc magic link (/dev/stdout): one of our descriptors is written as it is, at its offset
 * (after the report, with `> file`), whatever it is: pipe, socket, terminal or file. Another
 * process's open FIFO or device is opened through the link. */
static int write_magic_link(const char *shown, const char *link, const void *data, size_t len,
                            sc_error *err)
{
    struct stat st;
    int fd = own_fd(link);
    if (fd >= 0) {
        int rc = write_all_nosigpipe(fd, data, len);
        return rc < 0 ? sc_error_set(err, rc, "cannot write %s: %s", shown, strerror(-rc)) : 0;
    }
    if (stat(link, &st) < 0)
        return sc_error_set(err, -errno, "cannot write %s: %s", shown, strerror(errno));
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
        return write_opened(shown, link, true, data, len, err);
    return sc_error_set(err, -EINVAL,
                        "cannot write %s: an open file of another process, not a FIFO or device",
                        shown);
}

/* Connects to a Unix stream socket and sends the data. */
static int write_socket(const char *shown, const char *path, const void *data, size_t len,
                        sc_error *err)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (!sc_fmt(addr.sun_path, sizeof addr.sun_path, "%s", path))
        return sc_error_set(err, -ENAMETOOLONG, "cannot write %s: socket path too long", shown);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int rc = fd < 0 ? -errno : 0;
    if (rc == 0 && connect(fd, (const struct sockaddr *)&addr, sizeof addr) < 0)
        rc = -errno; /* EAGAIN: its backlog is full, and we do not wait */
    if (rc == 0 && fcntl(fd, F_SETFL, 0) < 0)
        rc = -errno;
    for (const char *p = data; rc == 0 && len > 0;) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno != EINTR)
            rc = -errno;
        p += n > 0 ? n : 0;
        len -= n > 0 ? (size_t)n : 0;
    }
    if (fd >= 0)
        close(fd);
    return rc < 0 ? sc_error_set(err, rc, "cannot write %s (a socket): %s", shown, strerror(-rc))
                  : 0;
}

int sc_output_write(const char *path, const void *data, size_t len, sc_error *err)
{
    if (strcmp(path, "-") == 0) {
        int rc = write_all(1, data, len);
        return rc < 0 ? sc_error_set(err, rc, "cannot write to standard output: %s", strerror(-rc))
                      : 0;
    }
    char real[PATH_MAX] = "";
    bool via_proc = false;
    struct stat st;
    int rc = resolve_links(path, real, sizeof real, &via_proc);
    if (rc == 0 && via_proc)
        return write_magic_link(path, real, data, len, err);
    if (rc == 0 && lstat(real, &st) < 0)
        rc = -errno;
    if (rc == -ENOENT)
        return write_atomic(path, real, NULL, data, len, err);
    if (rc < 0)
        return sc_error_set(err, rc, "cannot write %s: %s", path, strerror(-rc));
    if (S_ISREG(st.st_mode))
        return write_atomic(path, real, &st, data, len, err);
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
        return write_opened(path, real, false, data, len, err);
    if (S_ISSOCK(st.st_mode))
        return write_socket(path, real, data, len, err);
    if (S_ISDIR(st.st_mode))
        return sc_error_set(err, -EISDIR, "cannot write %s: it is a directory", path);
    return sc_error_set(err, -EINVAL,
                        "cannot write %s: a block device or special file (outputs go to files, "
                        "FIFOs, sockets and character devices)",
                        path);
}
