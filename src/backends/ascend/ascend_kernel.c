/* Whether the Ascend driver fits the running kernel. The driver's installer copies its kernel
 * modules to /lib/modules/<uname -r>/updates (or has DKMS build them there) and records each as a
 * "[driver_ko] PATH" line of /etc/ascend_filelist.info; a module's vermagic names the kernel it was
 * built for. The install files declare no other kernel range, so the modules are the declaration:
 * a module with no build for the running kernel does not load after a kernel change. */
#include "sc_ascend_kernel.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_ascend.h"
#include "sc_host.h"
#include "sc_modinfo.h"
#include "sc_util.h"

#define FILELIST "/etc/ascend_filelist.info"
#define MAX_MODULES 64 /* a driver ships about 30; more lines are counted, not read */
#define VERMAGIC_MAX 256

typedef struct {
    char path[PATH_MAX];
    char name[96];               /* the file name up to ".ko" */
    char vermagic[VERMAGIC_MAX]; /* "" when unread */
    char release[128];           /* vermagic's first word */
    char why[PATH_MAX + 96];     /* why vermagic is unread */
    bool declared;               /* from the file list, not the running kernel's tree */
} kmod;

typedef struct {
    const sc_root *root;
    sc_result *res;
    char running[128]; /* "" when unknown */
    kmod *mods;
    size_t count, unread;
} kfit;

static void read_module(kfit *k, const char *path, bool declared)
{
    kmod *m = &k->mods[k->count++];
    sc_fmt(m->path, sizeof m->path, "%s", path);
    const char *base = strrchr(path, '/');
    sc_fmt(m->name, sizeof m->name, "%s", base ? base + 1 : path);
    m->name[strcspn(m->name, ".")] = '\0';
    m->declared = declared;
    sc_error err = {0};
    if (sc_modinfo_read(k->root, path, "vermagic", m->vermagic, sizeof m->vermagic, &err) < 0) {
        m->vermagic[0] = '\0';
        sc_fmt(m->why, sizeof m->why, "%s", err.message);
    } else if (!sc_kernel_vermagic_release(m->vermagic, m->release, sizeof m->release)) {
        sc_fmt(m->why, sizeof m->why, "the vermagic of %s names no kernel release", path);
    }
}

static bool module_fits(const kfit *k, const char *name)
{
    for (size_t i = 0; i < k->count; i++)
        if (strcmp(k->mods[i].name, name) == 0 && k->running[0] &&
            strcmp(k->mods[i].release, k->running) == 0)
            return true;
    return false;
}

/* A declared module under /lib/modules/<other release>/ may have been rebuilt (DKMS) or copied
 * for the running kernel at the same place in its tree, which the file list does not record. */
static void add_running_copy(kfit *k, const kmod *m)
{
    const char *rest = sc_starts_with(m->path, "/lib/modules/") ? strchr(m->path + 13, '/') : NULL;
    char path[PATH_MAX + 160];
    if (!rest || !k->running[0] || module_fits(k, m->name) || k->count >= MAX_MODULES ||
        !sc_fmt(path, sizeof path, "/lib/modules/%s%s", k->running, rest) ||
        !sc_root_exists(k->root, path))
        return;
    read_module(k, path, false);
}

static bool listed(const kfit *k, const char *path)
{
    for (size_t i = 0; i < k->count; i++)
        if (strcmp(k->mods[i].path, path) == 0)
            return true;
    return false;
}

/* Each distinct path once: a reinstall over an install appends the same lines again. */
static void collect(kfit *k, const char *text)
{
    char path[PATH_MAX];
    for (const char *at = text; sc_ascend_filelist_next(&at, "driver_ko", path, sizeof path);) {
        if (listed(k, path))
            continue;
        if (k->count < MAX_MODULES)
            read_module(k, path, true);
        else
            k->unread++;
    }
    size_t declared = k->count;
    for (size_t i = 0; i < declared; i++)
        add_running_copy(k, &k->mods[i]);
}

static bool module_loaded(const kfit *k, const char *name)
{
    char path[192], state[32];
    return sc_fmt(path, sizeof path, "/sys/module/%s/initstate", name) &&
           sc_root_read_line(k->root, path, state, sizeof state) == 0 && strcmp(state, "live") == 0;
}

static cJSON *module_json(const kfit *k, const kmod *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", m->name);
    cJSON_AddStringToObject(o, "path", m->path);
    cJSON_AddBoolToObject(o, "declared", m->declared);
    if (m->release[0]) {
        cJSON_AddStringToObject(o, "vermagic", m->vermagic);
        cJSON_AddStringToObject(o, "vermagic_release", m->release);
    } else {
        sc_fact_null(o, "vermagic", "%s", m->why);
        sc_fact_null(o, "vermagic_release", "%s", m->why);
    }
    if (m->release[0] && k->running[0])
        cJSON_AddBoolToObject(o, "fits", strcmp(m->release, k->running) == 0);
    else
        sc_fact_null(o, "fits", "%s", m->release[0] ? "the running kernel is unknown" : m->why);
    return o;
}

/* The modules (by name) that have no build for the running kernel and are not loaded. */
typedef struct {
    size_t names, misfits;
    const kmod *first; /* a build of the first misfit */
    bool other_base;   /* a misfit built for another base version: the installer refuses it */
    bool no_crcs;      /* a misfit without symbol versions: the kernel compares the release */
    char list[256];
} verdict;

static bool name_seen(const kfit *k, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (k->mods[j].release[0] && strcmp(k->mods[j].name, k->mods[i].name) == 0)
            return true;
    return false;
}

