/* Probe app.smoke: the user's own command (--app CMD) through /bin/sh -c, staged by the marker
 * lines it prints, run --app-repeat times with the first run kept apart from the steady state, and
 * ended by its own deadline shortly before the probe's, so a hang or a crash becomes a finding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "sc_app.h"
#include "sc_isolate.h"
#include "sc_redact.h"
#include "sc_util.h"

#define APP_TIMEOUT_S 300.0

/* Durations of one run: the total and each stage's, by name. */
static cJSON *run_timing_json(const sc_app_parse *p, const sc_app_outcome *o)
{
    cJSON *run = cJSON_CreateObject(), *stages = cJSON_CreateObject();
    for (int i = 0; stages && i < p->stage_count; i++) {
        if (!sc_app_stage_reported(p, i))
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(stages, p->stages[i].name);
        cJSON_AddNumberToObject(stages, p->stages[i].name,
                                p->stages[i].end_ms - p->stages[i].start_ms);
    }
    cJSON_AddNumberToObject(run, "duration_ms", o->duration_ms);
    cJSON_AddItemToObject(run, "stages", stages);
    return run;
}

/* The shell reports a command killed by signal N as exit status 128 + N. */
static int signal_of(const sc_app_outcome *o)
{
    if (o->signal)
        return o->signal;
    return o->exit_code > 128 && o->exit_code < 128 + 65 ? o->exit_code - 128 : 0;
}

static void add_exit_facts(cJSON *facts, const sc_app_outcome *o)
{
    char name[32];
    if (o->timed_out) {
        sc_fact_null(facts, "exit_code", "killed at the deadline");
        sc_fact_null(facts, "signal", "killed at the deadline");
    } else if (o->signal) {
        sc_fact_null(facts, "exit_code", "killed by %s",
                     sc_signal_name(o->signal, name, sizeof name));
        cJSON_AddStringToObject(facts, "signal", name);
    } else {
        cJSON_AddNumberToObject(facts, "exit_code", o->exit_code);
        if (signal_of(o))
            cJSON_AddStringToObject(facts, "signal",
                                    sc_signal_name(signal_of(o), name, sizeof name));
        else
            sc_fact_null(facts, "signal", "exited normally");
    }
    cJSON_AddBoolToObject(facts, "timed_out", o->timed_out);
    cJSON_AddNumberToObject(facts, "duration_ms", o->duration_ms);
    cJSON_AddNumberToObject(facts, "processes_killed", o->strays_killed);
}

static void add_findings(sc_result *res, const sc_app_parse *p, const sc_app_outcome *o,
                         double deadline_s)
{
    char tail[400], name[32];
    int last = sc_app_current_stage(p);
    const char *stage = sc_app_failed_stage(p);
    sc_app_stage_tail_line(p, last, tail, sizeof tail);
    if (o->timed_out)
        sc_finding(
            res, "app.timeout", SC_SEV_ERROR,
            "find what the stage waits for (its output is in facts.stages); give the app more "
            "time with --timeout SECONDS",
            "the app did not finish within %.1f s, in stage '%s'; its processes were killed; "
            "last output: %s",
            deadline_s, stage, tail[0] ? tail : "(none)");
    else if (signal_of(o))
        sc_finding(res, "app.crashed", SC_SEV_ERROR,
                   "run the stage alone under a debugger (gdb --args ...) or with core dumps "
                   "enabled; check the layers below for the library it crashed in",
                   "the app was killed by %s in stage '%s' (%s); last output: %s",
                   sc_signal_name(signal_of(o), name, sizeof name), stage,
                   o->signal ? "the command itself" : "reported by the shell as its exit status",
                   tail[0] ? tail : "(none)");
    else if (o->exit_code != 0)
        sc_finding(res, "app.failed", SC_SEV_ERROR,
                   "fix the first failed stage: its output tail is in facts.stages",
                   "the app exited with status %d in stage '%s'; last output: %s", o->exit_code,
                   stage, tail[0] ? tail : "(none)");
}

static void add_run_facts(cJSON *facts, const sc_app_parse *p, const sc_app_outcome *o, bool ok)
{
    add_exit_facts(facts, o);
    if (ok)
        sc_fact_null(facts, "first_failed_stage", "no stage failed");
    else
        cJSON_AddStringToObject(facts, "first_failed_stage", sc_app_failed_stage(p));
    cJSON_AddItemToObject(facts, "stages", sc_app_stages_json(p, ok));
    cJSON_AddItemToObject(facts, "metrics", sc_app_metrics_json(p));
    cJSON_AddItemToObject(facts, "stdout", sc_app_stream_json(p, SC_APP_STDOUT));
    cJSON_AddItemToObject(facts, "stderr", sc_app_stream_json(p, SC_APP_STDERR));
    cJSON_AddNumberToObject(facts, "stages_dropped", p->stages_dropped);
    cJSON_AddNumberToObject(facts, "metrics_dropped", p->metrics_dropped);
    cJSON_AddNumberToObject(facts, "malformed_markers", p->malformed);
}

static void run_repeats(const sc_ctx *ctx, sc_result *res, sc_app_parse *p, double deadline_s)
{
    const sc_options *opt = ctx->opt;
    int repeat = opt->app_repeat > 0 ? opt->app_repeat : 1;
    double deadline_ms = sc_now_ms() + deadline_s * 1000.0;
    cJSON *runs = cJSON_CreateArray();
    sc_app_outcome o;
    bool ok = false;
    int done = 0;
    sc_error err = {0};
    for (int r = 0; r < repeat; r++) {
        sc_app_parse_init(p, sc_now_ms());
        /* the isolated probe leads its own process group: the app joins it */
        if (sc_app_exec(opt->app_cmd, deadline_ms, true, p, &o, &err) < 0) {
            sc_result_error(res, "cannot run the app: %s", err.message);
            cJSON_Delete(runs);
            return;
        }
        done++;
        ok = !o.timed_out && o.signal == 0 && o.exit_code == 0;
        cJSON_AddItemToArray(runs, run_timing_json(p, &o));
        if (!ok)
            break;
    }
    cJSON_AddNumberToObject(res->facts, "repeat", repeat);
    cJSON_AddNumberToObject(res->facts, "runs", done);
    add_run_facts(res->facts, p, &o, ok);
    cJSON_AddItemToObject(res->facts, "timing", sc_app_timing_json(runs));
    cJSON_Delete(runs);
    if (!ok)
        add_findings(res, p, &o, deadline_s);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    if (!ctx->opt->app_cmd) {
        sc_result_skip(res, true, "no --app given");
        return;
    }
    double probe_s = ctx->opt->timeout_s > 0 ? ctx->opt->timeout_s : APP_TIMEOUT_S;
    double deadline_s = sc_app_deadline_s(probe_s);
    sc_app_parse *p = malloc(sizeof *p);
    if (!p) {
        sc_result_error(res, "out of memory");
        return;
    }
    cJSON_AddStringToObject(res->facts, "command", ctx->opt->app_cmd);
    cJSON_AddStringToObject(res->facts, "shell", "/bin/sh -c");
    cJSON_AddNumberToObject(res->facts, "deadline_s", deadline_s);
    run_repeats(ctx, res, p, deadline_s);
    free(p);
    sc_redact_json(res->facts);
}

const sc_probe sc_probe_app_smoke = {
    .id = "app.smoke",
    .layer = SC_LAYER_APP,
    .backend = SC_BACKEND_NONE,
    .isolated = true,
    .active = true,
    .timeout_s = APP_TIMEOUT_S,
    .summary =
        "the user's command (--app CMD): stages from marker lines, exit status, output tails",
    .run = run,
};
