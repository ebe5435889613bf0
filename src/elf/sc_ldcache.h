/* /etc/ld.so.cache read from a buffer, as glibc's loader reads it: the new format
 * ("glibc-ld.so.cache1.1"), and the legacy one ("ld.so-1.7.0") with or without the new table
 * embedded after it. Entries keep pointers into the buffer, which must outlive the cache. */
#ifndef SC_LDCACHE_H
#define SC_LDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "sc_sysroot.h"
#include "sc_types.h"

/* Entry flags as ldconfig writes them. */
#define SC_LDCACHE_ELF_LIBC6 0x0003
#define SC_LDCACHE_X8664 0x0300
#define SC_LDCACHE_AARCH64 0x0a00
#define SC_LDCACHE_TYPE_MASK 0x00ff
#define SC_LDCACHE_ARCH_MASK 0xff00

typedef struct {
    const char *key;   /* the soname */
    const char *value; /* the path */
    int32_t flags;
    uint64_t hwcap;
} sc_ldcache_entry;

typedef struct {
    char *owned; /* the file's bytes when read by sc_ldcache_load */
    sc_ldcache_entry *entries;
    size_t count;
    size_t *order;      /* entry indices sorted by key, then by position */
    const char *format; /* "new", "legacy", "legacy+new" */
} sc_ldcache;

/* Parses a cache image. Entries whose strings lie outside the buffer are dropped.
 * Returns 0, or -EINVAL (not a cache, truncated) / -ENOMEM with err filled. */
int sc_ldcache_parse(const char *buf, size_t size, sc_ldcache *cache, sc_error *err);
/* Reads and parses /etc/ld.so.cache inside root (at most 64 MiB). */
int sc_ldcache_load(const sc_root *root, sc_ldcache *cache, sc_error *err);
/* The path of soname for objects with these flags (SC_LDCACHE_ELF_LIBC6 | arch), or NULL.
 * Like glibc, the first matching entry wins; entries for a glibc-hwcaps subdirectory are only
 * used when no plain entry exists. */
const char *sc_ldcache_lookup(const sc_ldcache *cache, const char *soname, int32_t flags);
/* The path of soname as a loader that searches these hardware-capability subdirectories (best
 * first, NULL-terminated: "glibc-hwcaps/x86-64-v3", "tls", "x86_64") picks it: the entry in the
 * best of them that has one, else the plain entry; an entry of a subdirectory the loader does not
 * search is passed over. subdirs NULL: not known, as sc_ldcache_lookup. */
const char *sc_ldcache_lookup_subdirs(const sc_ldcache *cache, const char *soname, int32_t flags,
                                      const char *const *subdirs);
/* The entry flags the loader requires for an ELF object of this class and machine; 0 when the
 * cache format has no flag for it (then any libc6 entry is accepted). */
int32_t sc_ldcache_flags_for(uint8_t elf_class, uint16_t machine);
/* Frees the cache. */
void sc_ldcache_free(sc_ldcache *cache);

#endif
