/* Snapshot comparison on hand-made snapshots: schema checks, versions by known paths and by the
 * generic "*version*" walk, devices keyed by PCI address, library roots, installs, findings added
 * and resolved, statuses, timings as ratios, numerics within and beyond tolerance, and documents
 * with the wrong types everywhere. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff_harness.h"
#include "sc_diff.h"

#define SNAP(layers)                                                                               \
    "{\"schema\":\"stackcheck/snapshot/v1\",\"created\":\"t\",\"host\":{\"kernel\":\"6.1\"},"      \
    "\"layers\":" layers ",\"summary\":{\"status\":\"fail\"}}"

/* A snapshot with one probe (id, status, facts, findings) in layer "x". */
static cJSON *one_probe(const char *id, const char *status, const char *facts, const char *findings)
{
    char text[8192];
    snprintf(
        text, sizeof text,
        SNAP("[{\"name\":\"x\",\"probes\":[{\"id\":\"%s\",\"status\":\"%s\",\"duration_ms\":10,"
             "\"facts\":%s,\"findings\":%s}]}]"),
        id, status, facts, findings);
    cJSON *json = cJSON_Parse(text);
    assert_non_null(json);
    return json;
}

/* The change whose "what" is what, or NULL. */
static const cJSON *change(const cJSON *d, const char *what)
{
    const cJSON *c;
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(d, "changes")) {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "what")), what) == 0)
            return c;
    }
    return NULL;
}

static const char *str_at(const cJSON *obj, const char *key)
{
    return cJSON_GetStringValue(cJSON_GetObjectItem(obj, key));
}

static void test_schema_checks(void **state)
{
    (void)state;
    sc_error err = {0};
    cJSON *j = cJSON_Parse("[1]");
    assert_int_equal(sc_diff_check_snapshot(j, "a.json", &err), -EINVAL);
    cJSON_Delete(j);
    j = cJSON_Parse("{\"schema\":\"stackcheck/snapshot/v2\",\"layers\":[]}");
    assert_int_equal(sc_diff_check_snapshot(j, "a.json", &err), -EPROTONOSUPPORT);
    assert_non_null(strstr(err.message, "stackcheck/snapshot/v2"));
    assert_non_null(strstr(err.message, "stackcheck/snapshot/v1"));
    assert_non_null(strstr(err.message, "a.json"));
    cJSON_Delete(j);
    j = cJSON_Parse("{\"schema\":5}");
    assert_int_equal(sc_diff_check_snapshot(j, "a.json", &err), -EINVAL);
    cJSON_Delete(j);
    j = cJSON_Parse("{\"schema\":\"stackcheck/snapshot/v1\",\"layers\":{}}");
    assert_int_equal(sc_diff_check_snapshot(j, "a.json", &err), -EINVAL);
    cJSON_Delete(j);
    j = cJSON_Parse(SNAP("[]"));
    assert_int_equal(sc_diff_check_snapshot(j, "a.json", &err), 0);
    cJSON_Delete(j);
}

static void test_identical(void **state)
{
    (void)state;
    const char *facts =
        "{\"runtime\":{\"version\":\"5.2\"},\"devices\":[{\"pci_address\":\"0000:01:00.0\"}]}";
    cJSON *d = diff_of(one_probe("runtime.hip", "pass", facts, "[]"),
                       one_probe("runtime.hip", "pass", facts, "[]"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "changes")), 0);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(d, "differs")));
    cJSON_Delete(d);
}

