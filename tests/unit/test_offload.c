/* Offload code listings from buffers: bundle ids, several bundles at 4096-byte alignment, the host
 * entry left out, compressed CCOB bundles (v1 zstd, v2 zlib, v3 zstd), NVIDIA fat binaries, damaged
 * input (counts of 2^63, entries past the end, unknown versions), and the matching rules for AMD
 * feature flags and CUDA compute capabilities. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include <cmocka.h>

#include "sc_offload.h"

static void put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}
static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
static void put16(uint8_t *p, uint16_t v)
{
    memcpy(p, &v, 2);
}

/* Writes an uncompressed bundle with ids (each entry 64 bytes of code) at p; returns its size. */
static size_t bundle(uint8_t *p, const char *const *ids, int n)
{
    memcpy(p, "__CLANG_OFFLOAD_BUNDLE__", 24);
    put64(p + 24, (uint64_t)n);
    size_t pos = 32, table = 32;
    for (int i = 0; i < n; i++)
        table += 24 + strlen(ids[i]);
    size_t code = table;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(ids[i]), size = strncmp(ids[i], "host", 4) == 0 ? 0 : 64;
        put64(p + pos, code);
        put64(p + pos + 8, size);
        put64(p + pos + 16, len);
        memcpy(p + pos + 24, ids[i], len);
        pos += 24 + len;
        memset(p + code, 0xAB, size);
        code += size;
    }
    return code;
}

static const char *const ids1[] = {"host-x86_64-unknown-linux--", "hipv4-amdgcn-amd-amdhsa--gfx906",
                                   "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"};
static const char *const ids2[] = {"host-x86_64-unknown-linux--",
                                   "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
                                   "hip-amdgcn-amd-amdhsa-gfx1030"};

static void test_ids(void **state)
{
    (void)state;
    char buf[128];
    assert_null(sc_offload_target_of_id("host-x86_64-unknown-linux--", buf, sizeof buf));
    assert_string_equal(
        sc_offload_target_of_id("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", buf, sizeof buf),
        "gfx90a:sramecc+:xnack-");
    assert_string_equal(sc_offload_target_of_id("hip-amdgcn-amd-amdhsa-gfx906", buf, sizeof buf),
                        "gfx906");
    assert_string_equal(
        sc_offload_target_of_id("openmp-amdgcn-amd-amdhsa-gnu-gfx908", buf, sizeof buf), "gfx908");
    assert_null(sc_offload_target_of_id("hipv4-amdgcn-amd-amdhsa--", buf, sizeof buf));
    assert_null(sc_offload_target_of_id("x", buf, sizeof buf));
}

static void test_several_bundles(void **state)
{
    (void)state;
    uint8_t *sec = calloc(1, 3 * 4096);
    size_t a = bundle(sec, ids1, 3);
    assert_true(a < 4096);
    bundle(sec + 4096, ids2, 3);
    sc_offload_list l;
    memset(&l, 0, sizeof l);
    assert_int_equal(sc_offload_parse_hip(sec, 3 * 4096, &l), 2);
    assert_int_equal(l.count, 3);
    assert_string_equal(l.targets[0], "gfx906");
    assert_string_equal(l.targets[1], "gfx90a:xnack-");
    assert_string_equal(l.targets[2], "gfx1030");
    assert_string_equal(l.problem, "");
    sc_offload_list_free(&l);
    free(sec);
}

