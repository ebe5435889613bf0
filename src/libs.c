/* The libraries analysis of one ELF file: its dependency tree in glibc's load order (breadth first,
 * a name already loaded is not loaded again), then the checks on that tree: missing libraries,
 * symbol versions, undefined symbols, libraries of one stack from two install roots, and the GPU
 * code of the file against the target devices. Files are mapped and read, never executed. */
#include "sc_libs.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sc_elf.h"
#include "sc_ldcache.h"
#include "sc_ldresolve.h"
#include "sc_offload.h"
#include "sc_probe.h"
#include "sc_roots.h"
#include "sc_util.h"

#define MAX_NODES 4096
#define MAX_UNDEF_FINDINGS 10

/* One object of the tree. Strings are allocated to size: a tree of libtorch has 300 objects. */
typedef struct {
    const char *name; /* the DT_NEEDED name, or the file as given */
    int parent;       /* the node that needed it first; -1 for the file */
    int depth;
    sc_found_via via;
    char *path; /* as the loader opens it; NULL when not found */
    char *realpath, *origin;
    char *entry, *source; /* the search-path entry that matched and where it came from */
    char *root_path;      /* its install root */
    sc_root_kind root_kind;
    bool found, opened;
    struct cached_obj *obj;  /* the parsed file, owned by the cache (opened only) */
    const sc_elf_file *file; /* obj's file */
    sc_ld_object ld;
} node;

/* The definitions index: every defined name of the cached objects -> a chain of its definers. */
typedef struct def_link {
    const struct cached_obj *obj;
    struct def_link *next;
} def_link;

/* One parsed file of the cache, keyed by what was read, the root and its real path. */
typedef struct cached_obj {
    char *key;
    sc_elf_file file;
    unsigned mark;        /* the analysis (generation) whose tree holds it */
    bool indexed;         /* its definitions are in the index, its undefined names hashed */
    uint64_t *undef_hash; /* the hash of each undefined name */
    def_link *links;      /* one per defined name */
} cached_obj;

/* Objects are kept until the cache is freed, or dropped all together between analyses once there
 * are more than CACHE_LIMIT (one tree holds at most MAX_NODES): memory stays bounded. */
#define CACHE_LIMIT 2048

struct sc_libs_cache {
    sc_symset by_key; /* key -> cached_obj */
    cached_obj **objs;
    size_t count, cap;
    sc_symset defs; /* defined name -> def_link chain */
    bool index_failed;
    unsigned generation;
};

typedef struct {
    const sc_root *root;
    const sc_libs_config *cfg;
    node **nodes;
    int count;
    sc_ldcache cache;
    bool have_cache;
    sc_ldresolver resolver;
    sc_symset names;       /* names and sonames already loaded */
    sc_symset files;       /* real paths already loaded */
    sc_symset provided;    /* names and sonames of the objects opened -> their node */
    sc_result res;         /* collects the findings */
    sc_libs_cache *parsed; /* the parsed files, shared with other analyses of the run */
    bool own_parsed;       /* made for this analysis alone */
    unsigned gen;          /* this analysis's generation in the cache */
} analysis;

/* ---- the cache of parsed files ------------------------------------------------------------- */

sc_libs_cache *sc_libs_cache_new(void)
{
    return calloc(1, sizeof(sc_libs_cache));
}

static void cache_clear(sc_libs_cache *c)
{
    for (size_t i = 0; i < c->count; i++) {
        cached_obj *o = c->objs[i];
        sc_elf_close(&o->file);
        free(o->key), free(o->undef_hash), free(o->links), free(o);
    }
    free(c->objs);
    sc_symset_free(&c->by_key);
    sc_symset_free(&c->defs);
    unsigned gen = c->generation;
    memset(c, 0, sizeof *c);
    c->generation = gen;
}

void sc_libs_cache_free(sc_libs_cache *cache)
{
    if (!cache)
        return;
    cache_clear(cache);
    free(cache);
}

/* What a file is parsed for: the dependency walk alone reads the dynamic segment (lazy mode);
 * anything more maps the file and reads the GPU code spans too, so one parse serves a file as
 * the inspected file and as a dependency. */
