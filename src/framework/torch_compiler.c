/* The seed's "hipcc --version matches the container's DTK", against torch: the compiler an
 * extension would be built with (the runtime layer's facts.compilers: the one
 * torch.utils.cpp_extension takes, else the one on PATH) must be of the HIP/CUDA release torch was
 * built for, and of the install whose runtime torch loaded. The runtime layer finds the
 * compilers; this layer knows torch, so the cross-check lives here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_compilers.h"
#include "sc_torch.h"
#include "sc_util.h"

/* Root kinds whose installs hold compilers, or the system's: a runtime torch loaded from one of
 * these was built with that install's compiler. A wheel's own runtime (kind python) is not. */
static bool install_kind(const char *kind)
{
    static const char *const kinds[] = {"dtk", "rocm", "cuda", "cann", "system", NULL};
    return kind && sc_backend_list_has(kinds, kind);
}

/* The compiler extensions build with: the one marked for_extensions, else the first on PATH. */
static const cJSON *build_compiler(const cJSON *compilers)
{
    const cJSON *c, *on_path = NULL;
    cJSON_ArrayForEach (c, compilers) {
        if (cJSON_IsTrue(sc_json_member(c, "for_extensions")))
            return c;
        if (!on_path && cJSON_IsTrue(sc_json_member(c, "first_on_path")))
            on_path = c;
    }
    return on_path;
}

/* "6.0" of "6.0.32830-d62f6a171" into buf; false when it does not start with N.M. */
static bool major_minor(const char *v, char *buf, size_t size)
{
    int major, minor, n = 0;
    if (!v || sscanf(v, "%d.%d%n", &major, &minor, &n) != 2 || n == 0)
        return false;
    return sc_fmt(buf, size, "%d.%d", major, minor);
}

/* Another compiler of the runtime facts whose release is want, into buf as its root; false when
 * none is. */
static bool compiler_of_release(const cJSON *compilers, const char *want, char *buf, size_t size)
{
    const cJSON *c;
    char mm[32];
    cJSON_ArrayForEach (c, compilers)
        if (major_minor(sc_json_str(c, "version"), mm, sizeof mm) && strcmp(mm, want) == 0 &&
            sc_json_str(c, "root"))
            return sc_fmt(buf, size, "%s", sc_json_str(c, "root"));
    return false;
}

/* The hint: the install torch's runtime came from, else one with torch's release. */
static void compiler_hint(const sc_ctx *ctx, const sc_backend_desc *desc, const cJSON *compilers,
                          const char *runtime_root, const char *want, char *buf, size_t size)
{
    char root[PATH_MAX], script[PATH_MAX];
    const char *home = desc->extension_homes ? desc->extension_homes[0] : NULL;
    bool found = (runtime_root && sc_fmt(root, sizeof root, "%s", runtime_root)) ||
                 compiler_of_release(compilers, want, root, sizeof root);
    if (found && sc_compiler_env_script(ctx->root, desc, root, script, sizeof script))
        sc_fmt(buf, size,
               "source %s in a clean shell before building extensions, so that the compiler is "
               "the install's torch uses",
               script);
    else if (found)
        sc_fmt(buf, size,
               "build extensions with the compiler of %s: put %s/bin first on PATH%s%s%s%s", root,
               root, home ? " and set " : "", home ? home : "", home ? "=" : "", home ? root : "");
    else
        sc_fmt(buf, size,
               "install the %s %s torch was built for and build extensions with its compiler, or "
               "install a torch built for the compiler's release",
               desc->torch_build, want);
}

void sc_torch_check_compiler(const sc_ctx *ctx, sc_result *res, const cJSON *torch,
                             const sc_backend_desc *desc, const char *build_version)
{
    const cJSON *compilers = sc_json_member(sc_ctx_facts(ctx, desc->runtime_probe), "compilers");
    const cJSON *c = build_compiler(compilers);
    const cJSON *rt = sc_torch_mapped_runtime(sc_json_member(torch, "mapped_libraries"), desc);
    const char *rt_root =
        install_kind(sc_json_str(rt, "root_kind")) ? sc_json_str(rt, "root") : NULL;
    char want[32], have[32], hint[2 * PATH_MAX + 256];
    if (!c || !major_minor(build_version, want, sizeof want))
        return;
    bool other_release =
        major_minor(sc_json_str(c, "version"), have, sizeof have) && strcmp(have, want) != 0;
    bool other_root = rt_root && sc_json_str(c, "root") &&
                      strcmp(sc_json_str(c, "root_kind") ?: "", "other") != 0 &&
                      strcmp(sc_json_str(c, "root"), rt_root) != 0;
    if (!other_release && !other_root)
        return;
    compiler_hint(ctx, desc, compilers, rt_root, want, hint, sizeof hint);
    sc_finding(res, "torch.compiler-mismatch", SC_SEV_WARN, hint,
               "torch %s was built for %s %s%s%s but extensions would build with %s (%s %s, "
               "install %s)%s",
               sc_json_str(torch, "version") ?: "?", desc->torch_build, build_version,
               rt_root ? " and loads its runtime from " : "", rt_root ?: "",
               sc_json_str(c, "path") ?: "?", desc->torch_build,
               sc_json_str(c, "version") ?: "version unknown", sc_json_str(c, "root") ?: "?",
               other_release && other_root ? ": another release, from another install"
               : other_release             ? ": another release"
                                           : ": another install");
}
