/* The app layer's machinery: the stage-marker parser (markers split across reads, malformed and
 * over-long lines, floods without newlines, too many stages), the bounded tails, output made valid
 * UTF-8, start-up vs steady state, memory growth, and running a command with a deadline that kills
 * what it leaves behind. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sc_app.h"
#include "sc_app_script.h"
#include "sc_isolate.h"
#include "sc_util.h"

static sc_app_parse *new_parse(void)
{
    sc_app_parse *p = malloc(sizeof *p);
    assert_non_null(p);
    sc_app_parse_init(p, 0);
    return p;
}

static void feed(sc_app_parse *p, const char *text, double t)
{
    sc_app_parse_feed(p, SC_APP_STDOUT, text, strlen(text), t);
}

static const char *slice(const sc_app_parse *p, int i, char *buf)
{
    size_t n = sc_tail_copy(&p->stages[i].slice, buf);
    buf[n] = '\0';
    return buf;
}

static void test_stages_and_metrics(void **state)
{
    (void)state;
    sc_app_parse *p = new_parse();
    char buf[SC_APP_SLICE_MAX + 1];
    feed(p, "::stackcheck stage load weights\nreading\n", 10);
    feed(p, "::stackcheck metric tokens_per_s 12.5\n", 20);
    sc_app_parse_feed(p, SC_APP_STDERR, "warn\n", 5, 25);
    feed(p, "::stackcheck stage  forward \r\nout\n", 30);
    sc_app_parse_finish(p, 45);
    assert_int_equal(p->stage_count, 3);
    assert_false(sc_app_stage_reported(p, 0)); /* nothing before the first marker */
    assert_string_equal(p->stages[1].name, "load weights");
    assert_string_equal(slice(p, 1, buf), "reading\nwarn\n");
    assert_string_equal(p->stages[2].name, "forward");
    assert_string_equal(slice(p, 2, buf), "out\n");
    assert_true(p->stages[1].end_ms - p->stages[1].start_ms == 20);
    assert_true(p->stages[2].end_ms - p->stages[2].start_ms == 15);
    assert_int_equal(p->metric_count, 1);
    assert_string_equal(p->metrics[0].name, "tokens_per_s");
    assert_true(p->metrics[0].value == 12.5);
    assert_int_equal(p->metrics[0].stage, 1);
    cJSON *stages = sc_app_stages_json(p, false);
    assert_int_equal(cJSON_GetArraySize(stages), 2);
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(stages, 0), "status")), "pass");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(stages, 1), "status")), "fail");
    assert_string_equal(sc_app_failed_stage(p), "forward");
    cJSON_Delete(stages);
    free(p);
}

/* The same input fed whole and one byte at a time gives the same stages. */
static void test_markers_split_across_reads(void **state)
{
    (void)state;
    const char *text = "pre\n::stackcheck stage a\nx\n::stack\n::stackcheck stage b\ny";
    sc_app_parse *whole = new_parse(), *bytes = new_parse();
    char b1[SC_APP_SLICE_MAX + 1], b2[SC_APP_SLICE_MAX + 1];
    feed(whole, text, 1);
    for (size_t i = 0; text[i]; i++)
        sc_app_parse_feed(bytes, SC_APP_STDOUT, text + i, 1, 1);
    sc_app_parse_finish(whole, 2);
    sc_app_parse_finish(bytes, 2);
    assert_int_equal(whole->stage_count, 3);
    assert_int_equal(bytes->stage_count, 3);
    for (int i = 0; i < 3; i++) {
        assert_string_equal(whole->stages[i].name, bytes->stages[i].name);
        assert_string_equal(slice(whole, i, b1), slice(bytes, i, b2));
    }
    assert_string_equal(slice(whole, 0, b1), "pre\n");
    assert_string_equal(slice(whole, 1, b1), "x\n::stack\n");
    assert_string_equal(slice(whole, 2, b1), "y");
    assert_true(sc_app_stage_reported(whole, 0)); /* it holds output */
    free(whole);
    free(bytes);
}