static void test_damaged_bundles(void **state)
{
    (void)state;
    uint8_t sec[4096];
    memset(sec, 0, sizeof sec);
    size_t n = bundle(sec, ids1, 3);
    sc_offload_list l;
    memset(&l, 0, sizeof l);
    put64(sec + 24, 1ull << 63); /* an entry count of 2^63 */
    assert_int_equal(sc_offload_parse_hip(sec, n, &l), 1);
    assert_int_equal(l.count, 2);
    assert_string_not_equal(l.problem, "");
    sc_offload_list_free(&l);
    put64(sec + 24, 3);
    put64(sec + 32 + 24 + strlen(ids1[0]), 1ull << 62); /* gfx906's offset past the end */
    assert_int_equal(sc_offload_parse_hip(sec, n, &l), 1);
    assert_int_equal(l.count, 1);
    assert_string_equal(l.targets[0], "gfx90a:xnack-");
    sc_offload_list_free(&l);
    assert_int_equal(sc_offload_parse_hip(sec, 40, &l), 1); /* entry table cut short */
    assert_int_equal(l.count, 0);
    sc_offload_list_free(&l);
    assert_int_equal(sc_offload_parse_hip((const uint8_t *)"junk", 4, &l), 0);
    assert_string_not_equal(l.problem, "");
    sc_offload_list_free(&l);
}

/* A CCOB bundle of the given version and method around the uncompressed bundle raw[0, rn), with
 * declared as its stated uncompressed size. Returns its size. */
static size_t ccob_around(uint8_t *out, size_t cap, int version, int method, const uint8_t *raw,
                          size_t rn, uint64_t declared)
{
    size_t h = version == 1 ? 20 : version == 2 ? 24 : 32, cn;
    if (method == 1) {
        cn = ZSTD_compress(out + h, cap - h, raw, rn, 3);
        assert_false(ZSTD_isError(cn));
    } else {
        uLongf zn = cap - h;
        assert_int_equal(compress(out + h, &zn, raw, rn), Z_OK);
        cn = zn;
    }
    memcpy(out, "CCOB", 4);
    put16(out + 4, (uint16_t)version);
    put16(out + 6, (uint16_t)method);
    if (version == 1) {
        put32(out + 8, (uint32_t)declared);
    } else if (version == 2) {
        put32(out + 8, (uint32_t)(h + cn));
        put32(out + 12, (uint32_t)declared);
    } else {
        put64(out + 8, h + cn);
        put64(out + 16, declared);
    }
    return h + cn;
}

/* A CCOB bundle of the given version and method around an uncompressed bundle. */
static size_t ccob(uint8_t *out, size_t cap, int version, int method)
{
    uint8_t raw[2048];
    size_t rn = bundle(raw, ids1, 3);
    return ccob_around(out, cap, version, method, raw, rn, rn);
}

