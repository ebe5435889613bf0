/* The ordered probe table: layer by layer, bottom-up. One line per probe; no constructor-based
 * registration, so nothing is silently dropped from the static library. */
#include "probes.h"

/* One probe a line, also when clang-format would pack a longer list into columns. */
// clang-format off
const sc_probe *const sc_probes[] = {
    &sc_probe_driver_devices, /* the census first: it gates every probe above */
    &sc_probe_driver_amd,
    &sc_probe_driver_nvidia,
    &sc_probe_driver_ascend,
    &sc_probe_runtime_hip,
    &sc_probe_runtime_cuda,
    &sc_probe_runtime_acl,
    &sc_probe_libraries_hip,
    &sc_probe_libraries_torch,
    &sc_probe_libraries_ext,
    &sc_probe_libraries_ext_cache, /* after libraries.torch: reads its torch_dir */
    &sc_probe_framework_torch,
    &sc_probe_framework_collective,
    &sc_probe_framework_ascend,
    &sc_probe_app_smoke,
    &sc_probe_app_script,
    NULL,
};
// clang-format on
