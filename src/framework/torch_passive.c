/* The passive part of framework.torch: which interpreter, its site directories and torch's version
 * from its metadata. It runs in the runner's process, so it survives an import that crashes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sc_torch.h"

static const char *const plugins[] = {"torch_npu", "intel_extension_for_pytorch", "torch_mlu",
                                      "torch_musa"};

static void add_python_facts(cJSON *facts, const sc_python_info *info)
{
    cJSON *py = cJSON_AddObjectToObject(facts, "python");
    if (!py)
        return;
    cJSON_AddStringToObject(py, "mode", info->libpython[0] ? "embedded" : "subprocess");
    cJSON_AddStringToObject(py, "executable", info->executable);
    cJSON_AddStringToObject(py, "version", info->version);
    cJSON_AddStringToObject(py, "prefix", info->prefix);
    cJSON_AddStringToObject(py, "base_prefix", info->base_prefix);
    cJSON_AddStringToObject(py, "located", info->located[0] ? info->located : "ran");
    if (info->version_from[0])
        cJSON_AddStringToObject(py, "version_from", info->version_from);
    sc_fact_str(py, "libpython", info->libpython[0] ? info->libpython : NULL, info->no_libpython);
    cJSON *sites = cJSON_AddArrayToObject(py, "site_packages");
    for (int i = 0; sites && i < info->site_count; i++)
        cJSON_AddItemToArray(sites, cJSON_CreateString(info->site_packages[i]));
}

/* First installation of project along the import path, as {name, version, path}, or NULL. */
static cJSON *dist_of(const sc_ctx *ctx, const sc_python_info *info, const char *project)
{
    char version[128], path[PATH_MAX];
    for (int i = 0; i < info->site_count; i++) {
        if (sc_python_dist_version(ctx->root, info->site_packages[i], project, version,
                                   sizeof version, path, sizeof path) < 0)
            continue;
        cJSON *o = cJSON_CreateObject();
        if (o) {
            cJSON_AddStringToObject(o, "name", project);
            cJSON_AddStringToObject(o, "version", version);
            cJSON_AddStringToObject(o, "path", path);
        }
        return o;
    }
    return NULL;
}

static void add_metadata_facts(const sc_ctx *ctx, cJSON *facts, const sc_python_info *info)
{
    cJSON *meta = cJSON_AddObjectToObject(facts, "metadata");
    if (!meta)
        return;
    cJSON *torch = dist_of(ctx, info, "torch");
    if (torch)
        cJSON_AddItemToObject(meta, "torch", torch);
    else
        sc_fact_null(meta, "torch", "no torch metadata in %d site directories", info->site_count);
    cJSON *list = cJSON_AddArrayToObject(meta, "plugins");
    for (size_t i = 0; list && i < sizeof plugins / sizeof plugins[0]; i++) {
        cJSON *p = dist_of(ctx, info, plugins[i]);
        if (p)
            cJSON_AddItemToArray(list, p);
    }
}

/* The interpreter's facts from its files alone; false (why in static_error) when that needs
 * running it: a script wrapper such as pyenv's shim, or a layout with no static answer. */
static bool locate_static(const sc_ctx *ctx, sc_python_info *info, char *why, size_t size)
{
    sc_error err = {0};
    if (sc_python_locate_static(ctx->root, ctx->opt->python, info, &err) == 0)
        return true;
    snprintf(why, size, "%s", err.message);
    return false;
}

/* The passive part: the interpreter's facts and torch's metadata (offline: the installations
 * found in the root). The gated inventory (static_first) derives the interpreter from its files
 * when it can and runs it only when it cannot; the active path always asks the interpreter.
 * Returns info (caller frees) when the interpreter was found, else NULL with facts.python null
 * and err filled. */
sc_python_info *sc_torch_collect_passive(const sc_ctx *ctx, sc_result *res, bool static_first,
                                         sc_error *err)
{
    if (ctx->offline) {
        cJSON *found = cJSON_AddArrayToObject(res->facts, "installations");
        if (found)
            sc_python_find_elsewhere(ctx->root, "torch", NULL, found);
        sc_fact_null(res->facts, "python", "offline (--sysroot): the interpreter is not run");
        return NULL;
    }
    sc_python_info *info = malloc(sizeof *info);
    if (!info) {
        sc_error_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    char why[512] = "";
    bool located = static_first && locate_static(ctx, info, why, sizeof why);
    if (!located && sc_python_locate(ctx->opt->python, ctx->opt->timeout_s, info, err) < 0) {
        sc_fact_null(res->facts, "python", "%s", err->message);
        free(info);
        return NULL;
    }
    add_python_facts(res->facts, info);
    if (why[0])
        cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(res->facts, "python"),
                                "static_error", why);
    add_metadata_facts(ctx, res->facts, info);
    return info;
}
