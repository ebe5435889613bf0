/* The lists in a probe's facts, compared item by item: devices (matched by PCI address, else by
 * place), loaded libraries (matched by name; what differs is the root they came from), install
 * roots and the files of the libraries layer. Each list of the other side is indexed by its key
 * once, so a comparison costs O(n log n), not a scan per item. */
#include <stdio.h>
#include <string.h>

#include "sc_diff.h"
#include "sc_text.h"

/* A device's identity: its PCI address when it has one, else its place in the list. */
static void device_key(const cJSON *dev, int index, char *buf, size_t size)
{
    static const char *const keys[] = {"pci_address", "pci_bus_id", "pci", "uuid"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = cJSON_GetStringValue(sc_diff_get(dev, keys[i]));
        if (v) {
            snprintf(buf, size, "%.*s", sc_utf8_prec(v, 100), v);
            return;
        }
    }
    snprintf(buf, size, "#%d", index);
}

/* Indexes the first SC_DIFF_LIST_MAX items of list (any type: an item without a key has its place)
 * by their device keys. */
static void index_devices(sc_diff_index *ix, const cJSON *list)
{
    const cJSON *dev;
    int i = 0;
    cJSON_ArrayForEach (dev, list) {
        char k[128];
        if (i >= SC_DIFF_LIST_MAX)
            break;
        device_key(dev, i++, k, sizeof k);
        sc_diff_index_add_copy(ix, k, dev);
    }
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
    sc_diff_index in_a, in_b;
    sc_diff_index_init(&in_a, &acc->oom);
    sc_diff_index_init(&in_b, &acc->oom);
    sc_diff_index_members(&in_a, da);
    sc_diff_index_members(&in_b, db);
    cJSON_ArrayForEach (item, da) {
        if (!item->string || volatile_key(item->string) || cJSON_IsObject(item) ||
            cJSON_IsArray(item) || sc_diff_index_find(&in_a, item->string, NULL) != item)
            continue;
        char what[600];
        snprintf(what, sizeof what, "%.*s %.*s", sc_utf8_prec(label, 400), label,
                 sc_utf8_prec(item->string, 100), item->string);
        sc_diff_compare(acc, area, what, item, sc_diff_index_find(&in_b, item->string, NULL));
    }
    sc_diff_index_free(&in_a);
    sc_diff_index_free(&in_b);
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

/* Devices one side has and the other lacks (each side's devices by key: the first with a key
 * stands for it). */
static void devices_only_in(sc_diff_acc *acc, const char *probe, const cJSON *mine,
                            sc_diff_index *mine_ix, sc_diff_index *theirs, bool mine_is_b)
{
    const cJSON *dev;
    int i = 0;
    cJSON_ArrayForEach (dev, mine) {
        char key[128], what[300];
        if (i >= SC_DIFF_LIST_MAX || !cJSON_IsObject(dev))
            break;
        device_key(dev, i++, key, sizeof key);
        if (sc_diff_index_find(theirs, key, NULL) || sc_diff_index_find(mine_ix, key, NULL) != dev)
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
    sc_diff_compare(acc, "devices", what, &na, &nb);
    const cJSON *dev, *list_a = cJSON_IsArray(la) ? la : NULL;
    sc_diff_index in_a, in_b;
    sc_diff_index_init(&in_a, &acc->oom);
    sc_diff_index_init(&in_b, &acc->oom);
    index_devices(&in_a, list_a);
    index_devices(&in_b, lb); /* whatever its type, as the items of b are matched */
    int i = 0;
    cJSON_ArrayForEach (dev, list_a) {
        char key[128];
        if (i >= SC_DIFF_LIST_MAX || !cJSON_IsObject(dev))
            break;
        device_key(dev, i++, key, sizeof key);
        const cJSON *other = sc_diff_index_find(&in_b, key, NULL);
        snprintf(what, sizeof what, "%s device %s", probe, key);
        if (other && sc_diff_index_find(&in_a, key, NULL) == dev)
            compare_device(acc, "devices", what, dev, other);
    }
    if (!cJSON_IsArray(lb)) /* only an array of b has devices a lacks or b lacks */
        sc_diff_index_free(&in_b);
    devices_only_in(acc, probe, list_a, &in_a, &in_b, false);
    devices_only_in(acc, probe, cJSON_IsArray(lb) ? lb : NULL, &in_b, &in_a, true);
    sc_diff_index_free(&in_a);
    sc_diff_index_free(&in_b);
}

/* Indexes the items of list by the string member key. */
static void index_by_member(sc_diff_index *ix, const cJSON *list, const char *key)
{
    const cJSON *item;
    cJSON_ArrayForEach (item, list)
        sc_diff_index_add(ix, cJSON_GetStringValue(sc_diff_get(item, key)), NULL, item);
}

/* Libraries by name: where each was loaded from (its root and real path). */
static void diff_library_list(sc_diff_acc *acc, const char *probe, const char *path,
                              const cJSON *la, const cJSON *lb, bool b_only)
{
    const cJSON *lib, *mine = b_only ? lb : la;
    sc_diff_index mine_ix, theirs;
    sc_diff_index_init(&mine_ix, &acc->oom);
    sc_diff_index_init(&theirs, &acc->oom);
    index_by_member(&mine_ix, mine, "name");
    index_by_member(&theirs, b_only ? la : lb, "name");
    int i = 0;
    cJSON_ArrayForEach (lib, mine) {
        const char *name = cJSON_GetStringValue(sc_diff_get(lib, "name"));
        if (i++ >= SC_DIFF_LIST_MAX || !name || sc_diff_index_find(&mine_ix, name, NULL) != lib)
            continue;
        const cJSON *match = sc_diff_index_find(&theirs, name, NULL);
        char what[400];
        snprintf(what, sizeof what, "%s %s %.*s", probe, path, sc_utf8_prec(name, 150), name);
        if (!match)
            sc_diff_change(acc, "libraries", what, b_only ? NULL : lib, b_only ? lib : NULL, true);
        else if (!b_only) {
            sc_diff_compare(acc, "libraries", what, sc_diff_get(lib, "root"),
                            sc_diff_get(match, "root"));
            sc_diff_compare(acc, "libraries", what, sc_diff_get(lib, "realpath"),
                            sc_diff_get(match, "realpath"));
        }
    }
    sc_diff_index_free(&mine_ix);
    sc_diff_index_free(&theirs);
}

static const char *const install_keys[] = {"kind", "version", "hip_version"};

static const char *install_path(const cJSON *inst)
{
    const char *p = cJSON_GetStringValue(sc_diff_get(inst, "path"));
    return p ? p : cJSON_GetStringValue(sc_diff_get(inst, "root"));
}

static void index_installs(sc_diff_index *ix, const cJSON *list)
{
    const cJSON *inst;
    cJSON_ArrayForEach (inst, list)
        sc_diff_index_add(ix, install_path(inst), NULL, inst);
}

/* Installed roots by path: added, removed, or another version. */
static void diff_installs(sc_diff_acc *acc, const char *probe, const cJSON *la, const cJSON *lb,
                          bool b_only)
{
    const cJSON *inst, *mine = b_only ? lb : la;
    sc_diff_index mine_ix, theirs;
    sc_diff_index_init(&mine_ix, &acc->oom);
    sc_diff_index_init(&theirs, &acc->oom);
    index_installs(&mine_ix, mine);
    index_installs(&theirs, b_only ? la : lb);
    cJSON_ArrayForEach (inst, mine) {
        const char *path = install_path(inst);
        if (!path || sc_diff_index_find(&mine_ix, path, NULL) != inst)
            continue;
        const cJSON *match = sc_diff_index_find(&theirs, path, NULL);
        char what[400];
        snprintf(what, sizeof what, "%s install %.*s", probe, sc_utf8_prec(path, 200), path);
        if (!match) {
            sc_diff_change(acc, "installs", what, b_only ? NULL : inst, b_only ? inst : NULL, true);
            continue;
        }
        for (size_t i = 0; !b_only && i < sizeof install_keys / sizeof install_keys[0]; i++) {
            char field[480];
            snprintf(field, sizeof field, "%s %s", what, install_keys[i]);
            sc_diff_compare(acc, "installs", field, sc_diff_get(inst, install_keys[i]),
                            sc_diff_get(match, install_keys[i]));
        }
    }
    sc_diff_index_free(&mine_ix);
    sc_diff_index_free(&theirs);
}

/* A checked file's identity across nodes: its soname, else its path. */
static const char *file_key(const cJSON *file)
{
    const char *k = cJSON_GetStringValue(sc_diff_get(file, "soname"));
    return k ? k : cJSON_GetStringValue(sc_diff_get(file, "path"));
}

/* Indexes the first SC_DIFF_LIST_MAX files of a list by their keys. */
static void index_files(sc_diff_index *ix, const cJSON *files)
{
    const cJSON *f;
    int i = 0;
    cJSON_ArrayForEach (f, files) {
        if (i++ >= SC_DIFF_LIST_MAX)
            break;
        sc_diff_index_add(ix, file_key(f), NULL, f);
    }
}

/* The libraries layer's files[] {soname, root, realpath, libraries[]}: where each file and each
 * library it loads came from. */
static void diff_files(sc_diff_acc *acc, const char *probe, const cJSON *fa, const cJSON *fb)
{
    const cJSON *la = sc_diff_get(fa, "files"), *lb = sc_diff_get(fb, "files"), *file;
    int i = 0;
    if (!cJSON_IsArray(la) || !cJSON_IsArray(lb))
        return;
    sc_diff_index in_a, in_b;
    sc_diff_index_init(&in_a, &acc->oom);
    sc_diff_index_init(&in_b, &acc->oom);
    index_files(&in_a, la);
    index_files(&in_b, lb);
    cJSON_ArrayForEach (file, la) {
        const char *key = file_key(file);
        const cJSON *other = sc_diff_index_find(&in_b, key, NULL);
        if (i++ >= SC_DIFF_LIST_MAX)
            break;
        if (!other || sc_diff_index_find(&in_a, key, NULL) != file)
            continue;
        char what[400], label[300];
        snprintf(what, sizeof what, "%s file %.*s", probe, sc_utf8_prec(key, 200), key);
        sc_diff_compare(acc, "libraries", what, sc_diff_get(file, "root"),
                        sc_diff_get(other, "root"));
        snprintf(label, sizeof label, "%.*s needs", sc_utf8_prec(key, 200), key);
        const cJSON *xa = sc_diff_get(file, "libraries"), *xb = sc_diff_get(other, "libraries");
        xa = cJSON_IsArray(xa) ? xa : NULL;
        xb = cJSON_IsArray(xb) ? xb : NULL;
        diff_library_list(acc, probe, label, xa, xb, false);
        diff_library_list(acc, probe, label, xa, xb, true);
    }
    sc_diff_index_free(&in_a);
    sc_diff_index_free(&in_b);
}

void sc_diff_probe_lists(sc_diff_acc *acc, const char *probe, const cJSON *fa, const cJSON *fb)
{
    char label[64];
    static const char *const devices[] = {"devices", "torch/devices"};
    static const char *const libraries[] = {"mapped_libraries", "torch/mapped_libraries",
                                            "libraries"};
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) {
        snprintf(label, sizeof label, "%s", devices[i]);
        sc_diff_dotted(label);
        diff_device_list(acc, probe, label, sc_diff_path(fa, devices[i]),
                         sc_diff_path(fb, devices[i]));
    }
    for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++) {
        const cJSON *la = sc_diff_path(fa, libraries[i]), *lb = sc_diff_path(fb, libraries[i]);
        snprintf(label, sizeof label, "%s", libraries[i]);
        sc_diff_dotted(label);
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
