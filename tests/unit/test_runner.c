/* The runner and isolation with probes made for the test: a probe that segfaults, one that hangs,
 * one that aborts, one that floods its output, one that sends no result; gating by layer and
 * backend; offline skips; the snapshot and JUnit still written; the exit code. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sc_isolate.h"
#include "sc_report.h"
#include "sc_runner.h"
#include "sc_snapshot.h"
#include "sc_util.h"

static void run_pass(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    cJSON_AddStringToObject(res->facts, "hello", "world");
}

static void run_fail(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    sc_finding(res, "test.broken", SC_SEV_ERROR, "fix it", "it is broken: %d", 42);
}

static void run_warn(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    sc_finding(res, "test.odd", SC_SEV_WARN, NULL, "odd");
}

static void run_absent(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    sc_result_skip(res, true, "no such hardware");
}

static void run_segv(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    (void)res;
    fputs("about to crash\n", stderr);
    raise(SIGSEGV);
}

static void run_hang(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    (void)res;
    if (fork() == 0) /* a grandchild in the same group must die with it */
        for (;;)
            pause();
    for (;;)
        pause();
}

static void run_flood(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    char block[4096];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 2048; i++) /* 8 MiB without a newline */
        fwrite(block, 1, sizeof block, stdout);
    fputs("THE-END", stdout);
    cJSON_AddBoolToObject(res->facts, "flooded", true);
}

static void run_reads_below(const sc_ctx *ctx, sc_result *res)
{
    const cJSON *facts = sc_ctx_facts(ctx, "driver.pass");
    cJSON_AddStringToObject(res->facts, "seen",
                            cJSON_GetStringValue(cJSON_GetObjectItem(facts, "hello")) ?: "nothing");
}

static const sc_probe p_driver_pass = {
    .id = "driver.pass", .layer = SC_LAYER_DRIVER, .backend = SC_BACKEND_AMD, .run = run_pass};
static const sc_probe p_driver_fail = {
    .id = "driver.fail", .layer = SC_LAYER_DRIVER, .backend = SC_BACKEND_NVIDIA, .run = run_fail};
static const sc_probe p_driver_absent = {.id = "driver.absent",
                                         .layer = SC_LAYER_DRIVER,
                                         .backend = SC_BACKEND_ASCEND,
                                         .run = run_absent};
static const sc_probe p_rt_amd = {.id = "runtime.amd",
                                  .layer = SC_LAYER_RUNTIME,
                                  .backend = SC_BACKEND_AMD,
                                  .isolated = true,
                                  .active = true,
                                  .timeout_s = 5,
                                  .run = run_reads_below};
static const sc_probe p_rt_nv = {
    .id = "runtime.nv", .layer = SC_LAYER_RUNTIME, .backend = SC_BACKEND_NVIDIA, .run = run_pass};
static const sc_probe p_rt_ascend = {.id = "runtime.ascend",
                                     .layer = SC_LAYER_RUNTIME,
                                     .backend = SC_BACKEND_ASCEND,
                                     .run = run_pass};
static const sc_probe p_fw_any = {.id = "framework.any",
                                  .layer = SC_LAYER_FRAMEWORK,
                                  .backend = SC_BACKEND_NONE,
                                  .run = run_pass};
static const sc_probe p_segv = {.id = "runtime.segv",
                                .layer = SC_LAYER_RUNTIME,
                                .isolated = true,
                                .timeout_s = 5,
                                .run = run_segv};
static const sc_probe p_hang = {.id = "runtime.hang",
                                .layer = SC_LAYER_RUNTIME,
                                .isolated = true,
                                .timeout_s = 1,
                                .run = run_hang};
static const sc_probe p_flood = {
    .id = "app.flood", .layer = SC_LAYER_APP, .isolated = true, .timeout_s = 20, .run = run_flood};
static void inventory_note(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    cJSON_AddStringToObject(res->facts, "installed", "1.2.3");
    sc_finding(res, "test.odd", SC_SEV_WARN, NULL, "two installs");
    res->status = SC_STATUS_PASS; /* the runner keeps its own status */
}

