/* The one line a passing probe prints: what it saw, from its facts. Devices and their
 * architectures (drivers, runtimes), the runtime's version and install root, the libraries
 * analysed with their roots and the runtime they link, torch's version, build and devices, the
 * app's stages with their times and the repeat median. Each part is there when its facts are. */
#include <stdlib.h>
#include <string.h>

#include "sc_backend.h"
#include "sc_facts.h"
#include "sc_json.h"
#include "sc_report.h"
#include "sc_util.h"

#define ROOTS_MAX 8

/* Starts a new part of the line: "; " after what is there. */
static void part(sc_buf *b)
{
    if (b->len)
        sc_buf_printf(b, "; ");
}

/* The architecture name of a device: the first of its backend's arch facts it has (every
 * backend's, for a backend-neutral probe). */
static const char *device_kind(const cJSON *dev, sc_backend backend)
{
    const sc_backend_desc *own = sc_backend_get(backend);
    for (const sc_backend_desc *const *b = sc_backends; *b; b++) {
        const sc_backend_desc *desc = own ? own : *b;
        for (size_t i = 0; desc->arch_facts && desc->arch_facts[i]; i++)
            if (sc_json_str(dev, desc->arch_facts[i]))
                return sc_json_str(dev, desc->arch_facts[i]);
        if (own)
            break;
    }
    return "?";
}

/* "8 devices: gfx90a x8" (four kinds at most). */
static void devices_part(sc_buf *b, const sc_outcome *o)
{
    const cJSON *devices = sc_json_member(o->facts, SC_FACT_DEVICES);
    int n = cJSON_GetArraySize(devices);
    if (!cJSON_IsArray(devices) || n == 0)
        return;
    sc_backend backend = o->probe->backend;
    part(b);
    sc_buf_printf(b, "%d device%s:", n, n == 1 ? "" : "s");
    const cJSON *d, *e;
    int index = 0;
    cJSON_ArrayForEach (d, devices) {
        const char *kind = device_kind(d, backend);
        bool seen = false;
        for (e = devices->child; e != d && !seen; e = e->next)
            seen = strcmp(device_kind(e, backend), kind) == 0;
        if (seen || index++ >= 4)
            continue;
        int same = 0;
        for (e = d; e; e = e->next)
            same += strcmp(device_kind(e, backend), kind) == 0;
        sc_buf_printf(b, " %.64s", kind);
        if (same > 1)
            sc_buf_printf(b, " x%d", same);
    }
}

/* "8 accelerators on PCI: amd x8 (amdgpu)": the census, by vendor and bound driver. */
static void pci_part(sc_buf *b, const sc_outcome *o)
{
    const cJSON *pci = sc_json_member(o->facts, "pci"), *d, *e;
    int n = cJSON_GetArraySize(pci);
    if (!cJSON_IsArray(pci) || n == 0 || o->probe->layer != SC_LAYER_DRIVER ||
        o->probe->backend != SC_BACKEND_NONE)
        return;
    part(b);
    sc_buf_printf(b, "%d accelerator%s on PCI:", n, n == 1 ? "" : "s");
    cJSON_ArrayForEach (d, pci) {
        const char *vendor = sc_json_str(d, "vendor") ? sc_json_str(d, "vendor") : "?";
        const char *driver = sc_json_str(d, "driver") ? sc_json_str(d, "driver") : "no driver";
        bool seen = false;
        int same = 0;
        for (e = pci->child; e != d && !seen; e = e->next)
            seen = sc_json_str(e, "vendor") && strcmp(sc_json_str(e, "vendor"), vendor) == 0;
        for (e = d; e && !seen; e = e->next)
            same += sc_json_str(e, "vendor") && strcmp(sc_json_str(e, "vendor"), vendor) == 0;
        if (!seen)
            sc_buf_printf(b, " %.32s x%d (%.32s)", vendor, same ? same : 1, driver);
    }
}

/* "not on PCI: nvidia x1 (seen by its driver)": the census of accelerators only a driver shows
 * (a Jetson's integrated GPU), when PCI has none. */
static void driver_only_part(sc_buf *b, const sc_outcome *o)
{
    const cJSON *pci = sc_json_member(o->facts, "pci"), *name;
    const cJSON *present = sc_json_member(o->facts, "present");
    if (cJSON_GetArraySize(pci) > 0 || !cJSON_IsArray(present) ||
        o->probe->layer != SC_LAYER_DRIVER || o->probe->backend != SC_BACKEND_NONE)
        return;
    cJSON_ArrayForEach (name, present) {
        if (!cJSON_IsString(name))
            continue;
        const cJSON *seen = sc_json_member(sc_json_member(o->facts, "backends"), name->valuestring);
        const cJSON *count = sc_json_member(seen, "driver_devices");
        part(b);
        sc_buf_printf(b, "not on PCI: %.32s x%d (seen by its driver)", name->valuestring,
                      cJSON_IsNumber(count) ? count->valueint : 1);
    }
}

