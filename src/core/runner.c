/* The runner: layers bottom-up; a probe runs only when the relevant probes below it passed (or
 * with --keep-going); active probes are skipped offline; isolated probes run in a child with a
 * deadline. Each result becomes a final outcome in the run state at once, so later probes can read
 * it; gating reads the typed outcomes. */
#include "sc_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_isolate.h"
#include "sc_json.h"
#include "sc_reap.h"
#include "sc_runner_internal.h"
#include "sc_scratch.h"
#include "sc_step.h"
#include "sc_text.h"
#include "sc_util.h"

/* Serialises a result for the pipe from an isolated child. */
static cJSON *result_to_json(sc_result *res)
{
    cJSON *out = cJSON_CreateObject();
    if (!out)
        return NULL;
    cJSON_AddStringToObject(out, "status", sc_status_name(sc_result_status(res)));
    cJSON_AddBoolToObject(out, "not_applicable", res->not_applicable);
    cJSON_AddStringToObject(out, "reason", res->reason);
    cJSON_AddItemToObject(out, "facts", res->facts);
    cJSON_AddItemToObject(out, "findings", res->findings);
    res->facts = res->findings = NULL;
    return out;
}

cJSON *sc_runner_child(void *arg)
{
    sc_runner_job *job = arg;
    sc_result res;
    if (sc_result_init(&res) < 0)
        return NULL;
    job->probe->run(job->ctx, &res);
    return result_to_json(&res);
}

/* Takes the child's JSON apart into res; a result of the wrong shape is an error. */
static void result_from_json(cJSON *json, sc_result *res)
{
    cJSON *facts = cJSON_DetachItemFromObjectCaseSensitive(json, "facts");
    cJSON *findings = cJSON_DetachItemFromObjectCaseSensitive(json, "findings");
    const char *status = sc_json_str(json, "status");
    if (!cJSON_IsObject(facts) || !cJSON_IsArray(findings) || sc_status_parse(status) < 0) {
        cJSON_Delete(facts);
        cJSON_Delete(findings);
        sc_result_error(res, "the isolated probe sent a result of the wrong shape");
        return;
    }
    cJSON_Delete(res->facts);
    cJSON_Delete(res->findings);
    res->facts = facts;
    res->findings = findings;
    res->status = sc_status_parse(status);
    res->not_applicable = cJSON_IsTrue(sc_json_member(json, "not_applicable"));
    sc_text_copy(res->reason, sizeof res->reason, sc_json_str(json, "reason") ?: "");
}

void sc_runner_result_from_report(sc_isolate_report *rep, sc_result *res)
{
    switch (rep->outcome) {
    case SC_ISOLATE_OK: result_from_json(rep->result, res); break;
    case SC_ISOLATE_CRASH:
        res->status = SC_STATUS_CRASH;
        snprintf(res->reason, sizeof res->reason, "probe crashed: %s", rep->detail);
        break;
    case SC_ISOLATE_TIMEOUT:
        res->status = SC_STATUS_TIMEOUT;
        snprintf(res->reason, sizeof res->reason, "probe timed out: %s", rep->detail);
        break;
    case SC_ISOLATE_ERROR: sc_result_error(res, "probe failed: %s", rep->detail); break;
    }
    cJSON_Delete(rep->result);
    rep->result = NULL;
}

double sc_runner_timeout_s(const sc_probe *probe, const sc_ctx *ctx)
{
    if (!probe->isolated)
        return SC_RUNNER_WORKER_TIMEOUT_S;
    return sc_opt_probe_timeout(ctx->opt, probe->timeout_s > 0 ? probe->timeout_s : 30.0);
}

static void run_isolated(const sc_probe *probe, const sc_ctx *ctx, sc_result *res, double *ms,
                         char *tail, size_t tail_size)
{
    sc_runner_job job = {probe, ctx};
    sc_isolate_report rep;
    int rc = sc_isolate_run(sc_runner_child, &job, sc_runner_timeout_s(probe, ctx), &rep);
    *ms = rep.duration_ms;
    snprintf(tail, tail_size, "%s", rep.output_tail);
    if (rc < 0) {
        sc_result_error(res, "could not start an isolated child: %s", strerror(-rc));
        return;
    }
    sc_runner_result_from_report(&rep, res);
}

