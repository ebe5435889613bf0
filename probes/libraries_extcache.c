/* libraries.ext_cache: extension caches (TORCH_EXTENSIONS_DIR, torch's default cache, the build/
 * and .egg-link directories of --ext), each cached shared object compared with the current
 * Python, torch and runtime. Passive: reads files only, runs offline (--sysroot) too. */
#include "probes.h"
#include "sc_extcache.h"
#include "sc_libs.h"

const sc_probe sc_probe_libraries_ext_cache = {
    .id = "libraries.ext_cache",
    .layer = SC_LAYER_LIBRARIES,
    .backend = SC_BACKEND_NONE,
    .isolated = true,
    .timeout_s = SC_LIBS_TIMEOUT_S,
    .summary = "extension caches: cached builds against the current Python, torch and runtime",
    .run = sc_extcache_run,
};
