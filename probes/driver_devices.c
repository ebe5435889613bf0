/* driver.devices: the backend-neutral device census, first in the table. Reads PCI once and each
 * backend's own driver source (through the descriptors) and says which backends see a device; when
 * none does, it alone raises driver.no-accelerator, and each vendor's driver probe is simply not
 * applicable. Passive: files only, the same under --sysroot. */
#include "probes.h"
#include "sc_census.h"

#define NO_ACCELERATOR_HINT                                                                        \
    "check that the machine (or the container) has an accelerator: lspci -nn, the cloud instance " \
    "type; inside a container the host's /sys must be visible"

static void run(const sc_ctx *ctx, sc_result *res)
{
    sc_census c;
    sc_census_read(ctx->root, &c);
    sc_census_facts(&c, res->facts);
    char why[512], nothing[512];
    if (sc_census_present(&c) > 0) {
        /* pass: each vendor's driver probe judges its own devices */
    } else if (!sc_census_complete(&c, why, sizeof why)) {
        sc_result_error(res, "no accelerator seen, but the census is incomplete: %s", why);
    } else {
        sc_census_nothing_text(&c, nothing, sizeof nothing);
        sc_finding(res, "driver.no-accelerator", SC_SEV_ERROR, NO_ACCELERATOR_HINT, "%s", nothing);
    }
    sc_census_free(&c);
}

const sc_probe sc_probe_driver_devices = {
    .id = "driver.devices",
    .layer = SC_LAYER_DRIVER,
    .backend = SC_BACKEND_NONE,
    .isolated = false,
    .active = false,
    .summary = "the device census: which backends see an accelerator (PCI, and what each "
               "backend's driver reports); none at all is driver.no-accelerator",
    .run = run,
};