static const sc_probe p_inv_gated = {.id = "runtime.inv",
                                     .layer = SC_LAYER_RUNTIME,
                                     .backend = SC_BACKEND_NVIDIA,
                                     .isolated = true,
                                     .active = true,
                                     .timeout_s = 5,
                                     .run = run_pass,
                                     .inventory = inventory_note};
static const sc_probe p_inv_crash = {.id = "framework.inv",
                                     .layer = SC_LAYER_FRAMEWORK,
                                     .isolated = true,
                                     .timeout_s = 5,
                                     .run = run_segv,
                                     .inventory = inventory_note};
static const sc_probe p_warn = {.id = "driver.warn", .layer = SC_LAYER_DRIVER, .run = run_warn};
/* backend-neutral driver probes, as driver.devices is: one that saw nothing, one that saw some */
static const sc_probe p_census_fail = {
    .id = "driver.census", .layer = SC_LAYER_DRIVER, .backend = SC_BACKEND_NONE, .run = run_fail};
static const sc_probe p_census_pass = {
    .id = "driver.census", .layer = SC_LAYER_DRIVER, .backend = SC_BACKEND_NONE, .run = run_pass};

static cJSON *probe_json(cJSON *snap, const char *id)
{
    cJSON *layer, *p;
    cJSON_ArrayForEach (layer, cJSON_GetObjectItem(snap, "layers")) {
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes")) {
            if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(p, "id")), id) == 0)
                return p;
        }
    }
    fail_msg("probe %s not in snapshot", id);
    return NULL;
}

static const char *field(cJSON *p, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(p, key));
}

/* Runs table through the runner into rs (the caller frees it) and writes its snapshot part. */
static int run_state(const sc_probe *const *table, bool keep_going, bool offline, cJSON **snap,
                     sc_run_state *rs)
{
    sc_options opt;
    sc_options_init(&opt);
    opt.keep_going = keep_going;
    sc_root root = {.dirfd = -1, .is_host = !offline};
    snprintf(root.path, sizeof root.path, "%s", offline ? "/nonexistent-root" : "/");
    int rc = sc_run_probes(table, &opt, &root, NULL, rs);
    *snap = cJSON_CreateObject();
    sc_snapshot_add_run(*snap, rs);
    return rc;
}

static int run_table(const sc_probe *const *table, bool keep_going, bool offline, cJSON **snap)
{
    sc_run_state rs;
    int rc = run_state(table, keep_going, offline, snap, &rs);
    sc_run_state_free(&rs);
    return rc;
}

static void test_gating_by_backend(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_driver_pass, &p_driver_fail, &p_driver_absent, &p_rt_amd,
                               &p_rt_nv,       &p_rt_ascend,   &p_fw_any,        NULL};
    cJSON *snap;
    assert_int_equal(run_table(table, false, false, &snap), 1);
    cJSON *amd = probe_json(snap, "runtime.amd");
    assert_string_equal(field(amd, "status"), "pass");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(amd, "facts"), "seen")),
        "world"); /* an isolated child sees the facts of the layers below */
    cJSON *nv = probe_json(snap, "runtime.nv");
    assert_string_equal(field(nv, "status"), "skip");
    assert_string_equal(field(nv, "reason"), "driver.fail did not pass");
    cJSON *asc = probe_json(snap, "runtime.ascend");
    assert_string_equal(field(asc, "status"), "skip");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(asc, "applicable")));
    cJSON *fw = probe_json(snap, "framework.any");
    assert_string_equal(field(fw, "status"), "skip"); /* backend-neutral: waits on every probe */
    assert_string_equal(field(fw, "reason"), "driver.fail did not pass");
    cJSON *ff = cJSON_GetObjectItem(cJSON_GetObjectItem(snap, "summary"), "first_failure");
    assert_string_equal(field(ff, "layer"), "driver");
    assert_string_equal(field(ff, "probe"), "driver.fail");
    assert_string_equal(field(ff, "finding"), "test.broken");
    assert_string_equal(field(ff, "hint"), "fix it");
    cJSON_Delete(snap);
}

