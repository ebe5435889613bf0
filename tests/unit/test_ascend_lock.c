/* The Ascend environment lock's parsers on real text: version.cfg lines (a 910B node's, from
 * vllm-ascend issue 451, and an image's whose labels disagree), release lines of Innerversions,
 * compatible_version lists with single lines and ranges (the lists of CANN 8.0.RC1, 8.0.0, 8.5.0
 * and the driver 24.1.rc3 as users posted them), malformed input, and the layout reader on the two
 * fixture roots transcribed from public dumps. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sc_ascend.h"
#include "sc_ascend_install.h"

static void test_version_cfg(void **state)
{
    (void)state;
    char comp[64], cann[64];
    static const char n451[] = "# version: 1.0\nruntime_running_version=[7.6.0.1.220:8.0.0]\n"
                               "compiler_running_version=[7.6.0.1.220:8.0.0]\n";
    assert_true(sc_ascend_cfg_running(n451, "runtime_running_version", comp, sizeof comp, cann,
                                      sizeof cann));
    assert_string_equal(comp, "7.6.0.1.220");
    assert_string_equal(cann, "8.0.0");
    /* an installed_version line holds the history; the first group is read */
    static const char hist[] = "runtime_installed_version=[7.0.0.5.242:7.0.RC1][7.3.0.1.231:"
                               "8.0.RC2]\nruntime_running_version=[7.6.T13.0.B094:8.0.T63]\n";
    assert_true(sc_ascend_cfg_running(hist, "runtime_installed_version", comp, sizeof comp, cann,
                                      sizeof cann));
    assert_string_equal(cann, "7.0.RC1");
    assert_true(sc_ascend_cfg_running(hist, "runtime_running_version", comp, sizeof comp, cann,
                                      sizeof cann));
    assert_string_equal(comp, "7.6.T13.0.B094");
    assert_string_equal(cann, "8.0.T63");
    /* HCCL's own comment shows the older form with a CANN- prefix */
    assert_true(sc_ascend_cfg_running("runtime_running_version=[1.83.T8.0.B128:CANN-1.83]",
                                      "runtime_running_version", comp, sizeof comp, cann,
                                      sizeof cann));
    assert_string_equal(cann, "1.83");
    static const char *const bad[] = {"runtime_running_version=7.6.0:8.0.0",
                                      "runtime_running_version=[7.6.0.1.220]",
                                      "runtime_running_version=[:8.0.0]",
                                      "runtime_running_version=[7.6.0:]",
                                      "runtime_running_version=[7.6.0:8.0.0",
                                      "runtime_running_version=[a]:b",
                                      "runtime_running_version=[\x01:\x02]",
                                      "toolkit_running_version=[7.6.0:8.0.0]",
                                      ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(sc_ascend_cfg_running(bad[i], "runtime_running_version", comp, sizeof comp,
                                           cann, sizeof cann));
    char small[4];
    assert_false(sc_ascend_cfg_running(n451, "runtime_running_version", comp, sizeof comp, small,
                                       sizeof small));
}

