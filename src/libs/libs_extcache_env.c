/* The environment a cached extension must match, from what the run already knows: the Python
 * (located once per run, shared with the framework layer), torch (libraries.torch's directory and
 * its metadata), and per backend the compiler extensions now build with and the runtime's install
 * (the runtime layer's facts). Written to facts.environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libs_extcache_internal.h"
#include "sc_json.h"
#include "sc_python.h"

/* "cu121" of "2.3.0+cu121"; "cpu" of "+rocm6.0" (a ROCm torch has no torch.version.cuda, so its
 * cache folder says cpu) or "+cpu"; "" when the version has no such label. */
static void torch_tag(const char *version, char *buf, size_t size)
{
    const char *label = strchr(version, '+');
    buf[0] = '\0';
    if (!label)
        return;
    label++;
    if (sc_starts_with(label, "cu") && strspn(label + 2, "0123456789") == strlen(label + 2))
        sc_fmt(buf, size, "%s", label);
    else if (sc_starts_with(label, "rocm") || strcmp(label, "cpu") == 0)
        sc_fmt(buf, size, "cpu");
}

static void python_env(const sc_ctx *ctx, extcache_env *env)
{
    sc_python_info info;
    sc_error err = {0};
    if (ctx->offline || sc_python_locate(ctx->opt->python, ctx->opt->timeout_s, &info, &err) < 0)
        return;
    int major = 0, minor = 0, n = 0;
    const char *ld = info.ldversion[0] ? info.ldversion : info.version;
    if (sscanf(ld, "%d.%d%n", &major, &minor, &n) != 2)
        return;
    const char *flags = ld + n;
    sc_fmt(env->python, sizeof env->python, "%d.%d", major, minor);
    sc_fmt(env->python_tag, sizeof env->python_tag, "%d%d%s", major, minor,
           strspn(flags, "dmt") == strlen(flags) ? flags : "");
}

static void torch_env(const sc_ctx *ctx, extcache_env *env)
{
    const char *dir = sc_json_str(sc_ctx_facts(ctx, "libraries.torch"), "torch_dir");
    char site[PATH_MAX], meta[PATH_MAX];
    if (!dir || sc_root_realpath(ctx->root, dir, env->torch_dir, sizeof env->torch_dir) < 0)
        return;
    sc_path_dirname(env->torch_dir, site, sizeof site);
    if (sc_python_dist_version(ctx->root, site, "torch", env->torch_version,
                               sizeof env->torch_version, meta, sizeof meta) < 0)
        env->torch_version[0] = '\0';
    torch_tag(env->torch_version, env->torch_tag, sizeof env->torch_tag);
}

/* The compiler of desc's runtime facts extensions build with: for_extensions, else on PATH. */
static const cJSON *build_compiler(const cJSON *facts)
{
    const cJSON *c, *on_path = NULL;
    cJSON_ArrayForEach (c, sc_json_member(facts, "compilers")) {
        if (cJSON_IsTrue(sc_json_member(c, "for_extensions")))
            return c;
        if (!on_path && cJSON_IsTrue(sc_json_member(c, "first_on_path")))
            on_path = c;
    }
    return on_path;
}

static void backend_env(const sc_ctx *ctx, extcache_env *env, sc_roots *roots)
{
    for (const sc_backend_desc *const *b = sc_backends; *b && env->backend_count < MAX_BACKENDS;
         b++) {
        const cJSON *facts = sc_ctx_facts(ctx, (*b)->runtime_probe);
        const cJSON *c = build_compiler(facts);
        int i = env->backend_count++;
        env->backends[i].desc = *b;
        env->backends[i].compiler = sc_json_str(c, "path");
        env->backends[i].compiler_root = sc_json_str(c, "root");
        env->backends[i].runtime.kind = SC_ROOT_OTHER;
        for (const char *const *k = (*b)->runtime_library_facts; k && *k; k++) {
            const char *real = sc_json_str(sc_json_member(facts, *k), "realpath");
            if (real && !env->backends[i].runtime_file[0]) {
                sc_fmt(env->backends[i].runtime_file, PATH_MAX, "%s", real);
                sc_roots_of(roots, real, &env->backends[i].runtime);
            }
        }
    }
}

static void env_facts(const extcache_env *env, cJSON *facts)
{
    cJSON *o = cJSON_AddObjectToObject(facts, "environment");
    if (!o)
        return;
    sc_fact_str(o, "python", env->python[0] ? env->python : NULL,
                "offline, or the interpreter could not be located");
    sc_fact_str(o, "torch_dir", env->torch_dir[0] ? env->torch_dir : NULL,
                "libraries.torch found no torch");
    sc_fact_str(o, "torch_version", env->torch_version[0] ? env->torch_version : NULL,
                "no torch metadata");
    char folder[64];
    bool known = env->python_tag[0] && env->torch_tag[0] &&
                 sc_fmt(folder, sizeof folder, "py%s_%s", env->python_tag, env->torch_tag);
    sc_fact_str(o, "cache_folder", known ? folder : NULL,
                "the Python or torch's CUDA tag (its version's +cuXYZ label) is not known");
}

void sc_extcache_env(const sc_ctx *ctx, extcache_env *env, cJSON *facts)
{
    memset(env, 0, sizeof *env);
    python_env(ctx, env);
    torch_env(ctx, env);
    /* torch/lib only: what the build itself leads to (its RPATH/RUNPATH), not LD_LIBRARY_PATH */
    if (env->torch_dir[0])
        sc_fmt(env->ld_library_path, sizeof env->ld_library_path, "%s/lib", env->torch_dir);
    sc_roots *roots = sc_roots_new(ctx->root);
    backend_env(ctx, env, roots);
    sc_roots_free(roots);
    env_facts(env, facts);
}
