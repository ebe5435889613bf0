/* The platforms table of `stackcheck diff` on hand-made snapshots: an NVIDIA node against an AMD
 * node as one migration table (devices completed from the runtime by PCI address, driver,
 * runtime, toolkit, collective library, torch build), Ascend devices completed by place, how a
 * backend is recognised (devices, a passing driver, an install), the text (table, folded
 * per-backend changes, escaping), the cap on a role's entries, wrong types, and the descriptors'
 * role data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diff_harness.h"
#include "sc_backend.h"
#include "sc_diff.h"

/* A snapshot whose layer "x" holds the probes given as JSON objects. */
static cJSON *snapshot(const char *probes)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    fprintf(f,
            "{\"schema\":\"stackcheck/snapshot/v1\",\"created\":\"t\",\"host\":{\"kernel\":"
            "\"6.1\"},\"layers\":[{\"name\":\"x\",\"probes\":[%s]}],\"summary\":{}}",
            probes);
    fclose(f);
    cJSON *json = cJSON_Parse(text);
    free(text);
    assert_non_null(json);
    return json;
}

static const cJSON *row(const cJSON *d, const char *role)
{
    const cJSON *r;
    cJSON_ArrayForEach (r, cJSON_GetObjectItem(cJSON_GetObjectItem(d, "platforms"), "rows")) {
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "role")), role) == 0)
            return r;
    }
    fail_msg("no row %s", role);
    return NULL;
}

static void assert_row(const cJSON *d, const char *role, const char *a, const char *b)
{
    const cJSON *r = row(d, role);
    const char *ra = cJSON_GetStringValue(cJSON_GetObjectItem(r, "a"));
    const char *rb = cJSON_GetStringValue(cJSON_GetObjectItem(r, "b"));
    if (a)
        assert_string_equal(ra, a);
    else
        assert_null(ra);
    if (b)
        assert_string_equal(rb, b);
    else
        assert_null(rb);
}

/* The text output of d; the caller frees it. */
static char *text_of(const cJSON *d)
{
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    sc_diff_print(f, d, "a.json", "b.json");
    fclose(f);
    return text;
}

#define GIB "* 1073741824"

static const char nvidia_node[] =
    "{\"id\":\"driver.nvidia\",\"backend\":\"nvidia\",\"status\":\"pass\",\"applicable\":true,"
    "\"facts\":{\"module\":{\"name\":\"nvidia\",\"version\":\"550.54.15\"},"
    "\"driver_version\":\"550.54.15\",\"devices\":["
    "{\"pci_address\":\"0000:18:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\",\"vbios\":\"96.00.8\"},"
    "{\"pci_address\":\"0000:2a:00.0\",\"model\":\"NVIDIA H100 80GB HBM3\",\"vbios\":\"96.00.8\"}"
    "]},\"findings\":[]},"
    "{\"id\":\"runtime.cuda\",\"backend\":\"nvidia\",\"status\":\"pass\",\"applicable\":true,"
    "\"facts\":{\"toolkit_version\":\"12.4.1\",\"cuda_link\":\"/usr/local/cuda-12.4\","
    "\"driver_api\":{\"cuda_version\":\"12.4\","
    "\"realpath\":\"/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15\"},\"devices\":["
    "{\"pci_address\":\"0000:2a:00.0\",\"name\":\"H100\",\"arch\":\"sm_90\","
    "\"total_memory_bytes\":85899345920},"
    "{\"pci_address\":\"0000:18:00.0\",\"name\":\"H100\",\"arch\":\"sm_90\","
    "\"total_memory_bytes\":85899345920}]},\"findings\":[]},"
    "{\"id\":\"framework.torch\",\"backend\":\"none\",\"status\":\"pass\",\"facts\":{\"torch\":"
    "{\"version\":\"2.3.0\",\"cuda\":\"12.1\",\"hip\":null,\"device_count\":2,"
    "\"mapped_libraries\":[{\"name\":\"libnccl.so.2\",\"root\":\"/opt/venv\"}]}},"
    "\"findings\":[]}";

