/* Path access through a root. On the live system paths are used as they are; under --sysroot every
 * lookup is resolved inside the root with openat2(RESOLVE_IN_ROOT), or by a component walk that
 * keeps ".." and absolute symlinks inside the root where the kernel lacks openat2. */
#include "sc_sysroot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sc_util.h"

#define MAX_SYMLINKS 40

int sc_root_open(sc_root *root, const char *dir, sc_error *err)
{
    memset(root, 0, sizeof *root);
    root->is_host = (dir == NULL || strcmp(dir, "/") == 0);
    snprintf(root->path, sizeof root->path, "%s", root->is_host ? "/" : dir);
    root->dirfd = open(root->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root->dirfd < 0)
        return sc_error_set(err, -errno, "cannot open root %s: %s", root->path, strerror(errno));
    return 0;
}

void sc_root_close(sc_root *root)
{
    if (root->dirfd >= 0)
        close(root->dirfd);
    root->dirfd = -1;
}

/* Opens one component of a walk; a symlink is reported as -ELOOP with its fd kept in *link_fd. */
static int walk_step(int cur, const char *comp, int flags, bool last, bool follow, int *is_link)
{
    int fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISLNK(st.st_mode) && (!last || follow)) {
        *is_link = 1;
        return fd;
    }
    *is_link = 0;
    if (last && (flags & ~O_CLOEXEC) != O_PATH) {
        int real = openat(cur, comp, (flags | O_CLOEXEC | O_NOFOLLOW) & ~O_PATH);
        int e = errno;
        close(fd);
        return real < 0 ? -e : real;
    }
    return fd;
}

/* The fallback walk: resolves path inside root without openat2. */
static int walk_open(const sc_root *root, const char *path, int flags, bool follow)
{
    char work[PATH_MAX * 2];
    if (!sc_fmt(work, sizeof work, "%s", path))
        return -ENAMETOOLONG;
    int links = 0;
    int cur = dup(root->dirfd);
    char *p = work;
    while (cur >= 0) {
        while (*p == '/')
            p++;
        if (*p == '\0')
            return cur;
        char *slash = strchr(p, '/');
        char comp[NAME_MAX + 1];
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n > NAME_MAX) {
            close(cur);
            return -ENAMETOOLONG;
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        char *rest = slash ? slash : p + n;
        bool last = (*rest == '\0' || rest[strspn(rest, "/")] == '\0');
        if (strcmp(comp, "..") == 0) {
            struct stat a, b;
            fstat(cur, &a);
            fstat(root->dirfd, &b);
            if (a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
                p = rest;
                continue; /* ".." at the root stays at the root */
            }
        }
        int is_link = 0;
        int next = walk_step(cur, comp, flags, last, follow, &is_link);
        if (next < 0) {
            close(cur);
            return next;
        }
        if (is_link) {
            char target[PATH_MAX];
            ssize_t len = readlinkat(next, "", target, sizeof target - 1);
            close(next);
            if (len < 0 || ++links > MAX_SYMLINKS) {
                close(cur);
                return len < 0 ? -errno : -ELOOP;
            }
            target[len] = '\0';
            char joined[PATH_MAX * 2];
            if (!sc_fmt(joined, sizeof joined, "%s/%s", target, rest)) {
                close(cur);
                return -ENAMETOOLONG;
            }
            if (target[0] == '/') {
                close(cur);
                cur = dup(root->dirfd);
            }
            snprintf(work, sizeof work, "%s", joined);
            p = work;
            continue;
        }
        close(cur);
        cur = next;
        p = rest;
    }
    return -errno;
}

static int open_in_root(const sc_root *root, const char *path, int flags, bool follow)
{
    if (root->is_host) {
        int fd = open(path, flags | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
        return fd < 0 ? -errno : fd;
    }
    struct open_how how = {.flags =
                               (unsigned long long)(flags | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW)),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    const char *rel = path;
    while (*rel == '/')
        rel++;
    if (*rel == '\0')
        rel = ".";
    if (root->walk_only)
        return walk_open(root, path, flags, follow);
    long fd = syscall(SYS_openat2, root->dirfd, rel, &how, sizeof how);
    if (fd >= 0)
        return (int)fd;
    if (errno != ENOSYS && errno != EPERM)
        return -errno;
    return walk_open(root, path, flags, follow);
}

int sc_root_openat(const sc_root *root, const char *path, int flags)
{
    return open_in_root(root, path, flags, true);
}

DIR *sc_root_opendir(const sc_root *root, const char *path)
{
    int fd = sc_root_openat(root, path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) {
        errno = -fd;
        return NULL;
    }
    DIR *d = fdopendir(fd);
    if (!d)
        close(fd);
    return d;
}

int sc_root_stat(const sc_root *root, const char *path, struct stat *st, bool follow)
{
    int fd = open_in_root(root, path, O_PATH, follow);
    if (fd < 0)
        return fd;
    int rc = fstat(fd, st) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

long sc_root_readlink(const sc_root *root, const char *path, char *buf, size_t size)
{
    int fd = open_in_root(root, path, O_PATH, false);
    if (fd < 0)
        return fd;
    ssize_t n = readlinkat(fd, "", buf, size - 1);
    long rc = n < 0 ? -errno : (long)n;
    close(fd);
    if (n >= 0)
        buf[n] = '\0';
    return rc;
}

int sc_root_access(const sc_root *root, const char *path, int mode)
{
    int fd = sc_root_openat(root, path, O_PATH);
    if (fd < 0)
        return fd;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    int rc = faccessat(fd, "", mode, AT_EACCESS | AT_EMPTY_PATH);
    if (rc < 0 && errno == EINVAL)
        rc = faccessat(AT_FDCWD, proc, mode, AT_EACCESS);
    rc = rc < 0 ? -errno : 0;
    close(fd);
    return rc;
}

bool sc_root_exists(const sc_root *root, const char *path)
{
    struct stat st;
    return sc_root_stat(root, path, &st, true) == 0;
}

int sc_root_realpath(const sc_root *root, const char *path, char *buf, size_t size)
{
    int fd = sc_root_openat(root, path, O_PATH);
    if (fd < 0)
        return fd;
    char proc[64], full[PATH_MAX];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, full, sizeof full - 1);
    close(fd);
    if (n < 0)
        return -errno;
    full[n] = '\0';
    char rootreal[PATH_MAX];
    if (root->is_host || !realpath(root->path, rootreal)) {
        snprintf(buf, size, "%s", full);
        return 0;
    }
    size_t rl = strlen(rootreal);
    const char *inside = (strncmp(full, rootreal, rl) == 0) ? full + rl : full;
    snprintf(buf, size, "%s", *inside ? inside : "/");
    return 0;
}