/* "1 platform GPU, driver 35.3.1": a driver probe's GPUs that are not on PCI (Tegra). */
static void platform_part(sc_buf *b, const sc_outcome *o)
{
    const cJSON *platform = sc_json_member(o->facts, "platform_gpus");
    if (!cJSON_IsNumber(platform) || platform->valueint <= 0)
        return;
    const char *driver = sc_json_str(o->facts, "driver_version");
    part(b);
    sc_buf_printf(b, "%d platform GPU%s", platform->valueint, platform->valueint == 1 ? "" : "s");
    if (driver)
        sc_buf_printf(b, ", driver %.64s", driver);
}

/* "gloo, 2 ranks verified, all-reduce 4.0 MiB in 98.1 ms, libgloo in /usr": the collective check.
 */
static void collective_part(sc_buf *b, const sc_outcome *o)
{
    const char *backend = sc_json_str(o->facts, "backend");
    const cJSON *world = sc_json_member(o->facts, "world");
    if (!backend || !cJSON_IsNumber(world))
        return;
    part(b);
    sc_buf_printf(b, "%.16s, %d rank%s%s", backend, world->valueint,
                  world->valueint == 1 ? "" : "s",
                  cJSON_IsTrue(sc_json_member(o->facts, "verified")) ? " verified" : "");
    const cJSON *ms = sc_json_member(o->facts, "all_reduce_ms");
    if (cJSON_IsNumber(ms))
        sc_buf_printf(b, ", all-reduce %.1f MiB in %.1f ms",
                      sc_json_num(o->facts, "all_reduce_bytes", 0) / 1048576.0, ms->valuedouble);
    const cJSON *lib = sc_json_member(o->facts, "library");
    const char *real = sc_json_str(lib, "realpath"), *root = sc_json_str(lib, "root");
    if (real) {
        const char *base = strrchr(real, '/');
        sc_buf_printf(b, ", %.64s in %.200s", base ? base + 1 : real, root ? root : real);
    }
}

/* "CANN 8.0.RC3, torch_npu 2.1.0, 1 operator directory": the Ascend framework triple. */
static void ascend_triple_part(sc_buf *b, const sc_outcome *o)
{
    const cJSON *triple = sc_json_member(o->facts, "triple");
    if (!cJSON_IsObject(triple))
        return;
    const char *cann = sc_json_str(triple, "cann"), *npu = sc_json_str(triple, "torch_npu");
    part(b);
    sc_buf_printf(b, "CANN %.64s, torch_npu %.64s", cann ? cann : "unknown",
                  npu ? npu : "not installed");
    int dirs = cJSON_GetArraySize(sc_json_member(o->facts, "operator_dirs"));
    if (dirs > 0)
        sc_buf_printf(b, ", %d operator director%s", dirs, dirs == 1 ? "y" : "ies");
}

/* "runtime 6.0.3 in /opt/rocm-6.0.3": the runtime library the probe loaded (else the loader's). */
static void runtime_part(sc_buf *b, const sc_outcome *o)
{
    const sc_backend_desc *desc = sc_backend_get(o->probe->backend);
    if (!desc || o->probe->layer != SC_LAYER_RUNTIME)
        return;
    for (const char *const *k = desc->runtime_library_facts; k && *k; k++) {
        const cJSON *lib = sc_json_member(o->facts, *k);
        const char *version = sc_json_str(lib, SC_FACT_VERSION);
        const char *root = sc_json_str(lib, "root");
        if (!sc_json_str(lib, SC_FACT_REALPATH))
            continue;
        part(b);
        sc_buf_printf(b, "runtime %.64s in %.200s", version ? version : "(version unknown)",
                      root ? root : sc_json_str(lib, SC_FACT_REALPATH));
        return;
    }
}

/* True when soname is one of a backend's runtime libraries ("libamdhip64.so.5"). */
static bool is_runtime(const char *soname)
{
    for (const sc_backend_desc *const *b = sc_backends; *b && soname; b++)
        for (const char *const *r = (*b)->runtime_libraries; r && *r; r++)
            if (sc_starts_with(soname, *r))
                return true;
    return false;
}

