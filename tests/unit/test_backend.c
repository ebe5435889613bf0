/* The backend table: lookups by id, name, PCI vendor, class and finding id, and the consistency
 * every descriptor owes the rest of the code (its probes exist, its prefixes are its own). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "probes.h"
#include "sc_backend.h"
#include "sc_probe.h"

static void test_lookups(void **state)
{
    (void)state;
    const char *vendor = NULL;
    assert_ptr_equal(sc_backend_by_pci_vendor(0x1d94, &vendor), sc_backend_get(SC_BACKEND_AMD));
    assert_string_equal(vendor, "hygon");
    assert_ptr_equal(sc_backend_by_pci_vendor(0x10de, NULL), sc_backend_by_name("nvidia"));
    assert_null(sc_backend_by_pci_vendor(0x8086, NULL));
    assert_ptr_equal(sc_backend_by_finding("hip.no-device"), sc_backend_get(SC_BACKEND_AMD));
    assert_ptr_equal(sc_backend_by_finding("acl.no-device"), sc_backend_get(SC_BACKEND_ASCEND));
    assert_null(sc_backend_by_finding("hipx.no-device"));
    assert_null(sc_backend_by_finding("libs.mixed-roots"));
    assert_null(sc_backend_get(SC_BACKEND_NONE));
    assert_string_equal(sc_backend_name(SC_BACKEND_NONE), "none");
    assert_string_equal(sc_backend_name(SC_BACKEND_ASCEND), "ascend");
}

static void test_classes(void **state)
{
    (void)state;
    const sc_backend_desc *amd = sc_backend_get(SC_BACKEND_AMD);
    const sc_backend_desc *ascend = sc_backend_get(SC_BACKEND_ASCEND);
    assert_true(sc_backend_class_matches(amd, 0x038000));  /* display controller */
    assert_true(sc_backend_class_matches(amd, 0x0b4000));  /* Hygon DCU: co-processor */
    assert_false(sc_backend_class_matches(amd, 0x0b0000)); /* another processor subclass */
    assert_true(sc_backend_class_matches(ascend, 0x120000));
    assert_false(sc_backend_class_matches(ascend, 0x030000)); /* Huawei BMC graphics */
}

static const sc_probe *probe_named(const char *id)
{
    for (const sc_probe *const *p = sc_probes; *p; p++)
        if (strcmp((*p)->id, id) == 0)
            return *p;
    return NULL;
}

/* Each descriptor names probes that exist with its backend and layer, and its finding prefixes
 * belong to no other backend. */
static void test_descriptors_are_consistent(void **state)
{
    (void)state;
    for (const sc_backend_desc *const *b = sc_backends; *b; b++) {
        const sc_probe *drv = probe_named((*b)->driver_probe);
        const sc_probe *rt = probe_named((*b)->runtime_probe);
        assert_non_null(drv);
        assert_non_null(rt);
        assert_int_equal(drv->backend, (*b)->id);
        assert_int_equal(drv->layer, SC_LAYER_DRIVER);
        assert_int_equal(rt->backend, (*b)->id);
        assert_int_equal(rt->layer, SC_LAYER_RUNTIME);
        assert_non_null((*b)->vendors[0].name);
        assert_non_null((*b)->runtime_libraries[0]);
        for (const char *const *p = (*b)->finding_prefixes; *p; p++) {
            char id[64];
            snprintf(id, sizeof id, "%s.x", *p);
            assert_ptr_equal(sc_backend_by_finding(id), *b);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookups),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_descriptors_are_consistent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
