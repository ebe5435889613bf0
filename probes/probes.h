/* Declarations of every probe; the table in probes.c orders them. */
#ifndef SC_PROBES_H
#define SC_PROBES_H

#include "sc_probe.h"

extern const sc_probe sc_probe_driver_devices;
extern const sc_probe sc_probe_driver_amd;
extern const sc_probe sc_probe_driver_nvidia;
extern const sc_probe sc_probe_driver_ascend;
extern const sc_probe sc_probe_runtime_hip;
extern const sc_probe sc_probe_runtime_cuda;
extern const sc_probe sc_probe_runtime_acl;
extern const sc_probe sc_probe_libraries_hip;
extern const sc_probe sc_probe_libraries_torch;
extern const sc_probe sc_probe_libraries_ext;
extern const sc_probe sc_probe_libraries_ext_cache;
extern const sc_probe sc_probe_framework_torch;
extern const sc_probe sc_probe_framework_collective;
extern const sc_probe sc_probe_framework_ascend;
extern const sc_probe sc_probe_app_smoke;
extern const sc_probe sc_probe_app_script;

#endif
