/* The parallel runner with probes made for the test: --jobs 1 is strictly serial (each probe
 * records its start and end in a file, from whichever process it runs in), more jobs overlap
 * probes of one layer, a speculative child whose gate closes is killed and skipped with the serial
 * reason, serial and parallel outcomes are the same, and steps become timing facts; a probe's
 * warm-up starts with a parallel run (at its turn in a serial one) and is stopped when its layer is
 * final or its gate closes; a turn gate keeps or discards a result made beside the sibling it
 * depends on. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sc_json.h"
#include "sc_runner.h"
#include "sc_snapshot.h"
#include "sc_step.h"
#include "sc_util.h"

static char times_path[] = "/tmp/sc-parallel-times-XXXXXX";
static char pid_path[] = "/tmp/sc-parallel-pid-XXXXXX";

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Appends "id start end" (monotonic ms) to the times file: one write, so lines never mix. */
static void record(const char *id, double start, double end)
{
    char line[128];
    int n = snprintf(line, sizeof line, "%s %.3f %.3f\n", id, start, end);
    int fd = open(times_path, O_WRONLY | O_APPEND | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, line, (size_t)n), n);
    close(fd);
}

static void run_timed(const sc_ctx *ctx, sc_result *res, const char *id, int ms)
{
    (void)ctx;
    double start = sc_now_ms();
    sleep_ms(ms);
    record(id, start, sc_now_ms());
    cJSON_AddStringToObject(res->facts, "id", id);
}

static void run_d1(const sc_ctx *ctx, sc_result *res)
{
    run_timed(ctx, res, "driver.one", 300);
}
static void run_d2(const sc_ctx *ctx, sc_result *res)
{
    run_timed(ctx, res, "driver.two", 300);
}
static void run_r1(const sc_ctx *ctx, sc_result *res)
{
    run_timed(ctx, res, "runtime.one", 300);
}
static void run_f1(const sc_ctx *ctx, sc_result *res)
{
    /* what it reads of the layers below is in its result: serial and parallel must agree */
    const cJSON *below = sc_ctx_facts(ctx, "runtime.one");
    run_timed(ctx, res, "framework.one", 100);
    cJSON_AddBoolToObject(res->facts, "saw_runtime", below != NULL);
}

static const sc_probe p_d1 = {.id = "driver.one", .layer = SC_LAYER_DRIVER, .run = run_d1};
static const sc_probe p_d2 = {
    .id = "driver.two", .layer = SC_LAYER_DRIVER, .isolated = true, .timeout_s = 30, .run = run_d2};
static const sc_probe p_r1 = {.id = "runtime.one", .layer = SC_LAYER_RUNTIME, .run = run_r1};
static const sc_probe p_f1 = {.id = "framework.one", .layer = SC_LAYER_FRAMEWORK, .run = run_f1};

typedef struct {
    char id[32];
    double start, end;
} interval;

static int read_times(interval *v, int max)
{
    FILE *f = fopen(times_path, "r");
    int n = 0;
    assert_non_null(f);
    while (n < max && fscanf(f, "%31s %lf %lf", v[n].id, &v[n].start, &v[n].end) == 3)
        n++;
    fclose(f);
    return n;
}

static int run_table(const sc_probe *const *table, int jobs, bool keep_going, sc_run_state *rs)
{
    sc_options opt;
    sc_options_init(&opt);
    opt.jobs = jobs;
    opt.keep_going = keep_going;
    sc_root root = {.dirfd = -1, .is_host = true};
    snprintf(root.path, sizeof root.path, "/");
    int fd = open(times_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    assert_true(fd >= 0);
    close(fd);
    return sc_run_probes(table, &opt, &root, NULL, rs);
}

static void test_jobs_1_is_strictly_serial(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_d1, &p_d2, &p_r1, &p_f1, NULL};
    sc_run_state rs;
    assert_int_equal(run_table(table, 1, false, &rs), 0);
    sc_run_state_free(&rs);
    interval v[8];
    assert_int_equal(read_times(v, 8), 4);
    static const char *const order[] = {"driver.one", "driver.two", "runtime.one", "framework.one"};
    for (int i = 0; i < 4; i++) {
        assert_string_equal(v[i].id, order[i]);
        if (i > 0) /* each starts after the one before it ended */
            assert_true(v[i].start >= v[i - 1].end);
    }
}

static void test_more_jobs_overlap_one_layer(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_d1, &p_d2, &p_r1, &p_f1, NULL};
    sc_run_state rs;
    assert_int_equal(run_table(table, 4, false, &rs), 0);
    sc_run_state_free(&rs);
    interval v[8];
    assert_int_equal(read_times(v, 8), 4);
    interval d1 = {0}, d2 = {0}, r1 = {0};
    for (int i = 0; i < 4; i++) {
        if (strcmp(v[i].id, "driver.one") == 0)
            d1 = v[i];
        if (strcmp(v[i].id, "driver.two") == 0)
            d2 = v[i];
        if (strcmp(v[i].id, "runtime.one") == 0)
            r1 = v[i];
    }
    assert_true(d1.start < d2.end && d2.start < d1.end);   /* the driver layer ran side by side */
    assert_true(r1.start >= d1.end && r1.start >= d2.end); /* the runtime waited for it */
}

