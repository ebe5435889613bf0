/* The install-root classifier on scratch trees: each backend's root kinds by their markers wherever
 * they live, conda environments and Python packages, the path rules as the fallback, the walk's
 * bounds (the sysroot's top, /usr), symlinked library directories, the per-directory cache, and
 * which stack a library belongs to. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sc_roots.h"
#include "temp_tree.h"

static char tree[PATH_MAX];
static sc_root root;

static int setup(void **state)
{
    (void)state;
    return tree_open(tree, &root);
}

static int teardown(void **state)
{
    (void)state;
    return tree_close(tree, &root);
}

/* Classifies path (inside the scratch root) and checks its kind, root and stack. */
static void expect(const char *path, sc_root_kind kind, const char *root_path, sc_backend stack)
{
    sc_install_root ir;
    sc_install_root_in(&root, path, &ir);
    assert_string_equal(sc_root_kind_name(ir.kind), sc_root_kind_name(kind));
    assert_string_equal(ir.path, root_path);
    assert_ptr_equal(ir.stack, sc_backend_get(stack));
}

static void test_amd_roots_anywhere(void **state)
{
    (void)state;
    tree_put(tree, "public/software/compiler/dtk-24.04/.info/version", "24.04\n");
    tree_dir(tree, "public/software/compiler/dtk-24.04/.hyhal");
    tree_put(tree, "public/software/compiler/dtk-24.04/lib/libamdhip64.so.5", "");
    /* its hip/ looks like a ROCm (bin/hipcc, share/hip/version): the DTK above it wins */
    tree_put(tree, "public/software/compiler/dtk-24.04/hip/bin/hipcc", "");
    tree_put(tree, "public/software/compiler/dtk-24.04/hip/share/hip/version", "");
    tree_put(tree, "public/software/compiler/dtk-24.04/hip/lib/libhiprtc.so", "");
    expect("/public/software/compiler/dtk-24.04/lib/libamdhip64.so.5", SC_ROOT_DTK,
           "/public/software/compiler/dtk-24.04", SC_BACKEND_AMD);
    expect("/public/software/compiler/dtk-24.04/hip/lib/libhiprtc.so", SC_ROOT_DTK,
           "/public/software/compiler/dtk-24.04", SC_BACKEND_AMD);
    /* a spack ROCm: bin/hipcc and share/hip/version, no .info */
    tree_put(tree, "spack/opt/linux-x86_64/hip-5.4.3-abc/bin/hipcc", "");
    tree_put(tree, "spack/opt/linux-x86_64/hip-5.4.3-abc/share/hip/version", "");
    expect("/spack/opt/linux-x86_64/hip-5.4.3-abc/lib/libamdhip64.so", SC_ROOT_ROCM,
           "/spack/opt/linux-x86_64/hip-5.4.3-abc", SC_BACKEND_AMD);
    /* a module tree's ROCm with .info/version */
    tree_put(tree, "apps/rocm/6.2.0/.info/version", "6.2.0\n");
    tree_put(tree, "apps/rocm/6.2.0/bin/hipcc", "");
    expect("/apps/rocm/6.2.0/lib/librocblas.so.4", SC_ROOT_ROCM, "/apps/rocm/6.2.0",
           SC_BACKEND_AMD);
    /* hyhal sits beside every DTK: its kind, outside the stack */
    tree_put(tree, "hw/hyhal/bin/hy-smi", "");
    expect("/hw/hyhal/lib/libhydmi.so", SC_ROOT_HYHAL, "/hw/hyhal", SC_BACKEND_NONE);
}

