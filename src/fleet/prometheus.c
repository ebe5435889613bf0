/* The run as node_exporter textfile-collector metrics (Prometheus text exposition format 0.0.4):
 * the verdict, each layer's and probe's status as a state set (1 for the status it had, 0 for the
 * others, so an alert sees a series that is there either way), the findings by id and severity,
 * the devices by backend and architecture, an info series naming the stack, and when the run
 * ended. Built from the snapshot after the one door out, written by the one output writer
 * (atomically: the collector never reads half a file). */
#include "sc_prometheus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sc_json.h"
#include "sc_output.h"
#include "sc_stack.h"
#include "sc_text.h"
#include "sc_version.h"

#define LABEL_MAX 256     /* bytes of one label value, cut on a character boundary */
#define FINDING_KINDS 256 /* distinct (id, severity) pairs counted; more are not a real run */

/* A label value as the exposition format wants it: backslash, double quote and newline escaped. */
static void put_label(FILE *out, const char *name, const char *value, bool first)
{
    const char *v = value ? value : "";
    size_t n = sc_utf8_prefix(v, strlen(v), LABEL_MAX);
    fprintf(out, "%s%s=\"", first ? "" : ",", name);
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\\' || v[i] == '"')
            fputc('\\', out);
        if (v[i] == '\n')
            fputs("\\n", out);
        else
            fputc(v[i], out);
    }
    fputc('"', out);
}

static void header(FILE *out, const char *name, const char *help)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* One series of a state set per status: 1 for the status it has, 0 for the others. */
static void status_set(FILE *out, const char *metric, const char *const labels[][2], int n,
                       const char *status)
{
    for (int s = SC_STATUS_PASS; s <= SC_STATUS_CRASH; s++) {
        fprintf(out, "%s{", metric);
        for (int i = 0; i < n; i++)
            put_label(out, labels[i][0], labels[i][1], i == 0);
        put_label(out, "status", sc_status_name((sc_status)s), n == 0);
        fprintf(out, "} %d\n", status && strcmp(status, sc_status_name((sc_status)s)) == 0);
    }
}

static void layers_and_probes(FILE *out, const cJSON *snapshot)
{
    const cJSON *layer, *p;
    header(out, "stackcheck_layer_status",
           "Status of each layer in the last run: 1 for the status it had, 0 for the others.");
    cJSON_ArrayForEach (layer, sc_json_member(snapshot, "layers")) {
        const char *labels[][2] = {{"layer", sc_json_str(layer, "name")}};
        status_set(out, "stackcheck_layer_status", labels, 1, sc_json_str(layer, "status"));
    }
    header(out, "stackcheck_probe_status",
           "Status of each probe in the last run: 1 for the status it had, 0 for the others.");
    cJSON_ArrayForEach (layer, sc_json_member(snapshot, "layers")) {
        cJSON_ArrayForEach (p, sc_json_member(layer, "probes")) {
            const char *labels[][2] = {{"probe", sc_json_str(p, "id")},
                                       {"layer", sc_json_str(layer, "name")},
                                       {"backend", sc_json_str(p, "backend")}};
            status_set(out, "stackcheck_probe_status", labels, 3, sc_json_str(p, "status"));
        }
    }
}

typedef struct {
    const char *id, *severity;
    int count;
} finding_kind;

/* Counts f into kinds (n of them so far); returns the new n. */
static int count_finding(finding_kind *kinds, int n, const cJSON *f)
{
    const char *id = sc_json_str(f, "id"), *sev = sc_json_str(f, "severity");
    if (!id || !sev)
        return n;
    for (int i = 0; i < n; i++)
        if (strcmp(kinds[i].id, id) == 0 && strcmp(kinds[i].severity, sev) == 0) {
            kinds[i].count++;
            return n;
        }
    if (n < FINDING_KINDS)
        kinds[n++] = (finding_kind){id, sev, 1};
    return n;
}

static void findings(FILE *out, const cJSON *snapshot)
{
    finding_kind kinds[FINDING_KINDS];
    int n = 0;
    const cJSON *layer, *p, *f;
    cJSON_ArrayForEach (layer, sc_json_member(snapshot, "layers"))
        cJSON_ArrayForEach (p, sc_json_member(layer, "probes"))
            cJSON_ArrayForEach (f, sc_json_member(p, "findings"))
                n = count_finding(kinds, n, f);
    header(out, "stackcheck_findings",
           "Findings of the last run by id and severity: how many (stackcheck explain ID).");
    for (int i = 0; i < n; i++) {
        fputs("stackcheck_findings{", out);
        put_label(out, "id", kinds[i].id, true);
        put_label(out, "severity", kinds[i].severity, false);
        fprintf(out, "} %d\n", kinds[i].count);
    }
}

