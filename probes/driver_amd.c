/* driver.amd: AMD GPUs and Hygon DCUs behind the KFD (work in progress). */
#include "probes.h"

static void run(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    sc_finding(res, "driver.no-accelerator", SC_SEV_ERROR, "install the driver",
               "no supported accelerator found");
}

const sc_probe sc_probe_driver_amd = {
    .id = "driver.amd",
    .layer = SC_LAYER_DRIVER,
    .backend = SC_BACKEND_AMD,
    .summary = "AMD GPUs and Hygon DCUs: PCI, kernel module, KFD topology, device nodes, kernel log",
    .run = run,
};
