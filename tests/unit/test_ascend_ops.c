/* The Ascend parts of the framework layer (framework.ascend): torch_npu's version rules and release
 * table against torch and CANN, and the operator cache and kernel_meta directories judged by owner
 * and mode for a user of the test's choosing, on a scratch tree opened as the sysroot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "probe_harness.h"
#include "sc_ascend_ops.h"
#include "temp_tree.h"

static const cJSON *finding_of(const sc_result *res, const char *id)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, res->findings)
        if (strcmp(str(f, "id"), id) == 0)
            return f;
    return NULL;
}

/* Whether a finding id's message holds text (a run may have several of one id). */
static bool said(const sc_result *res, const char *id, const char *text)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, res->findings)
        if (strcmp(str(f, "id"), id) == 0 && strstr(str(f, "message"), text))
            return true;
    return false;
}

static void test_torch_npu_version_rules(void **state)
{
    (void)state;
    char v[32];
    assert_true(sc_torch_npu_torch_version("2.1.0.post3", v, sizeof v));
    assert_string_equal(v, "2.1.0");
    assert_true(sc_torch_npu_torch_version("2.10.0rc2", v, sizeof v));
    assert_string_equal(v, "2.10.0");
    assert_true(sc_torch_npu_torch_version("2.12.0", v, sizeof v));
    assert_string_equal(v, "2.12.0");
    assert_false(sc_torch_npu_torch_version("2.1", v, sizeof v));
    assert_false(sc_torch_npu_torch_version("", v, sizeof v));
    assert_string_equal(sc_torch_npu_cann("2.1.0.post13"), "8.2.RC1");
    assert_string_equal(sc_torch_npu_cann("2.7.1.post2"), "8.5.0");
    assert_null(sc_torch_npu_cann("2.1.0.post999"));
}

static void triple(sc_result *res, const char *torch, const char *npu, const char *cann)
{
    assert_int_equal(sc_result_init(res), 0);
    sc_ascend_check_triple(res, torch, npu, cann);
}

static void test_triple(void **state)
{
    (void)state;
    sc_result res;
    triple(&res, "2.1.0+cpu", "2.1.0.post13", "8.2.RC1.alpha002");
    assert_int_equal(cJSON_GetArraySize(res.findings), 0);
    assert_string_equal(str(cJSON_GetObjectItem(res.facts, "triple"), "cann_paired"), "8.2.RC1");
    sc_result_free(&res);
    triple(&res, "2.3.1", "2.1.0.post13", "8.0.RC3");
    assert_non_null(strstr(str(finding_of(&res, "ascend.torch-npu-mismatch"), "message"),
                           "torch_npu 2.1.0.post13 is built for torch 2.1.0, but torch 2.3.1"));
    assert_non_null(strstr(str(finding_of(&res, "ascend.torch-npu-cann-mismatch"), "message"),
                           "released for CANN 8.2.RC1, but CANN 8.0.RC3 is installed"));
    sc_result_free(&res);
    triple(&res, "2.1.0", NULL, "8.0.RC3"); /* no torch_npu: facts say so, no finding */
    assert_int_equal(cJSON_GetArraySize(res.findings), 0);
    assert_true(
        cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(res.facts, "triple"), "torch_npu")));
    sc_result_free(&res);
}

/* The cache dirs of a scratch tree with home/u/atc_data of the given owner and mode, and srv/job
 * (an ASCEND_WORK_PATH without kernel_meta yet) of that owner. */
static void cache_dirs(sc_result *res, const char *owner, const char *mode, const char *work)
{
    char dir[PATH_MAX];
    tree_new(dir);
    tree_dir(dir, "home/u/atc_data");
    tree_dir(dir, "srv/job");
    tree_sh("chown %s '%s/home/u/atc_data' '%s/srv/job' && chmod %s '%s/home/u/atc_data'", owner,
            dir, dir, mode, dir);
    sc_root root;
    sc_error err = {0};
    assert_int_equal(sc_root_open(&root, dir, &err), 0);
    assert_int_equal(sc_result_init(res), 0);
    sc_ascend_dirs_in in = {.home = "/home/u", .work_env = work, .uid = 1000, .gid = 1000};
    sc_ascend_check_cache_dirs(&root, res, &in);
    sc_root_close(&root);
    tree_sh("rm -rf '%s'", dir);
}

static void test_cache_dir_of_another_user(void **state)
{
    (void)state;
    sc_result res;
    cache_dirs(&res, "4242:4242", "0755", NULL);
    const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(res.facts, "operator_dirs"), 0);
    assert_string_equal(str(d, "path"), "/home/u/atc_data");
    assert_string_equal(str(d, "mode"), "0755");
    assert_int_equal((int)num(d, "owner_uid"), 4242);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(d, "writable")));
    assert_non_null(strstr(str(finding_of(&res, "ascend.cache-dir-unwritable"), "message"),
                           "belongs to uid 4242 with mode 0755: uid 1000 cannot write it"));
    sc_result_free(&res);
    cache_dirs(&res, "4242:4242", "0777", NULL);
    assert_null(finding_of(&res, "ascend.cache-dir-unwritable"));
    assert_non_null(finding_of(&res, "ascend.cache-dir-shared"));
    sc_result_free(&res);
}

static void test_own_cache_dir_and_work_path(void **state)
{
    (void)state;
    sc_result res;
    cache_dirs(&res, "0:0", "0755", "/srv/job"); /* root's: kernel_meta cannot be made there */
    assert_true(said(&res, "ascend.cache-dir-unwritable",
                     "kernel_meta directory /srv/job (ASCEND_WORK_PATH)"));
    sc_result_free(&res);
    cache_dirs(&res, "1000:1000", "0700", "/srv/job");
    assert_int_equal(cJSON_GetArraySize(res.findings), 0);
    const cJSON *meta = cJSON_GetArrayItem(cJSON_GetObjectItem(res.facts, "operator_dirs"), 1);
    assert_string_equal(str(meta, "path"), "/srv/job/kernel_meta");
    assert_string_equal(str(meta, "from"), "ASCEND_WORK_PATH");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(meta, "exists")));
    assert_string_equal(str(meta, "created_in"), "/srv/job");
    sc_result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torch_npu_version_rules),
        cmocka_unit_test(test_triple),
        cmocka_unit_test(test_cache_dir_of_another_user),
        cmocka_unit_test(test_own_cache_dir_and_work_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
