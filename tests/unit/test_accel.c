/* The pieces both vendors' runtime probes share: bounded copies of vendor strings, error
 * descriptions, the x*2 kernel check, memory answers, visibility variables, driver agreement. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_state_fixture.h"
#include "sc_accel.h"

static void test_copy_text(void **state)
{
    (void)state;
    char buf[16];
    sc_accel_copy_text(buf, sizeof buf, "AMD Instinct MI250X", 64, "?");
    assert_string_equal(buf, "AMD Instinct MI");
    const char unterminated[4] = {'g', 'f', 'x', '9'};
    sc_accel_copy_text(buf, sizeof buf, unterminated, sizeof unterminated, "?");
    assert_string_equal(buf, "gfx9");
    sc_accel_copy_text(buf, sizeof buf, "a\033[2Jb\nc", 64, "?");
    assert_null(strchr(buf, '\033'));
    assert_null(strchr(buf, '\n'));
    sc_accel_copy_text(buf, sizeof buf, NULL, 64, "unknown");
    assert_string_equal(buf, "unknown");
    sc_accel_copy_text(buf, sizeof buf, "", 64, "unknown");
    assert_string_equal(buf, "unknown");
}

static void test_describe_and_lookup(void **state)
{
    (void)state;
    static const sc_accel_code_name names[] = {{100, "hipErrorNoDevice"},
                                               {101, "hipErrorInvalidDevice"}};
    assert_string_equal(sc_accel_code_lookup(names, 2, 101), "hipErrorInvalidDevice");
    assert_null(sc_accel_code_lookup(names, 2, 7));
    char buf[128];
    sc_accel_describe(buf, sizeof buf, 100, "hipErrorNoDevice", "?",
                      "no ROCm-capable device is detected");
    assert_string_equal(buf, "hipErrorNoDevice (100): no ROCm-capable device is detected");
    sc_accel_describe(buf, sizeof buf, 100, NULL, "hipErrorNoDevice", "hipErrorNoDevice");
    assert_string_equal(buf, "hipErrorNoDevice (100)");
}

static void test_check_doubled(void **state)
{
    (void)state;
    float good[SC_ACCEL_KERNEL_N], bad[SC_ACCEL_KERNEL_N];
    for (int i = 0; i < SC_ACCEL_KERNEL_N; i++) {
        good[i] = 2.0f * (float)i;
        bad[i] = (float)i;
    }
    char why[256];
    cJSON *o = cJSON_CreateObject();
    assert_true(sc_accel_check_doubled(good, SC_ACCEL_KERNEL_N, o, why, sizeof why));
    cJSON *r = cJSON_GetObjectItem(o, "kernel_result");
    assert_int_equal(cJSON_GetArraySize(r), SC_ACCEL_KERNEL_N);
    assert_int_equal((int)cJSON_GetArrayItem(r, 7)->valuedouble, 14);
    cJSON_Delete(o);
    o = cJSON_CreateObject();
    assert_false(sc_accel_check_doubled(bad, SC_ACCEL_KERNEL_N, o, why, sizeof why));
    assert_non_null(strstr(why, "0 1 2"));
    cJSON_Delete(o);
}

static void test_memory_answer(void **state)
{
    (void)state;
    sc_buf bad;
    sc_buf_init(&bad);
    cJSON *mem = cJSON_CreateObject();
    assert_true(sc_accel_memory_answer(mem, &bad, 0, "hipMemGetInfo", 0, NULL, 1u << 30, 2u << 30));
    assert_int_equal((long long)cJSON_GetObjectItem(mem, "free_bytes")->valuedouble, 1LL << 30);
    cJSON_Delete(mem);
    mem = cJSON_CreateObject();
    assert_false(
        sc_accel_memory_answer(mem, &bad, 0, "hipMemGetInfo", 0, NULL, 3u << 30, 2u << 30));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(mem, "free_bytes"))); /* free > total */
    assert_non_null(bad.data);
    cJSON_Delete(mem);
    sc_buf_free(&bad);
}

