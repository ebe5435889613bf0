/* Temporary files of a run: a private directory made at the start of a run that starts foreign
 * code, under which the probes make their work directories, removed whole at its end, so that a
 * probe's child killed at its deadline or discarded leaves nothing behind; and the removal of a
 * directory tree without following symlinks. */
#include "sc_scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_util.h"

#define REMOVE_DEPTH_MAX 256

/* Inherited by every child forked after sc_scratch_begin. */
static char scratch[PATH_MAX];

static int remove_in(int dirfd, int depth);

static int remove_entry(int dirfd, const char *name, int depth)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
    int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
        return -errno;
    int rc = remove_in(sub, depth + 1);
    if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0)
        rc = -errno;
    return rc;
}

/* Removes everything in the directory dirfd (closed here). */
static int remove_in(int dirfd, int depth)
{
    DIR *d = depth < REMOVE_DEPTH_MAX ? fdopendir(dirfd) : NULL;
    if (!d) {
        close(dirfd);
        return -ELOOP;
    }
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int r = remove_entry(dirfd, e->d_name, depth);
        rc = rc ? rc : r;
    }
    closedir(d);
    return rc;
}

int sc_remove_tree(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = remove_in(fd, 0);
    if (rc == 0 && rmdir(path) < 0)
        rc = -errno;
    return rc;
}

int sc_private_dir(const char *under, const char *prefix, char *dir, size_t size, sc_error *err)
{
    const char *tmp = under && under[0] ? under : getenv("TMPDIR");
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    int rc = 0;
    if (!sc_fmt(dir, size, "%s/%s-XXXXXX", tmp, prefix))
        rc = sc_error_set(err, -ENAMETOOLONG, "the temporary directory %s is too long", tmp);
    else if (!mkdtemp(dir))
        rc = sc_error_set(err, -errno, "cannot make a private directory in %s: %s", tmp,
                          strerror(errno));
    if (rc < 0)
        dir[0] = '\0';
    return rc;
}

int sc_scratch_begin(void)
{
    sc_error err = {0};
    return scratch[0] ? 0 : sc_private_dir(NULL, "stackcheck-run", scratch, sizeof scratch, &err);
}

const char *sc_scratch_dir(void)
{
    return scratch;
}

void sc_scratch_end(void)
{
    if (!scratch[0])
        return;
    sc_remove_tree(scratch);
    scratch[0] = '\0';
}
