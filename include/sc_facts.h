/* The fact keys one probe reads in another's facts (through sc_ctx_facts, sc_json_member and
 * sc_json_str). A key here is a contract between the probe that writes it and the probes that read
 * it; the snapshot schema and `stackcheck diff` read the same keys. The probes to read are named by
 * the backend descriptors (driver_probe, runtime_probe), and so are the keys that vary by backend
 * (arch_facts, runtime_library_facts). tests/integration/test_conformance.py checks that each key
 * is where its readers look. */
#ifndef SC_FACTS_H
#define SC_FACTS_H

/* Device lists: facts.devices of the driver and runtime probes, an array of objects. */
#define SC_FACT_DEVICES "devices"
#define SC_FACT_PCI_ADDRESS "pci_address" /* "0000:c1:00.0", lower case */
#define SC_FACT_GFX_TARGET "gfx_target"   /* driver.amd: "gfx90a" */
#define SC_FACT_GPU_ID "gpu_id"           /* driver.amd: the KFD gpu_id (number) */
#define SC_FACT_ARCH "arch"               /* runtime.hip: "gfx90a:sramecc+:xnack-"; runtime.cuda */
#define SC_FACT_MODEL "model"             /* driver.nvidia, driver.ascend: "NVIDIA H200" */

/* driver.nvidia: the kernel module's version. */
#define SC_FACT_DRIVER_VERSION "driver_version"

/* In a runtime probe's library objects (the descriptor's runtime_library_facts). */
#define SC_FACT_REALPATH "realpath"
#define SC_FACT_VERSION "version"

#endif
