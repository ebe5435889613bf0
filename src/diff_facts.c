/* The facts that say which stack a snapshot describes, compared: host (OS, kernel), driver module
 * and firmware, runtime and its library, installed DTK/ROCm/CANN roots, torch and Python versions,
 * the devices of each layer, and the roots that loaded libraries came from. Known paths first, then
 * every "*version*" fact of any probe, so probes added later are compared too. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "sc_diff.h"

#define WALK_DEPTH 3
#define LIST_MAX 4096 /* items of one list compared; beyond that a snapshot is not a real one */

typedef struct {
    const char *probe; /* NULL: the snapshot's host object */
    const char *path;
    const char *area;
} known_fact;

static const known_fact known[] = {
    {NULL, "os.pretty_name", "host"},
    {NULL, "kernel", "host"},
    {NULL, "arch", "host"},
    {NULL, "cpu.model", "host"},
    {NULL, "container.kind", "host"},
    {"driver.amd", "module.name", "driver"},
    {"driver.amd", "firmware", "driver"},
    {"driver.amd", "kfd.gpu_nodes", "driver"},
    {"runtime.hip", "runtime_version", "runtime"},
    {"runtime.hip", "runtime.version", "runtime"},
    {"runtime.hip", "runtime.driver_version", "runtime"},
    {"runtime.hip", "library", "runtime"},
    {"runtime.hip", "runtime.realpath", "runtime"},
    {"runtime.hip", "runtime.root", "runtime"},
    {"runtime.hip", "runtime_library.realpath", "runtime"},
    {"runtime.hip", "device_count", "runtime"},
    {"runtime.hip", "links", "runtime"},
    {"libraries.hip", "library", "libraries"},
    {"framework.torch", "python.version", "framework"},
    {"framework.torch", "python.executable", "framework"},
    {"framework.torch", "torch/version", "framework"},
    {"framework.torch", "torch/hip", "framework"},
    {"framework.torch", "torch/cuda", "framework"},
    {"framework.torch", "torch/git_version", "framework"},
    {"framework.torch", "torch/cudnn", "framework"},
    {"framework.torch", "torch/miopen", "framework"},
    {"framework.torch", "torch/is_available", "framework"},
    {"framework.torch", "torch/device_count", "framework"},
    {"framework.torch", "torch/arch_list", "framework"},
};

/* Paths are shown with dots, whatever separator the table uses. */
static void dotted(char *s)
{
    for (; *s; s++)
        if (*s == '/')
            *s = '.';
}

/* A table path and a walked path name the same fact ('/' and '.' both separate keys). */
static bool same_path(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (*a != *b && !((*a == '/' || *a == '.') && (*b == '/' || *b == '.')))
            return false;
    return *a == *b;
}

/* Two facts are the same when equal as JSON; absent and null are the same (both unknown). */
static bool same(const cJSON *a, const cJSON *b)
{
    bool a_none = !a || cJSON_IsNull(a), b_none = !b || cJSON_IsNull(b);
    if (a_none || b_none)
        return a_none && b_none;
    return cJSON_Compare(a, b, true);
}

static const cJSON *facts_of(const cJSON *snap, const char *probe)
{
    return probe ? sc_diff_get(sc_diff_probe(snap, probe), "facts") : sc_diff_get(snap, "host");
}

static void compare(sc_diff_acc *acc, const char *area, const char *what, const cJSON *a,
                    const cJSON *b)
{
    if (!same(a, b))
        sc_diff_change(acc, area, what, a, b, true);
}

static bool is_known(const char *probe, const char *path)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].probe && strcmp(known[i].probe, probe) == 0 && same_path(known[i].path, path))
            return true;
    return false;
}

static void diff_known(sc_diff_acc *acc, const cJSON *a, const cJSON *b)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const known_fact *k = &known[i];
        char what[160];
        snprintf(what, sizeof what, "%s %s", k->probe ? k->probe : "host", k->path);
        dotted(what);
        compare(acc, k->area, what, sc_diff_path(facts_of(a, k->probe), k->path),
                sc_diff_path(facts_of(b, k->probe), k->path));
    }
}

