/* driver.ascend's parsers and runtime.acl: version.info lookups, dotted-version order with rc
 * parts, the firmware-in-range check on the driver's own compatible_version_fw, the Ascend
 * kernel-log scan, the toolkit inventory on the 910B fixture, and runtime.acl run by the real
 * runner against the stub libascendcl where the environment matters (hidden devices, no library);
 * what each stub behaviour gives is the conformance table's (integration.test_conformance). The
 * stub is found by soname: the test re-executes itself with a directory first on LD_LIBRARY_PATH
 * that holds libascendcl.so pointing at the stub. */
#include <errno.h>
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
#include "probes.h"
#include "sc_acl.h"
#include "sc_ascend.h"
#include "sc_ascend_install.h"
#include "sc_runner.h"

static void test_info_get(void **state)
{
    (void)state;
    static const char text[] = "Version=24.1.rc3\nascendhal_version=7.35.23\n"
                               "  Innerversion = V100R001C19SPC002B225\n"
                               "compatible_version_fw=[7.0.0,7.5.99]\nempty=\nbad=a\x01b\n";
    char v[64];
    assert_true(sc_ascend_info_get(text, "version", v, sizeof v)); /* any case */
    assert_string_equal(v, "24.1.rc3");
    assert_true(sc_ascend_info_get(text, "Innerversion", v, sizeof v));
    assert_string_equal(v, "V100R001C19SPC002B225");
    assert_true(sc_ascend_info_get(text, "compatible_version_fw", v, sizeof v));
    assert_string_equal(v, "[7.0.0,7.5.99]");
    assert_false(sc_ascend_info_get(text, "empty", v, sizeof v));
    assert_false(sc_ascend_info_get(text, "bad", v, sizeof v));
    assert_false(sc_ascend_info_get(text, "ascendhal", v, sizeof v)); /* a prefix is not a key */
    assert_false(sc_ascend_info_get(text, "Version", v, 4));          /* does not fit */
}

static int cmp(const char *a, const char *b)
{
    int c = 99;
    assert_int_equal(sc_ascend_version_cmp(a, b, 0, &c), 0);
    return c;
}

static void test_version_order(void **state)
{
    (void)state;
    assert_int_equal(cmp("7.7.0.1.231", "7.7.0.1.231"), 0);
    assert_int_equal(cmp("7.10.0", "7.9.99"), 1); /* numbers, not text */
    assert_int_equal(cmp("25.0.rc1.1", "25.0.0"), -1);
    assert_int_equal(cmp("25.0.rc1", "25.0.rc2"), -1);
    assert_int_equal(cmp("8.0.RC3", "8.0.rc3"), 0);
    assert_int_equal(cmp("1.0.alpha1", "1.0.beta1"), -1);
    assert_int_equal(cmp("1.0.0rc1", "1.0.0"), -1);
    assert_int_equal(cmp("7.5", "7.5.0"), 0);
    int c;
    assert_int_equal(sc_ascend_version_cmp("7.5.99.3", "7.5.99", 3, &c), 0);
    assert_int_equal(c, 0); /* counted to the bound's three parts */
    assert_int_equal(sc_ascend_version_cmp("", "1", 0, &c), -EINVAL);
    assert_int_equal(sc_ascend_version_cmp("1..2", "1", 0, &c), -EINVAL);
    assert_int_equal(sc_ascend_version_cmp("1.2 ", "1", 0, &c), -EINVAL);
    assert_int_equal(sc_ascend_version_cmp("1234567890123456789", "1", 0, &c), -EINVAL);
    assert_int_equal(sc_ascend_version_parts("1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16"), 16);
    assert_int_equal(sc_ascend_version_parts("1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17"), 0);
}

