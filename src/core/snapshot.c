/* The snapshot's header (schema, tool, created, argv, host, env), the list of files not read, its
 * writing through the output writer, and a bounded JSON reader for the commands that read
 * snapshots back. */
#include "sc_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_host.h"
#include "sc_output.h"
#include "sc_redact.h"
#include "sc_util.h"
#include "sc_version.h"

extern char **environ;

cJSON *sc_snapshot_new(const sc_options *opt, const sc_root *root)
{
    cJSON *s = cJSON_CreateObject();
    if (!s)
        return NULL;
    char now[64];
    sc_utc_now(now, sizeof now);
    cJSON_AddStringToObject(s, "schema", SC_SNAPSHOT_SCHEMA);
    cJSON *tool = cJSON_AddObjectToObject(s, "tool");
    cJSON_AddStringToObject(tool, "name", "stackcheck");
    cJSON_AddStringToObject(tool, "version", SC_VERSION);
    cJSON_AddStringToObject(s, "created", now);
    cJSON *argv = cJSON_AddArrayToObject(s, "argv");
    for (int i = 0; i < opt->argc; i++)
        cJSON_AddItemToArray(argv, cJSON_CreateString(opt->argv[i]));
    sc_redact_json(argv);
    if (root->is_host)
        cJSON_AddNullToObject(s, "sysroot");
    else
        cJSON_AddStringToObject(s, "sysroot", root->given);
    cJSON_AddItemToObject(s, "host", sc_host_collect(root));
    cJSON_AddItemToObject(s, "env", sc_env_capture(environ));
    return s;
}

void sc_snapshot_add_not_read(cJSON *snapshot)
{
    size_t n;
    const sc_root_refusal *r = sc_root_refusals(&n);
    cJSON *list = cJSON_AddArrayToObject(snapshot, "not_read");
    for (size_t i = 0; list && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", r[i].path);
        cJSON_AddStringToObject(o, "type", r[i].type);
        cJSON_AddStringToObject(o, "reason", "not a regular file where one was expected: not read");
        cJSON_AddItemToArray(list, o);
    }
    sc_redact_json(list);
}

int sc_snapshot_write(const cJSON *json, const char *path, sc_error *err)
{
    char *text = cJSON_Print(json);
    size_t len = text ? strlen(text) : 0;
    char *with_nl = text ? realloc(text, len + 2) : NULL;
    if (!with_nl) {
        free(text);
        return sc_error_set(err, -ENOMEM, "cannot serialise the snapshot");
    }
    with_nl[len] = '\n';
    int rc = sc_output_write(path, with_nl, len + 1, err);
    free(with_nl);
    return rc;
}

/* Opens the file that the O_PATH descriptor pfd (of path) names for reading; a FIFO waits for
 * its writer, anything else is opened without waiting and then read blocking. */
static int reopen_input(int pfd, const char *path, bool fifo)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
    int flags = O_RDONLY | O_NOCTTY | O_CLOEXEC | (fifo ? 0 : O_NONBLOCK);
    int fd = open(proc, flags);
    if (fd < 0 && errno == ENOENT) /* no /proc */
        fd = open(path, flags);
    if (fd < 0)
        return -errno;
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    return fd;
}

/* Opens a JSON input the user named. A regular file is read as it is; a pipe, FIFO or character
 * device (/dev/stdin, <(...)) as a stream, like "-", within the same bound. The path is looked up
 * without opening it (O_PATH), so a directory or socket is refused before anything waits; a FIFO
 * is then opened to wait for its writer, as cat(1) does. Returns an fd or -errno. */
static int open_input(const char *path)
{
    if (strcmp(path, "-") == 0) { /* standard input as it is: its flags are not ours */
        int fd = dup(0);
        return fd < 0 ? -errno : fd;
    }
    int pfd = open(path, O_PATH | O_CLOEXEC);
    if (pfd < 0)
        return -errno;
    struct stat st;
    int fd = fstat(pfd, &st) < 0   ? -errno
             : S_ISDIR(st.st_mode) ? -EISDIR
             : S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)
                 ? reopen_input(pfd, path, S_ISFIFO(st.st_mode))
                 : -SC_ENOTREG;
    close(pfd);
    return fd;
}

/* True when text ends inside a string or with an object or array still open: a file cut short
 * (a node that died while writing without the atomic writer, a copy cut off), said apart from
 * one that is wrong all through. */
static bool ends_open(const char *text, size_t n)
{
    long depth = 0;
    bool in_string = false, escaped = false;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (in_string) {
            in_string = escaped || c != '"';
            escaped = !escaped && c == '\\';
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return n > 0 && (in_string || depth > 0);
}

/* Reads fd (sized by hint) to its end within max_bytes and parses it; path names it in err. */
static cJSON *parse_fd(int fd, const char *path, size_t hint, size_t max_bytes, sc_error *err)
{
    char *text = NULL;
    long n = sc_read_fd(fd, hint, max_bytes + 1, &text);
    close(fd);
    cJSON *json = NULL;
    if (n > (long)max_bytes)
        sc_error_set(err, -EFBIG, "%s is larger than %zu bytes", path, max_bytes);
    else if (n < 0)
        sc_error_set(err, (int)n, "cannot read %s: %s", path, sc_root_strerror((int)n));
    else if (!(json = cJSON_ParseWithLength(text, (size_t)n)) && ends_open(text, (size_t)n))
        sc_error_set(err, -EINVAL, "%s is not valid JSON: it ends early (truncated)", path);
    else if (!json)
        sc_error_set(err, -EINVAL, "%s is not valid JSON (near byte %td)", path,
                     cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : (ptrdiff_t)0);
    free(text);
    return json;
}

cJSON *sc_json_read_file(const char *path, size_t max_bytes, sc_error *err)
{
    int fd = open_input(path);
    if (fd < 0) {
        sc_error_set(err, fd, "cannot open %s: %s", path, sc_root_strerror(fd));
        return NULL;
    }
    return parse_fd(fd, path, 0, max_bytes, err);
}

cJSON *sc_json_read_regular(const char *path, size_t max_bytes, sc_error *err)
{
    struct stat st;
    int fd = sc_open_regular(path, &st);
    if (fd < 0) {
        sc_error_set(err, fd, "cannot open %s: %s", path, sc_root_strerror(fd));
        return NULL;
    }
    return parse_fd(fd, path, (size_t)st.st_size + 1, max_bytes, err); /* +1: sees the end */
}
