/* Fuzz target for the text runtime.hip reads from outside: .info/version and share/hip/version
 * files, gcnArchName target ids, PCI bus ids, and the device-properties struct at both layouts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_hip_api.h"
#include "sc_hip_inventory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char buf[64];
    if (sc_hip_parse_version_file(text, buf, sizeof buf) == 0 && strlen(buf) >= sizeof buf)
        __builtin_trap();
    if (sc_hip_parse_hip_version_file(text, buf, sizeof buf) == 0 && !strchr(buf, '.'))
        __builtin_trap();
    if (sc_hip_parse_hipcc_version(text, buf, sizeof buf) == 0 && !strchr(buf, '.'))
        __builtin_trap();
    sc_hip_arch arch;
    if (sc_hip_arch_parse(text, &arch) == 0 && strncmp(arch.processor, "gfx", 3) != 0)
        __builtin_trap();
    if (sc_hip_pci_normalize(text, buf, sizeof buf) == 0 && strlen(buf) != 12)
        __builtin_trap();
    unsigned char *props = calloc(1, SC_HIP_PROPS_BUF);
    if (props) {
        memcpy(props, data, size < SC_HIP_PROPS_BUF ? size : SC_HIP_PROPS_BUF);
        sc_hip_props p;
        for (int layout = 0; layout < 2; layout++)
            if (sc_hip_props_read(props, SC_HIP_PROPS_BUF, layout, &p) == 0 &&
                (strlen(p.name) >= sizeof p.name || strlen(p.arch) >= sizeof p.arch))
                __builtin_trap();
        free(props);
    }
    free(text);
    return 0;
}
