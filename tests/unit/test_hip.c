/* runtime.hip's helpers: HIP_VERSION decoding, the error-name table, target-id parsing, reading
 * the properties struct at its offsets, PCI addresses, version files good and malformed, and the
 * passive inventory on the fixture roots and on a scratch root (ld.so.conf includes, KFD proc). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "probes.h"
#include "run_state_fixture.h"
#include "sc_hip_api.h"
#include "sc_hip_inventory.h"

/* ---- HIP_VERSION ---- */

static void test_version_decode(void **state)
{
    (void)state;
    char buf[32];
    assert_int_equal(sc_hip_version_decode(50221153, buf, sizeof buf), 0);
    assert_string_equal(buf, "5.2.21153");
    assert_int_equal(sc_hip_version_decode(60241133, buf, sizeof buf), 0);
    assert_string_equal(buf, "6.2.41133");
    assert_int_equal(sc_hip_version_decode(70000000, buf, sizeof buf), 0);
    assert_string_equal(buf, "7.0.0");
    assert_int_equal(sc_hip_version_decode(40100005, buf, sizeof buf), 0);
    assert_string_equal(buf, "4.1.5");
    assert_int_equal(sc_hip_version_decode(0, buf, sizeof buf), -EINVAL);
    assert_int_equal(sc_hip_version_decode(-42, buf, sizeof buf), -EINVAL);
    assert_int_equal(sc_hip_version_decode(2000000000L, buf, sizeof buf), -EINVAL);
}

/* ---- error names ---- */

static const char *garbage_name(int code)
{
    (void)code;
    return "hipError\x01\x7f\nBad";
}

static const char *null_string(int code)
{
    (void)code;
    return NULL;
}

static void test_error_names(void **state)
{
    (void)state;
    assert_string_equal(sc_hip_error_name(100), "hipErrorNoDevice");
    assert_string_equal(sc_hip_error_name(35), "hipErrorInsufficientDriver");
    assert_string_equal(sc_hip_error_name(209), "hipErrorNoBinaryForGpu");
    assert_string_equal(sc_hip_error_name(2), "hipErrorOutOfMemory");
    assert_string_equal(sc_hip_error_name(0), "hipSuccess");
    assert_null(sc_hip_error_name(12345));
    char buf[256];
    sc_hip_describe(NULL, 100, buf, sizeof buf);
    assert_string_equal(buf, "hipErrorNoDevice (100)");
    sc_hip_describe(NULL, 4242, buf, sizeof buf);
    assert_string_equal(buf, "hipError? (4242)");
    sc_hip_fns fns = {0};
    fns.get_error_name = garbage_name; /* control characters never reach the report */
    fns.get_error_string = null_string;
    sc_hip_describe(&fns, 7, buf, sizeof buf);
    assert_string_equal(buf, "hipError???Bad (7)");
}

/* ---- target ids ---- */