sc_status sc_run_one(const sc_probe *probe, const sc_ctx *ctx, sc_result *res, double *duration_ms,
                     char *output_tail, size_t tail_size)
{
    output_tail[0] = '\0';
    if (probe->isolated) {
        double start = sc_now_ms();
        if (probe->prepare)
            probe->prepare(ctx);
        double prepared_ms = sc_now_ms() - start;
        run_isolated(probe, ctx, res, duration_ms, output_tail, tail_size);
        *duration_ms += prepared_ms;
    } else {
        double start = sc_now_ms();
        probe->run(ctx, res);
        *duration_ms = sc_now_ms() - start;
    }
    return sc_result_status(res);
}

/* True when lower probe q matters to p: same backend, or either is backend-neutral. */
static bool relevant(const sc_probe *p, const sc_probe *q)
{
    return p->backend == SC_BACKEND_NONE || q->backend == SC_BACKEND_NONE ||
           q->backend == p->backend;
}

/* What the relevant probes below say: how many of the probe's own backend ran and how many of
 * those found their hardware absent, whether a backend-neutral one did not pass, and the first
 * that blocks. */
typedef struct {
    int own, own_absent;
    bool neutral_failed;
    const sc_outcome *blocker; /* the first relevant outcome that did not pass, NULL when none */
} gate_tally;

static void tally_outcome(const sc_probe *probe, const sc_outcome *q, gate_tally *t)
{
    bool neutral = q->probe->backend == SC_BACKEND_NONE;
    bool own = probe->backend != SC_BACKEND_NONE && !neutral;
    t->own += own;
    if (q->status == SC_STATUS_PASS || q->status == SC_STATUS_WARN || q->offline)
        return;
    if (q->status == SC_STATUS_SKIP && !q->applicable) {
        t->own_absent += own;
        return;
    }
    t->neutral_failed |= neutral;
    if (!t->blocker)
        t->blocker = q;
}

/* A backend probe whose own probes below all found no hardware does not apply, whatever failed
 * beside it, online or offline: an absent backend contributes nothing, not even its inventory.
 * The exception is a backend-neutral probe below that did not pass (driver.devices saw no
 * accelerator at all): then no backend is known to be absent, and with --keep-going the probe runs
 * like every other probe above a failure, offline its inventory is collected. */
bool sc_gate_blocks(const sc_probe *probe, const sc_ctx *ctx, char *why, size_t size,
                    bool *not_applicable)
{
    *not_applicable = false;
    gate_tally t = {0};
    for (size_t k = 0; k < ctx->run->count; k++) {
        const sc_outcome *q = sc_run_state_at(ctx->run, k);
        if (q->probe->layer >= probe->layer)
            break; /* only the layers below gate a probe, never its siblings */
        if (q->phase == SC_OUTCOME_FINAL && relevant(probe, q->probe))
            tally_outcome(probe, q, &t);
    }
    /* driver.devices saw nothing at all (an image without /sys): no backend is known to be
     * absent, so --keep-going runs everything and offline every inventory is collected */
    bool waived = (ctx->opt->keep_going || (ctx->offline && probe->active)) && t.neutral_failed;
    if (t.own > 0 && t.own_absent == t.own && !waived) {
        *not_applicable = true;
        snprintf(why, size, "no %s device: the layers below do not apply",
                 sc_backend_name(probe->backend));
        return true;
    }
    /* after the absent-backend test: an absent backend contributes nothing, offline too */
    if (ctx->offline && probe->active) {
        snprintf(why, size, "offline (--sysroot)");
        return true;
    }
    if (!t.blocker || ctx->opt->keep_going)
        return false;
    snprintf(why, size, "%s %s", t.blocker->probe->id,
             t.blocker->status == SC_STATUS_SKIP ? "was skipped" : "did not pass");
    return true;
}

/* Adds the probe's passive inventory to res without changing its status or reason. */
static void add_inventory(const sc_probe *probe, const sc_ctx *ctx, sc_result *res)
{
    if (!probe->inventory)
        return;
    sc_status st = res->status;
    bool not_applicable = res->not_applicable;
    char reason[sizeof res->reason];
    memcpy(reason, res->reason, sizeof reason);
    probe->inventory(ctx, res);
    res->status = st;
    res->not_applicable = not_applicable;
    memcpy(res->reason, reason, sizeof reason);
}

bool sc_runner_skip_if_gated(sc_run_state *rs, size_t i, const sc_ctx *ctx,
                             const sc_run_observer *observer)
{
    const sc_probe *probe = rs->outcomes[i].probe;
    char why[512];
    bool not_applicable = false;
    double start = sc_now_ms();
    bool late = sc_opt_deadline_passed(ctx->opt); /* --deadline: what is left is not started */
    if (late)
        snprintf(why, sizeof why, "the run's deadline (--deadline %g s) passed",
                 ctx->opt->deadline_s);
    if (!late && !sc_gate_blocks(probe, ctx, why, sizeof why, &not_applicable) &&
        (!probe->turn_gate || probe->turn_gate(ctx, why, sizeof why)))
        return false;
    sc_result res;
    if (sc_result_init(&res) < 0)
        return true; /* the outcome stays pending: left out, as nothing can be said */
    sc_result_skip(&res, not_applicable, "%s", why);
    if (!not_applicable && !late)
        add_inventory(probe, ctx, &res);
    sc_runner_finish(rs, i, observer, &res, sc_now_ms() - start, NULL,
                     !not_applicable && ctx->offline && probe->active);
    return true;
}

