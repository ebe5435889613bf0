/* The search of glibc's loader (elf/dl-load.c) for one DT_NEEDED name, reading files only: a name
 * with a slash as it is; DT_RPATH of the requester and its loaders when the requester has no
 * DT_RUNPATH; LD_LIBRARY_PATH; the requester's DT_RUNPATH; ld.so.cache and the default
 * directories unless DF_1_NODEFLIB. $ORIGIN, $LIB and $PLATFORM are expanded, and the
 * hardware-capability subdirectories of each directory searched before it, as the target's loader
 * does (sc_ldtarget.h). Every candidate is opened inside the root; one of another ELF class or
 * machine is skipped, as ld.so does, and any other file that opens ends the search there (ld.so
 * fails on it: "invalid ELF header").
 * The lookups of one analysis share a search state that bounds their work: each list parsed once
 * with each directory once, a directory that does not exist checked once, one that misses often
 * listed once, and budgets of directories per list, file-system checks and search steps. */
#ifndef SC_LDRESOLVE_H
#define SC_LDRESOLVE_H

#include <limits.h>
#include <stdint.h>

#include "sc_ldcache.h"
#include "sc_ldtarget.h"
#include "sc_sysroot.h"

typedef enum {
    SC_VIA_DIRECT,
    SC_VIA_RPATH,
    SC_VIA_LD_LIBRARY_PATH,
    SC_VIA_RUNPATH,
    SC_VIA_CACHE,
    SC_VIA_DEFAULT,
    SC_VIA_NOT_FOUND,
    SC_VIA_NOT_SEARCHED, /* a budget of the search ran out before this lookup ended */
    SC_VIA_CONF          /* no ld.so.cache: a directory of /etc/ld.so.conf, standing in for it */
} sc_found_via;

/* The bounds of one analysis's search. glibc has none; they keep a crafted file (50,000 RPATH
 * entries, a chain of libraries each with its own RPATH) from costing minutes, and are far above
 * real trees (libtorch_cpu: a few hundred checks). */
#define SC_LD_MAX_ENTRIES 1024      /* distinct directories of one search list searched */
#define SC_LD_MAX_CHECKS 100000     /* file-system checks: opens, directory checks and listings */
#define SC_LD_MAX_STEPS (1ul << 26) /* search-list entries visited, over all lookups */

typedef struct sc_ld_search sc_ld_search;
typedef struct sc_ld_list sc_ld_list;

/* What the search of one analysis did, and where it was cut. */
typedef struct {
    unsigned long checks, steps;
    int lists_cut;                 /* search lists with more than SC_LD_MAX_ENTRIES directories */
    char first_cut[PATH_MAX + 64]; /* the first of them: "RPATH of /x/liba.so (50000 entries)" */
    const char *spent;             /* NULL, or the budget that ran out */
    int gave_up;                   /* lookups given up because it ran out */
    char given_up[256];            /* the first names given up, comma-separated */
} sc_ld_budget;

/* An object of the loader chain: the requester, and through loader the objects that loaded it up
 * to the main object (whose loader is NULL). */
typedef struct sc_ld_object {
    const char *rpath;   /* DT_RPATH or NULL */
    const char *runpath; /* DT_RUNPATH or NULL */
    const char *origin;  /* the directory $ORIGIN expands to */
    uint64_t flags_1;    /* DT_FLAGS_1 */
    const char *name;    /* for the "search-path entry" evidence */
    const struct sc_ld_object *loader;
    const struct sc_ld_lists *lists; /* from sc_ld_search_prepare; NULL: parsed at each lookup */
} sc_ld_object;

typedef struct {
    const sc_root *root;
    const char *ld_library_path; /* NULL: unset */
    const sc_ldcache *cache;     /* NULL: no cache */
    const sc_ld_object *main;    /* the main object (its DT_RPATH ends every chain) */
    uint8_t elf_class;           /* candidates must match the main object's class and machine */
    uint16_t machine;
    const char *const *default_dirs; /* NULL-terminated; NULL: the target's loader's */
    /* Where the root has no cache: the directories ldconfig would have put in it (from
     * /etc/ld.so.conf, sc_ldconf.h), searched in its place; NULL-terminated, NULL for none. */
    const char *const *conf_dirs;
    sc_ld_search *search; /* shared by the lookups; NULL: a private one per lookup */
    /* The loader of the target: its default directories, $LIB, $PLATFORM and subdirectories.
     * NULL: the search's (sc_ld_search_set_target), else found in the root for elf_class and
     * machine (the root's own programs' when elf_class is 0). */
    const sc_ld_target *target;
} sc_ldresolver;

typedef struct {
    char path[PATH_MAX]; /* the path as the loader would open it */
    sc_found_via via;
    char entry[PATH_MAX];       /* the search-path entry that matched, expanded ("" for cache) */
    char source[PATH_MAX + 32]; /* where that entry came from: "RPATH of libx.so", ... */
    int fd; /* the file, open read-only (the caller closes it); -1 if none. For a FIFO, socket or
             * device, where ld.so would stop, an O_PATH descriptor: never read from it */
} sc_ld_hit;

/* "direct", "rpath", "ld_library_path", "runpath", "cache", "default", "not_found",
 * "not_searched", "ld.so.conf". */
const char *sc_found_via_name(sc_found_via via);
/* Finds name for requester req. Returns 0 with hit filled, -ENOENT (hit->via NOT_FOUND), or
 * -EDQUOT when a budget of the search ran out (hit->via NOT_SEARCHED). */
int sc_ldresolve(const sc_ldresolver *r, const sc_ld_object *req, const char *name, sc_ld_hit *hit);

/* A search state for the lookups of one analysis under root; NULL when out of memory. */
sc_ld_search *sc_ld_search_new(const sc_root *root);
/* Frees the state, its directories and lists (NULL is allowed). */
void sc_ld_search_free(sc_ld_search *s);
/* Parses obj's DT_RPATH and DT_RUNPATH once for all its lookups (sets obj->lists); 0 or -ENOMEM
 * (the lists are then parsed at each lookup). */
int sc_ld_search_prepare(sc_ld_search *s, sc_ld_object *obj);
/* What the search did so far and where it was cut. */
const sc_ld_budget *sc_ld_search_budget(const sc_ld_search *s);
/* Expands $ORIGIN/${ORIGIN}, $LIB and $PLATFORM in one search-path entry into out, as the
 * target's loader expands them; returns false when the result does not fit. */
bool sc_ld_expand_for(const sc_ld_target *t, const char *entry, size_t len, const char *origin,
                      char *out, size_t size);
/* sc_ld_expand_for with sc_ld_target_default(). */
bool sc_ld_expand(const char *entry, size_t len, const char *origin, char *out, size_t size);
/* The loader the search's lists are parsed for (set before any list is parsed: $LIB, $PLATFORM
 * and the subdirectories depend on it); without one, sc_ldresolve sets the resolver's. */
void sc_ld_search_set_target(sc_ld_search *s, const sc_ld_target *t);

#endif
