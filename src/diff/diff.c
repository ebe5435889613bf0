/* Snapshot comparison, the top level: input checks (schema version), probe statuses, findings added
 * and resolved, timings as ratios, and the verdict. Facts and numerics have their own files. Every
 * read checks the type it expects, so any JSON document can be compared without a crash. */
#include "sc_diff.h"
#include "sc_text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sc_snapshot.h"

#define WALK_DEPTH 3

void sc_diff_options_init(sc_diff_options *opt)
{
    opt->rtol = 1e-3;
    opt->atol = 1e-5;
}

int sc_diff_check_snapshot(const cJSON *json, const char *label, sc_error *err)
{
    if (!cJSON_IsObject(json))
        return sc_error_set(err, -EINVAL, "%s is not a stackcheck snapshot (not a JSON object)",
                            label);
    const char *schema = cJSON_GetStringValue(sc_diff_get(json, "schema"));
    if (!schema)
        return sc_error_set(err, -EINVAL, "%s is not a stackcheck snapshot (no \"schema\" field)",
                            label);
    if (strcmp(schema, SC_SNAPSHOT_SCHEMA) != 0)
        return sc_error_set(err, -EPROTONOSUPPORT,
                            "%s has schema \"%.100s\"; this stackcheck compares %s snapshots only "
                            "(use the stackcheck version that wrote it)",
                            label, schema, SC_SNAPSHOT_SCHEMA);
    if (!cJSON_IsArray(sc_diff_get(json, "layers")))
        return sc_error_set(err, -EINVAL, "%s is not a complete snapshot (no \"layers\" array)",
                            label);
    return 0;
}

const cJSON *sc_diff_get(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

const cJSON *sc_diff_path(const cJSON *obj, const char *path)
{
    char part[128];
    while (obj && *path) {
        size_t n = strcspn(path, "./");
        if (n >= sizeof part)
            return NULL;
        memcpy(part, path, n);
        part[n] = '\0';
        obj = sc_diff_get(obj, part);
        path += n + (path[n] != '\0');
    }
    return obj;
}

void sc_diff_each_probe(const cJSON *snapshot, void (*fn)(const cJSON *probe, void *arg), void *arg)
{
    const cJSON *layer, *probe;
    cJSON_ArrayForEach (layer, sc_diff_get(snapshot, "layers")) {
        const cJSON *probes = sc_diff_get(layer, "probes");
        if (!cJSON_IsArray(probes))
            continue;
        cJSON_ArrayForEach (probe, probes) {
            if (cJSON_GetStringValue(sc_diff_get(probe, "id")))
                fn(probe, arg);
        }
    }
}

void sc_diff_change(sc_diff_acc *acc, const char *area, const char *what, const cJSON *a,
                    const cJSON *b, bool matters)
{
    cJSON *c = cJSON_CreateObject();
    if (!c)
        return;
    cJSON_AddStringToObject(c, "area", area);
    cJSON_AddStringToObject(c, "what", what);
    cJSON_AddItemToObject(c, "a", a ? cJSON_Duplicate(a, true) : cJSON_CreateNull());
    cJSON_AddItemToObject(c, "b", b ? cJSON_Duplicate(b, true) : cJSON_CreateNull());
    cJSON_AddBoolToObject(c, "matters", matters);
    cJSON_AddItemToArray(acc->changes, c);
    acc->matters += matters;
}

/* Equal as JSON; two absent values are equal (cJSON_Compare says no). */
static bool same_json(const cJSON *a, const cJSON *b)
{
    if (!a || !b)
        return a == b;
    return cJSON_Compare(a, b, true);
}

typedef struct {
    sc_diff_acc *acc;
    sc_diff_side *mine, *other;
    bool a_side;
} status_job;

static void status_of_probe(const cJSON *probe, void *arg)
{
    status_job *job = arg;
    const char *id = cJSON_GetStringValue(sc_diff_get(probe, "id"));
    const cJSON *other = sc_diff_side_probe(job->other, id);
    const cJSON *mine = sc_diff_get(probe, "status");
    if ((other && !job->a_side) || !sc_diff_side_first(job->mine, probe))
        return; /* compared from the a side already, or a repeated id */
    const cJSON *theirs = other ? sc_diff_get(other, "status") : NULL;
    if (other && same_json(mine, theirs))
        return;
    char what[160];
    snprintf(what, sizeof what, "%.*s status", sc_utf8_prec(id, 100), id);
    sc_diff_change(job->acc, "status", what, job->a_side ? mine : theirs,
                   job->a_side ? theirs : mine, true);
}

static void diff_statuses(sc_diff_acc *acc)
{
    const cJSON *a = acc->a->snapshot, *b = acc->b->snapshot;
    status_job ja = {acc, acc->a, acc->b, true}, jb = {acc, acc->b, acc->a, false};
    sc_diff_each_probe(a, status_of_probe, &ja);
    sc_diff_each_probe(b, status_of_probe, &jb);
    const cJSON *sa = sc_diff_path(a, "summary.status"), *sb = sc_diff_path(b, "summary.status");
    if (!same_json(sa, sb))
        sc_diff_change(acc, "summary", "verdict", sa, sb, true);
}

typedef struct {
    cJSON *list;
    sc_diff_side *mine, *other;
} finding_job;

static void findings_missing_in_other(const cJSON *probe, void *arg)
{
    finding_job *job = arg;
    const char *pid = cJSON_GetStringValue(sc_diff_get(probe, "id"));
    const cJSON *findings = sc_diff_get(probe, "findings"), *f;
    if (!cJSON_IsArray(findings) || !sc_diff_side_first(job->mine, probe))
        return;
    cJSON_ArrayForEach (f, findings) {
        const char *id = cJSON_GetStringValue(sc_diff_get(f, "id"));
        if (!id || sc_diff_index_find(&job->other->findings, pid, id))
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "probe", pid);
        cJSON_AddStringToObject(o, "id", id);
        const char *sev = cJSON_GetStringValue(sc_diff_get(f, "severity"));
        const char *msg = cJSON_GetStringValue(sc_diff_get(f, "message"));
        cJSON_AddStringToObject(o, "severity", sev ? sev : "?");
        cJSON_AddStringToObject(o, "message", msg ? msg : "");
        cJSON_AddItemToArray(job->list, o);
    }
}

