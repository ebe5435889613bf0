/* The KFD topology (/sys/class/kfd/kfd/topology): the nodes the AMD/Hygon compute driver exposes,
 * their "key value" property files, memory banks and the names derived from them. Parsing works on
 * buffers, apart from the reading, so fuzz targets drive it. */
#ifndef SC_KFD_H
#define SC_KFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sc_sysroot.h"
#include "sc_types.h"

#define SC_KFD_MAX_PROPS 128
#define SC_KFD_KEY_MAX 48
#define SC_KFD_MAX_NODES 1024

typedef struct {
    char key[SC_KFD_KEY_MAX];
    uint64_t value;
} sc_kfd_prop;

/* One parsed properties file. Lines that are not "key decimal" are counted, never fatal. */
typedef struct {
    sc_kfd_prop items[SC_KFD_MAX_PROPS];
    size_t count;
    size_t bad_lines; /* malformed: no value, not a number, too large, control bytes, long key */
    size_t dropped;   /* well-formed lines past the table's capacity */
} sc_kfd_props;

typedef struct {
    unsigned index; /* N of nodes/N */
    bool has_gpu_id;
    uint64_t gpu_id;
    char name[64]; /* nodes/N/name, "" when unreadable */
    sc_kfd_props props;
    bool vram_known;     /* at least one bank was read */
    uint64_t vram_bytes; /* sum of the banks with heap_type 1 or 2 */
} sc_kfd_node;

typedef struct {
    bool present;       /* the topology directory exists */
    sc_kfd_node *nodes; /* sorted by index */
    size_t count;
} sc_kfd_topology;

/* Parses a properties buffer of len bytes (NUL bytes allowed: they make their line malformed)
 * into out. Never fails; out->bad_lines says how much was not understood. */
void sc_kfd_parse_properties(const char *buf, size_t len, sc_kfd_props *out);
/* The value of key (the first one when repeated); false when absent. */
bool sc_kfd_get(const sc_kfd_props *props, const char *key, uint64_t *value);
/* "gfx90a" from gfx_target_version 90010 (major decimal, minor and stepping as hex digits);
 * false when the value cannot name a target (0, minor or stepping over 15). */
bool sc_kfd_gfx_name(uint64_t gfx_target_version, char *buf, size_t size);
/* "0000:c1:00.0" from KFD's domain and location_id (bus << 8 | devfn); false when out of range. */
bool sc_kfd_pci_address(uint64_t domain, uint64_t location_id, char *buf, size_t size);
/* Adds the size of a memory bank with heap_type 1 or 2 (device memory) to *total, saturating at
 * UINT64_MAX; returns false when the bank lacks heap_type or size_in_bytes. */
bool sc_kfd_add_vram(uint64_t *total, const sc_kfd_props *bank);
/* True for a GPU node: simd_count > 0. */
bool sc_kfd_node_is_gpu(const sc_kfd_node *node);

/* Reads the topology under root. An absent topology is not an error (present = false).
 * Returns 0, or a negative errno (allocation, unreadable directory) and fills err. */
int sc_kfd_read(const sc_root *root, sc_kfd_topology *topo, sc_error *err);
/* Frees what sc_kfd_read allocated. */
void sc_kfd_free(sc_kfd_topology *topo);
/* How many GPU nodes the topology under root has (0 when it is absent); a negative errno with err
 * filled when it cannot be read. The device census's view of the AMD/Hygon driver. */
int sc_kfd_gpu_count(const sc_root *root, sc_error *err);

#endif
