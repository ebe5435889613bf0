/* runtime.hip's passive part as facts and findings: the installs, the /opt links, and the runtime
 * file the loader would pick. It runs offline too, so it only reads through the sysroot and never
 * loads a library. */
#include "sc_hip_run.h"

static void add_install_json(cJSON *arr, const sc_hip_install *in)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddStringToObject(o, "root", in->root);
    cJSON_AddStringToObject(o, "kind", sc_root_kind_name(in->kind));
    if (in->version[0])
        cJSON_AddStringToObject(o, "version", in->version);
    else
        sc_fact_null(o, "version", "%s", in->version_error);
    sc_fact_str(o, "hip_version", in->hip_version[0] ? in->hip_version : NULL,
                "no readable share/hip/version");
    cJSON *via = cJSON_AddArrayToObject(o, "via");
    for (int i = 0; i < in->via_count; i++)
        cJSON_AddItemToArray(via, cJSON_CreateString(in->via[i]));
    cJSON_AddItemToArray(arr, o);
}

static void installs_facts(sc_hip_run *r)
{
    cJSON *arr = cJSON_AddArrayToObject(r->res->facts, "installs");
    for (int i = 0; i < r->inv->install_count && arr; i++)
        add_install_json(arr, &r->inv->installs[i]);
    cJSON *links = cJSON_AddObjectToObject(r->res->facts, "links");
    for (int i = 0; i < r->inv->link_count && links; i++) {
        const sc_hip_link *l = &r->inv->links[i];
        if (l->target[0])
            cJSON_AddStringToObject(links, l->name, l->target);
        else
            sc_fact_null(links, l->name, "dangling link");
    }
}

/* hip.multiple-installs: two or more distinct ROCm or DTK roots. */
static void check_multiple_installs(sc_hip_run *r)
{
    sc_buf list;
    sc_buf_init(&list);
    int n = 0;
    for (int i = 0; i < r->inv->install_count; i++) {
        const sc_hip_install *in = &r->inv->installs[i];
        if (in->kind != SC_ROOT_ROCM && in->kind != SC_ROOT_DTK)
            continue;
        n++;
        sc_buf_printf(&list, "%s%s (%s %s)", list.len ? ", " : "", in->root,
                      sc_root_kind_name(in->kind),
                      in->version[0] ? in->version : "version unknown");
    }
    for (int i = 0; i < r->inv->link_count; i++)
        sc_buf_printf(&list, "; %s -> %s", r->inv->links[i].name,
                      r->inv->links[i].target[0] ? r->inv->links[i].target : "(dangling)");
    if (n >= 2)
        sc_finding(
            r->res, "hip.multiple-installs", SC_SEV_WARN,
            "make sure LD_LIBRARY_PATH, ROCM_PATH and the /opt/rocm or /opt/dtk link name the "
            "one install you mean (source that install's env.sh), or remove the others",
            "%d HIP installs: %s", n, list.data ? list.data : "");
    sc_buf_free(&list);
}

static void check_path_roots(sc_hip_run *r, const sc_hip_env *env)
{
    char roots[2048];
    if (sc_hip_path_roots(r->ctx->root, env->ld_library_path, roots, sizeof roots) >= 2)
        sc_finding(r->res, "hip.path-mixes-roots", SC_SEV_WARN,
                   "keep the lib directories of one ROCm/DTK install in LD_LIBRARY_PATH: start "
                   "from a clean shell and source only that install's env.sh",
                   "LD_LIBRARY_PATH names lib directories of different installs: %s", roots);
}

/* facts.runtime_library: what the loader would pick, and which install it belongs to. */
static void pick_facts(sc_hip_run *r, const sc_hip_env *env)
{
    sc_hip_inventory_pick(r->ctx->root, env->ld_library_path, r->inv);
    const sc_hip_pick *p = &r->inv->pick;
    if (!p->found) {
        sc_fact_null(r->res->facts, "runtime_library", "the loader would find no HIP runtime");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(r->res->facts, "runtime_library");
    if (!o)
        return;
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON_AddStringToObject(o, "path", p->path);
    cJSON_AddStringToObject(o, "realpath", p->realpath);
    cJSON_AddStringToObject(o, "found_via", p->found_via);
    cJSON_AddStringToObject(o, "root", p->root.path);
    cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(p->root.kind));
    const sc_hip_install *in = sc_hip_inventory_install_of(r->inv, p->realpath);
    sc_fact_str(o, "install_version", in && in->version[0] ? in->version : NULL,
                in ? in->version_error : "not inside a ROCm or DTK install");
}

void sc_hip_inventory_facts(sc_hip_run *r, const sc_hip_env *env)
{
    sc_hip_inventory_installs(r->ctx->root, env, r->inv);
    installs_facts(r);
    check_multiple_installs(r);
    check_path_roots(r, env);
    pick_facts(r, env);
}

/* The search is a prediction; a live load by name that found what it did not wins. */
void sc_hip_report_not_found(sc_hip_run *r, bool loaded_by_name)
{
    if (r->inv->pick.found || loaded_by_name)
        return;
    sc_finding(r->res, "hip.runtime-not-found", SC_SEV_WARN,
               "install ROCm or DTK, or add its lib directory to LD_LIBRARY_PATH (source the "
               "install's env.sh)",
               "no %s or %s in LD_LIBRARY_PATH, the ld.so.cache (the ld.so.conf directories "
               "in a root without one) or the default directories (%d installs seen)",
               "libamdhip64.so*", "libgalaxyhip.so*", r->inv->install_count);
}
