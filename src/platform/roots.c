/* Install roots by path shape, the classifier's fallback: <prefix>/lib/pythonX.Y/site-packages/
 * <package>/, the backends' root_prefixes (/opt/dtk[-version]/, /usr/local/Ascend/<part>/), the
 * system's library directories; and which GPU stack a library belongs to. */
#include "sc_roots.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const kind_names[] = {"system", "dtk",    "rocm",  "hyhal", "cuda",
                                         "cann",   "python", "other", "conda"};
#define KIND_COUNT (sizeof kind_names / sizeof kind_names[0])

const char *sc_root_kind_name(sc_root_kind kind)
{
    return ((unsigned)kind < KIND_COUNT) ? kind_names[kind] : "?";
}

sc_root_kind sc_root_kind_by_name(const char *name)
{
    for (size_t i = 0; name && i < KIND_COUNT; i++)
        if (strcmp(kind_names[i], name) == 0)
            return (sc_root_kind)i;
    return SC_ROOT_OTHER;
}

/* True when kind is the kind of one of desc's markers that belong to its stack. */
static bool stack_kind(const sc_backend_desc *desc, const char *kind)
{
    for (const sc_root_marker *m = desc->root_markers; m && m->kind; m++)
        if (!m->outside_stack && strcmp(m->kind, kind) == 0)
            return true;
    return false;
}

/* The kind a root prefix names: its last name when that is one of desc's marker kinds ("/opt/dtk"),
 * else desc's first marker kind ("/opt/nvidia": cuda). */
static const char *prefix_kind(const sc_backend_desc *desc, const char *prefix, size_t len)
{
    const char *name = prefix + len;
    while (name > prefix && name[-1] != '/')
        name--;
    size_t n = (size_t)(prefix + len - name);
    for (const sc_root_marker *m = desc->root_markers; m && m->kind; m++)
        if (strlen(m->kind) == n && strncasecmp(m->kind, name, n) == 0)
            return m->kind;
    return desc->root_markers && desc->root_markers[0].kind ? desc->root_markers[0].kind : "other";
}

/* The root path matches under prefix, into out; false when it does not match. "/opt/dtk" takes
 * /opt/dtk and /opt/dtk-24.04 (not /opt/dtkfoo); "/usr/local/Ascend/" takes its directories. */
static bool match_prefix(const char *path, const char *prefix, sc_install_root *out, size_t *plen)
{
    size_t n = strlen(prefix);
    bool container = n > 1 && prefix[n - 1] == '/';
    *plen = container ? n - 1 : n;
    if (strncmp(path, prefix, n) != 0)
        return false;
    const char *end = path + n;
    if (!container && *end && *end != '/' && *end != '-' && *end != '.')
        return false;
    if (container && !strchr(end, '/'))
        end = path + n - 1; /* a file directly in the directory of roots: the directory */
    else
        end += strcspn(end, "/");
    snprintf(out->path, sizeof out->path, "%.*s", (int)(end - path), path);
    return true;
}

/* The backends' root_prefixes; false when none matches. */
static bool by_prefix(const char *path, sc_install_root *out)
{
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        for (const char *const *p = (*b)->root_prefixes; p && *p; p++) {
            size_t plen;
            if (!match_prefix(path, *p, out, &plen))
                continue;
            const char *kind = prefix_kind(*b, *p, plen);
            out->kind = sc_root_kind_by_name(kind);
            out->stack = stack_kind(*b, kind) ? *b : NULL;
            return true;
        }
    return false;
}

/* <...>/site-packages/<package>: the package directory (or the module file directly in it). */
static bool by_site_packages(const char *path, sc_install_root *out)
{
    const char *site = strstr(path, "/site-packages/");
    if (!site)
        site = strstr(path, "/dist-packages/");
    if (!site)
        return false;
    const char *pkg = strchr(site + 1, '/') + 1;
    const char *end = strchr(pkg, '/');
    size_t n = end ? (size_t)(end - path) : strlen(path);
    out->kind = SC_ROOT_PYTHON;
    snprintf(out->path, sizeof out->path, "%.*s", (int)n, path);
    return true;
}

static bool by_system_dir(const char *path, sc_install_root *out)
{
    static const char *const dirs[] = {"/usr/lib/", "/lib/", "/lib64/", "/usr/lib64/"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (strncmp(path, dirs[i], strlen(dirs[i])) == 0) {
            out->kind = SC_ROOT_SYSTEM;
            snprintf(out->path, sizeof out->path, "/usr");
            return true;
        }
    return false;
}

void sc_install_root_of(const char *path, sc_install_root *out)
{
    out->stack = NULL;
    if (by_site_packages(path, out) || by_prefix(path, out) || by_system_dir(path, out))
        return;
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

/* "libhipblas" of "libhipblas.so.2" or "/x/libhipblas.so" into buf. */
static void name_stem(const char *name, char *buf, size_t size)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    const char *so = strstr(base, ".so");
    size_t n = so ? (size_t)(so - base) : strlen(base);
    snprintf(buf, size, "%.*s", (int)n, base);
}

const sc_backend_desc *sc_roots_stack_of(const sc_install_root *root, const char *name)
{
    if (root->stack)
        return root->stack;
    if (!name || (root->kind != SC_ROOT_CONDA && root->kind != SC_ROOT_PYTHON &&
                  root->kind != SC_ROOT_SYSTEM))
        return NULL;
    char stem[256];
    name_stem(name, stem, sizeof stem);
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        if (sc_backend_list_has((*b)->stack_libraries, stem))
            return sc_backend_list_has((*b)->driver_libraries, stem) ? NULL : *b;
    return NULL;
}
