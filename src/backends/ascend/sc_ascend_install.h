/* What the Ascend packages installed, read through the root (so it works offline): the install
 * directory (/etc/ascend_install.info), the CANN toolkits (ascend-toolkit/latest/<arch>-linux and
 * the CANN 8.5+ cann[-X.Y.Z]/<arch>-linux layouts) with their versions, and which libascendcl.so
 * the loader would pick (LD_LIBRARY_PATH, ld.so.cache, default directories). Shared by
 * driver.ascend and runtime.acl's inventory. */
#ifndef SC_ASCEND_INSTALL_H
#define SC_ASCEND_INSTALL_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>

#include "sc_loader.h"
#include "sc_sysroot.h"

#define SC_ASCEND_DEFAULT_DIR "/usr/local/Ascend"
#define SC_ASCEND_MAX_TOOLKITS 8

typedef struct {
    char root[PATH_MAX]; /* real path inside the root: "/usr/local/Ascend/ascend-toolkit/8.0.RC3" */
    char info[PATH_MAX + 64]; /* the file the version came from */
    char version[64];         /* "8.0.RC3" */
    char package[64];         /* "Ascend-cann-toolkit", "" when not said */
    char arch[32];            /* "x86_64", "aarch64" */
    char via[PATH_MAX];       /* the path it was found through: ".../ascend-toolkit/latest" */
} sc_ascend_toolkit;

typedef struct {
    sc_ascend_toolkit items[SC_ASCEND_MAX_TOOLKITS];
    int count;
} sc_ascend_toolkits;

/* The driver's install directory from /etc/ascend_install.info (Driver_Install_Path_Param), or
 * SC_ASCEND_DEFAULT_DIR; returns true when the file said it. */
bool sc_ascend_install_dir(const sc_root *root, char *buf, size_t size);
/* Finds the toolkits under install_dir (and SC_ASCEND_DEFAULT_DIR), "latest" first, deduplicated
 * by real path. */
void sc_ascend_toolkits_collect(const sc_root *root, const char *install_dir,
                                sc_ascend_toolkits *out);
/* facts.toolkits (array) and facts.toolkit (the first, or null with the reason). */
void sc_ascend_toolkits_facts(cJSON *facts, const sc_ascend_toolkits *tks);

/* What the loader would pick (sc_loader.h). */
typedef sc_loader_pick sc_ascend_lib_pick;

/* The libascendcl.so the loader would pick for ld_library_path (NULL: unset). */
void sc_ascend_pick_library(const sc_root *root, const char *ld_library_path,
                            sc_ascend_lib_pick *p);

#endif