static void test_malformed_and_long_lines(void **state)
{
    (void)state;
    sc_app_parse *p = new_parse();
    char buf[SC_APP_SLICE_MAX + 1];
    feed(p, "::stackcheck stage\n::stackcheck bogus x\n::stackcheck metric m abc\n", 1);
    feed(p, "::stackcheck metric m nan\n::stackcheck metric m 1 2\n", 1);
    assert_int_equal(p->stage_count, 1);
    assert_int_equal(p->metric_count, 0);
    assert_int_equal(p->malformed, 5);
    /* a line that starts like a marker but is longer than a marker line may be is output */
    char *longline = malloc(SC_APP_LINE_MAX * 3);
    strcpy(longline, "::stackcheck stage ");
    memset(longline + 19, 'n', SC_APP_LINE_MAX * 2);
    strcpy(longline + 19 + SC_APP_LINE_MAX * 2, "\n");
    feed(p, longline, 2);
    assert_int_equal(p->stage_count, 1);
    assert_true(p->stages[0].slice.total > (uint64_t)SC_APP_LINE_MAX * 2);
    feed(p, "::stackcheck stage last", 3); /* no newline at the end of the stream */
    sc_app_parse_finish(p, 4);
    assert_int_equal(p->stage_count, 2);
    assert_string_equal(p->stages[1].name, "last");
    assert_string_equal(slice(p, 1, buf), "");
    free(longline);
    free(p);
}

static void test_flood_is_bounded(void **state)
{
    (void)state;
    sc_app_parse *p = new_parse();
    char *chunk = malloc(1 << 20);
    memset(chunk, 'x', 1 << 20);
    chunk[0] = ':';
    for (int i = 100; i < 1 << 20; i += 100)
        chunk[i] = '\n';
    for (int i = 0; i < 20; i++)
        sc_app_parse_feed(p, SC_APP_STDOUT, chunk, 1 << 20, i);
    sc_app_parse_finish(p, 21);
    assert_int_equal(p->out.total, 20u << 20);
    assert_int_equal(p->stage_count, 1);
    cJSON *stream = sc_app_stream_json(p, SC_APP_STDOUT);
    size_t kept = strlen(cJSON_GetStringValue(cJSON_GetObjectItem(stream, "tail")));
    /* the window lost its beginning: its partial first line is dropped */
    assert_true(kept <= SC_APP_TAIL_MAX && kept > SC_APP_TAIL_MAX - 101);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(stream, "truncated")));
    cJSON_Delete(stream);
    free(chunk);
    free(p);
}

static void test_too_many_stages(void **state)
{
    (void)state;
    sc_app_parse *p = new_parse();
    char line[64];
    for (int i = 0; i < SC_APP_STAGE_MAX + 10; i++) {
        snprintf(line, sizeof line, "::stackcheck stage s%d\nout%d\n", i, i);
        feed(p, line, i);
    }
    sc_app_parse_finish(p, 1000);
    assert_int_equal(p->stage_count, SC_APP_STAGE_MAX);
    assert_int_equal(p->stages_dropped, 11); /* the implicit stage takes one slot */
    char buf[SC_APP_SLICE_MAX + 1];
    assert_non_null(strstr(slice(p, SC_APP_STAGE_MAX - 1, buf), "out73"));
    free(p);
}

static void test_tail_ring(void **state)
{
    (void)state;
    char storage[8], out[8];
    sc_tail t;
    sc_tail_init(&t, storage, sizeof storage);
    sc_tail_append(&t, "abc", 3);
    sc_tail_append(&t, "defgh", 5);
    sc_tail_append(&t, "ij", 2);
    assert_int_equal(sc_tail_copy(&t, out), 8);
    assert_memory_equal(out, "cdefghij", 8);
    sc_tail_append(&t, "0123456789", 10);
    assert_int_equal(sc_tail_copy(&t, out), 8);
    assert_memory_equal(out, "23456789", 8);
    assert_int_equal(t.total, 20);
}

static void test_text_made_valid(void **state)
{
    (void)state;
    cJSON *s = sc_app_text_json("a\0b\xff\xc3\xa9\xe2\x82", 8);
    assert_string_equal(cJSON_GetStringValue(s), "a\xef\xbf\xbd"
                                                 "b\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd");
    cJSON_Delete(s);
    char line[16];
    sc_app_one_line("first\nsecond\n", 13, line, sizeof line);
    assert_string_equal(line, "econd");
    sc_app_one_line("a\nb\x01", 4, line, sizeof line);
    assert_string_equal(line, "a | b?");
    sc_app_one_line("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 18,
                    line, 10);
    assert_string_equal(line, "\xc3\xa9"); /* cut on a character boundary */
}

