/* Fact paths that step into lists: "installs[].version" reads the version of every install. The
 * platforms table reads each backend's facts this way; the walk has a budget of steps, so a
 * snapshot with lists in lists costs no more than SC_DIFF_VISIT_MAX steps a path. */
#include <stdio.h>
#include <string.h>

#include "sc_diff.h"

#define KEY_MAX 128

typedef struct {
    void (*fn)(const cJSON *value, void *arg);
    void *arg;
    size_t steps_left, reached;
} path_walk;

static void walk(path_walk *w, const cJSON *obj, const char *path)
{
    const char *list = strstr(path, "[]");
    if (w->steps_left == 0)
        return;
    w->steps_left--;
    if (!list) {
        const cJSON *v = *path ? sc_diff_path(obj, path) : obj;
        if (v) {
            w->reached++;
            w->fn(v, w->arg);
        }
        return;
    }
    char head[KEY_MAX];
    size_t n = (size_t)(list - path);
    if (n >= sizeof head)
        return;
    memcpy(head, path, n);
    head[n] = '\0';
    const cJSON *items = n ? sc_diff_path(obj, head) : obj, *item;
    const char *rest = list + 2 + (list[2] == '.' || list[2] == '/');
    int i = 0;
    if (!cJSON_IsArray(items))
        return;
    cJSON_ArrayForEach (item, items) {
        if (i++ >= SC_DIFF_LIST_MAX || w->steps_left == 0)
            break;
        walk(w, item, rest);
    }
}

size_t sc_diff_path_each(const cJSON *obj, const char *path,
                         void (*fn)(const cJSON *value, void *arg), void *arg)
{
    path_walk w = {fn, arg, SC_DIFF_VISIT_MAX, 0};
    if (obj && path)
        walk(&w, obj, path);
    return w.reached;
}

const char *sc_diff_scalar_text(const cJSON *v, char *buf, size_t size)
{
    if (cJSON_IsString(v))
        return v->valuestring;
    if (cJSON_IsNumber(v))
        snprintf(buf, size, "%.15g", v->valuedouble);
    else if (cJSON_IsBool(v))
        snprintf(buf, size, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else
        return NULL;
    return buf;
}
