/* The loader's pick for this program: the shared resolver set up the way the loader of this
 * process sees the root (its search path, its ld.so.cache, its default directories), for a
 * dlopen from the main program, which has no RPATH or RUNPATH. */
#include "sc_loader.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sc_loader_open(sc_loader *l, const sc_root *root, const char *ld_library_path)
{
    sc_error err;
    memset(l, 0, sizeof *l);
    l->root = root;
    l->ld_library_path = ld_library_path;
    l->program = (sc_ld_object){.name = "the program", .origin = "/"};
    /* The program that would dlopen the library is one of the root's: its loader (layout, glibc,
     * subdirectories) and its class and machine, which dlopen requires (this one's, live). */
    sc_ld_target_detect(root, 0, 0, &l->target);
    l->have_cache = sc_ldcache_load(root, &l->cache, &err) == 0;
    /* glibc's loader reads only the cache. A root without one is an image before ldconfig ran,
     * or a fixture: the directories ldconfig would index stand in for it (found_via
     * "ld.so.conf"), as runtime.hip's inventory has done since 0.1. */
    if (!l->have_cache && sc_ldconf_load(root, &l->conf) == -ENOMEM) {
        sc_loader_close(l);
        return -ENOMEM;
    }
    return 0;
}

void sc_loader_close(sc_loader *l)
{
    if (l->have_cache)
        sc_ldcache_free(&l->cache);
    sc_ldconf_free(&l->conf);
    sc_roots_free(l->roots);
    l->have_cache = false;
    l->roots = NULL;
}

sc_ldresolver sc_loader_resolver(const sc_loader *l, const sc_ld_object *main, uint8_t elf_class,
                                 uint16_t machine, sc_ld_search *search)
{
    return (sc_ldresolver){
        .root = l->root,
        .ld_library_path = l->ld_library_path,
        .cache = l->have_cache ? &l->cache : NULL,
        .main = main ? main : &l->program,
        .elf_class = elf_class,
        .machine = machine,
        .conf_dirs = l->conf.count ? (const char *const *)l->conf.dirs : NULL,
        .search = search,
        .target =
            elf_class == l->target.elf_class && machine == l->target.machine ? &l->target : NULL};
}

/* Fills pick from a hit of the resolver. */
static void take_hit(sc_loader *l, const char *name, const sc_ld_hit *hit, sc_loader_pick *pick)
{
    pick->found = true;
    snprintf(pick->name, sizeof pick->name, "%s", name);
    snprintf(pick->path, sizeof pick->path, "%s", hit->path);
    if (sc_root_realpath(l->root, hit->path, pick->realpath, sizeof pick->realpath) < 0)
        snprintf(pick->realpath, sizeof pick->realpath, "%s", hit->path);
    pick->via = hit->via;
    pick->found_via = sc_found_via_name(hit->via);
    snprintf(pick->entry, sizeof pick->entry, "%s", hit->entry);
    snprintf(pick->source, sizeof pick->source, "%s", hit->source);
    if (!l->roots)
        l->roots = sc_roots_new(l->root);
    sc_roots_of(l->roots, pick->realpath, &pick->root);
}

bool sc_loader_find(sc_loader *l, const char *name, sc_loader_pick *pick)
{
    pick->found = false;
    pick->found_via = sc_found_via_name(SC_VIA_NOT_FOUND);
    pick->via = SC_VIA_NOT_FOUND;
    sc_ldresolver r = sc_loader_resolver(l, NULL, l->target.elf_class, l->target.machine, NULL);
    sc_ld_hit hit;
    if (sc_ldresolve(&r, &l->program, name, &hit) < 0)
        return false;
    take_hit(l, name, &hit, pick);
    if (hit.fd >= 0)
        close(hit.fd);
    return true;
}

bool sc_loader_find_first(sc_loader *l, const char *const *names, sc_loader_pick *pick)
{
    for (size_t i = 0; names && names[i]; i++)
        if (sc_loader_find(l, names[i], pick))
            return true;
    return false;
}

bool sc_loader_pick_runtime(const sc_root *root, const char *ld_library_path,
                            const sc_backend_desc *desc, sc_loader_pick *pick)
{
    sc_loader l;
    pick->found = false;
    if (sc_loader_open(&l, root, ld_library_path) < 0)
        return false;
    bool found = sc_loader_find_first(&l, desc->runtime_libraries, pick);
    sc_loader_close(&l);
    return found;
}
