/* The libraries analysis of one ELF file: its dependency tree in glibc's load order (breadth first,
 * a name already loaded is not loaded again), then the checks on that tree: missing libraries,
 * symbol versions, undefined symbols, libraries of one stack from two install roots, and the GPU
 * code of the file against the target devices. Files are mapped and read, never executed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libs_internal.h"

static void analysis_free(analysis *a)
{
    for (int i = 0; a->nodes && i < a->count; i++) {
        node *n = a->nodes[i];
        free(n->path), free(n->realpath), free(n->origin);
        free(n->entry), free(n->source), free(n->root_path);
        free(n);
    }
    free(a->nodes);
    sc_ld_search_free(a->search);
    if (a->have_loader)
        sc_loader_close(&a->loader);
    sc_symset_free(&a->names);
    sc_symset_free(&a->files);
    sc_symset_free(&a->provided);
    sc_result_free(&a->res);
    if (a->own_parsed)
        sc_libs_cache_free(a->parsed);
}

static void run_checks(analysis *a, cJSON *out)
{
    sc_libs_check_missing(a);
    sc_libs_check_search(a);
    sc_libs_check_versions(a);
    if (!a->cfg->no_symbol_check)
        sc_libs_check_undefined(a);
    sc_libs_check_roots(a);
    sc_libs_check_sonames(a);
    cJSON_AddItemToObject(out, "offload", sc_libs_check_offload(a));
    if (a->count >= MAX_NODES)
        sc_finding(&a->res, "libs.tree-too-large", SC_SEV_WARN, NULL,
                   "the dependency tree was cut at %d libraries", MAX_NODES);
}

/* Sets a up for one analysis: its node table and the cache of parsed files (the config's, else a
 * private one). 0 or -ENOMEM with nothing left to free. */
static int analysis_init(analysis *a, const sc_root *root, const sc_libs_config *cfg)
{
    memset(a, 0, sizeof *a);
    a->root = root;
    a->cfg = cfg;
    a->nodes = calloc(MAX_NODES, sizeof *a->nodes);
    a->search = sc_ld_search_new(root);
    a->parsed = cfg->cache;
    if (!a->parsed) {
        a->parsed = sc_libs_cache_new();
        a->own_parsed = true;
    }
    if (!a->nodes || !a->search || !a->parsed || sc_result_init(&a->res) < 0) {
        free(a->nodes);
        sc_ld_search_free(a->search);
        if (a->own_parsed)
            sc_libs_cache_free(a->parsed);
        return -ENOMEM;
    }
    if (a->parsed->count > CACHE_LIMIT)
        sc_libs_cache_clear(a->parsed);
    a->gen = ++a->parsed->generation;
    return 0;
}

/* The loader's search for the file's dependencies, set up as for the runtime probes' picks
 * (sc_loader.h) for the loader of the root for the file's class and machine (sc_ldtarget.h): the
 * search path and the root's ld.so.cache. The file's own lists were parsed when it was opened,
 * before its class was known: they are parsed again for that loader. */
static int resolver_init(analysis *a, sc_error *err)
{
    if (sc_loader_open(&a->loader, a->root, a->cfg->ld_library_path) < 0)
        return sc_error_set(err, -ENOMEM, "out of memory");
    a->have_loader = true;
    const sc_elf_info *info = &a->nodes[0]->file->info;
    a->resolver =
        sc_loader_resolver(&a->loader, &a->nodes[0]->ld, info->elf_class, info->machine, a->search);
    sc_ld_target_detect(a->root, info->elf_class, info->machine, &a->target);
    a->resolver.target = &a->target;
    sc_ld_search_set_target(a->search, &a->target);
    sc_ld_search_prepare(a->search, &a->nodes[0]->ld);
    return 0;
}

int sc_libs_analyze(const sc_root *root, const char *path, const sc_libs_config *cfg, cJSON **out,
                    sc_error *err)
{
    static const sc_libs_config defaults;
    analysis a;
    *out = NULL;
    if (analysis_init(&a, root, cfg ? cfg : &defaults) < 0)
        return sc_error_set(err, -ENOMEM, "out of memory");
    int rc = sc_libs_open_file(&a, path, err);
    if (rc < 0 || (rc = resolver_init(&a, err)) < 0)
        goto done;
    sc_libs_build_tree(&a);
    *out = sc_libs_file_json(&a);
    if (!*out) {
        rc = sc_error_set(err, -ENOMEM, "out of memory");
        goto done;
    }
    run_checks(&a, *out);
    cJSON_AddItemToObject(*out, "findings", a.res.findings);
    a.res.findings = NULL;
done:
    analysis_free(&a);
    return rc;
}
