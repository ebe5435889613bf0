/* The passive CUDA inventory: toolkits and their versions, the /usr/local/cuda link, and the
 * libcuda.so.1 the loader would pick (sc_loader.h: LD_LIBRARY_PATH, then /etc/ld.so.cache, then
 * the default directories), reading files only. */
#include "sc_cuda_inventory.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_cuda.h"
#include "sc_loader.h"
#include "sc_util.h"

/* version.json first (CUDA 11.1+), then version.txt (older). */
static void read_toolkit_version(const sc_root *root, sc_cuda_toolkit *tk)
{
    char path[PATH_MAX + 32], *text = NULL;
    sc_fmt(path, sizeof path, "%s/version.json", tk->root);
    long n = sc_root_read(root, path, &text, 1 << 20);
    if (n >= 0 && sc_cuda_parse_version_json(text, tk->version, sizeof tk->version) == 0) {
        free(text);
        return;
    }
    bool json_there = n >= 0;
    free(text);
    text = NULL;
    sc_fmt(path, sizeof path, "%s/version.txt", tk->root);
    n = sc_root_read(root, path, &text, 4096);
    if (n < 0 || sc_cuda_parse_version_txt(text, tk->version, sizeof tk->version) < 0)
        sc_fmt(tk->version_error, sizeof tk->version_error, "%s",
               json_there ? "version.json has no \"cuda\": {\"version\"} entry"
                          : "neither version.json nor a readable version.txt");
    free(text);
}

/* Adds the toolkit at path (reached via name) unless its real path is known; then adds the name. */
static void add_toolkit(const sc_root *root, sc_cuda_inventory *inv, const char *path,
                        const char *via)
{
    char real[PATH_MAX];
    if (sc_root_realpath(root, path, real, sizeof real) < 0 || !sc_root_exists(root, real))
        return;
    char probe[PATH_MAX + 16];
    sc_fmt(probe, sizeof probe, "%s/bin", real);
    bool looks = sc_root_exists(root, probe);
    sc_fmt(probe, sizeof probe, "%s/version.json", real);
    looks = looks || sc_root_exists(root, probe);
    sc_fmt(probe, sizeof probe, "%s/version.txt", real);
    if (!looks && !sc_root_exists(root, probe))
        return; /* not a toolkit: no bin/, no version file */
    sc_cuda_toolkit *tk = NULL;
    for (int i = 0; i < inv->count && !tk; i++)
        if (strcmp(inv->toolkits[i].root, real) == 0)
            tk = &inv->toolkits[i];
    if (!tk) {
        if (inv->count >= SC_CUDA_MAX_TOOLKITS)
            return;
        tk = &inv->toolkits[inv->count++];
        memset(tk, 0, sizeof *tk);
        snprintf(tk->root, sizeof tk->root, "%s", real);
        read_toolkit_version(root, tk);
    }
    if (tk->via_count < SC_CUDA_MAX_VIA)
        snprintf(tk->via[tk->via_count++], sizeof tk->via[0], "%s", via);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* /usr/local/cuda-* in name order, so the inventory is the same run to run. */
static void scan_usr_local(const sc_root *root, sc_cuda_inventory *inv)
{
    DIR *d = sc_root_opendir(root, "/usr/local");
    if (!d)
        return;
    char *names[64];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (strncmp(e->d_name, "cuda-", 5) == 0 && (names[n] = strdup(e->d_name)))
            n++;
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_names);
    for (int i = 0; i < n; i++) {
        char path[PATH_MAX];
        sc_fmt(path, sizeof path, "/usr/local/%s", names[i]);
        add_toolkit(root, inv, path, path);
        free(names[i]);
    }
}

static void env_toolkit(const sc_root *root, sc_cuda_inventory *inv, const char *name,
                        const char *value)
{
    char via[PATH_MAX + 16];
    if (!value || value[0] != '/')
        return;
    sc_fmt(via, sizeof via, "%s=%s", name, value);
    add_toolkit(root, inv, value, via);
}

static void read_link(const sc_root *root, sc_cuda_inventory *inv)
{
    char target[PATH_MAX];
    struct stat sb;
    if (sc_root_stat(root, "/usr/local/cuda", &sb, false) < 0 || !S_ISLNK(sb.st_mode))
        return;
    inv->link_present = true;
    if (sc_root_realpath(root, "/usr/local/cuda", target, sizeof target) == 0 &&
        sc_root_exists(root, target))
        snprintf(inv->link_target, sizeof inv->link_target, "%s", target);
}

/* The driver library the loader would pick (the descriptor's runtime_libraries: libcuda.so.1),
 * with the driver version its file name carries. */
static void pick_libcuda(const sc_root *root, const char *ld_library_path, sc_cuda_lib_pick *p)
{
    memset(p, 0, sizeof *p);
    sc_loader_pick *pick = calloc(1, sizeof *pick);
    if (pick &&
        sc_loader_pick_runtime(root, ld_library_path, sc_backend_get(SC_BACKEND_NVIDIA), pick)) {
        p->found = true;
        snprintf(p->path, sizeof p->path, "%s", pick->path);
        snprintf(p->realpath, sizeof p->realpath, "%s", pick->realpath);
        snprintf(p->found_via, sizeof p->found_via, "%s", pick->found_via);
        if (sc_cuda_libcuda_version(p->realpath, p->driver_version, sizeof p->driver_version) < 0)
            p->driver_version[0] = '\0';
        p->is_stub = strstr(p->realpath, "/stubs/") != NULL;
    }
    free(pick);
}

void sc_cuda_inventory_collect(const sc_root *root, const sc_cuda_env *env, sc_cuda_inventory *inv)
{
    memset(inv, 0, sizeof *inv);
    add_toolkit(root, inv, "/usr/local/cuda", "/usr/local/cuda");
    scan_usr_local(root, inv);
    env_toolkit(root, inv, "CUDA_HOME", env->cuda_home);
    env_toolkit(root, inv, "CUDA_PATH", env->cuda_path);
    read_link(root, inv);
    pick_libcuda(root, env->ld_library_path, &inv->libcuda);
}

const char *sc_cuda_inventory_main_version(const sc_cuda_inventory *inv)
{
    for (int i = 0; i < inv->count; i++)
        if (inv->link_target[0] && strcmp(inv->toolkits[i].root, inv->link_target) == 0)
            return inv->toolkits[i].version[0] ? inv->toolkits[i].version : NULL;
    for (int i = 0; i < inv->count; i++)
        if (inv->toolkits[i].version[0])
            return inv->toolkits[i].version;
    return NULL;
}
