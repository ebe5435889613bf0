/* Reads the import child's answer into the framework.torch facts and dispatches it to the checks:
 * the child reports, this process judges. */
#include <string.h>

#include "sc_roots.h"
#include "sc_torch.h"

/* Adds root and root_kind (the install each file belongs to) to every library object. */
static void classify_libraries(const sc_root *root, cJSON *libs)
{
    sc_roots *roots = sc_roots_new(root);
    cJSON *l;
    cJSON_ArrayForEach (l, libs) {
        const char *real = sc_json_str(l, "realpath");
        if (!real)
            continue;
        sc_install_root ir;
        sc_roots_of(roots, real, &ir);
        cJSON_AddStringToObject(l, "root", ir.path);
        cJSON_AddStringToObject(l, "root_kind", sc_root_kind_name(ir.kind));
    }
    sc_roots_free(roots);
}

static bool is_not_installed(const cJSON *err, const char *module)
{
    const char *type = sc_json_str(err, "type"), *name = sc_json_str(err, "name");
    return type && strcmp(type, "ModuleNotFoundError") == 0 && name && strcmp(name, module) == 0;
}

static void check_imports(const sc_ctx *ctx, sc_result *res, cJSON *imports)
{
    cJSON *m;
    cJSON_ArrayForEach (m, imports) {
        classify_libraries(ctx->root, cJSON_GetObjectItemCaseSensitive(m, "native_libraries"));
        cJSON *err = cJSON_GetObjectItemCaseSensitive(m, "error");
        if (err)
            sc_torch_report_import_failed(
                ctx, res, err, sc_json_str(m, "module") ? sc_json_str(m, "module") : "?");
    }
}

static void record_mode(sc_result *res, const cJSON *child)
{
    cJSON *py = cJSON_GetObjectItemCaseSensitive(res->facts, "python");
    const char *mode = sc_json_str(child, "mode");
    if (!py || !mode)
        return;
    cJSON_ReplaceItemInObjectCaseSensitive(py, "mode", cJSON_CreateString(mode));
    if (sc_json_str(child, "embed_error"))
        cJSON_AddStringToObject(py, "embed_error", sc_json_str(child, "embed_error"));
}

/* Moves key from the child's result into the facts (NULL when absent). */
static cJSON *take(cJSON *result, sc_result *res, const char *key)
{
    cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(result, key);
    if (item)
        cJSON_AddItemToObject(res->facts, key, item);
    return item;
}

void sc_torch_check_result(const sc_ctx *ctx, sc_result *res, const sc_python_info *info,
                           cJSON *child)
{
    cJSON *result = cJSON_GetObjectItemCaseSensitive(child, "result");
    record_mode(res, child);
    if (!result || sc_json_member(result, "probe_error")) {
        const cJSON *pe = sc_json_member(result, "probe_error");
        sc_result_error(res, "the probe code failed in %s: %s", info->executable,
                        pe ? sc_json_str(pe, "message") : sc_json_str(child, "error"));
        return;
    }
    cJSON *torch = take(result, res, "torch"), *err = take(result, res, "import_error");
    cJSON *libs = cJSON_DetachItemFromObjectCaseSensitive(result, "mapped_libraries");
    classify_libraries(ctx->root, libs);
    if (torch && libs)
        cJSON_AddItemToObject(torch, "mapped_libraries", libs);
    else if (libs)
        cJSON_AddItemToObject(res->facts, "mapped_libraries", libs);
    take(result, res, "import_ms");
    if (err && is_not_installed(err, "torch"))
        sc_torch_report_not_installed(ctx, res, info);
    else if (err)
        sc_torch_report_import_failed(ctx, res, err, "torch");
    if (torch)
        sc_torch_check_build(ctx, res, torch);
    sc_torch_check_round_trip(res, take(result, res, "round_trip"));
    check_imports(ctx, res, take(result, res, "imports"));
}
