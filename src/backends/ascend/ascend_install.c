/* The Ascend install inventory: install directory, CANN toolkits and their versions in the old
 * (ascend-toolkit/latest) and CANN 8.5+ (cann[-X.Y.Z]) layouts, and the libascendcl.so the loader
 * would pick (sc_loader.h) without loading anything. */
#include "sc_ascend_install.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_ascend.h"
#include "sc_probe.h"
#include "sc_util.h"

static const char *const arches[] = {"x86_64", "aarch64", NULL};

bool sc_ascend_install_dir(const sc_root *root, char *buf, size_t size)
{
    char *text = NULL;
    bool said = sc_root_read(root, "/etc/ascend_install.info", &text, 64 * 1024) >= 0 &&
                sc_ascend_info_get(text, "Driver_Install_Path_Param", buf, size) && buf[0] == '/';
    free(text);
    if (!said)
        snprintf(buf, size, "%s", SC_ASCEND_DEFAULT_DIR);
    return said;
}

/* Last resort: the CANN version version.cfg names (an image may carry no install info). */
static bool read_version_cfg(const sc_root *root, const char *dir, sc_ascend_toolkit *tk)
{
    char *text = NULL, component[64];
    sc_fmt(tk->info, sizeof tk->info, "%s/version.cfg", dir);
    bool ok = sc_root_read(root, tk->info, &text, 64 * 1024) >= 0 &&
              sc_ascend_cfg_running(text, "runtime_running_version", component, sizeof component,
                                    tk->version, sizeof tk->version);
    free(text);
    return ok;
}

/* Reads dir/<arch>-linux/ascend_toolkit_install.info, else dir/runtime/version.info (CANN 8.5+
 * also keeps Version= there), else dir/version.cfg; false when none names a version. */
static bool read_toolkit(const sc_root *root, const char *dir, sc_ascend_toolkit *tk)
{
    char *text = NULL;
    for (size_t i = 0; arches[i]; i++) {
        sc_fmt(tk->info, sizeof tk->info, "%s/%s-linux/ascend_toolkit_install.info", dir,
               arches[i]);
        if (sc_root_read(root, tk->info, &text, 64 * 1024) >= 0 &&
            sc_ascend_info_get(text, "version", tk->version, sizeof tk->version)) {
            if (!sc_ascend_info_get(text, "package_name", tk->package, sizeof tk->package))
                tk->package[0] = '\0';
            if (!sc_ascend_info_get(text, "arch", tk->arch, sizeof tk->arch))
                snprintf(tk->arch, sizeof tk->arch, "%s", arches[i]);
            if (!sc_ascend_info_get(text, "innerversion", tk->innerversion,
                                    sizeof tk->innerversion))
                tk->innerversion[0] = '\0';
            if (!sc_ascend_info_get(text, "compatible_version", tk->compatible,
                                    sizeof tk->compatible))
                tk->compatible[0] = '\0';
            free(text);
            return true;
        }
        free(text);
        text = NULL;
    }
    sc_fmt(tk->info, sizeof tk->info, "%s/runtime/version.info", dir);
    bool ok = sc_root_read(root, tk->info, &text, 64 * 1024) >= 0 &&
              sc_ascend_info_get(text, "Version", tk->version, sizeof tk->version);
    free(text);
    return ok || read_version_cfg(root, dir, tk);
}

static void add_toolkit(const sc_root *root, const char *dir, sc_ascend_toolkits *out)
{
    char real[PATH_MAX];
    if (out->count >= SC_ASCEND_MAX_TOOLKITS ||
        sc_root_realpath(root, dir, real, sizeof real) < 0 || !sc_root_exists(root, real))
        return;
    for (int i = 0; i < out->count; i++)
        if (strcmp(out->items[i].root, real) == 0)
            return;
    sc_ascend_toolkit *tk = &out->items[out->count];
    memset(tk, 0, sizeof *tk);
    snprintf(tk->root, sizeof tk->root, "%s", real);
    snprintf(tk->via, sizeof tk->via, "%s", dir);
    if (read_toolkit(root, real, tk)) {
        sc_ascend_layout_read(root, tk);
        out->count++;
    }
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* base/cann and base/cann-X.Y.Z (CANN 8.5+), in name order. */
static void scan_cann_dirs(const sc_root *root, const char *base, sc_ascend_toolkits *out)
{
    DIR *d = sc_root_opendir(root, base);
    if (!d)
        return;
    char *names[32];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 32)
        if ((strcmp(e->d_name, "cann") == 0 || strncmp(e->d_name, "cann-", 5) == 0) &&
            (names[n] = strdup(e->d_name)))
            n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        if (sc_fmt(path, sizeof path, "%s/%s", base, names[i]))
            add_toolkit(root, path, out);
        free(names[i]);
    }
}

static void collect_under(const sc_root *root, const char *base, sc_ascend_toolkits *out)
{
    char path[PATH_MAX];
    if (sc_fmt(path, sizeof path, "%s/ascend-toolkit/latest", base))
        add_toolkit(root, path, out);
    scan_cann_dirs(root, base, out);
}

void sc_ascend_toolkits_collect(const sc_root *root, const char *install_dir,
                                sc_ascend_toolkits *out)
{
    memset(out, 0, sizeof *out);
    collect_under(root, install_dir, out);
    if (strcmp(install_dir, SC_ASCEND_DEFAULT_DIR) != 0)
        collect_under(root, SC_ASCEND_DEFAULT_DIR, out);
}

static cJSON *toolkit_json(const sc_ascend_toolkit *tk)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "version", tk->version);
    cJSON_AddStringToObject(o, "path", tk->root);
    cJSON_AddStringToObject(o, "via", tk->via);
    cJSON_AddStringToObject(o, "info", tk->info);
    sc_fact_str(o, "package_name", tk->package[0] ? tk->package : NULL, "not in the info file");
    sc_fact_str(o, "arch", tk->arch[0] ? tk->arch : NULL, "not in the info file");
    sc_fact_str(o, "innerversion", tk->innerversion[0] ? tk->innerversion : NULL,
                "not in the info file");
    sc_fact_str(o, "compatible_version", tk->compatible[0] ? tk->compatible : NULL,
                "not in the info file");
    sc_ascend_layout_facts(o, tk);
    return o;
}

void sc_ascend_toolkits_facts(cJSON *facts, const sc_ascend_toolkits *tks)
{
    cJSON *arr = cJSON_AddArrayToObject(facts, "toolkits");
    for (int i = 0; i < tks->count && arr; i++)
        cJSON_AddItemToArray(arr, toolkit_json(&tks->items[i]));
    if (tks->count)
        cJSON_AddItemToObject(facts, "toolkit", toolkit_json(&tks->items[0]));
    else
        sc_fact_null(facts, "toolkit",
                     "no ascend-toolkit/latest or cann*/ with a version file under the install "
                     "directory");
}

void sc_ascend_pick_library(const sc_root *root, const char *ld_library_path, sc_ascend_lib_pick *p)
{
    sc_loader_pick_runtime(root, ld_library_path, sc_backend_get(SC_BACKEND_ASCEND), p);
}
