/* Redaction: the environment allowlist, secret names, and value scrubbing of URLs, query strings,
 * key=value pairs, bearer tokens, token shapes and internal hosts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sc_redact.h"

static void assert_scrubbed(const char *in, const char *expected)
{
    char *out = sc_redact_value(in);
    assert_non_null(out);
    assert_string_equal(out, expected);
    free(out);
}

static void test_allowlist(void **state)
{
    (void)state;
    assert_true(sc_env_allowed("HIP_VISIBLE_DEVICES"));
    assert_true(sc_env_allowed("ROCR_VISIBLE_DEVICES"));
    assert_true(sc_env_allowed("CUDA_VISIBLE_DEVICES"));
    assert_true(sc_env_allowed("ASCEND_RT_VISIBLE_DEVICES"));
    assert_true(sc_env_allowed("HSA_OVERRIDE_GFX_VERSION"));
    assert_true(sc_env_allowed("LD_LIBRARY_PATH"));
    assert_true(sc_env_allowed("PYTORCH_ROCM_ARCH"));
    assert_true(sc_env_allowed("NCCL_DEBUG"));
    assert_false(sc_env_allowed("HOME"));
    assert_false(sc_env_allowed("AWS_SECRET_ACCESS_KEY"));
    assert_false(sc_env_allowed("HF_TOKEN"));
}

static void test_secret_names(void **state)
{
    (void)state;
    assert_true(sc_env_name_secret("TORCH_HUB_TOKEN"));
    assert_true(sc_env_name_secret("NCCL_SECRET"));
    assert_true(sc_env_name_secret("HIP_API_KEY"));
    assert_true(sc_env_name_secret("ASCEND_password"));
    assert_false(sc_env_name_secret("HIP_VISIBLE_DEVICES"));
}

static void test_urls(void **state)
{
    (void)state;
    assert_scrubbed("https://alice:s3cr3t@example.com/simple",
                    "https://[redacted]@example.com/simple");
    assert_scrubbed("https://oauth2token@git.example.com/x.git",
                    "https://[redacted]@git.example.com/x.git");
    assert_scrubbed("https://example.com/f.whl?token=abc123&x=1",
                    "https://example.com/f.whl?token=[redacted]&x=1");
    assert_scrubbed("http://10.1.2.3:8080/pkgs", "http://[internal-host]:8080/pkgs");
    assert_scrubbed("https://mirror.corp/pkgs", "https://[internal-host]/pkgs");
    assert_scrubbed("https://pypi.org/simple", "https://pypi.org/simple");
}

static void test_pairs_and_tokens(void **state)
{
    (void)state;
    assert_scrubbed("--password=hunter2 --x=1", "--password=[redacted] --x=1");
    assert_scrubbed("Authorization: Bearer eyJhbGciOi.abc", "Authorization: Bearer [redacted]");
    assert_scrubbed("use ghp_0123456789abcdefghij now", "use [redacted] now");
    assert_scrubbed("hf_abcdefghijklmnopqrstuvwxyz", "[redacted]");
    assert_scrubbed("AKIAABCDEFGHIJKLMNOP", "[redacted]");
    assert_scrubbed("/opt/dtk/lib:/opt/rocm/lib", "/opt/dtk/lib:/opt/rocm/lib");
    assert_scrubbed("", "");
}

static void test_env_capture(void **state)
{
    (void)state;
    char *envp[] = {"HIP_VISIBLE_DEVICES=0,1",        "HOME=/home/u",
                    "TORCH_HUB_TOKEN=abcdef",         "PYTHONPATH=https://u:p@h.example/x",
                    "HF_TOKEN=hf_zzzzzzzzzzzzzzzzzz", NULL};
    cJSON *env = sc_env_capture(envp);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(env, "HIP_VISIBLE_DEVICES")),
                        "0,1");
    assert_null(cJSON_GetObjectItem(env, "HOME"));
    assert_null(cJSON_GetObjectItem(env, "HF_TOKEN"));
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(env, "TORCH_HUB_TOKEN")),
                        "[redacted]");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(env, "PYTHONPATH")),
                        "https://[redacted]@h.example/x");
    char *text = cJSON_PrintUnformatted(env);
    assert_null(strstr(text, "abcdef"));
    assert_null(strstr(text, "zzzz"));
    free(text);
    cJSON_Delete(env);
}

static void test_redact_json_tree(void **state)
{
    (void)state;
    cJSON *tree =
        cJSON_Parse("{\"a\":[\"--app\",\"curl https://x:y@h.io/?key=K\"],\"b\":{\"c\":\"ok\"}}");
    sc_redact_json(tree);
    char *text = cJSON_PrintUnformatted(tree);
    assert_string_equal(text, "{\"a\":[\"--app\",\"curl "
                              "https://[redacted]@h.io/?key=[redacted]\"],\"b\":{\"c\":\"ok\"}}");
    free(text);
    cJSON_Delete(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allowlist),   cmocka_unit_test(test_secret_names),
        cmocka_unit_test(test_urls),        cmocka_unit_test(test_pairs_and_tokens),
        cmocka_unit_test(test_env_capture), cmocka_unit_test(test_redact_json_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
