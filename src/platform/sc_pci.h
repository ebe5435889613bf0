/* PCI inventory from /sys/bus/pci/devices through the root: address, vendor, device, class and
 * the bound kernel driver of every function, for any vendor, plus the accelerator vocabulary
 * (which vendors and classes count as accelerators), derived from the backend descriptors. */
#ifndef SC_PCI_H
#define SC_PCI_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sc_backend.h"
#include "sc_sysroot.h"
#include "sc_types.h"

#define SC_PCI_MAX_DEVICES 4096

typedef struct {
    char address[32];    /* "0000:c1:00.0" (the sysfs entry name) */
    bool has_ids;        /* vendor, device and class were all read */
    unsigned vendor;     /* 0x1002 */
    unsigned device;     /* 0x740c */
    unsigned class_code; /* 24 bits: 0x038000 */
    char driver[64];     /* bound driver ("amdgpu"), "" when none */
} sc_pci_device;

typedef struct {
    sc_pci_device *items;
    size_t count;
} sc_pci_list;

typedef struct {
    unsigned domain, bus, dev, fn;
} sc_pci_addr;

/* Lists every PCI function under root (sorted by address). A missing /sys/bus/pci is an empty list.
 * Returns 0 or a negative errno (allocation, unreadable directory) and fills err. */
int sc_pci_scan(const sc_root *root, sc_pci_list *list, sc_error *err);
/* Frees what sc_pci_scan allocated. */
void sc_pci_list_free(sc_pci_list *list);
/* Parses "DDDD:BB:DD.F" (hex, domain optional); false when malformed or out of range. */
bool sc_pci_parse_address(const char *s, sc_pci_addr *out);
/* Formats a as "dddd:bb:dd.f" (lower case, the sysfs spelling); false when buf is too small. */
bool sc_pci_format_address(const sc_pci_addr *a, char *buf, size_t size);
/* Adds key = id as a hex string of at least four digits ("0x1002") to o. */
void sc_pci_add_hex_id(cJSON *o, const char *key, uint64_t id);
/* The last component of the target of a sysfs link (a bound driver's name, a device's PCI
 * address), pointing into buf; NULL when path is not a readable link. */
const char *sc_sysfs_link_name(const sc_root *root, const char *path, char *buf, size_t size);
/* True for a class some backend's accelerators report (display 0x03xx, co-processor 0x0b40,
 * processing accelerator 0x12xx: the union of the descriptors' classes). */
bool sc_pci_class_is_accelerator(unsigned class_code);
/* The snapshot's spelling of a backend's PCI vendor ("amd", "hygon", "nvidia", "huawei"), NULL for
 * other vendors. */
const char *sc_pci_vendor_name(unsigned vendor);
/* The backend of vendor's accelerators (AMD and Hygon share the KFD): NONE when unknown. */
sc_backend sc_pci_vendor_backend(unsigned vendor);
/* The backend whose accelerator d is (its vendor's backend, in one of that backend's classes:
 * Huawei's display-class BMC graphics is none), or NULL. */
const sc_backend_desc *sc_pci_accelerator(const sc_pci_device *d);
/* True when d is an accelerator of a known vendor in one of its backend's classes. */
bool sc_pci_is_accelerator(const sc_pci_device *d);
/* The device at address in list, or NULL. */
const sc_pci_device *sc_pci_find(const sc_pci_list *list, const char *address);
/* {address, vendor, vendor_id, device_id, class, driver|null} for the snapshot. */
cJSON *sc_pci_device_json(const sc_pci_device *d);

#endif