/* Eight MI250X GCDs: the driver's devices (KFD) and the runtime's, ROCm 6.2 picked. */
static cJSON *amd_node(void)
{
    char probes[8192];
    size_t n = (size_t)snprintf(
        probes, sizeof probes,
        "{\"id\":\"driver.amd\",\"backend\":\"amd\",\"status\":\"pass\",\"applicable\":true,"
        "\"facts\":{\"module\":{\"name\":\"amdgpu\",\"version\":\"6.3.6\"},\"devices\":[");
    for (int i = 0; i < 8; i++)
        n += (size_t)snprintf(probes + n, sizeof probes - n,
                              "%s{\"pci_address\":\"0000:c%d:00.0\",\"name\":\"aldebaran\","
                              "\"gfx_target\":\"gfx90a\",\"vram_bytes\":68702699520,"
                              "\"fw_version\":78}",
                              i ? "," : "", i);
    snprintf(probes + n, sizeof probes - n,
             "]},\"findings\":[]},"
             "{\"id\":\"runtime.hip\",\"backend\":\"amd\",\"status\":\"pass\",\"facts\":{"
             "\"runtime\":{\"version\":\"6.2.41133\",\"root\":\"/opt/rocm-6.2.0\"},"
             "\"runtime_library\":{\"root\":\"/opt/rocm-6.2.0\",\"root_kind\":\"rocm\","
             "\"install_version\":\"6.2.0-66\"}},\"findings\":[]},"
             "{\"id\":\"framework.torch\",\"backend\":\"none\",\"status\":\"pass\",\"facts\":{"
             "\"torch\":{\"version\":\"2.3.0\",\"cuda\":null,\"hip\":\"6.0.32830\","
             "\"device_count\":8,\"mapped_libraries\":[{\"name\":\"librccl.so.1\","
             "\"root\":\"/opt/rocm-6.2.0\"}]}},\"findings\":[]}");
    return snapshot(probes);
}

static void test_migration_table(void **state)
{
    (void)state;
    cJSON *d = diff_of(snapshot(nvidia_node), amd_node());
    const cJSON *p = cJSON_GetObjectItem(d, "platforms");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(p, "differ")));
    assert_row(d, "backend", "NVIDIA GPU", "AMD GPU / Hygon DCU");
    /* the driver's model, completed from the runtime's device with the same PCI address */
    assert_row(d, "devices", "2 x NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)",
               "8 x aldebaran (gfx90a, 64 GiB)");
    assert_row(d, "driver", "nvidia 550.54.15", "amdgpu 6.3.6");
    assert_row(d, "firmware", "vbios 96.00.8", "fw 78");
    assert_row(d, "runtime", "CUDA 12.4 (/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15)",
               "HIP 6.2.41133 (/opt/rocm-6.2.0)");
    assert_row(d, "toolkit", "CUDA toolkit 12.4.1 (/usr/local/cuda-12.4)",
               "rocm 6.2.0-66 (/opt/rocm-6.2.0)");
    assert_row(d, "collective", "libnccl.so.2 (/opt/venv)", "librccl.so.1 (/opt/rocm-6.2.0)");
    assert_row(d, "torch", "2.3.0 cuda 12.1, 2 devices", "2.3.0 hip 6.0.32830, 8 devices");
    const cJSON *dev =
        cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "b"), "devices"), 0);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(dev, "count")), 8);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(dev, "arch")), "gfx90a");
    cJSON_Delete(d);
}