static unsigned cache_parts(unsigned parts)
{
    return (parts & (SC_ELF_SYMBOLS | SC_ELF_OFFLOAD)) ? parts | SC_ELF_OFFLOAD : parts;
}

/* Adds o to the cache, which then owns it; found again by its key when it has one. */
static int cache_insert(sc_libs_cache *c, cached_obj *o)
{
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        cached_obj **objs = realloc(c->objs, cap * sizeof *objs);
        if (!objs)
            return -ENOMEM;
        c->objs = objs;
        c->cap = cap;
    }
    if (o->key && sc_symset_put(&c->by_key, o->key, o) < 0)
        return -ENOMEM;
    c->objs[c->count++] = o;
    return 0;
}

/* The parsed file at path (real path real, open as fd when >= 0), from the cache or parsed now
 * and cached. NULL with err filled when it cannot be read as ELF. A cache private to one analysis
 * only owns the files: nothing is looked up twice there. */
static cached_obj *cache_open(analysis *a, const char *path, const char *real, int fd,
                              unsigned parts, sc_error *err)
{
    char key[2 * PATH_MAX + 16];
    parts = cache_parts(parts);
    key[0] = '\0';
    if (!a->own_parsed &&
        !sc_fmt(key, sizeof key, "%u\n%s\n%s", parts, a->root->path, real[0] ? real : path))
        key[0] = '\0';
    cached_obj *o = key[0] ? sc_symset_get(&a->parsed->by_key, key) : NULL;
    if (o)
        return o;
    o = calloc(1, sizeof *o);
    int rc = !o        ? -ENOMEM
             : fd >= 0 ? sc_elf_open_fd(fd, path, parts, &o->file, err)
                       : sc_elf_open(a->root, path, parts, &o->file, err);
    if (rc == 0 && key[0] && !(o->key = strdup(key)))
        rc = -ENOMEM;
    if (rc == 0 && cache_insert(a->parsed, o) == 0)
        return o;
    if (rc == 0 || rc == -ENOMEM)
        sc_error_set(err, -ENOMEM, "out of memory");
    if (o && o->file.info.elf_class)
        sc_elf_close(&o->file);
    if (o)
        free(o->key);
    free(o);
    return NULL;
}

/* ---- the tree ------------------------------------------------------------------------------ */

static void dirname_of(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, size, ".");
    else if (slash == path)
        snprintf(out, size, "/");
    else
        snprintf(out, size, "%.*s", (int)(slash - path), path);
}

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
    dirname_of(path, buf, sizeof buf);
    n->origin = strdup(buf);
    sc_install_root_of(n->realpath ? n->realpath : path, &root);
    n->root_path = strdup(root.path);
    n->root_kind = root.kind;
    if (n->realpath)
        sc_symset_add(&a->files, n->realpath);
}

/* Opens a found node's file (from fd when >= 0), notes its names and fills its loader-chain
 * record. */