static void test_versions(void **state)
{
    (void)state;
    cJSON *d = diff_of(
        one_probe(
            "runtime.hip", "pass",
            "{\"runtime\":{\"version\":\"5.2\"},\"x\":null,\"cann\":{\"toolkit_version\":\"7.0\"}}",
            "[]"),
        one_probe("runtime.hip", "pass",
                  "{\"runtime\":{\"version\":\"6.2\"},\"cann\":{\"toolkit_version\":\"8.0\"},\"new_"
                  "version\":\"1\"}",
                  "[]"));
    const cJSON *c = change(d, "runtime.hip runtime.version");
    assert_non_null(c);
    assert_string_equal(str_at(c, "a"), "5.2");
    assert_string_equal(str_at(c, "b"), "6.2");
    assert_string_equal(str_at(c, "area"), "runtime");
    assert_non_null(change(d, "runtime.hip cann.toolkit_version")); /* found by the generic walk */
    assert_non_null(change(d, "runtime.hip new_version"));          /* only on the b side */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "changes")), 3);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(d, "differs")));
    cJSON_Delete(d);
}

static void test_devices_and_libraries(void **state)
{
    (void)state;
    cJSON *d = diff_of(
        one_probe(
            "driver.amd", "pass",
            "{\"devices\":[{\"pci_address\":\"0000:01:00.0\",\"gfx_target\":\"gfx90a\",\"gpu_id\":"
            "1},"
            "{\"pci_address\":\"0000:02:00.0\",\"gfx_target\":\"gfx90a\"}],"
            "\"mapped_libraries\":[{\"name\":\"libamdhip64.so.5\",\"root\":\"/opt/dtk-24.04\"}],"
            "\"installs\":[{\"path\":\"/opt/dtk-24.04\",\"version\":\"24.04\"}]}",
            "[]"),
        one_probe(
            "driver.amd", "pass",
            "{\"devices\":[{\"pci_address\":\"0000:02:00.0\",\"gfx_target\":\"gfx928\"},"
            "{\"pci_address\":\"0000:01:00.0\",\"gfx_target\":\"gfx90a\",\"gpu_id\":2}],"
            "\"mapped_libraries\":[{\"name\":\"libamdhip64.so.5\",\"root\":\"/opt/dtk-25.04\"}],"
            "\"installs\":[{\"path\":\"/opt/dtk-24.04\",\"version\":\"24.04\"},"
            "{\"path\":\"/opt/dtk-25.04\",\"version\":\"25.04\"}]}",
            "[]"));
    assert_non_null(change(d, "driver.amd device 0000:02:00.0 gfx_target"));
    assert_null(change(d, "driver.amd device 0000:01:00.0 gpu_id")); /* changes with every boot */
    assert_null(change(d, "driver.amd devices count"));
    const cJSON *lib = change(d, "driver.amd mapped_libraries libamdhip64.so.5");
    assert_non_null(lib);
    assert_string_equal(str_at(lib, "b"), "/opt/dtk-25.04");
    assert_non_null(change(d, "driver.amd install /opt/dtk-25.04"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "changes")), 3);
    cJSON_Delete(d);
}

static void test_library_files(void **state)
{
    (void)state;
    cJSON *d = diff_of(
        one_probe(
            "libraries.torch", "pass",
            "{\"files\":[{\"soname\":\"libtorch_hip.so\",\"root\":\"/opt/torch\",\"libraries\":"
            "[{\"name\":\"libamdhip64.so.6\",\"root\":\"/opt/dtk-24.04\"},"
            "{\"name\":\"libc.so.6\",\"root\":\"/usr\"}]}]}",
            "[]"),
        one_probe(
            "libraries.torch", "pass",
            "{\"files\":[{\"soname\":\"libtorch_hip.so\",\"root\":\"/opt/torch\",\"libraries\":"
            "[{\"name\":\"libamdhip64.so.6\",\"root\":\"/opt/dtk-25.04\"},"
            "{\"name\":\"libc.so.6\",\"root\":\"/usr\"},"
            "{\"name\":\"libnuma.so.1\",\"root\":\"/usr\"}]}]}",
            "[]"));
    const cJSON *c = change(d, "libraries.torch libtorch_hip.so needs libamdhip64.so.6");
    assert_non_null(c);
    assert_string_equal(str_at(c, "a"), "/opt/dtk-24.04");
    assert_string_equal(str_at(c, "b"), "/opt/dtk-25.04");
    assert_non_null(change(d, "libraries.torch libtorch_hip.so needs libnuma.so.1"));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(d, "changes")), 2);
    cJSON_Delete(d);
}

