/* The CANN 8.x layout's own words on which version is installed: ascend-toolkit/latest is a link
 * to a version directory, or a directory of links into one (runtime -> ../8.2.RC2/runtime), and
 * latest/version.cfg names the running version. Read through the root; nothing is followed out. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sc_ascend.h"
#include "sc_ascend_install.h"
#include "sc_probe.h"
#include "sc_util.h"

#define LINKS_BUDGET 256 /* entries of latest/ looked at */

/* The last component of a link target ("../8.0.RC3/" -> "8.0.RC3") into out. */
static void last_component(const char *target, char *out, size_t size)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", target);
    size_t n = strlen(copy);
    while (n > 1 && copy[n - 1] == '/')
        copy[--n] = '\0';
    const char *slash = strrchr(copy, '/');
    sc_fmt(out, size, "%s", slash ? slash + 1 : copy); /* cut to size: a directory name */
}

/* The version directory a link of latest/ points into: "../8.2.RC2/runtime" -> "8.2.RC2"; false
 * for links inside latest ("aarch64-linux/lib64") or elsewhere. */
static bool sibling_version(const char *target, char *out, size_t size)
{
    if (strncmp(target, "../", 3) != 0)
        return false;
    const char *name = target + 3, *end = strchr(name, '/');
    size_t n = end ? (size_t)(end - name) : strlen(name);
    if (n == 0 || n >= size || (n <= 2 && name[0] == '.'))
        return false;
    memcpy(out, name, n);
    out[n] = '\0';
    return true;
}

typedef struct {
    char runtime[64];              /* where latest/runtime points: the runtime is what loads */
    char seen[2][64], link[2][64]; /* the first two distinct directories and a link into each */
    int count;
} link_tally;

static void tally_link(link_tally *t, const char *name, const char *version)
{
    if (strcmp(name, "runtime") == 0)
        snprintf(t->runtime, sizeof t->runtime, "%s", version);
    for (int i = 0; i < t->count; i++)
        if (strcmp(t->seen[i], version) == 0)
            return;
    if (t->count < 2) {
        snprintf(t->seen[t->count], sizeof t->seen[0], "%s", version);
        sc_fmt(t->link[t->count++], sizeof t->link[0], "%s", name);
    }
}

/* latest/ as a directory of links: the version directory of its runtime link (else of the first
 * link), and another one its links point into. */
static void scan_latest_links(const sc_root *root, sc_ascend_toolkit *tk)
{
    DIR *d = sc_root_opendir(root, tk->via);
    if (!d)
        return;
    link_tally t = {.count = 0};
    struct dirent *e;
    for (int seen = 0; (e = readdir(d)) && seen < LINKS_BUDGET; seen++) {
        char path[PATH_MAX], target[PATH_MAX], version[64];
        if (e->d_name[0] != '.' && sc_fmt(path, sizeof path, "%s/%s", tk->via, e->d_name) &&
            sc_root_readlink(root, path, target, sizeof target) > 0 &&
            sibling_version(target, version, sizeof version))
            tally_link(&t, e->d_name, version);
    }
    closedir(d);
    const char *primary = t.runtime[0] ? t.runtime : t.count ? t.seen[0] : "";
    snprintf(tk->dir_version, sizeof tk->dir_version, "%s", primary);
    for (int i = 0; i < t.count; i++)
        if (strcmp(t.seen[i], primary) != 0) {
            snprintf(tk->dir_other, sizeof tk->dir_other, "%s", t.seen[i]);
            snprintf(tk->dir_other_link, sizeof tk->dir_other_link, "%s", t.link[i]);
            break;
        }
}

/* Which version directory the path the toolkit was found through names. */
static void read_directory_version(const sc_root *root, sc_ascend_toolkit *tk)
{
    char target[PATH_MAX];
    const char *base = strrchr(tk->via, '/');
    base = base ? base + 1 : tk->via;
    if (strncmp(base, "cann-", 5) == 0) { /* CANN 8.5+: cann-X.Y.Z */
        snprintf(tk->dir_version, sizeof tk->dir_version, "%s", base + 5);
    } else if (strcmp(base, "latest") != 0 && strcmp(base, "cann") != 0) {
        return;
    } else if (sc_root_readlink(root, tk->via, target, sizeof target) > 0) {
        char name[64];
        last_component(target, name, sizeof name); /* latest -> 8.0.RC3, cann -> cann-8.5.0 */
        snprintf(tk->dir_version, sizeof tk->dir_version, "%s",
                 strncmp(name, "cann-", 5) == 0 ? name + 5 : name);
    } else if (strcmp(base, "latest") == 0) {
        scan_latest_links(root, tk);
    }
}

void sc_ascend_layout_read(const sc_root *root, sc_ascend_toolkit *tk)
{
    read_directory_version(root, tk);
    char path[PATH_MAX + 16], *text = NULL;
    if (sc_fmt(path, sizeof path, "%s/version.cfg", tk->via) &&
        sc_root_read(root, path, &text, 64 * 1024) >= 0 &&
        !sc_ascend_cfg_running(text, "runtime_running_version", tk->cfg_component,
                               sizeof tk->cfg_component, tk->cfg_version, sizeof tk->cfg_version))
        sc_ascend_cfg_running(text, "toolkit_running_version", tk->cfg_component,
                              sizeof tk->cfg_component, tk->cfg_version, sizeof tk->cfg_version);
    free(text);
}

void sc_ascend_layout_facts(cJSON *o, const sc_ascend_toolkit *tk)
{
    if (tk->cfg_version[0]) {
        cJSON *cfg = cJSON_AddObjectToObject(o, "version_cfg");
        cJSON_AddStringToObject(cfg, "cann", tk->cfg_version);
        cJSON_AddStringToObject(cfg, "component", tk->cfg_component);
    } else {
        sc_fact_null(o, "version_cfg",
                     "no version.cfg with runtime_running_version or toolkit_running_version "
                     "beside the toolkit");
    }
    sc_fact_str(o, "directory_version", tk->dir_version[0] ? tk->dir_version : NULL,
                "the path names no version directory");
    if (tk->dir_other[0]) {
        cJSON *m = cJSON_AddArrayToObject(o, "mixed_directories");
        cJSON_AddItemToArray(m, cJSON_CreateString(tk->dir_version));
        cJSON_AddItemToArray(m, cJSON_CreateString(tk->dir_other));
    }
}
