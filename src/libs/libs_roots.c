/* The mixed-install checks of a dependency tree: libraries of one GPU stack from two install roots,
 * or two versions of one library, which load fine and then fail at the first call. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libs_internal.h"

/* Which stack a root belongs to: 1 AMD (DTK and ROCm), 2 CUDA, 3 CANN, 0 none. */
static int stack_of(sc_root_kind kind)
{
    switch (kind) {
    case SC_ROOT_DTK:
    case SC_ROOT_ROCM: return 1;
    case SC_ROOT_CUDA: return 2;
    case SC_ROOT_CANN: return 3;
    default: return 0;
    }
}

/* Says how a node was found: "LD_LIBRARY_PATH entry /opt/dtk-B/lib", "ld.so.cache"... */
static void how_found(const node *n, char *buf, size_t size)
{
    if (n->parent < 0)
        snprintf(buf, size, "the file inspected");
    else if (n->via == SC_VIA_CACHE)
        snprintf(buf, size, "ld.so.cache");
    else if (n->via == SC_VIA_DIRECT)
        snprintf(buf, size, "a path in DT_NEEDED");
    else
        sc_fmt(buf, size, "%s entry %s", n->source, n->entry);
}

static void report_mixed(analysis *a, const node *x, const node *y, const char *what)
{
    char hx[PATH_MAX + 64], hy[PATH_MAX + 64];
    how_found(x, hx, sizeof hx);
    how_found(y, hy, sizeof hy);
    sc_finding(&a->res, "libs.mixed-roots", SC_SEV_ERROR,
               "use one install: remove the other root's directory from LD_LIBRARY_PATH (or the "
               "RUNPATH/RPATH that names it), or source only one DTK/ROCm env.sh",
               "%s: %s from %s (via %s) and %s from %s (via %s)", what, x->name, x->root_path, hx,
               y->name, y->root_path, hy);
}

void sc_libs_check_roots(analysis *a)
{
    const node *first[4] = {NULL};
    bool reported[4] = {false};
    for (int i = 0; i < a->count; i++) {
        const node *n = a->nodes[i];
        int s = n->found ? stack_of(n->root_kind) : 0;
        if (!s || reported[s])
            continue;
        if (!first[s])
            first[s] = n;
        else if (strcmp(first[s]->root_path, n->root_path) != 0) {
            report_mixed(a, first[s], n, "libraries of one stack from two install roots");
            reported[s] = true;
        }
    }
}

/* "libamdhip64.so" of "libamdhip64.so.5"; false when the soname has no version. */
static bool soname_base(const char *soname, char *buf, size_t size)
{
    const char *so = strstr(soname, ".so.");
    return so && sc_fmt(buf, size, "%.*s", (int)(so + 3 - soname), soname);
}

void sc_libs_check_sonames(analysis *a)
{
    sc_symset bases = {0}; /* "libamdhip64.so" -> the first node with such a soname */
    char(*base)[256] = calloc((size_t)a->count, sizeof *base);
    for (int i = 0; base && i < a->count; i++) {
        node *y = a->nodes[i];
        if (!y->opened || !y->file->info.soname || !soname_base(y->file->info.soname, base[i], 256))
            continue;
        const node *x = sc_symset_get(&bases, base[i]);
        if (!x) {
            sc_symset_put(&bases, base[i], y);
        } else if (strcmp(x->file->info.soname, y->file->info.soname) != 0) {
            report_mixed(a, x, y, "two versions of one library in one tree");
            break;
        }
    }
    sc_symset_free(&bases);
    free(base);
}
