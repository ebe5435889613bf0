/* The names one probe uses to read another's outcome: the probe ids it asks for and the fact keys
 * it reads in their facts (through sc_ctx_facts, sc_json_member and sc_json_str). A key here is a
 * contract between the probe that writes it and the probes that read it; the snapshot schema and
 * `stackcheck diff` read the same keys. tests/integration/test_conformance.py checks that each
 * key is where its readers look. */
#ifndef SC_FACTS_H
#define SC_FACTS_H

/* Probes whose outcomes other probes read. */
#define SC_PROBE_DRIVER_AMD "driver.amd"
#define SC_PROBE_DRIVER_NVIDIA "driver.nvidia"
#define SC_PROBE_DRIVER_ASCEND "driver.ascend"
#define SC_PROBE_RUNTIME_HIP "runtime.hip"
#define SC_PROBE_RUNTIME_CUDA "runtime.cuda"

/* Device lists: facts.devices of the driver and runtime probes, an array of objects. */
#define SC_FACT_DEVICES "devices"
#define SC_FACT_PCI_ADDRESS "pci_address" /* "0000:c1:00.0", lower case */
#define SC_FACT_GFX_TARGET "gfx_target"   /* driver.amd: "gfx90a" */
#define SC_FACT_GPU_ID "gpu_id"           /* driver.amd: the KFD gpu_id (number) */
#define SC_FACT_ARCH "arch"               /* runtime.hip: "gfx90a:sramecc+:xnack-"; runtime.cuda */
#define SC_FACT_MODEL "model"             /* driver.nvidia, driver.ascend: "NVIDIA H200" */

/* driver.nvidia: the kernel module's version. */
#define SC_FACT_DRIVER_VERSION "driver_version"

/* Runtime libraries: objects with a realpath and a version. */
#define SC_FACT_RUNTIME "runtime"                 /* runtime.hip: the library it loaded */
#define SC_FACT_RUNTIME_LIBRARY "runtime_library" /* runtime.hip: the loader's pick */
#define SC_FACT_DRIVER_API "driver_api"           /* runtime.cuda: the libcuda it loaded */
#define SC_FACT_DRIVER_LIBRARY "driver_library"   /* runtime.cuda: the loader's pick */
#define SC_FACT_REALPATH "realpath"
#define SC_FACT_VERSION "version"

#endif
