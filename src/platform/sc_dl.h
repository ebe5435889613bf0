/* Vendor libraries through one loader, driven by a table: candidate file names in order, each
 * symbol required or optional with its names newest first ("_v2" before plain), dlerror cleared and
 * checked, and the real path of what was loaded recorded for the snapshot. Only isolated children
 * call this. */
#ifndef SC_DL_H
#define SC_DL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "sc_types.h"

typedef struct {
    void *handle;
    char path[PATH_MAX];     /* the file the loader mapped (dlinfo), or the name asked for */
    char realpath[PATH_MAX]; /* its canonical path */
} sc_dl_lib;

typedef struct {
    const char *names[4]; /* newest first; NULL-terminated when fewer */
    bool required;
    size_t offset; /* where the function pointer goes in the caller's struct */
} sc_dl_symbol;

/* Loads the first candidate that loads (NULL-terminated list, names or paths) with flags
 * (RTLD_NOW | RTLD_LOCAL usually). Returns 0, or -ENOENT with every dlerror in err. */
int sc_dl_open(sc_dl_lib *lib, const char *const *candidates, int flags, sc_error *err);
/* Resolves table[0..n) into the struct at fns; a missing optional symbol leaves NULL. Returns 0, or
 * -ENOENT naming the first missing required symbol in err. */
int sc_dl_bind(const sc_dl_lib *lib, const sc_dl_symbol *table, size_t n, void *fns, sc_error *err);
/* Which of a symbol's names resolved, or NULL. */
const char *sc_dl_which(const sc_dl_lib *lib, const sc_dl_symbol *sym);
/* Unloads the library. */
void sc_dl_close(sc_dl_lib *lib);

#endif