static void test_findings_statuses_timings(void **state)
{
    (void)state;
    cJSON *d = diff_of(
        one_probe("runtime.hip", "fail", "{\"timing\":{\"load_ms\":20}}",
                  "[{\"id\":\"hip.no-device\",\"severity\":\"error\",\"message\":\"none\"}]"),
        one_probe("runtime.hip", "warn", "{\"timing\":{\"load_ms\":30}}",
                  "[{\"id\":\"hip.memory-in-use\",\"severity\":\"warn\",\"message\":\"busy\"}]"));
    const cJSON *f = cJSON_GetObjectItem(d, "findings");
    assert_string_equal(str_at(cJSON_GetArrayItem(cJSON_GetObjectItem(f, "added"), 0), "id"),
                        "hip.memory-in-use");
    assert_string_equal(str_at(cJSON_GetArrayItem(cJSON_GetObjectItem(f, "resolved"), 0), "id"),
                        "hip.no-device");
    const cJSON *st = change(d, "runtime.hip status");
    assert_string_equal(str_at(st, "a"), "fail");
    assert_string_equal(str_at(st, "b"), "warn");
    const cJSON *t, *load = NULL;
    cJSON_ArrayForEach (t, cJSON_GetObjectItem(d, "timings")) {
        if (strcmp(str_at(t, "what"), "timing.load_ms") == 0)
            load = t;
    }
    assert_non_null(load);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(load, "ratio")) == 1.5);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(d, "changes_that_matter")), 3);
    cJSON_Delete(d);
}

static cJSON *watch_snapshot(const char *modules, const char *input)
{
    char facts[4096];
    snprintf(facts, sizeof facts, "{\"numerics\":{\"name\":\"net\",\"input\":%s,\"modules\":%s}}",
             input, modules);
    return one_probe("app.script", "pass", facts, "[]");
}

#define M(name, mean, nan)                                                                         \
    "{\"module\":\"" name "\",\"type\":\"Linear\",\"shape\":[2,3],\"dtype\":\"float32\","          \
    "\"nan\":" #nan ",\"inf\":0,\"mean\":" #mean ",\"std\":1,\"max_abs\":2}"
#define IN "{\"shape\":[2],\"nan\":0,\"inf\":0,\"mean\":0.5,\"std\":1,\"max_abs\":1}"

static const cJSON *numerics(const cJSON *d)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(d, "numerics"), 0);
}

static void test_numerics(void **state)
{
    (void)state;
    /* within tolerance: 1.0 vs 1.0005 (rtol 1e-3) */
    cJSON *d = diff_of(watch_snapshot("[" M("a", 1.0, 0) "," M("b", 2.0, 0) "]", IN),
                       watch_snapshot("[" M("a", 1.0005, 0) "," M("b", 2.0, 0) "]", IN));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(numerics(d), "first_divergent")));
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(numerics(d), "compared")), 2);
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(d, "differs")));
    cJSON_Delete(d);
    /* beyond tolerance at the second module */
    d = diff_of(watch_snapshot("[" M("a", 1.0, 0) "," M("b", 2.0, 0) "," M("c", 3.0, 0) "]", IN),
                watch_snapshot("[" M("a", 1.0, 0) "," M("b", 2.1, 0) "," M("c", 9.0, 0) "]", IN));
    const cJSON *first = cJSON_GetObjectItem(numerics(d), "first_divergent");
    assert_string_equal(str_at(first, "module"), "b");
    assert_string_equal(str_at(first, "stat"), "mean");
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(first, "b")) == 2.1);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(d, "differs")));
    cJSON_Delete(d);
    /* NaN counts are compared exactly; a module only one side has is a divergence */
    d = diff_of(watch_snapshot("[" M("a", 1.0, 0) "," M("b", 2.0, 0) "]", IN),
                watch_snapshot("[" M("a", 1.0, 3) "]", IN));
    assert_string_equal(str_at(cJSON_GetObjectItem(numerics(d), "first_divergent"), "stat"), "nan");
    cJSON_Delete(d);
    d = diff_of(watch_snapshot("[" M("a", 1.0, 0) "," M("b", 2.0, 0) "]", IN),
                watch_snapshot("[" M("a", 1.0, 0) "]", IN));
    first = cJSON_GetObjectItem(numerics(d), "first_divergent");
    assert_string_equal(str_at(first, "module"), "b");
    assert_string_equal(str_at(first, "stat"), "presence");
    cJSON_Delete(d);
}

