/* /etc/ld.so.cache from a buffer. String offsets are relative to the new table's header (which is
 * the file's start in the new format), or to the end of the legacy entry array in the legacy-only
 * format. Counts come from the file and are checked against its size before any allocation. */
#include "sc_ldcache.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sc_bytes.h"

#define NEW_MAGIC "glibc-ld.so.cache1.1"
#define OLD_MAGIC "ld.so-1.7.0"
#define NEW_HEADER 48
#define NEW_ENTRY 24
#define OLD_HEADER 16 /* magic[11], padding, u32 nlibs */
#define OLD_ENTRY 12
#define SC_LDCACHE_MAX_RANK 1000 /* the rank of a subdirectory when none are known */

/* The NUL-terminated string at base+off, or NULL when it does not end inside the buffer. */
static const char *str_at(const char *buf, size_t size, size_t base, uint64_t off)
{
    if (base > size || off >= size - base)
        return NULL;
    const char *s = buf + base + off;
    return memchr(s, '\0', size - base - off) ? s : NULL;
}

static int parse_new(const char *buf, size_t size, size_t at, sc_ldcache *cache, sc_error *err)
{
    if (size < at || size - at < NEW_HEADER || memcmp(buf + at, NEW_MAGIC, 20) != 0)
        return sc_error_set(err, -EINVAL, "not a glibc ld.so.cache (bad magic or truncated)");
    uint64_t n = sc_rd32(buf + at + 20);
    if (n > (size - at - NEW_HEADER) / NEW_ENTRY)
        return sc_error_set(err, -EINVAL, "ld.so.cache claims %llu entries, more than fit",
                            (unsigned long long)n);
    cache->entries = calloc(n ? n : 1, sizeof *cache->entries);
    if (!cache->entries)
        return sc_error_set(err, -ENOMEM, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        const char *e = buf + at + NEW_HEADER + i * NEW_ENTRY;
        sc_ldcache_entry *out = &cache->entries[cache->count];
        out->flags = (int32_t)sc_rd32(e);
        out->key = str_at(buf, size, at, sc_rd32(e + 4));
        out->value = str_at(buf, size, at, sc_rd32(e + 8));
        out->hwcap = sc_rd64(e + 16);
        if (out->key && out->value)
            cache->count++;
    }
    return 0;
}

static int parse_old(const char *buf, size_t size, sc_ldcache *cache, sc_error *err)
{
    if (size < OLD_HEADER)
        return sc_error_set(err, -EINVAL, "ld.so.cache truncated");
    uint64_t n = sc_rd32(buf + 12);
    if (n > (size - OLD_HEADER) / OLD_ENTRY)
        return sc_error_set(err, -EINVAL, "ld.so.cache claims %llu entries, more than fit",
                            (unsigned long long)n);
    size_t end = OLD_HEADER + (size_t)n * OLD_ENTRY;
    size_t new_at = (end + 7) & ~(size_t)7;
    if (new_at < size && size - new_at >= NEW_HEADER && memcmp(buf + new_at, NEW_MAGIC, 20) == 0) {
        cache->format = "legacy+new";
        return parse_new(buf, size, new_at, cache, err);
    }
    cache->format = "legacy";
    cache->entries = calloc(n ? n : 1, sizeof *cache->entries);
    if (!cache->entries)
        return sc_error_set(err, -ENOMEM, "out of memory");
    for (uint64_t i = 0; i < n; i++) {
        const char *e = buf + OLD_HEADER + i * OLD_ENTRY;
        sc_ldcache_entry *out = &cache->entries[cache->count];
        out->flags = (int32_t)sc_rd32(e);
        out->key = str_at(buf, size, end, sc_rd32(e + 4));
        out->value = str_at(buf, size, end, sc_rd32(e + 8));
        if (out->key && out->value)
            cache->count++;
    }
    return 0;
}

static int by_key(const void *x, const void *y, void *arg)
{
    const sc_ldcache *cache = arg;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int c = strcmp(cache->entries[i].key, cache->entries[j].key);
    return c ? c : (i > j) - (i < j);
}

/* Sorts an index of the entries so lookups are a binary search, first match kept first. */
static int index_entries(sc_ldcache *cache, sc_error *err)
{
    cache->order = malloc((cache->count ? cache->count : 1) * sizeof *cache->order);
    if (!cache->order)
        return sc_error_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < cache->count; i++)
        cache->order[i] = i;
    qsort_r(cache->order, cache->count, sizeof *cache->order, by_key, cache);
    return 0;
}

