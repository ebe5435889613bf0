/* What is derived from the backend table, tested through the public functions with the real table:
 * the PCI vocabulary, the environment allowlist, the device census (fixture roots and this
 * machine), the libraries layer's target archs and the torch build checks. Each test walks every
 * descriptor, so a value added to a descriptor is checked here without a change, and a consumer
 * that goes back to its own list fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "run_state_fixture.h"
#include "sc_backend.h"
#include "sc_census.h"
#include "sc_libs.h"
#include "sc_pci.h"
#include "sc_redact.h"
#include "sc_torch.h"

/* class codes of 24 bits that a descriptor's class entry stands for */
static void class_codes(unsigned entry, unsigned out[2])
{
    if (entry <= 0xff) { /* a base class: any subclass */
        out[0] = entry << 16;
        out[1] = entry << 16 | 0x8000;
    } else {
        out[0] = out[1] = entry << 8;
    }
}

static sc_pci_device pci_dev(unsigned vendor, unsigned class_code)
{
    sc_pci_device d = {.has_ids = true, .vendor = vendor, .device = 0x1234};
    d.class_code = class_code;
    snprintf(d.address, sizeof d.address, "0000:01:00.0");
    return d;
}

/* Every descriptor's vendor id is an accelerator in every class of its descriptor, with the
 * descriptor's spelling and backend, and in no class only another descriptor lists. */
static void test_pci_vocabulary_follows_the_table(void **state)
{
    (void)state;
    for (const sc_backend_desc *const *b = sc_backends; *b; b++)
        for (const sc_backend_vendor *v = (*b)->vendors; v->id; v++) {
            assert_string_equal(sc_pci_vendor_name(v->id), v->name);
            assert_int_equal(sc_pci_vendor_backend(v->id), (*b)->id);
            assert_string_equal(sc_backend_vendor_label(v->id), v->label);
            for (const sc_backend_desc *const *o = sc_backends; *o; o++)
                for (const unsigned *c = (*o)->pci_classes; *c; c++) {
                    unsigned codes[2];
                    class_codes(*c, codes);
                    for (int i = 0; i < 2; i++) {
                        sc_pci_device d = pci_dev(v->id, codes[i]);
                        bool own = sc_backend_class_matches(*b, codes[i]);
                        assert_true(sc_pci_class_is_accelerator(codes[i]));
                        assert_int_equal(sc_pci_is_accelerator(&d), own);
                        assert_ptr_equal(sc_pci_accelerator(&d), own ? *b : NULL);
                    }
                }
            sc_pci_device audio = pci_dev(v->id, 0x040300), nic = pci_dev(v->id, 0x020000);
            assert_false(sc_pci_is_accelerator(&audio)); /* a GPU's HDMI audio */
            assert_false(sc_pci_is_accelerator(&nic));
        }
    sc_pci_device bmc = pci_dev(0x19e5, 0x030000), npu = pci_dev(0x19e5, 0x120000);
    assert_false(sc_pci_is_accelerator(&bmc)); /* Huawei's Hi171x BMC graphics */
    assert_true(sc_pci_is_accelerator(&npu));
    sc_pci_device virtio = pci_dev(0x1af4, 0x030000), no_ids = pci_dev(0x10de, 0x030000);
    no_ids.has_ids = false;
    assert_false(sc_pci_is_accelerator(&virtio));
    assert_null(sc_pci_vendor_name(0x1af4));
    assert_false(sc_pci_is_accelerator(&no_ids));
}

/* The environment allowlist keeps every descriptor's prefixes, names and visibility variables,
 * the framework's own, and everything 0.1.0 kept; it keeps nothing else. */
