/* A kernel module's .modinfo and the Ascend driver's kernel-fit text: key lookup in .modinfo
 * buffers (a key that is a prefix of another, padding, an unterminated or unprintable value),
 * modules built with cc read through a root (and a shared object, a truncated module, a module
 * without .modinfo, a compressed name, a missing file refused with the reason), the installer's
 * file-list lines and the words of a vermagic. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sc_ascend.h"
#include "sc_modinfo.h"
#include "temp_tree.h"

static void test_get_from_buffer(void **state)
{
    (void)state;
    char v[64];
    static const char info[] = "vermagicx=no\0\0\0vermagic=5.10.0-60 SMP mod_unload  \0name=drv";
    assert_true(sc_modinfo_get(info, sizeof info - 1, "vermagic", v, sizeof v));
    assert_string_equal(v, "5.10.0-60 SMP mod_unload"); /* trailing spaces dropped */
    assert_true(sc_modinfo_get(info, sizeof info - 1, "name", v, sizeof v)); /* unterminated */
    assert_string_equal(v, "drv");
    assert_false(sc_modinfo_get(info, sizeof info - 1, "name", v, 3)); /* "drv" does not fit */
    assert_true(sc_modinfo_get(info, sizeof info - 2, "name", v, 3)); /* the section ends at "dr" */
    assert_string_equal(v, "dr");
    assert_false(sc_modinfo_get(info, sizeof info - 1, "license", v, sizeof v));
    assert_false(sc_modinfo_get(info, 5, "vermagic", v, sizeof v)); /* bounded by len */
    static const char bad[] = "vermagic=5.10\n1\0vermagic=\0";
    assert_false(sc_modinfo_get(bad, sizeof bad - 1, "vermagic", v, sizeof v));
    assert_false(sc_modinfo_get(bad + 16, 10, "vermagic", v, sizeof v)); /* empty value */
    assert_false(sc_modinfo_get("", 0, "vermagic", v, sizeof v));
}

static void test_read_modules(void **state)
{
    (void)state;
    char dir[PATH_MAX], v[128];
    sc_root root;
    sc_error err = {0};
    assert_int_equal(tree_open(dir, &root), 0);
    tree_ko(dir, "m/ok.ko", "name=ok\\0vermagic=5.10.0-182.oe2203sp3.x86_64 SMP modversions ");
    assert_int_equal(sc_modinfo_read(&root, "/m/ok.ko", "vermagic", v, sizeof v, &err), 0);
    assert_string_equal(v, "5.10.0-182.oe2203sp3.x86_64 SMP modversions");
    assert_int_equal(sc_modinfo_read(&root, "/m/ok.ko", "depends", v, sizeof v, &err), -ENODATA);
    tree_sh("cd %s/m && head -c 200 ok.ko > cut.ko && cp ok.ko ok.ko.xz && echo text > t.ko", dir);
    assert_int_equal(sc_modinfo_read(&root, "/m/cut.ko", "vermagic", v, sizeof v, &err), -ENOEXEC);
    assert_int_equal(sc_modinfo_read(&root, "/m/ok.ko.xz", "vermagic", v, sizeof v, &err),
                     -ENOEXEC);
    assert_non_null(strstr(err.message, "compressed"));
    assert_int_equal(sc_modinfo_read(&root, "/m/t.ko", "vermagic", v, sizeof v, &err), -ENOEXEC);
    assert_int_equal(sc_modinfo_read(&root, "/m/none.ko", "vermagic", v, sizeof v, &err), -ENOENT);
    tree_so(dir, "m/lib.so", "lib.so");
    assert_int_equal(sc_modinfo_read(&root, "/m/lib.so", "vermagic", v, sizeof v, &err), -ENOEXEC);
    assert_non_null(strstr(err.message, "not a kernel module"));
    tree_sh("cd %s/m && echo 'int x;' | cc -c -x c -o plain.ko -", dir);
    assert_int_equal(sc_modinfo_read(&root, "/m/plain.ko", "vermagic", v, sizeof v, &err),
                     -ENODATA);
    tree_close(dir, &root);
}

static void test_filelist_lines(void **state)
{
    (void)state;
    const char *text = "[driver_ko] /lib/modules/5.10/updates/a.ko\n"
                       "[driver_lib] /usr/lib/x.so\n"
                       "  [driver_ko]\t/lib/modules/5.10/updates/b.ko trailing\r\n"
                       "[driver_ko] relative.ko\n[driver_ko]\n[driver_ko] /c.ko";
    const char *at = text;
    char path[64];
    assert_true(sc_ascend_filelist_next(&at, "driver_ko", path, sizeof path));
    assert_string_equal(path, "/lib/modules/5.10/updates/a.ko");
    assert_true(sc_ascend_filelist_next(&at, "driver_ko", path, sizeof path));
    assert_string_equal(path, "/lib/modules/5.10/updates/b.ko");
    assert_true(sc_ascend_filelist_next(&at, "driver_ko", path, sizeof path));
    assert_string_equal(path, "/c.ko"); /* a relative path and an empty line are passed over */
    assert_false(sc_ascend_filelist_next(&at, "driver_ko", path, sizeof path));
    at = text;
    assert_false(sc_ascend_filelist_next(&at, "driver_ko", path, 5)); /* none fits 5 bytes */
}

static void test_vermagic_words(void **state)
{
    (void)state;
    char r[64], b[64];
    assert_true(sc_kernel_vermagic_release("5.10.0-60.18.0.50.oe2203.aarch64 SMP mod_unload "
                                           "modversions aarch64",
                                           r, sizeof r));
    assert_string_equal(r, "5.10.0-60.18.0.50.oe2203.aarch64");
    assert_true(sc_kernel_release_base(r, b, sizeof b));
    assert_string_equal(b, "5.10.0");
    assert_true(sc_kernel_release_base("4.19.90+", b, sizeof b));
    assert_string_equal(b, "4.19.90");
    assert_false(sc_kernel_vermagic_release("", r, sizeof r));
    assert_false(sc_kernel_vermagic_release("5.10\x01 SMP", r, sizeof r));
    assert_true(sc_kernel_vermagic_modversions("5.10 SMP mod_unload modversions aarch64"));
    assert_true(sc_kernel_vermagic_modversions("5.10 SMP modversions"));
    assert_false(sc_kernel_vermagic_modversions("5.10 SMP mod_unload nomodversions"));
    assert_false(sc_kernel_vermagic_modversions("5.10 SMP mod_unload"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_get_from_buffer),
        cmocka_unit_test(test_read_modules),
        cmocka_unit_test(test_filelist_lines),
        cmocka_unit_test(test_vermagic_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
