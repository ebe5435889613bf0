/* The install-root classifier: walks up from a file's directory to the directory that holds a
 * backend's root markers, a conda environment's conda-meta/, or is a Python package, reading
 * through the root. What each directory holds, and the answer for each directory asked about, is
 * kept: the files of one tree share a few directories. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sc_elf.h"
#include "sc_roots.h"
#include "sc_util.h"

#define MAX_DEPTH 64      /* directories walked up from one; deeper ones fall to the path rules */
#define MAX_ENTRIES 16384 /* directories kept; beyond, the cache starts afresh (memory bound) */
#define MAX_MEMO 32       /* distinct marker paths checked in one directory */

/* One directory: what it holds (once known), and the answer for files in it (once asked). */
typedef struct {
    char *path;
    bool marks_known, conda;
    const sc_backend_desc *backend; /* the backend whose marker it holds; NULL: none */
    const sc_root_marker *marker;
    sc_install_root *answer;
} dir_entry;

struct sc_roots {
    const sc_root *root;
    sc_symset by_path; /* directory -> dir_entry */
    dir_entry **entries;
    size_t count, cap;
    unsigned long checks;
};

sc_roots *sc_roots_new(const sc_root *root)
{
    sc_roots *r = calloc(1, sizeof *r);
    if (r)
        r->root = root;
    return r;
}

static void forget_all(sc_roots *r)
{
    for (size_t i = 0; i < r->count; i++) {
        free(r->entries[i]->path), free(r->entries[i]->answer);
        free(r->entries[i]);
    }
    r->count = 0;
    sc_symset_free(&r->by_path);
    memset(&r->by_path, 0, sizeof r->by_path);
}

void sc_roots_free(sc_roots *roots)
{
    if (!roots)
        return;
    forget_all(roots);
    free(roots->entries);
    free(roots);
}

const sc_root *sc_roots_root(const sc_roots *roots)
{
    return roots->root;
}

unsigned long sc_roots_checks(const sc_roots *roots)
{
    return roots->checks;
}

/* The entry of dir, made on first use; NULL when out of memory (the caller works uncached). */
static dir_entry *entry_of(sc_roots *r, const char *dir)
{
    dir_entry *e = sc_symset_get(&r->by_path, dir);
    if (e)
        return e;
    if (r->count == MAX_ENTRIES)
        forget_all(r);
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        dir_entry **grown = realloc(r->entries, cap * sizeof *grown);
        if (!grown)
            return NULL;
        r->entries = grown;
        r->cap = cap;
    }
    e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(dir)) || sc_symset_put(&r->by_path, e->path, e) < 0) {
        if (e)
            free(e->path);
        free(e);
        return NULL;
    }
    r->entries[r->count++] = e;
    return e;
}

/* Whether dir/rel exists, checked once per directory through memo. */
typedef struct {
    const char *rel[MAX_MEMO];
    bool there[MAX_MEMO];
    int n;
} memo;

static bool exists_in(sc_roots *r, memo *m, const char *dir, const char *rel)
{
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->rel[i], rel) == 0)
            return m->there[i];
    char path[PATH_MAX];
    bool there = sc_fmt(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", rel) &&
                 (r->checks++, sc_root_exists(r->root, path));
    if (m->n < MAX_MEMO) {
        m->rel[m->n] = rel;
        m->there[m->n++] = there;
    }
    return there;
}

static bool marker_matches(sc_roots *r, memo *m, const char *dir, const sc_root_marker *mk)
{
    for (const char *const *p = mk->all; p && *p; p++)
        if (!exists_in(r, m, dir, *p))
            return false;
    for (const char *const *p = mk->any; p && *p; p++)
        if (exists_in(r, m, dir, *p))
            return true;
    return mk->any == NULL;
}

/* Reads what dir holds: the first backend marker that matches, in table order, and whether it is
 * a conda environment. */
static void read_marks(sc_roots *r, dir_entry *e)
{
    memo m = {.n = 0};
    char meta[PATH_MAX];
    struct stat st;
    e->marks_known = true;
    e->conda = sc_fmt(meta, sizeof meta, "%s/conda-meta", e->path) &&
               (r->checks++, sc_root_stat(r->root, meta, &st, true) == 0) && S_ISDIR(st.st_mode);
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        for (const sc_root_marker *mk = (*b)->root_markers; mk && mk->kind; mk++)
            if (marker_matches(r, &m, e->path, mk)) {
                e->backend = *b;
                e->marker = mk;
                return;
            }
}

/* The entry of dir with its marks read; a stack entry when out of memory. */
static const dir_entry *marks_of(sc_roots *r, const char *dir, dir_entry *spare)
{
    dir_entry *e = entry_of(r, dir);
    if (!e) {
        memset(spare, 0, sizeof *spare);
        spare->path = (char *)dir;
        e = spare;
    }
    if (!e->marks_known)
        read_marks(r, e);
    return e;
}

