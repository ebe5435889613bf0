/* driver.nvidia's and runtime.cuda's helpers and the runtime probe: the /proc and kernel-log
 * parsers on real formats and broken ones, CUDA version and error decoding, the toolkit inventory
 * on the H200 fixture, and runtime.cuda run by the real runner against the stub libcuda where the
 * driver layer's facts matter (hidden devices, a version mismatch); what each stub behaviour gives
 * is the conformance table's (integration.test_conformance). The stub is found by soname:
 * the test re-executes itself with a directory first on LD_LIBRARY_PATH that holds libcuda.so.1
 * (and the nvrtc names) pointing at the stub, as a user overriding libcuda would. */
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
#include "sc_cuda.h"
#include "sc_cuda_inventory.h"
#include "sc_nvidia.h"
#include "sc_runner.h"

/* ---- /proc/driver/nvidia ---- */

static void test_proc_version(void **state)
{
    (void)state;
    char v[64];
    bool open = true;
    assert_int_equal(sc_nvidia_parse_proc_version(
                         "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.127.05  Tue Oct  8 "
                         "03:12:37 UTC 2024\nGCC version:  gcc version 12.3.0\n",
                         v, sizeof v, &open),
                     0);
    assert_string_equal(v, "550.127.05");
    assert_false(open);
    assert_int_equal(
        sc_nvidia_parse_proc_version(
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  "
            "Release Build  (dvs-builder@U16-I3-B03-4-3)  Fri Aug 16 21:32:26 UTC 2024\n",
            v, sizeof v, &open),
        0);
    assert_string_equal(v, "560.35.03");
    assert_true(open);
    assert_int_equal(sc_nvidia_parse_proc_version("GCC version: 12\n", v, sizeof v, NULL), -EINVAL);
    assert_int_equal(
        sc_nvidia_parse_proc_version("NVRM version: NVIDIA Kernel Module\n", v, sizeof v, NULL),
        -EINVAL);
    assert_int_equal(sc_nvidia_parse_proc_version("NVRM version: Module 1.2\n", v, 3, NULL),
                     -EINVAL); /* does not fit */
    assert_true(sc_nvidia_is_version("535.104.05"));
    assert_false(sc_nvidia_is_version("535."));
    assert_false(sc_nvidia_is_version("x86_64"));
    assert_false(sc_nvidia_is_version("535"));
}

static void test_gpu_info(void **state)
{
    (void)state;
    sc_nvidia_gpu_info g;
    assert_int_equal(
        sc_nvidia_parse_gpu_info("Model: \t\t NVIDIA H200\nIRQ:   \t\t 151\nGPU UUID: \t "
                                 "GPU-8f3c2a6e-1b7d-4e2f-9a0c-5d6e7f809a1b\nVideo BIOS: \t "
                                 "96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n"
                                 "Bus Location: \t 0000:18:00.0\nDevice Minor: \t 3\n"
                                 "GPU Excluded:\t No\n",
                                 &g),
        0);
    assert_string_equal(g.model, "NVIDIA H200");
    assert_string_equal(g.irq, "151");
    assert_string_equal(g.uuid, "GPU-8f3c2a6e-1b7d-4e2f-9a0c-5d6e7f809a1b");
    assert_string_equal(g.vbios, "96.00.99.00.01");
    assert_string_equal(g.bus_location, "0000:18:00.0");
    assert_string_equal(g.excluded, "No");
    assert_int_equal(g.minor, 3);
    assert_int_equal(sc_nvidia_parse_gpu_info("Device Minor: x\nModel: a\x01b\n", &g), 0);
    assert_int_equal(g.minor, -1);
    assert_string_equal(g.model, ""); /* control bytes: dropped, not copied */
    assert_int_equal(sc_nvidia_parse_gpu_info("no colon here\n", &g), -EINVAL);
    assert_int_equal(sc_nvidia_parse_gpu_info("", &g), -EINVAL);
}