static void test_compressed(void **state)
{
    (void)state;
    const int cases[][2] = {{1, 1}, {2, 0}, {3, 1}, {3, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *sec = calloc(1, 2 * 4096);
        size_t n = ccob(sec, 4096, cases[i][0], cases[i][1]);
        bundle(sec + 4096, ids2, 3); /* an uncompressed bundle after it */
        sc_offload_list l;
        memset(&l, 0, sizeof l);
        int bundles = sc_offload_parse_hip(sec, 2 * 4096, &l);
        assert_int_equal(l.compressed, 1);
        assert_string_equal(l.targets[0], "gfx906");
        assert_string_equal(l.targets[1], "gfx90a:xnack-");
        if (cases[i][0] != 1 || cases[i][1] == 1) /* v1 zlib has no extent to find the next */
            assert_int_equal(bundles, 2);
        sc_offload_list_free(&l);
        /* damaged: an unknown method, a total size past the end, a stream cut short */
        put16(sec + 6, 7);
        assert_int_equal(sc_offload_parse_hip(sec, n, &l), 0);
        assert_string_not_equal(l.problem, "");
        sc_offload_list_free(&l);
        put16(sec + 6, (uint16_t)cases[i][1]);
        assert_int_equal(sc_offload_parse_hip(sec, 40, &l), 0);
        sc_offload_list_free(&l);
        free(sec);
    }
}

/* An NVIDIA fat binary with entries {kind, arch}. */
static size_t nv_fatbin(uint8_t *p, const int (*entries)[2], int n)
{
    put32(p, 0xBA55ED50u);
    put16(p + 4, 1);
    put16(p + 6, 16);
    size_t pos = 16;
    for (int i = 0; i < n; i++) {
        memset(p + pos, 0, 64 + 32);
        put16(p + pos, (uint16_t)entries[i][0]);
        put32(p + pos + 4, 64);
        put64(p + pos + 8, 32);
        put32(p + pos + 28, (uint32_t)entries[i][1]);
        pos += 64 + 32;
    }
    put64(p + 8, pos - 16);
    return pos;
}

static void test_nv(void **state)
{
    (void)state;
    uint8_t sec[2048];
    memset(sec, 0, sizeof sec);
    const int e1[][2] = {{2, 80}, {2, 90}, {1, 90}};
    const int e2[][2] = {{2, 75}};
    size_t a = nv_fatbin(sec, e1, 3);
    size_t b = nv_fatbin(sec + a, e2, 1);
    sc_offload_list l;
    memset(&l, 0, sizeof l);
    assert_int_equal(sc_offload_parse_nv(sec, a + b, &l), 2);
    assert_int_equal(l.count, 4);
    assert_string_equal(l.targets[0], "sm_80");
    assert_string_equal(l.targets[2], "compute_90");
    assert_string_equal(l.targets[3], "sm_75");
    sc_offload_list_free(&l);
    put64(sec + 16 + 8, 1ull << 63); /* the first entry's size past the end */
    assert_int_equal(sc_offload_parse_nv(sec, a, &l), 1);
    assert_int_equal(l.count, 0);
    assert_string_not_equal(l.problem, "");
    sc_offload_list_free(&l);
}

/* A .hip_fatbin of n copies of one compressed bundle (CCOB v3 around a bundle of `entries`
 * entries, all with id, whose code follows and `pad` zero bytes after that), each at the 8-byte
 * boundary after the last. The reader prefers a bundle at the next 4096 boundary, so a spacing
 * that divides 4096 would make it skip most copies: such a bundle is made 8 bytes longer. */
static uint8_t *section_of(const char *id, int entries, size_t pad, int method, size_t n,
                           size_t *size)
{
    const char **ids = calloc((size_t)entries, sizeof *ids);
    size_t raw_cap = (size_t)entries * (24 + strlen(id) + 64) + 32 + pad;
    uint8_t *raw = calloc(1, raw_cap), *one = malloc(raw_cap + 4096);
    assert_non_null(ids);
    assert_non_null(raw);
    assert_non_null(one);
    for (int i = 0; i < entries; i++)
        ids[i] = id;
    size_t rn = bundle(raw, ids, entries) + pad;
    size_t total = ccob_around(one, raw_cap + 4096, 3, method, raw, rn, rn);
    size_t len = (total + 7) & ~(size_t)7;
    if (4096 % len == 0) { /* eight bytes more in its stated size, zeros after the stream */
        put64(one + 8, total + 8);
        memset(one + total, 0, 8);
        len += 8;
    }
    uint8_t *sec = calloc(n, len);
    assert_non_null(sec);
    for (size_t i = 0; i < n; i++)
        memcpy(sec + i * len, one, len);
    free(ids), free(raw), free(one);
    *size = n * len;
    return sec;
}

static const char hip_id[] = "hipv4-amdgcn-amd-amdhsa--gfx906";

/* A bundle declaring a megabyte is inflated only to the end of its entry table. */
static void test_inflated_to_the_table_only(void **state)
{
    (void)state;
    size_t size;
    uint8_t *sec = section_of(hip_id, 1, 1u << 20, 0, 3, &size);
    sc_offload_list l;
    memset(&l, 0, sizeof l);
    assert_int_equal(sc_offload_parse_hip(sec, size, &l), 3);
    assert_string_equal(l.targets[0], "gfx906");
    assert_true(l.inflated <= 3 * 1024);
    assert_null(l.budget);
    sc_offload_list_free(&l);
    free(sec);
}

/* Each budget ends the reading with its name, never with a problem of the file. */
static void test_budgets(void **state)
{
    (void)state;
    char long_id[256];
    snprintf(long_id, sizeof long_id, "%s-%0200d", hip_id, 0);
    const struct {
        const char *id;
        int entries, method;
        size_t copies;
        const char *budget;
    } cases[] = {
        {hip_id, 2, 1, SC_OFFLOAD_MAX_BUNDLES + 15000, "bundles"},
        {hip_id, 16384, 0, 70, "entry-table rows"},
        {long_id, 4000, 0, 80, "decompressed bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t size;
        uint8_t *sec =
            section_of(cases[i].id, cases[i].entries, 0, cases[i].method, cases[i].copies, &size);
        sc_offload_list l;
        memset(&l, 0, sizeof l);
        sc_offload_parse_hip(sec, size, &l);
        assert_non_null(l.budget);
        assert_string_equal(l.budget, cases[i].budget);
        assert_string_equal(l.problem, "");
        assert_true(l.bundles <= SC_OFFLOAD_MAX_BUNDLES);
        assert_true(l.rows <= SC_OFFLOAD_MAX_ROWS + 1);
        assert_true(l.inflated <= SC_OFFLOAD_MAX_INFLATED);
        assert_int_equal(l.count, 1);
        sc_offload_list_free(&l);
        free(sec);
    }
}

static void test_amd_rules(void **state)
{
    (void)state;
    assert_true(sc_offload_amd_match("gfx90a", "gfx90a:sramecc+:xnack-"));
    assert_true(sc_offload_amd_match("gfx90a:xnack-", "gfx90a:sramecc+:xnack-"));
    assert_false(sc_offload_amd_match("gfx90a:xnack+", "gfx90a:sramecc+:xnack-"));
    assert_false(sc_offload_amd_match("gfx90a:sramecc-", "gfx90a:sramecc+:xnack-"));
    assert_true(sc_offload_amd_match("gfx90a:xnack+", "gfx90a")); /* device mode unknown */
    assert_false(sc_offload_amd_match("gfx90a", "gfx908"));
    assert_false(sc_offload_amd_match("gfx9", "gfx90a"));
    assert_true(sc_offload_amd_match("gfx1030", "gfx1030"));
}

static void test_cuda_rules(void **state)
{
    (void)state;
    char *t[] = {"sm_80", "sm_90", "compute_90"};
    sc_offload_list l;
    memset(&l, 0, sizeof l);
    for (int i = 0; i < 3; i++)
        l.targets[l.count++] = t[i];
    assert_int_equal(sc_offload_cuda_match(&l, "sm_80"), SC_CUDA_CUBIN);
    assert_int_equal(sc_offload_cuda_match(&l, "sm_86"), SC_CUDA_CUBIN);
    assert_int_equal(sc_offload_cuda_match(&l, "sm_90"), SC_CUDA_CUBIN);
    assert_int_equal(sc_offload_cuda_match(&l, "sm_100"), SC_CUDA_PTX_ONLY);
    assert_int_equal(sc_offload_cuda_match(&l, "sm_75"), SC_CUDA_NO_CODE);
    assert_int_equal(sc_offload_cuda_match(&l, "gfx90a"), SC_CUDA_NO_CODE);
    char *u[] = {"sm_90a"};
    sc_offload_list m = {.count = 1};
    m.targets[0] = u[0];
    assert_int_equal(sc_offload_cuda_match(&m, "sm_90"), SC_CUDA_CUBIN);
    assert_int_equal(sc_offload_cuda_match(&m, "sm_91"), SC_CUDA_NO_CODE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_several_bundles),
        cmocka_unit_test(test_damaged_bundles),
        cmocka_unit_test(test_compressed),
        cmocka_unit_test(test_inflated_to_the_table_only),
        cmocka_unit_test(test_budgets),
        cmocka_unit_test(test_nv),
        cmocka_unit_test(test_amd_rules),
        cmocka_unit_test(test_cuda_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
