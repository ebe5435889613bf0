/* Unit tests of the driver layer's readers: the KFD properties parser (including malformed input),
 * gfx target names, PCI addresses, the VRAM sum, the PCI vocabulary, the kernel-log scanner, and
 * the readers run on a committed fixture root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "sc_drm.h"
#include "sc_kfd.h"
#include "sc_kmsg.h"
#include "sc_pci.h"

static sc_kfd_props props;

static void parse(const char *text)
{
    sc_kfd_parse_properties(text, strlen(text), &props);
}

static uint64_t get(const char *key)
{
    uint64_t v = 0xdeadbeef;
    assert_true(sc_kfd_get(&props, key, &v));
    return v;
}

static void test_properties_basic(void **state)
{
    (void)state;
    parse("cpu_cores_count 0\nsimd_count 440\nsimd_per_cu 4\ngfx_target_version 90010\n"
          "unique_id 18446744073709551615\n");
    assert_int_equal(props.count, 5);
    assert_int_equal(props.bad_lines, 0);
    assert_int_equal(get("simd_count"), 440);
    assert_int_equal(get("gfx_target_version"), 90010);
    assert_true(get("unique_id") == UINT64_MAX);
    uint64_t v;
    assert_false(sc_kfd_get(&props, "simd", &v)); /* a prefix is not a key */
    assert_false(sc_kfd_get(&props, "num_xcc", &v));
}

static void test_properties_whitespace(void **state)
{
    (void)state;
    parse("a 1\r\n\n   \nb\t\t2  \nc 3"); /* CRLF, blank lines, tabs, no final newline */
    assert_int_equal(props.count, 3);
    assert_int_equal(props.bad_lines, 0);
    assert_int_equal(get("b"), 2);
    assert_int_equal(get("c"), 3);
}

static void test_properties_malformed(void **state)
{
    (void)state;
    parse("simd_count\n"                        /* truncated: no value */
          "simd_count \n"                       /* truncated after the separator */
          "location_id 18446744073709551616\n"  /* 2^64: too large */
          "domain 99999999999999999999999999\n" /* far too large */
          "vendor_id 0x1002\n"                  /* hex is not the format */
          "device_id -5\n"                      /* negative */
          "name aldebaran\n"                    /* not a number */
          "12 34 56\n"                          /* three fields */
          "key-with-dash 1\n"                   /* key characters */
          " leading 1\n"                        /* no key at the start */
          "wave_front_size 64\n");
    assert_int_equal(props.count, 1);
    assert_int_equal(props.bad_lines, 10);
    assert_int_equal(get("wave_front_size"), 64);
    uint64_t v;
    assert_false(sc_kfd_get(&props, "simd_count", &v));
    assert_false(sc_kfd_get(&props, "location_id", &v));
}

static void test_properties_malformed_counts(void **state)
{
    (void)state;
    parse("simd_count\nlocation_id 18446744073709551616\nvendor_id 0x1002\nname aldebaran\n"
          "x 1 2\nok 7\n");
    assert_int_equal(props.count, 1);
    assert_int_equal(props.bad_lines, 5);
    assert_int_equal(get("ok"), 7);
}

static void test_properties_nul_and_long_key(void **state)
{
    (void)state;
    const char buf[] = "simd_count 4\0\0\nsimd_per_cu 4\nfoo\0bar 1\n";
    sc_kfd_parse_properties(buf, sizeof buf - 1, &props);
    assert_int_equal(props.count, 1);
    assert_int_equal(props.bad_lines, 2);
    assert_int_equal(get("simd_per_cu"), 4);
    char longkey[200];
    memset(longkey, 'k', sizeof longkey);
    memcpy(longkey + 150, " 1\n", 4);
    parse(longkey);
    assert_int_equal(props.count, 0);
    assert_int_equal(props.bad_lines, 1);
    sc_kfd_parse_properties(NULL, 0, &props);
    assert_int_equal(props.count, 0);
}