static void test_cuda_cann_conda_python(void **state)
{
    (void)state;
    tree_put(tree, "sw/cuda/12.4/version.json", "{}");
    tree_put(tree, "sw/cuda/12.4/bin/nvcc", "");
    expect("/sw/cuda/12.4/targets/x86_64-linux/lib/libcudart.so.12", SC_ROOT_CUDA, "/sw/cuda/12.4",
           SC_BACKEND_NVIDIA);
    tree_put(tree, "sw/Ascend/cann-8.5.0/aarch64-linux/ascend_toolkit_install.info",
             "version=8.5\n");
    expect("/sw/Ascend/cann-8.5.0/aarch64-linux/lib64/libascendcl.so", SC_ROOT_CANN,
           "/sw/Ascend/cann-8.5.0/aarch64-linux", SC_BACKEND_ASCEND);
    /* the driver's directory keeps the kind cann, outside the stack */
    tree_put(tree, "sw/Ascend/driver/version.info", "Version=23.0\n");
    tree_dir(tree, "sw/Ascend/driver/lib64");
    expect("/sw/Ascend/driver/lib64/driver/libascend_hal.so", SC_ROOT_CANN, "/sw/Ascend/driver",
           SC_BACKEND_NONE);
    /* a conda environment: CUDA libraries inside it are the environment's */
    tree_dir(tree, "home/u/miniconda3/envs/cu/conda-meta");
    expect("/home/u/miniconda3/envs/cu/lib/libcudart.so.12", SC_ROOT_CONDA,
           "/home/u/miniconda3/envs/cu", SC_BACKEND_NONE);
    /* CUDA's conda packages in the base environment and in one of its environments: two roots */
    tree_dir(tree, "opt/conda/conda-meta");
    tree_put(tree, "opt/conda/bin/nvcc", "");
    tree_dir(tree, "opt/conda/targets");
    tree_dir(tree, "opt/conda/envs/x/conda-meta");
    tree_put(tree, "opt/conda/envs/x/bin/nvcc", "");
    tree_dir(tree, "opt/conda/envs/x/targets");
    expect("/opt/conda/envs/x/lib/libcublas.so.12", SC_ROOT_CUDA, "/opt/conda/envs/x",
           SC_BACKEND_NVIDIA);
    expect("/opt/conda/lib/libcublas.so.12", SC_ROOT_CUDA, "/opt/conda", SC_BACKEND_NVIDIA);
    /* a Python package inside it is the package, as before */
    expect("/home/u/miniconda3/envs/cu/lib/python3.11/site-packages/torch/lib/libc10.so",
           SC_ROOT_PYTHON, "/home/u/miniconda3/envs/cu/lib/python3.11/site-packages/torch",
           SC_BACKEND_NONE);
    expect("/home/u/miniconda3/envs/cu/lib/python3.11/site-packages/_cffi.so", SC_ROOT_PYTHON,
           "/home/u/miniconda3/envs/cu/lib/python3.11/site-packages/_cffi.so", SC_BACKEND_NONE);
}

/* No marker: the path rules decide, as in 0.1. */
static void test_path_rules_are_the_fallback(void **state)
{
    (void)state;
    tree_put(tree, "opt/dtk-23.10/lib/libamdhip64.so.5", "");
    expect("/opt/dtk-23.10/lib/libamdhip64.so.5", SC_ROOT_DTK, "/opt/dtk-23.10", SC_BACKEND_AMD);
    expect("/opt/hyhal/lib/libhydmi.so", SC_ROOT_HYHAL, "/opt/hyhal", SC_BACKEND_NONE);
    expect("/usr/local/cuda-11.8/lib64/libcudart.so.11", SC_ROOT_CUDA, "/usr/local/cuda-11.8",
           SC_BACKEND_NVIDIA);
    expect("/opt/nvidia/hpc/lib/libcudart.so", SC_ROOT_CUDA, "/opt/nvidia", SC_BACKEND_NVIDIA);
    expect("/usr/local/Ascend/ascend-toolkit/lib64/libascendcl.so", SC_ROOT_CANN,
           "/usr/local/Ascend/ascend-toolkit", SC_BACKEND_ASCEND);
    expect("/usr/lib/x86_64-linux-gnu/libz.so.1", SC_ROOT_SYSTEM, "/usr", SC_BACKEND_NONE);
    expect("/home/u/ext/lib/libmyop.so", SC_ROOT_OTHER, "/home/u/ext", SC_BACKEND_NONE);
}

/* The walk stops below the sysroot's top and below /usr: markers there belong to no install. */
static void test_walk_stops_at_the_top_and_usr(void **state)
{
    (void)state;
    char above[PATH_MAX], inner[PATH_MAX + 8];
    tree_new(above);
    tree_put(above, ".info/version", "6.0\n"); /* above the sysroot: never read */
    tree_put(above, "bin/hipcc", "");
    tree_put(above, "root/.info/version", "6.0\n"); /* the sysroot's own top */
    tree_put(above, "root/bin/hipcc", "");
    tree_put(above, "root/usr/bin/hipcc", ""); /* Debian's HIP under /usr */
    tree_put(above, "root/usr/share/hip/version", "");
    snprintf(inner, sizeof inner, "%s/root", above);
    sc_root sub;
    sc_error err;
    assert_int_equal(sc_root_open(&sub, inner, &err), 0);
    sc_install_root ir;
    sc_install_root_in(&sub, "/x/lib/libfoo.so", &ir);
    assert_string_equal(sc_root_kind_name(ir.kind), "other");
    assert_string_equal(ir.path, "/x");
    sc_install_root_in(&sub, "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", &ir);
    assert_string_equal(sc_root_kind_name(ir.kind), "system");
    assert_string_equal(ir.path, "/usr");
    sc_root_close(&sub);
    tree_free(above);
}

/* A library directory reached through a symlink belongs to the install it leads to. */
static void test_symlinked_lib_dir(void **state)
{
    (void)state;
    tree_put(tree, "public/dtk-25.04/.info/version", "25.04\n");
    tree_put(tree, "public/dtk-25.04/lib/libgalaxyhip.so.5", "");
    tree_link(tree, "app/lib", "/public/dtk-25.04/lib");
    expect("/app/lib/libgalaxyhip.so.5", SC_ROOT_DTK, "/public/dtk-25.04", SC_BACKEND_AMD);
    sc_roots *r = sc_roots_new(&root);
    sc_install_root ir;
    sc_roots_of_dir(r, "/public/dtk-25.04", &ir); /* ROCM_PATH=/public/dtk-25.04 */
    assert_string_equal(sc_root_kind_name(ir.kind), "dtk");
    sc_roots_free(r);
}

