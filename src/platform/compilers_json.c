/* The compilers as facts, and the runtime layer's check of them: a compiler from another install
 * than the runtime library the loader picks builds code that fails to load (undefined symbols) or
 * lacks code for the device. The hint names the script that sets up one install. */
#include <stdio.h>
#include <string.h>

#include "sc_compilers.h"
#include "sc_util.h"

static cJSON *compiler_json(const sc_compiler *c)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddStringToObject(o, "path", c->path);
    cJSON_AddStringToObject(o, "realpath", c->realpath);
    cJSON *via = cJSON_AddArrayToObject(o, "via");
    for (int i = 0; via && i < c->via_count; i++)
        cJSON_AddItemToArray(via, cJSON_CreateString(c->via[i]));
    cJSON_AddBoolToObject(o, "first_on_path", c->first_on_path);
    cJSON_AddBoolToObject(o, "for_extensions", c->for_extensions);
    cJSON_AddStringToObject(o, "root", c->root.path);
    cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(c->root.kind));
    sc_fact_str(o, "install_version", c->install_version[0] ? c->install_version : NULL,
                "the install has no version file this probe reads");
    if (c->version[0]) {
        cJSON_AddStringToObject(o, "version", c->version);
        cJSON_AddStringToObject(o, "version_from", c->version_from);
    } else {
        sc_fact_null(o, "version", "%s", c->version_error[0] ? c->version_error : "unknown");
        cJSON_AddNullToObject(o, "version_from");
    }
    sc_fact_str(o, "env_script", c->env_script[0] ? c->env_script : NULL,
                "none of the backend's env scripts is in its install root");
    return o;
}

void sc_compilers_facts(cJSON *facts, const sc_compilers *cs)
{
    cJSON *arr = cJSON_AddArrayToObject(facts, "compilers");
    for (int i = 0; arr && i < cs->count; i++) {
        cJSON *o = compiler_json(&cs->items[i]);
        if (o)
            cJSON_AddItemToArray(arr, o);
    }
}

/* The hint: source the runtime's install's script, else put its bin first on PATH. */
static void hint_for(const sc_root *root, const sc_backend_desc *desc, const sc_compiler *c,
                     const sc_loader_pick *runtime, char *buf, size_t size)
{
    char script[PATH_MAX];
    const char *home = desc->compiler_homes ? desc->compiler_homes[0] : NULL;
    const char *effect = "so that the compiler and the runtime come from one install; code built "
                         "with a compiler of another install fails to load (undefined symbols) or "
                         "has no code for the device";
    if (sc_compiler_env_script(root, desc, runtime->root.path, script, sizeof script))
        sc_fmt(buf, size, "source %s (the runtime's install) in a clean shell, %s", script, effect);
    else if (c->env_script[0])
        sc_fmt(buf, size,
               "put %s/bin first on PATH%s%s%s, or source %s and use that install's runtime "
               "too, %s",
               runtime->root.path, home ? " and set " : "", home ? home : "",
               home ? "=<that root>" : "", c->env_script, effect);
    else
        sc_fmt(buf, size, "put %s/bin first on PATH%s%s%s, %s", runtime->root.path,
               home ? " and set " : "", home ? home : "", home ? "=<that root>" : "", effect);
}

/* The paths and versions of cs's compilers in root dir, into list; returns how many. */
static int names_in(const sc_compilers *cs, const char *dir, sc_buf *list)
{
    int n = 0;
    for (int i = 0; i < cs->count; i++) {
        const sc_compiler *c = &cs->items[i];
        if (strcmp(c->root.path, dir) != 0)
            continue;
        n++;
        sc_buf_printf(list, "%s%s%s%s%s", list->len ? ", " : "", c->path, c->version[0] ? " (" : "",
                      c->version, c->version[0] ? ")" : "");
    }
    return n;
}

static bool compared(const sc_install_root *r)
{
    return r->kind != SC_ROOT_OTHER;
}

void sc_compilers_check_runtime(sc_result *res, const sc_root *root, const sc_backend_desc *desc,
                                const sc_compilers *cs, const sc_loader_pick *runtime,
                                const char *runtime_version, const char *finding_id)
{
    if (!runtime || !runtime->found || !compared(&runtime->root))
        return;
    for (int i = 0; i < cs->count; i++) {
        const sc_compiler *c = &cs->items[i];
        bool seen = false;
        for (int k = 0; k < i; k++)
            seen = seen || strcmp(cs->items[k].root.path, c->root.path) == 0;
        if (seen || !compared(&c->root) || strcmp(c->root.path, runtime->root.path) == 0)
            continue;
        sc_buf list;
        char hint[2 * PATH_MAX + 512];
        sc_buf_init(&list);
        int n = names_in(cs, c->root.path, &list);
        hint_for(root, desc, c, runtime, hint, sizeof hint);
        sc_finding(
            res, finding_id, SC_SEV_WARN, hint,
            "%s belong%s to %s (%s%s%s) but the loader takes the runtime %s from %s (%s%s%s: "
            "%s)",
            list.data ? list.data : c->path, n == 1 ? "s" : "", c->root.path,
            sc_root_kind_name(c->root.kind), c->install_version[0] ? " " : "", c->install_version,
            runtime->name, runtime->root.path, sc_root_kind_name(runtime->root.kind),
            runtime_version ? " " : "", runtime_version ? runtime_version : "", runtime->realpath);
        sc_buf_free(&list);
    }
}