static void test_properties_capacity_and_duplicates(void **state)
{
    (void)state;
    char *text = malloc(SC_KFD_MAX_PROPS * 2 * 16);
    size_t len = 0;
    for (int i = 0; i < SC_KFD_MAX_PROPS + 10; i++)
        len += (size_t)sprintf(text + len, "k%d %d\n", i, i);
    sc_kfd_parse_properties(text, len, &props);
    assert_int_equal(props.count, SC_KFD_MAX_PROPS);
    assert_int_equal(props.dropped, 10);
    free(text);
    parse("a 1\na 2\n");
    assert_int_equal(get("a"), 1); /* the first of a repeated key */
}

static void expect_gfx(uint64_t v, const char *name)
{
    char buf[32];
    assert_true(sc_kfd_gfx_name(v, buf, sizeof buf));
    assert_string_equal(buf, name);
}

static void test_gfx_names(void **state)
{
    (void)state;
    expect_gfx(90010, "gfx90a");
    expect_gfx(90006, "gfx906");
    expect_gfx(90008, "gfx908");
    expect_gfx(90402, "gfx942");
    expect_gfx(90208, "gfx928");
    expect_gfx(100300, "gfx1030");
    expect_gfx(110000, "gfx1100");
    expect_gfx(120001, "gfx1201");
    expect_gfx(80003, "gfx803");
    char buf[32];
    assert_false(sc_kfd_gfx_name(0, buf, sizeof buf));     /* CPU node */
    assert_false(sc_kfd_gfx_name(90016, buf, sizeof buf)); /* stepping 16: no hex digit */
    assert_false(sc_kfd_gfx_name(91600, buf, sizeof buf)); /* minor 16 */
    assert_false(sc_kfd_gfx_name(UINT64_MAX, buf, sizeof buf));
    assert_false(sc_kfd_gfx_name(90010, buf, 4)); /* does not fit */
}

static void test_kfd_pci_address(void **state)
{
    (void)state;
    char buf[32];
    assert_true(sc_kfd_pci_address(0, 0xc100, buf, sizeof buf));
    assert_string_equal(buf, "0000:c1:00.0");
    assert_true(sc_kfd_pci_address(7, 0x0f << 8 | 3 << 3 | 5, buf, sizeof buf));
    assert_string_equal(buf, "0007:0f:03.5");
    assert_true(sc_kfd_pci_address(0xffff, 0xffff, buf, sizeof buf));
    assert_string_equal(buf, "ffff:ff:1f.7");
    assert_false(sc_kfd_pci_address(0x10000, 0, buf, sizeof buf));
    assert_false(sc_kfd_pci_address(0, 0x10000, buf, sizeof buf));
}

static void test_pci_parse_address(void **state)
{
    (void)state;
    sc_pci_addr a;
    assert_true(sc_pci_parse_address("0000:c1:00.0", &a));
    assert_int_equal(a.bus, 0xc1);
    assert_true(sc_pci_parse_address("10000:00:1f.7", &a) == false); /* domain over 16 bits */
    assert_true(sc_pci_parse_address("0003:e5:1f.7", &a));
    assert_int_equal(a.domain, 3);
    assert_int_equal(a.dev, 0x1f);
    assert_int_equal(a.fn, 7);
    assert_true(sc_pci_parse_address("c1:00.0", &a)); /* domain optional */
    assert_int_equal(a.domain, 0);
    assert_false(sc_pci_parse_address("0000:c1:20.0", &a)); /* device over 31 */
    assert_false(sc_pci_parse_address("0000:c1:00.8", &a));
    assert_false(sc_pci_parse_address("0000:g1:00.0", &a));
    assert_false(sc_pci_parse_address("0000:c1:00", &a));
    assert_false(sc_pci_parse_address("", &a));
    assert_false(sc_pci_parse_address("pci0000:00", &a));
}

