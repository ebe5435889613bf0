/* DRM device facts. Live: libdrm lists the devices with their nodes and PCI ids, and drmGetVersion
 * on the render node names the driver and its interface version (never the primary node, whose
 * first opener may become DRM master). Offline: /sys/class/drm entries and their device links. */
#include "sc_drm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xf86drm.h>

#include "sc_pci.h"
#include "sc_probe.h"
#include "sc_util.h"

#define MAX_DRM_DEVICES 256

/* The kernel module's own version (DKMS builds have one, upstream kernels do not). */
static void add_module_version(const sc_root *root, cJSON *o, const char *driver)
{
    char path[256], version[128];
    if (!driver) {
        sc_fact_null(o, "module_version", "no driver bound");
        return;
    }
    sc_fmt(path, sizeof path, "/sys/module/%s/version", driver);
    if (sc_root_read_line(root, path, version, sizeof version) == 0 && version[0])
        cJSON_AddStringToObject(o, "module_version", version);
    else
        sc_fact_null(o, "module_version", "%s has no version (an in-kernel driver)", path);
}

static void version_unknown(cJSON *o, const char *why)
{
    sc_fact_null(o, "driver", "%s", why);
    sc_fact_null(o, "version", "%s", why);
}

/* Live: the driver name and DRM interface version of an opened render node. */
static void add_live_version(cJSON *o, const char *render)
{
    char why[320];
    int fd = render ? open(render, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) {
        if (render)
            sc_fmt(why, sizeof why, "cannot open %s: %s", render, strerror(errno));
        version_unknown(o, render ? why : "no render node");
        return;
    }
    drmVersionPtr v = drmGetVersion(fd);
    close(fd);
    if (!v) {
        sc_fmt(why, sizeof why, "drmGetVersion failed on %s", render);
        version_unknown(o, why);
        return;
    }
    char ver[64];
    snprintf(ver, sizeof ver, "%d.%d.%d", v->version_major, v->version_minor,
             v->version_patchlevel);
    sc_fact_str(o, "driver", v->name, "drmGetVersion gave no name");
    cJSON_AddStringToObject(o, "version", ver);
    drmFreeVersion(v);
}

static cJSON *live_device_json(const sc_root *root, drmDevicePtr d)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char addr[32];
    drmPciBusInfoPtr b = d->businfo.pci;
    sc_pci_addr a = {b->domain, b->bus, b->dev, b->func};
    sc_pci_format_address(&a, addr, sizeof addr);
    cJSON_AddStringToObject(o, "pci_address", addr);
    sc_pci_add_hex_id(o, "vendor_id", d->deviceinfo.pci->vendor_id);
    sc_pci_add_hex_id(o, "device_id", d->deviceinfo.pci->device_id);
    bool has_primary = d->available_nodes & (1 << DRM_NODE_PRIMARY);
    bool has_render = d->available_nodes & (1 << DRM_NODE_RENDER);
    sc_fact_str(o, "primary_node", has_primary ? d->nodes[DRM_NODE_PRIMARY] : NULL,
                "no primary node");
    sc_fact_str(o, "render_node", has_render ? d->nodes[DRM_NODE_RENDER] : NULL, "no render node");
    add_live_version(o, has_render ? d->nodes[DRM_NODE_RENDER] : NULL);
    add_module_version(root, o, cJSON_GetStringValue(cJSON_GetObjectItem(o, "driver")));
    cJSON_AddStringToObject(o, "source", "libdrm");
    return o;
}

static int collect_live(const sc_root *root, cJSON *arr, sc_error *err)
{
    int n = drmGetDevices2(0, NULL, 0);
    if (n <= 0)
        return n == 0 || n == -ENOENT ? 0
                                      : sc_error_set(err, n, "drmGetDevices2: %s", strerror(-n));
    if (n > MAX_DRM_DEVICES)
        n = MAX_DRM_DEVICES;
    drmDevicePtr *devs = calloc((size_t)n, sizeof *devs);
    if (!devs)
        return sc_error_set(err, -ENOMEM, "out of memory listing DRM devices");
    int got = drmGetDevices2(0, devs, n), count = 0;
    for (int i = 0; i < got; i++) {
        if (devs[i]->bustype != DRM_BUS_PCI)
            continue;
        cJSON *o = live_device_json(root, devs[i]);
        if (o && cJSON_AddItemToArray(arr, o))
            count++;
    }
    if (got > 0)
        drmFreeDevices(devs, got);
    free(devs);
    return got < 0 ? sc_error_set(err, got, "drmGetDevices2: %s", strerror(-got)) : count;
}