static bool same_kind(const cJSON *a, const cJSON *b)
{
    const char *ba = sc_json_str(a, "backend"), *bb = sc_json_str(b, "backend");
    const char *aa = sc_json_str(a, "arch"), *ab = sc_json_str(b, "arch");
    return strcmp(ba ? ba : "", bb ? bb : "") == 0 && strcmp(aa ? aa : "", ab ? ab : "") == 0;
}

/* Devices by (backend, arch), from the platform's devices role (one entry per kind and size, so
 * the entries of one architecture are summed; the role holds at most a few dozen). */
static void devices(FILE *out, const cJSON *platform)
{
    const cJSON *list = sc_json_member(platform, "devices"), *d, *e;
    header(out, "stackcheck_devices", "Accelerator devices by backend and architecture.");
    cJSON_ArrayForEach (d, list) {
        bool earlier = false;
        double count = 0;
        for (e = list->child; e != d && !earlier; e = e->next)
            earlier = same_kind(e, d);
        for (e = d; e && !earlier; e = e->next)
            count += same_kind(e, d) ? cJSON_GetNumberValue(sc_json_member(e, "count")) : 0;
        if (earlier)
            continue;
        fputs("stackcheck_devices{", out);
        put_label(out, "backend", sc_json_str(d, "backend"), true);
        put_label(out, "arch", sc_json_str(d, "arch") ? sc_json_str(d, "arch") : "unknown", false);
        fprintf(out, "} %.0f\n", count);
    }
}

/* One label of the info series: a role's texts joined ("" when it has none). */
static void info_label(FILE *out, const char *name, const cJSON *texts)
{
    char joined[LABEL_MAX + 1] = "";
    size_t n = 0;
    const cJSON *t;
    cJSON_ArrayForEach (t, texts) {
        const char *s = cJSON_GetStringValue(t);
        if (s && n < sizeof joined - 1)
            n += (size_t)snprintf(joined + n, sizeof joined - n, "%s%s", n ? ", " : "", s);
    }
    put_label(out, name, joined, false);
}

static void info(FILE *out, const cJSON *snapshot, const cJSON *stack, const cJSON *platform)
{
    const cJSON *host = sc_json_member(snapshot, "host"), *b;
    char backends[128] = "";
    cJSON_ArrayForEach (b, sc_json_member(platform, "backends")) {
        size_t n = strlen(backends);
        snprintf(backends + n, sizeof backends - n, "%s%s", n ? "," : "",
                 sc_json_str(b, "name") ? sc_json_str(b, "name") : "unknown");
    }
    header(out, "stackcheck_info",
           "The stack this node runs, as labels (value 1): backend, driver, firmware, runtime, "
           "toolkit, collective library, torch, kernel, stackcheck's version.");
    fputs("stackcheck_info{", out);
    put_label(out, "backend", backends, true);
    for (const char *const *r = sc_stack_roles; *r; r++)
        if (strcmp(*r, "devices") != 0 && strcmp(*r, "libraries") != 0)
            info_label(out, *r, sc_json_member(stack, *r));
    put_label(out, "kernel", sc_json_str(host, "kernel"), false);
    put_label(out, "stackcheck_version", SC_VERSION, false);
    fputs("} 1\n", out);
}

static void verdict(FILE *out, const cJSON *snapshot)
{
    static const char *const verdicts[] = {"pass", "warn", "fail"};
    const char *status = sc_json_str(sc_json_member(snapshot, "summary"), "status");
    header(out, "stackcheck_verdict",
           "The last run's verdict: 1 for the one it had (pass, warn, fail), 0 for the others.");
    for (size_t i = 0; i < sizeof verdicts / sizeof verdicts[0]; i++)
        fprintf(out, "stackcheck_verdict{status=\"%s\"} %d\n", verdicts[i],
                status && strcmp(status, verdicts[i]) == 0);
    header(out, "stackcheck_last_run_timestamp_seconds", "When the last run ended, in Unix time.");
    fprintf(out, "stackcheck_last_run_timestamp_seconds %lld\n", (long long)time(NULL));
}

int sc_prometheus_write(const cJSON *snapshot, const char *path, sc_error *err)
{
    cJSON *platform = NULL, *stack = sc_stack_of(snapshot, &platform);
    char *text = NULL;
    size_t len = 0;
    FILE *out = stack ? open_memstream(&text, &len) : NULL;
    if (!out) {
        cJSON_Delete(stack);
        cJSON_Delete(platform);
        return sc_error_set(err, -ENOMEM, "cannot build the metrics: out of memory");
    }
    verdict(out, snapshot);
    layers_and_probes(out, snapshot);
    findings(out, snapshot);
    devices(out, platform);
    info(out, snapshot, stack, platform);
    int rc = fclose(out) == 0 ? sc_output_write(path, text, len, err)
                              : sc_error_set(err, -ENOMEM, "cannot build the metrics");
    free(text);
    cJSON_Delete(stack);
    cJSON_Delete(platform);
    return rc;
}
