/* The cache of parsed files the libraries analyses of one run share: each file is parsed once, and
 * its definitions are indexed once for the undefined-symbol check. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "libs_internal.h"

sc_libs_cache *sc_libs_cache_new(void)
{
    return calloc(1, sizeof(sc_libs_cache));
}

void sc_libs_cache_clear(sc_libs_cache *c)
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
    sc_roots *roots = c->roots; /* what directories hold does not change with the files parsed */
    memset(c, 0, sizeof *c);
    c->generation = gen;
    c->roots = roots;
}

sc_roots *sc_libs_cache_roots(sc_libs_cache *c, const sc_root *root)
{
    if (c->roots && sc_roots_root(c->roots) != root) {
        sc_roots_free(c->roots);
        c->roots = NULL;
    }
    if (!c->roots)
        c->roots = sc_roots_new(root);
    return c->roots;
}

void sc_libs_cache_free(sc_libs_cache *cache)
{
    if (!cache)
        return;
    sc_libs_cache_clear(cache);
    sc_roots_free(cache->roots);
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
cached_obj *sc_libs_cache_open(analysis *a, const char *path, const char *real, int fd,
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

/* Puts o's definitions into the cache's index and hashes its undefined names, once per run: the
 * files of one package share most of their tree, so each analysis after the first only looks its
 * own undefined names up. */
int sc_libs_cache_index(sc_libs_cache *c, cached_obj *o)
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