int sc_ldcache_parse(const char *buf, size_t size, sc_ldcache *cache, sc_error *err)
{
    memset(cache, 0, sizeof *cache);
    int rc;
    if (size >= 11 && memcmp(buf, OLD_MAGIC, 11) == 0)
        rc = parse_old(buf, size, cache, err);
    else {
        cache->format = "new";
        rc = parse_new(buf, size, 0, cache, err);
    }
    if (rc == 0)
        rc = index_entries(cache, err);
    if (rc < 0)
        sc_ldcache_free(cache);
    return rc;
}

int sc_ldcache_load(const sc_root *root, sc_ldcache *cache, sc_error *err)
{
    char *text;
    long n = sc_root_read(root, "/etc/ld.so.cache", &text, 64u << 20);
    if (n < 0) {
        memset(cache, 0, sizeof *cache);
        return sc_error_set(err, (int)n, "cannot read /etc/ld.so.cache: %s",
                            sc_root_strerror((int)n));
    }
    int rc = sc_ldcache_parse(text, (size_t)n, cache, err);
    if (rc < 0) {
        free(text);
        return rc;
    }
    cache->owned = text;
    return 0;
}

int32_t sc_ldcache_flags_for(uint8_t elf_class, uint16_t machine)
{
    if (elf_class == ELFCLASS64 && machine == EM_X86_64)
        return SC_LDCACHE_ELF_LIBC6 | SC_LDCACHE_X8664;
    if (elf_class == ELFCLASS64 && machine == EM_AARCH64)
        return SC_LDCACHE_ELF_LIBC6 | SC_LDCACHE_AARCH64;
    if (elf_class == ELFCLASS32 && machine == EM_386)
        return SC_LDCACHE_ELF_LIBC6;
    return 0;
}

/* The rank of the subdirectory path lies in (0 best), or -1 when it lies in none of subdirs:
 * ldconfig records the path, and the subdirectory is the end of its directory. */
static int subdir_rank(const char *path, const char *const *subdirs)
{
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) : 0;
    for (int i = 0; subdirs[i]; i++) {
        size_t n = strlen(subdirs[i]);
        if (dir_len > n && path[dir_len - n - 1] == '/' &&
            strncmp(path + dir_len - n, subdirs[i], n) == 0)
            return i;
    }
    return -1;
}

const char *sc_ldcache_lookup(const sc_ldcache *cache, const char *soname, int32_t flags)
{
    return sc_ldcache_lookup_subdirs(cache, soname, flags, NULL);
}

/* The first index of the sorted entries whose key is not below soname. */
static size_t first_of(const sc_ldcache *cache, const char *soname)
{
    size_t lo = 0, hi = cache->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(cache->entries[cache->order[mid]].key, soname) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const char *sc_ldcache_lookup_subdirs(const sc_ldcache *cache, const char *soname, int32_t flags,
                                      const char *const *subdirs)
{
    const char *plain = NULL, *best = NULL;
    int best_rank = -1;
    for (size_t k = first_of(cache, soname); k < cache->count; k++) {
        const sc_ldcache_entry *e = &cache->entries[cache->order[k]];
        if (strcmp(e->key, soname) != 0)
            break;
        if ((e->flags & SC_LDCACHE_TYPE_MASK) != SC_LDCACHE_ELF_LIBC6)
            continue;
        if (flags && (e->flags & SC_LDCACHE_ARCH_MASK) != (flags & SC_LDCACHE_ARCH_MASK))
            continue;
        if (e->hwcap == 0) {
            plain = plain ? plain : e->value;
            continue;
        }
        /* Unknown subdirectories: such an entry only when there is no plain one. */
        int rank = subdirs ? subdir_rank(e->value, subdirs) : SC_LDCACHE_MAX_RANK;
        if (rank >= 0 && (!best || rank < best_rank)) {
            best = e->value;
            best_rank = rank;
        }
    }
    if (best && (subdirs || !plain))
        return best;
    return plain;
}

void sc_ldcache_free(sc_ldcache *cache)
{
    free(cache->entries);
    free(cache->order);
    free(cache->owned);
    memset(cache, 0, sizeof *cache);
}
