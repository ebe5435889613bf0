/* Offload code listings from section buffers. Bundles are walked by their own extents (the next
 * one starts at the end of the last, aligned to 4096 as the linker lays them out), never by a
 * byte scan, so a 1.3 GB section costs one page per bundle. Compressed bundles are inflated only
 * up to the end of their entry table (at most PREFIX bytes). Every count and offset is checked
 * against the bytes present and the sizes declared, and the whole list against its budgets of
 * bundles, entry-table rows and decompressed bytes. */
#include "sc_offload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "offload_internal.h"
#include "sc_bytes.h"

#define BUNDLE_MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define BUNDLE_MAGIC_LEN 24
#define CCOB_MAGIC "CCOB"
#define MAX_ENTRIES 65536
#define MAX_ID 4096
#define PREFIX (1u << 20)
#define NV_MAGIC 0xBA55ED50u

static void note_problem(sc_offload_list *out, const char *what)
{
    if (!out->problem[0])
        snprintf(out->problem, sizeof out->problem, "%s", what);
}

static void add_target(sc_offload_list *out, const char *target)
{
    for (int i = 0; i < out->count; i++)
        if (strcmp(out->targets[i], target) == 0)
            return;
    if (out->count >= SC_OFFLOAD_MAX_TARGETS) {
        note_problem(out, "more than 256 distinct targets");
        return;
    }
    char *copy = strdup(target);
    if (copy)
        out->targets[out->count++] = copy;
}

void sc_offload_list_free(sc_offload_list *list)
{
    for (int i = 0; i < list->count; i++)
        free(list->targets[i]);
    sc_inflate_free(list);
    memset(list, 0, sizeof *list);
}

/* False, with the budget noted, when what has run out. */
static bool within(sc_offload_list *out, uint64_t used, uint64_t max, const char *what)
{
    if (used <= max && !out->budget)
        return true;
    if (!out->budget)
        out->budget = what;
    return false;
}

const char *sc_offload_target_of_id(const char *id, char *buf, size_t size)
{
    /* <kind>-<arch>-<vendor>-<os>-<env>-<target>; older clang wrote a 3-part triple */
    if (strncmp(id, "host-", 5) == 0)
        return NULL;
    const char *p = id;
    for (int i = 0; i < 4 && p; i++) {
        p = strchr(p, '-');
        if (p)
            p++;
    }
    if (!p || !*p)
        return NULL;
    if (*p == '-')
        p++; /* empty environment */
    else if (strchr(p, '-') && strncmp(p, "gfx", 3) != 0 && strncmp(p, "sm_", 3) != 0)
        p = strchr(p, '-') + 1; /* a named environment ("gnu") */
    if (!*p)
        return NULL;
    snprintf(buf, size, "%s", p);
    return buf;
}

/* Reads the entry table row at *pos of a bundle: adds its target and widens *extent to the end
 * of its code object. False when the table cannot go on (truncated, or an id past the end). */
static bool read_bundle_entry(const uint8_t *buf, size_t avail, uint64_t declared, size_t *pos,
                              uint64_t *extent, sc_offload_list *out)
{
    if (!within(out, ++out->rows, SC_OFFLOAD_MAX_ROWS, "entry-table rows"))
        return false;
    if (avail - *pos < 24) {
        note_problem(out, "offload bundle entry table truncated");
        return false;
    }
    const uint8_t *row = buf + *pos;
    uint64_t off = sc_rd64(row), sz = sc_rd64(row + 8), len = sc_rd64(row + 16);
    *pos += 24;
    if (len > MAX_ID || len > avail - *pos) {
        note_problem(out, "offload bundle entry id past the end");
        return false;
    }
    if (off > declared || sz > declared - off) {
        note_problem(out, "offload bundle entry past the end of its bundle");
        *pos += len;
        return true;
    }
    char id[MAX_ID + 1], target[MAX_ID + 1];
    memcpy(id, buf + *pos, len);
    id[len] = '\0';
    *pos += len;
    if (off + sz > *extent)
        *extent = off + sz;
    if (sc_offload_target_of_id(id, target, sizeof target))
        add_target(out, target);
    return true;
}