static void test_migration_text(void **state)
{
    (void)state;
    cJSON *d = diff_of(snapshot(nvidia_node), amd_node());
    char *text = text_of(d);
    assert_non_null(strstr(text, "\nPlatforms:\n"));
    assert_non_null(strstr(text, "  devices     2 x NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)"));
    assert_non_null(strstr(text, "  8 x aldebaran (gfx90a, 64 GiB)\n"));
    assert_non_null(strstr(text, "  driver      nvidia 550.54.15"));
    /* the per-probe lists of each backend are folded into one line; the JSON keeps them */
    assert_null(strstr(text, "driver.nvidia devices count"));
    assert_non_null(strstr(text, "the platforms table sums them up"));
    const cJSON *c;
    bool listed = false;
    cJSON_ArrayForEach (c, cJSON_GetObjectItem(d, "changes"))
        listed |= strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "what")),
                         "driver.nvidia devices count") == 0;
    assert_true(listed);
    /* torch's facts are no backend's: still listed */
    assert_non_null(strstr(text, "framework.torch torch.cuda: 12.1 -> (none)"));
    free(text);
    cJSON_Delete(d);
}

static const char ascend_node[] =
    "{\"id\":\"driver.ascend\",\"backend\":\"ascend\",\"status\":\"pass\",\"facts\":{"
    "\"driver\":{\"version\":\"24.1.rc3\"},\"firmware\":{\"version\":\"7.5.0.1.129\"},"
    "\"devices\":[{\"pci_address\":\"0000:81:00.0\",\"model\":\"Ascend 910B\"},"
    "{\"pci_address\":\"0000:c1:00.0\",\"model\":\"Ascend 910B\"}]},\"findings\":[]},"
    "{\"id\":\"runtime.acl\",\"backend\":\"ascend\",\"status\":\"pass\",\"facts\":{"
    "\"acl\":{\"interface_version\":\"1.0.0\",\"cann_version\":\"8.0.RC3\"},"
    "\"toolkit\":{\"version\":\"8.0.RC3\",\"path\":\"/usr/local/Ascend/ascend-toolkit/8.0.RC3\"},"
    "\"devices\":[%s]},\"findings\":[]},"
    "{\"id\":\"framework.torch\",\"status\":\"pass\",\"facts\":{\"torch\":{\"version\":"
    "\"2.1.0\",\"hip\":null,\"cuda\":null,\"device_count\":0,\"npu_device_count\":2,"
    "\"plugins\":{\"torch_npu\":{\"version\":\"2.1.0.post8\",\"ok\":true}}}},\"findings\":[]}";

static cJSON *ascend_with(const char *runtime_devices)
{
    char probes[4096];
    snprintf(probes, sizeof probes, ascend_node, runtime_devices);
    return snapshot(probes);
}

#define NPU(i)                                                                                     \
    "{\"index\":" #i ",\"soc_name\":\"Ascend910B2\",\"memory\":{\"total_bytes\":68719476736}}"

/* runtime.acl's devices have no PCI address: matched by place when both lists are as long. */
static void test_ascend_devices_by_place(void **state)
{
    (void)state;
    cJSON *d = diff_of(ascend_with(NPU(0) "," NPU(1)), amd_node());
    assert_row(d, "devices", "2 x Ascend 910B (Ascend910B2, 64 GiB)",
               "8 x aldebaran (gfx90a, 64 GiB)");
    assert_row(d, "driver", "npu-driver 24.1.rc3", "amdgpu 6.3.6");
    assert_row(d, "firmware", "firmware 7.5.0.1.129", "fw 78");
    assert_row(d, "runtime", "ACL 1.0.0", "HIP 6.2.41133 (/opt/rocm-6.2.0)");
    assert_row(d, "toolkit", "CANN 8.0.RC3 (/usr/local/Ascend/ascend-toolkit/8.0.RC3)",
               "rocm 6.2.0-66 (/opt/rocm-6.2.0)");
    assert_row(d, "torch", "2.1.0 torch_npu 2.1.0.post8, 2 devices",
               "2.3.0 hip 6.0.32830, 8 devices");
    cJSON_Delete(d);
    /* one NPU hidden from the runtime: no guess at which is which */
    d = diff_of(ascend_with(NPU(0)), amd_node());
    assert_row(d, "devices", "2 x Ascend 910B", "8 x aldebaran (gfx90a, 64 GiB)");
    cJSON_Delete(d);
}

