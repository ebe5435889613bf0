/* The loader's pick (sc_loader.h) on a scratch root with an ld.so.cache made by ldconfig -r: the
 * cache, LD_LIBRARY_PATH, the default directories, the ld.so.conf stand-in for a missing cache,
 * ld.so's stop at a file that is not ELF; the three runtime probes' picks agree with it; and the
 * ld.so.conf parser on good and malformed text. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sc_ascend_install.h"
#include "sc_cuda_inventory.h"
#include "sc_hip_inventory.h"
#include "sc_ldconf.h"
#include "sc_loader.h"
#include "temp_tree.h"

#define LDCONFIG "/sbin/ldconfig"

static char tree[PATH_MAX];
static sc_root root;

/* A root with runtimes in the cache, one added after ldconfig ran (found in a default directory
 * only), and another copy of each on a directory for LD_LIBRARY_PATH. */
static int setup(void **state)
{
    (void)state;
    if (access(LDCONFIG, X_OK) != 0 || tree_open(tree, &root) < 0)
        return -1;
    tree_put(tree, "opt/rocm-6.2.0/.info/version", "6.2.0\n");
    tree_put(tree, "opt/rocm-6.2.0/bin/hipcc", "");
    tree_so(tree, "opt/rocm-6.2.0/lib/libamdhip64.so.6", "libamdhip64.so.6");
    tree_so(tree, "usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05", "libcuda.so.1");
    tree_put(tree, "usr/local/Ascend/ascend-toolkit/8.0/ascend_toolkit_install.info", "v=8\n");
    tree_so(tree, "usr/local/Ascend/ascend-toolkit/8.0/lib64/libascendcl.so", "libascendcl.so");
    tree_put(tree, "etc/ld.so.conf",
             "/opt/rocm-6.2.0/lib\n/usr/local/Ascend/ascend-toolkit/8.0/lib64\n");
    tree_sh(LDCONFIG " -r '%s' -C /etc/ld.so.cache", tree);
    tree_so(tree, "usr/lib/x86_64-linux-gnu/libamdhip64.so.5", "libamdhip64.so.5");
    tree_so(tree, "llp/libamdhip64.so.6", "libamdhip64.so.6");
    tree_so(tree, "llp/libcuda.so.1", "libcuda.so.1");
    tree_so(tree, "llp/libascendcl.so", "libascendcl.so");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tree_close(tree, &root);
}

static sc_loader_pick pick;

/* Picks name for ld_library_path and checks how and where it was found. */
static void expect(const char *llp, const char *name, const char *via, const char *path)
{
    sc_loader l;
    assert_int_equal(sc_loader_open(&l, &root, llp), 0);
    assert_true(sc_loader_find(&l, name, &pick));
    assert_string_equal(pick.found_via, via);
    assert_string_equal(pick.path, path);
    assert_string_equal(pick.name, name);
    sc_loader_close(&l);
}

static void test_cache_path_and_defaults(void **state)
{
    (void)state;
    expect(NULL, "libamdhip64.so.6", "cache", "/opt/rocm-6.2.0/lib/libamdhip64.so.6");
    assert_string_equal(pick.source, "/etc/ld.so.cache");
    assert_string_equal(sc_root_kind_name(pick.root.kind), "rocm");
    assert_string_equal(pick.root.path, "/opt/rocm-6.2.0");
    expect(NULL, "libcuda.so.1", "cache", "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    assert_string_equal(pick.realpath, "/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05");
    expect(NULL, "libamdhip64.so.5", "default", "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5");
    assert_string_equal(pick.entry, "/usr/lib/x86_64-linux-gnu");
    expect("/nonexistent:/llp", "libamdhip64.so.6", "ld_library_path", "/llp/libamdhip64.so.6");
    assert_string_equal(pick.entry, "/llp");
    assert_string_equal(pick.source, "LD_LIBRARY_PATH");
    sc_loader l;
    assert_int_equal(sc_loader_open(&l, &root, NULL), 0);
    assert_false(sc_loader_find(&l, "libnothere.so.1", &pick));
    assert_false(pick.found);
    sc_loader_close(&l);
}

/* runtime.hip, runtime.cuda and runtime.acl name the file the loader function names. */
static void check_agreement(const char *llp)
{
    sc_loader l;
    sc_loader_pick want;
    assert_int_equal(sc_loader_open(&l, &root, llp), 0);
    sc_hip_inventory *hip = calloc(1, sizeof *hip);
    sc_hip_inventory_pick(&root, llp, hip);
    assert_true(sc_loader_find_first(&l, sc_hip_runtime_names(false), &want));
    assert_string_equal(hip->pick.path, want.path);
    assert_string_equal(hip->pick.found_via, want.found_via);
    sc_cuda_inventory *cuda = calloc(1, sizeof *cuda);
    sc_cuda_inventory_collect(&root, &(sc_cuda_env){llp, NULL, NULL}, cuda);
    assert_true(sc_loader_find(&l, "libcuda.so.1", &want));
    assert_string_equal(cuda->libcuda.path, want.path);
    assert_string_equal(cuda->libcuda.realpath, want.realpath);
    assert_string_equal(cuda->libcuda.found_via, want.found_via);
    sc_ascend_lib_pick acl;
    sc_ascend_pick_library(&root, llp, &acl);
    assert_true(sc_loader_find(&l, "libascendcl.so", &want));
    assert_string_equal(acl.path, want.path);
    assert_string_equal(acl.found_via, want.found_via);
    free(hip), free(cuda);
    sc_loader_close(&l);
}

static void test_runtime_probes_agree(void **state)
{
    (void)state;
    check_agreement(NULL);
    check_agreement("/llp");
    sc_cuda_inventory *cuda = calloc(1, sizeof *cuda);
    sc_cuda_inventory_collect(&root, &(sc_cuda_env){"/llp", NULL, NULL}, cuda);
    assert_string_equal(cuda->libcuda.found_via, "ld_library_path");
    free(cuda);
}

/* Without a cache, the ld.so.conf directories stand in for it. */
static void test_conf_stands_in_for_a_missing_cache(void **state)
{
    (void)state;
    tree_sh("mv '%s/etc/ld.so.cache' '%s/etc/ld.so.cache.off'", tree, tree);
    expect(NULL, "libamdhip64.so.6", "ld.so.conf", "/opt/rocm-6.2.0/lib/libamdhip64.so.6");
    assert_string_equal(pick.entry, "/opt/rocm-6.2.0/lib");
    expect(NULL, "libcuda.so.1", "default", "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    tree_sh("mv '%s/etc/ld.so.cache.off' '%s/etc/ld.so.cache'", tree, tree);
}

/* Sets the e_machine of the ELF file rel. */
static void set_machine(const char *rel, uint16_t machine)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", tree, rel);
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, &machine, 2, 18), 2);
    close(fd);
}