static void note_misfit(const kfit *k, const char *name, verdict *v)
{
    char base[128], running_base[128] = "";
    sc_kernel_release_base(k->running, running_base, sizeof running_base);
    for (size_t i = 0; i < k->count; i++) {
        const kmod *m = &k->mods[i];
        if (!m->release[0] || strcmp(m->name, name) != 0)
            continue;
        if (!v->first)
            v->first = m;
        if (!sc_kernel_release_base(m->release, base, sizeof base) ||
            strcmp(base, running_base) != 0)
            v->other_base = true;
        if (!sc_kernel_vermagic_modversions(m->vermagic))
            v->no_crcs = true;
    }
    size_t len = strlen(v->list);
    if (len + 1 < sizeof v->list)
        snprintf(v->list + len, sizeof v->list - len, "%s%s", len ? ", " : "", name);
    v->misfits++;
}

static void judge(const kfit *k, verdict *v)
{
    for (size_t i = 0; i < k->count; i++) {
        const kmod *m = &k->mods[i];
        if (!m->release[0] || name_seen(k, i))
            continue;
        v->names++;
        if (!module_fits(k, m->name) && !module_loaded(k, m->name))
            note_misfit(k, m->name, v);
    }
}

static void report(const kfit *k, const verdict *v)
{
    const kmod *m = v->first;
    char hint[1024];
    if (v->other_base)
        sc_fmt(hint, sizeof hint,
               "boot kernel %s, the one the driver's modules were built for; or install dkms and "
               "this kernel's headers (kernel-devel or linux-headers-%s) and reinstall the Ascend "
               "driver package (Ascend-hdk-*-npu-driver .run --full) while this kernel runs, so "
               "that DKMS builds its modules for it: its installer refuses prebuilt modules of "
               "another base version",
               m->release, k->running);
    else
        sc_fmt(hint, sizeof hint,
               "reinstall the Ascend driver package (Ascend-hdk-*-npu-driver .run --full) while "
               "this kernel runs: its installer checks its modules against uname -r and installs "
               "them to /lib/modules/%s/updates (or rebuilds them with DKMS); or boot kernel %s, "
               "the one they were built for",
               k->running, m->release);
    bool hard = v->other_base || v->no_crcs;
    sc_finding(k->res, hard ? "ascend.kernel-unsupported" : "ascend.kernel-modules-other-build",
               hard ? SC_SEV_ERROR : SC_SEV_WARN, hint,
               "the running kernel is %s, but %zu of the Ascend driver's %zu kernel module(s) "
               "(%s) were built for kernel %s (vermagic of %s)%s",
               k->running, v->misfits, v->names, v->list, m->release, m->path,
               v->other_base ? ", another base version: they do not load"
               : v->no_crcs  ? " without symbol versions: the kernel refuses another release"
                             : "; they carry symbol versions (modversions), so this kernel loads "
                               "them only if the CRC of every symbol they use matches");
}

static void add_facts(const kfit *k, const verdict *v, cJSON *o)
{
    sc_fact_str(o, "running", k->running[0] ? k->running : NULL,
                "no /proc/sys/kernel/osrelease in the root");
    cJSON_AddStringToObject(o, "declared_by", FILELIST);
    cJSON *arr = cJSON_AddArrayToObject(o, "modules");
    for (size_t i = 0; i < k->count && arr; i++)
        cJSON_AddItemToArray(arr, module_json(k, &k->mods[i]));
    cJSON_AddNumberToObject(o, "unread_modules", (double)k->unread);
    if (!k->running[0] || v->names == 0)
        sc_fact_null(o, "fits", "%s",
                     !k->running[0] ? "the running kernel is unknown"
                                    : "no declared module's vermagic could be read");
    else
        cJSON_AddBoolToObject(o, "fits", v->misfits == 0);
    sc_fact_null(o, "declared_range",
                 "the driver's install files declare no supported kernel range; its installer "
                 "checks its modules' vermagic against the running kernel instead");
}

void sc_ascend_kernel_check(const sc_root *root, sc_result *res)
{
    char *text = NULL;
    long n = sc_root_read(root, FILELIST, &text, 256 * 1024);
    if (n < 0) {
        sc_fact_null(res->facts, "kernel_fit",
                     "%s: %s (the driver's installer records its kernel modules there)", FILELIST,
                     sc_root_strerror((int)n));
        return;
    }
    kfit k = {.root = root, .res = res, .mods = calloc(MAX_MODULES, sizeof(kmod))};
    if (!k.mods) {
        sc_fact_null(res->facts, "kernel_fit", "out of memory");
        free(text);
        return;
    }
    if (!sc_host_kernel_release(root, k.running, sizeof k.running))
        k.running[0] = '\0';
    collect(&k, text);
    verdict v = {0};
    if (k.count == 0 && k.unread == 0) {
        sc_fact_null(res->facts, "kernel_fit", "no [driver_ko] line in %s", FILELIST);
    } else {
        judge(&k, &v);
        add_facts(&k, &v, cJSON_AddObjectToObject(res->facts, "kernel_fit"));
        if (v.misfits && k.running[0])
            report(&k, &v);
        if (k.unread)
            sc_finding(res, "ascend.kernel-modules-budget", SC_SEV_WARN,
                       "a driver installs about 30 modules: a list this long grew by reinstalls "
                       "over an install; uninstall the driver (which removes the list) and "
                       "install it once",
                       "%s records %zu kernel modules; only the first %d were read, and the "
                       "fit of the other %zu is not known",
                       FILELIST, k.count + k.unread, MAX_MODULES, k.unread);
    }
    free(k.mods);
    free(text);
}
