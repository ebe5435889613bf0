/* The dependency tree of one ELF file in glibc's load order: breadth first, and a name, soname or
 * file already loaded is not loaded again. Files are opened and read, never executed. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libs_internal.h"

static unsigned elf_parts(const analysis *a)
{
    return SC_ELF_VERSIONS | (a->cfg->no_symbol_check ? 0 : SC_ELF_SYMBOLS);
}

/* Records where a node was found: its path, real path, origin and install root. */
static void place_node(analysis *a, node *n, const char *path, const char *real)
{
    char buf[PATH_MAX];
    sc_install_root root;
    n->found = true;
    n->path = strdup(path);
    n->realpath = strdup(real && *real ? real : path);
    sc_path_dirname(path, buf, sizeof buf);
    n->origin = strdup(buf);
    sc_roots_of(sc_libs_cache_roots(a->parsed, a->root), n->realpath ? n->realpath : path, &root);
    n->root_path = strdup(root.path);
    n->root_kind = root.kind;
    n->stack = sc_roots_stack_of(&root, n->name);
    if (n->realpath)
        sc_symset_add(&a->files, n->realpath);
}

/* Opens a found node's file (from fd when >= 0), notes its names and fills its loader-chain
 * record. */
static bool open_node(analysis *a, node *n, int fd, unsigned parts, sc_error *err)
{
    n->obj = sc_libs_cache_open(a, n->path, n->realpath ? n->realpath : "", fd, parts, err);
    n->opened = n->obj != NULL;
    if (n->obj) {
        n->obj->mark = a->gen;
        n->file = &n->obj->file;
    }
    n->ld.origin = n->origin;
    n->ld.name = n->path;
    sc_symset_add(&a->names, n->name);
    if (!n->opened)
        return false;
    sc_symset_put(&a->provided, n->name, n);
    n->ld.rpath = n->file->info.rpath;
    n->ld.runpath = n->file->info.runpath;
    n->ld.flags_1 = n->file->info.flags_1;
    sc_ld_search_prepare(a->search, &n->ld); /* else its lists are parsed at each lookup */
    if (n->file->info.soname) {
        sc_symset_add(&a->names, n->file->info.soname);
        sc_symset_put(&a->provided, n->file->info.soname, n);
    }
    return true;
}

static node *new_node(analysis *a, const char *name, int parent)
{
    if (a->count >= MAX_NODES)
        return NULL;
    node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->name = name;
    n->parent = parent;
    n->depth = parent < 0 ? 0 : a->nodes[parent]->depth + 1;
    n->ld.loader = parent < 0 ? NULL : &a->nodes[parent]->ld;
    a->nodes[a->count++] = n;
    return n;
}

/* The real path of an open file, without the root's prefix (as sc_root_realpath gives it). */
static int fd_realpath(const sc_root *root, int fd, char *buf, size_t size)
{
    char proc[64], full[PATH_MAX];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(proc, full, sizeof full - 1);
    if (n < 0)
        return -errno;
    full[n] = '\0';
    size_t rl = strlen(root->path);
    while (rl > 1 && root->path[rl - 1] == '/')
        rl--;
    const char *inside = full;
    if (!root->is_host && strncmp(full, root->path, rl) == 0 && (full[rl] == '/' || !full[rl]))
        inside = full + rl;
    else if (!root->is_host) /* the root given through a symlink: ask the slow way */
        return -EXDEV;
    return sc_fmt(buf, size, "%s", *inside ? inside : "/") ? 0 : -ENAMETOOLONG;
}

/* Loads one DT_NEEDED name unless the loader already has an object for it: loaded under that
 * name, with that soname, or from the same file. */
static void load_needed(analysis *a, int parent, const char *name)
{
    if (a->count >= MAX_NODES || sc_symset_has(&a->names, name))
        return; /* a full tree takes no more: its lookups would be spent for nothing */
    sc_ld_hit hit;
    bool found = sc_ldresolve(&a->resolver, &a->nodes[parent]->ld, name, &hit) == 0;
    char real[PATH_MAX];
    real[0] = '\0';
    if (found && fd_realpath(a->root, hit.fd, real, sizeof real) < 0)
        sc_root_realpath(a->root, hit.path, real, sizeof real);
    if (found && real[0] && sc_symset_has(&a->files, real)) {
        close(hit.fd);
        return;
    }
    node *n = new_node(a, name, parent);
    if (!n) {
        if (hit.fd >= 0)
            close(hit.fd);
        return;
    }
    n->via = hit.via;
    sc_error err;
    if (!found) {
        sc_symset_add(&a->names, n->name);
        return;
    }
    n->entry = strdup(hit.entry);
    n->source = strdup(hit.source);
    place_node(a, n, hit.path, real);
    open_node(a, n, hit.fd, elf_parts(a), &err);
    close(hit.fd);
}

/* Walks the tree breadth first, as ld.so orders the dependencies it maps. */
void sc_libs_build_tree(analysis *a)
{
    for (int i = 0; i < a->count; i++) {
        node *n = a->nodes[i];
        if (!n->opened)
            continue;
        for (int j = 0; j < n->file->info.needed_count; j++)
            load_needed(a, i, n->file->info.needed[j]);
    }
}

int sc_libs_open_file(analysis *a, const char *path, sc_error *err)
{
    node *n = new_node(a, path, -1);
    if (!n)
        return sc_error_set(err, -ENOMEM, "out of memory");
    n->via = SC_VIA_DIRECT;
    char real[PATH_MAX] = "", abs[PATH_MAX], cwd[PATH_MAX];
    sc_root_realpath(a->root, path, real, sizeof real);
    /* $ORIGIN of the file is the directory it was named from, as for ld.so --list */
    if (path[0] != '/' && a->root->is_host && getcwd(cwd, sizeof cwd))
        sc_fmt(abs, sizeof abs, "%s/%s", cwd, path);
    else
        snprintf(abs, sizeof abs, "%s", path);
    place_node(a, n, abs, real);
    free(n->path);
    n->path = strdup(path);
    if (!n->path || !n->origin || !n->realpath || !n->root_path)
        return sc_error_set(err, -ENOMEM, "out of memory");
    sc_error e = {0};
    if (open_node(a, n, -1, elf_parts(a) | SC_ELF_OFFLOAD, &e))
        return 0;
    if (err)
        *err = e;
    return e.code ? e.code : -ENOEXEC;
}
