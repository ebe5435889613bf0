/* runtime.cuda's passive part as facts and findings: the installed toolkits, where /usr/local/cuda
 * points, and the libcuda.so.1 the loader would pick. It runs offline too, so it only reads through
 * the sysroot and never loads a library. */
#include <string.h>

#include "sc_cuda_run.h"

static void toolkit_json(cJSON *arr, const sc_cuda_toolkit *tk)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return;
    cJSON_AddStringToObject(o, "root", tk->root);
    sc_fact_str(o, "version", tk->version[0] ? tk->version : NULL, tk->version_error);
    cJSON *via = cJSON_AddArrayToObject(o, "via");
    for (int k = 0; k < tk->via_count && via; k++)
        cJSON_AddItemToArray(via, cJSON_CreateString(tk->via[k]));
    cJSON_AddItemToArray(arr, o);
}

static void toolkit_facts(sc_cuda_run *r)
{
    cJSON *arr = cJSON_AddArrayToObject(r->res->facts, "toolkits");
    for (int i = 0; i < r->inv->count && arr; i++)
        toolkit_json(arr, &r->inv->toolkits[i]);
    if (!r->inv->link_present)
        sc_fact_null(r->res->facts, "cuda_link", "/usr/local/cuda is not a link");
    else
        sc_fact_str(r->res->facts, "cuda_link", r->inv->link_target[0] ? r->inv->link_target : NULL,
                    "/usr/local/cuda is a dangling link");
    sc_fact_str(r->res->facts, "toolkit_version", sc_cuda_inventory_main_version(r->inv),
                "no toolkit with a readable version");
}

static void libcuda_facts(sc_cuda_run *r)
{
    const sc_cuda_lib_pick *p = &r->inv->libcuda;
    if (!p->found) {
        sc_fact_null(r->res->facts, "driver_library",
                     "no libcuda.so.1 in LD_LIBRARY_PATH, the ld.so.cache or the default "
                     "directories");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(r->res->facts, "driver_library");
    if (!o)
        return;
    cJSON_AddStringToObject(o, "path", p->path);
    cJSON_AddStringToObject(o, "realpath", p->realpath);
    cJSON_AddStringToObject(o, "found_via", p->found_via);
    sc_fact_str(o, "driver_version", p->driver_version[0] ? p->driver_version : NULL,
                "the file name carries no driver version");
    cJSON_AddBoolToObject(o, "is_stub", p->is_stub);
}

void sc_cuda_inventory_facts(sc_cuda_run *r, const sc_cuda_env *env)
{
    sc_cuda_inventory_collect(r->ctx->root, env, r->inv);
    toolkit_facts(r);
    libcuda_facts(r);
    sc_cuda_compiler_facts(r);
}

void sc_cuda_check_picked_version(sc_cuda_run *r)
{
    const sc_cuda_lib_pick *p = &r->inv->libcuda;
    const char *kernel = sc_cuda_module_version(r);
    if (p->found && p->driver_version[0] && kernel && strcmp(kernel, p->driver_version) != 0)
        sc_finding(r->res, "nvidia.module-version-mismatch", SC_SEV_ERROR,
                   "install the user-space driver of the same release as the kernel module "
                   "(or reboot after a driver upgrade); in a container, do not bake libcuda "
                   "into the image: let nvidia-container-toolkit mount the host's",
                   "libcuda is %s (%s) but the kernel module is %s", p->driver_version, p->realpath,
                   kernel);
}
