/* Metrics for Prometheus through node_exporter's textfile collector: the run's verdict, layer and
 * probe statuses, findings, devices and stack, written atomically to a file the collector reads. */
#ifndef SC_PROMETHEUS_H
#define SC_PROMETHEUS_H

#include <cjson/cJSON.h>

#include "sc_types.h"

/* Writes the metrics of snapshot (after the redaction door) to path through sc_output_write:
 * stackcheck_verdict{status}, stackcheck_layer_status{layer,status},
 * stackcheck_probe_status{probe,layer,backend,status} (state sets: 1 for the status each had),
 * stackcheck_findings{id,severity} (how many), stackcheck_devices{backend,arch},
 * stackcheck_info{backend,driver,firmware,runtime,toolkit,collective,torch,kernel,
 * stackcheck_version} 1 and stackcheck_last_run_timestamp_seconds. Returns 0 or -errno with err
 * filled. */
int sc_prometheus_write(const cJSON *snapshot, const char *path, sc_error *err);

#endif