/* What each directory holds is read once: 280 libraries in two directories cost a few checks. */
static void test_directories_are_read_once(void **state)
{
    (void)state;
    tree_put(tree, "sw/dtk-24.04/.info/version", "24.04\n");
    tree_dir(tree, "sw/dtk-24.04/.hyhal");
    sc_roots *r = sc_roots_new(&root);
    sc_install_root ir;
    for (int i = 0; i < 280; i++) {
        char path[128];
        snprintf(path, sizeof path, "/sw/dtk-24.04/%s/lib%d.so", i % 2 ? "lib" : "lib64", i);
        sc_roots_of(r, path, &ir);
        assert_string_equal(ir.path, "/sw/dtk-24.04");
    }
    unsigned long checks = sc_roots_checks(r);
    assert_true(checks > 0);
    assert_true(checks < 60); /* about 20 marker paths per directory, 3 directories, + realpaths */
    sc_roots_of(r, "/sw/dtk-24.04/lib/again.so", &ir);
    assert_int_equal(sc_roots_checks(r), checks);
    sc_roots_free(r);
}

/* Past its bound of directories the cache starts afresh, and answers stay right. */
static void test_cache_bound(void **state)
{
    (void)state;
    tree_put(tree, "sw/rocm/.info/version", "6.2.0\n");
    tree_put(tree, "sw/rocm/bin/hipcc", "");
    sc_roots *r = sc_roots_new(&root);
    sc_install_root ir;
    for (int i = 0; i < 17000; i++) {
        char path[64];
        snprintf(path, sizeof path, "/x/d%d/libx.so", i);
        sc_roots_of(r, path, &ir);
        if (i % 4096 == 0) {
            sc_roots_of(r, "/sw/rocm/lib/libamdhip64.so", &ir);
            assert_string_equal(sc_root_kind_name(ir.kind), "rocm");
        }
    }
    sc_roots_of(r, "/x/d1/libx.so", &ir);
    assert_string_equal(ir.path, "/x/d1");
    sc_roots_of(r, "/sw/rocm/lib/libamdhip64.so", &ir);
    assert_string_equal(ir.path, "/sw/rocm");
    sc_roots_free(r);
}

static void test_stack_of_a_library(void **state)
{
    (void)state;
    sc_install_root conda = {.kind = SC_ROOT_CONDA}, sys = {.kind = SC_ROOT_SYSTEM};
    sc_install_root other = {.kind = SC_ROOT_OTHER}, py = {.kind = SC_ROOT_PYTHON};
    sc_install_root dtk = {.kind = SC_ROOT_DTK, .stack = sc_backend_get(SC_BACKEND_AMD)};
    assert_ptr_equal(sc_roots_stack_of(&conda, "libhipblas.so.2"), sc_backend_get(SC_BACKEND_AMD));
    assert_ptr_equal(sc_roots_stack_of(&py, "libcudart.so.12"), sc_backend_get(SC_BACKEND_NVIDIA));
    assert_ptr_equal(sc_roots_stack_of(&sys, "/usr/lib/libamdhip64.so.5"),
                     sc_backend_get(SC_BACKEND_AMD));
    assert_null(sc_roots_stack_of(&sys, "libcuda.so.1")); /* the driver's, beside any toolkit */
    assert_null(sc_roots_stack_of(&sys, "libz.so.1"));
    assert_null(sc_roots_stack_of(&other, "libhipblas.so.2"));
    assert_ptr_equal(sc_roots_stack_of(&dtk, "libz.so.1"), sc_backend_get(SC_BACKEND_AMD));
}

/* Every kind a descriptor's markers name is one the snapshot spells. */
static void test_marker_kinds_are_known(void **state)
{
    (void)state;
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        for (const sc_root_marker *m = (*b)->root_markers; m && m->kind; m++)
            assert_string_equal(sc_root_kind_name(sc_root_kind_by_name(m->kind)), m->kind);
    assert_string_equal(sc_root_kind_name(SC_ROOT_CONDA), "conda");
    assert_int_equal(sc_root_kind_by_name("nonsense"), SC_ROOT_OTHER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_amd_roots_anywhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cuda_cann_conda_python, setup, teardown),
        cmocka_unit_test_setup_teardown(test_path_rules_are_the_fallback, setup, teardown),
        cmocka_unit_test(test_walk_stops_at_the_top_and_usr),
        cmocka_unit_test_setup_teardown(test_symlinked_lib_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_directories_are_read_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_bound, setup, teardown),
        cmocka_unit_test(test_stack_of_a_library),
        cmocka_unit_test(test_marker_kinds_are_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