static void add_root(const char **roots, int *n, const char *root)
{
    for (int i = 0; root && i < *n; i++)
        if (strcmp(roots[i], root) == 0)
            return;
    if (root && *n < ROOTS_MAX)
        roots[(*n)++] = root;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* How many distinct texts paths[0..n) holds (sorts it). */
static int distinct(const char **paths, int n)
{
    int count = 0;
    qsort(paths, (size_t)n, sizeof *paths, by_text);
    for (int i = 0; i < n; i++)
        count += i == 0 || strcmp(paths[i - 1], paths[i]) != 0;
    return count;
}

/* Notes library l (an analysed file or one of its dependencies): its path, root, and whether it
 * is a runtime. */
typedef struct {
    const char **paths;
    int n, max, nroots;
    const char *roots[ROOTS_MAX];
    const char *runtime, *runtime_root;
} lib_tally;

static void tally_library(lib_tally *t, const cJSON *l, const char *name_key)
{
    const char *path = sc_json_str(l, SC_FACT_REALPATH) ? sc_json_str(l, SC_FACT_REALPATH)
                                                        : sc_json_str(l, "path");
    if (path && t->n < t->max)
        t->paths[t->n++] = path;
    add_root(t->roots, &t->nroots, sc_json_str(l, "root"));
    if (!t->runtime && is_runtime(sc_json_str(l, name_key))) {
        t->runtime = sc_json_str(l, name_key);
        t->runtime_root = sc_json_str(l, "root");
    }
}

/* "41 libraries from /usr, /opt/rocm; runtime libamdhip64.so.5 (/opt/rocm)". */
static void libraries_part(sc_buf *b, const sc_outcome *o)
{
    const cJSON *files = sc_json_member(o->facts, "files"), *f, *l;
    if (o->probe->layer != SC_LAYER_LIBRARIES || !cJSON_IsArray(files))
        return;
    lib_tally t = {.max = 8192};
    t.paths = malloc((size_t)t.max * sizeof *t.paths);
    if (!t.paths)
        return;
    cJSON_ArrayForEach (f, files) {
        tally_library(&t, f, "soname");
        cJSON_ArrayForEach (l, sc_json_member(f, "libraries"))
            tally_library(&t, l, "name");
    }
    int count = distinct(t.paths, t.n);
    part(b);
    sc_buf_printf(b, "%d librar%s", count, count == 1 ? "y" : "ies");
    for (int i = 0; i < t.nroots; i++)
        sc_buf_printf(b, "%s%.200s", i ? ", " : " from ", t.roots[i]);
    if (t.runtime)
        sc_buf_printf(b, "; runtime %.100s (%.200s)", t.runtime,
                      t.runtime_root ? t.runtime_root : "?");
    free(t.paths);
}

/* "torch 2.3.0, HIP 6.0 build, 8 devices". */
static void torch_part(sc_buf *b, const sc_outcome *o)
{
    const cJSON *torch = sc_json_member(o->facts, "torch");
    const char *version = sc_json_str(torch, "version");
    if (!version)
        return;
    part(b);
    sc_buf_printf(b, "torch %.64s, ", version);
    const char *build = NULL, *field = NULL;
    for (const sc_backend_desc *const *d = sc_backends; *d && !build; d++)
        if ((*d)->torch_build && sc_json_str(torch, (*d)->torch_build)) {
            field = (*d)->torch_build;
            build = sc_json_str(torch, field);
        }
    if (build) {
        for (const char *c = field; *c; c++)
            sc_buf_printf(b, "%c", *c >= 'a' && *c <= 'z' ? *c - 32 : *c);
        sc_buf_printf(b, " %.64s build", build);
    } else {
        const cJSON *plugin =
            cJSON_GetArrayItem(sc_json_member(sc_json_member(o->facts, "metadata"), "plugins"), 0);
        if (sc_json_str(plugin, "name"))
            sc_buf_printf(b, "build with %.64s %.64s", sc_json_str(plugin, "name"),
                          sc_json_str(plugin, "version") ? sc_json_str(plugin, "version") : "");
        else
            sc_buf_printf(b, "CPU build");
    }
    const cJSON *n = sc_json_member(torch, "device_count");
    if (cJSON_IsNumber(n))
        sc_buf_printf(b, ", %d device%s", n->valueint, n->valueint == 1 ? "" : "s");
}

/* "stages load 3.0 s, train 4.0 s; median 7.0 s over 4 runs". */
static void app_part(sc_buf *b, const sc_outcome *o)
{
    const cJSON *stages = sc_json_member(o->facts, "stages"), *s;
    const cJSON *timing = sc_json_member(o->facts, "timing");
    if (o->probe->layer != SC_LAYER_APP)
        return;
    int i = 0;
    cJSON_ArrayForEach (s, stages) {
        const cJSON *ms = sc_json_member(s, "duration_ms");
        if (i == 0)
            part(b);
        if (i++ < 6 && sc_json_str(s, "name"))
            sc_buf_printf(b, "%s%.64s %.1f s", i > 1 ? ", " : "stages ", sc_json_str(s, "name"),
                          cJSON_IsNumber(ms) ? ms->valuedouble / 1000.0 : 0.0);
    }
    if (i > 6)
        sc_buf_printf(b, ", %d more", i - 6);
    const cJSON *median = sc_json_member(timing, "steady_median_ms");
    const cJSON *first = sc_json_member(timing, "first_ms");
    if (cJSON_IsNumber(median)) {
        part(b);
        const cJSON *runs = sc_json_member(timing, "steady_runs");
        int n = cJSON_IsNumber(runs) ? runs->valueint : 0;
        sc_buf_printf(b, "repeat median %.1f s over %d run%s", median->valuedouble / 1000.0, n,
                      n == 1 ? "" : "s");
    } else if (cJSON_IsNumber(first)) {
        part(b);
        sc_buf_printf(b, "one run %.1f s", first->valuedouble / 1000.0);
    }
}

void sc_report_summary(const sc_outcome *o, sc_buf *b)
{
    pci_part(b, o);
    driver_only_part(b, o);
    devices_part(b, o);
    platform_part(b, o);
    collective_part(b, o);
    ascend_triple_part(b, o);
    runtime_part(b, o);
    libraries_part(b, o);
    torch_part(b, o);
    app_part(b, o);
}
