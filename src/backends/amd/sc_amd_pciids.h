/* Device identity from the PCI id, for AMD GPUs and Hygon DCUs: the gfx target, the chip's name
 * and family, whether it is an APU, and whether ROCm/HIP computes on it. Used when the KFD gives
 * no gfx_target_version (kernels before about 5.6), for devices the KFD left out, and to name
 * devices in reports and in unsupported-ASIC verdicts. */
#ifndef SC_AMD_PCIIDS_H
#define SC_AMD_PCIIDS_H

#include <stdbool.h>

/* How far ROCm goes with a family. */
typedef enum {
    SC_AMD_ROCM_SUPPORTED, /* gfx9 and later: a current ROCm or DTK computes on it */
    SC_AMD_ROCM_LEGACY,    /* gfx8 (GCN3/GCN4): dropped by ROCm, some old releases ran it */
    SC_AMD_ROCM_NEVER      /* gfx6/gfx7 (SI, CIK): never supported by ROCm or HIP */
} sc_amd_rocm_support;

typedef struct {
    unsigned vendor, lo, hi; /* device ids lo..hi of vendor */
    const char *gfx;         /* "gfx906" */
    const char *chip;        /* "Vega 20" */
    const char *products;    /* "Instinct MI50/MI60, Radeon VII" */
    const char *family;      /* "GCN5 (Vega)", "CDNA2", "SI" */
    bool apu;                /* a GPU inside a CPU: the KFD shows it as a CPU and a GPU node */
    sc_amd_rocm_support rocm;
} sc_amd_pciid;

/* The row for vendor:device, or NULL when the table does not know it. */
const sc_amd_pciid *sc_amd_pciid_lookup(unsigned vendor, unsigned device);
/* What ROCm supports, in words, for a verdict on an ASIC it does not. */
extern const char sc_amd_rocm_supported_text[];

#endif
