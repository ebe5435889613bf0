/* The operator binary cache and kernel_meta directories, where CANN puts them: the cache in
 * $ASCEND_CACHE_PATH/kernel_cache, else $HOME/atc_data; kernel_meta under $ASCEND_WORK_PATH, else
 * the working directory (CANN's environment variable reference, ASCEND_CACHE_PATH and
 * ASCEND_WORK_PATH). A directory another user owns, or that others may write, breaks compilation
 * for the second user of a machine (the seed's operator cache lock). Reads through the sysroot. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sc_ascend_ops.h"
#include "sc_util.h"

/* Whether uid/gid may create files in a directory of this owner and mode (root always may). */
static bool may_write(const struct stat *st, const sc_ascend_dirs_in *in)
{
    if (in->uid == 0)
        return true;
    if (st->st_uid == in->uid)
        return (st->st_mode & 0300) == 0300;
    if (st->st_gid == in->gid)
        return (st->st_mode & 0030) == 0030;
    return (st->st_mode & 0003) == 0003;
}

/* Where the directory would be created when it does not exist: its nearest existing parent. */
static bool existing_parent(const sc_root *root, const char *path, char *parent, size_t size,
                            struct stat *st)
{
    sc_fmt(parent, size, "%s", path);
    for (char *slash; (slash = strrchr(parent, '/')) != NULL;) {
        *(slash == parent ? slash + 1 : slash) = '\0';
        if (sc_root_stat(root, parent, st, true) == 0)
            return true;
        if (slash == parent)
            break;
    }
    return false;
}

static void dir_findings(sc_result *res, const char *role, const char *path, const char *where,
                         const struct stat *st, const sc_ascend_dirs_in *in)
{
    bool other_owner = st->st_uid != in->uid;
    bool others_write = (st->st_mode & 0022) != 0 && !(st->st_mode & S_ISVTX);
    if (!may_write(st, in))
        sc_finding(res, "ascend.cache-dir-unwritable", SC_SEV_WARN,
                   "point ASCEND_CACHE_PATH / ASCEND_WORK_PATH at a directory of this user's "
                   "own (one per user on a shared machine), or fix the owner and mode",
                   "the %s %s (%s) belongs to uid %u with mode %04o: uid %u cannot write it, so "
                   "operator compilation fails or recompiles every time",
                   role, path, where, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777),
                   in->uid);
    else if (other_owner || others_write)
        sc_finding(res, "ascend.cache-dir-shared", SC_SEV_INFO,
                   "give each user a cache of their own (ASCEND_CACHE_PATH=$HOME/...), or make the "
                   "shared one sticky (chmod 1777) on storage with file locking",
                   "the %s %s (%s) is shared: owner uid %u, mode %04o; another user's run may "
                   "lock it or leave binaries this user cannot replace",
                   role, path, where, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
}

static void check_dir(const sc_root *root, sc_result *res, cJSON *list, const char *role,
                      const char *path, const char *where, const sc_ascend_dirs_in *in)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(list, o);
    cJSON_AddStringToObject(o, "role", role);
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddStringToObject(o, "from", where);
    struct stat st;
    char parent[4096];
    bool exists = sc_root_stat(root, path, &st, true) == 0 && S_ISDIR(st.st_mode);
    cJSON_AddBoolToObject(o, "exists", exists);
    if (!exists && !existing_parent(root, path, parent, sizeof parent, &st))
        return;
    if (!exists)
        cJSON_AddStringToObject(o, "created_in", parent);
    cJSON_AddNumberToObject(o, "owner_uid", st.st_uid);
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", (unsigned)(st.st_mode & 07777));
    cJSON_AddStringToObject(o, "mode", mode);
    cJSON_AddBoolToObject(o, "writable", may_write(&st, in));
    cJSON_AddBoolToObject(o, "shared", st.st_uid != in->uid || (st.st_mode & 0022));
    dir_findings(res, role, exists ? path : parent, where, &st, in);
}

void sc_ascend_check_cache_dirs(const sc_root *root, sc_result *res, const sc_ascend_dirs_in *in)
{
    cJSON *list = cJSON_AddArrayToObject(res->facts, "operator_dirs");
    char path[4096];
    if (in->cache_env && in->cache_env[0] == '/' &&
        sc_fmt(path, sizeof path, "%s/kernel_cache", in->cache_env))
        check_dir(root, res, list, "operator cache", path, "ASCEND_CACHE_PATH", in);
    else if (in->home && in->home[0] == '/' && sc_fmt(path, sizeof path, "%s/atc_data", in->home))
        check_dir(root, res, list, "operator cache", path, "the default, $HOME/atc_data", in);
    const char *work = in->work_env && in->work_env[0] == '/' ? in->work_env : in->cwd;
    if (work && work[0] == '/' && sc_fmt(path, sizeof path, "%s/kernel_meta", work))
        check_dir(root, res, list, "kernel_meta directory", path,
                  work == in->work_env ? "ASCEND_WORK_PATH" : "the working directory", in);
}