static void test_keep_going_and_warn(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_driver_fail, &p_warn, &p_rt_nv, &p_fw_any, NULL};
    cJSON *snap;
    assert_int_equal(run_table(table, true, false, &snap), 1);
    assert_string_equal(field(probe_json(snap, "runtime.nv"), "status"), "pass");
    assert_string_equal(field(probe_json(snap, "framework.any"), "status"), "pass");
    cJSON_Delete(snap);
    const sc_probe *warn_only[] = {&p_warn, &p_fw_any, NULL};
    assert_int_equal(run_table(warn_only, false, false, &snap), 0);
    assert_string_equal(field(cJSON_GetObjectItem(snap, "summary"), "status"), "warn");
    assert_string_equal(field(probe_json(snap, "framework.any"), "status"), "pass");
    cJSON_Delete(snap);
}

/* A backend whose own probes below are all absent does not apply, even when a backend-neutral probe
 * below failed; with --keep-going after such a failure nothing is known absent and it runs. */
static void test_gating_absent_backend_beside_neutral(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_census_fail, &p_driver_absent, &p_rt_ascend, &p_fw_any, NULL};
    cJSON *snap;
    assert_int_equal(run_table(table, false, false, &snap), 1);
    cJSON *asc = probe_json(snap, "runtime.ascend");
    assert_string_equal(field(asc, "status"), "skip");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(asc, "applicable")));
    assert_string_equal(field(asc, "reason"), "no ascend device: the layers below do not apply");
    cJSON *fw = probe_json(snap, "framework.any");
    assert_string_equal(field(fw, "reason"), "driver.census did not pass");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(fw, "applicable")));
    cJSON_Delete(snap);
    assert_int_equal(run_table(table, true, false, &snap), 1);
    assert_string_equal(field(probe_json(snap, "runtime.ascend"), "status"), "pass");
    assert_string_equal(field(probe_json(snap, "framework.any"), "status"), "pass");
    cJSON_Delete(snap);
    /* the neutral probe passed: the absent backend stays not applicable with --keep-going too */
    const sc_probe *some[] = {&p_census_pass, &p_driver_absent, &p_rt_ascend, &p_fw_any, NULL};
    assert_int_equal(run_table(some, true, false, &snap), 0);
    asc = probe_json(snap, "runtime.ascend");
    assert_string_equal(field(asc, "status"), "skip");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(asc, "applicable")));
    assert_string_equal(field(probe_json(snap, "framework.any"), "status"), "pass");
    cJSON_Delete(snap);
}

static void test_offline_skips_active(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_driver_pass, &p_rt_amd, &p_fw_any, NULL};
    cJSON *snap;
    assert_int_equal(run_table(table, false, true, &snap), 0);
    cJSON *rt = probe_json(snap, "runtime.amd");
    assert_string_equal(field(rt, "status"), "skip");
    assert_string_equal(field(rt, "reason"), "offline (--sysroot)");
    /* an offline skip does not block the passive probes above */
    assert_string_equal(field(probe_json(snap, "framework.any"), "status"), "pass");
    cJSON_Delete(snap);
}

