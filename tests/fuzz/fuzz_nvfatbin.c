/* Fuzz target: a .nv_fatbin section's contents (NVIDIA fat binaries and their entries), and the
 * CUDA matching rules on what was found. */
#include <stdint.h>
#include <string.h>

#include "sc_offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_offload_list l;
    memset(&l, 0, sizeof l);
    sc_offload_parse_nv(data, size, &l);
    sc_offload_cuda_match(&l, "sm_86");
    sc_offload_cuda_match(&l, "sm_100");
    sc_offload_list_free(&l);
    return 0;
}