static bool open_node(analysis *a, node *n, int fd, unsigned parts, sc_error *err)
{
    n->obj = cache_open(a, n->path, n->realpath ? n->realpath : "", fd, parts, err);
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
    if (sc_symset_has(&a->names, name))
        return;
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
static void build_tree(analysis *a)
{
    for (int i = 0; i < a->count; i++) {
        node *n = a->nodes[i];
        if (!n->opened)
            continue;
        for (int j = 0; j < n->file->info.needed_count; j++)
            load_needed(a, i, n->file->info.needed[j]);
    }
}

static int open_root_file(analysis *a, const char *path, sc_error *err)
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

/* ---- checks -------------------------------------------------------------------------------- */

static const node *provider_of(const analysis *a, const char *soname)
{
    return sc_symset_get(&a->provided, soname);
}

/* A library found but not readable as ELF (truncated, damaged): the loader fails on it too. */
static void report_unreadable(analysis *a, const node *n)
{
    sc_finding(&a->res, "libs.unreadable", SC_SEV_ERROR,
               "reinstall the package that provides it: the file is damaged or truncated",
               "%s (needed by %s) at %s is not a valid ELF file; its own dependencies are not "
               "known",
               n->name, a->nodes[n->parent]->path, n->path);
}

static void check_missing(analysis *a)
{
    for (int i = 1; i < a->count; i++) {
        const node *n = a->nodes[i];
        if (n->found && !n->opened)
            report_unreadable(a, n);
        if (n->found)
            continue;
        const node *p = a->nodes[n->parent];
        sc_finding(&a->res, "libs.missing-library", SC_SEV_ERROR,
                   "install the package that provides it, or add its directory to the RUNPATH or "
                   "LD_LIBRARY_PATH (stackcheck libs shows the search order)",
                   "%s (needed by %s) not found: searched %s%sLD_LIBRARY_PATH, %s%s", n->name,
                   p->path, p->ld.runpath ? "" : "RPATH chain, ",
                   a->cfg->ld_library_path ? "" : "(unset) ", p->ld.runpath ? "RUNPATH, " : "",
                   (p->ld.flags_1 & 0x800) ? "(DF_1_NODEFLIB: no cache or default directories)"
                                           : "ld.so.cache and the default directories");
    }
}

static bool defines_version(const sc_elf_info *info, const char *version)
{
    for (int i = 0; i < info->verdef_count; i++)
        if (strcmp(info->verdef[i], version) == 0)
            return true;
    return false;
}

/* The provider's newest version of the same family ("GLIBCXX_3.4.29" for GLIBCXX_3.4.30). */
static const char *newest_of_family(const sc_elf_info *info, const char *version)
{
    size_t fam = strcspn(version, "_0123456789");
    const char *best = NULL;
    for (int i = 0; i < info->verdef_count; i++)
        if (strncmp(info->verdef[i], version, fam) == 0 &&
            strcspn(info->verdef[i], "_0123456789") == fam)
            best = info->verdef[i];
    return best;
}

static void check_versions_of(analysis *a, const node *n)
{
    for (int v = 0; v < n->file->info.verneed_count; v++) {
        const sc_elf_verneed *vn = &n->file->info.verneed[v];
        const node *p = provider_of(a, vn->file);
        if (!p || p == n)
            continue;
        for (int j = 0; j < vn->count; j++) {
            if (vn->weak[j] || defines_version(&p->file->info, vn->names[j]))
                continue;
            const char *newest = newest_of_family(&p->file->info, vn->names[j]);
            sc_finding(&a->res, "libs.missing-symbol-version", SC_SEV_ERROR,
                       "the provider is older than the library was built against: put a newer "
                       "one first in the search path (for GLIBCXX/CXXABI, the compiler's "
                       "libstdc++), or rebuild the library against this one",
                       "%s requires version %s from %s, which %s does not define%s%s%s", n->path,
                       vn->names[j], vn->file, p->path, newest ? " (newest: " : "",
                       newest ? newest : "", newest ? ")" : "");
        }
    }
}

static void check_versions(analysis *a)
{
    for (int i = 0; i < a->count; i++)
        if (a->nodes[i]->opened)
            check_versions_of(a, a->nodes[i]);
}

/* ---- undefined symbols ----------------------------------------------------------------------- */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* libstdc++'s __cxa_demangle, a C-callable function; NULL when libstdc++ is not there. */
static demangle_fn demangler(void)
{
    static bool tried;
    static demangle_fn fn;
    if (!tried) {
        tried = true;
        void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
        if (h)
            *(void **)&fn = dlsym(h, "__cxa_demangle");
    }
    return fn;
}

static void cut_all(char *s, const char *what, const char *with)
{
    size_t wl = strlen(what), nl = strlen(with);
    for (char *p = strstr(s, what); p; p = strstr(p + nl, what)) {
        memmove(p + nl, p + wl, strlen(p + wl) + 1);
        memcpy(p, with, nl);
    }
}

/* The demangled name with the C++11 ABI's marks removed, so both ABIs' names compare equal. */
static bool abi_neutral(demangle_fn dm, const char *mangled, char *out, size_t size)
{
    int status = 0;
    char *d = dm(mangled, NULL, NULL, &status);
    if (!d)
        return false;
    bool ok = sc_fmt(out, size, "%s", d);
    free(d);
    cut_all(out, "__cxx11::", "");
    cut_all(out, "[abi:cxx11]", "");
    cut_all(out, "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
            "std::string");
    return ok;
}

/* True when some defined symbol of the tree differs from mangled only by the C++11 ABI. Only runs
 * for the few symbols reported, so it may walk every definition. */
static bool differs_by_cxx11(const analysis *a, const char *mangled, demangle_fn dm)
{
    char want[4096], have[4096];
    if (!dm || strncmp(mangled, "_Z", 2) != 0 || !abi_neutral(dm, mangled, want, sizeof want))
        return false;
    size_t prefix = strlen(mangled);
    const char *marks[] = {"NSt7__cxx11", "B5cxx11", "Ss", "NKSs"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        const char *m = strstr(mangled, marks[i]);
        if (m && (size_t)(m - mangled) < prefix)
            prefix = (size_t)(m - mangled);
    }
    int tried = 0;
    for (int i = 0; i < a->count && tried < 200; i++) {
        if (!a->nodes[i]->opened)
            continue;
        const sc_elf_info *info = &a->nodes[i]->file->info;
        for (size_t j = 0; j < info->defined_count && tried < 200; j++) {
            const char *c = info->defined[j];
            if (strncmp(c, mangled, prefix) != 0 || strcmp(c, mangled) == 0)
                continue;
            tried++;
            if (abi_neutral(dm, c, have, sizeof have) && strcmp(have, want) == 0)
                return true;
        }
    }
    return false;
}

static void report_undefined(analysis *a, const node *n, const char *name)
{
    demangle_fn dm = demangler();
    int status = 0;
    char *pretty = (dm && strncmp(name, "_Z", 2) == 0) ? dm(name, NULL, NULL, &status) : NULL;
    bool cxx11 = differs_by_cxx11(a, name, dm);
    sc_finding(
        &a->res, "libs.undefined-symbol", SC_SEV_ERROR,
        cxx11 ? "the names differ only by the C++11 ABI (__cxx11): build both sides with the "
                "same _GLIBCXX_USE_CXX11_ABI setting (PyTorch wheels before 2.7 used 0)"
              : "the library was built against another version of its dependencies: use the "
                "matching versions, or rebuild it against these",
        "undefined symbol %s%s%s%s needed by %s: no library in the tree defines it%s",
        pretty ? pretty : name, pretty ? " (" : "", pretty ? name : "", pretty ? ")" : "", n->path,
        (!dm && strncmp(name, "_Z", 2) == 0) ? " (not demangled: no demangler)" : "");
    free(pretty);
}

/* True when an undefined symbol is someone else's concern: its provider is missing or unreadable
 * (already a finding; an unversioned symbol may come from any such library), or it is the Python
 * C API, which the interpreter provides to extension modules. */
static bool excused(const bool *provided, const sc_elf_undef *u, bool has_python, bool complete)
{
    if (u->verneed >= 0 && !provided[u->verneed])
        return true;
    if (u->verneed < 0 && !complete)
        return true;
    return !has_python && (strncmp(u->name, "Py", 2) == 0 || strncmp(u->name, "_Py", 3) == 0);
}

/* Puts o's definitions into the cache's index and hashes its undefined names, once per run: the
 * files of one package share most of their tree, so each analysis after the first only looks its
 * own undefined names up. */
static int index_obj(sc_libs_cache *c, cached_obj *o)
{
    const sc_elf_info *in = &o->file.info;
    if (o->indexed)
        return 0;
    o->links = calloc(in->defined_count + 1, sizeof *o->links);
    o->undef_hash = calloc(in->undefined_count + 1, sizeof *o->undef_hash);
    if (!o->links || !o->undef_hash)
        return -ENOMEM;
    for (size_t j = 0; j < in->undefined_count; j++)
        o->undef_hash[j] = sc_symset_hash(in->undefined[j].name);
    for (size_t j = 0; j < in->defined_count; j++) {
        uint64_t h = sc_symset_hash(in->defined[j]);
        def_link *l = &o->links[j], *head = sc_symset_get_hashed(&c->defs, in->defined[j], h);
        l->obj = o;
        if (head) {
            l->next = head->next;
            head->next = l;
        } else if (sc_symset_put_hashed(&c->defs, in->defined[j], h, l) < 0) {
            return -ENOMEM;
        }
    }
    o->indexed = true;
    return 0;
}

/* True when an object of this analysis's tree defines name. */
static bool tree_defines(const analysis *a, const char *name, uint64_t h)
{
    for (const def_link *l = sc_symset_get_hashed(&a->parsed->defs, name, h); l; l = l->next)
        if (l->obj->mark == a->gen)
            return true;
    return false;
}

/* The hash of n's j-th undefined name: computed once per run when the object is indexed. */
static uint64_t undef_hash(const node *n, size_t j)
{
    return n->obj->indexed ? n->obj->undef_hash[j]
                           : sc_symset_hash(n->file->info.undefined[j].name);
}

/* Collects the undefined symbols that need a definition: one small set to look every definition
 * of the tree up in, rather than a set of all definitions. */
static void wanted_symbols(analysis *a, sc_symset *wanted)
{
    bool has_python = false, complete = true;
    for (int i = 0; i < a->count; i++) {
        const node *n = a->nodes[i];
        has_python |=
            n->opened && n->file->info.soname && sc_starts_with(n->file->info.soname, "libpython");
        complete &= n->opened;
    }
    for (int i = 0; i < a->count; i++) {
        const node *n = a->nodes[i];
        /* whether each verneed entry's provider is in the tree: asked once per entry, not once
         * per symbol */
        bool *provided = n->opened ? calloc((size_t)n->file->info.verneed_count + 1, 1) : NULL;
        for (int v = 0; provided && v < n->file->info.verneed_count; v++)
            provided[v] = sc_symset_has(&a->provided, n->file->info.verneed[v].file);
        for (size_t j = 0; provided && j < n->file->info.undefined_count; j++)
            if (!excused(provided, &n->file->info.undefined[j], has_python, complete))
                sc_symset_put_hashed(wanted, n->file->info.undefined[j].name, undef_hash(n, j),
                                     NULL);
        free(provided);
    }
}

/* Fills defined with the wanted names some object of the tree defines. A cache shared by several
 * analyses indexes every definition once and looks each wanted name up; a single analysis
 * probes its small wanted set with every definition instead, which costs less than indexing. */
static void defined_wanted(analysis *a, const sc_symset *wanted, sc_symset *defined)
{
    if (!a->own_parsed && !a->parsed->index_failed) {
        for (size_t s = 0; s < wanted->cap; s++)
            if (wanted->slots[s] && tree_defines(a, wanted->slots[s], wanted->hashes[s]))
                sc_symset_put_hashed(defined, wanted->slots[s], wanted->hashes[s], NULL);
        return;
    }
    for (int i = 0; wanted->count && i < a->count; i++) {
        const node *n = a->nodes[i];
        for (size_t j = 0; n->opened && j < n->file->info.defined_count; j++)
            if (sc_symset_has(wanted, n->file->info.defined[j]))
                sc_symset_add(defined, n->file->info.defined[j]);
    }
}

static void check_undefined(analysis *a)
{
    sc_symset wanted = {0}, defined = {0}, reported = {0};
    if (!a->own_parsed) /* index once per run; out of memory: probe as a single analysis does */
        for (int i = 0; i < a->count && !a->parsed->index_failed; i++)
            if (a->nodes[i]->opened && index_obj(a->parsed, a->nodes[i]->obj) < 0)
                a->parsed->index_failed = true;
    wanted_symbols(a, &wanted);
    defined_wanted(a, &wanted, &defined);
    int total = 0;
    for (int i = 0; defined.count < wanted.count && i < a->count; i++) {
        const node *n = a->nodes[i];
        for (size_t j = 0; n->opened && j < n->file->info.undefined_count; j++) {
            const char *name = n->file->info.undefined[j].name;
            uint64_t h = undef_hash(n, j);
            if (!sc_symset_has_hashed(&wanted, name, h) ||
                sc_symset_has_hashed(&defined, name, h) || sc_symset_has_hashed(&reported, name, h))
                continue;
            sc_symset_put_hashed(&reported, name, h, NULL);
            if (++total <= MAX_UNDEF_FINDINGS)
                report_undefined(a, n, name);
        }
    }
    if (total > MAX_UNDEF_FINDINGS)
        sc_finding(&a->res, "libs.undefined-symbol", SC_SEV_ERROR, NULL,
                   "%d more undefined symbols not listed", total - MAX_UNDEF_FINDINGS);
    sc_symset_free(&wanted);
    sc_symset_free(&defined);
    sc_symset_free(&reported);
}

/* ---- mixed installs ------------------------------------------------------------------------ */

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

static void check_roots(analysis *a)
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

static void check_sonames(analysis *a)
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

/* ---- GPU code -------------------------------------------------------------------------------- */

static void read_offload(const sc_elf_file *f, sc_offload_list *list, const char **format)
{
    const sc_elf_span *h = &f->info.hip_fatbin, *nv = &f->info.nv_fatbin;
    const uint8_t *base = f->map;
    *format = NULL;
    if (h->present && h->offset <= f->size && h->size <= f->size - h->offset) {
        sc_offload_parse_hip(base + h->offset, (size_t)h->size, list);
        *format = list->compressed ? "clang-offload-bundle-compressed" : "clang-offload-bundle";
    } else if (h->present) {
        snprintf(list->problem, sizeof list->problem, ".hip_fatbin lies past the end of the file");
    }
    if (nv->present && nv->offset <= f->size && nv->size <= f->size - nv->offset) {
        sc_offload_parse_nv(base + nv->offset, (size_t)nv->size, list);
        *format = *format ? "clang-offload-bundle+nv-fatbin" : "nv-fatbin";
    } else if (nv->present) {
        snprintf(list->problem, sizeof list->problem, ".nv_fatbin lies past the end of the file");
    }
}

static void targets_text(const sc_offload_list *list, char *buf, size_t size)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < list->count && o < size; i++)
        o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", list->targets[i]);
}