static void test_kmsg_scan(void **state)
{
    (void)state;
    static const char log[] =
        "4,1201,9001,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05\n"
        "Nov 29 09:12:01 node kernel: NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', "
        "name=<unknown>, GPU has fallen off the bus.\n"
        "Nov 29 09:12:01 node kernel: NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.\n"
        "3,1300,9100,-;NVRM: Xid (PCI:0000:2a:00): 48, pid=1234, name=python, An uncorrectable "
        "double bit error\n"
        "3,1301,9101,-;NVRM: Xid (PCI:0000:2a:00): 48, pid=1234, again\n"
        "Nov 29 09:13:00 node kernel: NVRM: API mismatch: the client has the version 535.104.05, "
        "but\n"
        "Nov 29 09:13:01 node kernel: nvme nvme0: I/O 17 QID 3 timeout, an Xid-like word but not "
        "the driver\n";
    sc_nvidia_kmsg_result r;
    sc_nvidia_kmsg_scan(log, sizeof log - 1, &r);
    assert_int_equal(r.lines, 7);
    assert_int_equal(r.total, 5);
    assert_int_equal(r.xids, 3);
    assert_int_equal(r.off_bus, 2);
    assert_string_equal(r.xid_list, "79,48");
    assert_string_equal(r.first[0].kind, "xid");
    assert_int_equal(r.first[0].xid, 79);
    assert_string_equal(r.first[1].kind, "fallen-off-bus");
    assert_string_equal(r.first[4].kind, "api-mismatch");
    assert_true(strncmp(r.first[2].line, "NVRM: Xid", 9) == 0); /* record prefix stripped */
    assert_string_equal(sc_nvidia_xid_meaning(79), "GPU has fallen off the bus");
    assert_null(sc_nvidia_xid_meaning(12345));
    static const char nul[] = "NVRM: Xid (PCI:0000:18:00): 13\0\x1b[31m, x\n";
    sc_nvidia_kmsg_scan(nul, sizeof nul - 1, &r);
    assert_int_equal(r.total, 1);
    assert_non_null(strstr(r.first[0].line, "\\x00\\x1b")); /* escaped, not passed through */
    sc_nvidia_kmsg_scan(NULL, 0, &r);
    assert_int_equal(r.lines, 0);
}

/* ---- CUDA values ---- */

