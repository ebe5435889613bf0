/* NVIDIA PCI device ids to product, compute capability and architecture: the ids of the PCI ID
 * repository (pci-ids.ucw.cz, vendor 10de) and the capabilities of NVIDIA's CUDA GPU list
 * (developer.nvidia.com/cuda-gpus). */
#include "sc_nvidia_pciids.h"

#include <stddef.h>

static const sc_nvidia_pciid rows[] = {
    {0x1db1, "Tesla V100-SXM2-16GB", "7.0", "Volta"},
    {0x1db4, "Tesla V100-PCIE-16GB", "7.0", "Volta"},
    {0x1db5, "Tesla V100-SXM2-32GB", "7.0", "Volta"},
    {0x1db6, "Tesla V100-PCIE-32GB", "7.0", "Volta"},
    {0x1eb8, "Tesla T4", "7.5", "Turing"},
    {0x20b0, "NVIDIA A100-SXM4-40GB", "8.0", "Ampere"},
    {0x20b1, "NVIDIA A100-PCIE-40GB", "8.0", "Ampere"},
    {0x20b2, "NVIDIA A100-SXM4-80GB", "8.0", "Ampere"},
    {0x20b5, "NVIDIA A100 80GB PCIe", "8.0", "Ampere"},
    {0x20b7, "NVIDIA A30", "8.0", "Ampere"},
    {0x2204, "NVIDIA GeForce RTX 3090", "8.6", "Ampere"},
    {0x2235, "NVIDIA A40", "8.6", "Ampere"},
    {0x2236, "NVIDIA A10", "8.6", "Ampere"},
    {0x25b6, "NVIDIA A16", "8.6", "Ampere"},
    {0x2684, "NVIDIA GeForce RTX 4090", "8.9", "Ada Lovelace"},
    {0x26b5, "NVIDIA L40", "8.9", "Ada Lovelace"},
    {0x26b9, "NVIDIA L40S", "8.9", "Ada Lovelace"},
    {0x27b8, "NVIDIA L4", "8.9", "Ada Lovelace"},
    {0x2321, "NVIDIA H100 NVL", "9.0", "Hopper"},
    {0x2324, "NVIDIA H800", "9.0", "Hopper"},
    {0x2329, "NVIDIA H20", "9.0", "Hopper"},
    {0x2330, "NVIDIA H100 80GB HBM3", "9.0", "Hopper"},
    {0x2331, "NVIDIA H100 PCIe", "9.0", "Hopper"},
    {0x2335, "NVIDIA H200", "9.0", "Hopper"},
    {0x2342, "NVIDIA GH200 480GB", "9.0", "Hopper"},
    {0x2901, "NVIDIA B200", "10.0", "Blackwell"},
    {0x2b85, "NVIDIA GeForce RTX 5090", "12.0", "Blackwell"},
};

const sc_nvidia_pciid *sc_nvidia_pciid_lookup(unsigned device)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].device == device)
            return &rows[i];
    return NULL;
}