static void check_amd_device(analysis *a, const node *f, const sc_offload_list *list,
                             const char *dev)
{
    bool any_amd = false;
    for (int i = 0; i < list->count; i++) {
        if (sc_offload_amd_match(list->targets[i], dev))
            return;
        any_amd |= sc_starts_with(list->targets[i], "gfx");
    }
    if (!any_amd)
        return;
    char have[2048];
    targets_text(list, have, sizeof have);
    sc_finding(
        &a->res, "libs.no-code-for-device", SC_SEV_ERROR,
        "rebuild for this architecture (--offload-arch / PYTORCH_ROCM_ARCH), or install a build "
        "that includes it; a code object with xnack/sramecc unspecified runs on either mode",
        "%s has no GPU code for %s (code objects: %s); the first kernel launch fails with "
        "hipErrorNoBinaryForGpu",
        f->path, dev, have);
}

static void check_cuda_device(analysis *a, const node *f, const sc_offload_list *list,
                              const char *dev)
{
    bool any_cuda = false;
    for (int i = 0; i < list->count; i++)
        any_cuda |=
            sc_starts_with(list->targets[i], "sm_") || sc_starts_with(list->targets[i], "compute_");
    if (!any_cuda)
        return;
    char have[2048];
    targets_text(list, have, sizeof have);
    sc_cuda_match m = sc_offload_cuda_match(list, dev);
    if (m == SC_CUDA_NO_CODE)
        sc_finding(&a->res, "libs.no-code-for-device", SC_SEV_ERROR,
                   "rebuild with -gencode for this compute capability, or install a build that "
                   "includes it",
                   "%s has no GPU code for %s (cubins and PTX: %s); kernels fail with "
                   "no kernel image / CUDA_ERROR_NO_BINARY_FOR_GPU",
                   f->path, dev, have);
    else if (m == SC_CUDA_PTX_ONLY)
        sc_finding(
            &a->res, "libs.ptx-jit-only", SC_SEV_WARN,
            "add a cubin for this architecture (-gencode arch=compute_XY,code=sm_XY) to avoid "
            "JIT compilation at start-up, which is slow and needs a new enough driver",
            "%s has no cubin for %s, only PTX the driver must JIT-compile (%s)", f->path, dev,
            have);
}