static void test_arithmetic(void **state)
{
    (void)state;
    double v[] = {100, 5, 7, 6};
    assert_true(sc_app_median(v + 1, 3) == 6);
    assert_true(sc_app_median(v, 4) == 6.5);
    assert_true(sc_app_deadline_s(300) == 295);
    assert_true(sc_app_deadline_s(3) == 2.5);
    assert_true(sc_app_deadline_s(1) < 1);
}

/* A line through the repetitions after the first: a linear series is growth, noise around a
 * level and a single jump are not, and too few points say nothing. */
static void test_memory_fit(void **state)
{
    (void)state;
    sc_app_fit fit;
    double linear[] = {500, 100, 110, 120, 130, 140};
    assert_true(sc_app_memory_fit(linear, 6, &fit));
    assert_int_equal(fit.points, 5);
    assert_true(fabs(fit.bytes_per_step - 10) < 1e-9);
    assert_true(fabs(fit.intercept - 100) < 1e-9);
    assert_true(fabs(fit.r2 - 1) < 1e-9);
    assert_true(fabs(fit.growth - 40) < 1e-9);
    assert_true(sc_app_memory_growing(&fit, 40));
    assert_false(sc_app_memory_growing(&fit, 41)); /* rose, but too little */
    double noisy[] = {500, 100, 110, 105, 130};
    assert_true(sc_app_memory_fit(noisy, 5, &fit));
    assert_true(fabs(fit.bytes_per_step - 8.5) < 1e-9);
    assert_true(fit.r2 < 0.7);
    assert_false(sc_app_memory_growing(&fit, 1));
    double jump[] = {500, 100, 100, 150, 150};
    assert_true(sc_app_memory_fit(jump, 5, &fit));
    assert_true(fabs(fit.r2 - 0.8) < 1e-9);
    assert_false(sc_app_memory_growing(&fit, 1)); /* one step up, then level: no leak */
    double level[] = {500, 100, 100, 100, 100};
    assert_true(sc_app_memory_fit(level, 5, &fit));
    assert_true(fit.bytes_per_step == 0 && fit.r2 == 1);
    assert_false(sc_app_memory_growing(&fit, 1));
    assert_false(sc_app_memory_fit(linear, 3, &fit)); /* two points after start-up: no line */
    double falling[] = {500, 140, 130, 120, 110};
    assert_true(sc_app_memory_fit(falling, 5, &fit));
    assert_false(sc_app_memory_growing(&fit, 1));
}

/* The profile's findings from the facts the helper reports: fallbacks from the classifier and
 * from the framework's warnings, traffic measured on a device, and recompiles with their shapes. */
static const char profile_json[] =
    "{\"available\":true,\"name\":\"step\",\"steps\":2,\"accelerator\":\"npu\","
    "\"fallback\":{\"ops\":[{\"name\":\"aten::isin\",\"count\":2,\"host_calls\":2,"
    "\"host_self_ms\":1.5}]},"
    "\"fallback_warnings\":[{\"kind\":\"cpu\",\"operator\":\"torchvision::nms\","
    "\"backend\":\"NPU\",\"count\":3},{\"kind\":\"device\",\"what\":\"x\"}],"
    "\"traffic\":{\"measured\":true,\"copies\":{\"device_to_host\":{\"per_step\":3,"
    "\"bytes_per_step\":262156},\"host_to_device\":{\"per_step\":1,\"bytes_per_step\":64}},"
    "\"syncs\":{\"per_step\":2,\"callers\":[{\"op\":\"aten::nonzero\"}]},"
    "\"host_calls\":[]},"
    "\"recompiles\":{\"recompiles\":2,\"device_compiles\":{\"count\":1,\"triggered_by\":"
    "[{\"op\":\"aten::mm(32x64, 64x32)\"}]},\"log\":{\"shape_changes\":[{\"tensor\":"
    "\"L['x']\",\"index\":0,\"expected\":8,\"actual\":16}]}}}";

