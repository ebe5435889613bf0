/* Where an output goes: the path templates of the output options (%h short host name, %j Slurm
 * job id, %t the run's UTC time, %% a percent sign), so one shared directory takes a file per node
 * and per run, and the directories of a new output, created one by one without following a link
 * planted where one of them is being made. */
#include "sc_output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sc_host.h"
#include "sc_util.h"

#define PART_MAX 64 /* bytes of one expansion */

/* What may come from outside (the host name, the job id in the environment) becomes one harmless
 * file-name part: letters, digits, '.', '_' and '-' only, never starting with '.' (no "..", no
 * hidden file), never empty. */
static void sanitise_part(const char *in, char *out, size_t size, const char *empty)
{
    size_t n = 0;
    for (const char *p = in ? in : ""; *p && n + 1 < size && n < PART_MAX; p++) {
        char c = *p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || (c == '.' && n > 0);
        out[n++] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0)
        snprintf(out, size, "%s", empty);
}

/* The run's time, fixed at its first use: every output of one run names the same second. */
static const char *run_time(void)
{
    static char stamp[32];
    if (!stamp[0]) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    }
    return stamp;
}

/* The expansion of conversion c into part; false for an unknown conversion. */
static bool expand_one(char c, char *part, size_t size)
{
    char host[256];
    switch (c) {
    case 'h':
        sanitise_part(sc_host_short_name(host, sizeof host) ? host : NULL, part, size, "unknown");
        return true;
    case 'j': sanitise_part(getenv("SLURM_JOB_ID"), part, size, "none"); return true;
    case 't': snprintf(part, size, "%s", run_time()); return true;
    case '%': snprintf(part, size, "%%"); return true;
    default: return false;
    }
}

int sc_output_path(const char *tmpl, char *out, size_t size, sc_error *err)
{
    size_t n = 0;
    char part[PART_MAX + 1];
    for (const char *p = tmpl; *p; p++) {
        if (*p != '%') {
            part[0] = *p;
            part[1] = '\0';
        } else if (!expand_one(p[1], part, sizeof part)) {
            return sc_error_set(err, -EINVAL,
                                "output path '%.200s': unknown %%%.1s (use %%h, %%j, %%t or %%%%)",
                                tmpl, p[1] ? p + 1 : "");
        } else {
            p++;
        }
        size_t len = strlen(part);
        if (n + len >= size)
            return sc_error_set(err, -ENAMETOOLONG, "output path '%.200s' is too long", tmpl);
        memcpy(out + n, part, len);
        n += len;
    }
    out[n] = '\0';
    return 0;
}

/* Opens component name in dfd as a directory, creating it (mode 0755 less the umask) when it is
 * missing. One that was missing is opened without following a link and must be ours: a link or a
 * stranger's directory put there in the meantime is refused. Returns an fd or -errno. */
static int step_into(int dfd, const char *name)
{
    int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
    int fd = openat(dfd, name, flags);
    if (fd >= 0 || errno != ENOENT)
        return fd >= 0 ? fd : -errno;
    if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
        return -errno;
    fd = openat(dfd, name, flags | O_NOFOLLOW);
    if (fd < 0)
        return errno == ELOOP || errno == ENOTDIR ? -ELOOP : -errno;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
        close(fd);
        return -EPERM;
    }
    return fd;
}

/* Walks dir from its start ("/" or the working directory), creating what is missing. */
static int open_creating(const char *dir)
{
    char copy[PATH_MAX];
    if (!sc_fmt(copy, sizeof copy, "%s", dir))
        return -ENAMETOOLONG;
    int fd = open(dir[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    char *save = NULL;
    for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
        int next = step_into(fd, name);
        close(fd);
        if (next < 0)
            return next;
        fd = next;
    }
    return fd;
}

int sc_output_open_dir(const char *dir, const char *shown, sc_error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        fd = open_creating(dir);
    else if (fd < 0)
        fd = -errno;
    if (fd >= 0)
        return fd;
    const char *why = fd == -ELOOP   ? "a link appeared where a directory was made"
                      : fd == -EPERM ? "another user's directory appeared where one was made"
                                     : strerror(-fd);
    return sc_error_set(err, fd, "cannot create %s: %s: %s", shown, dir, why);
}
