/* The mixed-install checks of a dependency tree: libraries of one GPU stack from two install roots,
 * or two versions of one library, which load fine and then fail at the first call. The stack of a
 * library and its install root come from the install-root classifier (sc_roots.h), so installs
 * are told apart wherever they live. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libs_internal.h"

#define MAX_STACKS 16

/* The stack's place in the backend table: one slot per stack. */
static int stack_slot(const sc_backend_desc *stack)
{
    for (int i = 0; sc_backends[i] && i < MAX_STACKS; i++)
        if (sc_backends[i] == stack)
            return i;
    return -1;
}

/* Whether two roots are one install. A Python package stands for its site-packages: the packages
 * of one environment are installed together (pip installs ROCm's and CUDA's split wheels as
 * several packages). */
static bool same_install(const node *x, const node *y)
{
    if (x->root_kind != SC_ROOT_PYTHON || y->root_kind != SC_ROOT_PYTHON)
        return strcmp(x->root_path, y->root_path) == 0;
    const char *xs = strrchr(x->root_path, '/'), *ys = strrchr(y->root_path, '/');
    return xs && ys && xs - x->root_path == ys - y->root_path &&
           strncmp(x->root_path, y->root_path, (size_t)(xs - x->root_path)) == 0;
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
    const node *first[MAX_STACKS] = {NULL};
    bool reported[MAX_STACKS] = {false};
    for (int i = 0; i < a->count; i++) {
        const node *n = a->nodes[i];
        int s = n->found ? stack_slot(n->stack) : -1;
        if (s < 0 || reported[s])
            continue;
        if (!first[s])
            first[s] = n;
        else if (!same_install(first[s], n)) {
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
