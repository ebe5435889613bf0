/* Unpacks a capture's tarball into a private directory for a replay. Every name is already clean
 * (sc_tar_next); here every directory on the way is entered with O_NOFOLLOW, so an entry can
 * never write through a symlink another entry made; files are created O_EXCL (an entry twice is
 * an error), with no set-id bits; the archive's owners are ignored. Any failure removes it all. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_capture.h"
#include "sc_scratch.h"
#include "sc_sysroot.h"
#include "sc_tar.h"
#include "sc_util.h"

static long fd_source(void *arg, void *buf, size_t n)
{
    ssize_t k;
    do
        k = read(*(int *)arg, buf, n);
    while (k < 0 && errno == EINTR);
    return k < 0 ? -errno : (long)k;
}

/* Enters (making it when missing) the directory name under dirfd; returns an fd or -errno. */
static int enter_dir(int dirfd, const char *name, unsigned mode)
{
    int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        if (mkdirat(dirfd, name, (mode & 0755) | 0700) < 0 && errno != EEXIST)
            return -errno;
        fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    return fd < 0 ? (errno == ELOOP || errno == ENOTDIR ? -ENOTDIR : -errno) : fd;
}

/* Opens the directory that holds path (relative, clean), making the missing ones; *base gets the
 * last component. Returns an fd or -errno. */
static int open_parent(int top, const char *path, const char **base)
{
    char comp[NAME_MAX + 1];
    int cur = dup(top);
    const char *p = path;
    for (const char *slash; cur >= 0 && (slash = strchr(p, '/')) != NULL; p = slash + 1) {
        size_t n = (size_t)(slash - p);
        memcpy(comp, p, n);
        comp[n] = '\0';
        int next = enter_dir(cur, comp, 0755);
        close(cur);
        if (next < 0)
            return next;
        cur = next;
    }
    *base = p;
    return cur < 0 ? -errno : cur;
}

static int write_file(sc_tar_reader *r, int dirfd, const char *base, unsigned mode)
{
    int fd = openat(dirfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    (mode & 0755) | 0600);
    if (fd < 0)
        return -errno;
    char buf[65536];
    long n;
    int rc = 0;
    while (rc == 0 && (n = sc_tar_read(r, buf, sizeof buf)) != 0) {
        if (n < 0) {
            rc = (int)n;
            break;
        }
        for (long done = 0; rc == 0 && done < n;) {
            ssize_t w = write(fd, buf + done, (size_t)(n - done));
            rc = w < 0 && errno != EINTR ? -errno : 0;
            done += w > 0 ? w : 0;
        }
    }
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    return rc;
}

static int make_entry(sc_tar_reader *r, int top, const sc_tar_entry *e)
{
    if (!e->path[0])
        return 0; /* the archive's root: the directory itself */
    const char *base;
    int dirfd = open_parent(top, e->path, &base);
    if (dirfd < 0)
        return dirfd;
    int rc = 0;
    if (e->type == SC_TAR_DIR) {
        int fd = enter_dir(dirfd, base, e->mode);
        rc = fd < 0 ? fd : 0;
        if (fd >= 0)
            close(fd);
    } else if (e->type == SC_TAR_LINK) {
        rc = symlinkat(e->target, dirfd, base) < 0 ? -errno : 0;
    } else {
        rc = write_file(r, dirfd, base, e->mode);
    }
    close(dirfd);
    return rc;
}

static int unpack_entries(int fd, int top, sc_error *err)
{
    sc_tar_reader *r = sc_tar_reader_new(fd_source, &fd);
    if (!r)
        return sc_error_set(err, -ENOMEM, "out of memory");
    sc_tar_entry *e = malloc(sizeof *e);
    int rc = e ? 0 : sc_error_set(err, -ENOMEM, "out of memory");
    while (rc == 0 && (rc = sc_tar_next(r, e, err)) == 1) {
        rc = make_entry(r, top, e);
        if (rc == -EEXIST)
            sc_error_set(err, rc, "%s is in the archive twice", e->path);
        else if (rc == -ENOTDIR)
            sc_error_set(err, rc, "%s: a directory on its way is a file or a symbolic link",
                         e->path);
        else if (rc < 0)
            sc_error_set(err, rc, "cannot unpack %s: %s", e->path, strerror(-rc));
    }
    free(e);
    sc_tar_reader_free(r);
    return rc;
}

int sc_capture_unpack_fd(int fd, char *dir, size_t size, sc_error *err)
{
    char priv[PATH_MAX];
    int rc = sc_private_dir(NULL, "stackcheck-replay", priv, sizeof priv, err);
    if (rc < 0)
        return rc;
    /* The root is a 0755 directory inside the private one, as a system's / is: what reads the
     * root's own mode sees what it would see on the machine, and the private parent keeps the
     * captured files to this user. */
    if (!sc_fmt(dir, size, "%s/root", priv))
        rc = sc_error_set(err, -ENAMETOOLONG, "TMPDIR is too long");
    else if (mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0)
        rc = sc_error_set(err, -errno, "cannot make %s: %s", dir, strerror(errno));
    int top = rc < 0 ? -1 : open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rc == 0)
        rc = top < 0 ? sc_error_set(err, -errno, "cannot open %s: %s", dir, strerror(errno))
                     : unpack_entries(fd, top, err);
    if (top >= 0)
        close(top);
    if (rc < 0) {
        sc_remove_tree(priv);
        dir[0] = '\0';
    }
    return rc < 0 ? rc : 0;
}

int sc_capture_remove_unpacked(const char *dir)
{
    int rc = sc_remove_tree(dir);
    char parent[PATH_MAX];
    const char *slash = strrchr(dir, '/');
    if (slash && slash > dir && (size_t)(slash - dir) < sizeof parent) {
        memcpy(parent, dir, (size_t)(slash - dir));
        parent[slash - dir] = '\0';
        if (rmdir(parent) < 0 && rc == 0)
            rc = -errno;
    }
    return rc;
}

int sc_capture_unpack(const char *path, char *dir, size_t size, sc_error *err)
{
    struct stat st;
    int fd = sc_open_regular(path, &st);
    if (fd < 0)
        return sc_error_set(err, fd, "cannot read the capture %s: %s", path, sc_root_strerror(fd));
    /* read blocking: a regular file never waits */
    int rc = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0 ? -errno : 0;
    if (rc == 0)
        rc = sc_capture_unpack_fd(fd, dir, size, err);
    else
        sc_error_set(err, rc, "cannot read the capture %s: %s", path, strerror(-rc));
    close(fd);
    if (rc < 0 && strncmp(err->message, "cannot", 6) != 0) {
        char why[sizeof err->message];
        snprintf(why, sizeof why, "%s", err->message);
        sc_error_set(err, rc, "%s is not a capture stackcheck can replay: %s", path, why);
    }
    return rc;
}