static void test_crash_and_timeout(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_segv, &p_hang, &p_fw_any, NULL};
    cJSON *snap;
    sc_run_state rs;
    double start = sc_now_ms();
    assert_int_equal(run_state(table, true, false, &snap, &rs), 1);
    double elapsed = sc_now_ms() - start;
    assert_true(elapsed < 1000.0 + 1000.0); /* the 1 s deadline plus a second */
    cJSON *segv = probe_json(snap, "runtime.segv");
    assert_string_equal(field(segv, "status"), "crash");
    assert_non_null(strstr(field(segv, "reason"), "SIGSEGV"));
    assert_non_null(strstr(field(segv, "output_tail"), "about to crash"));
    cJSON *hang = probe_json(snap, "runtime.hang");
    assert_string_equal(field(hang, "status"), "timeout");
    assert_string_equal(field(probe_json(snap, "framework.any"), "status"), "pass");
    cJSON *ff = cJSON_GetObjectItem(cJSON_GetObjectItem(snap, "summary"), "first_failure");
    assert_string_equal(field(ff, "probe"), "runtime.segv");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(ff, "finding")));
    /* the snapshot and JUnit are still written */
    char dir[] = "/tmp/sc-runner-XXXXXX", path[256], xml[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/s.json", dir);
    snprintf(xml, sizeof xml, "%s/j.xml", dir);
    sc_error err;
    assert_int_equal(sc_snapshot_write(snap, path, &err), 0);
    assert_int_equal(sc_junit_write(&rs, xml, &err), 0);
    cJSON *back = sc_json_read_file(path, 1 << 20, &err);
    assert_non_null(back);
    assert_string_equal(field(probe_json(back, "runtime.hang"), "status"), "timeout");
    char *text;
    FILE *f = fopen(xml, "r");
    assert_non_null(f);
    text = calloc(1, 65536);
    fread(text, 1, 65535, f);
    fclose(f);
    assert_non_null(strstr(text, "<testcase classname=\"runtime\" name=\"runtime.segv\""));
    assert_non_null(strstr(text, "<failure message=\"crash: probe crashed: killed by SIGSEGV\">"));
    assert_non_null(strstr(text, "<error message=\"timeout"));
    free(text);
    cJSON_Delete(back);
    unlink(path);
    unlink(xml);
    rmdir(dir);
    cJSON_Delete(snap);
    sc_run_state_free(&rs);
}

static void test_flooding_output_is_bounded(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_flood, NULL};
    cJSON *snap;
    assert_int_equal(run_table(table, true, false, &snap), 0);
    cJSON *p = probe_json(snap, "app.flood");
    assert_string_equal(field(p, "status"), "pass");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "facts"), "flooded")));
    cJSON_Delete(snap);
}

static void test_inventory_always_collected(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_driver_fail, &p_inv_gated, &p_inv_crash, NULL};
    cJSON *snap;
    run_table(table, false, false, &snap);
    cJSON *gated = probe_json(snap, "runtime.inv");
    assert_string_equal(field(gated, "status"), "skip");
    assert_string_equal(field(gated, "reason"), "driver.fail did not pass");
    assert_string_equal(field(cJSON_GetObjectItem(gated, "facts"), "installed"), "1.2.3");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(gated, "findings")), 1);
    cJSON_Delete(snap);
    run_table(table, true, false, &snap);
    cJSON *crashed = probe_json(snap, "framework.inv");
    assert_string_equal(field(crashed, "status"), "crash"); /* not the inventory's pass */
    assert_string_equal(field(cJSON_GetObjectItem(crashed, "facts"), "installed"), "1.2.3");
    cJSON_Delete(snap);
    run_table(table, false, true, &snap);
    cJSON *offline = probe_json(snap, "runtime.inv");
    assert_string_equal(field(offline, "reason"), "offline (--sysroot)");
    assert_string_equal(field(cJSON_GetObjectItem(offline, "facts"), "installed"), "1.2.3");
    cJSON_Delete(snap);
}

/* Reads the run so far through the typed accessors into its facts. */
static void run_reader(const sc_ctx *ctx, sc_result *res)
{
    const sc_outcome *below = sc_ctx_outcome(ctx, "driver.fail");
    cJSON_AddStringToObject(res->facts, "below", below ? sc_status_name(below->status) : "none");
    cJSON_AddBoolToObject(res->facts, "later_seen", sc_ctx_outcome(ctx, "app.flood") != NULL);
    cJSON_AddBoolToObject(res->facts, "self_seen", sc_ctx_outcome(ctx, "framework.reader") != NULL);
    cJSON_AddBoolToObject(res->facts, "unknown_seen", sc_ctx_outcome(ctx, "no.such") != NULL);
    cJSON_AddBoolToObject(res->facts, "fail_status",
                          sc_ctx_status(ctx, "driver.fail") == SC_STATUS_FAIL);
    sc_finding_view v;
    const cJSON *f = sc_ctx_finding(ctx, "test.broken");
    cJSON_AddStringToObject(res->facts, "finding",
                            f && sc_finding_read(f, &v) ? v.message : "none");
}

