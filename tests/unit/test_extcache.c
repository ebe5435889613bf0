/* What an extension build leaves behind, read as buffers: torch.utils.cpp_extension's build.ninja
 * (its compiler, the torch and Python it built against, its library directories), malformed and
 * cut files, the CPython tag of an extension's name and the default cache's folder names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sc_extcache.h"

static const char ninja[] =
    "ninja_required_version = 1.3\n"
    "cxx = c++\n"
    "nvcc = /opt/dtk-25.04/bin/hipcc\n"
    "\n"
    "cflags = -DTORCH_EXTENSION_NAME=my_op -isystem /site/torch/include -isystem "
    "/site/torch/include/torch/csrc/api/include -isystem /usr/include/python3.10 -fPIC\n"
    "cuda_cflags = -I/opt/dtk-25.04/include --offload-arch=gfx906\n"
    "ldflags = -shared -L/site/torch/lib -lc10 -L /opt/dtk-25.04/lib -lamdhip64 -Lrelative\n"
    "\n"
    "rule compile\n"
    "  command = $cxx $cflags -c $in -o $out\n"
    "build my_op.o: compile /src/my$ op.cpp\n";

static void test_build_ninja(void **state)
{
    (void)state;
    sc_ext_build b;
    assert_int_equal(sc_ext_build_parse(ninja, strlen(ninja), &b), 0);
    assert_string_equal(b.compiler, "/opt/dtk-25.04/bin/hipcc");
    assert_string_equal(b.torch_dir, "/site/torch");
    assert_string_equal(b.python, "3.10");
    assert_string_equal(b.python_include, "/usr/include/python3.10");
    assert_int_equal(b.lib_dir_count, 2); /* the relative -L is not a directory one can judge */
    assert_string_equal(b.lib_dirs[0], "/site/torch/lib");
    assert_string_equal(b.lib_dirs[1], "/opt/dtk-25.04/lib");
}

static void test_build_ninja_escapes_and_cuts(void **state)
{
    (void)state;
    sc_ext_build b;
    const char *escaped = "nvcc = /opt/my$ dtk/bin/hipcc\n";
    assert_int_equal(sc_ext_build_parse(escaped, strlen(escaped), &b), 0);
    assert_string_equal(b.compiler, "/opt/my dtk/bin/hipcc");
    /* cut in the middle of a flag's argument: what was read stays, nothing runs past the end */
    size_t cut = (size_t)(strstr(ninja, "-L /opt") - ninja) + 3;
    assert_int_equal(sc_ext_build_parse(ninja, cut, &b), 0);
    assert_int_equal(b.lib_dir_count, 1);
    assert_string_equal(b.torch_dir, "/site/torch");
}

static void test_build_ninja_malformed(void **state)
{
    (void)state;
    sc_ext_build b;
    const char *not_ninja[] = {
        "",    "\n\n",    "garbage without assignments", "  cflags = -I/x\n", "# cflags = -I/x\n",
        "=\n", "cflags\n"};
    for (size_t i = 0; i < sizeof not_ninja / sizeof not_ninja[0]; i++)
        assert_int_equal(sc_ext_build_parse(not_ninja[i], strlen(not_ninja[i]), &b), -22);
    char many[4096] = "ldflags =";
    for (int i = 0; i < 20; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), " -L/d%d", i);
    assert_int_equal(sc_ext_build_parse(many, strlen(many), &b), 0);
    assert_int_equal(b.lib_dir_count, SC_EXTCACHE_LIB_DIRS);
}

static void test_python_tag(void **state)
{
    (void)state;
    char tag[16];
    assert_true(sc_ext_python_tag("/b/x.cpython-311-x86_64-linux-gnu.so", tag, sizeof tag));
    assert_string_equal(tag, "311");
    assert_true(sc_ext_python_tag("x.cpython-313t-x86_64-linux-gnu.so", tag, sizeof tag));
    assert_string_equal(tag, "313t");
    assert_false(sc_ext_python_tag("my_op.so", tag, sizeof tag));
    assert_false(sc_ext_python_tag("x.cpython-3-x86_64.so", tag, sizeof tag));
    assert_false(sc_ext_python_tag("x.cpython-31199-x.so", tag, sizeof tag));
    assert_false(sc_ext_python_tag("/a.cpython-311-x/b.so", tag, sizeof tag));
}

static void test_folder(void **state)
{
    (void)state;
    char py[16], tag[32];
    assert_true(sc_ext_folder_parse("py311_cu121", py, sizeof py, tag, sizeof tag));
    assert_string_equal(py, "311");
    assert_string_equal(tag, "cu121");
    assert_true(sc_ext_folder_parse("py313t_cpu", py, sizeof py, tag, sizeof tag));
    assert_string_equal(py, "313t");
    assert_false(sc_ext_folder_parse("py311", py, sizeof py, tag, sizeof tag));
    assert_false(sc_ext_folder_parse("py311_", py, sizeof py, tag, sizeof tag));
    assert_false(sc_ext_folder_parse("my_op", py, sizeof py, tag, sizeof tag));
    assert_false(sc_ext_folder_parse("py3_cpu", py, sizeof py, tag, sizeof tag));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_ninja),
        cmocka_unit_test(test_build_ninja_escapes_and_cuts),
        cmocka_unit_test(test_build_ninja_malformed),
        cmocka_unit_test(test_python_tag),
        cmocka_unit_test(test_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
