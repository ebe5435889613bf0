/* runtime.cuda's compilers: which nvcc PATH, CUDA_HOME and CUDA_PATH reach, the toolkit each
 * belongs to, its version from the toolkit's version.json (cuda_nvcc) or version.txt, or, for the
 * user's own nvcc without one (a toolkit assembled from wheels), from `nvcc --version`; the
 * libcudart the loader picks; and cuda.compiler-other-root when their toolkits differ. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_compilers.h"
#include "sc_cuda_run.h"

/* The toolkit's version, and nvcc's own from version.json (else the toolkit's version.txt). */
static void nvcc_version_files(const sc_root *root, sc_compiler *c)
{
    sc_cuda_toolkit *tk = calloc(1, sizeof *tk);
    char path[PATH_MAX + 16], *text = NULL;
    if (!tk)
        return;
    snprintf(tk->root, sizeof tk->root, "%s", c->root.path);
    sc_cuda_toolkit_read_version(root, tk);
    snprintf(c->install_version, sizeof c->install_version, "%s", tk->version);
    sc_fmt(path, sizeof path, "%s/version.json", c->root.path);
    if (sc_root_read(root, path, &text, 1 << 20) >= 0 &&
        sc_cuda_parse_version_json_part(text, "cuda_nvcc", c->version, sizeof c->version) == 0) {
        sc_fmt(c->version_from, sizeof c->version_from, "%s", path);
    } else if (tk->version[0]) {
        snprintf(c->version, sizeof c->version, "%s", tk->version);
        sc_fmt(c->version_from, sizeof c->version_from, "%s/version.txt", c->root.path);
    } else {
        c->version[0] = '\0';
        sc_fmt(c->version_error, sizeof c->version_error, "%s in %s", tk->version_error,
               c->root.path);
    }
    free(text);
    free(tk);
}

/* facts.cudart_library: the libcudart the loader would pick, what code nvcc builds links to. */
static void pick_cudart(sc_cuda_run *r, const sc_backend_desc *nv, sc_loader_pick *pick)
{
    sc_loader l;
    pick->found = false;
    if (sc_loader_open(&l, r->ctx->root, getenv("LD_LIBRARY_PATH")) == 0) {
        sc_loader_find_first(&l, nv->compiled_runtime_libraries, pick);
        sc_loader_close(&l);
    }
    if (!pick->found) {
        sc_fact_null(r->res->facts, "cudart_library",
                     "no libcudart in LD_LIBRARY_PATH, the ld.so.cache or the default directories "
                     "(programs usually carry their own or find it through RUNPATH)");
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(r->res->facts, "cudart_library");
    cJSON_AddStringToObject(o, "name", pick->name);
    cJSON_AddStringToObject(o, "realpath", pick->realpath);
    cJSON_AddStringToObject(o, "found_via", pick->found_via);
    cJSON_AddStringToObject(o, "root", pick->root.path);
    cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(pick->root.kind));
}

void sc_cuda_compiler_facts(sc_cuda_run *r)
{
    const sc_backend_desc *nv = sc_backend_get(SC_BACKEND_NVIDIA);
    sc_compilers *cs = calloc(1, sizeof *cs);
    sc_loader_pick *pick = calloc(1, sizeof *pick);
    if (cs && pick) {
        sc_compiler_scan scan =
            sc_compiler_scan_for(r->ctx, nvcc_version_files, sc_cuda_parse_nvcc_version);
        sc_compilers_collect(r->ctx->root, nv, &scan, cs);
        sc_compilers_facts(r->res->facts, cs);
        pick_cudart(r, nv, pick);
        sc_compilers_check_runtime(r->res, r->ctx->root, nv, cs, pick, NULL,
                                   "cuda.compiler-other-root");
    } else {
        sc_fact_null(r->res->facts, "compilers", "out of memory");
    }
    free(cs);
    free(pick);
}