static cJSON *diff_findings(sc_diff_acc *acc)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *added = cJSON_AddArrayToObject(out, "added");
    cJSON *resolved = cJSON_AddArrayToObject(out, "resolved");
    finding_job jb = {added, acc->b, acc->a}, ja = {resolved, acc->a, acc->b};
    if (!added || !resolved)
        return out;
    sc_diff_each_probe(acc->b->snapshot, findings_missing_in_other, &jb);
    sc_diff_each_probe(acc->a->snapshot, findings_missing_in_other, &ja);
    acc->matters += cJSON_GetArraySize(added) + cJSON_GetArraySize(resolved);
    return out;
}

static void add_timing(cJSON *list, const char *probe, const char *what, double a_ms, double b_ms)
{
    if (!isfinite(a_ms) || !isfinite(b_ms) || a_ms < 0 || b_ms < 0)
        return;
    cJSON *t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "probe", probe);
    cJSON_AddStringToObject(t, "what", what);
    cJSON_AddNumberToObject(t, "a_ms", a_ms);
    cJSON_AddNumberToObject(t, "b_ms", b_ms);
    if (a_ms > 0)
        cJSON_AddNumberToObject(t, "ratio", b_ms / a_ms);
    else
        cJSON_AddNullToObject(t, "ratio");
    cJSON_AddItemToArray(list, t);
}

typedef struct {
    cJSON *list;
    sc_diff_side *a, *b;
    bool *oom;
} timing_job;

/* Every number under a key ending in "_ms" (objects only, a few levels deep) in both facts. */
static void walk_timings(timing_job *job, const char *probe, const cJSON *a, const cJSON *b,
                         const char *prefix, int depth)
{
    const cJSON *item;
    sc_diff_index in_a, in_b;
    sc_diff_index_init(&in_a, job->oom);
    sc_diff_index_init(&in_b, job->oom);
    sc_diff_index_members(&in_a, depth > WALK_DEPTH ? NULL : a);
    sc_diff_index_members(&in_b, depth > WALK_DEPTH ? NULL : b);
    cJSON_ArrayForEach (item, a) {
        if (!item->string || depth > WALK_DEPTH ||
            sc_diff_index_find(&in_a, item->string, NULL) != item)
            continue;
        const cJSON *other = sc_diff_index_find(&in_b, item->string, NULL);
        char path[256];
        snprintf(path, sizeof path, "%s%s%.*s", prefix, prefix[0] ? "." : "",
                 sc_utf8_prec(item->string, 100), item->string);
        if (cJSON_IsObject(item) && cJSON_IsObject(other))
            walk_timings(job, probe, item, other, path, depth + 1);
        else if (cJSON_IsNumber(item) && cJSON_IsNumber(other) && strlen(item->string) > 3 &&
                 strcmp(item->string + strlen(item->string) - 3, "_ms") == 0)
            add_timing(job->list, probe, path, item->valuedouble, other->valuedouble);
    }
    sc_diff_index_free(&in_a);
    sc_diff_index_free(&in_b);
}

/* The stages of an app probe's facts that have a duration, by name. */
static void index_timed_stages(sc_diff_index *ix, const cJSON *facts)
{
    const cJSON *st;
    cJSON_ArrayForEach (st, sc_diff_get(facts, "stages")) {
        if (cJSON_IsNumber(sc_diff_get(st, "duration_ms")))
            sc_diff_index_add(ix, cJSON_GetStringValue(sc_diff_get(st, "name")), NULL, st);
    }
}