static cJSON *check_offload(analysis *a)
{
    const node *f = a->nodes[0];
    sc_offload_list list;
    memset(&list, 0, sizeof list);
    const char *format;
    read_offload(f->file, &list, &format);
    cJSON *off = cJSON_CreateObject();
    cJSON *targets = cJSON_AddArrayToObject(off, "targets");
    if (format)
        cJSON_AddStringToObject(off, "format", format);
    else
        cJSON_AddNullToObject(off, "format");
    cJSON_AddNumberToObject(off, "bundles", list.bundles);
    for (int i = 0; i < list.count; i++)
        cJSON_AddItemToArray(targets, cJSON_CreateString(list.targets[i]));
    if (list.problem[0])
        sc_finding(&a->res, "libs.malformed-offload", SC_SEV_WARN,
                   "the file may be truncated or damaged: reinstall it",
                   "%s: %s; targets listed so far: %d", f->path, list.problem, list.count);
    for (int i = 0; i < a->cfg->arch_count && list.count; i++) {
        const char *dev = a->cfg->archs[i];
        if (sc_starts_with(dev, "gfx"))
            check_amd_device(a, f, &list, dev);
        else if (sc_starts_with(dev, "sm_"))
            check_cuda_device(a, f, &list, dev);
    }
    sc_offload_list_free(&list);
    return off;
}

