/* runtime.hip's compilers: which hipcc PATH, ROCM_HOME, ROCM_PATH and HIP_PATH reach, the install
 * each belongs to, its HIP version from the install's files (bin/.hipVersion, share/hip/version)
 * or, for the user's own hipcc without one, from `hipcc --version`; and hip.compiler-other-root
 * when its install is not the one the loader takes the runtime from. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_compilers.h"
#include "sc_hip_run.h"

int sc_hip_parse_hipcc_version(const char *text, char *buf, size_t size)
{
    static const char key[] = "HIP version:";
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        if (strncmp(line, key, sizeof key - 1) == 0) {
            const char *v = line + sizeof key - 1;
            while (*v == ' ' || *v == '\t')
                v++;
            size_t n = strspn(v, "0123456789.");
            if (n == 0 || n >= size || n > 40 || !isdigit((unsigned char)v[0]) ||
                !memchr(v, '.', n))
                return -EINVAL;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return 0;
        }
        line = end ? end + 1 : NULL;
    }
    return -EINVAL;
}

/* The HIP version from the first readable file of dir's rels; true when one gave it. */
static bool hip_version_in(const sc_root *root, const char *dir, const char *const *rels,
                           sc_compiler *c)
{
    for (; *rels; rels++) {
        char *text = sc_hip_read_small(root, dir, *rels);
        bool ok = text && sc_hip_parse_hip_version_file(text, c->version, sizeof c->version) == 0;
        free(text);
        if (ok) {
            sc_fmt(c->version_from, sizeof c->version_from, "%s/%s", dir, *rels);
            return true;
        }
        c->version[0] = '\0';
    }
    return false;
}

/* The .info/version of a ROCm or DTK install ir into buf ("" when it has none). */
static void install_version(const sc_root *root, const sc_install_root *ir, char *buf, size_t size)
{
    char *text = ir->kind == SC_ROOT_DTK || ir->kind == SC_ROOT_ROCM
                     ? sc_hip_read_small(root, ir->path, ".info/version")
                     : NULL;
    if (!text || sc_hip_parse_version_file(text, buf, size) < 0)
        buf[0] = '\0';
    free(text);
}

/* The install's .info/version, and the HIP version beside hipcc, else in the install's layouts. */
static void hip_version_files(const sc_root *root, sc_compiler *c)
{
    static const char *const beside[] = {".hipVersion", NULL};
    static const char *const prefix[] = {"share/hip/version", NULL};
    static const char *const in_root[] = {"share/hip/version", "hip/share/hip/version",
                                          "hip/bin/.hipVersion", "bin/.hipVersion", NULL};
    char bin[PATH_MAX], above[PATH_MAX];
    install_version(root, &c->root, c->install_version, sizeof c->install_version);
    sc_path_dirname(c->realpath, bin, sizeof bin);
    sc_path_dirname(bin, above, sizeof above);
    if (!hip_version_in(root, bin, beside, c) && !hip_version_in(root, above, prefix, c) &&
        !hip_version_in(root, c->root.path, in_root, c))
        sc_fmt(c->version_error, sizeof c->version_error,
               "no bin/.hipVersion or share/hip/version beside it or in %s", c->root.path);
}

void sc_hip_compiler_facts(sc_hip_run *r)
{
    sc_compilers *cs = calloc(1, sizeof *cs);
    if (!cs) {
        sc_fact_null(r->res->facts, "compilers", "out of memory");
        return;
    }
    sc_compiler_scan scan =
        sc_compiler_scan_for(r->ctx, hip_version_files, sc_hip_parse_hipcc_version);
    const sc_backend_desc *amd = sc_backend_get(SC_BACKEND_AMD);
    sc_compilers_collect(r->ctx->root, amd, &scan, cs);
    sc_compilers_facts(r->res->facts, cs);
    const sc_hip_install *in = sc_hip_inventory_install_of(r->inv, r->inv->pick.realpath);
    char version[64] = "";
    if (in && in->version[0])
        sc_fmt(version, sizeof version, "%s", in->version);
    else
        install_version(r->ctx->root, &r->inv->pick.root, version, sizeof version);
    sc_compilers_check_runtime(r->res, r->ctx->root, amd, cs, &r->inv->pick,
                               version[0] ? version : NULL, "hip.compiler-other-root");
    free(cs);
}
