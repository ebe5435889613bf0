/* Core helpers: number and key-value parsing, the growable buffer, install-root classification,
 * the findings catalogue, statuses, and the report's escaping of control characters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_state_fixture.h"
#include "sc_findings_doc.h"
#include "sc_report.h"
#include "sc_roots.h"
#include "sc_types.h"
#include "sc_util.h"

static void test_parse_u64(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(sc_parse_u64(" 90010\n", &v), 0);
    assert_int_equal(v, 90010);
    assert_int_equal(sc_parse_u64("0x1d94", &v), 0);
    assert_int_equal(v, 0x1d94);
    assert_int_equal(sc_parse_u64("", &v), -EINVAL);
    assert_int_equal(sc_parse_u64("-1", &v), -EINVAL);
    assert_int_equal(sc_parse_u64("12abc", &v), -EINVAL);
    assert_int_equal(sc_parse_u64("99999999999999999999999", &v), -ERANGE);
}

static void test_kv_lookup(void **state)
{
    (void)state;
    char buf[64];
    const char *props = "simd_count 440\nsimd_per_cu 4\ngfx_target_version 90010\n";
    assert_true(sc_kv_lookup(props, "simd_per_cu", ' ', buf, sizeof buf));
    assert_string_equal(buf, "4");
    assert_false(sc_kv_lookup(props, "simd", ' ', buf, sizeof buf));
    const char *info = "Version=25.0.rc1.1\nPRETTY_NAME=\"Debian GNU/Linux 12\"\n";
    assert_true(sc_kv_lookup(info, "PRETTY_NAME", '=', buf, sizeof buf));
    assert_string_equal(buf, "Debian GNU/Linux 12");
    assert_true(sc_kv_lookup(info, "Version", '=', buf, 5));
    assert_string_equal(buf, "25.0");
}

static void test_buf(void **state)
{
    (void)state;
    sc_buf b;
    sc_buf_init(&b);
    for (int i = 0; i < 1000; i++)
        sc_buf_printf(&b, "%d,", i);
    assert_false(b.oom);
    assert_true(sc_starts_with(b.data, "0,1,2,"));
    assert_true(sc_ends_with(b.data, "999,"));
    sc_buf_free(&b);
}

static void test_path_dirname(void **state)
{
    (void)state;
    char dir[64];
    assert_string_equal(sc_path_dirname("a/b/c.json", dir, sizeof dir), "c.json");
    assert_string_equal(dir, "a/b");
    assert_string_equal(sc_path_dirname("c.json", dir, sizeof dir), "c.json");
    assert_string_equal(dir, ".");
    assert_string_equal(sc_path_dirname("/c.json", dir, sizeof dir), "c.json");
    assert_string_equal(dir, "/");
    assert_string_equal(sc_path_dirname("/tmp/d/", dir, sizeof dir), "");
    assert_string_equal(dir, "/tmp/d");
}

static void expect_root(const char *path, sc_root_kind kind, const char *root)
{
    sc_install_root r;
    sc_install_root_of(path, &r);
    assert_string_equal(sc_root_kind_name(r.kind), sc_root_kind_name(kind));
    assert_string_equal(r.path, root);
}

static void test_install_roots(void **state)
{
    (void)state;
    expect_root("/opt/dtk-24.04.1/hip/lib/libgalaxyhip.so.5", SC_ROOT_DTK, "/opt/dtk-24.04.1");
    expect_root("/opt/dtk/lib/libhipblas.so", SC_ROOT_DTK, "/opt/dtk");
    expect_root("/opt/rocm-6.2.0/lib/libamdhip64.so.6", SC_ROOT_ROCM, "/opt/rocm-6.2.0");
    expect_root("/usr/local/cuda-12.4/lib64/libcudart.so.12", SC_ROOT_CUDA, "/usr/local/cuda-12.4");
    expect_root("/usr/local/Ascend/driver/lib64/libascend_hal.so", SC_ROOT_CANN,
                "/usr/local/Ascend/driver");
    expect_root("/usr/lib/python3/dist-packages/torch/lib/libtorch_cpu.so", SC_ROOT_PYTHON,
                "/usr/lib/python3/dist-packages/torch");
    expect_root("/venv/lib/python3.12/site-packages/torch/lib/libamdhip64.so", SC_ROOT_PYTHON,
                "/venv/lib/python3.12/site-packages/torch");
    expect_root("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5.2.21153", SC_ROOT_SYSTEM, "/usr");
    expect_root("/home/u/ext/lib/libmyop.so", SC_ROOT_OTHER, "/home/u/ext");
    expect_root("/opt/rocmfoo/lib/x.so", SC_ROOT_OTHER, "/opt/rocmfoo");
}

static void count_ids(const char *id, const char *severity, void *arg)
{
    (void)severity;
    assert_true(strchr(id, '.') != NULL);
    (*(int *)arg)++;
}

static void test_findings_catalogue(void **state)
{
    (void)state;
    int n = 0;
    int listed = sc_findings_each(count_ids, &n);
    assert_int_equal(listed, n);
    assert_true(n >= 1);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_int_equal(sc_findings_explain(out, "driver.no-accelerator"), 0);
    fclose(out);
    assert_true(sc_starts_with(text, "### `driver.no-accelerator`\n**Severity:** error"));
    assert_non_null(strstr(text, "**Remedy:**"));
    assert_null(strstr(text + 4, "\n### ")); /* only this entry */
    free(text);
    out = fopen("/dev/null", "w");
    assert_int_equal(sc_findings_explain(out, "no.such-finding"), -ENOENT);
    fclose(out);
}

