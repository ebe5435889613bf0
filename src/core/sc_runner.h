/* The runner: layers in order, each probe gated on the layer below for its backend, isolated when
 * it must be, timed, its result kept as a typed outcome in the run state. */
#ifndef SC_RUNNER_H
#define SC_RUNNER_H

#include <cjson/cJSON.h>

#include "sc_options.h"
#include "sc_probe.h"
#include "sc_run_state.h"
#include "sc_sysroot.h"

/* Runs the probes of table (NULL-terminated) under opt and root into rs, which it initialises and
 * ends (sc_run_state_finish: layer statuses, summary, texts through the door); the caller frees it
 * with sc_run_state_free. observer (may be NULL) hears each probe start and each outcome become
 * final. Returns the exit code (0 or 1). */
int sc_run_probes(const sc_probe *const *table, const sc_options *opt, const sc_root *root,
                  const sc_run_observer *observer, sc_run_state *rs);

/* Runs one probe in this process or isolated, as its table entry says; result in res.
 * Returns the probe's final status. */
sc_status sc_run_one(const sc_probe *probe, const sc_ctx *ctx, sc_result *res, double *duration_ms,
                     char *output_tail, size_t tail_size);

/* The reason a probe may not run: fills why and returns true when a relevant probe of a lower
 * layer did not pass (or the run is offline and the probe is active). *not_applicable is set when
 * the probe's backend is absent: every probe of its backend below was not applicable (unless
 * --keep-going is given and a backend-neutral probe below did not pass). */
bool sc_gate_blocks(const sc_probe *probe, const sc_ctx *ctx, char *why, size_t size,
                    bool *not_applicable);

#endif
