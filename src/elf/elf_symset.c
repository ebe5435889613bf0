/* A hash set of ELF symbol names for the undefined-symbol check: open addressing with a word-wise
 * multiply-xor hash (C++ names are long, so hashing eight bytes at a time matters), the hashes kept
 * beside the names so growing never rehashes a string, and names kept as pointers, not copies. */
#include "sc_elf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t sc_symset_hash(const char *s)
{
    size_t n = strlen(s);
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

static int grow_table(sc_symset *set, size_t cap)
{
    const char **slots = calloc(cap, sizeof *slots);
    uint64_t *hashes = calloc(cap, sizeof *hashes);
    void **values = calloc(cap, sizeof *values);
    if (!slots || !hashes || !values) {
        free(slots);
        free(hashes);
        free(values);
        return -ENOMEM;
    }
    for (size_t i = 0; i < set->cap; i++) {
        if (!set->slots[i])
            continue;
        size_t j = set->hashes[i] & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = set->slots[i];
        hashes[j] = set->hashes[i];
        values[j] = set->values[i];
    }
    free(set->slots);
    free(set->hashes);
    free(set->values);
    set->slots = slots;
    set->hashes = hashes;
    set->values = values;
    set->cap = cap;
    return 0;
}

/* The slot of name (hash h): where it is, or the empty slot where it would go. */
static size_t find_slot(const sc_symset *set, const char *name, uint64_t h)
{
    size_t j = h & (set->cap - 1);
    while (set->slots[j] && (set->hashes[j] != h || strcmp(set->slots[j], name) != 0))
        j = (j + 1) & (set->cap - 1);
    return j;
}

int sc_symset_add(sc_symset *set, const char *name)
{
    return sc_symset_put(set, name, NULL);
}

int sc_symset_put(sc_symset *set, const char *name, void *value)
{
    return sc_symset_put_hashed(set, name, sc_symset_hash(name), value);
}

int sc_symset_put_hashed(sc_symset *set, const char *name, uint64_t h, void *value)
{
    if ((set->count + 1) * 2 > set->cap && grow_table(set, set->cap ? set->cap * 2 : 1024) < 0)
        return -ENOMEM;
    size_t j = find_slot(set, name, h);
    if (!set->slots[j]) {
        set->slots[j] = name;
        set->hashes[j] = h;
        set->values[j] = value;
        set->count++;
    }
    return 0;
}

bool sc_symset_has(const sc_symset *set, const char *name)
{
    return sc_symset_has_hashed(set, name, sc_symset_hash(name));
}

bool sc_symset_has_hashed(const sc_symset *set, const char *name, uint64_t h)
{
    return set->cap && set->slots[find_slot(set, name, h)] != NULL;
}

void *sc_symset_get(const sc_symset *set, const char *name)
{
    return sc_symset_get_hashed(set, name, sc_symset_hash(name));
}

void *sc_symset_get_hashed(const sc_symset *set, const char *name, uint64_t h)
{
    return set->cap ? set->values[find_slot(set, name, h)] : NULL;
}

void sc_symset_free(sc_symset *set)
{
    free(set->slots);
    free(set->hashes);
    free(set->values);
    memset(set, 0, sizeof *set);
}