static void test_fw_range(void **state)
{
    (void)state;
    char r[128];
    assert_int_equal(sc_ascend_fw_in_range("[7.0.0,7.7.99]", "7.7.0.1.231", r, sizeof r), 1);
    assert_string_equal(r, "[7.0.0,7.7.99]");
    assert_int_equal(sc_ascend_fw_in_range("[7.0.0,7.7.99]", "7.0.0.5.242", r, sizeof r), 1);
    assert_int_equal(sc_ascend_fw_in_range("[7.0.0,7.7.99]", "7.7.99.9", r, sizeof r), 1);
    /* the seed's story: firmware two major versions behind the driver */
    assert_int_equal(sc_ascend_fw_in_range("[7.0.0,7.5.99]", "5.1.0.2.220", r, sizeof r), 0);
    assert_int_equal(sc_ascend_fw_in_range("[7.0.0,7.5.99]", "7.6.0.1", r, sizeof r), 0);
    assert_int_equal(sc_ascend_fw_in_range("[6.0.0, 6.4.99],[7.0.0,7.1.99]", "7.1.0", r, sizeof r),
                     1);
    assert_string_equal(r, "[6.0.0,6.4.99], [7.0.0,7.1.99]");
    assert_int_equal(sc_ascend_fw_in_range("[7.1.0]", "7.1.0.3", r, sizeof r), 1);
    assert_int_equal(sc_ascend_fw_in_range("7.0.0,7.7.99", "7.1.0", r, sizeof r), -EINVAL);
    assert_int_equal(sc_ascend_fw_in_range("[x,y]", "7.1.0", r, sizeof r), -EINVAL);
    assert_int_equal(sc_ascend_fw_in_range("[7.0.0,7.7.99", "7.1.0", r, sizeof r), -EINVAL);
    assert_int_equal(sc_ascend_fw_in_range("[7.0.0,7.7.99]", "unknown", r, sizeof r), -EINVAL);
}

static void test_kmsg_scan(void **state)
{
    (void)state;
    static const char log[] =
        "6,100,1000,-;[ascend] [devdrv] [devdrv_manager_init 1024] devdrv manager init success.\n"
        "3,101,1001,-;[ascend] [ERROR] [devdrv] [devdrv_heart_beat_judge 1581] device 0 heartbeat "
        "lost, tsid 0.\n"
        "Nov 29 08:02:12 node kernel: davinci 0000:c1:00.0: firmware load timeout\n"
        "Nov 29 08:02:13 node kernel: e1000e eth0: link error (not ours)\n"
        "Nov 29 08:02:14 node kernel: [drm] HDCP failed (not ours either)\n";
    sc_ascend_kmsg_result r;
    sc_ascend_kmsg_scan(log, sizeof log - 1, &r);
    assert_int_equal(r.lines, 5);
    assert_int_equal(r.total, 2);
    assert_true(strncmp(r.first[0].line, "[ascend] [ERROR]", 16) == 0); /* record prefix gone */
    assert_non_null(strstr(r.first[1].line, "firmware load timeout"));
    static const char nul[] = "[ascend] error\0\x1b[31m x\n";
    sc_ascend_kmsg_scan(nul, sizeof nul - 1, &r);
    assert_int_equal(r.total, 1);
    assert_non_null(strstr(r.first[0].line, "\\x00\\x1b"));
    sc_ascend_kmsg_scan(NULL, 0, &r);
    assert_int_equal(r.lines, 0);
}

static void test_acl_errors(void **state)
{
    (void)state;
    char b[128];
    assert_string_equal(sc_acl_error_name(207004), "ACL_ERROR_RT_NO_DEVICE");
    assert_string_equal(sc_acl_error_name(507033), "ACL_ERROR_RT_DEV_SETUP_ERROR");
    assert_null(sc_acl_error_name(1));
    sc_acl_describe(NULL, 207004, b, sizeof b);
    assert_string_equal(b, "ACL_ERROR_RT_NO_DEVICE (207004)");
}

static void test_toolkit_inventory(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/ascend-910b", getenv("SC_SOURCE_DIR"));
    sc_root root;
    sc_error err = {0};
    assert_int_equal(sc_root_open(&root, dir, &err), 0);
    char install[256];
    assert_true(sc_ascend_install_dir(&root, install, sizeof install));
    assert_string_equal(install, "/usr/local/Ascend");
    sc_ascend_toolkits *tks = calloc(1, sizeof *tks);
    sc_ascend_toolkits_collect(&root, install, tks);
    assert_int_equal(tks->count, 1);
    assert_string_equal(tks->items[0].version, "8.0.RC3");
    assert_string_equal(tks->items[0].root, "/usr/local/Ascend/ascend-toolkit/8.0.RC3");
    assert_string_equal(tks->items[0].package, "Ascend-cann-toolkit");
    assert_string_equal(tks->items[0].arch, "x86_64");
    free(tks);
    sc_root_close(&root);
}

/* ---- runtime.acl through the runner, against the stub ---- */

