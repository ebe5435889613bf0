/* libraries.torch: PyTorch's native libraries (torch/lib/libtorch*.so and torch/_C*.so) for the
 * chosen Python, found from the package's files, never by importing torch. On the live system the
 * interpreter names its site directories; offline (--sysroot) the usual site directories inside
 * the root are searched. Passive: reads files only. */
#include <dirent.h>
#include <fnmatch.h>
#include <string.h>
#include <sys/stat.h>

#include "probes.h"
#include "sc_libs.h"
#include "sc_python.h"
#include "sc_util.h"

#define MAX_SITES 16

typedef struct {
    char dirs[MAX_SITES][4096];
    int count;
} site_list;

static void add_site(site_list *s, const char *dir)
{
    if (s->count < MAX_SITES)
        sc_fmt(s->dirs[s->count++], sizeof s->dirs[0], "%s", dir);
}

/* Offline: <prefix>/lib/python3.*\/{site,dist}-packages and Debian's dist-packages. */
static void offline_sites(const sc_ctx *ctx, site_list *s)
{
    add_site(s, "/usr/lib/python3/dist-packages");
    static const char *const prefixes[] = {"/usr/local/lib", "/usr/lib", "/opt/conda/lib"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        DIR *d = sc_root_opendir(ctx->root, prefixes[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            char p[4096];
            if (fnmatch("python3*", e->d_name, 0) != 0)
                continue;
            if (sc_fmt(p, sizeof p, "%s/%s/site-packages", prefixes[i], e->d_name))
                add_site(s, p);
            if (sc_fmt(p, sizeof p, "%s/%s/dist-packages", prefixes[i], e->d_name))
                add_site(s, p);
        }
        if (d)
            closedir(d);
    }
}

/* The torch package directory, or false with the reason in res when there is none. */
static bool find_torch(const sc_ctx *ctx, sc_result *res, char *torch, size_t size)
{
    site_list sites = {.count = 0};
    if (ctx->offline) {
        offline_sites(ctx, &sites);
    } else {
        sc_python_info info;
        sc_error err = {0};
        if (sc_python_locate(ctx->opt->python, ctx->opt->timeout_s, &info, &err) < 0) {
            sc_result_skip(res, true, "no Python to inspect: %s", err.message);
            return false;
        }
        cJSON_AddStringToObject(res->facts, "python", info.executable);
        for (int i = 0; i < info.site_count; i++)
            add_site(&sites, info.site_packages[i]);
    }
    for (int i = 0; i < sites.count; i++) {
        char lib[4200];
        if (sc_fmt(torch, size, "%s/torch", sites.dirs[i]) &&
            sc_fmt(lib, sizeof lib, "%s/lib", torch) && sc_root_exists(ctx->root, lib))
            return true;
    }
    sc_result_skip(res, true, "torch is not installed for this Python (%d site directories)",
                   sites.count);
    return false;
}

/* Analyses the files of dir whose names match pattern. */
static void analyse_matching(const sc_ctx *ctx, sc_result *res, const char *dir,
                             const char *pattern, cJSON *files, sc_libs_cache *cache)
{
    DIR *d = sc_root_opendir(ctx->root, dir);
    struct dirent *e;
    int count = 0;
    while (d && (e = readdir(d)) != NULL && count < 64) {
        char p[4600];
        if (fnmatch(pattern, e->d_name, 0) == 0 && sc_fmt(p, sizeof p, "%s/%s", dir, e->d_name)) {
            sc_libs_probe_file_cached(ctx, res, p, files, cache);
            count++;
        }
    }
    if (d)
        closedir(d);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    char torch[4096], lib[4200];
    if (!find_torch(ctx, res, torch, sizeof torch))
        return;
    cJSON_AddStringToObject(res->facts, "torch_dir", torch);
    const char *archs[SC_LIBS_MAX_ARCHS];
    int n = sc_libs_run_archs(ctx, archs, SC_LIBS_MAX_ARCHS);
    cJSON *a = cJSON_AddArrayToObject(res->facts, "target_archs");
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(archs[i]));
    cJSON *files = cJSON_AddArrayToObject(res->facts, "files");
    sc_fmt(lib, sizeof lib, "%s/lib", torch);
    /* The files share most of their tree (libtorch_cpu's few hundred libraries): it is parsed
     * and indexed once for all of them. Without memory for it, each file is read on its own. */
    sc_libs_cache *cache = sc_libs_cache_new();
    analyse_matching(ctx, res, lib, "libtorch*.so", files, cache);
    analyse_matching(ctx, res, torch, "_C*.so", files, cache);
    sc_libs_cache_free(cache);
}

const sc_probe sc_probe_libraries_torch = {
    .id = "libraries.torch",
    .layer = SC_LAYER_LIBRARIES,
    .backend = SC_BACKEND_NONE,
    .isolated = true,
    .timeout_s = SC_LIBS_TIMEOUT_S,
    .summary =
        "PyTorch's native libraries: dependencies, ABI, install roots, GPU code for the devices",
    .run = run,
    .prepare = sc_python_prepare, /* the interpreter asked once, in the parent */
};