static void test_arch_parse(void **state)
{
    (void)state;
    sc_hip_arch a;
    assert_int_equal(sc_hip_arch_parse("gfx90a:sramecc+:xnack-", &a), 0);
    assert_string_equal(a.processor, "gfx90a");
    assert_int_equal(a.sramecc, '+');
    assert_int_equal(a.xnack, '-');
    assert_int_equal(sc_hip_arch_parse("gfx1100", &a), 0);
    assert_string_equal(a.processor, "gfx1100");
    assert_int_equal(a.xnack, 0);
    assert_int_equal(sc_hip_arch_parse("gfx942:xnack+", &a), 0);
    assert_int_equal(a.xnack, '+');
    assert_int_equal(sc_hip_arch_parse("gfx928", &a), 0);
    static const char *const bad[] = {
        "",        "gfx",         "GFX90a",         "gfx90A",
        "gfx90a:", "gfx90a:foo+", "gfx90a:xnack",   "gfx90a:xnack+:xnack-",
        "gfx9zz",  "sm_90",       "gfx90a::xnack+", "gfx90a:xnack+x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sc_hip_arch_parse(bad[i], &a), -EINVAL);
    char longname[400];
    memset(longname, '9', sizeof longname - 1);
    memcpy(longname, "gfx", 3);
    longname[sizeof longname - 1] = '\0';
    assert_int_equal(sc_hip_arch_parse(longname, &a), -EINVAL);
    assert_int_equal(sc_hip_arch_parse(NULL, &a), -EINVAL);
}

/* ---- the properties struct ---- */

static void put_i32(unsigned char *b, size_t off, int v)
{
    memcpy(b + off, &v, sizeof v);
}

static void test_props_r0000(void **state)
{
    (void)state;
    unsigned char *b = calloc(1, SC_HIP_PROPS_BUF);
    uint64_t mem = 64ULL << 30;
    strcpy((char *)b, "AMD Instinct MI250X");
    memcpy(b + 256, &mem, sizeof mem);
    put_i32(b, 276, 64);
    put_i32(b, 336, 110);
    put_i32(b, 364, 0);
    put_i32(b, 368, 0xc1);
    put_i32(b, 372, 0);
    strcpy((char *)b + 396, "gfx90a:sramecc+:xnack-");
    sc_hip_props p;
    assert_int_equal(sc_hip_props_read(b, SC_HIP_PROPS_BUF, false, &p), 0);
    assert_string_equal(p.name, "AMD Instinct MI250X");
    assert_string_equal(p.arch, "gfx90a:sramecc+:xnack-");
    assert_true(p.total_mem == mem);
    assert_int_equal(p.warp_size, 64);
    assert_int_equal(p.compute_units, 110);
    assert_int_equal(p.pci_bus, 0xc1);
    assert_false(p.name_unterminated);
    memset(b + 396, 'x', 256); /* garbage: no NUL in gcnArchName */
    assert_int_equal(sc_hip_props_read(b, SC_HIP_PROPS_BUF, false, &p), 0);
    assert_true(p.arch_unterminated);
    assert_true(strlen(p.arch) < sizeof p.arch);
    assert_int_equal(sc_hip_props_read(b, 700, false, &p), -EINVAL);
    free(b);
}

static void test_props_r0600(void **state)
{
    (void)state;
    unsigned char *b = calloc(1, SC_HIP_PROPS_BUF);
    uint64_t mem = 192ULL << 30;
    strcpy((char *)b, "AMD Instinct MI300X");
    memcpy(b + 288, &mem, sizeof mem);
    put_i32(b, 308, 64);
    put_i32(b, 388, 304);
    put_i32(b, 584, 0x0c);
    put_i32(b, 592, 1);
    strcpy((char *)b + 1160, "gfx942:sramecc+:xnack-");
    sc_hip_props p;
    assert_int_equal(sc_hip_props_read(b, SC_HIP_PROPS_BUF, true, &p), 0);
    assert_string_equal(p.arch, "gfx942:sramecc+:xnack-");
    assert_int_equal(p.compute_units, 304);
    assert_int_equal(p.pci_bus, 0x0c);
    assert_int_equal(p.pci_domain, 1);
    assert_true(p.total_mem == mem);
    assert_int_equal(sc_hip_props_read(b, 1400, true, &p), -EINVAL);
    free(b);
}

static void test_attr_numbering(void **state)
{
    (void)state;
    assert_int_equal(sc_hip_attr_ids_for(50221153)->warp_size, 87);
    assert_int_equal(sc_hip_attr_ids_for(50221153)->compute_units, 63);
    assert_int_equal(sc_hip_attr_ids_for(60241133)->pci_bus, 67);
    assert_int_equal(sc_hip_attr_ids_for(40200000)->warp_size, 9);
    assert_int_equal(sc_hip_attr_ids_for(40200000)->compute_units, 14);
    assert_int_equal(sc_hip_attr_ids_for(40200000)->pci_domain, -1);
    assert_int_equal(sc_hip_attr_ids_for(0)->warp_size, 87); /* unknown: the current numbering */
}

static void test_pci(void **state)
{
    (void)state;
    char buf[32];
    assert_int_equal(sc_hip_pci_normalize("0000:C1:00.0", buf, sizeof buf), 0);
    assert_string_equal(buf, "0000:c1:00.0");
    assert_int_equal(sc_hip_pci_normalize("0001:0c:1f.7", buf, sizeof buf), 0);
    assert_string_equal(buf, "0001:0c:1f.7");
    assert_int_equal(sc_hip_pci_normalize("ZZZZZZZZ", buf, sizeof buf), -EINVAL);
    assert_int_equal(sc_hip_pci_normalize("0000:c1:00.0junk", buf, sizeof buf), -EINVAL);
    assert_int_equal(sc_hip_pci_normalize("0000:c1:40.0", buf, sizeof buf), -EINVAL);
    assert_int_equal(sc_hip_pci_normalize(NULL, buf, sizeof buf), -EINVAL);
    sc_hip_pci_format(buf, sizeof buf, 0, 0xc1, 0, 0);
    assert_string_equal(buf, "0000:c1:00.0");
}

/* ---- version files ---- */

static void test_version_files(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(sc_hip_parse_version_file("6.2.0-66\n", buf, sizeof buf), 0);
    assert_string_equal(buf, "6.2.0-66");
    assert_int_equal(sc_hip_parse_version_file("  25.04.2  \r\nrest\n", buf, sizeof buf), 0);
    assert_string_equal(buf, "25.04.2");
    assert_int_equal(sc_hip_parse_version_file("6.2.0.60200-66~22.04\n", buf, sizeof buf), 0);
    static const char *const bad[] = {
        "", "\n\n", "abc", "6.2.0 $(reboot)", "\x01\x02\xff", "6.2/../../x", "v6.2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sc_hip_parse_version_file(bad[i], buf, sizeof buf), -EINVAL);
    char longv[200];
    memset(longv, '1', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    assert_int_equal(sc_hip_parse_version_file(longv, buf, sizeof buf), -EINVAL);
    assert_int_equal(sc_hip_parse_version_file(NULL, buf, sizeof buf), -EINVAL);
}

static void test_hip_version_files(void **state)
{
    (void)state;
    char buf[64];
    const char *full = "# HIP\nHIP_VERSION_MAJOR=6\nHIP_VERSION_MINOR=2\nHIP_VERSION_PATCH=41133\n"
                       "HIP_VERSION_GITHASH=dd7f95766\n";
    assert_int_equal(sc_hip_parse_hip_version_file(full, buf, sizeof buf), 0);
    assert_string_equal(buf, "6.2.41133");
    assert_int_equal(sc_hip_parse_hip_version_file("HIP_VERSION_MINOR=7\nHIP_VERSION_MAJOR=5\n",
                                                   buf, sizeof buf),
                     0);
    assert_string_equal(buf, "5.7");
    static const char *const bad[] = {"",
                                      "HIP_VERSION_MINOR=2\n",
                                      "HIP_VERSION_MAJOR=six\nHIP_VERSION_MINOR=2\n",
                                      "HIP_VERSION_MAJOR=99999999999\nHIP_VERSION_MINOR=1\n",
                                      "HIP_VERSION_MAJOR=-1\nHIP_VERSION_MINOR=1\n",
                                      "\xff\xfe"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(sc_hip_parse_hip_version_file(bad[i], buf, sizeof buf), -EINVAL);
}

/* ---- the inventory on the committed fixtures ---- */

static void open_fixture(sc_root *root, const char *name)
{
    const char *src = getenv("SC_SOURCE_DIR");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/fixtures/%s", src ? src : ".", name);
    sc_error err;
    assert_int_equal(sc_root_open(root, dir, &err), 0);
}

static const sc_hip_install *install_at(const sc_hip_inventory *inv, const char *root)
{
    for (int i = 0; i < inv->install_count; i++)
        if (strcmp(inv->installs[i].root, root) == 0)
            return &inv->installs[i];
    return NULL;
}

static void test_inventory_hygon(void **state)
{
    (void)state;
    sc_root root;
    open_fixture(&root, "hygon-dcu");
    sc_hip_inventory *inv = calloc(1, sizeof *inv);
    sc_hip_env env = {NULL, "/opt/dtk", "/opt/dtk/hip"};
    sc_hip_inventory_installs(&root, &env, inv);
    const sc_hip_install *a = install_at(inv, "/opt/dtk-24.04.1");
    const sc_hip_install *b = install_at(inv, "/opt/dtk-25.04.2");
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a->version, "24.04.1");
    assert_string_equal(b->version, "25.04.2");
    assert_int_equal(b->kind, SC_ROOT_DTK);
    assert_true(b->hip_version[0] != '\0');
    /* /opt/dtk, the versioned name, ROCM_PATH and HIP_PATH all reach the one 25.04.2 install */
    assert_int_equal(b->via_count, 4);
    assert_int_equal(inv->link_count, 1);
    assert_string_equal(inv->links[0].name, "/opt/dtk");
    assert_string_equal(inv->links[0].target, "/opt/dtk-25.04.2");
    sc_hip_pick pick;
    assert_false(sc_hip_loader_find(&root, NULL, "libgalaxyhip.so.5", &pick));
    assert_true(
        sc_hip_loader_find(&root, "/nonexistent:/opt/dtk/hip/lib", "libgalaxyhip.so.5", &pick));
    assert_string_equal(pick.realpath, "/opt/dtk-25.04.2/hip/lib/libgalaxyhip.so.5");
    assert_string_equal(pick.found_via, "ld_library_path");
    assert_string_equal(pick.root.path, "/opt/dtk-25.04.2");
    assert_ptr_equal(sc_hip_inventory_install_of(inv, pick.realpath), b);
    char roots[512];
    assert_int_equal(
        sc_hip_path_roots(&root, "/opt/dtk/lib:/opt/dtk-25.04.2/hip/lib", roots, sizeof roots), 1);
    assert_int_equal(sc_hip_path_roots(&root, "/opt/dtk/lib:/usr/lib:/opt/dtk-24.04.1/hip/lib",
                                       roots, sizeof roots),
                     2);
    assert_non_null(strstr(roots, "/opt/dtk-24.04.1"));
    free(inv);
    sc_root_close(&root);
}

static void test_inventory_rocm_multi(void **state)
{
    (void)state;
    sc_root root;
    open_fixture(&root, "rocm-multi");
    sc_hip_inventory *inv = calloc(1, sizeof *inv);
    sc_hip_inventory_installs(&root, NULL, inv);
    assert_non_null(install_at(inv, "/opt/rocm-5.7.1"));
    const sc_hip_install *six = install_at(inv, "/opt/rocm-6.2.0");
    assert_non_null(six);
    assert_string_equal(six->version, "6.2.0-66");
    assert_string_equal(six->hip_version, "6.2.41133");
    const sc_hip_install *bad = install_at(inv, "/opt/rocm-4.5.2");
    assert_non_null(bad); /* a malformed .info/version: kept, version empty with a reason */
    assert_string_equal(bad->version, "");
    assert_non_null(strstr(bad->version_error, "malformed"));
    /* the ld.so.conf include names /opt/rocm/lib, which leads to ROCm 6.2.0 */
    sc_hip_pick pick;
    assert_true(sc_hip_loader_find(&root, NULL, "libamdhip64.so.6", &pick));
    assert_string_equal(pick.found_via, "ld.so.conf"); /* no ld.so.cache in the fixture */
    assert_string_equal(pick.realpath, "/opt/rocm-6.2.0/lib/libamdhip64.so.6.2.60200");
    assert_false(sc_hip_loader_find(&root, NULL, "libamdhip64.so.5", &pick));
    /* LD_LIBRARY_PATH comes first */
    assert_true(sc_hip_loader_find(&root, "/opt/rocm-5.7.1/lib", "libamdhip64.so.5", &pick));
    assert_string_equal(pick.realpath, "/opt/rocm-5.7.1/lib/libamdhip64.so.5.7.50701");
    assert_string_equal(pick.found_via, "ld_library_path");
    assert_string_equal(sc_hip_runtime_names(true)[0], "libgalaxyhip.so.5");
    assert_string_equal(sc_hip_runtime_names(false)[0], "libamdhip64.so");
    free(inv);
    sc_root_close(&root);
}

/* On this machine Debian's libamdhip64 5.2 is in the real ld.so.cache. */
static void test_loader_uses_cache(void **state)
{
    (void)state;
    sc_root host;
    sc_error err;
    assert_int_equal(sc_root_open(&host, NULL, &err), 0);
    sc_hip_pick pick;
    if (access("/etc/ld.so.cache", R_OK) != 0 ||
        !sc_hip_loader_find(&host, NULL, "libamdhip64.so.5", &pick)) {
        sc_root_close(&host);
        skip();
    }
    assert_string_equal(pick.found_via, "cache");
    char real[4096];
    assert_non_null(realpath(pick.path, real));
    assert_string_equal(pick.realpath, real);
    assert_int_equal(pick.root.kind, SC_ROOT_SYSTEM);
    sc_root_close(&host);
}

/* ---- a scratch root: KFD per-process memory ---- */

static void put_file(const char *root, const char *rel, const char *text)
{
    char path[1024], cmd[1200];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_kfd_vram_users(void **state)
{
    (void)state;
    char dir[] = "/tmp/sc-hip-XXXXXX";
    assert_non_null(mkdtemp(dir));
    put_file(dir, "sys/class/kfd/kfd/proc/4242/vram_51234", "60129542144\n");
    put_file(dir, "proc/4242/comm", "python3\n");
    put_file(dir, "sys/class/kfd/kfd/proc/4343/vram_51234", "0\n");
    put_file(dir, "sys/class/kfd/kfd/proc/4444/vram_999", "1024\n");
    put_file(dir, "sys/class/kfd/kfd/proc/4545/vram_51234", "garbage\n");
    put_file(dir, "sys/class/kfd/kfd/proc/77/vram_51234", "4096\n"); /* ourselves: skipped */
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, dir, &err), 0);
    sc_hip_vram_user users[8];
    int n = sc_hip_kfd_vram_users(&root, 51234, 77, users, 8);
    assert_int_equal(n, 1);
    assert_int_equal(users[0].pid, 4242);
    assert_string_equal(users[0].comm, "python3");
    assert_true(users[0].vram_bytes == 60129542144ULL);
    sc_root_close(&root);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    sc_root empty;
    assert_int_equal(sc_root_open(&empty, "/tmp", &err), 0);
    assert_true(sc_hip_kfd_vram_users(&empty, 1, 0, users, 8) < 0);
    sc_root_close(&empty);
}

static char *fake_env(const char *name)
{
    if (strcmp(name, "ROCR_VISIBLE_DEVICES") == 0)
        return "7";
    if (strcmp(name, "CUDA_VISIBLE_DEVICES") == 0)
        return "";
    return NULL;
}

static char *no_env(const char *name)
{
    (void)name;
    return NULL;
}

static void test_visibility_vars(void **state)
{
    (void)state;
    char buf[256];
    assert_int_equal(sc_hip_visibility_vars(fake_env, buf, sizeof buf), 2);
    assert_string_equal(buf, "ROCR_VISIBLE_DEVICES=7, CUDA_VISIBLE_DEVICES=");
    assert_int_equal(sc_hip_visibility_vars(no_env, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
}

/* ---- the probe itself against the stub runtime, with a driver layer and a KFD of our making ----
 */

static const char driver_two[] =
    "[{\"name\":\"driver\",\"probes\":[{\"id\":\"driver.amd\",\"backend\":\"amd\",\"status\":"
    "\"pass\",\"findings\":[],\"facts\":{\"devices\":["
    "{\"pci_address\":\"0000:c1:00.0\",\"gpu_id\":1111,\"gfx_target\":\"gfx90a\"},"
    "{\"pci_address\":\"0000:d1:00.0\",\"gpu_id\":2222,\"gfx_target\":\"gfx90a\"}]}}]}]";
static const char driver_three[] =
    "[{\"name\":\"driver\",\"probes\":[{\"id\":\"driver.amd\",\"backend\":\"amd\",\"status\":"
    "\"pass\",\"findings\":[],\"facts\":{\"devices\":["
    "{\"pci_address\":\"0000:c1:00.0\",\"gpu_id\":1111,\"gfx_target\":\"gfx90a\"},"
    "{\"pci_address\":\"0000:d1:00.0\",\"gpu_id\":2222,\"gfx_target\":\"gfx90a\"},"
    "{\"pci_address\":\"0000:e1:00.0\",\"gpu_id\":3333,\"gfx_target\":\"gfx90a\"}]}}]}]";

/* Runs runtime.hip in this process with the stub in mode, the given driver layer, and a scratch
 * root (for the KFD proc files); returns the result (caller frees). */
static sc_result run_probe(const char *mode, const char *layers_json, const char *root_dir)
{
    char lib[1024];
    const char *stubs = getenv("SC_STUB_DIR");
    snprintf(lib, sizeof lib, "%s/libhipstub.so", stubs ? stubs : "tests/stubs");
    setenv("SC_HIPSTUB_MODE", mode, 1);
    sc_options opt;
    sc_options_init(&opt);
    opt.hip_library = lib;
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, root_dir, &err), 0);
    sc_test_run t;
    sc_test_run_from_json(&t, layers_json);
    sc_ctx ctx = {.opt = &opt, .root = &root, .offline = false, .run = &t.rs};
    sc_result res;
    assert_int_equal(sc_result_init(&res), 0);
    sc_probe_runtime_hip.run(&ctx, &res);
    sc_test_run_free(&t);
    sc_root_close(&root);
    return res;
}

static const char *finding_message(const sc_result *res, const char *id)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, res->findings) {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "id")), id) == 0)
            return cJSON_GetStringValue(cJSON_GetObjectItem(f, "message"));
    }
    return NULL;
}

