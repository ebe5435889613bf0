/* What the files of the libraries analysis share: one object of the dependency tree, the cache of
 * parsed files and the state of one analysis. Private to src/libs*.c; the API is sc_libs.h. */
#ifndef SC_LIBS_INTERNAL_H
#define SC_LIBS_INTERNAL_H

#include "sc_elf.h"
#include "sc_ldresolve.h"
#include "sc_libs.h"
#include "sc_loader.h"
#include "sc_probe.h"
#include "sc_roots.h"
#include "sc_util.h"

#define MAX_NODES 4096 /* objects of one tree; beyond, the tree is cut (libs.tree-too-large) */

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
    const sc_backend_desc *stack; /* the GPU stack it belongs to (sc_roots_stack_of), or NULL */
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
    sc_roots *roots; /* the install-root classifier of the analyses' root, made on first use */
};

typedef struct {
    const sc_root *root;
    const sc_libs_config *cfg;
    node **nodes;
    int count;
    sc_loader loader; /* the root's cache (or ld.so.conf stand-in) and search path */
    bool have_loader;
    sc_ldresolver resolver;
    sc_ld_target target;   /* the loader of the root, for the file's class and machine */
    sc_ld_search *search;  /* the resolver's: directories, lists and budgets of this analysis */
    sc_symset names;       /* names and sonames already loaded */
    sc_symset files;       /* real paths already loaded */
    sc_symset provided;    /* names and sonames of the objects opened -> their node */
    sc_result res;         /* collects the findings */
    sc_libs_cache *parsed; /* the parsed files, shared with other analyses of the run */
    bool own_parsed;       /* made for this analysis alone */
    unsigned gen;          /* this analysis's generation in the cache */
} analysis;

/* Drops every object of the cache, keeping its generation count. */
void sc_libs_cache_clear(sc_libs_cache *c);
/* The cache's install-root classifier for root (made, or made afresh for another root); NULL when
 * out of memory. */
sc_roots *sc_libs_cache_roots(sc_libs_cache *c, const sc_root *root);
/* The parsed file at path (real path real, open as fd when >= 0), from the cache or parsed now
 * and cached. NULL with err filled when it cannot be read as ELF. */
cached_obj *sc_libs_cache_open(analysis *a, const char *path, const char *real, int fd,
                               unsigned parts, sc_error *err);
/* Indexes o's definitions and hashes its undefined names, once per run; 0 or -ENOMEM. */
int sc_libs_cache_index(sc_libs_cache *c, cached_obj *o);

/* Opens the inspected file as node 0; 0 or a negative errno with err filled. */
int sc_libs_open_file(analysis *a, const char *path, sc_error *err);
/* Adds every library the loader would map, breadth first. */
void sc_libs_build_tree(analysis *a);

/* The checks of a built tree; each adds its findings to a->res. */
/* libs.missing-library and libs.unreadable: needed names not found, or found but not ELF. */
void sc_libs_check_missing(analysis *a);
/* libs.search-budget: the search was cut (a list too long, or a budget spent). */
void sc_libs_check_search(analysis *a);
/* libs.missing-symbol-version: a required version its provider does not define. */
void sc_libs_check_versions(analysis *a);
/* libs.undefined-symbol: undefined names no object of the tree defines. */
void sc_libs_check_undefined(analysis *a);
/* libs.mixed-roots: libraries of one GPU stack from two install roots. */
void sc_libs_check_roots(analysis *a);
/* libs.mixed-roots: two versions (sonames) of one library in one tree. */
void sc_libs_check_sonames(analysis *a);
/* The inspected file's GPU code checked against the target devices: the "offload" object. */
cJSON *sc_libs_check_offload(analysis *a);

/* The "file" object of the analysis: the file and its libraries, without findings. */
cJSON *sc_libs_file_json(analysis *a);

#endif
