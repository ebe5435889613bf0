/* The runner: layers bottom-up; a probe runs only when the relevant probes below it passed (or
 * with --keep-going); active probes are skipped offline; isolated probes run in a child with a
 * deadline. Each result lands in the snapshot at once, so later probes can read it. */
#include "sc_runner.h"

#include <stdio.h>
#include <string.h>

#include "sc_isolate.h"
#include "sc_reap.h"
#include "sc_redact.h"
#include "sc_text.h"
#include "sc_util.h"

typedef struct {
    const sc_probe *probe;
    const sc_ctx *ctx;
} child_job;

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

static cJSON *child_run(void *arg)
{
    child_job *job = arg;
    sc_result res;
    if (sc_result_init(&res) < 0)
        return NULL;
    job->probe->run(job->ctx, &res);
    return result_to_json(&res);
}

/* Takes the child's JSON apart into res; a result of the wrong shape is an error. */
static void result_from_json(cJSON *json, sc_result *res)
{
    cJSON *facts = cJSON_DetachItemFromObject(json, "facts");
    cJSON *findings = cJSON_DetachItemFromObject(json, "findings");
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(json, "status"));
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
    res->not_applicable = cJSON_IsTrue(cJSON_GetObjectItem(json, "not_applicable"));
    sc_text_copy(res->reason, sizeof res->reason,
                 cJSON_GetStringValue(cJSON_GetObjectItem(json, "reason")) ?: "");
}

