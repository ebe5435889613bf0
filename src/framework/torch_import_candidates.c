/* Which file Python really imports for --import MODULE. The import child lists every copy the
 * import system would find (facts.imports[].candidates, in the order it asks: sys.path entries,
 * meta path finders such as editable installs) with mtimes and what put each directory on
 * sys.path (.pth, .egg-link); this process judges: a newer copy further along is shadowed by the
 * older one imported, the seed's "is the file Python imports the one just built?". */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sc_torch.h"
#include "sc_util.h"

#define SHADOW_SLACK_S 1.0 /* copies written within a second of each other are one build */

/* "2024-03-05 10:00:00 UTC" of an mtime in seconds. */
static const char *when(double mtime, char *buf, size_t size)
{
    time_t t = (time_t)mtime;
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(buf, size, "?");
    return buf;
}

static bool mtime_of(const cJSON *c, double *out)
{
    const cJSON *m = sc_json_member(c, "mtime");
    if (!cJSON_IsNumber(m))
        return false;
    *out = m->valuedouble;
    return true;
}

/* The newest copy after the imported one that is newer than it, or NULL. */
static const cJSON *newer_shadowed(const cJSON *candidates, const cJSON **imported)
{
    const cJSON *c, *best = NULL;
    double mine = 0, t, best_t = 0;
    *imported = NULL;
    cJSON_ArrayForEach (c, candidates) {
        if (!*imported) {
            if (cJSON_IsTrue(sc_json_member(c, "imported")) && mtime_of(c, &mine))
                *imported = c;
            continue;
        }
        if (mtime_of(c, &t) && t > mine + SHADOW_SLACK_S && (!best || t > best_t)) {
            best = c;
            best_t = t;
        }
    }
    return best;
}

/* " (on sys.path through /x/easy-install.pth, /x/proj.egg-link)" of a copy, into buf. */
static const char *origin_of(const cJSON *c, char *buf, size_t size)
{
    const char *pth = sc_json_str(c, "added_by"), *link = sc_json_str(c, "egg_link");
    if (!pth && !link)
        return "";
    sc_fmt(buf, size, " (on the path through %s%s%s)", pth ? pth : "", pth && link ? ", " : "",
           link ? link : "");
    return buf;
}

static void check_shadowed(sc_result *res, const cJSON *m)
{
    const char *module = sc_json_str(m, "module") ? sc_json_str(m, "module") : "?";
    const cJSON *imported, *newer = newer_shadowed(sc_json_member(m, "candidates"), &imported);
    if (!newer)
        return;
    char t_old[64], t_new[64], o_old[2 * PATH_MAX + 64], o_new[2 * PATH_MAX + 64];
    char hint[PATH_MAX + 512];
    const char *old_path = sc_json_str(imported, "dir") ?: sc_json_str(imported, "path");
    sc_fmt(
        hint, sizeof hint,
        "remove the older copy (pip uninstall it when it is installed, or delete %s) or put "
        "the newer copy's directory first on the path; python -c 'import %s; print(%s.__file__)' "
        "shows which file Python takes",
        old_path ? old_path : "it", module, module);
    sc_finding(res, "torch.import-shadowed", SC_SEV_WARN, hint,
               "import %s takes %s from %s%s, modified %s, but a newer copy %s from %s%s, modified "
               "%s, comes later and is never imported",
               module, sc_json_str(imported, "path") ?: "?", sc_json_str(imported, "from") ?: "?",
               origin_of(imported, o_old, sizeof o_old),
               when(sc_json_member(imported, "mtime")->valuedouble, t_old, sizeof t_old),
               sc_json_str(newer, "path") ?: "?", sc_json_str(newer, "from") ?: "?",
               origin_of(newer, o_new, sizeof o_new),
               when(sc_json_member(newer, "mtime")->valuedouble, t_new, sizeof t_new));
}

void sc_torch_check_import_candidates(const sc_ctx *ctx, sc_result *res, cJSON *m,
                                      const cJSON *torch)
{
    check_shadowed(res, m);
    if (cJSON_IsTrue(sc_json_member(m, "ok")))
        sc_torch_check_import_native(ctx, res, m, torch);
}
