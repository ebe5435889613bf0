/* Path access through a root. On the live system paths are used as they are; under --sysroot every
 * lookup is resolved inside the root with openat2(RESOLVE_IN_ROOT), or by a component walk that
 * keeps ".." and absolute symlinks inside the root where the kernel lacks openat2. Each public call
 * is logged while a capture records, and answered from the manifest of a capture's root. */
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

#include "sc_capture.h"
#include "sc_sysroot_capture.h"
#include "sc_util.h"

#define MAX_SYMLINKS 40

/* Opens the root directory given (a tarball is unpacked first). */
static int open_dir(sc_root *root, const char *dir, sc_error *err)
{
    struct stat st;
    if (!root->is_host && stat(dir, &st) == 0 && S_ISREG(st.st_mode)) {
        int rc = sc_capture_unpack(dir, root->path, sizeof root->path, err);
        if (rc < 0)
            return rc;
        root->unpacked_by = getpid();
    } else {
        snprintf(root->path, sizeof root->path, "%s", root->is_host ? "/" : dir);
    }
    root->dirfd = open(root->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root->dirfd < 0)
        return sc_error_set(err, -errno, "cannot open root %s: %s", root->given, strerror(errno));
    return 0;
}

int sc_root_open(sc_root *root, const char *dir, sc_error *err)
{
    memset(root, 0, sizeof *root);
    root->dirfd = -1;
    root->is_host = (dir == NULL || strcmp(dir, "/") == 0);
    snprintf(root->given, sizeof root->given, "%s", root->is_host ? "/" : dir);
    int rc = open_dir(root, dir, err);
    if (rc == 0 && !root->is_host)
        rc = sc_replay_load(root, err);
    if (rc < 0)
        sc_root_close(root);
    return rc;
}

void sc_root_close(sc_root *root)
{
    if (root->dirfd >= 0)
        close(root->dirfd);
    root->dirfd = -1;
    sc_replay_free(root);
    if (root->unpacked_by && root->unpacked_by == getpid())
        sc_capture_remove_unpacked(root->path);
    root->unpacked_by = 0;
}

bool sc_root_recording(const sc_root *root)
{
    return root->log != NULL;
}

/* Where a walk is: the open directory and its canonical path inside the root. */
typedef struct {
    const sc_root *root;
    int cur;
    char canon[PATH_MAX];
    const sc_walk_visitor *v;
} walk_state;

/* Opens one component of a walk; a symlink is reported through *is_link with its O_PATH fd. */
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