static void test_env_allowlist_follows_the_table(void **state)
{
    (void)state;
    char name[128];
    for (const sc_backend_desc *const *b = sc_backends; *b; b++) {
        for (const char *const *p = (*b)->env_prefixes; p && *p; p++) {
            snprintf(name, sizeof name, "%sSOME_SETTING", *p);
            assert_true(sc_env_allowed(name));
        }
        for (const char *const *n = (*b)->env_names; n && *n; n++)
            assert_true(sc_env_allowed(*n));
        for (const char *const *n = (*b)->visibility_vars; n && *n; n++)
            assert_true(sc_env_allowed(*n));
    }
    static const char *const kept[] = {"HIP_X",
                                       "HSA_X",
                                       "ROCR_X",
                                       "ROCM_X",
                                       "MIOPEN_X",
                                       "NCCL_X",
                                       "RCCL_X",
                                       "ASCEND_X",
                                       "TORCH_X",
                                       "PYTORCH_X",
                                       "CUDA_X",
                                       "NVIDIA_X",
                                       "GPU_X",
                                       "HCCL_X",
                                       "AMD_X",
                                       "DTK_X",
                                       "HYDCU_X",
                                       "CANN_X",
                                       "ACL_X",
                                       "TE_X",
                                       "OMP_X",
                                       "MKL_X",
                                       "NPU_X",
                                       "LD_PRELOAD",
                                       "LD_LIBRARY_PATH",
                                       "PATH",
                                       "PYTHONPATH",
                                       "PYTHONHOME",
                                       "VIRTUAL_ENV",
                                       "CONDA_PREFIX",
                                       "ROCM_PATH",
                                       "CONDA_DEFAULT_ENV",
                                       "HIP_PATH",
                                       "CUDA_HOME",
                                       "CUDA_PATH",
                                       "LD_BIND_NOW",
                                       "MALLOC_ARENA_MAX",
                                       NULL};
    for (size_t i = 0; kept[i]; i++)
        assert_true(sc_env_allowed(kept[i]));
    static const char *const dropped[] = {"HOME",       "USER",    "SSH_AUTH_SOCK", "AWS_REGION",
                                          "LD_AUDIT_X", "HF_HOME", "PYTHON",        NULL};
    for (size_t i = 0; dropped[i]; i++)
        assert_false(sc_env_allowed(dropped[i]));
}

static bool fixture_root(const char *name, sc_root *root)
{
    const char *src = getenv("SC_SOURCE_DIR");
    char dir[4096];
    sc_error err = {0};
    if (!src)
        return false;
    snprintf(dir, sizeof dir, "%s/tests/fixtures/%s", src, name);
    assert_int_equal(sc_root_open(root, dir, &err), 0);
    return true;
}

static const sc_census_entry *entry(const sc_census *c, sc_backend id)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->backends[i].desc->id == id)
            return &c->backends[i];
    fail_msg("backend %d not in the census", (int)id);
    return NULL;
}

/* The census on fixture roots: who sees what, by PCI and by each backend's own source. */
static void test_census_on_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *fixture;
        sc_backend present; /* NONE: nothing at all */
        size_t pci;
    } cases[] = {
        {"plain-server", SC_BACKEND_NONE, 0},  {"mi250x-8gcd", SC_BACKEND_AMD, 8},
        {"hygon-dcu", SC_BACKEND_AMD, 4},      {"nvidia-h200", SC_BACKEND_NVIDIA, 2},
        {"ascend-910b", SC_BACKEND_ASCEND, 2}, {"kfd-cpu-only", SC_BACKEND_AMD, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sc_root root;
        if (!fixture_root(cases[i].fixture, &root))
            skip();
        sc_census c;
        sc_census_read(&root, &c);
        char why[512];
        assert_true(sc_census_complete(&c, why, sizeof why));
        assert_int_equal(sc_census_present(&c), cases[i].present != SC_BACKEND_NONE);
        for (size_t b = 0; b < c.count; b++) {
            bool want = c.backends[b].desc->id == cases[i].present;
            if (sc_census_sees(&c.backends[b]) != want)
                fail_msg("%s: %s", cases[i].fixture, c.backends[b].desc->name);
            assert_int_equal(c.backends[b].pci, want ? cases[i].pci : 0);
        }
        sc_census_free(&c);
        sc_root_close(&root);
    }
}

/* The driver's own source counts where PCI is silent: a KFD topology with GPU nodes, or Ascend's
 * numbered nodes, and the message of "nothing" names every backend's vendors and sources. */