/* A snapshot of the run with the times taken out. */
static char *normalised(const sc_run_state *rs)
{
    cJSON *snap = cJSON_CreateObject();
    sc_snapshot_add_run(snap, rs);
    cJSON *layer, *p;
    cJSON_ArrayForEach (layer, cJSON_GetObjectItem(snap, "layers"))
        cJSON_ArrayForEach (p, cJSON_GetObjectItem(layer, "probes"))
            cJSON_DeleteItemFromObject(p, "duration_ms");
    char *text = cJSON_PrintUnformatted(snap);
    cJSON_Delete(snap);
    return text;
}

static void run_fail(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    sleep_ms(1500); /* long enough for the framework probe to start beside it */
    sc_finding(res, "test.broken", SC_SEV_ERROR, NULL, "broken");
}

/* Records its pid, then works far longer than the test allows. */
static void run_slow(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    (void)res;
    char text[32];
    int n = snprintf(text, sizeof text, "%d\n", (int)getpid());
    int fd = open(pid_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd >= 0 && write(fd, text, (size_t)n) == n)
        close(fd);
    sleep_ms(60000);
}

static void forget_slow_child(void)
{
    int fd = open(pid_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
    assert_true(fd >= 0);
    close(fd);
}

/* The slow child recorded its pid (so it had started), and it is gone. */
static void assert_slow_child_killed(void)
{
    FILE *f = fopen(pid_path, "r");
    int pid = 0;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    assert_true(pid > 0);
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
}

static void inventory_slow(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    cJSON_AddStringToObject(res->facts, "inventory", "passive");
}

static const sc_probe p_rfail = {.id = "runtime.fail", .layer = SC_LAYER_RUNTIME, .run = run_fail};
static const sc_probe p_fslow = {.id = "framework.slow",
                                 .layer = SC_LAYER_FRAMEWORK,
                                 .isolated = true,
                                 .timeout_s = 120,
                                 .needs = SC_NEEDS(SC_LAYER_DRIVER),
                                 .run = run_slow,
                                 .inventory = inventory_slow};

static void test_gate_closing_kills_speculative_child(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_d1, &p_rfail, &p_fslow, NULL};
    forget_slow_child();
    sc_run_state rs;
    double start = sc_now_ms();
    assert_int_equal(run_table(table, 4, false, &rs), 1);
    assert_true(sc_now_ms() - start < 30000); /* it did not wait for the slow child */
    assert_slow_child_killed();               /* it had started before the gate closed */
    const sc_outcome *o = &rs.outcomes[2];
    assert_int_equal(o->status, SC_STATUS_SKIP);
    assert_string_equal(o->reason, "runtime.fail did not pass");
    assert_null(o->steps);
    assert_string_equal(sc_json_str(o->facts, "inventory"), "passive");
    char *parallel = normalised(&rs);
    sc_run_state_free(&rs);
    /* the same as a serial run, where the probe never starts */
    assert_int_equal(run_table(table, 1, false, &rs), 1);
    char *serial = normalised(&rs);
    sc_run_state_free(&rs);
    assert_string_equal(parallel, serial);
    free(parallel);
    free(serial);
}

static void test_serial_and_parallel_agree(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_d1, &p_d2, &p_r1, &p_f1, NULL};
    sc_run_state rs;
    char *text[2];
    for (int i = 0; i < 2; i++) {
        run_table(table, i == 0 ? 1 : 3, false, &rs);
        text[i] = normalised(&rs);
        sc_run_state_free(&rs);
    }
    assert_string_equal(text[0], text[1]);
    assert_non_null(strstr(text[0], "\"saw_runtime\":true"));
    free(text[0]);
    free(text[1]);
}

static void run_steps(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    (void)res;
    sc_step("first");
    sleep_ms(200);
    sc_step("second step");
    sleep_ms(50);
}

static const sc_probe p_steps_iso = {.id = "runtime.steps",
                                     .layer = SC_LAYER_RUNTIME,
                                     .isolated = true,
                                     .timeout_s = 30,
                                     .run = run_steps};
static const sc_probe p_steps_here = {
    .id = "libraries.steps", .layer = SC_LAYER_LIBRARIES, .run = run_steps};