static const char *backends(const cJSON *d, const char *side, char *buf, size_t size)
{
    const cJSON *b;
    size_t n = 0;
    buf[0] = '\0';
    cJSON_ArrayForEach (
        b, cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "platforms"), side),
                               "backends"))
        n += (size_t)snprintf(buf + n, size - n, "%s%s/%s", n ? " " : "",
                              cJSON_GetStringValue(cJSON_GetObjectItem(b, "name")),
                              cJSON_GetStringValue(cJSON_GetObjectItem(b, "evidence")));
    return buf;
}

/* Devices first, then a driver that passed, then an install; a node may have two backends. */
static void test_which_backends(void **state)
{
    (void)state;
    char buf[256];
    static const char driver_only[] =
        "{\"id\":\"driver.amd\",\"status\":\"warn\",\"applicable\":true,\"facts\":{\"devices\":[]}}"
        ","
        "{\"id\":\"driver.nvidia\",\"status\":\"skip\",\"applicable\":false,\"facts\":{}},"
        "{\"id\":\"runtime.cuda\",\"status\":\"skip\",\"facts\":{\"toolkit_version\":\"12.4\"}}";
    static const char installed[] =
        "{\"id\":\"driver.amd\",\"status\":\"fail\",\"applicable\":true,\"facts\":{\"devices\":[]}}"
        ","
        "{\"id\":\"runtime.cuda\",\"status\":\"skip\",\"facts\":{\"toolkit_version\":\"12.4\"}}";
    static const char nothing[] = "{\"id\":\"driver.amd\",\"status\":\"fail\",\"applicable\":true,"
                                  "\"facts\":{\"devices\":[]}}";
    char both[8192];
    snprintf(both, sizeof both, "%s,{\"id\":\"driver.amd\",\"facts\":{\"devices\":[{}]}}",
             nvidia_node);
    cJSON *d = diff_of(snapshot(driver_only), snapshot(installed));
    assert_string_equal(backends(d, "a", buf, sizeof buf), "amd/driver");
    assert_string_equal(backends(d, "b", buf, sizeof buf), "nvidia/installed");
    assert_row(d, "backend", "AMD GPU / Hygon DCU (driver, no device)",
               "NVIDIA GPU (installed, no device)");
    cJSON_Delete(d);
    d = diff_of(snapshot(nothing), snapshot(both));
    assert_string_equal(backends(d, "a", buf, sizeof buf), "");
    assert_string_equal(backends(d, "b", buf, sizeof buf), "amd/devices nvidia/devices");
    assert_row(d, "backend", NULL, "AMD GPU / Hygon DCU, NVIDIA GPU");
    assert_row(d, "devices", NULL, "1 x device, 2 x NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)");
    cJSON_Delete(d);
}

/* The same backends on both sides: no table, nothing folded (the output of 0.1). */
static void test_same_backend_has_no_table(void **state)
{
    (void)state;
    cJSON *b = amd_node();
    cJSON_ReplaceItemInObject(
        cJSON_GetObjectItem(
            cJSON_GetArrayItem(
                cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(b, "layers"), 0),
                                    "probes"),
                0),
            "facts"),
        "devices", cJSON_CreateArray());
    cJSON *d = diff_of(amd_node(), b);
    const cJSON *p = cJSON_GetObjectItem(d, "platforms");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(p, "differ")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(p, "summarised")), 0);
    assert_row(d, "devices", "8 x aldebaran (gfx90a, 64 GiB)", NULL);
    char *text = text_of(d);
    assert_null(strstr(text, "Platforms:"));
    assert_non_null(strstr(text, "[devices] driver.amd devices count: 8 -> 0"));
    free(text);
    cJSON_Delete(d);
}

