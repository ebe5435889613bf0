/* Reads a capture's manifest into the replay tables. A manifest comes with a tarball from anywhere:
 * every field is checked and a wrong one refuses the whole capture, each table is bounded, a
 * placeholder must be an empty regular file inside the root, and of the captured environment only
 * the variables a capture records are set (never LD_PRELOAD or LD_AUDIT). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sc_redact.h"
#include "sc_sysroot_capture.h"
#include "sc_util.h"
#include "sysroot_replay_internal.h"

static const struct {
    const char *name;
    char op;
} calls[] = {{"read", SC_REC_READ},
             {"lookup", SC_REC_LOOKUP},
             {"lstat", SC_REC_LSTAT},
             {"list", SC_REC_LIST}};

static const struct {
    const char *name;
    mode_t type;
} node_types[] = {{"character device", S_IFCHR},
                  {"block device", S_IFBLK},
                  {"FIFO", S_IFIFO},
                  {"socket", S_IFSOCK}};

static const char *str_at(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s && s[0] && strlen(s) < PATH_MAX ? s : NULL;
}

/* A whole number of o.key within [0, max] into *out; false when it is not one. */
static bool num_at(const cJSON *o, const char *key, double max, double *out)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble > max ||
        n->valuedouble != (double)(long long)n->valuedouble)
        return false;
    *out = n->valuedouble;
    return true;
}

static int bad(sc_error *err, const char *what, int index)
{
    return sc_error_set(err, -EINVAL, "the capture's manifest: %s (entry %d)", what, index);
}

/* Finds the placeholder of path (not following a last symlink): an empty regular file. */
static bool placeholder_at(const sc_root *root, const char *path, sc_replay_placeholder *p)
{
    int fd = sc_root_walk(root, path, O_PATH, false, NULL, NULL);
    struct stat st;
    bool ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
    if (fd >= 0)
        close(fd);
    if (ok) {
        p->dev = st.st_dev;
        p->ino = st.st_ino;
    }
    return ok;
}