static void test_cuda_values(void **state)
{
    (void)state;
    char b[64];
    assert_int_equal(sc_cuda_version_decode(12040, b, sizeof b), 0);
    assert_string_equal(b, "12.4");
    assert_int_equal(sc_cuda_version_decode(11020, b, sizeof b), 0);
    assert_string_equal(b, "11.2");
    assert_int_equal(sc_cuda_version_decode(0, b, sizeof b), -EINVAL);
    assert_int_equal(sc_cuda_version_decode(-7, b, sizeof b), -EINVAL);
    assert_int_equal(sc_cuda_version_decode(100000, b, sizeof b), -EINVAL);
    assert_string_equal(sc_cuda_error_name(35), "CUDA_ERROR_INSUFFICIENT_DRIVER");
    assert_string_equal(sc_cuda_error_name(803), "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
    assert_string_equal(sc_cuda_error_name(804), "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
    assert_null(sc_cuda_error_name(12345));
    sc_cuda_describe(NULL, 100, b, sizeof b);
    assert_string_equal(b, "CUDA_ERROR_NO_DEVICE (100)");
    sc_cuda_describe(NULL, 4242, b, sizeof b);
    assert_string_equal(b, "CUDA_ERROR_? (4242)");
    assert_int_equal(sc_cuda_parse_version_json("{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": "
                                                "\"12.4.1\"}}",
                                                b, sizeof b),
                     0);
    assert_string_equal(b, "12.4.1");
    assert_int_equal(sc_cuda_parse_version_json("{\"cuda\": {\"version\": 12}}", b, sizeof b),
                     -EINVAL);
    assert_int_equal(
        sc_cuda_parse_version_json("{\"cuda\": {\"version\": \"1; rm\"}}", b, sizeof b), -EINVAL);
    assert_int_equal(sc_cuda_parse_version_json("not json", b, sizeof b), -EINVAL);
    assert_int_equal(sc_cuda_parse_version_txt("CUDA Version 11.2.152\n", b, sizeof b), 0);
    assert_string_equal(b, "11.2.152");
    assert_int_equal(sc_cuda_parse_version_txt("CUDA 11\n", b, sizeof b), -EINVAL);
    assert_int_equal(
        sc_cuda_libcuda_version("/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05", b, sizeof b), 0);
    assert_string_equal(b, "550.127.05");
    assert_int_equal(sc_cuda_libcuda_version("/usr/lib/libcuda.so.1", b, sizeof b), -EINVAL);
    assert_int_equal(sc_cuda_libcuda_version("/tmp/libcudastub.so", b, sizeof b), -EINVAL);
    assert_int_equal(sc_cuda_pci_normalize("0000:2A:00.0", b, sizeof b), 0);
    assert_string_equal(b, "0000:2a:00.0");
    assert_int_equal(sc_cuda_pci_normalize("00000000:18:00.0", b, sizeof b), 0);
    assert_string_equal(b, "0000:18:00.0");
    assert_int_equal(sc_cuda_pci_normalize("zz:not-a-bus", b, sizeof b), -EINVAL);
    assert_int_equal(sc_cuda_pci_normalize("0000:18:00.0x", b, sizeof b), -EINVAL);
    assert_int_equal(sc_cuda_sm_name(9, 0, b, sizeof b), 0);
    assert_string_equal(b, "sm_90");
    assert_int_equal(sc_cuda_sm_name(99, 0, b, sizeof b), -EINVAL);
}

/* ---- inventory on the H200 fixture ---- */

static void test_inventory_h200(void **state)
{
    (void)state;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/nvidia-h200", getenv("SC_SOURCE_DIR"));
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, dir, &err), 0);
    sc_cuda_env env = {"/nonexistent/lib:/usr/local/cuda-12.4/lib64", NULL, "/usr/local/cuda"};
    sc_cuda_inventory *inv = calloc(1, sizeof *inv);
    assert_non_null(inv);
    sc_cuda_inventory_collect(&root, &env, inv);
    assert_int_equal(inv->count, 1); /* one toolkit, reached three ways */
    assert_string_equal(inv->toolkits[0].root, "/usr/local/cuda-12.4");
    assert_string_equal(inv->toolkits[0].version, "12.4.1");
    assert_int_equal(inv->toolkits[0].via_count, 3);
    assert_string_equal(inv->toolkits[0].via[0], "/usr/local/cuda");
    assert_string_equal(inv->toolkits[0].via[2], "CUDA_PATH=/usr/local/cuda");
    assert_true(inv->link_present);
    assert_string_equal(inv->link_target, "/usr/local/cuda-12.4");
    assert_string_equal(sc_cuda_inventory_main_version(inv), "12.4.1");
    assert_true(inv->libcuda.found);
    assert_string_equal(inv->libcuda.path, "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    assert_string_equal(inv->libcuda.realpath, "/usr/lib/x86_64-linux-gnu/libcuda.so.550.127.05");
    assert_string_equal(inv->libcuda.found_via, "default");
    assert_string_equal(inv->libcuda.driver_version, "550.127.05");
    assert_false(inv->libcuda.is_stub);
    free(inv);
    sc_root_close(&root);
}

/* ---- runtime.cuda through the runner, against the stub ---- */

static int driver_devices = 2;
static const char *driver_version_fact = "550.127.05";

/* Stands in for driver.nvidia on a healthy H200 node. */
static void fake_driver_run(const sc_ctx *ctx, sc_result *res)
{
    (void)ctx;
    static const char *const pci[] = {"0000:18:00.0", "0000:2a:00.0"};
    cJSON *devs = cJSON_AddArrayToObject(res->facts, "devices");
    for (int i = 0; i < driver_devices; i++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "pci_address", pci[i]);
        cJSON_AddStringToObject(d, "model", "NVIDIA H200");
        cJSON_AddItemToArray(devs, d);
    }
    cJSON_AddStringToObject(res->facts, "driver_version", driver_version_fact);
}

static const sc_probe fake_driver = {.id = "driver.nvidia",
                                     .layer = SC_LAYER_DRIVER,
                                     .backend = SC_BACKEND_NVIDIA,
                                     .run = fake_driver_run};

/* Runs driver (fake) + runtime.cuda with the stub in mode; returns runtime.cuda's JSON, owned by
 * *snap. */
static cJSON *run_cuda(const char *mode, double timeout_s, cJSON **snap)
{
    setenv("SC_CUDASTUB_MODE", mode, 1);
    const sc_probe *table[] = {&fake_driver, &sc_probe_runtime_cuda, NULL};
    return sc_test_run_table(table, timeout_s, "runtime.cuda", snap);
}