static void test_pci_vocabulary(void **state)
{
    (void)state;
    assert_true(sc_pci_class_is_accelerator(0x030000));
    assert_true(sc_pci_class_is_accelerator(0x038000));
    assert_true(sc_pci_class_is_accelerator(0x0b4000));
    assert_true(sc_pci_class_is_accelerator(0x120000));
    assert_false(sc_pci_class_is_accelerator(0x0b0000)); /* another co-processor subclass */
    assert_false(sc_pci_class_is_accelerator(0x040300)); /* HDMI audio of a GPU */
    assert_false(sc_pci_class_is_accelerator(0x020000));
    assert_string_equal(sc_pci_vendor_name(0x1d94), "hygon");
    assert_null(sc_pci_vendor_name(0x1a03));
    assert_int_equal(sc_pci_vendor_backend(0x1d94), SC_BACKEND_AMD);
    assert_int_equal(sc_pci_vendor_backend(0x19e5), SC_BACKEND_ASCEND);
    sc_pci_device aspeed = {.has_ids = true, .vendor = 0x1a03, .class_code = 0x030000};
    sc_pci_device hygon = {.has_ids = true, .vendor = 0x1d94, .class_code = 0x0b4000};
    sc_pci_device hygon_bridge = {.has_ids = true, .vendor = 0x1d94, .class_code = 0x060000};
    assert_false(sc_pci_is_accelerator(&aspeed));
    assert_true(sc_pci_is_accelerator(&hygon));
    assert_false(sc_pci_is_accelerator(&hygon_bridge));
    sc_pci_device huawei_bmc_vga = {.has_ids = true, .vendor = 0x19e5, .class_code = 0x030000};
    sc_pci_device huawei_npu = {.has_ids = true, .vendor = 0x19e5, .class_code = 0x120000};
    assert_false(sc_pci_is_accelerator(&huawei_bmc_vga));
    assert_true(sc_pci_is_accelerator(&huawei_npu));
}

static void test_vram_sum(void **state)
{
    (void)state;
    uint64_t total = 0;
    parse("heap_type 1\nsize_in_bytes 68702699520\n");
    assert_true(sc_kfd_add_vram(&total, &props));
    parse("heap_type 2\nsize_in_bytes 1024\n");
    assert_true(sc_kfd_add_vram(&total, &props));
    parse("heap_type 0\nsize_in_bytes 540765495296\n"); /* system memory: not VRAM */
    assert_true(sc_kfd_add_vram(&total, &props));
    assert_true(total == 68702699520ULL + 1024);
    parse("heap_type 1\n"); /* missing size */
    assert_false(sc_kfd_add_vram(&total, &props));
    parse("heap_type 1\nsize_in_bytes 18446744073709551615\n");
    assert_true(sc_kfd_add_vram(&total, &props));
    assert_true(total == UINT64_MAX); /* saturates, never wraps */
}

static sc_kmsg_result r; /* large: not on the stack */

static void scan(const char *log, size_t n)
{
    sc_kmsg_scan_table(log, n, &sc_amd_kmsg_table, &r, NULL, NULL);
}