static void test_status_names(void **state)
{
    (void)state;
    for (int s = SC_STATUS_PASS; s <= SC_STATUS_CRASH; s++)
        assert_int_equal(sc_status_parse(sc_status_name((sc_status)s)), s);
    assert_int_equal(sc_status_parse("bogus"), SC_STATUS_UNSET);
    assert_true(sc_status_is_failure(SC_STATUS_TIMEOUT));
    assert_false(sc_status_is_failure(SC_STATUS_WARN));
    assert_string_equal(sc_layer_name(SC_LAYER_LIBRARIES), "libraries");
}

/* The report of a run made from layers_json under a minimal header; the caller frees it. */
static char *report_of(const char *layers_json, int verbosity)
{
    sc_test_run t;
    sc_test_run_from_json(&t, layers_json);
    cJSON *header = cJSON_Parse("{\"tool\":{\"version\":\"0\"},\"host\":{}}");
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    sc_report_print(out, header, &t.rs, false, verbosity);
    fclose(out);
    cJSON_Delete(header);
    sc_test_run_free(&t);
    return text;
}

static void test_report_device_summary(void **state)
{
    (void)state;
    char *text = report_of(
        "[{\"name\":\"driver\",\"probes\":[{\"id\":\"driver.x\",\"backend\":\"amd\","
        "\"status\":\"pass\",\"findings\":[],\"facts\":{\"devices\":[{\"gfx_target\":\"gfx90a\"},"
        "{\"gfx_target\":\"gfx90a\"},{\"arch\":\"gfx942\"}]}}]}]",
        0);
    assert_non_null(strstr(text, "driver.x            3 devices: gfx90a x2 gfx942\n"));
    assert_non_null(strstr(text, "Verdict: PASS: every layer that ran passed"));
    free(text);
}

/* A device is named by the first of its backend's arch facts (sc_backend_desc.arch_facts) that it
 * has; a backend-neutral probe's devices by any backend's. */
static void test_report_device_naming_by_backend(void **state)
{
    (void)state;
    char *text = report_of(
        "[{\"name\":\"driver\",\"probes\":["
        "{\"id\":\"driver.a\",\"backend\":\"amd\",\"status\":\"pass\",\"facts\":{\"devices\":["
        "{\"name\":\"aldebaran\",\"arch\":\"gfx90a:sramecc+:xnack-\",\"gfx_target\":\"gfx90a\"}]}},"
        "{\"id\":\"driver.n\",\"backend\":\"nvidia\",\"status\":\"pass\",\"facts\":{\"devices\":["
        "{\"name\":\"H200 #0\",\"model\":\"NVIDIA H200\",\"arch\":\"sm_90\"}]}},"
        "{\"id\":\"driver.s\",\"backend\":\"ascend\",\"status\":\"pass\",\"facts\":{\"devices\":["
        "{\"model\":\"Ascend 910B\",\"soc_name\":\"Ascend910B2\"}]}},"
        "{\"id\":\"driver.none\",\"backend\":\"none\",\"status\":\"pass\",\"facts\":{"
        "\"devices\":[{\"soc_name\":\"Ascend910B2\"},{\"label\":\"x\"}]}}]}]",
        0);
    assert_non_null(strstr(text, "driver.a            1 device: gfx90a\n"));
    assert_non_null(strstr(text, "driver.n            1 device: sm_90\n"));
    assert_non_null(strstr(text, "driver.s            1 device: Ascend910B2\n"));
    assert_non_null(strstr(text, "driver.none         2 devices: Ascend910B2 ?\n"));
    free(text);
}

static void test_report_escapes(void **state)
{
    (void)state;
    char *text =
        report_of("[{\"name\":\"driver\",\"probes\":[{\"id\":\"driver.x\",\"status\":\"fail\","
                  "\"findings\":[{\"id\":\"a.b\",\"severity\":\"error\",\"message\":\"evil "
                  "\\u001b[2J\\nname\",\"hint\":\"h\"}]}]}]",
                  0);
    assert_null(strchr(text, '\033'));
    assert_non_null(strstr(text, "evil \\x1b[2J\\nname"));
    assert_non_null(strstr(text, "Verdict: FAIL: the driver layer fails first (driver.x, fail)"));
    assert_non_null(strstr(text, "hint: h"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_kv_lookup),
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_path_dirname),
        cmocka_unit_test(test_install_roots),
        cmocka_unit_test(test_findings_catalogue),
        cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_report_escapes),
        cmocka_unit_test(test_report_device_summary),
        cmocka_unit_test(test_report_device_naming_by_backend),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
