/* The pieces the serial and the parallel runner share: a probe's child, its result from the
 * child's report, gating at its turn, the start and the end of an outcome, and its steps. */
#ifndef SC_RUNNER_INTERNAL_H
#define SC_RUNNER_INTERNAL_H

#include "sc_isolate.h"
#include "sc_runner.h"

/* A probe that is not isolated but runs in a child beside others has no deadline of its own: this
 * only keeps a child that can never end from holding the run forever. */
#define SC_RUNNER_WORKER_TIMEOUT_S (7 * 86400.0)

typedef struct {
    const sc_probe *probe;
    const sc_ctx *ctx;
} sc_runner_job;

/* The function a probe's child runs (arg: an sc_runner_job): the probe, its result as JSON. */
cJSON *sc_runner_child(void *arg);
/* The deadline of probe's child: its own (or --timeout) when isolated, else the worker's. */
double sc_runner_timeout_s(const sc_probe *probe, const sc_ctx *ctx);
/* Makes res from the report of a probe's child (and frees the report's result). */
void sc_runner_result_from_report(sc_isolate_report *rep, sc_result *res);

/* At the probe's turn (every outcome before it in report order final): when its gate is closed,
 * makes outcome i a skip (with its inventory) as a serial run does and returns true. */
bool sc_runner_skip_if_gated(sc_run_state *rs, size_t i, const sc_ctx *ctx,
                             const sc_run_observer *observer);
/* Runs the probe of outcome i (its gate open) in this process, or isolated as its table entry
 * says, as a serial run does, and makes the outcome final. */
void sc_runner_run_here(sc_run_state *rs, size_t i, const sc_ctx *ctx,
                        const sc_run_observer *observer);
/* Marks outcome i running and tells the observer. */
void sc_runner_started(sc_run_state *rs, size_t i, const sc_run_observer *observer);
/* Outcome i ran into res in ms (tail: its child's output): adds the inventory when it did not
 * finish its work, makes it final and tells the observer; frees res. */
void sc_runner_ran(sc_run_state *rs, size_t i, const sc_ctx *ctx, const sc_run_observer *observer,
                   sc_result *res, double ms, const char *tail);
/* Makes outcome i final from res (freed) and tells the observer. */
void sc_runner_finish(sc_run_state *rs, size_t i, const sc_run_observer *observer, sc_result *res,
                      double ms, const char *tail, bool offline_skip);

/* Steps named in this process (and passed on from its isolated children) are outcome i's from now
 * on; the waits' ticks reach the observer. */
void sc_runner_listen(sc_run_state *rs, size_t i, const sc_run_observer *observer);
/* Outcome i begins step name: recorded, and the observer told. */
void sc_runner_note_step(sc_run_state *rs, size_t i, const sc_run_observer *observer,
                         const char *name);

/* Warm-ups (sc_probe.warm_up); warm: per outcome 0, 1 (warmed) or 2 (stopped), zeroed at first.
 * Calls outcome i's warm-up when it has one, the run is online, the environment allows it
 * (STACKCHECK_WARM=0 does not) and its gate is not closed yet. */
void sc_runner_warm_up(const sc_run_state *rs, size_t i, const sc_ctx *ctx, char *warm);
/* Stops each warm-up whose probe's layer is final (every outcome before cursor, in report order,
 * is) or whose gate has closed. */
void sc_runner_cool_down(const sc_run_state *rs, size_t cursor, const sc_ctx *ctx, char *warm);
/* At the run's end: releases what every warm-up left. */
void sc_runner_warm_release(const sc_run_state *rs, char *warm);

/* Runs every outcome of rs with up to jobs probes at once, each in a child, reported and gated
 * in report order exactly as run one by one. */
void sc_runner_parallel(sc_run_state *rs, const sc_ctx *ctx, const sc_run_observer *observer,
                        int jobs);

#endif
