/* KFD topology reader: lists nodes/N, parses each "key value" properties file and sums the device
 * memory banks. The properties parser takes a buffer and never trusts it: malformed lines are
 * counted, numbers are overflow-checked, the table is bounded. */
#include "sc_kfd.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_pci.h"
#include "sc_util.h"

#define TOPOLOGY "/sys/class/kfd/kfd/topology/nodes"
#define MAX_BANKS 64
#define PROPS_MAX_BYTES 65536

static bool is_key_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool is_blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Parses a decimal number in s[*i..n) with overflow checks; false when none or too large. */
static bool parse_decimal(const char *s, size_t n, size_t *i, uint64_t *out)
{
    uint64_t v = 0;
    size_t start = *i;
    for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
        unsigned d = (unsigned)(s[*i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return *i > start;
}

/* One "key value" line of n bytes (no newline); false when malformed. */
static bool parse_line(const char *line, size_t n, sc_kfd_prop *out)
{
    size_t i = 0;
    while (i < n && is_key_char((unsigned char)line[i]))
        i++;
    size_t klen = i;
    if (klen == 0 || klen >= SC_KFD_KEY_MAX)
        return false;
    while (i < n && is_blank((unsigned char)line[i]))
        i++;
    if (i == klen)
        return false; /* no separator between key and value */
    uint64_t v;
    if (!parse_decimal(line, n, &i, &v))
        return false;
    while (i < n && is_blank((unsigned char)line[i]))
        i++;
    if (i != n)
        return false;
    memcpy(out->key, line, klen);
    out->key[klen] = '\0';
    out->value = v;
    return true;
}

static bool line_is_blank(const char *line, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_blank((unsigned char)line[i]))
            return false;
    return true;
}

void sc_kfd_parse_properties(const char *buf, size_t len, sc_kfd_props *out)
{
    out->count = out->bad_lines = out->dropped = 0;
    size_t pos = 0;
    while (buf && pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (buf + pos)) : len - pos;
        const char *line = buf + pos;
        pos += n + (nl ? 1 : 0);
        if (line_is_blank(line, n))
            continue;
        sc_kfd_prop prop;
        if (!parse_line(line, n, &prop))
            out->bad_lines++;
        else if (out->count < SC_KFD_MAX_PROPS)
            out->items[out->count++] = prop;
        else
            out->dropped++;
    }
}

bool sc_kfd_get(const sc_kfd_props *props, const char *key, uint64_t *value)
{
    for (size_t i = 0; i < props->count; i++) {
        if (strcmp(props->items[i].key, key) == 0) {
            *value = props->items[i].value;
            return true;
        }
    }
    return false;
}

bool sc_kfd_gfx_name(uint64_t v, char *buf, size_t size)
{
    uint64_t major = v / 10000, minor = (v / 100) % 100, stepping = v % 100;
    if (major == 0 || major > 99 || minor > 15 || stepping > 15)
        return false;
    return sc_fmt(buf, size, "gfx%u%x%x", (unsigned)major, (unsigned)minor, (unsigned)stepping);
}

bool sc_kfd_pci_address(uint64_t domain, uint64_t location_id, char *buf, size_t size)
{
    if (domain > 0xffff || location_id > 0xffff)
        return false;
    unsigned devfn = (unsigned)(location_id & 0xff);
    sc_pci_addr a = {(unsigned)domain, (unsigned)(location_id >> 8), devfn >> 3, devfn & 7};
    return sc_pci_format_address(&a, buf, size);
}

bool sc_kfd_add_vram(uint64_t *total, const sc_kfd_props *bank)
{
    uint64_t heap, bytes;
    if (!sc_kfd_get(bank, "heap_type", &heap) || !sc_kfd_get(bank, "size_in_bytes", &bytes))
        return false;
    if (heap == 1 || heap == 2)
        *total = (*total > UINT64_MAX - bytes) ? UINT64_MAX : *total + bytes;
    return true;
}

bool sc_kfd_node_is_gpu(const sc_kfd_node *node)
{
    uint64_t simd;
    return sc_kfd_get(&node->props, "simd_count", &simd) && simd > 0;
}

/* Reads and parses one properties file; returns 0 or -errno. */
static int read_props(const sc_root *root, const char *path, sc_kfd_props *out)
{
    char *text;
    long n = sc_root_read(root, path, &text, PROPS_MAX_BYTES);
    if (n < 0)
        return (int)n;
    sc_kfd_parse_properties(text, (size_t)n, out);
    free(text);
    return 0;
}