/* The sysroot's top and /usr are nobody's install root: markers there (Debian's HIP puts
 * bin/hipcc and share/hip/version under /usr) say nothing about one install. */
static bool is_top(const char *dir)
{
    return dir[0] == '\0' || strcmp(dir, "/") == 0 || strcmp(dir, "/usr") == 0;
}

static void to_parent(char *dir)
{
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        dir[0] = '\0';
}

/* True when dir is a package directory of site-packages or dist-packages. */
static bool is_python_package(const char *dir)
{
    char parent[PATH_MAX];
    sc_path_dirname(dir, parent, sizeof parent);
    return sc_ends_with(parent, "/site-packages") || sc_ends_with(parent, "/dist-packages");
}

static void set_root(sc_install_root *out, sc_root_kind kind, const char *dir)
{
    out->kind = kind;
    out->stack = NULL;
    snprintf(out->path, sizeof out->path, "%s", dir);
}

/* out for the marked directory dir (entry e): the outermost directory above it holding a marker
 * of the same backend, as a DTK holds a hip/ that looks like a ROCm; never past a Python package
 * or a conda environment (/opt/conda/envs/x is not the base environment /opt/conda). */
static void marked_root(sc_roots *r, const char *dir, const dir_entry *e, sc_install_root *out)
{
    char up[PATH_MAX];
    const sc_root_marker *mk = e->marker;
    const sc_backend_desc *backend = e->backend; /* e may go when the cache starts afresh */
    bool bounded = e->conda;
    snprintf(out->path, sizeof out->path, "%s", dir);
    snprintf(up, sizeof up, "%s", dir);
    for (int depth = 0; !bounded && depth < MAX_DEPTH && (to_parent(up), !is_top(up)); depth++) {
        dir_entry spare;
        const dir_entry *a = marks_of(r, up, &spare);
        if ((bounded = a->conda || is_python_package(up)))
            break;
        if (a->backend == backend) {
            mk = a->marker;
            snprintf(out->path, sizeof out->path, "%s", up);
        }
    }
    out->kind = sc_root_kind_by_name(mk->kind);
    out->stack = mk->outside_stack ? NULL : backend;
}

/* The path rules for a directory: they take paths of files, so they get "dir/". */
static void path_rules_of_dir(const char *dir, sc_install_root *out)
{
    char as_file[PATH_MAX + 2];
    snprintf(as_file, sizeof as_file, "%s/", strcmp(dir, "/") ? dir : "");
    sc_install_root_of(as_file, out);
}

/* Walks up from the real directory real; the path rules when nothing marks a root. */
static void walk(sc_roots *r, const char *real, sc_install_root *out)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", real);
    for (int depth = 0; depth < MAX_DEPTH && !is_top(dir); depth++, to_parent(dir)) {
        if (is_python_package(dir)) {
            set_root(out, SC_ROOT_PYTHON, dir);
            return;
        }
        dir_entry spare;
        const dir_entry *e = marks_of(r, dir, &spare);
        if (e->backend) {
            marked_root(r, dir, e, out);
            return;
        }
        if (e->conda) {
            set_root(out, SC_ROOT_CONDA, dir);
            return;
        }
    }
    path_rules_of_dir(real, out);
}

void sc_roots_of_dir(sc_roots *r, const char *dir, sc_install_root *out)
{
    if (!r || dir[0] != '/') {
        path_rules_of_dir(dir, out);
        return;
    }
    const dir_entry *known = sc_symset_get(&r->by_path, dir);
    if (known && known->answer) {
        *out = *known->answer;
        return;
    }
    char real[PATH_MAX];
    r->checks++;
    if (sc_root_realpath(r->root, dir, real, sizeof real) < 0)
        snprintf(real, sizeof real, "%s", dir);
    walk(r, real, out);
    dir_entry *e = entry_of(r, dir); /* after the walk, which may have started the cache afresh */
    if (e && (e->answer || (e->answer = malloc(sizeof *e->answer)) != NULL))
        *e->answer = *out;
}

void sc_roots_of(sc_roots *r, const char *path, sc_install_root *out)
{
    char dir[PATH_MAX];
    sc_path_dirname(path, dir, sizeof dir);
    /* a module file directly in site-packages is its own package */
    if (!r || sc_ends_with(dir, "/site-packages") || sc_ends_with(dir, "/dist-packages")) {
        sc_install_root_of(path, out);
        return;
    }
    sc_roots_of_dir(r, dir, out);
}

void sc_install_root_in(const sc_root *root, const char *path, sc_install_root *out)
{
    sc_roots *r = sc_roots_new(root);
    sc_roots_of(r, path, out);
    sc_roots_free(r);
}