static const char *message_of(const sc_result *res, const char *id, const char **severity)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, res->findings)
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "id")), id) == 0) {
            *severity = cJSON_GetStringValue(cJSON_GetObjectItem(f, "severity"));
            return cJSON_GetStringValue(cJSON_GetObjectItem(f, "message"));
        }
    return NULL;
}

static void test_profile_findings(void **state)
{
    (void)state;
    sc_result res;
    const char *sev = NULL;
    cJSON *profile = cJSON_Parse(profile_json);
    assert_non_null(profile);
    assert_int_equal(sc_result_init(&res), 0);
    sc_app_check_profile(&res, profile);
    const char *m = message_of(&res, "app.cpu-fallback", &sev);
    assert_non_null(strstr(m, "2 operators ran on the CPU while the step ran on npu"));
    assert_non_null(strstr(m, "aten::isin (2 of 2 calls, 1.500 ms on the host)"));
    assert_non_null(strstr(m, "torchvision::nms on NPU (3 times)"));
    m = message_of(&res, "app.host-device-traffic", &sev);
    assert_string_equal(sev, "warn");
    assert_non_null(strstr(m, "3 device-to-host copies (262156 bytes), 2 synchronising calls, "
                              "1 host-to-device copy (64 bytes); made by aten::nonzero"));
    m = message_of(&res, "app.recompiles", &sev);
    assert_non_null(strstr(m, "torch.compile compiled 2 more frames; the device runtime compiled "
                              "1 operator; shapes: L['x'] dimension 0: 8 -> 16, "
                              "aten::mm(32x64, 64x32)"));
    sc_result_free(&res);
    /* on the CPU: no fallback from the classifier, traffic as info */
    cJSON_ReplaceItemInObject(profile, "accelerator", cJSON_CreateNull());
    cJSON_ReplaceItemInObject(profile, "fallback_warnings", cJSON_CreateArray());
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(profile, "traffic"), "measured",
                              cJSON_CreateFalse());
    assert_int_equal(sc_result_init(&res), 0);
    sc_app_check_profile(&res, profile);
    assert_null(message_of(&res, "app.cpu-fallback", &sev));
    assert_non_null(message_of(&res, "app.host-device-traffic", &sev));
    assert_string_equal(sev, "info");
    sc_result_free(&res);
    cJSON_Delete(profile);
}

static void test_timing_split(void **state)
{
    (void)state;
    cJSON *runs = cJSON_Parse("[{\"duration_ms\":900,\"stages\":{\"import\":800,\"step\":100}},"
                              "{\"duration_ms\":120,\"stages\":{\"import\":1,\"step\":110}},"
                              "{\"duration_ms\":100,\"stages\":{\"import\":2,\"step\":90}},"
                              "{\"duration_ms\":140,\"stages\":{\"import\":3,\"step\":130}}]");
    cJSON *t = sc_app_timing_json(runs);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(t, "first_ms")) == 900);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(t, "steady_median_ms")) == 120);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(t, "steady_runs")) == 3);
    cJSON *imp = cJSON_GetArrayItem(cJSON_GetObjectItem(t, "stages"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(imp, "name")), "import");
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(imp, "first_ms")) == 800);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(imp, "steady_median_ms")) == 2);
    cJSON_Delete(t);
    cJSON *one = cJSON_Parse("[{\"duration_ms\":5,\"stages\":{}}]");
    t = sc_app_timing_json(one);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(t, "steady_median_ms")));
    cJSON_Delete(t);
    cJSON_Delete(one);
    cJSON_Delete(runs);
}

typedef struct {
    const char *cmd;
    double seconds;
} exec_job;

/* Runs the command the way the probe does: in an isolated child that leads its own group. */
static cJSON *exec_in_child(void *arg)
{
    exec_job *job = arg;
    sc_error err;
    sc_app_parse *p = malloc(sizeof *p);
    sc_app_outcome o;
    if (!p)
        return NULL;
    sc_app_parse_init(p, sc_now_ms());
    int rc = sc_app_exec(job->cmd, sc_now_ms() + job->seconds * 1000, true, p, &o, &err);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddNumberToObject(out, "rc", rc);
    cJSON_AddNumberToObject(out, "exit_code", o.exit_code);
    cJSON_AddNumberToObject(out, "signal", o.signal);
    cJSON_AddBoolToObject(out, "timed_out", o.timed_out);
    cJSON_AddNumberToObject(out, "killed", o.strays_killed);
    cJSON_AddNumberToObject(out, "stages", p->stage_count);
    cJSON_AddNumberToObject(out, "out_bytes", (double)p->out.total);
    free(p);
    return out;
}