/* The probe tests need the stub runtime (target test_support); without it they are skipped. */
static void require_stub(void)
{
    char lib[1024];
    const char *stubs = getenv("SC_STUB_DIR");
    snprintf(lib, sizeof lib, "%s/libhipstub.so", stubs ? stubs : "tests/stubs");
    if (access(lib, R_OK) != 0)
        skip();
}

static void test_probe_memory_in_use(void **state)
{
    (void)state;
    require_stub();
    char dir[] = "/tmp/sc-hip-XXXXXX";
    assert_non_null(mkdtemp(dir));
    put_file(dir, "sys/class/kfd/kfd/proc/999/vram_1111", "60129542144\n"); /* 56 GiB of 64 */
    put_file(dir, "proc/999/comm", "llama-server\n");
    put_file(dir, "sys/class/kfd/kfd/proc/998/vram_2222", "1048576\n");
    sc_result res = run_probe("ok", driver_two, dir);
    const char *msg = finding_message(&res, "hip.memory-in-use");
    assert_non_null(msg);
    assert_non_null(strstr(msg, "device 0"));
    assert_non_null(strstr(msg, "999 (llama-server)"));
    assert_null(strstr(msg, "device 1"));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(res.facts, "driver_agrees")));
    const cJSON *dev1 = cJSON_GetArrayItem(cJSON_GetObjectItem(res.facts, "devices"), 1);
    const cJSON *others =
        cJSON_GetObjectItem(cJSON_GetObjectItem(dev1, "memory"), "other_processes");
    assert_int_equal(cJSON_GetArraySize(others), 1);
    assert_int_equal(sc_result_status(&res), SC_STATUS_WARN);
    sc_result_free(&res);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_probe_devices_hidden(void **state)
{
    (void)state;
    require_stub();
    setenv("HIP_VISIBLE_DEVICES", "5", 1);
    sc_result res = run_probe("no-device", driver_two, "/tmp");
    unsetenv("HIP_VISIBLE_DEVICES");
    const char *msg = finding_message(&res, "hip.devices-hidden");
    assert_non_null(msg);
    assert_non_null(strstr(msg, "HIP_VISIBLE_DEVICES=5"));
    assert_non_null(strstr(msg, "driver.amd sees 2 devices"));
    assert_null(finding_message(&res, "hip.no-device"));
    sc_result_free(&res);
    res = run_probe("no-device", driver_two, "/tmp"); /* nothing set: no-device, driver evidence */
    msg = finding_message(&res, "hip.no-device");
    assert_non_null(msg);
    assert_non_null(strstr(msg, "gfx90a at 0000:c1:00.0"));
    assert_non_null(strstr(msg, "hipErrorNoDevice"));
    assert_int_equal(sc_result_status(&res), SC_STATUS_FAIL);
    sc_result_free(&res);
}

