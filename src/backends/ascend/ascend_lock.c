/* The Ascend "environment lock" of the install: the CANN toolkit's version labels (the version
 * directory, latest/version.cfg, the install info) must name one release, latest's links must
 * point into one version directory, and the driver's release line (Innerversion) must be one the
 * toolkit's compatible_version lists. Facts and findings of driver.ascend. */
#include "sc_ascend_lock.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sc_ascend.h"

/* The labels that disagree with the first one present, as "directory 8.2.RC2, version.cfg
 * 8.0.T63"; false when all present labels agree (case aside). */
static bool labels_disagree(const sc_ascend_toolkit *tk, char *out, size_t size)
{
    /* The third label is the file the toolkit's version came from, unless that is version.cfg. */
    const char *info = strrchr(tk->info, '/');
    info = info ? info + 1 : tk->info;
    const char *names[] = {"directory", "version.cfg", info};
    const char *values[] = {tk->dir_version, tk->cfg_version,
                            strcmp(info, "version.cfg") == 0 ? "" : tk->version};
    const char *first = NULL;
    bool differ = false;
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < 3; i++) {
        if (!values[i][0])
            continue;
        if (!first)
            first = values[i];
        else if (strcasecmp(first, values[i]) != 0)
            differ = true;
        if (len + 1 < size)
            len += (size_t)snprintf(out + len, size - len, "%s%s %s", len ? ", " : "", names[i],
                                    values[i]);
    }
    return differ;
}

static void check_labels(sc_result *res, const sc_ascend_toolkit *tk, cJSON *o)
{
    char labels[256];
    bool differ = labels_disagree(tk, labels, sizeof labels);
    cJSON_AddBoolToObject(o, "versions_agree", !differ);
    if (tk->dir_other[0])
        sc_finding(res, "ascend.cann-mixed-install", SC_SEV_ERROR,
                   "reinstall every CANN package (toolkit, kernels, nnal) of one release so "
                   "that all of latest's links point into its directory, then source that "
                   "release's set_env.sh",
                   "%s's links point into two CANN version directories: %s and %s (%s -> "
                   "../%s/...): the runtime, compiler and operators come from different releases",
                   tk->via, tk->dir_version, tk->dir_other, tk->dir_other_link, tk->dir_other);
    else if (differ)
        sc_finding(res, "ascend.cann-version-mismatch", SC_SEV_WARN,
                   "check which release really runs (`ls -l` of the toolkit path; "
                   "torch_npu.utils.get_cann_version() or aclsysGetCANNVersion), then reinstall "
                   "that CANN toolkit so its version files agree: tools that read version.cfg "
                   "(HCCL's check across ranks, build scripts) act on the version it states",
                   "the CANN toolkit at %s names two versions: %s", tk->via, labels);
}

/* 1 when the toolkit lists the driver's line or the driver the toolkit's, 0 when a list that
 * could be read names neither, -1 when neither check could be made. */
static int lines_fit(const sc_ascend_toolkit *tk, const sc_ascend_driver_words *drv, char *said,
                     size_t size)
{
    char groups[256];
    int by_toolkit =
        sc_ascend_line_compatible(tk->compatible, drv->innerversion, groups, sizeof groups);
    int len = by_toolkit >= 0 ? snprintf(said, size, "the toolkit lists driver lines %s", groups)
                              : snprintf(said, size, "%s", "");
    int by_driver =
        sc_ascend_line_compatible(drv->compatible, tk->innerversion, groups, sizeof groups);
    if (by_driver >= 0 && len >= 0 && (size_t)len < size)
        snprintf(said + len, size - (size_t)len, "%sthe driver lists CANN lines %s",
                 len ? "; " : "", groups);
    if (by_toolkit == 1 || by_driver == 1)
        return 1;
    return by_toolkit == 0 || by_driver == 0 ? 0 : -1;
}

static void check_driver_line(sc_result *res, const sc_ascend_toolkit *tk,
                              const sc_ascend_driver_words *drv, cJSON *o)
{
    char said[600];
    int fit = lines_fit(tk, drv, said, sizeof said);
    if (fit < 0) {
        sc_fact_null(o, "driver_compatible", "%s",
                     !drv->innerversion[0] ? "the driver's Innerversion is unknown"
                     : !tk->innerversion[0] && !tk->compatible[0]
                         ? "the toolkit has no install info with innerversion and "
                           "compatible_version"
                         : "neither the toolkit's compatible_version nor the driver's names "
                           "V<n>R<n>C<n> release lines");
        return;
    }
    cJSON_AddBoolToObject(o, "driver_compatible", fit == 1);
    if (fit == 0)
        sc_finding(res, "ascend.toolkit-driver-incompatible", SC_SEV_ERROR,
                   "install the driver (Ascend HDK) that the CANN release notes pair with this "
                   "toolkit, or the CANN toolkit that lists this driver's line; reboot after a "
                   "driver change",
                   "the CANN toolkit %s (%s) at %s and the driver %s (%s) do not list each "
                   "other: %s",
                   tk->version, tk->innerversion[0] ? tk->innerversion : "innerversion ?", tk->via,
                   drv->version[0] ? drv->version : "(version ?)", drv->innerversion, said);
}

void sc_ascend_lock_check(sc_result *res, const sc_ascend_toolkits *tks,
                          const sc_ascend_driver_words *drv)
{
    cJSON *arr = cJSON_AddArrayToObject(res->facts, "cann_lock");
    for (int i = 0; i < tks->count && arr; i++) {
        const sc_ascend_toolkit *tk = &tks->items[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "toolkit", tk->via);
        sc_fact_str(o, "driver_innerversion", drv->innerversion[0] ? drv->innerversion : NULL,
                    "no Innerversion= in the driver's version.info");
        check_labels(res, tk, o);
        check_driver_line(res, tk, drv, o);
        cJSON_AddItemToArray(arr, o);
    }
}
