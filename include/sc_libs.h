/* The libraries analysis: resolve an ELF file's dependencies exactly like glibc's loader, reading
 * files only (never executing or loading them); check symbol versions and undefined symbols; find
 * libraries of one stack from two install roots; list GPU code (clang offload bundles, NVIDIA fat
 * binaries) and compare it with the target devices. Shared by `stackcheck libs`, the libraries layer,
 * and the framework layer's import-failure analysis. */
#ifndef SC_LIBS_H
#define SC_LIBS_H

#include <cjson/cJSON.h>

#include "sc_sysroot.h"
#include "sc_types.h"

typedef struct {
    const char *const *archs;     /* target architectures ("gfx90a:sramecc+:xnack-", "sm_90") */
    int arch_count;
    const char *ld_library_path;  /* as the loader would see it; NULL for none */
} sc_libs_config;

/* Analyses one ELF file under root. *out receives the file's JSON object
 * {path, realpath, soname, libraries[], offload{format, targets[]}, findings[]}; the caller owns it.
 * Returns 0, or a negative errno (unreadable, not ELF) with err filled and *out NULL. */
int sc_libs_analyze(const sc_root *root, const char *path, const sc_libs_config *cfg, cJSON **out,
                    sc_error *err);

#endif