/* vendor_id and device_id from the PCI device behind a /sys/class/drm entry. */
static void add_sysfs_ids(const sc_root *root, cJSON *o, const char *sysname)
{
    static const char *const ids[] = {"vendor", "device"};
    char path[256], line[64];
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        uint64_t v;
        char key[16];
        snprintf(key, sizeof key, "%s_id", ids[i]);
        sc_fmt(path, sizeof path, "/sys/class/drm/%s/device/%s", sysname, ids[i]);
        if (sc_root_read_line(root, path, line, sizeof line) == 0 && sc_parse_u64(line, &v) == 0)
            sc_pci_add_hex_id(o, key, (unsigned)v);
        else
            sc_fact_null(o, key, "%s not readable", path);
    }
}

/* The array entry for the PCI address addr, created when new. */
static cJSON *entry_for(const sc_root *root, cJSON *arr, const char *addr, const char *sysname)
{
    cJSON *o;
    cJSON_ArrayForEach (o, arr) {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(o, "pci_address")), addr) == 0)
            return o;
    }
    o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return NULL;
    }
    cJSON_AddStringToObject(o, "pci_address", addr);
    add_sysfs_ids(root, o, sysname);
    char path[256], buf[512];
    sc_fmt(path, sizeof path, "/sys/class/drm/%s/device/driver", sysname);
    const char *driver = sc_sysfs_link_name(root, path, buf, sizeof buf);
    sc_fact_str(o, "driver", driver, "no driver bound");
    sc_fact_null(o, "version", "the DRM interface version needs the live device (drmGetVersion)");
    add_module_version(root, o, driver);
    cJSON_AddStringToObject(o, "source", "sysfs");
    return o;
}

/* "card0" -> primary, "renderD128" -> render; NULL for connectors ("card0-DP-1") and others. */
static const char *node_kind(const char *name)
{
    const char *digits = sc_starts_with(name, "renderD") ? name + 7
                         : sc_starts_with(name, "card")  ? name + 4
                                                         : NULL;
    if (!digits || !*digits || strspn(digits, "0123456789") != strlen(digits))
        return NULL;
    return name[0] == 'r' ? "render_node" : "primary_node";
}

static int cmp_address(const void *a, const void *b)
{
    const char *x = cJSON_GetStringValue(cJSON_GetObjectItem(*(cJSON *const *)a, "pci_address"));
    const char *y = cJSON_GetStringValue(cJSON_GetObjectItem(*(cJSON *const *)b, "pci_address"));
    return strcmp(x ? x : "", y ? y : "");
}

/* Sorts arr by pci_address: readdir order is arbitrary, the snapshot should not be. */
static void sort_by_address(cJSON *arr)
{
    int n = cJSON_GetArraySize(arr);
    cJSON **items = n > 1 ? calloc((size_t)n, sizeof *items) : NULL;
    if (!items)
        return;
    for (int i = 0; i < n; i++)
        items[i] = cJSON_DetachItemFromArray(arr, 0);
    qsort(items, (size_t)n, sizeof *items, cmp_address);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, items[i]);
    free(items);
}

static int collect_sysfs(const sc_root *root, cJSON *arr, sc_error *err)
{
    DIR *d = sc_root_opendir(root, "/sys/class/drm");
    if (!d)
        return errno == ENOENT ? 0
                               : sc_error_set(err, -errno, "/sys/class/drm: %s", strerror(errno));
    struct dirent *e;
    char path[320], buf[512], node[300];
    int seen = 0;
    while ((e = readdir(d)) != NULL && seen < MAX_DRM_DEVICES * 2) {
        const char *kind = node_kind(e->d_name);
        sc_fmt(path, sizeof path, "/sys/class/drm/%s/device", e->d_name);
        const char *addr = kind ? sc_sysfs_link_name(root, path, buf, sizeof buf) : NULL;
        cJSON *o = addr ? entry_for(root, arr, addr, e->d_name) : NULL;
        if (!o)
            continue;
        seen++;
        sc_fmt(node, sizeof node, "/dev/dri/%s", e->d_name);
        cJSON_DeleteItemFromObject(o, kind);
        cJSON_AddStringToObject(o, kind, node);
    }
    closedir(d);
    cJSON *o;
    cJSON_ArrayForEach (o, arr) {
        if (!cJSON_HasObjectItem(o, "primary_node"))
            sc_fact_null(o, "primary_node", "no card entry in /sys/class/drm");
        if (!cJSON_HasObjectItem(o, "render_node"))
            sc_fact_null(o, "render_node", "no render entry in /sys/class/drm");
    }
    return cJSON_GetArraySize(arr);
}

int sc_drm_collect(const sc_root *root, cJSON *arr, sc_error *err)
{
    /* libdrm's ioctls are not files: a capture reads what its replay will have instead */
    bool live = root->is_host && !sc_root_recording(root);
    int n = live ? collect_live(root, arr, err) : collect_sysfs(root, arr, err);
    if (n > 1)
        sort_by_address(arr);
    return n;
}