static bool at_root(const walk_state *w)
{
    struct stat a, b;
    return fstat(w->cur, &a) == 0 && fstat(w->root->dirfd, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* The canonical path one level up (".." of a directory that is not the root). */
static void canon_up(char *canon)
{
    char *slash = strrchr(canon, '/');
    if (slash)
        *slash = '\0';
    else
        canon[0] = '\0';
}

/* Follows the symlink fd (named comp in the current directory): the walk goes on with its target
 * and the rest of the path in work. Returns 0 or -errno. */
static int walk_link(walk_state *w, int fd, const char *comp, const char *rest, char *work,
                     size_t size, int *links)
{
    char target[PATH_MAX], joined[PATH_MAX * 2], at[PATH_MAX];
    ssize_t len = readlinkat(fd, "", target, sizeof target - 1);
    close(fd);
    if (len < 0 || ++*links > MAX_SYMLINKS)
        return len < 0 ? -errno : -ELOOP;
    target[len] = '\0';
    if (!sc_fmt(joined, sizeof joined, "%s/%s", target, rest) ||
        !sc_fmt(at, sizeof at, "%s%s%s", w->canon, w->canon[0] ? "/" : "", comp) ||
        !sc_fmt(work, size, "%s", joined))
        return -ENAMETOOLONG;
    if (w->v && w->v->on_link)
        w->v->on_link(w->v->arg, at, target);
    if (target[0] == '/') {
        int top = dup(w->root->dirfd);
        if (top < 0)
            return -errno;
        close(w->cur);
        w->cur = top;
        w->canon[0] = '\0';
    }
    return 0;
}

/* Steps into comp (not a symlink): the canonical path follows, and a directory is told. */
static int walk_enter(walk_state *w, int next, const char *comp)
{
    close(w->cur);
    w->cur = next;
    if (strcmp(comp, "..") == 0)
        canon_up(w->canon);
    else if (strlen(w->canon) + strlen(comp) + 2 > sizeof w->canon)
        return -ENAMETOOLONG;
    else
        sc_fmt(w->canon + strlen(w->canon), sizeof w->canon - strlen(w->canon), "%s%s",
               w->canon[0] ? "/" : "", comp);
    struct stat st;
    if (w->v && w->v->on_dir && fstat(next, &st) == 0 && S_ISDIR(st.st_mode))
        w->v->on_dir(w->v->arg, w->canon);
    return 0;
}

/* The next component of *p into comp; *p moves past it. Returns its length, -1 at the end, or
 * -ENAMETOOLONG. */
static int next_component(char **p, char *comp, bool *last)
{
    while (**p == '/')
        (*p)++;
    if (**p == '\0')
        return -1;
    char *slash = strchr(*p, '/');
    size_t n = slash ? (size_t)(slash - *p) : strlen(*p);
    if (n > NAME_MAX)
        return -ENAMETOOLONG;
    memcpy(comp, *p, n);
    comp[n] = '\0';
    *p += n;
    *last = (**p == '\0' || (*p)[strspn(*p, "/")] == '\0');
    return (int)n;
}

static int walk_loop(walk_state *w, char *work, size_t size, int flags, bool follow)
{
    int links = 0;
    char *p = work, comp[NAME_MAX + 1];
    for (;;) {
        bool last = false;
        int n = next_component(&p, comp, &last);
        if (n == -1)
            return 0;
        if (n < 0)
            return n;
        if (strcmp(comp, ".") == 0 || (strcmp(comp, "..") == 0 && at_root(w)))
            continue; /* ".." at the root stays at the root */
        int is_link = 0;
        int next = walk_step(w->cur, comp, flags, last, follow, &is_link);
        if (next < 0)
            return next;
        int rc =
            is_link ? walk_link(w, next, comp, p, work, size, &links) : walk_enter(w, next, comp);
        if (rc < 0)
            return rc;
        if (is_link)
            p = work;
    }
}

int sc_root_walk(const sc_root *root, const char *path, int flags, bool follow,
                 const sc_walk_visitor *v, char *canon)
{
    char work[PATH_MAX * 2];
    walk_state w = {.root = root, .cur = dup(root->dirfd), .v = v};
    if (w.cur < 0)
        return -errno;
    int rc = sc_fmt(work, sizeof work, "%s", path) ? walk_loop(&w, work, sizeof work, flags, follow)
                                                   : -ENAMETOOLONG;
    if (canon)
        snprintf(canon, PATH_MAX, "%s", w.canon);
    if (rc < 0) {
        close(w.cur);
        return rc;
    }
    return w.cur;
}

/* The fallback walk: resolves path inside root without openat2. */
static int walk_open(const sc_root *root, const char *path, int flags, bool follow)
{
    return sc_root_walk(root, path, flags, follow, NULL, NULL);
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

/* Logs a call's outcome (a descriptor counts as success) and returns it. */
static int logged(const sc_root *root, char op, const char *path, int arg, int rc)
{
    sc_root_log_note(root, op, path, arg, rc < 0 ? rc : 0);
    return rc;
}

int sc_root_lookup(const sc_root *root, const char *path, int flags)
{
    return open_in_root(root, path, flags, true);
}

int sc_root_openat(const sc_root *root, const char *path, int flags)
{
    int rc = sc_replay_error(root, SC_REC_LOOKUP, path);
    return logged(root, SC_REC_LOOKUP, path, 0, rc ? rc : open_in_root(root, path, flags, true));
}

DIR *sc_root_opendir(const sc_root *root, const char *path)
{
    int rc = sc_replay_error(root, SC_REC_LIST, path);
    rc = logged(root, SC_REC_LIST, path, 0,
                rc ? rc : open_in_root(root, path, O_RDONLY | O_DIRECTORY, true));
    if (rc < 0) {
        errno = -rc;
        return NULL;
    }
    DIR *d = fdopendir(rc);
    if (!d)
        close(rc);
    return d;
}

static int stat_in_root(const sc_root *root, const char *path, struct stat *st, bool follow)
{
    int fd = open_in_root(root, path, O_PATH, follow);
    if (fd < 0)
        return fd;
    int rc = fstat(fd, st) < 0 ? -errno : 0;
    close(fd);
    if (rc == 0)
        sc_replay_fix_stat(root, st); /* an omitted file's placeholder stats as the file did */
    return rc;
}

int sc_root_stat(const sc_root *root, const char *path, struct stat *st, bool follow)
{
    char op = follow ? SC_REC_LOOKUP : SC_REC_LSTAT;
    int rc = sc_replay_error(root, op, path);
    return logged(root, op, path, 0, rc ? rc : stat_in_root(root, path, st, follow));
}

static long readlink_in_root(const sc_root *root, const char *path, char *buf, size_t size)
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

long sc_root_readlink(const sc_root *root, const char *path, char *buf, size_t size)
{
    long rc = sc_replay_error(root, SC_REC_LSTAT, path);
    if (rc == 0)
        rc = readlink_in_root(root, path, buf, size);
    logged(root, SC_REC_LSTAT, path, 0, rc < 0 ? (int)rc : 0);
    return rc;
}

static int access_in_root(const sc_root *root, const char *path, int mode)
{
    int rc;
    if (sc_replay_access(root, path, mode, &rc))
        return rc;
    int fd = open_in_root(root, path, O_PATH, true);
    if (fd < 0)
        return fd;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    rc = faccessat(fd, "", mode, AT_EACCESS | AT_EMPTY_PATH);
    if (rc < 0 && errno == EINVAL)
        rc = faccessat(AT_FDCWD, proc, mode, AT_EACCESS);
    rc = rc < 0 ? -errno : 0;
    close(fd);
    return rc;
}

int sc_root_access(const sc_root *root, const char *path, int mode)
{
    return logged(root, SC_REC_ACCESS, path, mode, access_in_root(root, path, mode));
}

bool sc_root_exists(const sc_root *root, const char *path)
{
    struct stat st;
    return sc_root_stat(root, path, &st, true) == 0;
}

static int realpath_in_root(const sc_root *root, const char *path, char *buf, size_t size)
{
    int fd = open_in_root(root, path, O_PATH, true);
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

int sc_root_realpath(const sc_root *root, const char *path, char *buf, size_t size)
{
    int rc = sc_replay_error(root, SC_REC_LOOKUP, path);
    return logged(root, SC_REC_LOOKUP, path, 0, rc ? rc : realpath_in_root(root, path, buf, size));
}
