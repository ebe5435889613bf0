/* PCI device ids of AMD GPUs and Hygon DCUs to their gfx target, chip and family. The id ranges
 * follow the kernel's amdgpu pciidlist (drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c), the targets
 * LLVM's AMDGPU processor table (llvm.org/docs/AMDGPUUsage.html#processors); the Hygon row is the
 * K100_AI the Hygon fixture's KFD names. First matching row wins. */
#include "sc_amd_pciids.h"

#include <stddef.h>

#define AMD 0x1002u
#define HYGON 0x1d94u
#define R(v, lo, hi, gfx, chip, products, family, apu, rocm)                                       \
    {                                                                                              \
        v, lo, hi, gfx, chip, products, family, apu, SC_AMD_ROCM_##rocm                            \
    }

static const sc_amd_pciid rows[] = {
    /* SI (gfx6) and CIK (gfx7): radeon's by default; never ROCm */
    R(AMD, 0x6780, 0x679f, "gfx600", "Tahiti", "Radeon HD 7900, FirePro W9000", "SI", false, NEVER),
    R(AMD, 0x6800, 0x6819, "gfx601", "Pitcairn", "Radeon HD 7800", "SI", false, NEVER),
    R(AMD, 0x6820, 0x683f, "gfx601", "Cape Verde", "Radeon HD 7700", "SI", false, NEVER),
    R(AMD, 0x6600, 0x663f, "gfx602", "Oland", "Radeon R7 240/250", "SI", false, NEVER),
    R(AMD, 0x6660, 0x666f, "gfx602", "Hainan", "Radeon R5 M", "SI", false, NEVER),
    R(AMD, 0x6640, 0x665f, "gfx704", "Bonaire", "Radeon HD 7790, R7 260", "CIK", false, NEVER),
    R(AMD, 0x67a0, 0x67bf, "gfx701", "Hawaii", "Radeon R9 290/390, FirePro W9100", "CIK", false,
      NEVER),
    R(AMD, 0x1304, 0x131d, "gfx700", "Kaveri", "A10-7000 APUs", "CIK", true, NEVER),
    R(AMD, 0x9830, 0x983f, "gfx703", "Kabini", "Athlon/Sempron APUs", "CIK", true, NEVER),
    R(AMD, 0x9850, 0x985f, "gfx703", "Mullins", "A4/A6 Micro APUs", "CIK", true, NEVER),
    /* GCN3/GCN4 (gfx8) */
    R(AMD, 0x6900, 0x690f, "gfx802", "Topaz", "Radeon R7 M260", "GCN3 (VI)", false, LEGACY),
    R(AMD, 0x6920, 0x693f, "gfx802", "Tonga", "Radeon R9 285/380", "GCN3 (VI)", false, LEGACY),
    R(AMD, 0x7300, 0x730f, "gfx803", "Fiji", "Radeon R9 Fury/Nano", "GCN3 (VI)", false, LEGACY),
    R(AMD, 0x9870, 0x9877, "gfx801", "Carrizo", "A10/A12 APUs", "GCN3 (VI)", true, LEGACY),
    R(AMD, 0x98e4, 0x98e4, "gfx810", "Stoney", "A6/A9 APUs", "GCN3 (VI)", true, LEGACY),
    R(AMD, 0x67c0, 0x67df, "gfx803", "Polaris 10", "Radeon RX 470/480/570/580", "GCN4 (Polaris)",
      false, LEGACY),
    R(AMD, 0x6fdf, 0x6fdf, "gfx803", "Polaris 20", "Radeon RX 580 2048SP", "GCN4 (Polaris)", false,
      LEGACY),
    R(AMD, 0x67e0, 0x67ff, "gfx803", "Polaris 11", "Radeon RX 460/560", "GCN4 (Polaris)", false,
      LEGACY),
    R(AMD, 0x6980, 0x699f, "gfx803", "Polaris 12", "Radeon RX 540/550", "GCN4 (Polaris)", false,
      LEGACY),
    R(AMD, 0x694c, 0x694f, "gfx803", "Vega M", "Radeon RX Vega M", "GCN4 (Polaris)", false, LEGACY),
    /* GCN5 and CDNA (gfx9) */
    R(AMD, 0x6860, 0x687f, "gfx900", "Vega 10", "Radeon RX Vega 56/64, Instinct MI25",
      "GCN5 (Vega)", false, SUPPORTED),
    R(AMD, 0x69a0, 0x69af, "gfx904", "Vega 12", "Radeon Pro Vega 20", "GCN5 (Vega)", false,
      SUPPORTED),
    R(AMD, 0x66a0, 0x66af, "gfx906", "Vega 20", "Instinct MI50/MI60, Radeon VII", "GCN5 (Vega)",
      false, SUPPORTED),
    R(AMD, 0x15dd, 0x15dd, "gfx902", "Raven", "Ryzen 2000 APUs", "GCN5 (Vega)", true, SUPPORTED),
    R(AMD, 0x15d8, 0x15d8, "gfx902", "Picasso", "Ryzen 3000 APUs", "GCN5 (Vega)", true, SUPPORTED),
    R(AMD, 0x1636, 0x1636, "gfx90c", "Renoir", "Ryzen 4000 APUs", "GCN5 (Vega)", true, SUPPORTED),
    R(AMD, 0x1638, 0x1638, "gfx90c", "Cezanne", "Ryzen 5000 APUs", "GCN5 (Vega)", true, SUPPORTED),
    R(AMD, 0x164c, 0x164c, "gfx90c", "Lucienne", "Ryzen 5000U APUs", "GCN5 (Vega)", true,
      SUPPORTED),
    R(AMD, 0x7388, 0x7390, "gfx908", "Arcturus", "Instinct MI100", "CDNA1", false, SUPPORTED),
    R(AMD, 0x7408, 0x7410, "gfx90a", "Aldebaran", "Instinct MI210/MI250/MI250X", "CDNA2", false,
      SUPPORTED),
    R(AMD, 0x74a0, 0x74bf, "gfx942", "Aqua Vanjaram", "Instinct MI300A/MI300X/MI325X", "CDNA3",
      false, SUPPORTED),
    R(AMD, 0x75a0, 0x75af, "gfx950", "MI350", "Instinct MI350X/MI355X", "CDNA4", false, SUPPORTED),
    /* RDNA (gfx10, gfx11, gfx12) */
    R(AMD, 0x7310, 0x731f, "gfx1010", "Navi 10", "Radeon RX 5600/5700", "RDNA1", false, SUPPORTED),
    R(AMD, 0x7360, 0x7362, "gfx1011", "Navi 12", "Radeon Pro 5600M, V520", "RDNA1", false,
      SUPPORTED),
    R(AMD, 0x7340, 0x734f, "gfx1012", "Navi 14", "Radeon RX 5500", "RDNA1", false, SUPPORTED),
    R(AMD, 0x73a0, 0x73bf, "gfx1030", "Navi 21", "Radeon RX 6800/6900, Pro W6800, V620", "RDNA2",
      false, SUPPORTED),
    R(AMD, 0x73c0, 0x73df, "gfx1031", "Navi 22", "Radeon RX 6700", "RDNA2", false, SUPPORTED),
    R(AMD, 0x73e0, 0x73ff, "gfx1032", "Navi 23", "Radeon RX 6600", "RDNA2", false, SUPPORTED),
    R(AMD, 0x7420, 0x743f, "gfx1034", "Navi 24", "Radeon RX 6400/6500", "RDNA2", false, SUPPORTED),
    R(AMD, 0x163f, 0x163f, "gfx1033", "Van Gogh", "Steam Deck APU", "RDNA2", true, SUPPORTED),
    R(AMD, 0x1681, 0x1681, "gfx1035", "Rembrandt", "Ryzen 6000 APUs", "RDNA2", true, SUPPORTED),
    R(AMD, 0x164e, 0x164e, "gfx1036", "Raphael", "Ryzen 7000 graphics", "RDNA2", true, SUPPORTED),
    R(AMD, 0x1506, 0x1506, "gfx1037", "Mendocino", "Ryzen 7020 APUs", "RDNA2", true, SUPPORTED),
    R(AMD, 0x7440, 0x745f, "gfx1100", "Navi 31", "Radeon RX 7900, Pro W7800/W7900", "RDNA3", false,
      SUPPORTED),
    R(AMD, 0x7470, 0x747f, "gfx1101", "Navi 32", "Radeon RX 7700/7800", "RDNA3", false, SUPPORTED),
    R(AMD, 0x7480, 0x749f, "gfx1102", "Navi 33", "Radeon RX 7600", "RDNA3", false, SUPPORTED),
    R(AMD, 0x15bf, 0x15bf, "gfx1103", "Phoenix", "Ryzen 7040 APUs (780M)", "RDNA3", true,
      SUPPORTED),
    R(AMD, 0x15c8, 0x15c8, "gfx1103", "Phoenix 2", "Ryzen 7040 APUs", "RDNA3", true, SUPPORTED),
    R(AMD, 0x150e, 0x150e, "gfx1150", "Strix Point", "Ryzen AI 300 APUs", "RDNA3.5", true,
      SUPPORTED),
    R(AMD, 0x1586, 0x1586, "gfx1151", "Strix Halo", "Ryzen AI Max APUs (8060S)", "RDNA3.5", true,
      SUPPORTED),
    R(AMD, 0x1114, 0x1114, "gfx1152", "Krackan Point", "Ryzen AI 300 APUs", "RDNA3.5", true,
      SUPPORTED),
    R(AMD, 0x7590, 0x759f, "gfx1200", "Navi 44", "Radeon RX 9060", "RDNA4", false, SUPPORTED),
    R(AMD, 0x7550, 0x755f, "gfx1201", "Navi 48", "Radeon RX 9070", "RDNA4", false, SUPPORTED),
    /* Hygon DCUs (DTK) */
    R(HYGON, 0x6210, 0x6210, "gfx928", "K100_AI", "Hygon K100_AI DCU", "Hygon DCU", false,
      SUPPORTED),
};

const char sc_amd_rocm_supported_text[] =
    "ROCm and HIP compute on gfx9 and later: Vega (gfx900/gfx906), CDNA (Instinct MI100, MI200, "
    "MI300, MI350) and RDNA2 and later (see the ROCm support matrix); Hygon DCUs through DTK";

const sc_amd_pciid *sc_amd_pciid_lookup(unsigned vendor, unsigned device)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].vendor == vendor && device >= rows[i].lo && device <= rows[i].hi)
            return &rows[i];
    return NULL;
}
