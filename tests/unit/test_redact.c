/* Redaction: the environment allowlist, secret names, value scrubbing of the secret corpus
 * (tests/data/secret_corpus.txt), output windows redacted before they are cut, and the one door
 * out over a JSON tree (values and keys, valid UTF-8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sc_redact.h"
#include "sc_text.h"

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
    /* allowed prefixes with secret-looking names: redacted all the same */
    assert_true(sc_env_name_secret("HCCL_PASSPHRASE"));
    assert_true(sc_env_name_secret("NCCL_PSK"));
    assert_true(sc_env_name_secret("CUDA_DB_PWD"));
    assert_true(sc_env_name_secret("TORCH_CREDENTIALS"));
    assert_true(sc_env_name_secret("HIP_AUTHORIZATION_HEADER"));
    assert_true(sc_env_name_secret("ROCM_SIGNING_KEY"));
    assert_true(sc_env_name_secret("HSA_KEY_PATH")); /* no exception for *_KEY_PATH: see below */
    /* the named exception: an InfiniBand partition index, not a secret */
    assert_false(sc_env_name_secret("NCCL_IB_PKEY"));
    assert_false(sc_env_name_secret("PYTORCH_CUDA_ALLOC_CONF"));
    assert_false(sc_env_name_secret("OMP_NUM_THREADS"));
}

static void test_secret_names_in_text(void **state)
{
    (void)state;
    static const char *const secret[] = {
        "password",   "DB_PASSWORD", "api_key",       "apiKey",        "X-Api-Key", "--token",
        "auth_token", "session_id",  "client_secret", "Authorization", "sig",       "NCCL_PSK"};
    static const char *const plain[] = {"KeyError", "max_tokens",  "tokenizer", "signal",
                                        "author",   "passed",      "key_path",  "state_dict",
                                        "user",     "NCCL_IB_PKEY"};
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++)
        assert_true(sc_secret_name(secret[i], strlen(secret[i])));
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        assert_false(sc_secret_name(plain[i], strlen(plain[i])));
}

/* Turns the two characters "\n" of a corpus line into line breaks, in place. */
static void unescape(char *s)
{
    char *o = s;
    for (; *s; s++) {
        if (s[0] == '\\' && s[1] == 'n') {
            *o++ = '\n';
            s++;
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
}

/* One corpus line: a leak case loses every secret, a keep case comes out unchanged. */
static void check_corpus_line(char *line)
{
    char *save = NULL, *kind = strtok_r(line, "\t", &save), *text = strtok_r(NULL, "\t", &save);
    assert_non_null(text);
    unescape(text);
    char *out = sc_redact_value(text);
    assert_non_null(out);
    if (strcmp(kind, "keep") == 0) {
        assert_string_equal(out, text);
    } else {
        assert_string_equal(kind, "leak");
        char *secret;
        int count = 0;
        while ((secret = strtok_r(NULL, "\t", &save)) != NULL) {
            if (strstr(out, secret))
                fail_msg("'%s' leaks from '%s' as '%s'", secret, text, out);
            count++;
        }
        assert_true(count > 0);
        assert_non_null(strstr(out, "[redacted]"));
        char *again = sc_redact_value(out); /* the door may be passed twice */
        assert_string_equal(again, out);
        free(again);
    }
    free(out);
}

static void test_secret_corpus(void **state)
{
    (void)state;
    char path[4096];
    const char *src = getenv("SC_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/data/secret_corpus.txt", src ? src : ".");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        check_corpus_line(line);
        cases++;
    }
    fclose(f);
    assert_true(cases >= 40);
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

static void assert_tail(const char *raw, bool cut_front, size_t keep, const char *expected)
{
    char *out = sc_redact_tail(raw, strlen(raw), cut_front, keep);
    assert_non_null(out);
    assert_string_equal(out, expected);
    free(out);
}

static void test_tail_redacted_before_cut(void **state)
{
    (void)state;
    /* the secret is longer than what is kept: cut first, its end would stay without its name */
    char raw[4096];
    snprintf(raw, sizeof raw, "start\npassword=%0400d\nlast line\n", 7);
    assert_tail(raw, false, 30, "password=[redacted]\nlast line\n");
    /* the window itself began inside a value: its partial first line goes */
    assert_tail("0000000007\nnext\n", true, 100, "next\n");
    assert_tail("0000000007 and more", true, 100, "and more");
    assert_tail("00000000000000000007", true, 100, "");
    /* a private key whose BEGIN line was cut off */
    assert_tail("KEYBODY\n-----END RSA PRIVATE KEY-----\nafter", false, 100, "[redacted]\nafter");
    assert_tail("x\nKEYBODY\n-----END RSA PRIVATE KEY-----\nafter", true, 100, "[redacted]\nafter");
    /* the cut falls on a character boundary, and invalid bytes become U+FFFD */
    assert_tail("\xff\xe2\x82\xac", false, 4, "\xe2\x82\xac");
    assert_tail("\xff\xe2\x82\xac", false, 6, "\xef\xbf\xbd\xe2\x82\xac");
}

static void test_format_redacts_before_cut(void **state)
{
    (void)state;
    char small[24];
    sc_redact_format(small, sizeof small, "login: password=%s", "ghp_0123456789abcdefghij");
    assert_string_equal(small, "login: password=[redact"); /* the cut comes after */
    char euro[6];
    sc_redact_format(euro, sizeof euro, "ab%s", "\xe2\x82\xac\xe2\x82\xac");
    assert_string_equal(euro, "ab\xe2\x82\xac");
}

static void test_door_cleans_values_and_keys(void **state)
{
    (void)state;
    cJSON *tree = cJSON_CreateObject();
    cJSON_AddStringToObject(tree, "msg", "bad \xff byte, token=abc123/def:ghi@jkl");
    cJSON_AddStringToObject(tree, "https://u:pw0rd-Zz@h.example/ key", "v");
    sc_redact_json(tree);
    char *text = cJSON_PrintUnformatted(tree);
    assert_string_equal(text, "{\"msg\":\"bad \xef\xbf\xbd byte, token=[redacted]\","
                              "\"https://[redacted]@h.example/ key\":\"v\"}");
    free(text);
    cJSON_Delete(tree);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allowlist),
        cmocka_unit_test(test_secret_names),
        cmocka_unit_test(test_urls),
        cmocka_unit_test(test_pairs_and_tokens),
        cmocka_unit_test(test_env_capture),
        cmocka_unit_test(test_redact_json_tree),
        cmocka_unit_test(test_secret_names_in_text),
        cmocka_unit_test(test_secret_corpus),
        cmocka_unit_test(test_tail_redacted_before_cut),
        cmocka_unit_test(test_format_redacts_before_cut),
        cmocka_unit_test(test_door_cleans_values_and_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
