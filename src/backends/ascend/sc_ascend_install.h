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
    char innerversion[64];    /* the install info's innerversion, "" when not said */
    char compatible[256];     /* its compatible_version (driver release lines), "" when not said */
    /* The 8.x layout's own words on the version, "" where it says nothing: */
    char cfg_version[64];    /* CANN version in <via>/version.cfg (runtime_running_version) */
    char cfg_component[64];  /* the component version beside it ("7.6.0.1.220") */
    char dir_version[64];    /* the version directory the path names: latest's target, the
                              * directory latest's links point into, or cann-X.Y.Z's X.Y.Z */
    char dir_other[64];      /* a second version directory latest's links point into */
    char dir_other_link[64]; /* the link of latest that points there */
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
/* Fills the 8.x layout fields of tk (found through tk->via): version.cfg, latest's target or the
 * version directories latest's links point into. */
void sc_ascend_layout_read(const sc_root *root, sc_ascend_toolkit *tk);
/* Adds the layout fields to o: version_cfg{cann, component}, directory_version, and
 * mixed_directories when latest's links point into two version directories. */
void sc_ascend_layout_facts(cJSON *o, const sc_ascend_toolkit *tk);

/* facts.toolkits (array) and facts.toolkit (the first, or null with the reason). */
void sc_ascend_toolkits_facts(cJSON *facts, const sc_ascend_toolkits *tks);

/* What the loader would pick (sc_loader.h). */
typedef sc_loader_pick sc_ascend_lib_pick;

/* The libascendcl.so the loader would pick for ld_library_path (NULL: unset). */
void sc_ascend_pick_library(const sc_root *root, const char *ld_library_path,
                            sc_ascend_lib_pick *p);

#endif