/* The duration of each app stage present in both, by name: the first stage of each side with
 * that name and a duration. */
static void stage_timings(timing_job *job, const char *probe, const cJSON *fa, const cJSON *fb)
{
    const cJSON *sa, *sb;
    sc_diff_index timed_a, timed_b;
    sc_diff_index_init(&timed_a, job->oom);
    sc_diff_index_init(&timed_b, job->oom);
    index_timed_stages(&timed_a, fa);
    index_timed_stages(&timed_b, fb);
    cJSON_ArrayForEach (sa, sc_diff_get(fa, "stages")) {
        const char *name = cJSON_GetStringValue(sc_diff_get(sa, "name"));
        const cJSON *da = sc_diff_get(sa, "duration_ms");
        sb = sc_diff_index_find(&timed_a, name, NULL) == sa
                 ? sc_diff_index_find(&timed_b, name, NULL)
                 : NULL;
        if (!sb)
            continue;
        char what[200];
        snprintf(what, sizeof what, "stage %.*s", sc_utf8_prec(name, 150), name);
        add_timing(job->list, probe, what, da->valuedouble,
                   sc_diff_get(sb, "duration_ms")->valuedouble);
    }
    sc_diff_index_free(&timed_a);
    sc_diff_index_free(&timed_b);
}

static void timings_of_probe(const cJSON *pa, void *arg)
{
    timing_job *job = arg;
    const char *id = cJSON_GetStringValue(sc_diff_get(pa, "id"));
    const cJSON *pb = sc_diff_side_probe(job->b, id);
    const cJSON *da = sc_diff_get(pa, "duration_ms"), *db = sc_diff_get(pb, "duration_ms");
    if (!pb || !sc_diff_side_first(job->a, pa))
        return;
    if (cJSON_IsNumber(da) && cJSON_IsNumber(db) && da->valuedouble > 0 && db->valuedouble > 0)
        add_timing(job->list, id, "probe", da->valuedouble, db->valuedouble);
    const cJSON *fa = sc_diff_get(pa, "facts"), *fb = sc_diff_get(pb, "facts");
    if (cJSON_IsObject(fa) && cJSON_IsObject(fb)) {
        walk_timings(job, id, fa, fb, "", 0);
        stage_timings(job, id, fa, fb);
    }
}

static cJSON *side_json(const cJSON *snap)
{
    cJSON *o = cJSON_CreateObject();
    const cJSON *created = sc_diff_get(snap, "created");
    const cJSON *host = sc_diff_path(snap, "host.os.pretty_name");
    cJSON_AddItemToObject(
        o, "created", cJSON_IsString(created) ? cJSON_Duplicate(created, 0) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "os",
                          cJSON_IsString(host) ? cJSON_Duplicate(host, 0) : cJSON_CreateNull());
    return o;
}

/* The comparison proper, into diff; acc->oom says whether it is complete. */
static void compare(cJSON *diff, sc_diff_acc *acc, const sc_diff_options *opt)
{
    sc_diff_facts(acc);
    diff_statuses(acc);
    cJSON_AddItemToObject(diff, "findings", diff_findings(acc));
    cJSON *timings = cJSON_AddArrayToObject(diff, "timings");
    timing_job tj = {timings, acc->a, acc->b, &acc->oom};
    if (timings)
        sc_diff_each_probe(acc->a->snapshot, timings_of_probe, &tj);
    cJSON_AddItemToObject(diff, "numerics", sc_diff_numerics(acc, opt));
    cJSON_AddItemToObject(diff, "platforms", sc_diff_platforms(acc));
    cJSON_AddNumberToObject(diff, "changes_that_matter", acc->matters);
    cJSON_AddBoolToObject(diff, "differs", acc->matters > 0);
}

cJSON *sc_diff_snapshots(const cJSON *a, const cJSON *b, const sc_diff_options *opt)
{
    cJSON *diff = cJSON_CreateObject();
    if (!diff)
        return NULL;
    cJSON_AddStringToObject(diff, "schema", SC_DIFF_SCHEMA);
    cJSON_AddItemToObject(diff, "a", side_json(a));
    cJSON_AddItemToObject(diff, "b", side_json(b));
    sc_diff_side sa, sb;
    sc_diff_acc acc = {cJSON_AddArrayToObject(diff, "changes"), 0, &sa, &sb, false};
    sc_diff_side_init(&sa, a, &acc.oom);
    sc_diff_side_init(&sb, b, &acc.oom);
    if (acc.changes && !acc.oom)
        compare(diff, &acc, opt);
    sc_diff_side_free(&sa);
    sc_diff_side_free(&sb);
    if (!acc.changes || acc.oom) {
        cJSON_Delete(diff);
        return NULL;
    }
    return diff;
}
