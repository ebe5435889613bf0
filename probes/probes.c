/* The ordered probe table: layer by layer, bottom-up. One line per probe; no constructor-based
 * registration, so nothing is silently dropped from the static library. */
#include "probes.h"

const sc_probe *const sc_probes[] = {
    &sc_probe_driver_amd,
    NULL,
};