static const sc_probe p_reader = {
    .id = "framework.reader", .layer = SC_LAYER_FRAMEWORK, .run = run_reader};

static void test_ctx_reads_final_outcomes(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_driver_fail, &p_reader, &p_flood, NULL};
    cJSON *snap;
    run_table(table, true, false, &snap);
    const cJSON *facts = cJSON_GetObjectItem(probe_json(snap, "framework.reader"), "facts");
    assert_string_equal(field((cJSON *)facts, "below"), "fail");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(facts, "later_seen"))); /* not final yet */
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(facts, "self_seen")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(facts, "unknown_seen")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(facts, "fail_status")));
    assert_string_equal(field((cJSON *)facts, "finding"), "it is broken: 42");
    cJSON_Delete(snap);
}

/* What an observer heard, one line per event. */
static char heard[1024];

static void heard_start(const sc_run_state *rs, size_t i, void *arg)
{
    const sc_outcome *o = &rs->outcomes[i];
    assert_int_equal(o->phase, SC_OUTCOME_RUNNING);
    sc_fmt(heard + strlen(heard), sizeof heard - strlen(heard), "%s start %s\n", (char *)arg,
           o->probe->id);
}

static void heard_final(const sc_run_state *rs, size_t i, void *arg)
{
    const sc_outcome *o = &rs->outcomes[i];
    assert_int_equal(o->phase, SC_OUTCOME_FINAL);
    sc_fmt(heard + strlen(heard), sizeof heard - strlen(heard), "%s final %s %s\n", (char *)arg,
           o->probe->id, sc_status_name(o->status));
}

static void test_observer_hears_each_outcome(void **state)
{
    (void)state;
    /* listed out of layer order: the run goes layer by layer all the same */
    const sc_probe *table[] = {&p_fw_any,      &p_rt_nv,       &p_rt_amd,
                               &p_driver_fail, &p_driver_pass, NULL};
    sc_options opt;
    sc_options_init(&opt);
    sc_root root = {.dirfd = -1, .is_host = true};
    sc_run_observer obs = {.started = heard_start, .final = heard_final, .arg = "obs"};
    sc_run_state rs;
    heard[0] = '\0';
    assert_int_equal(sc_run_probes(table, &opt, &root, &obs, &rs), 1);
    assert_string_equal(heard, "obs start driver.fail\n"
                               "obs final driver.fail fail\n"
                               "obs start driver.pass\n"
                               "obs final driver.pass pass\n"
                               "obs final runtime.nv skip\n" /* gated: never started */
                               "obs start runtime.amd\n"
                               "obs final runtime.amd pass\n"
                               "obs final framework.any skip\n");
    assert_int_equal(rs.layer_status[SC_LAYER_DRIVER], SC_STATUS_FAIL);
    assert_int_equal(rs.layer_status[SC_LAYER_RUNTIME], SC_STATUS_PASS);
    assert_int_equal(rs.layer_status[SC_LAYER_FRAMEWORK], SC_STATUS_SKIP);
    assert_int_equal(rs.summary.status, SC_STATUS_FAIL);
    assert_string_equal(rs.summary.first_failure->probe->id, "driver.fail");
    sc_run_state_free(&rs);
}

/* Fills rs's outcomes in the given order of table indices, as a runner that finishes probes out of
 * order would, and returns the snapshot part, the report and the JUnit file as one text. */