static cJSON *run_exec(const char *cmd, double seconds, double *wall_ms)
{
    exec_job job = {cmd, seconds};
    sc_isolate_report rep;
    double start = sc_now_ms();
    assert_int_equal(sc_isolate_run(exec_in_child, &job, seconds + 10, &rep), 0);
    *wall_ms = sc_now_ms() - start;
    assert_int_equal(rep.outcome, SC_ISOLATE_OK);
    return rep.result;
}

static double num(const cJSON *o, const char *key)
{
    return cJSON_GetNumberValue(cJSON_GetObjectItem(o, key));
}

/* pattern is a regular expression that does not match itself ("sleep 12[3]"), so the shell
 * running pgrep is not found. */
static bool marker_alive(const char *marker)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "pgrep -f '%s' >/dev/null", marker);
    return system(cmd) == 0;
}

static void test_exec_outcomes(void **state)
{
    (void)state;
    double ms;
    cJSON *r = run_exec("echo '::stackcheck stage a'; exit 4", 20, &ms);
    assert_true(num(r, "exit_code") == 4 && num(r, "stages") == 2 &&
                !cJSON_IsTrue(cJSON_GetObjectItem(r, "timed_out")));
    cJSON_Delete(r);
    r = run_exec("kill -SEGV $$", 20, &ms);
    assert_true(num(r, "signal") == SIGSEGV);
    cJSON_Delete(r);
    r = run_exec("sleep 30", 1, &ms);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(r, "timed_out")));
    assert_true(ms < 6000); /* the deadline holds: 1 s, with a generous margin */
    cJSON_Delete(r);
}

static void test_exec_kills_leftovers(void **state)
{
    (void)state;
    double ms;
    /* a background child holding stdout open, one in a new session, and a stdout closed early */
    cJSON *r = run_exec("sleep 977301 & setsid sleep 977302 & exec 1>&-; exit 0", 20, &ms);
    assert_false(marker_alive("sleep 97730[12]"));
    assert_true(num(r, "exit_code") == 0);
    assert_true(num(r, "killed") >= 2);
    assert_true(ms < 10000);
    cJSON_Delete(r);
    usleep(100000);
    assert_false(marker_alive("sleep 97730[12]"));
    /* the direct call (not a group leader's): the app gets a group of its own */
    sc_error err;
    sc_app_parse *p = new_parse();
    sc_app_outcome o;
    assert_int_equal(sc_app_exec("sleep 977303 & echo hi", sc_now_ms() + 20000, false, p, &o, &err),
                     0);
    assert_int_equal(o.exit_code, 0);
    assert_int_equal(p->out.total, 3);
    usleep(100000);
    assert_false(marker_alive("sleep 97730[3]"));
    free(p);
}

static void test_exec_flood(void **state)
{
    (void)state;
    double ms;
    cJSON *r = run_exec("head -c 30000000 /dev/zero | tr '\\0' x", 60, &ms);
    assert_true(num(r, "exit_code") == 0);
    assert_true(num(r, "out_bytes") == 30000000);
    cJSON_Delete(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stages_and_metrics),
        cmocka_unit_test(test_markers_split_across_reads),
        cmocka_unit_test(test_malformed_and_long_lines),
        cmocka_unit_test(test_flood_is_bounded),
        cmocka_unit_test(test_too_many_stages),
        cmocka_unit_test(test_tail_ring),
        cmocka_unit_test(test_text_made_valid),
        cmocka_unit_test(test_arithmetic),
        cmocka_unit_test(test_memory_fit),
        cmocka_unit_test(test_profile_findings),
        cmocka_unit_test(test_timing_split),
        cmocka_unit_test(test_exec_outcomes),
        cmocka_unit_test(test_exec_kills_leftovers),
        cmocka_unit_test(test_exec_flood),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