static void test_stub_devices_hidden(void **state)
{
    (void)state;
    cJSON *snap;
    setenv("CUDA_VISIBLE_DEVICES", "", 1);
    cJSON *p = run_cuda("no-device", 0, &snap);
    const cJSON *f = finding(p, "cuda.devices-hidden");
    assert_non_null(f);
    assert_non_null(strstr(str(f, "message"), "CUDA_VISIBLE_DEVICES=\"\""));
    assert_null(finding(p, "cuda.no-device"));
    cJSON_Delete(snap);
    /* one of two visible on purpose: recorded, not a finding */
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    setenv("SC_CUDASTUB_DEVICES", "1", 1);
    p = run_cuda("ok", 0, &snap);
    assert_string_equal(str(p, "status"), "pass");
    assert_string_equal(str(cJSON_GetObjectItem(p, "facts"), "hidden_by"),
                        "CUDA_VISIBLE_DEVICES=\"0\"");
    cJSON_Delete(snap);
    /* one of two missing without a reason: a mismatch */
    unsetenv("CUDA_VISIBLE_DEVICES");
    p = run_cuda("ok", 0, &snap);
    assert_string_equal(str(p, "status"), "warn");
    assert_non_null(finding(p, "cuda.device-mismatch"));
    unsetenv("SC_CUDASTUB_DEVICES");
    cJSON_Delete(snap);
}

static void test_library_version_mismatch(void **state)
{
    (void)state;
    /* libcuda is named like a 550.127.05 driver; the kernel module says 535.104.05 */
    cJSON *snap;
    driver_version_fact = "535.104.05";
    cJSON *p = run_cuda("ok", 0, &snap);
    driver_version_fact = "550.127.05";
    const cJSON *f = finding(p, "nvidia.module-version-mismatch");
    assert_non_null(f);
    assert_string_equal(str(f, "severity"), "error");
    assert_non_null(strstr(str(f, "message"), "libcuda is 550.127.05"));
    assert_non_null(strstr(str(f, "message"), "kernel module is 535.104.05"));
    cJSON_Delete(snap);
}

#define LIBCUDA_FILE "libcuda.so.550.127.05"

/* Copies the stub under a driver-like file name (a symlink would resolve to the stub's name). */
static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    if (!in || !out) {
        fprintf(stderr, "test_nvidia: cannot copy %s to %s\n", from, to);
        exit(1);
    }
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    fclose(in);
    if (fclose(out) != 0)
        exit(1);
}

/* Puts libcuda.so.1 and the nvrtc names, all pointing at the stub, in a fresh directory first on
 * LD_LIBRARY_PATH and re-executes, since the loader reads LD_LIBRARY_PATH only at start-up. */
static void reexec_with_stub(char **argv)
{
    const char *stubdir = getenv("SC_STUB_DIR");
    char tmpl[] = "/tmp/sc-nvtest-XXXXXX", stub[4096], path[4200];
    if (!stubdir || !mkdtemp(tmpl)) {
        fprintf(stderr, "test_nvidia: SC_STUB_DIR unset or no temp dir\n");
        exit(1);
    }
    snprintf(stub, sizeof stub, "%s/libcudastub.so", stubdir);
    snprintf(path, sizeof path, "%s/%s", tmpl, LIBCUDA_FILE);
    copy_file(stub, path);
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                        "libnvrtc.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmpl, names[i]);
        if (symlink(stub, path) < 0) {
            perror("symlink");
            exit(1);
        }
    }
    snprintf(path, sizeof path, "%s/libcuda.so.1", tmpl);
    if (symlink(LIBCUDA_FILE, path) < 0) {
        perror("symlink");
        exit(1);
    }
    setenv("LD_LIBRARY_PATH", tmpl, 1);
    setenv("SC_NVTEST_LIBDIR", tmpl, 1);
    execv("/proc/self/exe", argv);
    perror("execv");
    exit(1);
}

static void remove_stub_dir(const char *dir)
{
    static const char *const names[] = {"libcuda.so.1",   LIBCUDA_FILE,       "libnvrtc.so.13",
                                        "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
    char path[4200];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("SC_NVTEST_LIBDIR"))
        reexec_with_stub(argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_proc_version),
        cmocka_unit_test(test_gpu_info),
        cmocka_unit_test(test_kmsg_scan),
        cmocka_unit_test(test_cuda_values),
        cmocka_unit_test(test_inventory_h200),
        cmocka_unit_test(test_stub_devices_hidden),
        cmocka_unit_test(test_library_version_mismatch),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    remove_stub_dir(getenv("SC_NVTEST_LIBDIR"));
    return rc;
}