static void test_probe_device_mismatch(void **state)
{
    (void)state;
    require_stub();
    sc_result res = run_probe("ok", driver_three, "/tmp");
    const char *msg = finding_message(&res, "hip.device-mismatch");
    assert_non_null(msg);
    assert_non_null(strstr(msg, "driver.amd sees 3 devices, the runtime 2"));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(res.facts, "driver_agrees")));
    sc_result_free(&res);
}

static void test_probe_arch_override(void **state)
{
    (void)state;
    require_stub();
    setenv("HSA_OVERRIDE_GFX_VERSION", "9.4.2", 1);
    sc_result res = run_probe("ok", driver_two, "/tmp");
    unsetenv("HSA_OVERRIDE_GFX_VERSION");
    const char *msg = finding_message(&res, "hip.arch-overridden");
    assert_non_null(msg);
    assert_non_null(strstr(msg, "9.4.2"));
    assert_non_null(strstr(msg, "the hardware is gfx90a"));
    sc_result_free(&res);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version_decode),
        cmocka_unit_test(test_error_names),
        cmocka_unit_test(test_arch_parse),
        cmocka_unit_test(test_props_r0000),
        cmocka_unit_test(test_props_r0600),
        cmocka_unit_test(test_attr_numbering),
        cmocka_unit_test(test_pci),
        cmocka_unit_test(test_version_files),
        cmocka_unit_test(test_hip_version_files),
        cmocka_unit_test(test_inventory_hygon),
        cmocka_unit_test(test_inventory_rocm_multi),
        cmocka_unit_test(test_kfd_vram_users),
        cmocka_unit_test(test_visibility_vars),
        cmocka_unit_test(test_loader_uses_cache),
        cmocka_unit_test(test_probe_memory_in_use),
        cmocka_unit_test(test_probe_devices_hidden),
        cmocka_unit_test(test_probe_device_mismatch),
        cmocka_unit_test(test_probe_arch_override),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
