/* Install-root classification by path shape. The vendors' layouts are fixed enough that the prefix
 * tells the root: /opt/<vendor>[-version]/..., /usr/local/cuda[-X.Y]/...,
 * /usr/local/Ascend/<part>/, <prefix>/lib/pythonX.Y/site-packages/<package>/. */
#include "sc_roots.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[] = {"system", "dtk",  "rocm",   "hyhal",
                                         "cuda",   "cann", "python", "other"};

const char *sc_root_kind_name(sc_root_kind kind)
{
    return (kind >= SC_ROOT_SYSTEM && kind <= SC_ROOT_OTHER) ? kind_names[kind] : "?";
}

/* Copies the first `components` components of an absolute path: ("/opt/dtk-24.04/lib", 2) ->
 * "/opt/dtk-24.04". */
static void take_components(const char *path, int components, char *buf, size_t size)
{
    const char *p = path;
    for (int i = 0; i < components && *p; i++) {
        p++;
        p += strcspn(p, "/");
    }
    snprintf(buf, size, "%.*s", (int)(p - path), path);
}

typedef struct {
    const char *prefix; /* matched at the start of the path */
    sc_root_kind kind;
    int components; /* how many components after the prefix's parent make the root */
} root_rule;

static const root_rule rules[] = {
    {"/opt/dtk", SC_ROOT_DTK, 2},     {"/opt/rocm", SC_ROOT_ROCM, 2},
    {"/opt/hyhal", SC_ROOT_HYHAL, 2}, {"/usr/local/cuda", SC_ROOT_CUDA, 3},
    {"/opt/nvidia", SC_ROOT_CUDA, 2}, {"/usr/local/Ascend", SC_ROOT_CANN, 4},
    {"/usr/lib/", SC_ROOT_SYSTEM, 0}, {"/lib/", SC_ROOT_SYSTEM, 0},
    {"/lib64/", SC_ROOT_SYSTEM, 0},   {"/usr/lib64/", SC_ROOT_SYSTEM, 0},
};

void sc_install_root_of(const char *path, sc_install_root *out)
{
    const char *site = strstr(path, "/site-packages/");
    if (!site)
        site = strstr(path, "/dist-packages/");
    if (site) {
        out->kind = SC_ROOT_PYTHON;
        const char *pkg = strchr(site + 1, '/') + 1;
        const char *end = strchr(pkg, '/');
        size_t n = end ? (size_t)(end - path) : strlen(path);
        snprintf(out->path, sizeof out->path, "%.*s", (int)n, path);
        return;
    }
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const root_rule *r = &rules[i];
        size_t plen = strlen(r->prefix);
        if (strncmp(path, r->prefix, plen) != 0)
            continue;
        /* "/opt/dtk" must be followed by '/', '-' or end: not "/opt/dtkfoo" unless versioned */
        char next = path[plen];
        if (r->components && next && next != '/' && next != '-' && next != '.')
            continue;
        out->kind = r->kind;
        if (r->components == 0)
            snprintf(out->path, sizeof out->path, "/usr");
        else
            take_components(path, r->components, out->path, sizeof out->path);
        return;
    }
    out->kind = SC_ROOT_OTHER;
    /* a lib directory's parent is the install prefix: /x/y/lib/libz.so -> /x/y */
    const char *slash = strrchr(path, '/');
    size_t n = slash && slash != path ? (size_t)(slash - path) : 1;
    if (n > 4 && strncmp(path + n - 4, "/lib", 4) == 0)
        n -= 4;
    else if (n > 6 && strncmp(path + n - 6, "/lib64", 6) == 0)
        n -= 6;
    snprintf(out->path, sizeof out->path, "%.*s", (int)n, path);
}