/* ld.so passes over an object of another machine, and stops at a file that is not ELF. */
static void test_other_machine_skipped_non_elf_stops(void **state)
{
    (void)state;
    tree_so(tree, "arm/libamdhip64.so.6", "libamdhip64.so.6");
    set_machine("arm/libamdhip64.so.6", EM_AARCH64);
    expect("/arm:/llp", "libamdhip64.so.6", "ld_library_path", "/llp/libamdhip64.so.6");
    tree_put(tree, "bad/libamdhip64.so.6", "");
    expect("/bad:/llp", "libamdhip64.so.6", "ld_library_path", "/bad/libamdhip64.so.6");
}

static char got[1024];

static void on_dir(void *arg, const char *dir)
{
    (void)arg;
    strncat(got, dir, sizeof got - strlen(got) - 2);
    strcat(got, ";");
}

static void on_include(void *arg, const char *pattern)
{
    (void)arg;
    strncat(got, "+", sizeof got - strlen(got) - 1);
    on_dir(NULL, pattern);
}

static const char *parse(const char *text)
{
    got[0] = '\0';
    sc_ldconf_parse(text, &(sc_ldconf_sink){on_dir, on_include, NULL});
    return got;
}

static void test_ldconf_text(void **state)
{
    (void)state;
    assert_string_equal(parse("# c\n/opt/a/lib/ # tail\n\n  /opt/b//\nrel/dir\nhwcap 1 x\n"
                              "include\t/etc/ld.so.conf.d/*.conf  more.conf\n/\n"),
                        "/opt/a/lib;/opt/b;+/etc/ld.so.conf.d/*.conf;+more.conf;/;");
    assert_string_equal(parse("included /x\ninclude\n/last"), "/last;");
    char *huge = malloc(3 * PATH_MAX);
    memset(huge, '/', 3 * PATH_MAX - 1);
    huge[3 * PATH_MAX - 1] = '\0';
    assert_string_equal(parse(huge), ""); /* a line longer than PATH_MAX is skipped */
    huge[5] = '\n';
    assert_string_equal(parse(huge), "/;"); /* "/////" is the root directory */
    free(huge);
    assert_string_equal(parse(""), "");
}

/* Includes nest (relative to the including file), glob in the last name only, sorted; a loop of
 * includes ends at the depth bound; directories come once. */
static void test_ldconf_files(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    tree_new(dir);
    tree_put(dir, "etc/ld.so.conf", "include ld.so.conf.d/*.conf\n/opt/z\ninclude /etc/loop\n");
    tree_put(dir, "etc/ld.so.conf.d/20-b.conf", "/opt/b\n/opt/a\n");
    tree_put(dir, "etc/ld.so.conf.d/10-a.conf", "/opt/a\n");
    tree_put(dir, "etc/ld.so.conf.d/.hidden.conf", "/opt/hidden\n");
    tree_put(dir, "etc/ld.so.conf.d/x.txt", "/opt/txt\n");
    tree_put(dir, "etc/loop", "include /etc/loop\n/opt/loop\n");
    sc_root r;
    sc_error err;
    assert_int_equal(sc_root_open(&r, dir, &err), 0);
    sc_ldconf conf;
    assert_int_equal(sc_ldconf_load(&r, &conf), 0);
    assert_int_equal(conf.count, 4);
    assert_string_equal(conf.dirs[0], "/opt/a");
    assert_string_equal(conf.dirs[1], "/opt/b");
    assert_string_equal(conf.dirs[2], "/opt/z");
    assert_string_equal(conf.dirs[3], "/opt/loop");
    assert_null(conf.dirs[4]);
    sc_ldconf_free(&conf);
    sc_root_close(&r);
    tree_sh("rm '%s/etc/ld.so.conf'", dir);
    assert_int_equal(sc_root_open(&r, dir, &err), 0);
    assert_int_equal(sc_ldconf_load(&r, &conf), -ENOENT);
    assert_int_equal(conf.count, 0);
    sc_ldconf_free(&conf);
    sc_root_close(&r);
    tree_free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_path_and_defaults),
        cmocka_unit_test(test_runtime_probes_agree),
        cmocka_unit_test(test_conf_stands_in_for_a_missing_cache),
        cmocka_unit_test(test_other_machine_skipped_non_elf_stops),
        cmocka_unit_test(test_ldconf_text),
        cmocka_unit_test(test_ldconf_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