/* 100 distinct devices: 64 entries listed, the rest counted; three written in the cell. */
static void test_role_cap(void **state)
{
    (void)state;
    char *probes = malloc(16384);
    size_t n = (size_t)snprintf(probes, 16384, "{\"id\":\"driver.amd\",\"facts\":{\"devices\":[");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(probes + n, 16384 - n, "%s{\"name\":\"gpu%d\"}", i ? "," : "", i);
    snprintf(probes + n, 16384 - n, "]}}");
    cJSON *d = diff_of(snapshot(probes), snapshot(nvidia_node));
    free(probes);
    const cJSON *a = cJSON_GetObjectItem(cJSON_GetObjectItem(d, "platforms"), "a");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(a, "devices")), 64);
    assert_int_equal(cJSON_GetNumberValue(cJSON_GetObjectItem(a, "devices_more")), 36);
    assert_row(d, "devices", "1 x gpu0, 1 x gpu1, 1 x gpu2 +97 more",
               "2 x NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)");
    cJSON_Delete(d);
}

/* Wrong types where the roles read: no crash, a number named as text, controls escaped. */
static void test_wrong_types_and_escapes(void **state)
{
    (void)state;
    static const char odd[] =
        "{\"id\":\"driver.amd\",\"facts\":{\"devices\":[1,\"x\",null,{\"name\":5,"
        "\"gfx_target\":[],\"vram_bytes\":\"big\"},{\"name\":\"\\u001b[31mred\"}],"
        "\"module\":\"amdgpu\"}},"
        "{\"id\":\"runtime.hip\",\"facts\":{\"runtime\":[],\"installs\":{\"root\":1},"
        "\"runtime_library\":{\"root\":{},\"install_version\":7}}},"
        "{\"id\":\"framework.torch\",\"facts\":{\"torch\":{\"version\":7,\"hip\":5,"
        "\"plugins\":[]},\"metadata\":[]}},{\"id\":\"libraries.torch\",\"facts\":{\"files\":"
        "[{\"libraries\":[{\"name\":\"libnccl.so.2\",\"root\":[]}]},3]}}";
    cJSON *d = diff_of(snapshot(odd), snapshot(nvidia_node));
    assert_row(d, "devices", "1 x 5, 1 x \x1b[31mred", "2 x NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)");
    assert_row(d, "toolkit", "ROCm 7", "CUDA toolkit 12.4.1 (/usr/local/cuda-12.4)");
    assert_row(d, "collective", "libnccl.so.2", "libnccl.so.2 (/opt/venv)");
    assert_row(d, "torch", "7 cpu", "2.3.0 cuda 12.1, 2 devices");
    const cJSON *devs = cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(d, "platforms"), "a"), "devices");
    assert_string_equal(
        cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(devs, 0), "name")), "5");
    char *text = text_of(d);
    assert_null(strchr(text, '\x1b'));
    assert_non_null(strstr(text, "\\x1b[31mred"));
    free(text);
    cJSON_Delete(d);
}

/* Every descriptor says where its roles are, in its own probes. */
static void test_descriptor_roles(void **state)
{
    (void)state;
    for (const sc_backend_desc *const *b = sc_backends; *b; b++) {
        const sc_stack_part *const lists[] = {(*b)->driver_facts, (*b)->firmware_facts,
                                              (*b)->runtime_facts, (*b)->toolkit_facts};
        assert_non_null((*b)->device_list);
        assert_non_null((*b)->device_name_facts);
        assert_non_null((*b)->device_memory_facts);
        assert_non_null((*b)->torch_device_count);
        assert_true((*b)->torch_build || (*b)->torch_plugin);
        for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
            assert_non_null(lists[i]);
            assert_non_null(lists[i][0].probe);
            for (const sc_stack_part *p = lists[i]; p->probe; p++) {
                assert_true(strcmp(p->probe, (*b)->driver_probe) == 0 ||
                            strcmp(p->probe, (*b)->runtime_probe) == 0);
                assert_non_null(p->label);
                assert_true(p->version || p->where);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_migration_table),           cmocka_unit_test(test_migration_text),
        cmocka_unit_test(test_ascend_devices_by_place),   cmocka_unit_test(test_which_backends),
        cmocka_unit_test(test_same_backend_has_no_table), cmocka_unit_test(test_role_cap),
        cmocka_unit_test(test_wrong_types_and_escapes),   cmocka_unit_test(test_descriptor_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