static void assert_steps(const sc_outcome *o)
{
    assert_int_equal(cJSON_GetArraySize(o->steps), 2);
    const cJSON *a = cJSON_GetArrayItem(o->steps, 0), *b = cJSON_GetArrayItem(o->steps, 1);
    assert_string_equal(sc_json_str(a, "name"), "first");
    assert_string_equal(sc_json_str(b, "name"), "second step");
    assert_true(cJSON_GetObjectItem(a, "duration_ms")->valuedouble >= 150);
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(b, "duration_ms")));
}

static void test_steps_become_timing_facts(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_steps_iso, &p_steps_here, NULL};
    for (int jobs = 1; jobs <= 2; jobs++) {
        sc_run_state rs;
        assert_int_equal(run_table(table, jobs, false, &rs), 0);
        assert_steps(&rs.outcomes[0]); /* from an isolated child */
        assert_steps(&rs.outcomes[1]); /* in this process (jobs 1) or a worker (jobs 2) */
        cJSON *snap = cJSON_CreateObject();
        sc_snapshot_add_run(snap, &rs);
        char *text = cJSON_PrintUnformatted(snap);
        assert_non_null(strstr(text, "\"steps\":[{\"name\":\"first\",\"duration_ms\":"));
        free(text);
        cJSON_Delete(snap);
        sc_run_state_free(&rs);
    }
}

/* The warm-up hooks record when the runner calls them. */
static void warm_up_f2(const sc_ctx *ctx)
{
    (void)ctx;
    record("warm_up", sc_now_ms(), sc_now_ms());
}

static void cool_down_f2(bool run_ends)
{
    record(run_ends ? "cool_down_end" : "cool_down_stop", sc_now_ms(), sc_now_ms());
}

static void run_f2(const sc_ctx *ctx, sc_result *res)
{
    run_timed(ctx, res, "framework.two", 100);
}

static void run_a1(const sc_ctx *ctx, sc_result *res)
{
    run_timed(ctx, res, "app.one", 100);
}

static const sc_probe p_f2 = {.id = "framework.two",
                              .layer = SC_LAYER_FRAMEWORK,
                              .run = run_f2,
                              .warm_up = warm_up_f2,
                              .cool_down = cool_down_f2};
static const sc_probe p_a1 = {.id = "app.one", .layer = SC_LAYER_APP, .run = run_a1};

static const interval *find(const interval *v, int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].id, id) == 0)
            return &v[i];
    fail_msg("%s was not recorded", id);
    return NULL;
}

static void test_warm_up_at_the_start_cooled_when_its_layer_is_final(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_d1, &p_r1, &p_f2, &p_a1, NULL};
    sc_run_state rs;
    assert_int_equal(run_table(table, 2, false, &rs), 0);
    sc_run_state_free(&rs);
    interval v[8];
    int n = read_times(v, 8);
    assert_int_equal(n, 7);
    const interval *warm = find(v, n, "warm_up"), *stop = find(v, n, "cool_down_stop");
    const interval *end = find(v, n, "cool_down_end");
    /* before the first probe; stopped once its layer was final, before the next layer; released
     * at the end of the run */
    assert_true(warm->start <= find(v, n, "driver.one")->start);
    assert_true(stop->start >= find(v, n, "framework.two")->end);
    assert_true(stop->start <= find(v, n, "app.one")->start);
    assert_true(end->start >= find(v, n, "app.one")->end);
    /* --jobs 1: the warm-up begins at the probe's turn, after the layers below ended */
    assert_int_equal(run_table(table, 1, false, &rs), 0);
    sc_run_state_free(&rs);
    n = read_times(v, 8);
    assert_int_equal(n, 7);
    warm = find(v, n, "warm_up");
    stop = find(v, n, "cool_down_stop");
    assert_true(warm->start >= find(v, n, "runtime.one")->end);
    assert_true(warm->start <= find(v, n, "framework.two")->start);
    assert_true(stop->start >= find(v, n, "framework.two")->end);
    assert_true(stop->start <= find(v, n, "app.one")->start);
    assert_true(find(v, n, "cool_down_end")->start >= find(v, n, "app.one")->end);
    /* STACKCHECK_WARM=0: none at all */
    setenv("STACKCHECK_WARM", "0", 1);
    for (int jobs = 1; jobs <= 2; jobs++) {
        assert_int_equal(run_table(table, jobs, false, &rs), 0);
        sc_run_state_free(&rs);
        assert_int_equal(read_times(v, 8), 4);
    }
    unsetenv("STACKCHECK_WARM");
}

static void test_warm_up_stopped_when_its_gate_closes(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_d1, &p_rfail, &p_f2, &p_a1, NULL};
    sc_run_state rs;
    assert_int_equal(run_table(table, 2, false, &rs), 1);
    sc_run_state_free(&rs);
    interval v[8];
    int n = read_times(v, 8);
    assert_int_equal(n, 4); /* driver.one, and the warm-up: made, stopped and released */
    assert_true(find(v, n, "cool_down_stop")->start <= find(v, n, "cool_down_end")->start);
    /* serial: the gate is closed at its turn, so it never begins */
    assert_int_equal(run_table(table, 1, false, &rs), 1);
    sc_run_state_free(&rs);
    assert_int_equal(read_times(v, 8), 1);
}

