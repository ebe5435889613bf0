/* The roles above the runtime: the collective library torch loaded (or its files need), whichever
 * backend it belongs to, and the torch build (hip, cuda, a device plug-in such as torch_npu, or
 * cpu) with its version and the devices torch sees. */
#include <stdio.h>
#include <string.h>

#include "sc_diff_roles.h"

const sc_diff_library_list sc_diff_library_lists[] = {
    {"framework.torch", "torch.mapped_libraries[]"}, /* what torch loaded */
    {"libraries.torch", "files[].libraries[]"},      /* what torch's files need */
    {NULL, NULL},
};

const char *const sc_diff_torch_versions[] = {"torch/version", "metadata.torch.version", NULL};

typedef struct {
    sc_diff_role *out;
    int found;
} collective_job;

/* A library named "<stem>.so..." of a backend's collective library stem. */
static const sc_backend_desc *collective_backend(const char *name)
{
    for (size_t i = 0; name && sc_backends[i]; i++) {
        const char *stem = sc_backends[i]->collective_library;
        size_t n = stem ? strlen(stem) : 0;
        if (n && strncmp(name, stem, n) == 0 && name[n] == '.')
            return sc_backends[i];
    }
    return NULL;
}

static void collective_item(const cJSON *lib, void *arg)
{
    collective_job *job = arg;
    const char *name = cJSON_GetStringValue(sc_diff_get(lib, "name"));
    const sc_backend_desc *b = collective_backend(name);
    if (!b)
        return;
    job->found++;
    sc_diff_role_add(job->out, b->name, name, NULL, cJSON_GetStringValue(sc_diff_get(lib, "root")));
}

static void collective_of(sc_diff_side *side, cJSON *p, bool *oom)
{
    sc_diff_role role;
    collective_job job = {&role, 0};
    sc_diff_role_init(&role, cJSON_AddArrayToObject(p, "collective"), oom);
    for (const sc_diff_library_list *l = sc_diff_library_lists; l->probe && !job.found; l++)
        sc_diff_path_each(sc_diff_probe_facts(side, l->probe), l->list, collective_item, &job);
    sc_diff_role_done(&role, p, "collective");
}

/* The backend torch was built for: a version field (torch.version.hip) or a device plug-in
 * (torch_npu); *build and *version name it. */
static const sc_backend_desc *torch_backend(const cJSON *facts, const char **build,
                                            const char **version)
{
    char path[160];
    for (size_t i = 0; sc_backends[i]; i++) {
        const sc_backend_desc *b = sc_backends[i];
        if (b->torch_build) {
            snprintf(path, sizeof path, "torch.%s", b->torch_build);
            *build = b->torch_build;
        } else if (b->torch_plugin) {
            snprintf(path, sizeof path, "torch.plugins.%s.version", b->torch_plugin);
            *build = b->torch_plugin;
        } else {
            continue;
        }
        *version = cJSON_GetStringValue(sc_diff_path(facts, path));
        if (*version)
            return b;
    }
    *build = *version = NULL;
    return NULL;
}

static cJSON *torch_of(sc_diff_side *side)
{
    const cJSON *facts = sc_diff_probe_facts(side, "framework.torch");
    const char *version = NULL, *build, *build_version;
    char buf[64], path[160];
    for (const char *const *v = sc_diff_torch_versions; *v && !version; v++)
        version = sc_diff_first_text(facts, *v, buf, sizeof buf);
    if (!version)
        return cJSON_CreateNull();
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "version", version);
    const sc_backend_desc *b = torch_backend(facts, &build, &build_version);
    bool imported = cJSON_IsObject(sc_diff_path(facts, "torch"));
    sc_diff_add_text(t, "build", build ? build : imported ? "cpu" : NULL);
    sc_diff_add_text(t, "build_version", build_version);
    snprintf(path, sizeof path, "torch.%s",
             b && b->torch_device_count ? b->torch_device_count : "device_count");
    const cJSON *count = sc_diff_path(facts, path);
    cJSON_AddItemToObject(t, "device_count",
                          cJSON_IsNumber(count) ? cJSON_CreateNumber(count->valuedouble)
                                                : cJSON_CreateNull());
    return t;
}

void sc_diff_torch_roles(sc_diff_side *side, cJSON *p, bool *oom)
{
    collective_of(side, p, oom);
    cJSON_AddItemToObject(p, "torch", torch_of(side));
}