/* Stands in for driver.ascend on a healthy 910B node. */
static void fake_driver_run(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    static const char *const pci[] = {"0000:81:00.0", "0000:c1:00.0"};
    cJSON *devs = cJSON_AddArrayToObject(res->facts, "devices");
    for (int i = 0; i < 2; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "pci_address", pci[i]);
        cJSON_AddStringToObject(d, "model", "Ascend 910B");
        cJSON_AddItemToArray(devs, d);
    }
}

static const sc_probe fake_driver = {.id = "driver.ascend",
                                     .layer = SC_LAYER_DRIVER,
                                     .backend = SC_BACKEND_ASCEND,
                                     .run = fake_driver_run};

static cJSON *run_acl(const char *mode, double timeout_s, cJSON **snap)
{
    setenv("SC_ACLSTUB_MODE", mode, 1);
    const sc_probe *table[] = {&fake_driver, &sc_probe_runtime_acl, NULL};
    return sc_test_run_table(table, timeout_s, "runtime.acl", snap);
}

static void test_stub_devices_hidden(void **state)
{
    (void)state;
    cJSON *snap;
    unsetenv("ASCEND_VISIBLE_DEVICES");
    setenv("ASCEND_RT_VISIBLE_DEVICES", "7", 1);
    cJSON *p = run_acl("no-device", 0, &snap);
    unsetenv("ASCEND_RT_VISIBLE_DEVICES");
    const cJSON *f = finding(p, "acl.devices-hidden");
    assert_non_null(f);
    assert_non_null(strstr(str(f, "message"), "ASCEND_RT_VISIBLE_DEVICES=\"7\""));
    assert_null(finding(p, "acl.no-device"));
    cJSON_Delete(snap);
}

static void test_library_not_found(void **state)
{
    (void)state;
    /* the loader searches LD_LIBRARY_PATH's directories at dlopen time: take the link away */
    char link[4200], target[4096];
    snprintf(link, sizeof link, "%s/libascendcl.so", getenv("SC_ACLTEST_LIBDIR"));
    ssize_t n = readlink(link, target, sizeof target - 1);
    assert_true(n > 0);
    target[n] = '\0';
    assert_int_equal(unlink(link), 0);
    cJSON *snap;
    cJSON *p = run_acl("ok", 0, &snap);
    assert_int_equal(symlink(target, link), 0);
    assert_string_equal(str(p, "status"), "fail");
    const cJSON *f = finding(p, "acl.library-not-found");
    assert_non_null(f);
    assert_non_null(strstr(str(f, "message"), "could not load libascendcl.so"));
    assert_non_null(strstr(str(f, "hint"), "set_env.sh"));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "facts"), "library")));
    cJSON_Delete(snap);
}

/* Puts libascendcl.so (a link to the stub) in a fresh directory first on LD_LIBRARY_PATH and
 * re-executes, since the loader reads LD_LIBRARY_PATH only at start-up. */
static void reexec_with_stub(char **argv)
{
    const char *stubdir = getenv("SC_STUB_DIR");
    char tmpl[] = "/tmp/sc-acltest-XXXXXX", stub[4096], path[4200];
    if (!stubdir || !mkdtemp(tmpl)) {
        fprintf(stderr, "test_ascend: SC_STUB_DIR unset or no temp dir\n");
        exit(1);
    }
    snprintf(stub, sizeof stub, "%s/libaclstub.so", stubdir);
    snprintf(path, sizeof path, "%s/libascendcl.so", tmpl);
    if (symlink(stub, path) < 0) {
        perror("symlink");
        exit(1);
    }
    setenv("LD_LIBRARY_PATH", tmpl, 1);
    setenv("SC_ACLTEST_LIBDIR", tmpl, 1);
    execv("/proc/self/exe", argv);
    perror("execv");
    exit(1);
}

static void remove_stub_dir(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/libascendcl.so", dir);
    unlink(path);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("SC_ACLTEST_LIBDIR"))
        reexec_with_stub(argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_get),
        cmocka_unit_test(test_version_order),
        cmocka_unit_test(test_fw_range),
        cmocka_unit_test(test_kmsg_scan),
        cmocka_unit_test(test_acl_errors),
        cmocka_unit_test(test_toolkit_inventory),
        cmocka_unit_test(test_stub_devices_hidden),
        cmocka_unit_test(test_library_not_found),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    remove_stub_dir(getenv("SC_ACLTEST_LIBDIR"));
    return rc;
}
