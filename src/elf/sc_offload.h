/* GPU code inside an ELF file, read from section buffers: clang offload bundles in .hip_fatbin
 * (several bundles aligned to 4096, uncompressed or compressed "CCOB" v1-v3 with zlib or zstd) and
 * NVIDIA fat binaries in .nv_fatbin (sm_XX cubins, compute_XX PTX); and the rules that say whether
 * a code object runs on a device. Only headers are read: a compressed bundle is inflated just far
 * enough to read its entry table. The reading of one list (one file) is bounded by the budgets
 * below; when one runs out, reading stops there and the list says so. */
#ifndef SC_OFFLOAD_H
#define SC_OFFLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SC_OFFLOAD_MAX_TARGETS 256
/* Budgets of one list, far above real files (Debian's 1.3 GB librocsparse: 111 bundles of a
 * dozen entries each, a few kilobytes inflated). */
#define SC_OFFLOAD_MAX_BUNDLES 65536        /* bundles and NVIDIA fat binaries read */
#define SC_OFFLOAD_MAX_INFLATED (64u << 20) /* bytes decompressed from compressed bundles */
#define SC_OFFLOAD_MAX_ROWS (1u << 20)      /* entry-table rows read */

typedef struct {
    char *targets[SC_OFFLOAD_MAX_TARGETS]; /* distinct targets in order of appearance */
    int count;
    int bundles;        /* bundles (or NVIDIA fat binaries) read */
    int compressed;     /* of which compressed (CCOB) */
    char problem[256];  /* the first malformed part met; "" when none */
    uint64_t inflated;  /* bytes decompressed so far */
    uint64_t rows;      /* entry-table rows read so far */
    const char *budget; /* NULL, or the budget that ran out ("bundles", "decompressed bytes",
                           "entry-table rows"): reading stopped there */
    struct sc_inflater *inflater; /* decompression kept for the next bundle (private) */
} sc_offload_list;

/* Lists the targets of a .hip_fatbin section's contents. Returns the number of bundles read. */
int sc_offload_parse_hip(const uint8_t *buf, size_t size, sc_offload_list *out);
/* Reads one uncompressed bundle at buf (avail bytes present, declared bytes in total, which
 * bounds the entries' offsets); *end receives the bundle's extent. Returns 0 or -EINVAL. */
int sc_offload_parse_bundle(const uint8_t *buf, size_t avail, uint64_t declared,
                            sc_offload_list *out, uint64_t *end);
/* Reads one compressed bundle (CCOB) at buf; *end receives its extent when the header gives it
 * (0 otherwise). Returns 0, -EINVAL (malformed) or -ENOTSUP (unknown version or method). */
int sc_offload_parse_ccob(const uint8_t *buf, size_t size, sc_offload_list *out, uint64_t *end);
/* Lists the targets of a .nv_fatbin section's contents ("sm_90", "compute_90"). Returns the
 * number of fat binaries read. */
int sc_offload_parse_nv(const uint8_t *buf, size_t size, sc_offload_list *out);
/* The target of a bundle entry id ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-" -> "gfx90a:xnack-");
 * NULL for the host entry or an id without a target. */
const char *sc_offload_target_of_id(const char *id, char *buf, size_t size);
/* Frees the target strings and the decompression state; the list is then empty. */
void sc_offload_list_free(sc_offload_list *list);

/* True when an AMD code object for target `code` runs on device arch `device`: same processor,
 * and each feature (xnack, sramecc) the code object specifies is not specified otherwise by the
 * device. A feature the code object leaves unspecified runs either way. */
bool sc_offload_amd_match(const char *code, const char *device);

typedef enum {
    SC_CUDA_NO_CODE,  /* neither a compatible cubin nor PTX that can be JIT-compiled */
    SC_CUDA_PTX_ONLY, /* no compatible cubin, PTX of this or an older virtual arch */
    SC_CUDA_CUBIN     /* a cubin for this major version and an older or equal minor */
} sc_cuda_match;

/* How device ("sm_86") can run the targets of list. */
sc_cuda_match sc_offload_cuda_match(const sc_offload_list *list, const char *device);

#endif