void sc_runner_started(sc_run_state *rs, size_t i, const sc_run_observer *observer)
{
    rs->outcomes[i].phase = SC_OUTCOME_RUNNING;
    rs->outcomes[i].started_ms = sc_now_ms();
    if (observer && observer->started)
        observer->started(rs, i, observer->arg);
}

void sc_runner_finish(sc_run_state *rs, size_t i, const sc_run_observer *observer, sc_result *res,
                      double ms, const char *tail, bool offline_skip)
{
    sc_outcome *o = &rs->outcomes[i];
    sc_status st = sc_result_status(res);
    bool keep_tail = st != SC_STATUS_PASS && st != SC_STATUS_SKIP;
    sc_outcome_finish(o, res, st, ms, keep_tail ? tail : NULL, offline_skip);
    sc_result_free(res);
    if (observer && observer->final)
        observer->final(rs, i, observer->arg);
}

void sc_runner_ran(sc_run_state *rs, size_t i, const sc_ctx *ctx, const sc_run_observer *observer,
                   sc_result *res, double ms, const char *tail)
{
    sc_status st = sc_result_status(res);
    if (st == SC_STATUS_CRASH || st == SC_STATUS_TIMEOUT || st == SC_STATUS_ERROR)
        add_inventory(rs->outcomes[i].probe, ctx, res); /* what the child found is lost */
    sc_runner_finish(rs, i, observer, res, ms, tail, false);
}

/* Gates, runs (or skips) the probe of outcome i in this process, or isolated as its table entry
 * says, and makes the outcome final; its warm-up (warm) begins at its turn when its gate is open.
 */
static void run_probe(sc_run_state *rs, size_t i, const sc_ctx *ctx,
                      const sc_run_observer *observer, char *warm)
{
    if (sc_runner_skip_if_gated(rs, i, ctx, observer))
        return;
    if (warm)
        sc_runner_warm_up(rs, i, ctx, warm);
    sc_runner_run_here(rs, i, ctx, observer);
}

/* One probe after another in report order. */
static void run_serial(sc_run_state *rs, const sc_ctx *ctx, const sc_run_observer *observer)
{
    char *warm = calloc(rs->count ? rs->count : 1, 1); /* none: no warm-ups, only slower */
    for (size_t k = 0; k < rs->count; k++) {
        run_probe(rs, rs->order[k], ctx, observer, warm);
        if (warm)
            sc_runner_cool_down(rs, k + 1, ctx, warm);
    }
    if (warm)
        sc_runner_warm_release(rs, warm);
    free(warm);
}

void sc_runner_run_here(sc_run_state *rs, size_t i, const sc_ctx *ctx,
                        const sc_run_observer *observer)
{
    sc_result res;
    if (sc_result_init(&res) < 0)
        return;
    char tail[2048] = "";
    double ms = 0;
    sc_runner_started(rs, i, observer);
    sc_runner_listen(rs, i, observer);
    sc_run_one(rs->outcomes[i].probe, ctx, &res, &ms, tail, sizeof tail);
    sc_runner_ran(rs, i, ctx, observer, &res, ms, tail);
}

int sc_run_probes(const sc_probe *const *table, const sc_options *opt, const sc_root *root,
                  const sc_run_observer *observer, sc_run_state *rs)
{
    if (sc_run_state_init(rs, table) < 0)
        return 1;
    sc_ctx ctx = {.opt = opt, .root = root, .offline = !root->is_host || opt->passive, .run = rs};
    /* Nothing a probe starts can escape to init during the run, and nothing outlives it, nor
     * any file its children made in the run's private directory. */
    sc_reap_subreaper();
    if (!ctx.offline)
        sc_scratch_begin();
    if (opt->jobs > 1)
        sc_runner_parallel(rs, &ctx, observer, opt->jobs);
    else
        run_serial(rs, &ctx, observer);
    sc_step_listen(NULL);
    sc_reap_descendants();
    sc_scratch_end();
    sc_run_state_finish(rs);
    return rs->summary.exit_code;
}
