/* DRM devices: on the live system enumerated with libdrm (drmGetDevices2) and named with
 * drmGetVersion on their render node; under --sysroot the same facts come from /sys/class/drm. */
#ifndef SC_DRM_H
#define SC_DRM_H

#include <cjson/cJSON.h>

#include "sc_sysroot.h"
#include "sc_types.h"

/* Appends one object per DRM device to arr: {pci_address, vendor_id, device_id, primary_node,
 * render_node, driver, version, module_version, source}; facts that cannot be read are null with a
 * reason. Returns the number of devices, or a negative errno and fills err. */
int sc_drm_collect(const sc_root *root, cJSON *arr, sc_error *err);

#endif