static void test_numerics_tolerance_option(void **state)
{
    (void)state;
    sc_diff_options opt = {.rtol = 0.1, .atol = 0};
    cJSON *a = watch_snapshot("[" M("a", 1.0, 0) "]", IN),
          *b = watch_snapshot("[" M("a", 1.05, 0) "]", IN);
    cJSON *d = sc_diff_snapshots(a, b, &opt);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(numerics(d), "first_divergent")));
    cJSON_Delete(d);
    opt.rtol = 0.01;
    d = sc_diff_snapshots(a, b, &opt);
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(numerics(d), "first_divergent")));
    cJSON_Delete(d);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* Documents that pass the schema check but have the wrong types anywhere below it. */
static void test_wrong_types(void **state)
{
    (void)state;
    static const char *const docs[] = {
        SNAP("[1, \"x\", null, {\"probes\": 5}, {\"probes\": [1, {\"id\": 7}, {\"id\": \"a\"}]}]"),
        SNAP("[{\"probes\":[{\"id\":\"runtime.hip\",\"facts\":[1,2],\"findings\":{\"id\":1}}]}]"),
        SNAP("[{\"probes\":[{\"id\":\"driver.amd\",\"facts\":{\"devices\":{\"a\":1},\"installs\":["
             "1,{\"path\":2}],"
             "\"mapped_libraries\":[{\"name\":null},\"x\"],\"module\":[]},\"findings\":[{\"id\":"
             "null},3],"
             "\"duration_ms\":\"slow\"}]}]"),
        SNAP("[{\"probes\":[{\"id\":\"app.script\",\"facts\":{\"numerics\":{\"modules\":{"
             "\"module\":\"a\"},"
             "\"input\":[]},\"stages\":[{\"name\":1},{\"duration_ms\":3}],\"timing\":{\"x_ms\":"
             "\"1\"}}}]}]"),
        SNAP("[{\"probes\":[{\"id\":\"app.script\",\"facts\":{\"numerics\":{\"modules\":[1,{"
             "\"module\":5},"
             "{\"module\":\"m\",\"shape\":\"x\",\"mean\":\"y\"}]}}}]}]"),
    };
    size_t n = sizeof docs / sizeof docs[0];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            cJSON *a = cJSON_Parse(docs[i]), *b = cJSON_Parse(docs[j]);
            assert_non_null(a);
            assert_non_null(b);
            sc_error err;
            assert_int_equal(sc_diff_check_snapshot(a, "a", &err), 0);
            cJSON *d = diff_of(a, b);
            FILE *devnull = fopen("/dev/null", "w");
            sc_diff_print(devnull, d, "a", "b");
            fclose(devnull);
            if (i == j)
                assert_false(cJSON_IsTrue(cJSON_GetObjectItem(d, "differs")));
            cJSON_Delete(d);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_checks), cmocka_unit_test(test_identical),
        cmocka_unit_test(test_versions),      cmocka_unit_test(test_devices_and_libraries),
        cmocka_unit_test(test_library_files), cmocka_unit_test(test_findings_statuses_timings),
        cmocka_unit_test(test_numerics),      cmocka_unit_test(test_numerics_tolerance_option),
        cmocka_unit_test(test_wrong_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
