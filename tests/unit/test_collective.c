/* framework.collective's judgement of its launcher's result: the library roots against the
 * runtime the runtime layer loaded (same install, another install, gloo inside torch), a wrong
 * sum named per rank, a rank that failed on its own, and a hang with the phase of each rank. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_state_fixture.h"
#include "sc_collective.h"

static const char *message_of(const sc_result *res, const char *id)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, res->findings)
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "id")), id) == 0)
            return cJSON_GetStringValue(cJSON_GetObjectItem(f, "message"));
    return NULL;
}

/* Judges the launcher result json after a runtime.hip that loaded hip_lib. */
static void judge(sc_result *res, const char *hip_lib, const char *json)
{
    static const char layers[] =
        "[{\"name\":\"runtime\",\"probes\":[{\"id\":\"runtime.hip\",\"status\":\"pass\","
        "\"facts\":{\"runtime\":{\"realpath\":\"%s\"}}}]}]";
    char text[1024];
    snprintf(text, sizeof text, layers, hip_lib);
    sc_test_run t;
    sc_test_run_from_json(&t, text);
    sc_options opt;
    sc_options_init(&opt);
    sc_root root = {.dirfd = -1, .is_host = true};
    snprintf(root.path, sizeof root.path, "/");
    sc_ctx ctx = {.opt = &opt, .root = &root, .run = &t.rs};
    cJSON *result = cJSON_Parse(json);
    assert_non_null(result);
    assert_int_equal(sc_result_init(res), 0);
    sc_collective_check(&ctx, res, result);
    cJSON_Delete(result);
    sc_test_run_free(&t);
}

#define RANK(n, first, wrong, lib)                                                                 \
    "{\"rank\":" #n ",\"exit_code\":0,\"phase\":\"done\",\"result\":{\"backend\":\"nccl\","        \
    "\"build\":\"hip\",\"all_reduce\":{\"expected\":3,\"first\":" #first ",\"wrong\":" #wrong      \
    "},\"broadcast\":{\"wrong\":0},\"timed\":{\"bytes\":4194304,\"median_ms\":0.5},"               \
    "\"libraries\":[{\"path\":\"" lib "\",\"realpath\":\"" lib "\"}]}}"

static void test_rccl_from_another_root(void **state)
{
    (void)state;
    sc_result res;
    judge(&res, "/opt/dtk-24.04/lib/libamdhip64.so.6",
          "{\"world\":2,\"deadline_s\":30,\"ranks\":[" RANK(
              0, 3, 0,
              "/opt/rocm-6.2.0/lib/"
              "librccl.so.1") "," RANK(1, 3, 0, "/opt/rocm-6.2.0/lib/librccl.so.1") "]}");
    const char *m = message_of(&res, "collective.library-other-root");
    assert_non_null(m);
    assert_non_null(strstr(m, "/opt/rocm-6.2.0/lib/librccl.so.1 from /opt/rocm-6.2.0"));
    assert_non_null(strstr(m, "/opt/dtk-24.04/lib/libamdhip64.so.6 from /opt/dtk-24.04"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res.facts, "verified")));
    sc_result_free(&res);
    judge(&res, "/opt/rocm-6.2.0/lib/libamdhip64.so.6",
          "{\"world\":1,\"ranks\":[" RANK(0, 1, 0, "/opt/rocm-6.2.0/lib/librccl.so.1") "]}");
    assert_null(message_of(&res, "collective.library-other-root"));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(
                            cJSON_GetObjectItem(res.facts, "library"), "runtime_root")),
                        "/opt/rocm-6.2.0");
    sc_result_free(&res);
}

static void test_wrong_sum_failed_rank_and_hang(void **state)
{
    (void)state;
    sc_result res;
    judge(&res, "/usr/lib/libamdhip64.so.5",
          "{\"world\":2,\"ranks\":[" RANK(0, 4, 1024, "/usr/lib/librccl.so.1") "," RANK(
              1, 3, 0, "/usr/lib/librccl.so.1") "]}");
    const char *m = message_of(&res, "collective.wrong-result");
    assert_non_null(strstr(m, "rank 0: all-reduce gave 4 where 3 was expected"));
    assert_null(strstr(m, "rank 1"));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(res.facts, "verified")));
    sc_result_free(&res);
    judge(&res, "/usr/lib/libamdhip64.so.5",
          "{\"world\":2,\"ranks\":[{\"rank\":0,\"exit_code\":1,\"phase\":\"init_process_group "
          "(rendezvous)\",\"result\":null,\"log_tail\":\"Traceback\\nRuntimeError: Connection "
          "refused\\n\"}," RANK(1, 3, 0, "/usr/lib/librccl.so.1") "]}");
    m = message_of(&res, "collective.failed");
    assert_non_null(strstr(m, "rank 0 ended with exit status 1 in 'init_process_group"));
    assert_non_null(strstr(m, "Connection refused"));
    sc_result_free(&res);
    judge(&res, "/usr/lib/libamdhip64.so.5",
          "{\"world\":2,\"deadline_s\":30,\"expired\":\"collectives\",\"ranks\":["
          "{\"rank\":0,\"exit_code\":-9,\"phase\":\"collectives\",\"result\":null},"
          "{\"rank\":1,\"exit_code\":-9,\"phase\":\"barrier\",\"result\":null}]}");
    m = message_of(&res, "collective.hang");
    assert_non_null(strstr(m, "within 30.0 s"));
    assert_non_null(strstr(m, "rank 0 in 'collectives', rank 1 in 'barrier'"));
    assert_null(message_of(&res, "collective.failed")); /* killed, not failed */
    sc_result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rccl_from_another_root),
        cmocka_unit_test(test_wrong_sum_failed_rank_and_hang),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