int sc_offload_parse_bundle(const uint8_t *buf, size_t avail, uint64_t declared,
                            sc_offload_list *out, uint64_t *end)
{
    *end = 0;
    if (avail < BUNDLE_MAGIC_LEN + 8 || memcmp(buf, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN) != 0)
        return -EINVAL;
    uint64_t n = sc_rd64(buf + BUNDLE_MAGIC_LEN), extent = 0;
    size_t pos = BUNDLE_MAGIC_LEN + 8;
    if (n > MAX_ENTRIES || n > (avail - pos) / 24) {
        note_problem(out, "offload bundle with an impossible entry count");
        n = n > MAX_ENTRIES ? MAX_ENTRIES : n;
    }
    for (uint64_t i = 0; i < n; i++)
        if (!read_bundle_entry(buf, avail, declared, &pos, &extent, out))
            break;
    *end = extent > pos ? extent : pos;
    out->bundles++;
    return 0;
}

/* Inflates the start of a compressed bundle until its entry table is out (the stream, its cap
 * or the budget may end it first); returns the bytes out, or a negative errno (-EDQUOT for the
 * budget). A table that does not read cleanly is inflated up to the cap, so its damage is met
 * and described as if it had all been inflated. */
static long inflate_table(sc_offload_list *out)
{
    size_t pos = BUNDLE_MAGIC_LEN + 8;
    long have = sc_inflate_upto(out, pos);
    if (have < 0)
        return have;
    const uint8_t *b = sc_inflate_data(out);
    uint64_t n = have >= (long)pos ? sc_rd64(b + BUNDLE_MAGIC_LEN) : UINT64_MAX;
    if (n > MAX_ENTRIES || memcmp(b, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN) != 0)
        return sc_inflate_upto(out, SIZE_MAX);
    for (uint64_t i = 0; i < n; i++) {
        if ((have = sc_inflate_upto(out, pos + 24)) < (long)(pos + 24))
            return have < 0 ? have : sc_inflate_upto(out, SIZE_MAX);
        uint64_t len = sc_rd64(sc_inflate_data(out) + pos + 16);
        if (len > MAX_ID)
            return sc_inflate_upto(out, SIZE_MAX);
        pos += 24 + (size_t)len;
        if ((have = sc_inflate_upto(out, pos)) < (long)pos)
            return have < 0 ? have : sc_inflate_upto(out, SIZE_MAX);
    }
    return have;
}

/* Reads a CCOB header: method, where the compressed data starts, total and uncompressed size. */
static int ccob_header(const uint8_t *buf, size_t size, int *method, size_t *data_at,
                       uint64_t *total, uint64_t *raw)
{
    if (size < 8 || memcmp(buf, CCOB_MAGIC, 4) != 0)
        return -EINVAL;
    uint16_t version = sc_rd16(buf + 4);
    *method = sc_rd16(buf + 6);
    if (*method != 0 && *method != 1)
        return -ENOTSUP;
    if (version == 1 && size >= 20) {
        *raw = sc_rd32(buf + 8), *total = 0, *data_at = 20;
    } else if (version == 2 && size >= 24) {
        *total = sc_rd32(buf + 8), *raw = sc_rd32(buf + 12), *data_at = 24;
    } else if (version == 3 && size >= 32) {
        *total = sc_rd64(buf + 8), *raw = sc_rd64(buf + 16), *data_at = 32;
    } else {
        return version >= 1 && version <= 3 ? -EINVAL : -ENOTSUP;
    }
    if (*total && (*total < *data_at || *total > size))
        return -EINVAL;
    return 0;
}

int sc_offload_parse_ccob(const uint8_t *buf, size_t size, sc_offload_list *out, uint64_t *end)
{
    *end = 0;
    int method;
    size_t at;
    uint64_t total, raw;
    int rc = ccob_header(buf, size, &method, &at, &total, &raw);
    if (rc < 0) {
        note_problem(out, rc == -ENOTSUP
                              ? "unsupported compressed offload bundle (version or method)"
                              : "malformed compressed offload bundle");
        return rc;
    }
    size_t len = (total ? total : size) - at;
    if (total == 0 && method == 1) {
        size_t frame = ZSTD_findFrameCompressedSize(buf + at, len);
        if (!ZSTD_isError(frame))
            total = at + frame;
    }
    size_t cap = raw < PREFIX ? (size_t)raw : PREFIX;
    rc = sc_inflate_begin(out, method, buf + at, len, cap);
    long n = rc < 0 ? rc : inflate_table(out);
    if (n == -EDQUOT || n == -ENOMEM)
        return (int)n; /* the budget or memory ran out: not the bundle's fault */
    uint64_t inner_end = 0;
    rc = n < 0 ? (int)n
               : sc_offload_parse_bundle(sc_inflate_data(out), (size_t)n, raw, out, &inner_end);
    if (out->budget)
        return -EDQUOT;
    if (rc < 0) {
        note_problem(out, "compressed offload bundle does not inflate to a bundle");
        return rc;
    }
    out->compressed++;
    *end = total;
    return 0;
}

