/* libraries.ext: the user's own extensions (--ext FILE|DIR): dependency tree, ABI checks, install
 * roots, and GPU code against the target devices. A directory is searched (two levels) for
 * shared objects. Passive: runs offline (--sysroot) too. */
#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

#include "probes.h"
#include "sc_libs.h"
#include "sc_util.h"

#define MAX_EXT_FILES 256

static bool is_shared_object(const char *name)
{
    return sc_ends_with(name, ".so") || strstr(name, ".so.") != NULL;
}

/* A FIFO, socket or device named like a shared object is never opened (it would block the run or
 * act on hardware): it goes to facts.skipped with the reason. */
static void skip_special(sc_result *res, const char *path, mode_t mode)
{
    cJSON *skipped = cJSON_GetObjectItem(res->facts, "skipped");
    if (!skipped)
        skipped = cJSON_AddArrayToObject(res->facts, "skipped");
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "path", path);
    cJSON_AddStringToObject(s, "reason",
                            S_ISFIFO(mode)   ? "a FIFO, not a regular file"
                            : S_ISSOCK(mode) ? "a socket, not a regular file"
                                             : "a device, not a regular file");
    cJSON_AddItemToArray(skipped, s);
}

static void add_dir(const sc_ctx *ctx, sc_result *res, const char *dir, int depth, cJSON *files,
                    int *count)
{
    DIR *d = sc_root_opendir(ctx->root, dir);
    if (!d) {
        sc_finding(res, "libs.unreadable", SC_SEV_ERROR, "check the directory's permissions",
                   "cannot read directory %s", dir);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL && *count < MAX_EXT_FILES) {
        char path[4096];
        struct stat st;
        if (e->d_name[0] == '.' || !sc_fmt(path, sizeof path, "%s/%s", dir, e->d_name) ||
            sc_root_stat(ctx->root, path, &st, false) < 0)
            continue;
        if (S_ISDIR(st.st_mode) && depth < 2)
            add_dir(ctx, res, path, depth + 1, files, count);
        else if (S_ISREG(st.st_mode) && is_shared_object(e->d_name)) {
            sc_libs_probe_file(ctx, res, path, files);
            (*count)++;
        } else if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode) && is_shared_object(e->d_name)) {
            skip_special(res, path, st.st_mode);
            (*count)++;
        }
    }
    closedir(d);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    const sc_strlist *ext = &ctx->opt->ext;
    if (ext->count == 0) {
        sc_result_skip(res, true, "no --ext given");
        return;
    }
    cJSON *files = cJSON_AddArrayToObject(res->facts, "files");
    int count = 0;
    for (int i = 0; i < ext->count; i++) {
        struct stat st;
        if (sc_root_stat(ctx->root, ext->items[i], &st, true) == 0 && S_ISDIR(st.st_mode))
            add_dir(ctx, res, ext->items[i], 0, files, &count);
        else
            sc_libs_probe_file(ctx, res, ext->items[i], files);
    }
}

const sc_probe sc_probe_libraries_ext = {
    .id = "libraries.ext",
    .layer = SC_LAYER_LIBRARIES,
    .backend = SC_BACKEND_NONE,
    .isolated = true,
    .timeout_s = SC_LIBS_TIMEOUT_S,
    .summary =
        "user extensions (--ext): dependencies, ABI, install roots, GPU code for the devices",
    .run = run,
};