static int add_placeholder(struct sc_replay *r, const sc_replay_placeholder *p)
{
    if (r->count % 256 == 0) {
        sc_replay_placeholder *grown = realloc(r->items, (r->count + 256) * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        r->items = grown;
    }
    r->items[r->count++] = *p;
    return 0;
}

static mode_t node_type(const char *name)
{
    for (size_t i = 0; name && i < sizeof node_types / sizeof node_types[0]; i++)
        if (strcmp(name, node_types[i].name) == 0)
            return node_types[i].type;
    return 0;
}

/* One entry of "nodes" into p: false when a field is wrong. */
static bool node_fields(const cJSON *o, sc_replay_placeholder *p)
{
    double major, minor, uid, gid;
    const char *mode = str_at(o, "mode");
    char *end = NULL;
    unsigned long perm = mode ? strtoul(mode, &end, 8) : 0;
    mode_t type = node_type(str_at(o, "type"));
    if (!type || !mode || *end || perm > 07777 || !num_at(o, "major", 4095, &major) ||
        !num_at(o, "minor", 1048575, &minor) || !num_at(o, "uid", 4294967294.0, &uid) ||
        !num_at(o, "gid", 4294967294.0, &gid))
        return false;
    p->mode = type | (mode_t)perm;
    p->rdev = makedev((unsigned)major, (unsigned)minor);
    p->uid = (uid_t)uid;
    p->gid = (gid_t)gid;
    return true;
}

static int parse_nodes(sc_root *root, struct sc_replay *r, const cJSON *arr, sc_error *err)
{
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach (o, arr) {
        sc_replay_placeholder p = {0};
        const char *path = str_at(o, "path");
        if (i >= SC_CAPTURE_TABLE_MAX || !path || !node_fields(o, &p))
            return bad(err, "a node without path, type, major, minor, mode, uid and gid", i);
        if (placeholder_at(root, path, &p) && add_placeholder(r, &p) < 0)
            return sc_error_set(err, -ENOMEM, "out of memory");
        i++;
    }
    return 0;
}

static int parse_omitted(sc_root *root, struct sc_replay *r, const cJSON *arr, sc_error *err)
{
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach (o, arr) {
        sc_replay_placeholder p = {0};
        double size;
        const char *path = str_at(o, "path"), *reason = str_at(o, "reason");
        if (i >= SC_CAPTURE_TABLE_MAX || !path || !reason || !num_at(o, "size", 9e15, &size))
            return bad(err, "an omitted file without path, size and reason", i);
        p.size = (off_t)size;
        if (placeholder_at(root, path, &p)) {
            p.reason = strdup(reason);
            if (!p.reason || add_placeholder(r, &p) < 0) {
                free(p.reason);
                return sc_error_set(err, -ENOMEM, "out of memory");
            }
        }
        i++;
    }
    return 0;
}

static int add_answer(struct sc_replay *r, char op, const char *path, int mode, int code)
{
    if (r->answer_count % 256 == 0) {
        sc_replay_answer *grown = realloc(r->answers, (r->answer_count + 256) * sizeof *grown);
        if (!grown)
            return -ENOMEM;
        r->answers = grown;
    }
    char *copy = strdup(path);
    if (!copy)
        return -ENOMEM;
    r->answers[r->answer_count++] = (sc_replay_answer){op, mode, code, copy};
    return 0;
}

static char call_op(const char *name)
{
    for (size_t i = 0; name && i < sizeof calls / sizeof calls[0]; i++)
        if (strcmp(name, calls[i].name) == 0)
            return calls[i].op;
    return 0;
}

static int parse_errors(struct sc_replay *r, const cJSON *arr, sc_error *err)
{
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach (o, arr) {
        const char *path = str_at(o, "path");
        char op = call_op(str_at(o, "call"));
        int code = sc_errno_parse(str_at(o, "error"));
        if (i >= SC_CAPTURE_TABLE_MAX || !path || !op || !code)
            return bad(err, "an error without call, path and error", i);
        if (add_answer(r, op, path, 0, -code) < 0)
            return sc_error_set(err, -ENOMEM, "out of memory");
        i++;
    }
    return 0;
}

static int parse_access(struct sc_replay *r, const cJSON *arr, sc_error *err)
{
    int i = 0;
    const cJSON *o;
    cJSON_ArrayForEach (o, arr) {
        double mode;
        const char *path = str_at(o, "path"), *result = str_at(o, "result");
        int code = result && strcmp(result, "ok") == 0 ? 0 : -sc_errno_parse(result);
        if (i >= SC_CAPTURE_TABLE_MAX || !path || !result || !num_at(o, "mode", 7, &mode) ||
            (code == 0 && strcmp(result, "ok") != 0))
            return bad(err, "an access answer without path, mode and result", i);
        if (add_answer(r, SC_REC_ACCESS, path, (int)mode, code) < 0)
            return sc_error_set(err, -ENOMEM, "out of memory");
        i++;
    }
    return 0;
}

static int parse_env(struct sc_replay *r, const cJSON *env, sc_error *err)
{
    const cJSON *v;
    cJSON_ArrayForEach (v, env) {
        if (!cJSON_IsString(v) || !v->string || !sc_env_replayed(v->string))
            return bad(err, "an environment variable a capture does not record", 0);
    }
    r->env = cJSON_Duplicate(env, 1);
    return r->env ? 0 : sc_error_set(err, -ENOMEM, "out of memory");
}

/* The tables of the manifest m; 0 or -errno with err filled. */
static int parse_tables(sc_root *root, struct sc_replay *r, const cJSON *m, sc_error *err)
{
    const char *format = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "format"));
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "root"));
    if (!format || strcmp(format, SC_CAPTURE_FORMAT) != 0)
        return sc_error_set(err, -EINVAL, "the capture's manifest is not %s", SC_CAPTURE_FORMAT);
    if (!kind || (strcmp(kind, "live") != 0 && strcmp(kind, "sysroot") != 0))
        return sc_error_set(err, -EINVAL, "the capture's manifest: root is not live or sysroot");
    r->live = strcmp(kind, "live") == 0;
    static const char *const arrays[] = {"nodes", "omitted", "errors", "access"};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m, arrays[i])))
            return sc_error_set(err, -EINVAL, "the capture's manifest: %s is not a list",
                                arrays[i]);
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(m, "env");
    if (!cJSON_IsObject(env))
        return sc_error_set(err, -EINVAL, "the capture's manifest: env is not an object");
    int rc = parse_nodes(root, r, cJSON_GetObjectItemCaseSensitive(m, "nodes"), err);
    if (rc == 0)
        rc = parse_omitted(root, r, cJSON_GetObjectItemCaseSensitive(m, "omitted"), err);
    if (rc == 0)
        rc = parse_errors(r, cJSON_GetObjectItemCaseSensitive(m, "errors"), err);
    if (rc == 0)
        rc = parse_access(r, cJSON_GetObjectItemCaseSensitive(m, "access"), err);
    return rc == 0 ? parse_env(r, env, err) : rc;
}

