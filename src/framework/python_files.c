/* Files handed to an interpreter (helper modules, launchers, their configuration), written into a
 * private directory: created exclusively, never through a symlink, readable by this user only. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sc_python.h"
#include "sc_util.h"

int sc_python_write_file(const char *dir, const char *name, const char *text, char *path,
                         size_t size, sc_error *err)
{
    if (!sc_fmt(path, size, "%s/%s", dir, name))
        return sc_error_set(err, -ENAMETOOLONG, "path too long in %s", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return sc_error_set(err, -errno, "create %s: %s", path, strerror(errno));
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    close(fd);
    return w == (ssize_t)n ? 0 : sc_error_set(err, -EIO, "write %s failed", path);
}
