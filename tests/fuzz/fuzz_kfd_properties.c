/* Fuzz target for the KFD "key value" properties parser and what it feeds (gfx names, PCI
 * addresses, the VRAM sum), plus the kernel-log scanner, which reads the same kind of text. */
#include <stdint.h>
#include <string.h>

#include "sc_kfd.h"
#include "sc_kmsg.h"

static sc_kfd_props props;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sc_kfd_parse_properties((const char *)data, size, &props);
    if (props.count > SC_KFD_MAX_PROPS)
        __builtin_trap();
    char buf[32];
    uint64_t v, domain = 0, total = 0;
    if (sc_kfd_get(&props, "gfx_target_version", &v) && sc_kfd_gfx_name(v, buf, sizeof buf) &&
        strncmp(buf, "gfx", 3) != 0)
        __builtin_trap();
    if (sc_kfd_get(&props, "location_id", &v))
        sc_kfd_pci_address(sc_kfd_get(&props, "domain", &domain) ? domain : 0, v, buf, sizeof buf);
    sc_kfd_add_vram(&total, &props);
    static sc_kmsg_result r;
    sc_kmsg_scan_table((const char *)data, size, &sc_amd_kmsg_table, &r, NULL, NULL);
    if (r.kept > SC_KMSG_KEEP || r.kept > r.total || r.ndevices > SC_KMSG_MAX_DEVICES)
        __builtin_trap();
    for (size_t i = 0; i < r.kept; i++)
        if (strlen(r.first[i].line) >= SC_KMSG_LINE_MAX ||
            (r.first[i].pci[0] && strlen(r.first[i].pci) != 12))
            __builtin_trap();
    return 0;
}