static void test_kmsg_scan(void **state)
{
    (void)state;
    const char log[] = "6,1001,5000000,-;[drm] amdgpu kernel modesetting enabled.\n"
                       "3,1002,9652118,-;[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 "
                       "timeout, signaled\n"
                       " SUBSYSTEM=pci\n"
                       "4,1003,9652200,-;amdgpu 0000:c1:00.0: amdgpu: GPU reset begin!\n"
                       "3,1004,9700000,-;amdgpu 0000:c1:00.0: Direct firmware load for "
                       "amdgpu/aldebaran_sos.bin failed with error -2\n"
                       "3,1005,9700001,-;nvme nvme0: I/O 12 QID 3 timeout, aborting\n"
                       "4,1006,9700002,-;amdgpu: amdgpu_device_ip_init failed: some timeout\n"
                       "Oct  9 17:02:45 dcu01 kernel: hydcu 0000:3f:00.0: hydcu: PCIE atomic ops "
                       "is not supported\n"
                       "amdgpu 0000:c1:00.0: amdgpu: Trusted Memory Zone (TMZ) feature not "
                       "supported\n";
    scan(log, sizeof log - 1);
    assert_int_equal(r.total, 5);
    assert_int_equal(r.lines, 9);
    assert_string_equal(r.first[0].kind, "ring-timeout");
    assert_true(strncmp(r.first[0].line, "[drm:amdgpu_job_timedout", 24) == 0); /* prefix gone */
    assert_string_equal(r.first[0].pci, ""); /* no device named before it */
    assert_string_equal(r.first[1].kind, "gpu-reset");
    assert_string_equal(r.first[1].pci, "0000:c1:00.0");
    assert_string_equal(r.first[2].kind, "firmware-load-failed");
    assert_int_equal(r.first[2].pattern->cls, SC_KMSG_FIRMWARE);
    /* no address on the line: the device named just before it */
    assert_string_equal(r.first[3].kind, "init-failed");
    assert_string_equal(r.first[3].pci, "0000:c1:00.0");
    assert_false(r.first[3].pci_in_line);
    assert_string_equal(r.first[4].kind, "not-supported");
    const sc_kmsg_device *d = sc_kmsg_device_of(&r, "0000:C1:00.0");
    assert_non_null(d);
    assert_int_equal(d->total, 3);
    assert_string_equal(d->cause.kind, "firmware-load-failed"); /* the first error: the cause */
    assert_int_equal(r.ndevices, 2);
}

/* Lines quoted from public reports: kernelci/kernelci-core#2238 (PSP firmware), ROCm
 * legacy-rocm-build #2747 (PSP ring), #719 (DID missing), #6273 (MES, MODE2), #2804 (VRAM lost,
 * failed reset), #4533 (atombios), linux's amdgpu_reset strings (BACO, MODE1). Each is recognised,
 * with its severity, and pinned to the device it names. */
static void test_kmsg_real_amd_lines(void **state)
{
    (void)state;
    static const struct {
        const char *line, *kind, *pci;
        sc_severity sev;
    } cases[] = {
        {"[    3.593924] [drm:psp_sw_init] *ERROR* Failed to load psp firmware!",
         "psp-firmware-load-failed", "", SC_SEV_ERROR},
        {"[    3.614955] amdgpu 0000:04:00.0: amdgpu: Fatal error during GPU init", "init-failed",
         "0000:04:00.0", SC_SEV_ERROR},
        {"[Mon Dec 18 08:34:36 2023] [drm:psp_hw_start [amdgpu]] *ERROR* PSP create ring failed!",
         "psp-ring-failed", "", SC_SEV_ERROR},
        {"amdgpu: probe of 0000:c7:00.0 failed with error -22", "probe-failed", "0000:c7:00.0",
         SC_SEV_ERROR},
        {"[    2.510806] kfd kfd: DID 15d8 is missing in supported_devices",
         "kfd-unsupported-device", "", SC_SEV_ERROR},
        {"kfd kfd: amdgpu: DID 15d8 is missing in supported_kfd_devices", "kfd-unsupported-device",
         "", SC_SEV_ERROR},
        {"[127037.563935] amdgpu 0000:c5:00.0: amdgpu: MES failed to respond to msg=REMOVE_QUEUE",
         "mes-timeout", "0000:c5:00.0", SC_SEV_WARN},
        {"[127037.776773] amdgpu 0000:c5:00.0: amdgpu: MODE2 reset", "gpu-reset", "0000:c5:00.0",
         SC_SEV_WARN},
        {"[  649.968330] [drm] VRAM is lost due to GPU reset!", "vram-lost", "", SC_SEV_WARN},
        {"[  650.160935] amdgpu 0000:0b:00.0: amdgpu: GPU reset(1) failed", "gpu-reset-failed",
         "0000:0b:00.0", SC_SEV_ERROR},
        {"amdgpu 0000:03:00.0: amdgpu: MODE1 reset", "gpu-reset", "0000:03:00.0", SC_SEV_WARN},
        {"amdgpu 0000:03:00.0: amdgpu: BACO reset", "gpu-reset", "0000:03:00.0", SC_SEV_WARN},
        {"[drm:amdgpu_device_gpu_recover [amdgpu]] *ERROR* VRAM is lost!", "vram-lost", "",
         SC_SEV_WARN},
        {"[   31.489889] [drm:atom_op_jump [amdgpu]] *ERROR* atombios stuck in loop for more "
         "than 20secs aborting",
         "vbios-hang", "", SC_SEV_ERROR},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        scan(cases[i].line, strlen(cases[i].line));
        assert_int_equal(r.total, 1);
        assert_string_equal(r.first[0].kind, cases[i].kind);
        assert_string_equal(r.first[0].pci, cases[i].pci);
        assert_int_equal(r.first[0].pattern->severity, cases[i].sev);
    }
}