static char *fake_env(const char *name)
{
    if (strcmp(name, "HIP_VISIBLE_DEVICES") == 0)
        return "1";
    if (strcmp(name, "CUDA_VISIBLE_DEVICES") == 0)
        return "";
    return NULL;
}

static void test_visibility_vars(void **state)
{
    (void)state;
    static const char *const names[] = {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                                        "CUDA_VISIBLE_DEVICES", NULL};
    char buf[256];
    assert_int_equal(sc_accel_visibility_vars(fake_env, names, false, buf, sizeof buf), 2);
    assert_non_null(strstr(buf, "HIP_VISIBLE_DEVICES=1"));
    assert_non_null(strstr(buf, "CUDA_VISIBLE_DEVICES="));
    assert_null(strstr(buf, "ROCR"));
}

static void test_driver_agreement(void **state)
{
    (void)state;
    cJSON *drv =
        cJSON_Parse("[{\"pci_address\":\"0000:c1:00.0\"},{\"pci_address\":\"0000:c6:00.0\"}]");
    cJSON *rt =
        cJSON_Parse("[{\"pci_address\":\"0000:C1:00.0\"},{\"pci_address\":\"0000:d1:00.0\"}]");
    assert_non_null(sc_accel_device_at(drv, "0000:C6:00.0"));
    assert_null(sc_accel_device_at(drv, "0000:d1:00.0"));
    sc_buf missing;
    sc_buf_init(&missing);
    cJSON *facts = cJSON_CreateObject();
    assert_int_equal(sc_accel_driver_agrees(facts, rt, 2, drv, "no driver layer", &missing), 0);
    assert_non_null(strstr(missing.data, "0000:d1:00.0"));
    assert_null(strstr(missing.data, "c1"));
    sc_buf_free(&missing);
    sc_buf_init(&missing);
    assert_int_equal(sc_accel_driver_agrees(facts, rt, 2, NULL, "no driver layer", &missing), -1);
    sc_buf_free(&missing);
    cJSON_Delete(facts);
    cJSON_Delete(drv);
    cJSON_Delete(rt);
}

static void test_driver_evidence(void **state)
{
    (void)state;
    sc_test_run t;
    sc_test_run_from_json(
        &t, "[{\"name\":\"driver\",\"probes\":[{\"id\":\"driver.amd\",\"status\":\"fail\","
            "\"facts\":{},\"findings\":[{\"id\":\"a.b\",\"severity\":\"warn\",\"message\":\"w\"},"
            "{\"id\":\"driver.no-accelerator\",\"severity\":\"error\",\"message\":\"none here\"}]},"
            "{\"id\":\"driver.nvidia\",\"status\":\"pass\",\"facts\":{\"devices\":["
            "{\"model\":\"NVIDIA H200\",\"pci_address\":\"0000:18:00.0\"}]},\"findings\":[]}]}]");
    sc_ctx ctx = {.run = &t.rs};
    char buf[256];
    sc_accel_driver_evidence(&ctx, "driver.amd", "devices", "gfx_target", buf, sizeof buf);
    assert_string_equal(buf, "driver.amd: fail, none here");
    sc_accel_driver_evidence(&ctx, "driver.nvidia", "GPU(s)", "model", buf, sizeof buf);
    assert_string_equal(buf, "driver.nvidia sees 1 GPU(s) (NVIDIA H200 at 0000:18:00.0)");
    sc_accel_driver_evidence(&ctx, "driver.ascend", "NPU(s)", "model", buf, sizeof buf);
    assert_string_equal(buf, "driver.ascend: did not run");
    sc_test_run_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_text),       cmocka_unit_test(test_describe_and_lookup),
        cmocka_unit_test(test_check_doubled),   cmocka_unit_test(test_memory_answer),
        cmocka_unit_test(test_visibility_vars), cmocka_unit_test(test_driver_agreement),
        cmocka_unit_test(test_driver_evidence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
