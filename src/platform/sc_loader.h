/* Which file would dlopen(NAME) pick: the loader as this program sees it inside a root
 * (LD_LIBRARY_PATH, the root's ld.so.cache, the default directories), on the shared resolver
 * (sc_ldresolve.h), reading files only. The runtime probes ask it for their runtime library (the
 * names of the backend descriptor's runtime_libraries) and the libraries layer resolves its trees
 * with its set-up, so every layer names the same file. */
#ifndef SC_LOADER_H
#define SC_LOADER_H

#include <limits.h>
#include <stdbool.h>

#include "sc_backend.h"
#include "sc_ldcache.h"
#include "sc_ldconf.h"
#include "sc_ldresolve.h"
#include "sc_roots.h"
#include "sc_sysroot.h"

/* The loader of one root and search path. */
typedef struct {
    const sc_root *root;
    const char *ld_library_path; /* NULL: unset */
    sc_ldcache cache;
    bool have_cache;
    sc_ldconf conf;       /* without a cache: what ldconfig would have put in one */
    sc_ld_object program; /* the main program: no RPATH or RUNPATH of its own */
    sc_ld_target target;  /* the loader of the root's own programs (this one's, live) */
    sc_roots *roots;      /* classifies the picks; made on first use */
} sc_loader;

/* What the loader would open for a name. */
typedef struct {
    bool found;
    char name[256];          /* the name that matched: "libamdhip64.so.5" */
    char path[PATH_MAX];     /* the directory entry the loader opens */
    char realpath[PATH_MAX]; /* the file behind it */
    sc_found_via via;
    const char *found_via; /* its spelling: "ld_library_path", "cache", "ld.so.conf"... */
    char entry[PATH_MAX];  /* the search-path entry that matched; "" for the cache */
    char source[PATH_MAX +
                32];      /* where the entry came from: "LD_LIBRARY_PATH", "/etc/ld.so.cache" */
    sc_install_root root; /* the install the file belongs to */
} sc_loader_pick;

/* Sets l up for root and ld_library_path (kept by pointer): reads the root's ld.so.cache, or
 * without one its /etc/ld.so.conf. Returns 0 or -ENOMEM (l is then closed). */
int sc_loader_open(sc_loader *l, const sc_root *root, const char *ld_library_path);
/* Frees what the loader holds. */
void sc_loader_close(sc_loader *l);
/* A resolver for objects of elf_class and machine whose main object is main (NULL: the program),
 * sharing search (NULL: private per lookup). */
sc_ldresolver sc_loader_resolver(const sc_loader *l, const sc_ld_object *main, uint8_t elf_class,
                                 uint16_t machine, sc_ld_search *search);
/* The file dlopen(name) would open in this program; false (pick->found false) when none. */
bool sc_loader_find(sc_loader *l, const char *name, sc_loader_pick *pick);
/* The first of names (NULL-terminated, in the order a probe tries them) the loader would find. */
bool sc_loader_find_first(sc_loader *l, const char *const *names, sc_loader_pick *pick);
/* The backend's runtime library as the loader would pick it: the first of its descriptor's
 * runtime_libraries found, for root and ld_library_path. */
bool sc_loader_pick_runtime(const sc_root *root, const char *ld_library_path,
                            const sc_backend_desc *desc, sc_loader_pick *pick);

#endif