static bool names_version(const char *key)
{
    char lower[64];
    size_t i = 0;
    for (; key[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)tolower((unsigned char)key[i]);
    lower[i] = '\0';
    return strstr(lower, "version") != NULL;
}

static const char *layer_area(const char *probe)
{
    static const char *const areas[] = {"driver", "runtime", "libraries", "framework", "app"};
    for (size_t i = 0; i < sizeof areas / sizeof areas[0]; i++)
        if (strncmp(probe, areas[i], strlen(areas[i])) == 0 && probe[strlen(areas[i])] == '.')
            return areas[i];
    return "versions";
}

static void walk_versions(sc_diff_acc *acc, const char *probe, const cJSON *a, const cJSON *b,
                          const char *prefix, int depth);

static void visit(sc_diff_acc *acc, const char *probe, const char *key, const cJSON *va,
                  const cJSON *vb, const char *prefix, int depth)
{
    char path[256], what[400];
    if (strcmp(key, "unavailable") == 0)
        return;
    snprintf(path, sizeof path, "%s%s%.100s", prefix, prefix[0] ? "." : "", key);
    if (cJSON_IsObject(va) || cJSON_IsObject(vb)) {
        if (depth < WALK_DEPTH)
            walk_versions(acc, probe, cJSON_IsObject(va) ? va : NULL,
                          cJSON_IsObject(vb) ? vb : NULL, path, depth + 1);
        return;
    }
    if (cJSON_IsArray(va) || cJSON_IsArray(vb) || !names_version(key) || is_known(probe, path))
        return;
    snprintf(what, sizeof what, "%s %s", probe, path);
    compare(acc, layer_area(probe), what, va, vb);
}

/* Every scalar "*version*" fact under objects (not lists), on either side. */
static void walk_versions(sc_diff_acc *acc, const char *probe, const cJSON *a, const cJSON *b,
                          const char *prefix, int depth)
{
    const cJSON *item;
    cJSON_ArrayForEach (item, a) {
        if (item->string)
            visit(acc, probe, item->string, item, sc_diff_get(b, item->string), prefix, depth);
    }
    cJSON_ArrayForEach (item, b) {
        if (item->string && !sc_diff_get(a, item->string))
            visit(acc, probe, item->string, NULL, item, prefix, depth);
    }
}

/* A device's identity: its PCI address when it has one, else its place in the list. */
static void device_key(const cJSON *dev, int index, char *buf, size_t size)
{
    static const char *const keys[] = {"pci_address", "pci_bus_id", "pci", "uuid"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = cJSON_GetStringValue(sc_diff_get(dev, keys[i]));
        if (v) {
            snprintf(buf, size, "%.100s", v);
            return;
        }
    }
    snprintf(buf, size, "#%d", index);
}

static const cJSON *find_device(const cJSON *list, const char *key)
{
    const cJSON *dev;
    int i = 0;
    cJSON_ArrayForEach (dev, list) {
        char k[128];
        if (i >= LIST_MAX)
            break;
        device_key(dev, i++, k, sizeof k);
        if (strcmp(k, key) == 0)
            return dev;
    }
    return NULL;
}

/* Facts of a device that change while nothing changes: ids of a boot, memory in use. */
static bool volatile_key(const char *key)
{
    static const char *const skip[] = {"gpu_id", "node", "render_node", "unavailable", "free",
                                       "used",   "_ms",  "processes",   "pid"};
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        if (strstr(key, skip[i]))
            return true;
    return false;
}

static void compare_device(sc_diff_acc *acc, const char *area, const char *label, const cJSON *da,
                           const cJSON *db)
{
    const cJSON *item;
    cJSON_ArrayForEach (item, da) {
        if (!item->string || volatile_key(item->string) || cJSON_IsObject(item) ||
            cJSON_IsArray(item))
            continue;
        char what[600];
        snprintf(what, sizeof what, "%.400s %.100s", label, item->string);
        compare(acc, area, what, item, sc_diff_get(db, item->string));
    }
}

/* What a person recognises a device by: its name and architecture. */
static cJSON *device_summary(const cJSON *dev)
{
    static const char *const keys[] = {"name", "marketing_name", "gfx_target", "arch", "vendor"};
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; o && i < sizeof keys / sizeof keys[0]; i++) {
        const cJSON *v = sc_diff_get(dev, keys[i]);
        if (cJSON_IsString(v))
            cJSON_AddStringToObject(o, keys[i], v->valuestring);
    }
    return o;
}

/* Devices one side has and the other lacks, by key. */
static void devices_only_in(sc_diff_acc *acc, const char *probe, const cJSON *mine,
                            const cJSON *theirs, bool mine_is_b)
{
    const cJSON *dev;
    int i = 0;
    cJSON_ArrayForEach (dev, mine) {
        char key[128], what[300];
        if (i >= LIST_MAX || !cJSON_IsObject(dev))
            break;
        device_key(dev, i++, key, sizeof key);
        if (find_device(theirs, key))
            continue;
        snprintf(what, sizeof what, "%s device %s", probe, key);
        cJSON *summary = device_summary(dev);
        sc_diff_change(acc, "devices", what, mine_is_b ? NULL : summary, mine_is_b ? summary : NULL,
                       true);
        cJSON_Delete(summary);
    }
}