static void test_release_lines(void **state)
{
    (void)state;
    long long l[3];
    assert_true(sc_ascend_release_line("V100R001C19SPC002B225", l));
    assert_true(l[0] == 100 && l[1] == 1 && l[2] == 19);
    assert_true(sc_ascend_release_line("V100R001C21B054", l));
    assert_true(l[2] == 21);
    assert_true(sc_ascend_release_line("v100r003c11", l));
    assert_true(l[1] == 3 && l[2] == 11);
    static const char *const bad[] = {"",         "R001C19",         "V100C19",
                                      "V100R001", "VxR001C1",        "V100R001C",
                                      "100R1C1",  "V1234567890R1C1", "V100R-1C1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(sc_ascend_release_line(bad[i], l));
}

static void test_compatible_lists(void **state)
{
    (void)state;
    char groups[256];
    /* CANN 8.0.0's list and driver 24.1.rc3 (line C19) */
    static const char cann800[] =
        "[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19],[V100R001C20]";
    assert_int_equal(
        sc_ascend_line_compatible(cann800, "V100R001C19SPC001B124", groups, sizeof groups), 1);
    assert_string_equal(groups, cann800);
    assert_int_equal(sc_ascend_line_compatible(cann800, "V100R001C21B054", groups, sizeof groups),
                     0);
    /* CANN 8.0.RC1's list mixes a range with single lines and another R */
    static const char rc1[] = "[V100R001C15,V100R001C18],[V100R001C30],[V100R001C13],"
                              "[V100R003C11],[V100R001C29],[V100R001C10]";
    assert_int_equal(sc_ascend_line_compatible(rc1, "V100R001C16SPC001B1", groups, sizeof groups),
                     1);
    assert_int_equal(sc_ascend_line_compatible(rc1, "V100R001C19SPC001B124", groups, sizeof groups),
                     0);
    assert_int_equal(sc_ascend_line_compatible(rc1, "V100R003C11B1", groups, sizeof groups), 1);
    assert_int_equal(sc_ascend_line_compatible(rc1, "V100R002C16", groups, sizeof groups), 0);
    assert_string_equal(groups, "[V100R001C15,V100R001C18],[V100R001C30],[V100R001C13],"
                                "[V100R003C11],[V100R001C29],[V100R001C10]");
    /* CANN 9.0.0 reported to list only C25; a 25.5.1 driver is line C23 */
    assert_int_equal(
        sc_ascend_line_compatible("[V100R001C25]", "V100R001C23SPC006B220", groups, sizeof groups),
        0);
    /* a malformed group is skipped; nothing well formed is -EINVAL */
    assert_int_equal(
        sc_ascend_line_compatible("[x],[V100R001C19]", "V100R001C19", groups, sizeof groups), 1);
    static const char *const bad[] = {
        "", "[]", "[x]", "V100R001C19", "[V100R001C19", "[V100R001C19,]", "[,V100R001C19]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sc_ascend_line_compatible(bad[i], "V100R001C19", groups, sizeof groups),
                         -EINVAL);
    assert_int_equal(sc_ascend_line_compatible(cann800, "24.1.rc3", groups, sizeof groups),
                     -EINVAL);
}

static sc_ascend_toolkits *collect(const char *fixture, sc_root *root)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/%s", getenv("SC_SOURCE_DIR"), fixture);
    sc_error err = {0};
    assert_int_equal(sc_root_open(root, dir, &err), 0);
    sc_ascend_toolkits *tks = calloc(1, sizeof *tks);
    assert_non_null(tks);
    sc_ascend_toolkits_collect(root, "/usr/local/Ascend", tks);
    return tks;
}

static void test_layout_of_real_dumps(void **state)
{
    (void)state;
    sc_root root;
    sc_ascend_toolkits *tks = collect("ascend-cann-links-disagree", &root);
    assert_int_equal(tks->count, 1);
    const sc_ascend_toolkit *tk = &tks->items[0];
    assert_string_equal(tk->dir_version, "8.2.RC2");
    assert_string_equal(tk->dir_other, "");
    assert_string_equal(tk->cfg_version, "8.0.T63");
    assert_string_equal(tk->cfg_component, "7.6.T13.0.B094");
    assert_string_equal(tk->version, "8.0.T63");
    assert_non_null(strstr(tk->info, "/latest/version.cfg"));
    free(tks);
    sc_root_close(&root);
    tks = collect("ascend-cann85-layout", &root);
    assert_int_equal(tks->count, 1);
    tk = &tks->items[0];
    assert_string_equal(tk->via, "/usr/local/Ascend/cann");
    assert_string_equal(tk->dir_version, "8.5.0");
    assert_string_equal(tk->innerversion, "V100R001C25SPC001B212");
    assert_string_equal(tk->cfg_version, "");
    free(tks);
    sc_root_close(&root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_cfg),
        cmocka_unit_test(test_release_lines),
        cmocka_unit_test(test_compatible_lists),
        cmocka_unit_test(test_layout_of_real_dumps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
