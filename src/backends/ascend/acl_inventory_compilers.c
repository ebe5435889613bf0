/* runtime.acl's compilers: which ccec, bisheng and atc PATH, ASCEND_TOOLKIT_HOME and
 * ASCEND_HOME_PATH reach, the CANN install each belongs to with its version (the toolkit's
 * ascend_toolkit_install.info or runtime/version.info: CANN's compilers carry CANN's version; they
 * are never run), and acl.compiler-other-root when that install is not libascendcl.so's. */
#include <stdio.h>
#include <stdlib.h>

#include "sc_acl_run.h"
#include "sc_ascend_install.h"
#include "sc_compilers.h"

static void cann_version_files(const sc_root *root, sc_compiler *c)
{
    sc_ascend_toolkit *tk = calloc(1, sizeof *tk);
    if (tk && c->root.kind == SC_ROOT_CANN && sc_ascend_toolkit_read(root, c->root.path, tk)) {
        snprintf(c->install_version, sizeof c->install_version, "%s", tk->version);
        snprintf(c->version, sizeof c->version, "%s", tk->version);
        sc_fmt(c->version_from, sizeof c->version_from, "%s", tk->info);
    } else {
        sc_fmt(c->version_error, sizeof c->version_error,
               "no ascend_toolkit_install.info or runtime/version.info in %s (CANN's compilers "
               "are not run)",
               c->root.path);
    }
    free(tk);
}

void sc_acl_compiler_facts(sc_acl_run *r, const sc_loader_pick *pick)
{
    const sc_backend_desc *ascend = sc_backend_get(SC_BACKEND_ASCEND);
    sc_compilers *cs = calloc(1, sizeof *cs);
    if (!cs) {
        sc_fact_null(r->res->facts, "compilers", "out of memory");
        return;
    }
    sc_compiler_scan scan = sc_compiler_scan_for(r->ctx, cann_version_files, NULL);
    sc_compilers_collect(r->ctx->root, ascend, &scan, cs);
    sc_compilers_facts(r->res->facts, cs);
    sc_compilers_check_runtime(r->res, r->ctx->root, ascend, cs, pick, NULL,
                               "acl.compiler-other-root");
    free(cs);
}