static void diff_device_list(sc_diff_acc *acc, const char *probe, const char *path, const cJSON *la,
                             const cJSON *lb)
{
    if (!cJSON_IsArray(la) && !cJSON_IsArray(lb))
        return;
    cJSON na = {.type = cJSON_Number}, nb = {.type = cJSON_Number};
    cJSON_SetNumberValue(&na, cJSON_IsArray(la) ? cJSON_GetArraySize(la) : 0);
    cJSON_SetNumberValue(&nb, cJSON_IsArray(lb) ? cJSON_GetArraySize(lb) : 0);
    char what[300];
    snprintf(what, sizeof what, "%s %s count", probe, path);
    compare(acc, "devices", what, &na, &nb);
    const cJSON *dev, *list_a = cJSON_IsArray(la) ? la : NULL;
    int i = 0;
    cJSON_ArrayForEach (dev, list_a) {
        char key[128];
        if (i >= LIST_MAX || !cJSON_IsObject(dev))
            break;
        device_key(dev, i++, key, sizeof key);
        const cJSON *other = find_device(lb, key);
        snprintf(what, sizeof what, "%s device %s", probe, key);
        if (other)
            compare_device(acc, "devices", what, dev, other);
    }
    devices_only_in(acc, probe, list_a, cJSON_IsArray(lb) ? lb : NULL, false);
    devices_only_in(acc, probe, cJSON_IsArray(lb) ? lb : NULL, list_a, true);
}

/* Libraries by name: where each was loaded from (its root and real path). */
static void diff_library_list(sc_diff_acc *acc, const char *probe, const char *path,
                              const cJSON *la, const cJSON *lb, bool b_only)
{
    const cJSON *lib, *other, *mine = b_only ? lb : la, *theirs = b_only ? la : lb;
    int i = 0;
    cJSON_ArrayForEach (lib, mine) {
        const char *name = cJSON_GetStringValue(sc_diff_get(lib, "name"));
        if (i++ >= LIST_MAX || !name)
            continue;
        const cJSON *match = NULL;
        cJSON_ArrayForEach (other, theirs) {
            const char *n = cJSON_GetStringValue(sc_diff_get(other, "name"));
            if (n && strcmp(n, name) == 0 && (match = other))
                break;
        }
        char what[400];
        snprintf(what, sizeof what, "%s %s %.150s", probe, path, name);
        if (!match)
            sc_diff_change(acc, "libraries", what, b_only ? NULL : lib, b_only ? lib : NULL, true);
        else if (!b_only) {
            compare(acc, "libraries", what, sc_diff_get(lib, "root"), sc_diff_get(match, "root"));
            compare(acc, "libraries", what, sc_diff_get(lib, "realpath"),
                    sc_diff_get(match, "realpath"));
        }
    }
}

static const char *const install_keys[] = {"kind", "version", "hip_version"};

static const char *install_path(const cJSON *inst)
{
    const char *p = cJSON_GetStringValue(sc_diff_get(inst, "path"));
    return p ? p : cJSON_GetStringValue(sc_diff_get(inst, "root"));
}

/* Installed roots by path: added, removed, or another version. */
static void diff_installs(sc_diff_acc *acc, const char *probe, const cJSON *la, const cJSON *lb,
                          bool b_only)
{
    const cJSON *inst, *other, *mine = b_only ? lb : la, *theirs = b_only ? la : lb;
    cJSON_ArrayForEach (inst, mine) {
        const char *path = install_path(inst);
        const cJSON *match = NULL;
        if (!path)
            continue;
        cJSON_ArrayForEach (other, theirs) {
            const char *p = install_path(other);
            if (p && strcmp(p, path) == 0 && (match = other))
                break;
        }
        char what[400];
        snprintf(what, sizeof what, "%s install %.200s", probe, path);
        if (!match) {
            sc_diff_change(acc, "installs", what, b_only ? NULL : inst, b_only ? inst : NULL, true);
            continue;
        }
        for (size_t i = 0; !b_only && i < sizeof install_keys / sizeof install_keys[0]; i++) {
            char field[480];
            snprintf(field, sizeof field, "%s %s", what, install_keys[i]);
            compare(acc, "installs", field, sc_diff_get(inst, install_keys[i]),
                    sc_diff_get(match, install_keys[i]));
        }
    }
}

/* A checked file's identity across nodes: its soname, else its path. */
static const char *file_key(const cJSON *file)
{
    const char *k = cJSON_GetStringValue(sc_diff_get(file, "soname"));
    return k ? k : cJSON_GetStringValue(sc_diff_get(file, "path"));
}

