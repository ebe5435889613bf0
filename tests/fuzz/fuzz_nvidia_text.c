/* Fuzz target for the NVIDIA text stackcheck reads from outside: /proc/driver/nvidia/version, the
 * per-GPU information file, NVRM kernel-log lines, a toolkit's version.json and version.txt,
 * libcuda file names and PCI bus ids from cuDeviceGetPCIBusId. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_cuda.h"
#include "sc_nvidia.h"

static void check_printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char buf[64];
    bool open;
    if (sc_nvidia_parse_proc_version(text, buf, sizeof buf, &open) == 0 &&
        !sc_nvidia_is_version(buf))
        __builtin_trap();
    sc_nvidia_gpu_info g;
    if (sc_nvidia_parse_gpu_info(text, &g) == 0) {
        check_printable(g.model), check_printable(g.uuid), check_printable(g.vbios);
        if (g.minor < -1 || g.minor > 255)
            __builtin_trap();
    }
    sc_nvidia_kmsg_result *r = malloc(sizeof *r);
    if (r) {
        sc_nvidia_kmsg_scan((const char *)data, size, r);
        if (r->scan.kept > SC_KMSG_KEEP || r->scan.total > r->scan.lines ||
            r->xids > r->scan.total || r->scan.ndevices > SC_KMSG_MAX_DEVICES)
            __builtin_trap();
        for (size_t i = 0; i < r->scan.kept; i++)
            check_printable(r->scan.first[i].line);
        free(r);
    }
    if (sc_cuda_parse_version_json(text, buf, sizeof buf) == 0)
        check_printable(buf);
    if (sc_cuda_parse_version_txt(text, buf, sizeof buf) == 0)
        check_printable(buf);
    if (sc_cuda_parse_nvcc_version(text, buf, sizeof buf) == 0)
        check_printable(buf);
    if (sc_cuda_libcuda_version(text, buf, sizeof buf) == 0 && !strchr(buf, '.'))
        __builtin_trap();
    if (sc_cuda_pci_normalize(text, buf, sizeof buf) == 0 && strlen(buf) != 12)
        __builtin_trap();
    free(text);
    return 0;
}
