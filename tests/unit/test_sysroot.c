/* The sysroot: reads inside the root, absolute and relative symlinks that try to leave it, "..",
 * symlink loops, access checks, and the same through the component walk used without openat2. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sc_sysroot.h"

static char root_dir[] = "/tmp/sc-sysroot-XXXXXX";

static void put(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root_dir, rel);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void link_at(const char *target, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root_dir, rel);
    assert_int_equal(symlink(target, path), 0);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(root_dir))
        return -1;
    char path[512];
    snprintf(path, sizeof path, "%s/etc", root_dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/opt", root_dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/opt/dtk-24.04", root_dir);
    mkdir(path, 0755);
    put("etc/os-release", "ID=fixture\nVERSION_ID=\"1\"\n");
    put("etc/hostname", "inside\n");
    put("opt/dtk-24.04/version", "24.04\n");
    link_at("/etc/os-release", "escape-abs");                /* absolute: must stay inside */
    link_at("../../../../../../etc/hostname", "escape-rel"); /* ".." past the root */
    link_at("dtk-24.04", "opt/dtk");
    link_at("loop-b", "loop-a");
    link_at("loop-a", "loop-b");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void check_root(bool walk_only)
{
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, root_dir, &err), 0);
    root.walk_only = walk_only;
    char buf[256];
    assert_int_equal(sc_root_read_line(&root, "/escape-abs", buf, sizeof buf), 0);
    assert_string_equal(buf, "ID=fixture");
    assert_int_equal(sc_root_read_line(&root, "/escape-rel", buf, sizeof buf), 0);
    assert_string_equal(buf, "inside");
    assert_int_equal(sc_root_read_line(&root, "/opt/dtk/version", buf, sizeof buf), 0);
    assert_string_equal(buf, "24.04");
    assert_int_equal(sc_root_read_line(&root, "/../../etc/hostname", buf, sizeof buf), 0);
    assert_string_equal(buf, "inside");
    assert_int_equal(sc_root_read_line(&root, "/loop-a", buf, sizeof buf), -ELOOP);
    assert_int_equal(sc_root_read_line(&root, "/missing", buf, sizeof buf), -ENOENT);
    assert_true(sc_root_readlink(&root, "/opt/dtk", buf, sizeof buf) > 0);
    assert_string_equal(buf, "dtk-24.04");
    assert_int_equal(sc_root_realpath(&root, "/opt/dtk", buf, sizeof buf), 0);
    assert_string_equal(buf, "/opt/dtk-24.04");
    assert_int_equal(sc_root_access(&root, "/etc/os-release", R_OK), 0);
    assert_true(sc_root_exists(&root, "/opt/dtk"));
    assert_false(sc_root_exists(&root, "/opt/rocm"));
    struct stat st;
    assert_int_equal(sc_root_stat(&root, "/opt/dtk", &st, false), 0);
    assert_true(S_ISLNK(st.st_mode));
    char *text;
    assert_int_equal(sc_root_read(&root, "/etc/os-release", &text, 4), 4); /* cut at max */
    assert_string_equal(text, "ID=f");
    free(text);
    sc_root_close(&root);
}

static void test_openat2(void **state)
{
    (void)state;
    check_root(false);
}

static void test_component_walk(void **state)
{
    (void)state;
    check_root(true);
}

static void test_bad_root(void **state)
{
    (void)state;
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, "/nonexistent/root", &err), -ENOENT);
    assert_non_null(strstr(err.message, "/nonexistent/root"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_openat2),
        cmocka_unit_test(test_component_walk),
        cmocka_unit_test(test_bad_root),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
