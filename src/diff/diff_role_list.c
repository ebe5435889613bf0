/* A role's entries as a platform lists them: distinct (by a key of their values), in the order
 * found, at most SC_DIFF_ROLE_MAX and the rest counted; and the reads every role makes (a probe's
 * facts, the first scalar at a path as text). */
#include <stdio.h>

#include "sc_diff_roles.h"

const cJSON *sc_diff_probe_facts(sc_diff_side *side, const char *probe)
{
    return sc_diff_get(sc_diff_side_probe(side, probe), "facts");
}

typedef struct {
    char *buf;
    size_t size;
    const char *text;
} first_text_job;

static void take_first(const cJSON *v, void *arg)
{
    first_text_job *job = arg;
    if (!job->text)
        job->text = sc_diff_scalar_text(v, job->buf, job->size);
}

const char *sc_diff_first_text(const cJSON *obj, const char *path, char *buf, size_t size)
{
    first_text_job job = {buf, size, NULL};
    if (path)
        sc_diff_path_each(obj, path, take_first, &job);
    return job.text;
}

void sc_diff_role_init(sc_diff_role *r, cJSON *list, bool *oom)
{
    r->list = list;
    r->count = 0;
    r->more = 0;
    sc_diff_index_init(&r->seen, oom);
}

cJSON *sc_diff_role_entry(sc_diff_role *r, const char *key, bool *is_new)
{
    cJSON *e = (cJSON *)sc_diff_index_find(&r->seen, key, NULL);
    *is_new = false;
    if (e || !r->list)
        return e;
    if (r->count >= SC_DIFF_ROLE_MAX) {
        r->more++;
        return NULL;
    }
    e = cJSON_CreateObject();
    if (!e)
        return NULL;
    cJSON_AddItemToArray(r->list, e);
    sc_diff_index_add_copy(&r->seen, key, e);
    r->count++;
    *is_new = true;
    return e;
}

void sc_diff_role_done(sc_diff_role *r, cJSON *platform, const char *role)
{
    char key[64];
    if (r->more) {
        snprintf(key, sizeof key, "%s_more", role);
        cJSON_AddNumberToObject(platform, key, r->more);
    }
    sc_diff_index_free(&r->seen);
}

void sc_diff_add_text(cJSON *o, const char *key, const char *text)
{
    cJSON_AddItemToObject(o, key, text ? cJSON_CreateString(text) : cJSON_CreateNull());
}

/* Adds {backend, name, version, where} once. */
void sc_diff_role_add(sc_diff_role *r, const char *backend, const char *name, const char *version,
                      const char *where)
{
    char key[1024];
    bool is_new;
    snprintf(key, sizeof key, "%s\x1f%.250s\x1f%.250s\x1f%.250s", backend, name ? name : "",
             version ? version : "", where ? where : "");
    cJSON *e = sc_diff_role_entry(r, key, &is_new);
    if (!is_new)
        return;
    cJSON_AddStringToObject(e, "backend", backend);
    sc_diff_add_text(e, "name", name);
    sc_diff_add_text(e, "version", version);
    sc_diff_add_text(e, "where", where);
}
