/* Fuzz target: one compressed offload bundle (CCOB v1-v3, zlib or zstd), inflated only up to its
 * entry table. */
#include <stdint.h>
#include <string.h>

#include "sc_offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_offload_list l;
    memset(&l, 0, sizeof l);
    uint64_t end = 0;
    sc_offload_parse_ccob(data, size, &l, &end);
    sc_offload_list_free(&l);
    return 0;
}