/* ---- output -------------------------------------------------------------------------------- */

static cJSON *library_json(const analysis *a, const node *n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", n->name);
    if (n->found) {
        cJSON_AddStringToObject(o, "path", n->path);
        cJSON_AddStringToObject(o, "realpath", n->realpath);
        cJSON_AddStringToObject(o, "root", n->root_path);
        cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(n->root_kind));
    } else {
        cJSON_AddNullToObject(o, "path");
        cJSON_AddNullToObject(o, "realpath");
        cJSON_AddNullToObject(o, "root");
        cJSON_AddNullToObject(o, "root_kind");
    }
    cJSON_AddStringToObject(o, "found_via", sc_found_via_name(n->via));
    if (n->entry && n->entry[0])
        cJSON_AddStringToObject(o, "search_entry", n->entry);
    else
        cJSON_AddNullToObject(o, "search_entry");
    cJSON_AddStringToObject(o, "needed_by", a->nodes[n->parent]->path);
    cJSON_AddNumberToObject(o, "depth", n->depth);
    return o;
}

static cJSON *file_json(analysis *a)
{
    const node *f = a->nodes[0];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", f->path);
    cJSON_AddStringToObject(o, "realpath", f->realpath);
    sc_fact_str(o, "soname", f->file->info.soname, "the file has no DT_SONAME");
    cJSON_AddStringToObject(o, "root", f->root_path);
    cJSON_AddStringToObject(o, "root_kind", sc_root_kind_name(f->root_kind));
    cJSON *libs = cJSON_AddArrayToObject(o, "libraries");
    for (int i = 1; i < a->count; i++)
        cJSON_AddItemToArray(libs, library_json(a, a->nodes[i]));
    return o;
}

