/* The sysroot: reads inside the root, absolute and relative symlinks that try to leave it, "..",
 * symlink loops, access checks, and the same through the component walk used without openat2;
 * FIFOs, devices and directories refused where a file is read, and procfs files read whole. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
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

/* A FIFO, a device node and a directory where a file is expected: refused at once (an alarm
 * fails the test rather than letting a blocked open hang it), the special files recorded. */
static void check_special_files(bool walk_only)
{
    char path[512];
    snprintf(path, sizeof path, "%s/etc/fifo", root_dir);
    if (access(path, F_OK) != 0)
        assert_int_equal(mkfifo(path, 0644), 0);
    snprintf(path, sizeof path, "%s/etc/chardev", root_dir);
    bool have_dev = access(path, F_OK) == 0 || mknod(path, S_IFCHR | 0644, makedev(1, 3)) == 0;
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, root_dir, &err), 0);
    root.walk_only = walk_only;
    sc_root_refusals_clear();
    alarm(10);
    char *text = NULL, line[64];
    assert_int_equal(sc_root_read(&root, "/etc/fifo", &text, 4096), -SC_ENOTREG);
    assert_null(text);
    assert_int_equal(sc_root_read_line(&root, "/etc/fifo", line, sizeof line), -SC_ENOTREG);
    assert_int_equal(sc_root_open_file(&root, "/etc", NULL), -EISDIR);
    if (have_dev)
        assert_int_equal(sc_root_open_file(&root, "/etc/chardev", NULL), -SC_ENOTREG);
    alarm(0);
    size_t n;
    const sc_root_refusal *r = sc_root_refusals(&n);
    assert_int_equal(n, have_dev ? 2 : 1); /* the FIFO once, the directory not at all */
    assert_string_equal(r[0].path, "/etc/fifo");
    assert_string_equal(r[0].type, "FIFO");
    if (have_dev)
        assert_string_equal(r[1].type, "character device");
    assert_non_null(strstr(sc_root_strerror(-SC_ENOTREG), "not a regular file"));
    struct stat st;
    int fd = sc_root_open_file(&root, "/escape-abs", &st); /* a link to a regular file */
    assert_true(fd >= 0);
    assert_true(S_ISREG(st.st_mode));
    close(fd);
    sc_root_close(&root);
}

static void test_special_files_are_refused(void **state)
{
    (void)state;
    check_special_files(false);
    check_special_files(true);
}

/* procfs reports st_size 0: the read goes on to the end, within the bound. */
static void test_procfs_file_read_to_its_end(void **state)
{
    (void)state;
    sc_root host;
    sc_error err;
    assert_int_equal(sc_root_open(&host, NULL, &err), 0);
    char *text;
    long n = sc_root_read(&host, "/proc/self/status", &text, 1 << 16);
    assert_true(n > 100);
    assert_non_null(strstr(text, "Pid:"));
    free(text);
    assert_int_equal(sc_root_read(&host, "/proc/self/status", &text, 10), 10);
    free(text);
    sc_root_close(&host);
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
        cmocka_unit_test(test_special_files_are_refused),
        cmocka_unit_test(test_procfs_file_read_to_its_end),
        cmocka_unit_test(test_bad_root),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
