/* Device identity from the PCI id for NVIDIA data-centre and common workstation GPUs: the product
 * name and compute capability, used when /proc/driver/nvidia has no information file for the GPU
 * (driver not bound, probe failed) and to say which CUDA architectures a GPU needs. */
#ifndef SC_NVIDIA_PCIIDS_H
#define SC_NVIDIA_PCIIDS_H

typedef struct {
    unsigned device;          /* 0x2335 */
    const char *name;         /* "NVIDIA H200" */
    const char *compute_cap;  /* "9.0" */
    const char *architecture; /* "Hopper" */
} sc_nvidia_pciid;

/* The row for NVIDIA device id device, or NULL when the table does not know it. */
const sc_nvidia_pciid *sc_nvidia_pciid_lookup(unsigned device);

#endif
