/* The search of glibc's loader (elf/dl-load.c) for one DT_NEEDED name, reading files only: a name
 * with a slash as it is; DT_RPATH of the requester and its loaders when the requester has no
 * DT_RUNPATH; LD_LIBRARY_PATH; the requester's DT_RUNPATH; ld.so.cache and the default
 * directories unless DF_1_NODEFLIB. $ORIGIN, $LIB and $PLATFORM are expanded. Every candidate is
 * opened inside the root, and one of another ELF class or machine is skipped, as ld.so does. */
#ifndef SC_LDRESOLVE_H
#define SC_LDRESOLVE_H

#include <limits.h>
#include <stdint.h>

#include "sc_ldcache.h"
#include "sc_sysroot.h"

typedef enum {
    SC_VIA_DIRECT,
    SC_VIA_RPATH,
    SC_VIA_LD_LIBRARY_PATH,
    SC_VIA_RUNPATH,
    SC_VIA_CACHE,
    SC_VIA_DEFAULT,
    SC_VIA_NOT_FOUND
} sc_found_via;

/* An object of the loader chain: the requester, and through loader the objects that loaded it up
 * to the main object (whose loader is NULL). */
typedef struct sc_ld_object {
    const char *rpath;   /* DT_RPATH or NULL */
    const char *runpath; /* DT_RUNPATH or NULL */
    const char *origin;  /* the directory $ORIGIN expands to */
    uint64_t flags_1;    /* DT_FLAGS_1 */
    const char *name;    /* for the "search-path entry" evidence */
    const struct sc_ld_object *loader;
} sc_ld_object;

typedef struct {
    const sc_root *root;
    const char *ld_library_path; /* NULL: unset */
    const sc_ldcache *cache;     /* NULL: no cache */
    const sc_ld_object *main;    /* the main object (its DT_RPATH ends every chain) */
    uint8_t elf_class;           /* candidates must match the main object's class and machine */
    uint16_t machine;
    const char *const *default_dirs; /* NULL-terminated; NULL: Debian's multiarch defaults */
} sc_ldresolver;

typedef struct {
    char path[PATH_MAX]; /* the path as the loader would open it */
    sc_found_via via;
    char entry[PATH_MAX];       /* the search-path entry that matched, expanded ("" for cache) */
    char source[PATH_MAX + 32]; /* where that entry came from: "RPATH of libx.so", ... */
    int fd; /* the file, open read-only (the caller closes it); -1 if none. For a FIFO, socket or
             * device, where ld.so would stop, an O_PATH descriptor: never read from it */
} sc_ld_hit;

/* "direct", "rpath", "ld_library_path", "runpath", "cache", "default", "not_found". */
const char *sc_found_via_name(sc_found_via via);
/* Finds name for requester req. Returns 0 with hit filled, or -ENOENT (hit->via NOT_FOUND). */
int sc_ldresolve(const sc_ldresolver *r, const sc_ld_object *req, const char *name, sc_ld_hit *hit);
/* Expands $ORIGIN/${ORIGIN}, $LIB and $PLATFORM in one search-path entry into out; returns false
 * when the result does not fit. */
bool sc_ld_expand(const char *entry, size_t len, const char *origin, char *out, size_t size);

#endif