static const cJSON *find_file(const cJSON *files, const char *key)
{
    const cJSON *f;
    int i = 0;
    cJSON_ArrayForEach (f, files) {
        const char *k = file_key(f);
        if (i++ >= LIST_MAX)
            break;
        if (k && strcmp(k, key) == 0)
            return f;
    }
    return NULL;
}

/* The libraries layer's files[] {soname, root, realpath, libraries[]}: where each file and each
 * library it loads came from. */
static void diff_files(sc_diff_acc *acc, const char *probe, const cJSON *fa, const cJSON *fb)
{
    const cJSON *la = sc_diff_get(fa, "files"), *lb = sc_diff_get(fb, "files"), *file;
    int i = 0;
    if (!cJSON_IsArray(la) || !cJSON_IsArray(lb))
        return;
    cJSON_ArrayForEach (file, la) {
        const char *key = file_key(file);
        const cJSON *other = key ? find_file(lb, key) : NULL;
        if (i++ >= LIST_MAX)
            break;
        if (!other)
            continue;
        char what[400], label[300];
        snprintf(what, sizeof what, "%s file %.200s", probe, key);
        compare(acc, "libraries", what, sc_diff_get(file, "root"), sc_diff_get(other, "root"));
        snprintf(label, sizeof label, "%.200s needs", key);
        const cJSON *xa = sc_diff_get(file, "libraries"), *xb = sc_diff_get(other, "libraries");
        xa = cJSON_IsArray(xa) ? xa : NULL;
        xb = cJSON_IsArray(xb) ? xb : NULL;
        diff_library_list(acc, probe, label, xa, xb, false);
        diff_library_list(acc, probe, label, xa, xb, true);
    }
}

static void diff_probe_lists(sc_diff_acc *acc, const char *probe, const cJSON *fa, const cJSON *fb)
{
    char label[64];
    static const char *const devices[] = {"devices", "torch/devices"};
    static const char *const libraries[] = {"mapped_libraries", "torch/mapped_libraries",
                                            "libraries"};
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        snprintf(label, sizeof label, "%s", devices[i]);
        dotted(label);
        diff_device_list(acc, probe, label, sc_diff_path(fa, devices[i]),
                         sc_diff_path(fb, devices[i]));
    }
    for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++) {
        const cJSON *la = sc_diff_path(fa, libraries[i]), *lb = sc_diff_path(fb, libraries[i]);
        snprintf(label, sizeof label, "%s", libraries[i]);
        dotted(label);
        diff_library_list(acc, probe, label, cJSON_IsArray(la) ? la : NULL,
                          cJSON_IsArray(lb) ? lb : NULL, false);
        diff_library_list(acc, probe, label, cJSON_IsArray(la) ? la : NULL,
                          cJSON_IsArray(lb) ? lb : NULL, true);
    }
    const cJSON *ia = sc_diff_get(fa, "installs"), *ib = sc_diff_get(fb, "installs");
    diff_installs(acc, probe, cJSON_IsArray(ia) ? ia : NULL, cJSON_IsArray(ib) ? ib : NULL, false);
    diff_installs(acc, probe, cJSON_IsArray(ia) ? ia : NULL, cJSON_IsArray(ib) ? ib : NULL, true);
    diff_files(acc, probe, fa, fb);
}

typedef struct {
    sc_diff_acc *acc;
    const cJSON *a, *b;
} probe_pair;

static void facts_of_pair(probe_pair *pp, const char *id, bool b_only)
{
    const cJSON *fa = facts_of(pp->a, id), *fb = facts_of(pp->b, id);
    if (b_only && cJSON_IsObject(fa))
        return; /* compared from the a side */
    if (!cJSON_IsObject(fa) && !cJSON_IsObject(fb))
        return;
    walk_versions(pp->acc, id, cJSON_IsObject(fa) ? fa : NULL, cJSON_IsObject(fb) ? fb : NULL, "",
                  0);
    diff_probe_lists(pp->acc, id, fa, fb);
}

static void probes_of(probe_pair *pp, const cJSON *snap, bool b_only)
{
    const cJSON *layer, *probe;
    cJSON_ArrayForEach (layer, sc_diff_get(snap, "layers")) {
        const cJSON *probes = sc_diff_get(layer, "probes");
        if (!cJSON_IsArray(probes))
            continue;
        cJSON_ArrayForEach (probe, probes) {
            const char *id = cJSON_GetStringValue(sc_diff_get(probe, "id"));
            if (id)
                facts_of_pair(pp, id, b_only);
        }
    }
}

void sc_diff_facts(sc_diff_acc *acc, const cJSON *a, const cJSON *b)
{
    probe_pair pp = {acc, a, b};
    diff_known(acc, a, b);
    probes_of(&pp, a, false);
    probes_of(&pp, b, true);
}