static char *outputs_after_filling(const sc_probe *const *table, const size_t *fill, size_t n)
{
    sc_run_state rs;
    assert_int_equal(sc_run_state_init(&rs, table), 0);
    for (size_t k = 0; k < n; k++) {
        sc_result res;
        assert_int_equal(sc_result_init(&res), 0);
        const sc_probe *p = table[fill[k]];
        cJSON_AddStringToObject(res.facts, "id", p->id);
        if (p->layer == SC_LAYER_RUNTIME)
            sc_finding(&res, "test.broken", SC_SEV_ERROR, "fix it", "%s is broken", p->id);
        sc_outcome_finish(&rs.outcomes[fill[k]], &res, sc_result_status(&res), 1.5, "tail", false);
        sc_result_free(&res);
    }
    sc_run_state_finish(&rs);
    cJSON *snap = cJSON_CreateObject();
    sc_snapshot_add_run(snap, &rs);
    char *json = cJSON_Print(snap), *text = NULL, xml[] = "/tmp/sc-order-XXXXXX";
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    fprintf(out, "%s\n", json);
    sc_report_print(out, snap, &rs, false, 1);
    int fd = mkstemp(xml);
    assert_true(fd >= 0);
    close(fd);
    sc_error err;
    assert_int_equal(sc_junit_write(&rs, xml, &err), 0);
    char *junit = NULL;
    int jfd = open(xml, O_RDONLY);
    assert_true(sc_read_fd(jfd, 0, 1 << 20, &junit) > 0);
    close(jfd);
    fputs(junit, out);
    fclose(out);
    unlink(xml);
    free(junit);
    free(json);
    cJSON_Delete(snap);
    sc_run_state_free(&rs);
    return text;
}

static void test_outcomes_independent_of_fill_order(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_fw_any, &p_rt_nv, &p_driver_pass, &p_rt_ascend, &p_warn, NULL};
    const size_t forward[] = {2, 4, 1, 3, 0}, backward[] = {0, 3, 1, 4, 2};
    char *a = outputs_after_filling(table, forward, 5);
    char *b = outputs_after_filling(table, backward, 5);
    assert_string_equal(a, b);
    /* layer order, table order within a layer, whatever the table or the filling order */
    char *drv = strstr(a, "\"driver.pass\""), *warn = strstr(a, "\"driver.warn\"");
    char *nv = strstr(a, "\"runtime.nv\""), *asc = strstr(a, "\"runtime.ascend\"");
    char *fw = strstr(a, "\"framework.any\"");
    assert_true(drv && warn && nv && asc && fw);
    assert_true(drv < warn && warn < nv && nv < asc && asc < fw);
    assert_non_null(strstr(a, "the runtime layer fails first (runtime.nv, fail)"));
    free(a);
    free(b);
}

static cJSON *child_no_result(void *arg)
{
    (void)arg;
    return NULL;
}

static cJSON *child_abort(void *arg)
{
    (void)arg;
    abort();
}

static cJSON *child_exit(void *arg)
{
    (void)arg;
    _exit(7);
}

static void test_isolate_outcomes(void **state)
{
    (void)state;
    sc_isolate_report rep;
    assert_int_equal(sc_isolate_run(child_no_result, NULL, 5, &rep), 0);
    assert_int_equal(rep.outcome, SC_ISOLATE_ERROR);
    assert_non_null(strstr(rep.detail, "no result"));
    assert_int_equal(sc_isolate_run(child_abort, NULL, 5, &rep), 0);
    assert_int_equal(rep.outcome, SC_ISOLATE_CRASH);
    assert_int_equal(rep.signal, SIGABRT);
    assert_non_null(strstr(rep.detail, "SIGABRT"));
    assert_int_equal(sc_isolate_run(child_exit, NULL, 5, &rep), 0);
    assert_int_equal(rep.outcome, SC_ISOLATE_ERROR);
    assert_int_equal(rep.exit_code, 7);
    char name[32];
    assert_string_equal(sc_signal_name(SIGKILL, name, sizeof name), "SIGKILL");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gating_by_backend),
        cmocka_unit_test(test_keep_going_and_warn),
        cmocka_unit_test(test_gating_absent_backend_beside_neutral),
        cmocka_unit_test(test_offline_skips_active),
        cmocka_unit_test(test_crash_and_timeout),
        cmocka_unit_test(test_flooding_output_is_bounded),
        cmocka_unit_test(test_isolate_outcomes),
        cmocka_unit_test(test_inventory_always_collected),
        cmocka_unit_test(test_ctx_reads_final_outcomes),
        cmocka_unit_test(test_observer_hears_each_outcome),
        cmocka_unit_test(test_outcomes_independent_of_fill_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
