/* Fuzz target: a .hip_fatbin section's contents (uncompressed and compressed bundles, walked by
 * their extents), and the device-matching rules on the targets found. */
#include <stdint.h>
#include <string.h>

#include "sc_offload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_offload_list l;
    memset(&l, 0, sizeof l);
    sc_offload_parse_hip(data, size, &l);
    for (int i = 0; i < l.count; i++) {
        sc_offload_amd_match(l.targets[i], "gfx90a:sramecc+:xnack-");
        sc_offload_amd_match("gfx906:xnack-", l.targets[i]);
    }
    sc_offload_cuda_match(&l, "sm_90");
    sc_offload_list_free(&l);
    return 0;
}