/* A directory entry name that is a plain decimal index below limit. */
static bool entry_index(const char *name, unsigned limit, unsigned *out)
{
    uint64_t v;
    if (name[0] < '0' || name[0] > '9' || sc_parse_u64(name, &v) < 0 || v >= limit)
        return false;
    if (strncmp(name, "0x", 2) == 0 || strncmp(name, "0X", 2) == 0)
        return false;
    *out = (unsigned)v;
    return true;
}

/* Sums the device-memory banks of node dir into node->vram_bytes. */
static void read_banks(const sc_root *root, const char *dir, sc_kfd_node *node)
{
    char path[512];
    sc_fmt(path, sizeof path, "%s/mem_banks", dir);
    DIR *d = sc_root_opendir(root, path);
    if (!d)
        return;
    sc_kfd_props *bank = malloc(sizeof *bank);
    struct dirent *e;
    unsigned idx, seen = 0;
    while (bank && seen < MAX_BANKS && (e = readdir(d)) != NULL) {
        if (!entry_index(e->d_name, MAX_BANKS, &idx))
            continue;
        seen++;
        sc_fmt(path, sizeof path, "%s/mem_banks/%u/properties", dir, idx);
        if (read_props(root, path, bank) == 0 && sc_kfd_add_vram(&node->vram_bytes, bank))
            node->vram_known = true;
    }
    free(bank);
    closedir(d);
}

static void read_node(const sc_root *root, sc_kfd_node *node)
{
    char dir[256], path[320], line[128];
    sc_fmt(dir, sizeof dir, TOPOLOGY "/%u", node->index);
    sc_fmt(path, sizeof path, "%s/properties", dir);
    if (read_props(root, path, &node->props) < 0)
        node->props.count = 0;
    sc_fmt(path, sizeof path, "%s/gpu_id", dir);
    node->has_gpu_id = sc_root_read_line(root, path, line, sizeof line) == 0 && line[0] >= '0' &&
                       line[0] <= '9' && sc_parse_u64(line, &node->gpu_id) == 0;
    sc_fmt(path, sizeof path, "%s/name", dir);
    if (sc_root_read_line(root, path, node->name, sizeof node->name) < 0)
        node->name[0] = '\0';
    if (sc_kfd_node_is_gpu(node))
        read_banks(root, dir, node);
}

static int cmp_node(const void *a, const void *b)
{
    unsigned x = ((const sc_kfd_node *)a)->index, y = ((const sc_kfd_node *)b)->index;
    return (x > y) - (x < y);
}

/* Lists the node indices into topo->nodes (zeroed entries with index set). */
static int list_nodes(DIR *d, sc_kfd_topology *topo, sc_error *err)
{
    size_t cap = 0;
    struct dirent *e;
    unsigned idx;
    while ((e = readdir(d)) != NULL && topo->count < SC_KFD_MAX_NODES) {
        if (!entry_index(e->d_name, SC_KFD_MAX_NODES, &idx))
            continue;
        if (topo->count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            sc_kfd_node *n = realloc(topo->nodes, ncap * sizeof *n);
            if (!n)
                return sc_error_set(err, -ENOMEM, "out of memory listing KFD nodes");
            topo->nodes = n;
            cap = ncap;
        }
        memset(&topo->nodes[topo->count], 0, sizeof topo->nodes[0]);
        topo->nodes[topo->count++].index = idx;
    }
    return 0;
}

int sc_kfd_read(const sc_root *root, sc_kfd_topology *topo, sc_error *err)
{
    memset(topo, 0, sizeof *topo);
    DIR *d = sc_root_opendir(root, TOPOLOGY);
    if (!d) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        return sc_error_set(err, -errno, "cannot list %s: %s", TOPOLOGY, strerror(errno));
    }
    topo->present = true;
    int rc = list_nodes(d, topo, err);
    closedir(d);
    if (rc < 0)
        return rc;
    if (topo->count)
        qsort(topo->nodes, topo->count, sizeof topo->nodes[0], cmp_node);
    for (size_t i = 0; i < topo->count; i++)
        read_node(root, &topo->nodes[i]);
    return 0;
}

void sc_kfd_free(sc_kfd_topology *topo)
{
    free(topo->nodes);
    topo->nodes = NULL;
    topo->count = 0;
}

int sc_kfd_gpu_count(const sc_root *root, sc_error *err)
{
    sc_kfd_topology topo;
    int rc = sc_kfd_read(root, &topo, err);
    if (rc < 0)
        return rc;
    int gpus = 0;
    for (size_t i = 0; i < topo.count; i++)
        gpus += sc_kfd_node_is_gpu(&topo.nodes[i]);
    sc_kfd_free(&topo);
    return gpus;
}