static void test_census_driver_sources(void **state)
{
    (void)state;
    sc_root root;
    if (!fixture_root("mi250x-8gcd", &root))
        skip();
    sc_census c;
    sc_census_read(&root, &c);
    assert_true(entry(&c, SC_BACKEND_AMD)->has_driver_source);
    assert_int_equal(entry(&c, SC_BACKEND_AMD)->driver, 8);
    assert_false(entry(&c, SC_BACKEND_NVIDIA)->has_driver_source);
    sc_census_free(&c);
    sc_root_close(&root);
    assert_true(fixture_root("plain-server", &root));
    sc_census_read(&root, &c);
    char text[512];
    sc_census_nothing_text(&c, text, sizeof text);
    for (const sc_backend_desc *const *b = sc_backends; *b; b++) {
        for (const sc_backend_vendor *v = (*b)->vendors; v->id; v++)
            assert_non_null(strstr(text, v->label));
        if ((*b)->driver_devices)
            assert_non_null(strstr(text, (*b)->driver_devices->what));
    }
    sc_census_free(&c);
    sc_root_close(&root);
    const char *const patterns[] = {"/dev/davinci*", "/dev/davinci_manager", NULL};
    sc_error err = {0};
    assert_true(fixture_root("ascend-910b", &root));
    assert_int_equal(sc_census_numbered_nodes(&root, patterns, &err), 2); /* not the manager */
    sc_root_close(&root);
}

/* On this machine the census agrees with what the PCI vocabulary says of each function. */
static void test_census_live(void **state)
{
    (void)state;
    sc_root root = {.dirfd = -1, .is_host = true};
    snprintf(root.path, sizeof root.path, "/");
    sc_census c;
    sc_census_read(&root, &c);
    size_t accelerators = 0, counted = 0;
    for (size_t i = 0; i < c.pci.count; i++)
        accelerators += sc_pci_is_accelerator(&c.pci.items[i]);
    for (size_t b = 0; b < c.count; b++)
        counted += c.backends[b].pci;
    assert_int_equal(accelerators, counted);
    cJSON *facts = cJSON_CreateObject();
    sc_census_facts(&c, facts);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(facts, "present")),
                     (int)sc_census_present(&c));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(facts, "pci")), (int)accelerators);
    cJSON_Delete(facts);
    sc_census_free(&c);
}

/* A run so far with one final outcome per (id, facts) pair, for the consumers that read it. */
static void run_with(sc_test_run *t, const char *const *ids, const char *const *facts_json)
{
    cJSON *layers = cJSON_CreateArray(), *layer = cJSON_CreateObject();
    cJSON_AddStringToObject(layer, "name", "driver");
    cJSON *probes = cJSON_AddArrayToObject(layer, "probes");
    cJSON_AddItemToArray(layers, layer);
    for (size_t i = 0; ids[i]; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "id", ids[i]);
        cJSON_AddStringToObject(p, "status", "pass");
        cJSON_AddItemToObject(p, "facts", cJSON_Parse(facts_json[i]));
        cJSON_AddItemToArray(probes, p);
    }
    char *text = cJSON_PrintUnformatted(layers);
    sc_test_run_from_json(t, text);
    free(text);
    cJSON_Delete(layers);
}

/* The libraries layer checks GPU code against every backend's devices whose arch facts name a
 * target of its GPU code: the runtime's first, else the driver's; other names are not archs. */
static void test_libs_archs_from_descriptors(void **state)
{
    (void)state;
    const char *const ids[] = {"driver.amd", "runtime.cuda", "driver.nvidia", NULL};
    /* an old kernel's node without gfx_target: its KFD name is no arch */
    static const char amd_devices[] =
        "{\"devices\":[{\"gfx_target\":\"gfx90a\",\"name\":\"aldebaran\"},"
        "{\"gfx_target\":null,\"name\":\"ip discovery\"},{\"gfx_target\":\"gfx90a\"}]}";
    const char *const facts[] = {amd_devices,
                                 "{\"devices\":[{\"name\":\"NVIDIA H200\",\"arch\":\"sm_90\"}]}",
                                 "{\"devices\":[{\"model\":\"NVIDIA H200\"}]}"};
    sc_options opt;
    sc_options_init(&opt);
    sc_test_run t;
    run_with(&t, ids, facts);
    sc_ctx ctx = {.opt = &opt, .run = &t.rs};
    const char *archs[SC_LIBS_MAX_ARCHS];
    int n = sc_libs_run_archs(&ctx, archs, SC_LIBS_MAX_ARCHS);
    assert_int_equal(n, 2);
    assert_string_equal(archs[0], "gfx90a");
    assert_string_equal(archs[1], "sm_90");
    sc_strlist_add(&opt.archs, "gfx942"); /* --arch wins */
    assert_int_equal(sc_libs_run_archs(&ctx, archs, SC_LIBS_MAX_ARCHS), 1);
    assert_string_equal(archs[0], "gfx942");
    sc_test_run_free(&t);
}

