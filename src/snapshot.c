/* The snapshot's header (schema, tool, created, argv, host, env), its atomic writer, and a bounded
 * JSON file reader for the commands that read snapshots back. */
#include "sc_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_host.h"
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
        cJSON_AddStringToObject(s, "sysroot", root->path);
    cJSON_AddItemToObject(s, "host", sc_host_collect(root));
    cJSON_AddItemToObject(s, "env", sc_env_capture(environ));
    return s;
}

static int write_all_fd(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int sc_snapshot_write(const cJSON *json, const char *path, sc_error *err)
{
    char *text = cJSON_Print(json);
    if (!text)
        return sc_error_set(err, -ENOMEM, "cannot serialise the snapshot");
    int rc = 0;
    if (strcmp(path, "-") == 0) {
        rc = write_all_fd(1, text, strlen(text));
        if (rc == 0)
            rc = write_all_fd(1, "\n", 1);
        free(text);
        return rc < 0 ? sc_error_set(err, rc, "cannot write to standard output: %s", strerror(-rc))
                      : 0;
    }
    char tmp[4096];
    if (!sc_fmt(tmp, sizeof tmp, "%s.tmp.XXXXXX", path)) {
        free(text);
        return sc_error_set(err, -ENAMETOOLONG, "path too long: %s", path);
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        rc = sc_error_set(err, -errno, "cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    fchmod(fd, 0644);
    rc = write_all_fd(fd, text, strlen(text));
    if (rc == 0)
        rc = write_all_fd(fd, "\n", 1);
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0) {
        unlink(tmp);
        sc_error_set(err, rc, "cannot write %s: %s", path, strerror(-rc));
    }
out:
    free(text);
    return rc;
}

cJSON *sc_json_read_file(const char *path, size_t max_bytes, sc_error *err)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        sc_error_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    sc_buf b;
    sc_buf_init(&b);
    char chunk[65536];
    size_t n;
    bool too_big = false;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.len + n > max_bytes) {
            too_big = true;
            break;
        }
        sc_buf_append(&b, chunk, n);
    }
    bool read_error = ferror(f);
    if (f != stdin)
        fclose(f);
    cJSON *json = NULL;
    if (too_big)
        sc_error_set(err, -EFBIG, "%s is larger than %zu bytes", path, max_bytes);
    else if (read_error || b.oom)
        sc_error_set(err, -EIO, "cannot read %s", path);
    else if (!(json = cJSON_ParseWithLength(b.data ? b.data : "", b.len)))
        sc_error_set(err, -EINVAL, "%s is not valid JSON (near byte %td)", path,
                     b.data && cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - b.data : (ptrdiff_t)0);
    sc_buf_free(&b);
    return json;
}