static void test_kmsg_find_pci(void **state)
{
    (void)state;
    char out[16];
    assert_true(sc_kmsg_find_pci("NVRM: Xid (PCI:0000:2A:00): 79", 30, out, sizeof out));
    assert_string_equal(out, "0000:2a:00.0");
    assert_true(sc_kmsg_find_pci("GPU at 0000:01:00.3 has", 23, out, sizeof out));
    assert_string_equal(out, "0000:01:00.3");
    assert_false(sc_kmsg_find_pci("added device 1002:67ef", 22, out, sizeof out));
    assert_false(sc_kmsg_find_pci("fe80:0000:12:34:56ab::1", 23, out, sizeof out));
    assert_false(sc_kmsg_find_pci("0000:c1:0", 9, out, sizeof out));
}

static void test_kmsg_escape_and_bounds(void **state)
{
    (void)state;
    const char log[] = "amdgpu: GPU reset \x1b[31mred\x1b[0m \\ \xff\0 after-nul\n";
    scan(log, sizeof log - 1);
    assert_int_equal(r.total, 1);
    assert_null(strchr(r.first[0].line, '\x1b'));
    assert_non_null(strstr(r.first[0].line, "\\x1b[31mred"));
    assert_non_null(strstr(r.first[0].line, "\\\\ \\xff\\x00 after-nul"));
    char out[8];
    sc_kmsg_escape("\x01\x02\x03", 3, out, sizeof out);
    assert_string_equal(out, "\\x01"); /* cut on a whole escape, still terminated */
    static char big[20000];
    memset(big, 'a', sizeof big);
    memcpy(big, "amdgpu GPU reset ", 17);
    scan(big, sizeof big);
    assert_int_equal(r.total, 1);
    assert_true(strlen(r.first[0].line) < SC_KMSG_LINE_MAX);
    scan(NULL, 0);
    assert_int_equal(r.total, 0);
    /* more devices than kept apart: the scan still counts, and keeps the first ones */
    static char many[64 * 64];
    size_t len = 0;
    for (int i = 0; i < 60; i++)
        len += (size_t)snprintf(many + len, sizeof many - len,
                                "amdgpu 0000:%02x:00.0: GPU reset begin!\n", i);
    scan(many, len);
    assert_int_equal(r.total, 60);
    assert_int_equal(r.ndevices, SC_KMSG_MAX_DEVICES);
}