static void run_isolated(const sc_probe *probe, const sc_ctx *ctx, sc_result *res, double *ms,
                         char *tail, size_t tail_size)
{
    child_job job = {probe, ctx};
    double timeout = ctx->opt->timeout_s > 0 ? ctx->opt->timeout_s : probe->timeout_s;
    sc_isolate_report rep;
    int rc = sc_isolate_run(child_run, &job, timeout > 0 ? timeout : 30.0, &rep);
    *ms = rep.duration_ms;
    snprintf(tail, tail_size, "%s", rep.output_tail);
    if (rc < 0) {
        sc_result_error(res, "could not start an isolated child: %s", strerror(-rc));
        return;
    }
    switch (rep.outcome) {
    case SC_ISOLATE_OK: result_from_json(rep.result, res); break;
    case SC_ISOLATE_CRASH:
        res->status = SC_STATUS_CRASH;
        snprintf(res->reason, sizeof res->reason, "probe crashed: %s", rep.detail);
        break;
    case SC_ISOLATE_TIMEOUT:
        res->status = SC_STATUS_TIMEOUT;
        snprintf(res->reason, sizeof res->reason, "probe timed out: %s", rep.detail);
        break;
    case SC_ISOLATE_ERROR: sc_result_error(res, "probe failed: %s", rep.detail); break;
    }
    cJSON_Delete(rep.result);
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
static bool relevant(const sc_probe *p, const char *q_backend)
{
    return p->backend == SC_BACKEND_NONE || strcmp(q_backend, "none") == 0 ||
           strcmp(q_backend, sc_backend_name(p->backend)) == 0;
}

/* What the relevant probes below say: how many of the probe's own backend ran and how many of
 * those found their hardware absent, whether a backend-neutral one did not pass, and the first
 * that blocks. */
typedef struct {
    int own, own_absent;
    bool neutral_failed;
    const char *blocker; /* id of the first relevant probe that did not pass, NULL when none */
    bool blocker_skipped;
} gate_tally;

static void tally_probe(const sc_probe *probe, const cJSON *q, const char *backend, gate_tally *t)
{
    sc_status st = sc_status_parse(cJSON_GetStringValue(cJSON_GetObjectItem(q, "status")));
    bool applicable = !cJSON_IsFalse(cJSON_GetObjectItem(q, "applicable"));
    bool offline_skip = cJSON_IsTrue(cJSON_GetObjectItem(q, "offline"));
    bool own = probe->backend != SC_BACKEND_NONE && strcmp(backend, "none") != 0;
    t->own += own;
    if (st == SC_STATUS_PASS || st == SC_STATUS_WARN || offline_skip)
        return;
    if (st == SC_STATUS_SKIP && !applicable) {
        t->own_absent += own;
        return;
    }
    t->neutral_failed |= strcmp(backend, "none") == 0;
    if (!t->blocker) {
        t->blocker = cJSON_GetStringValue(cJSON_GetObjectItem(q, "id"));
        t->blocker_skipped = st == SC_STATUS_SKIP;
    }
}

/* A backend probe whose own probes below all found no hardware does not apply, whatever failed
 * beside it. The one exception is --keep-going when a backend-neutral probe below did not pass
 * (driver.devices saw no accelerator at all): then no backend is known to be absent, and the probe
 * runs like every other probe above a failure. */
bool sc_gate_blocks(const sc_probe *probe, const sc_ctx *ctx, char *why, size_t size,
                    bool *not_applicable)
{
    *not_applicable = false;
    if (ctx->offline && probe->active) {
        snprintf(why, size, "offline (--sysroot)");
        return true;
    }
    gate_tally t = {0};
    int index = 0;
    const cJSON *layer, *q;
    cJSON_ArrayForEach (layer, ctx->layers) {
        if (index++ >= (int)probe->layer)
            break; /* only the layers below gate a probe, never its siblings */
        cJSON_ArrayForEach (q, cJSON_GetObjectItem(layer, "probes")) {
            const char *backend = cJSON_GetStringValue(cJSON_GetObjectItem(q, "backend"));
            if (backend && relevant(probe, backend))
                tally_probe(probe, q, backend, &t);
        }
    }
    bool waived = ctx->opt->keep_going && t.neutral_failed;
    if (t.own > 0 && t.own_absent == t.own && !waived) {
        *not_applicable = true;
        snprintf(why, size, "no %s device: the layers below do not apply",
                 sc_backend_name(probe->backend));
        return true;
    }
    if (!t.blocker || ctx->opt->keep_going)
        return false;
    snprintf(why, size, "%s %s", t.blocker, t.blocker_skipped ? "was skipped" : "did not pass");
    return true;
}

/* Adds a probe's outcome to its layer in the snapshot (takes the result's facts and findings). */
static void add_probe_json(cJSON *layer, const sc_probe *probe, sc_result *res, sc_status st,
                           double ms, const char *tail, bool offline_skip)
{
    cJSON *p = cJSON_CreateObject();
    if (!p)
        return;
    cJSON_AddStringToObject(p, "id", probe->id);
    cJSON_AddStringToObject(p, "backend", sc_backend_name(probe->backend));
    cJSON_AddStringToObject(p, "status", sc_status_name(st));
    if (res->reason[0])
        cJSON_AddStringToObject(p, "reason", res->reason);
    else
        cJSON_AddNullToObject(p, "reason");
    cJSON_AddNumberToObject(p, "duration_ms", (double)(long long)(ms * 1000.0) / 1000.0);
    cJSON_AddBoolToObject(p, "applicable", !res->not_applicable);
    if (offline_skip)
        cJSON_AddBoolToObject(p, "offline", true);
    cJSON_AddItemToObject(p, "facts", res->facts);
    cJSON_AddItemToObject(p, "findings", res->findings);
    res->facts = res->findings = NULL;
    if (tail && tail[0] && st != SC_STATUS_PASS && st != SC_STATUS_SKIP) {
        cJSON *t = cJSON_AddStringToObject(p, "output_tail", tail);
        sc_redact_json(t);
    }
    cJSON_AddItemToArray(cJSON_GetObjectItem(layer, "probes"), p);
}

/* A layer's status: the worst of its probes that ran; skip when none ran. */
static sc_status layer_status(const cJSON *layer)
{
    sc_status worst = SC_STATUS_SKIP;
    bool ran = false;
    const cJSON *p;
    cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes")) {
        sc_status st = sc_status_parse(cJSON_GetStringValue(cJSON_GetObjectItem(p, "status")));
        if (st == SC_STATUS_SKIP)
            continue;
        if (!ran || st > worst)
            worst = st;
        ran = true;
    }
    return worst;
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

static void run_probe(const sc_probe *probe, const sc_ctx *ctx, cJSON *layer)
{
    sc_result res;
    if (sc_result_init(&res) < 0)
        return;
    char why[512], tail[2048] = "";
    bool not_applicable = false;
    double ms = 0, start = sc_now_ms();
    sc_status st;
    bool blocked = sc_gate_blocks(probe, ctx, why, sizeof why, &not_applicable);
    bool offline_skip = blocked && ctx->offline && probe->active;
    if (blocked) {
        sc_result_skip(&res, not_applicable, "%s", why);
        if (!not_applicable)
            add_inventory(probe, ctx, &res);
        st = SC_STATUS_SKIP;
        ms = sc_now_ms() - start;
    } else {
        if (ctx->opt->verbosity > 0)
            fprintf(stderr, "stackcheck: running %s\n", probe->id);
        st = sc_run_one(probe, ctx, &res, &ms, tail, sizeof tail);
        if (st == SC_STATUS_CRASH || st == SC_STATUS_TIMEOUT || st == SC_STATUS_ERROR)
            add_inventory(probe, ctx, &res); /* what the child found before it died is lost */
    }
    add_probe_json(layer, probe, &res, st, ms, tail, offline_skip);
    sc_result_free(&res);
}

/* The first probe that failed, in layer order, with its first error finding. */
static cJSON *first_failure(const cJSON *layers)
{
    const cJSON *layer, *p, *f;
    cJSON_ArrayForEach (layer, layers) {
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes")) {
            sc_status st = sc_status_parse(cJSON_GetStringValue(cJSON_GetObjectItem(p, "status")));
            if (!sc_status_is_failure(st))
                continue;
            cJSON *ff = cJSON_CreateObject();
            cJSON_AddItemToObject(ff, "layer",
                                  cJSON_Duplicate(cJSON_GetObjectItem(layer, "name"), 1));
            cJSON_AddItemToObject(ff, "probe", cJSON_Duplicate(cJSON_GetObjectItem(p, "id"), 1));
            cJSON_AddItemToObject(ff, "status",
                                  cJSON_Duplicate(cJSON_GetObjectItem(p, "status"), 1));
            const cJSON *err = NULL;
            cJSON_ArrayForEach (f, cJSON_GetObjectItem(p, "findings")) {
                const char *sev = cJSON_GetStringValue(cJSON_GetObjectItem(f, "severity"));
                if (!err && sev && strcmp(sev, "error") == 0)
                    err = f;
            }
            const cJSON *reason = cJSON_GetObjectItem(p, "reason");
            cJSON_AddItemToObject(ff, "finding",
                                  err ? cJSON_Duplicate(cJSON_GetObjectItem(err, "id"), 1)
                                      : cJSON_CreateNull());
            cJSON_AddItemToObject(
                ff, "message",
                cJSON_Duplicate(err ? cJSON_GetObjectItem(err, "message") : reason, 1));
            cJSON_AddItemToObject(ff, "hint",
                                  err ? cJSON_Duplicate(cJSON_GetObjectItem(err, "hint"), 1)
                                      : cJSON_CreateNull());
            return ff;
        }
    }
    return cJSON_CreateNull();
}