/* A sibling whose result the next probe needs: it fails, or passes, as the test says. */
static bool sibling_fails;
static void run_sibling(const sc_ctx *ctx, sc_result *res)
{
    run_timed(ctx, res, "framework.sibling", 800);
    if (sibling_fails)
        sc_finding(res, "test.broken", SC_SEV_ERROR, NULL, "broken");
}

static bool sibling_passed(const sc_ctx *ctx, char *why, size_t size)
{
    if (sc_ctx_status(ctx, "framework.sibling") == SC_STATUS_PASS)
        return true;
    snprintf(why, size, "framework.sibling did not pass");
    return false;
}

static void run_after_sibling(const sc_ctx *ctx, sc_result *res)
{
    if (sibling_fails) {
        run_slow(ctx, res); /* killed when its turn gate closes */
        return;
    }
    run_timed(ctx, res, "framework.after", 100);
}

static const sc_probe p_sibling = {.id = "framework.sibling",
                                   .layer = SC_LAYER_FRAMEWORK,
                                   .isolated = true,
                                   .timeout_s = 30,
                                   .run = run_sibling};
static const sc_probe p_after = {.id = "framework.after",
                                 .layer = SC_LAYER_FRAMEWORK,
                                 .isolated = true,
                                 .timeout_s = 120,
                                 .needs = SC_NEEDS(SC_LAYER_DRIVER),
                                 .turn_gate = sibling_passed,
                                 .run = run_after_sibling};

static void test_turn_gate_keeps_or_discards_a_speculative_result(void **state)
{
    (void)state;
    const sc_probe *table[] = {&p_d1, &p_sibling, &p_after, NULL};
    sc_run_state rs;
    char *text[2];
    /* open: it started beside its sibling, and its result counts as in a serial run */
    sibling_fails = false;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run_table(table, i == 0 ? 1 : 3, false, &rs), 0);
        text[i] = normalised(&rs);
        sc_run_state_free(&rs);
    }
    assert_string_equal(text[0], text[1]);
    free(text[0]);
    free(text[1]);
    interval v[8];
    int n = read_times(v, 8);
    assert_true(find(v, n, "framework.after")->start < find(v, n, "framework.sibling")->end);
    /* closed: its child is killed, and it is skip with the gate's reason, as in a serial run */
    sibling_fails = true;
    forget_slow_child();
    assert_int_equal(run_table(table, 3, false, &rs), 1);
    assert_int_equal(rs.outcomes[2].status, SC_STATUS_SKIP);
    assert_string_equal(rs.outcomes[2].reason, "framework.sibling did not pass");
    text[1] = normalised(&rs);
    sc_run_state_free(&rs);
    assert_slow_child_killed();
    assert_int_equal(run_table(table, 1, false, &rs), 1);
    text[0] = normalised(&rs);
    sc_run_state_free(&rs);
    assert_string_equal(text[0], text[1]);
    free(text[0]);
    free(text[1]);
}

/* Past the 64 steps kept, the last slot follows the newest: the current step stays named. */
static void test_many_steps_keep_the_current_one(void **state)
{
    (void)state;
    sc_outcome o;
    memset(&o, 0, sizeof o);
    char name[32];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "step %d", i);
        sc_outcome_step(&o, name, (double)i);
    }
    assert_int_equal(cJSON_GetArraySize(o.steps), 64);
    assert_string_equal(sc_json_str(cJSON_GetArrayItem(o.steps, 62), "name"), "step 62");
    assert_string_equal(sc_outcome_current_step(&o), "step 99");
    cJSON_Delete(o.steps);
}

static int setup(void **state)
{
    (void)state;
    int a = mkstemp(times_path), b = mkstemp(pid_path);
    if (a >= 0)
        close(a);
    if (b >= 0)
        close(b);
    return a >= 0 && b >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlink(times_path);
    unlink(pid_path);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_1_is_strictly_serial),
        cmocka_unit_test(test_more_jobs_overlap_one_layer),
        cmocka_unit_test(test_gate_closing_kills_speculative_child),
        cmocka_unit_test(test_serial_and_parallel_agree),
        cmocka_unit_test(test_steps_become_timing_facts),
        cmocka_unit_test(test_warm_up_at_the_start_cooled_when_its_layer_is_final),
        cmocka_unit_test(test_warm_up_stopped_when_its_gate_closes),
        cmocka_unit_test(test_turn_gate_keeps_or_discards_a_speculative_result),
        cmocka_unit_test(test_many_steps_keep_the_current_one),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