static const cJSON *finding_of(const sc_result *res, const char *id)
{
    const cJSON *f;
    cJSON_ArrayForEach (f, res->findings)
        if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(f, "id")), id) == 0)
            return f;
    return NULL;
}

static const char *text_of(const cJSON *f, const char *key)
{
    assert_non_null(f);
    return cJSON_GetStringValue(cJSON_GetObjectItem(f, key));
}

/* torch.version.hip / .cuda choose the backend through torch_build: its no-device finding, its
 * visibility variables in the hint, its runtime library against the runtime layer's. */
static void test_torch_build_from_descriptors(void **state)
{
    (void)state;
    const char *const ids[] = {"runtime.cuda", NULL};
    const char *const facts[] = {"{\"driver_api\":{\"realpath\":\"/usr/lib/libcuda.so.550\"}}"};
    sc_options opt;
    sc_options_init(&opt);
    sc_root root = {.dirfd = -1, .is_host = true};
    snprintf(root.path, sizeof root.path, "/");
    sc_test_run t;
    run_with(&t, ids, facts);
    sc_ctx ctx = {.opt = &opt, .root = &root, .run = &t.rs};
    for (const sc_backend_desc *const *b = sc_backends; *b; b++) {
        if (!(*b)->torch_build)
            continue;
        char json[512];
        snprintf(json, sizeof json,
                 "{\"version\":\"2.3.0\",\"%s\":\"9.9\",\"device_count\":0,"
                 "\"mapped_libraries\":[{\"name\":\"libcuda.so.1\",\"realpath\":\"/opt/x/"
                 "libcuda.so.1\"}]}",
                 (*b)->torch_build);
        cJSON *torch = cJSON_Parse(json);
        sc_result res;
        assert_int_equal(sc_result_init(&res), 0);
        sc_torch_check_build(&ctx, &res, torch);
        const cJSON *f = finding_of(&res, (*b)->torch_no_device);
        assert_non_null(strstr(text_of(f, "message"), "9.9 build"));
        for (const char *const *v = (*b)->visibility_vars; *v; v++)
            assert_non_null(strstr(text_of(f, "hint"), *v));
        /* torch mapped another libcuda than the runtime layer loaded: only a CUDA build cares */
        assert_int_equal(finding_of(&res, "torch.runtime-mismatch") != NULL,
                         (*b)->id == SC_BACKEND_NVIDIA);
        sc_result_free(&res);
        cJSON_Delete(torch);
    }
    /* a CPU-only build beside the CUDA driver the runtime layer found: CUDA's install hint */
    cJSON *cpu = cJSON_Parse("{\"version\":\"2.3.0\",\"hip\":null,\"cuda\":null}");
    sc_result res;
    assert_int_equal(sc_result_init(&res), 0);
    sc_torch_check_build(&ctx, &res, cpu);
    const cJSON *f = finding_of(&res, "torch.cpu-only-build");
    assert_non_null(strstr(text_of(f, "message"), "/usr/lib/libcuda.so.550"));
    assert_string_equal(text_of(f, "hint"), sc_backend_get(SC_BACKEND_NVIDIA)->torch_install);
    sc_result_free(&res);
    cJSON_Delete(cpu);
    sc_test_run_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pci_vocabulary_follows_the_table),
        cmocka_unit_test(test_env_allowlist_follows_the_table),
        cmocka_unit_test(test_census_on_fixtures),
        cmocka_unit_test(test_census_driver_sources),
        cmocka_unit_test(test_census_live),
        cmocka_unit_test(test_libs_archs_from_descriptors),
        cmocka_unit_test(test_torch_build_from_descriptors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