static int add_summary(cJSON *snapshot, const cJSON *layers)
{
    sc_status worst = SC_STATUS_PASS;
    const cJSON *layer, *p;
    cJSON_ArrayForEach (layer, layers) {
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes")) {
            sc_status st = sc_status_parse(cJSON_GetStringValue(cJSON_GetObjectItem(p, "status")));
            if (st != SC_STATUS_SKIP && st > worst)
                worst = st;
        }
    }
    int exit_code = sc_status_is_failure(worst) ? 1 : 0;
    cJSON *summary = cJSON_CreateObject();
    cJSON_AddStringToObject(summary, "status",
                            exit_code ? "fail" : (worst == SC_STATUS_WARN ? "warn" : "pass"));
    cJSON_AddNumberToObject(summary, "exit_code", exit_code);
    cJSON_AddItemToObject(summary, "first_failure", first_failure(layers));
    cJSON_DeleteItemFromObject(snapshot, "summary");
    cJSON_AddItemToObject(snapshot, "summary", summary);
    return exit_code;
}

int sc_run_probes(const sc_probe *const *table, const sc_options *opt, const sc_root *root,
                  cJSON *snapshot)
{
    cJSON *layers = cJSON_AddArrayToObject(snapshot, "layers");
    if (!layers)
        return 1;
    sc_ctx ctx = {.opt = opt, .root = root, .offline = !root->is_host, .layers = layers};
    /* Nothing a probe starts can escape to init during the run, and nothing outlives it. */
    sc_reap_subreaper();
    for (int l = 0; l < SC_LAYER_COUNT; l++) {
        cJSON *layer = cJSON_CreateObject();
        cJSON_AddStringToObject(layer, "name", sc_layer_name((sc_layer)l));
        cJSON_AddStringToObject(layer, "status", "skip");
        cJSON_AddArrayToObject(layer, "probes");
        cJSON_AddItemToArray(layers, layer);
        for (const sc_probe *const *p = table; *p; p++)
            if ((*p)->layer == (sc_layer)l)
                run_probe(*p, &ctx, layer);
        cJSON_ReplaceItemInObject(layer, "status",
                                  cJSON_CreateString(sc_status_name(layer_status(layer))));
    }
    sc_reap_descendants();
    return add_summary(snapshot, layers);
}
