/* The passive HIP inventory: installed ROCm and DTK roots with their versions, where the /opt/rocm
 * and /opt/dtk links point, which HIP runtime file the dynamic loader would pick (without loading
 * it), the environment that hides devices, and per-process device memory from the KFD. Reads files
 * through the sysroot only, so it works offline on an image or a fixture. */
#ifndef SC_HIP_INVENTORY_H
#define SC_HIP_INVENTORY_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "sc_loader.h"
#include "sc_roots.h"
#include "sc_sysroot.h"

#define SC_HIP_MAX_INSTALLS 32
#define SC_HIP_MAX_VIA 4

typedef struct {
    char root[PATH_MAX]; /* real path inside the sysroot: "/opt/dtk-25.04.2" */
    sc_root_kind kind;
    char version[64]; /* .info/version; "" when unreadable (reason in version_error) */
    char version_error[128];
    char hip_version[64]; /* share/hip/version as "major.minor.patch"; "" when unreadable */
    char via[SC_HIP_MAX_VIA][512]; /* names that reach it: "/opt/dtk", "ROCM_PATH=/opt/dtk" */
    int via_count;
} sc_hip_install;

typedef struct {
    char name[PATH_MAX];   /* "/opt/rocm" */
    char target[PATH_MAX]; /* real path it resolves to, "" when dangling */
} sc_hip_link;

/* What the loader would pick for a HIP runtime name (sc_loader.h). */
typedef sc_loader_pick sc_hip_pick;

/* The environment the inventory looks at (NULL when unset). */
typedef struct {
    const char *ld_library_path;
    const char *rocm_path;
    const char *hip_path;
} sc_hip_env;

typedef struct {
    sc_hip_install installs[SC_HIP_MAX_INSTALLS];
    int install_count;
    sc_hip_link links[8];
    int link_count;
    sc_hip_pick pick;
} sc_hip_inventory;

/* Parses the first line of a .info/version file ("6.2.0", "6.2.0.60200-66", "25.04.2") into buf;
 * returns 0, or -EINVAL for empty text or characters a version does not have. */
int sc_hip_parse_version_file(const char *text, char *buf, size_t size);
/* Parses a share/hip/version file (HIP_VERSION_MAJOR=, _MINOR=, _PATCH= lines) into "6.2.41133"
 * (or "6.2" without a patch); returns 0, or -EINVAL when major or minor is missing or not numeric.
 */
int sc_hip_parse_hip_version_file(const char *text, char *buf, size_t size);

/* Fills inv with the installs under /opt (rocm, rocm-*, dtk, dtk-*, hyhal) and those that
 * ROCM_PATH and HIP_PATH name, deduplicated by real path. */
void sc_hip_inventory_installs(const sc_root *root, const sc_hip_env *env, sc_hip_inventory *inv);
/* The install whose root contains path (a real path), or NULL. */
const sc_hip_install *sc_hip_inventory_install_of(const sc_hip_inventory *inv, const char *path);
/* True when one of the installs is a DTK (its runtime names are then tried first). */
bool sc_hip_inventory_has_dtk(const sc_hip_inventory *inv);

/* The HIP runtime names (the descriptor's runtime_libraries), in the order the probe tries them:
 * DTK's libgalaxyhip first when prefer_dtk, else upstream's libamdhip64 first. NULL-terminated. */
const char *const *sc_hip_runtime_names(bool prefer_dtk);
/* Finds name like the loader (sc_loader_find: LD_LIBRARY_PATH, the ld.so.cache or, in a root
 * without one, the ld.so.conf directories, then the default directories); fills pick. Returns
 * true when found. */
bool sc_hip_loader_find(const sc_root *root, const char *ld_library_path, const char *name,
                        sc_hip_pick *pick);
/* Fills inv->pick with the first runtime name (in sc_hip_runtime_names order) the loader would
 * find; inv->pick.found says whether one was. */
void sc_hip_inventory_pick(const sc_root *root, const char *ld_library_path, sc_hip_inventory *inv);

/* The distinct ROCm/DTK roots (by their markers, wherever they live) that LD_LIBRARY_PATH's
 * directories belong to, joined as "root (dir), root (dir)" in buf; returns how many. */
int sc_hip_path_roots(const sc_root *root, const char *ld_library_path, char *buf, size_t size);

/* The device-visibility variables set in the environment, as "NAME=value, ..." in buf; returns how
 * many are set. env is a getenv-like function. */
int sc_hip_visibility_vars(char *(*env)(const char *), char *buf, size_t size);

/* One process's use of a device's memory, from /sys/class/kfd/kfd/proc/<pid>/vram_<gpu_id>. */
typedef struct {
    int pid;
    char comm[32];
    unsigned long long vram_bytes;
} sc_hip_vram_user;
/* Lists the processes with vram_<gpu_id> above zero into users[0..max), skipping skip_pid;
 * returns how many (at most max), or -errno when the KFD proc directory is unreadable. */
int sc_hip_kfd_vram_users(const sc_root *root, unsigned long long gpu_id, int skip_pid,
                          sc_hip_vram_user *users, int max);

#endif
