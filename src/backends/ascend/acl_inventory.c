/* runtime.acl's passive part: the CANN toolkits (shared with driver.ascend), the ACL interface
 * library the loader would pick, and, when it would pick none, the toolkit directory that holds
 * one (set_env.sh puts it on LD_LIBRARY_PATH). Files only, through the root: works offline. */
#include <stdio.h>
#include <stdlib.h>

#include "sc_acl_run.h"
#include "sc_ascend_install.h"

/* The first toolkit's lib64 that holds libascendcl.so, into r->toolkit_lib. */
static void find_toolkit_lib(sc_acl_run *r, const sc_ascend_toolkits *tks)
{
    for (int i = 0; i < tks->count; i++) {
        char path[PATH_MAX + 40];
        sc_fmt(path, sizeof path, "%s/lib64/libascendcl.so", tks->items[i].root);
        if (sc_root_exists(r->ctx->root, path)) {
            sc_fmt(r->toolkit_lib, sizeof r->toolkit_lib, "%s/lib64", tks->items[i].root);
            return;
        }
    }
}

static void library_facts(sc_acl_run *r, const char *ld_library_path, sc_ascend_lib_pick *p)
{
    sc_ascend_pick_library(r->ctx->root, ld_library_path, p);
    if (p->found) {
        cJSON *o = cJSON_AddObjectToObject(r->res->facts, "library");
        cJSON_AddStringToObject(o, "path", p->path);
        cJSON_AddStringToObject(o, "realpath", p->realpath);
        cJSON_AddStringToObject(o, "found_via", p->found_via);
    } else {
        sc_fact_null(r->res->facts, "library",
                     "libascendcl.so is not on LD_LIBRARY_PATH, in ld.so.cache or in the default "
                     "directories%s%s",
                     r->toolkit_lib[0] ? "; a toolkit has one in " : "", r->toolkit_lib);
    }
}

void sc_acl_inventory_facts(sc_acl_run *r, const char *ld_library_path)
{
    char install[PATH_MAX];
    sc_ascend_install_dir(r->ctx->root, install, sizeof install);
    cJSON_AddStringToObject(r->res->facts, "install_path", install);
    sc_ascend_toolkits *tks = calloc(1, sizeof *tks);
    if (tks) {
        sc_ascend_toolkits_collect(r->ctx->root, install, tks);
        sc_ascend_toolkits_facts(r->res->facts, tks);
        find_toolkit_lib(r, tks);
        free(tks);
    }
    sc_ascend_lib_pick *p = calloc(1, sizeof *p);
    if (!p) {
        sc_fact_null(r->res->facts, "library", "out of memory");
        return;
    }
    library_facts(r, ld_library_path, p);
    sc_acl_compiler_facts(r, p);
    free(p);
}