int sc_libs_worst(const cJSON *file)
{
    int worst = -1;
    const cJSON *f;
    cJSON_ArrayForEach (f, cJSON_GetObjectItem(file, "findings")) {
        int sev = sc_severity_parse(cJSON_GetStringValue(cJSON_GetObjectItem(f, "severity")));
        if (sev > worst)
            worst = sev;
    }
    return worst;
}

static void analysis_free(analysis *a)
{
    for (int i = 0; a->nodes && i < a->count; i++) {
        node *n = a->nodes[i];
        free(n->path), free(n->realpath), free(n->origin);
        free(n->entry), free(n->source), free(n->root_path);
        free(n);
    }
    free(a->nodes);
    if (a->have_cache)
        sc_ldcache_free(&a->cache);
    sc_symset_free(&a->names);
    sc_symset_free(&a->files);
    sc_symset_free(&a->provided);
    sc_result_free(&a->res);
    if (a->own_parsed)
        sc_libs_cache_free(a->parsed);
}

static void run_checks(analysis *a, cJSON *out)
{
    check_missing(a);
    check_versions(a);
    if (!a->cfg->no_symbol_check)
        check_undefined(a);
    check_roots(a);
    check_sonames(a);
    cJSON_AddItemToObject(out, "offload", check_offload(a));
    if (a->count >= MAX_NODES)
        sc_finding(&a->res, "libs.tree-too-large", SC_SEV_WARN, NULL,
                   "the dependency tree was cut at %d libraries", MAX_NODES);
}