/* Where the bundle after one ending at `end` starts, or 0 when none does. */
static size_t next_bundle(const uint8_t *buf, size_t size, uint64_t end)
{
    uint64_t candidates[3] = {(end + 4095) & ~(uint64_t)4095, end, (end + 7) & ~(uint64_t)7};
    for (int i = 0; i < 3; i++) {
        uint64_t c = candidates[i];
        if (c == 0 || c >= size || size - c < 8)
            continue;
        if (memcmp(buf + c, CCOB_MAGIC, 4) == 0 ||
            (size - c >= BUNDLE_MAGIC_LEN && memcmp(buf + c, BUNDLE_MAGIC, BUNDLE_MAGIC_LEN) == 0))
            return (size_t)c;
    }
    return 0;
}

int sc_offload_parse_hip(const uint8_t *buf, size_t size, sc_offload_list *out)
{
    size_t pos = 0;
    int bundles = 0;
    while (pos < size &&
           within(out, (uint64_t)out->bundles + 1, SC_OFFLOAD_MAX_BUNDLES, "bundles")) {
        uint64_t end = 0;
        int rc;
        if (size - pos >= 4 && memcmp(buf + pos, CCOB_MAGIC, 4) == 0)
            rc = sc_offload_parse_ccob(buf + pos, size - pos, out, &end);
        else
            rc = sc_offload_parse_bundle(buf + pos, size - pos, size - pos, out, &end);
        if (rc < 0) {
            if (bundles == 0 && !out->budget && rc != -ENOMEM)
                note_problem(out, "no offload bundle at the start of .hip_fatbin");
            break;
        }
        bundles++;
        size_t next = end ? next_bundle(buf + pos, size - pos, end) : 0;
        if (next == 0)
            break;
        pos += next;
    }
    return bundles;
}

/* Reads one NVIDIA fat binary's entries; returns its extent or 0 when malformed. */
static uint64_t parse_nv_one(const uint8_t *buf, size_t size, sc_offload_list *out)
{
    if (size < 16 || sc_rd32(buf) != NV_MAGIC)
        return 0;
    uint64_t hsize = sc_rd16(buf + 6), fat = sc_rd64(buf + 8);
    if (hsize < 16 || hsize > size || fat > size - hsize) {
        note_problem(out, "NVIDIA fat binary larger than its section");
        return 0;
    }
    uint64_t pos = hsize, end = hsize + fat;
    for (int i = 0; i < MAX_ENTRIES && end - pos >= 32; i++) {
        if (!within(out, ++out->rows, SC_OFFLOAD_MAX_ROWS, "entry-table rows"))
            break;
        const uint8_t *e = buf + pos;
        uint16_t kind = sc_rd16(e);
        uint64_t eh = sc_rd32(e + 4), esz = sc_rd64(e + 8);
        uint32_t arch = sc_rd32(e + 28);
        if (eh < 32 || eh > end - pos || esz > end - pos - eh) {
            note_problem(out, "NVIDIA fat binary entry past the end");
            break;
        }
        char target[32];
        if (kind == 1 || kind == 2) {
            snprintf(target, sizeof target, "%s_%u", kind == 1 ? "compute" : "sm", arch);
            add_target(out, target);
        }
        pos += eh + esz;
    }
    out->bundles++;
    return end;
}

int sc_offload_parse_nv(const uint8_t *buf, size_t size, sc_offload_list *out)
{
    size_t pos = 0;
    int count = 0;
    while (pos < size &&
           within(out, (uint64_t)out->bundles + 1, SC_OFFLOAD_MAX_BUNDLES, "bundles")) {
        uint64_t extent = parse_nv_one(buf + pos, size - pos, out);
        if (extent == 0) {
            if (count == 0 && !out->budget)
                note_problem(out, "no NVIDIA fat binary at the start of .nv_fatbin");
            break;
        }
        count++;
        pos += extent;
        /* the next fat binary starts at the next 8-byte boundary, after any padding */
        size_t skipped = 0;
        while (pos < size && skipped < 64 &&
               (pos % 8 != 0 || (size - pos >= 4 && sc_rd32(buf + pos) != NV_MAGIC)))
            pos++, skipped++;
    }
    return count;
}
