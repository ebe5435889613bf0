/* The table-driven vendor library loader. dlerror is cleared before and read after each call, so a
 * NULL symbol is told apart from a lookup failure; the loaded file is named through dlinfo. */
#include "sc_dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_util.h"

int sc_dl_open(sc_dl_lib *lib, const char *const *candidates, int flags, sc_error *err)
{
    memset(lib, 0, sizeof *lib);
    sc_buf why;
    sc_buf_init(&why);
    for (int i = 0; candidates[i]; i++) {
        dlerror();
        void *h = dlopen(candidates[i], flags);
        if (!h) {
            const char *e = dlerror();
            sc_buf_printf(&why, "%s%s", why.len ? "; " : "", e ? e : candidates[i]);
            continue;
        }
        lib->handle = h;
        struct link_map *map = NULL;
        const char *mapped = (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name[0])
                                 ? map->l_name
                                 : candidates[i];
        snprintf(lib->path, sizeof lib->path, "%s", mapped);
        if (!realpath(lib->path, lib->realpath))
            snprintf(lib->realpath, sizeof lib->realpath, "%s", lib->path);
        sc_buf_free(&why);
        return 0;
    }
    sc_error_set(err, -ENOENT, "%s", why.data ? why.data : "no candidate library");
    sc_buf_free(&why);
    return -ENOENT;
}

static void *lookup(const sc_dl_lib *lib, const sc_dl_symbol *sym, const char **which)
{
    for (int k = 0; k < 4 && sym->names[k]; k++) {
        dlerror();
        void *p = dlsym(lib->handle, sym->names[k]);
        if (!dlerror() && p) {
            if (which)
                *which = sym->names[k];
            return p;
        }
    }
    return NULL;
}

int sc_dl_bind(const sc_dl_lib *lib, const sc_dl_symbol *table, size_t n, void *fns, sc_error *err)
{
    for (size_t i = 0; i < n; i++) {
        void *p = lookup(lib, &table[i], NULL);
        memcpy((char *)fns + table[i].offset, &p, sizeof p);
        if (!p && table[i].required)
            return sc_error_set(err, -ENOENT, "required symbol %s not found in %s",
                                table[i].names[0], lib->path);
    }
    return 0;
}

const char *sc_dl_which(const sc_dl_lib *lib, const sc_dl_symbol *sym)
{
    const char *which = NULL;
    lookup(lib, sym, &which);
    return which;
}

void sc_dl_close(sc_dl_lib *lib)
{
    if (lib->handle)
        dlclose(lib->handle);
    lib->handle = NULL;
}