/* Sorted once, so every lookup is a bisection. */
static void sort_tables(struct sc_replay *r)
{
    if (r->count)
        qsort(r->items, r->count, sizeof *r->items, sc_replay_cmp_placeholder);
    if (r->answer_count)
        qsort(r->answers, r->answer_count, sizeof *r->answers, sc_replay_cmp_answer);
}

int sc_replay_parse(sc_root *root, const char *text, size_t len, sc_error *err)
{
    cJSON *m = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(m)) {
        cJSON_Delete(m);
        return sc_error_set(err, -EINVAL, "the capture's manifest is not a JSON object");
    }
    struct sc_replay *r = calloc(1, sizeof *r);
    int rc = r ? 0 : sc_error_set(err, -ENOMEM, "out of memory");
    sc_replay_free(root);
    root->replay = r;
    if (rc == 0)
        rc = parse_tables(root, r, m, err);
    cJSON_Delete(m);
    if (rc < 0)
        sc_replay_free(root);
    else
        sort_tables(r);
    return rc;
}

/* Sets the captured environment: what this process has of the recorded variables goes first. */
static void apply_env(const cJSON *env)
{
    extern char **environ;
    char *names[1024];
    size_t n = 0;
    for (char **e = environ; e && *e && n < sizeof names / sizeof names[0]; e++) {
        const char *eq = strchr(*e, '=');
        char *name = eq ? strndup(*e, (size_t)(eq - *e)) : NULL;
        if (name && sc_env_settable(name))
            names[n++] = name;
        else
            free(name);
    }
    for (size_t i = 0; i < n; i++) {
        unsetenv(names[i]);
        free(names[i]);
    }
    const cJSON *v;
    cJSON_ArrayForEach (v, env)
        if (sc_env_settable(v->string))
            setenv(v->string, v->valuestring, 1);
}

int sc_replay_load(sc_root *root, sc_error *err)
{
    char *text = NULL;
    long n = sc_root_read(root, SC_CAPTURE_MANIFEST, &text, SC_CAPTURE_MANIFEST_MAX + 1);
    if (n == -ENOENT)
        return 0;
    if (n < 0)
        return sc_error_set(err, (int)n, "cannot read the capture's manifest: %s",
                            sc_root_strerror((int)n));
    int rc = (size_t)n > SC_CAPTURE_MANIFEST_MAX
                 ? sc_error_set(err, -EFBIG, "the capture's manifest is over %u MiB",
                                SC_CAPTURE_MANIFEST_MAX >> 20)
                 : sc_replay_parse(root, text, (size_t)n, err);
    free(text);
    if (rc == 0)
        apply_env(root->replay->env);
    return rc;
}
