/* PCI scan through the root: one sysfs directory per function, with vendor, device and class files
 * and a "driver" link whose last component names the bound driver. Vendor-agnostic: the
 * accelerator vocabulary is the backend descriptors' vendors and classes, so every backend's driver
 * probe reads the same list and a new descriptor is seen without a change here. */
#include "sc_pci.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_probe.h"
#include "sc_util.h"

#define PCI_DEVICES "/sys/bus/pci/devices"

const char *sc_pci_vendor_name(unsigned vendor)
{
    const char *name = NULL;
    return sc_backend_by_pci_vendor(vendor, &name) ? name : NULL;
}

sc_backend sc_pci_vendor_backend(unsigned vendor)
{
    const sc_backend_desc *desc = sc_backend_by_pci_vendor(vendor, NULL);
    return desc ? desc->id : SC_BACKEND_NONE;
}

bool sc_pci_class_is_accelerator(unsigned class_code)
{
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        if (sc_backend_class_matches(*b, class_code))
            return true;
    return false;
}

const sc_backend_desc *sc_pci_accelerator(const sc_pci_device *d)
{
    return d->has_ids ? sc_backend_of_pci(d->vendor, d->class_code) : NULL;
}

bool sc_pci_is_accelerator(const sc_pci_device *d)
{
    return sc_pci_accelerator(d) != NULL;
}

static bool parse_hex_field(const char *s, size_t len, unsigned max, unsigned *out)
{
    if (len == 0 || len > 8)
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        unsigned d = (c >= '0' && c <= '9')   ? (unsigned)(c - '0')
                     : (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10)
                     : (c >= 'A' && c <= 'F') ? (unsigned)(c - 'A' + 10)
                                              : 16u;
        if (d > 15)
            return false;
        v = v * 16 + d;
    }
    *out = v;
    return v <= max;
}

bool sc_pci_parse_address(const char *s, sc_pci_addr *out)
{
    const char *dot = strrchr(s, '.');
    const char *c2 = dot ? memrchr(s, ':', (size_t)(dot - s)) : NULL;
    if (!c2)
        return false;
    const char *c1 = memrchr(s, ':', (size_t)(c2 - s));
    out->domain = 0;
    if (c1 && !parse_hex_field(s, (size_t)(c1 - s), 0xffff, &out->domain))
        return false;
    const char *bus = c1 ? c1 + 1 : s;
    return parse_hex_field(bus, (size_t)(c2 - bus), 0xff, &out->bus) &&
           parse_hex_field(c2 + 1, (size_t)(dot - c2 - 1), 0x1f, &out->dev) &&
           parse_hex_field(dot + 1, strlen(dot + 1), 7, &out->fn);
}

bool sc_pci_format_address(const sc_pci_addr *a, char *buf, size_t size)
{
    return sc_fmt(buf, size, "%04x:%02x:%02x.%x", a->domain, a->bus, a->dev, a->fn);
}

void sc_pci_add_hex_id(cJSON *o, const char *key, uint64_t id)
{
    char hex[24];
    snprintf(hex, sizeof hex, "0x%04llx", (unsigned long long)id);
    cJSON_AddStringToObject(o, key, hex);
}

const char *sc_sysfs_link_name(const sc_root *root, const char *path, char *buf, size_t size)
{
    if (sc_root_readlink(root, path, buf, size) <= 0)
        return NULL;
    const char *slash = strrchr(buf, '/');
    return slash ? slash + 1 : buf;
}

/* Reads a sysfs hex attribute ("0x1002\n") of device dir into *out. */
static bool read_hex_attr(const sc_root *root, const char *addr, const char *attr, unsigned *out)
{
    char path[256], line[64];
    uint64_t v;
    sc_fmt(path, sizeof path, PCI_DEVICES "/%s/%s", addr, attr);
    if (sc_root_read_line(root, path, line, sizeof line) < 0 || sc_parse_u64(line, &v) < 0 ||
        v > 0xffffff)
        return false;
    *out = (unsigned)v;
    return true;
}

static void read_device(const sc_root *root, sc_pci_device *d)
{
    d->has_ids = read_hex_attr(root, d->address, "vendor", &d->vendor) &&
                 read_hex_attr(root, d->address, "device", &d->device) &&
                 read_hex_attr(root, d->address, "class", &d->class_code);
    char path[256], target[512];
    sc_fmt(path, sizeof path, PCI_DEVICES "/%s/driver", d->address);
    const char *driver = sc_sysfs_link_name(root, path, target, sizeof target);
    sc_fmt(d->driver, sizeof d->driver, "%s", driver ? driver : "");
}

static int cmp_device(const void *a, const void *b)
{
    return strcmp(((const sc_pci_device *)a)->address, ((const sc_pci_device *)b)->address);
}

/* Appends an entry named name to list, growing it; returns 0 or -ENOMEM. */
static int list_append(sc_pci_list *list, size_t *cap, const char *name)
{
    if (list->count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        sc_pci_device *n = realloc(list->items, ncap * sizeof *n);
        if (!n)
            return -ENOMEM;
        list->items = n;
        *cap = ncap;
    }
    sc_pci_device *d = &list->items[list->count++];
    memset(d, 0, sizeof *d);
    sc_fmt(d->address, sizeof d->address, "%s", name); /* the caller takes names that fit */
    return 0;
}

int sc_pci_scan(const sc_root *root, sc_pci_list *list, sc_error *err)
{
    memset(list, 0, sizeof *list);
    DIR *dir = sc_root_opendir(root, PCI_DEVICES);
    if (!dir) {
        if (errno == ENOENT)
            return 0;
        return sc_error_set(err, -errno, "cannot list %s: %s", PCI_DEVICES, strerror(errno));
    }
    size_t cap = 0;
    struct dirent *e;
    sc_pci_addr a;
    int rc = 0;
    while (rc == 0 && list->count < SC_PCI_MAX_DEVICES && (e = readdir(dir)) != NULL) {
        if (strlen(e->d_name) < sizeof list->items[0].address &&
            sc_pci_parse_address(e->d_name, &a))
            rc = list_append(list, &cap, e->d_name);
    }
    closedir(dir);
    if (rc < 0)
        return sc_error_set(err, rc, "out of memory listing PCI devices");
    if (list->count)
        qsort(list->items, list->count, sizeof list->items[0], cmp_device);
    for (size_t i = 0; i < list->count; i++)
        read_device(root, &list->items[i]);
    return 0;
}

void sc_pci_list_free(sc_pci_list *list)
{
    free(list->items);
    list->items = NULL;
    list->count = 0;
}

const sc_pci_device *sc_pci_find(const sc_pci_list *list, const char *address)
{
    for (size_t i = 0; i < list->count; i++)
        if (strcmp(list->items[i].address, address) == 0)
            return &list->items[i];
    return NULL;
}

cJSON *sc_pci_device_json(const sc_pci_device *d)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char hex[16];
    cJSON_AddStringToObject(o, "address", d->address);
    sc_fact_str(o, "vendor", sc_pci_vendor_name(d->vendor), "not an accelerator vendor");
    sc_pci_add_hex_id(o, "vendor_id", d->vendor);
    sc_pci_add_hex_id(o, "device_id", d->device);
    snprintf(hex, sizeof hex, "0x%06x", d->class_code);
    cJSON_AddStringToObject(o, "class", hex);
    sc_fact_str(o, "driver", d->driver[0] ? d->driver : NULL, "no kernel driver bound");
    return o;
}