/* The readers on the committed MI250X fixture, through a real root. */
static void test_fixture_readers(void **state)
{
    (void)state;
    const char *src = getenv("SC_SOURCE_DIR");
    if (!src)
        skip();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/mi250x-8gcd", src);
    sc_root root;
    sc_error err = {0};
    assert_int_equal(sc_root_open(&root, dir, &err), 0);
    sc_kfd_topology topo;
    assert_int_equal(sc_kfd_read(&root, &topo, &err), 0);
    assert_true(topo.present);
    assert_int_equal(topo.count, 9);
    assert_false(sc_kfd_node_is_gpu(&topo.nodes[0]));
    assert_true(sc_kfd_node_is_gpu(&topo.nodes[8]));
    assert_int_equal(topo.nodes[8].index, 8);
    assert_string_equal(topo.nodes[1].name, "aldebaran");
    assert_true(topo.nodes[1].vram_known && topo.nodes[1].vram_bytes == 68702699520ULL);
    sc_kfd_free(&topo);
    sc_pci_list pci;
    assert_int_equal(sc_pci_scan(&root, &pci, &err), 0);
    const sc_pci_device *d = sc_pci_find(&pci, "0000:c1:00.0");
    assert_non_null(d);
    assert_int_equal(d->vendor, 0x1002);
    assert_int_equal(d->device, 0x740c);
    assert_int_equal(d->class_code, 0x038000);
    assert_string_equal(d->driver, "amdgpu");
    assert_string_equal(pci.items[0].address, "0000:01:00.0"); /* sorted */
    assert_string_equal(sc_pci_find(&pci, "0000:c0:00.0")->driver, "");
    sc_pci_list_free(&pci);
    sc_root_close(&root);
}

/* The live readers on this machine: /dev/kmsg drains without blocking (as root), libdrm answers. */
static void test_live_readers(void **state)
{
    (void)state;
    sc_root root;
    sc_error err = {0};
    assert_int_equal(sc_root_open(&root, "/", &err), 0);
    sc_buf text;
    sc_buf_init(&text);
    char source[64];
    int rc = sc_kmsg_read(&root, &text, source, sizeof source, &err);
    assert_string_equal(source, "/dev/kmsg");
    if (rc == 0 && geteuid() == 0) {
        scan(text.data, text.len);
        assert_true(r.lines > 0);
    } else if (rc < 0) {
        assert_non_null(strstr(err.message, "/dev/kmsg"));
    }
    sc_buf_free(&text);
    cJSON *arr = cJSON_CreateArray();
    int n = sc_drm_collect(&root, arr, &err);
    assert_true(n >= 0);
    assert_int_equal(cJSON_GetArraySize(arr), n);
    const cJSON *d;
    cJSON_ArrayForEach (d, arr) {
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(d, "source")), "libdrm");
    }
    cJSON_Delete(arr);
    sc_root_close(&root);
}

/* DRM facts offline come from /sys/class/drm, sorted by address, connectors ignored. */
static void test_fixture_drm(void **state)
{
    (void)state;
    const char *src = getenv("SC_SOURCE_DIR");
    if (!src)
        skip();
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/hygon-dcu", src);
    sc_root root;
    sc_error err = {0};
    assert_int_equal(sc_root_open(&root, dir, &err), 0);
    cJSON *arr = cJSON_CreateArray();
    assert_int_equal(sc_drm_collect(&root, arr, &err), 4);
    const cJSON *first = cJSON_GetArrayItem(arr, 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(first, "pci_address")),
                        "0000:3f:00.0");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(first, "driver")), "hydcu");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(first, "vendor_id")), "0x1d94");
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(first, "module_version")),
                        "6.3.8-V1.13.3");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(first, "version")));
    cJSON_Delete(arr);
    sc_root_close(&root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_properties_basic),
        cmocka_unit_test(test_properties_whitespace),
        cmocka_unit_test(test_properties_malformed),
        cmocka_unit_test(test_properties_malformed_counts),
        cmocka_unit_test(test_properties_nul_and_long_key),
        cmocka_unit_test(test_properties_capacity_and_duplicates),
        cmocka_unit_test(test_gfx_names),
        cmocka_unit_test(test_kfd_pci_address),
        cmocka_unit_test(test_pci_parse_address),
        cmocka_unit_test(test_pci_vocabulary),
        cmocka_unit_test(test_vram_sum),
        cmocka_unit_test(test_kmsg_scan),
        cmocka_unit_test(test_kmsg_real_amd_lines),
        cmocka_unit_test(test_kmsg_find_pci),
        cmocka_unit_test(test_kmsg_escape_and_bounds),
        cmocka_unit_test(test_fixture_readers),
        cmocka_unit_test(test_fixture_drm),
        cmocka_unit_test(test_live_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
