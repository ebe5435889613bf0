/* Fuzz target for the output of `scontrol show node`, which carries reasons anyone allowed to
 * drain a node chose: --slurm reads the node's state and drain reason from it. */
#include <stdint.h>
#include <string.h>

#include "sc_slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_slurm_node node;
    if (sc_slurm_parse_node((const char *)data, size, &node) == 0 &&
        (strlen(node.state) >= sizeof node.state || strlen(node.reason) >= sizeof node.reason))
        __builtin_trap();
    return 0;
}