int sc_libs_analyze(const sc_root *root, const char *path, const sc_libs_config *cfg, cJSON **out,
                    sc_error *err)
{
    static const sc_libs_config defaults;
    analysis a;
    memset(&a, 0, sizeof a);
    *out = NULL;
    a.root = root;
    a.cfg = cfg ? cfg : &defaults;
    a.nodes = calloc(MAX_NODES, sizeof *a.nodes);
    a.parsed = a.cfg->cache;
    if (!a.parsed) {
        a.parsed = sc_libs_cache_new();
        a.own_parsed = true;
    }
    if (!a.nodes || !a.parsed || sc_result_init(&a.res) < 0) {
        free(a.nodes);
        if (a.own_parsed)
            sc_libs_cache_free(a.parsed);
        return sc_error_set(err, -ENOMEM, "out of memory");
    }
    if (a.parsed->count > CACHE_LIMIT)
        cache_clear(a.parsed);
    a.gen = ++a.parsed->generation;
    int rc = open_root_file(&a, path, err);
    if (rc < 0)
        goto done;
    sc_error cerr;
    a.have_cache = sc_ldcache_load(root, &a.cache, &cerr) == 0;
    const sc_elf_info *info = &a.nodes[0]->file->info;
    a.resolver = (sc_ldresolver){.root = root,
                                 .ld_library_path = a.cfg->ld_library_path,
                                 .cache = a.have_cache ? &a.cache : NULL,
                                 .main = &a.nodes[0]->ld,
                                 .elf_class = info->elf_class,
                                 .machine = info->machine};
    build_tree(&a);
    *out = file_json(&a);
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

/* ---- the probes' shared part ------------------------------------------------------------------
 */

static int archs_from(const cJSON *facts, const char *key, const char **archs, int n, int max)
{
    const cJSON *d;
    cJSON_ArrayForEach (d, cJSON_GetObjectItem(facts, "devices")) {
        const char *a = cJSON_GetStringValue(cJSON_GetObjectItem(d, key));
        bool dup = false;
        for (int i = 0; a && i < n; i++)
            dup |= strcmp(archs[i], a) == 0;
        if (a && !dup && n < max)
            archs[n++] = a;
    }
    return n;
}

int sc_libs_run_archs(const sc_ctx *ctx, const char **archs, int max)
{
    int n = 0;
    for (int i = 0; i < ctx->opt->archs.count && n < max; i++)
        archs[n++] = ctx->opt->archs.items[i];
    if (n == 0)
        n = archs_from(sc_ctx_facts(ctx, "runtime.hip"), "arch", archs, n, max);
    if (n == 0)
        n = archs_from(sc_ctx_facts(ctx, "driver.amd"), "gfx_target", archs, n, max);
    return n;
}

void sc_libs_probe_file(const sc_ctx *ctx, sc_result *res, const char *path, cJSON *files)
{
    sc_libs_probe_file_cached(ctx, res, path, files, NULL);
}

void sc_libs_probe_file_cached(const sc_ctx *ctx, sc_result *res, const char *path, cJSON *files,
                               sc_libs_cache *cache)
{
    const char *archs[SC_LIBS_MAX_ARCHS];
    sc_libs_config cfg = {.archs = archs,
                          .arch_count = sc_libs_run_archs(ctx, archs, SC_LIBS_MAX_ARCHS),
                          .ld_library_path = ctx->offline ? NULL : getenv("LD_LIBRARY_PATH"),
                          .cache = cache};
    cJSON *file = NULL;
    sc_error err = {0};
    if (sc_libs_analyze(ctx->root, path, &cfg, &file, &err) < 0) {
        sc_finding(res, "libs.unreadable", SC_SEV_ERROR,
                   "check that the file exists, is readable by this user and is a complete ELF "
                   "shared object (reinstall it if truncated)",
                   "%s", err.message);
        return;
    }
    cJSON *f;
    cJSON_ArrayForEach (f, cJSON_GetObjectItem(file, "findings"))
        cJSON_AddItemToArray(res->findings, cJSON_Duplicate(f, true));
    cJSON_AddItemToArray(files, file);
}
