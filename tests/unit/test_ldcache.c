/* ld.so.cache parsing from buffers: the new format, the legacy format alone and with the new table
 * embedded, entry flags (other architectures are skipped), the first match winning, glibc-hwcaps
 * entries only as a fallback, and damaged files (truncated, counts that do not fit, strings past
 * the end); plus the real cache of this machine when there is one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sc_ldcache.h"

typedef struct {
    char buf[4096];
    size_t len;
} image;

static void put32(char *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
static void put64(char *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

/* A new-format table at `at` with n entries {flags, key, value, hwcap}; strings follow it. */
static size_t new_table(image *im, size_t at, int n, const int32_t *flags, const char *const *keys,
                        const char *const *values, const uint64_t *hwcap)
{
    char *h = im->buf + at;
    memcpy(h, "glibc-ld.so.cache1.1", 20);
    put32(h + 20, (uint32_t)n);
    h[28] = 2;
    size_t strings = 48 + (size_t)n * 24, s = strings;
    for (int i = 0; i < n; i++) {
        char *e = h + 48 + i * 24;
        put32(e, (uint32_t)flags[i]);
        put32(e + 4, (uint32_t)s);
        strcpy(h + s, keys[i]);
        s += strlen(keys[i]) + 1;
        put32(e + 8, (uint32_t)s);
        strcpy(h + s, values[i]);
        s += strlen(values[i]) + 1;
        put64(e + 16, hwcap ? hwcap[i] : 0);
    }
    put32(h + 24, (uint32_t)(s - strings));
    return at + s;
}

static const int32_t x86 = 0x0303, i386 = 0x0003, arm = 0x0a03;

static void test_new_format(void **state)
{
    (void)state;
    image im = {.len = 0};
    const int32_t flags[] = {i386, x86, x86, x86, x86};
    const char *keys[] = {"libz.so.1", "libz.so.1", "libz.so.1", "libm.so.6", "libfast.so.1"};
    const char *vals[] = {"/lib/i386/libz.so.1", "/lib/x86/libz.so.1", "/other/libz.so.1",
                          "/lib/x86/libm.so.6", "/lib/glibc-hwcaps/x86-64-v3/libfast.so.1"};
    const uint64_t hw[] = {0, 0, 0, 0, (1ull << 62) | 1};
    im.len = new_table(&im, 0, 5, flags, keys, vals, hw);
    sc_ldcache c;
    sc_error err;
    assert_int_equal(sc_ldcache_parse(im.buf, im.len, &c, &err), 0);
    assert_string_equal(c.format, "new");
    assert_int_equal(c.count, 5);
    int32_t want = sc_ldcache_flags_for(2 /* ELFCLASS64 */, 62 /* EM_X86_64 */);
    assert_int_equal(want, x86);
    assert_string_equal(sc_ldcache_lookup(&c, "libz.so.1", want), "/lib/x86/libz.so.1");
    assert_string_equal(sc_ldcache_lookup(&c, "libz.so.1", i386), "/lib/i386/libz.so.1");
    assert_string_equal(sc_ldcache_lookup(&c, "libm.so.6", want), "/lib/x86/libm.so.6");
    assert_string_equal(sc_ldcache_lookup(&c, "libfast.so.1", want),
                        "/lib/glibc-hwcaps/x86-64-v3/libfast.so.1");
    assert_null(sc_ldcache_lookup(&c, "libm.so.6", arm));
    assert_null(sc_ldcache_lookup(&c, "libnone.so", want));
    sc_ldcache_free(&c);
}

/* A loader that knows its subdirectories takes the entry of the best one it searches over the
 * plain entry, as glibc 2.33+ ranks glibc-hwcaps entries and older ones take the legacy hwcap
 * entries ldconfig sorts first; entries of subdirectories it does not search are passed over. */
static void test_subdirectory_entries(void **state)
{
    (void)state;
    image im = {.len = 0};
    const int32_t flags[] = {x86, x86, x86, x86, x86};
    const char *keys[] = {"libh.so.1", "libh.so.1", "libh.so.1", "libh.so.1", "libh.so.1"};
    const char *vals[] = {"/usr/lib64/glibc-hwcaps/x86-64-v3/libh.so.1",
                          "/usr/lib64/glibc-hwcaps/x86-64-v2/libh.so.1", "/usr/lib64/tls/libh.so.1",
                          "/usr/lib64/x86_64/libh.so.1", "/usr/lib64/libh.so.1"};
    const uint64_t hw[] = {(1ull << 62) | 1, (1ull << 62) | 0, 1ull << 63, 2, 0};
    im.len = new_table(&im, 0, 5, flags, keys, vals, hw);
    sc_ldcache c;
    sc_error err;
    assert_int_equal(sc_ldcache_parse(im.buf, im.len, &c, &err), 0);
    const char *v3[] = {"glibc-hwcaps/x86-64-v3", "glibc-hwcaps/x86-64-v2", "tls", "x86_64", NULL};
    const char *v2[] = {"glibc-hwcaps/x86-64-v2", "tls", "x86_64", NULL};
    const char *legacy[] = {"tls/x86_64", "tls", "x86_64", NULL};
    const char *none[] = {NULL};
    assert_string_equal(sc_ldcache_lookup_subdirs(&c, "libh.so.1", x86, v3), vals[0]);
    assert_string_equal(sc_ldcache_lookup_subdirs(&c, "libh.so.1", x86, v2), vals[1]);
    assert_string_equal(sc_ldcache_lookup_subdirs(&c, "libh.so.1", x86, legacy), vals[2]);
    assert_string_equal(sc_ldcache_lookup_subdirs(&c, "libh.so.1", x86, legacy + 2), vals[3]);
    assert_string_equal(sc_ldcache_lookup_subdirs(&c, "libh.so.1", x86, none), vals[4]);
    assert_string_equal(sc_ldcache_lookup_subdirs(&c, "libh.so.1", x86, NULL), vals[4]);
    sc_ldcache_free(&c);
}

static void test_legacy_formats(void **state)
{
    (void)state;
    image im;
    memset(&im, 0, sizeof im);
    /* legacy only: magic, nlibs, entries {flags, key, value} with strings after the entries */
    memcpy(im.buf, "ld.so-1.7.0", 11);
    put32(im.buf + 12, 1);
    put32(im.buf + 16, (uint32_t)x86);
    put32(im.buf + 20, 0);
    put32(im.buf + 24, 10);
    strcpy(im.buf + 28, "libq.so.1");
    strcpy(im.buf + 38, "/lib/libq.so.1");
    sc_ldcache c;
    sc_error err;
    assert_int_equal(sc_ldcache_parse(im.buf, 53, &c, &err), 0);
    assert_string_equal(c.format, "legacy");
    assert_string_equal(sc_ldcache_lookup(&c, "libq.so.1", x86), "/lib/libq.so.1");
    sc_ldcache_free(&c);
    /* legacy with the new table after the entries, at an 8-byte boundary: the new one is used */
    memset(&im, 0, sizeof im);
    memcpy(im.buf, "ld.so-1.7.0", 11);
    put32(im.buf + 12, 1);
    const int32_t flags[] = {x86};
    const char *keys[] = {"libn.so.2"}, *vals[] = {"/new/libn.so.2"};
    size_t len = new_table(&im, 32, 1, flags, keys, vals, NULL);
    assert_int_equal(sc_ldcache_parse(im.buf, len, &c, &err), 0);
    assert_string_equal(c.format, "legacy+new");
    assert_string_equal(sc_ldcache_lookup(&c, "libn.so.2", x86), "/new/libn.so.2");
    sc_ldcache_free(&c);
}

static void test_damaged(void **state)
{
    (void)state;
    image im = {.len = 0};
    const int32_t flags[] = {x86, x86};
    const char *keys[] = {"liba.so", "libb.so"}, *vals[] = {"/a", "/b"};
    im.len = new_table(&im, 0, 2, flags, keys, vals, NULL);
    sc_ldcache c;
    sc_error err;
    assert_int_equal(sc_ldcache_parse(im.buf, 20, &c, &err), -EINVAL);      /* truncated header */
    assert_int_equal(sc_ldcache_parse("garbage", 7, &c, &err), -EINVAL);    /* not a cache */
    assert_int_equal(sc_ldcache_parse(im.buf, 48 + 24, &c, &err), -EINVAL); /* 2 entries, 1 fits */
    put32(im.buf + 20, 0xffffffffu);
    assert_int_equal(sc_ldcache_parse(im.buf, im.len, &c, &err), -EINVAL); /* 2^32-1 entries */
    put32(im.buf + 20, 2);
    put32(im.buf + 48 + 24 + 8, 1u << 30); /* libb's value far past the end: entry dropped */
    assert_int_equal(sc_ldcache_parse(im.buf, im.len, &c, &err), 0);
    assert_int_equal(c.count, 1);
    assert_null(sc_ldcache_lookup(&c, "libb.so", x86));
    sc_ldcache_free(&c);
    /* a string that runs to the end of the buffer without a NUL is dropped too */
    assert_int_equal(sc_ldcache_parse(im.buf, im.len - 1, &c, &err), 0);
    sc_ldcache_free(&c);
}

static void test_real_cache(void **state)
{
    (void)state;
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, NULL, &err), 0);
    sc_ldcache c;
    if (sc_ldcache_load(&root, &c, &err) < 0) {
        sc_root_close(&root);
        skip();
    }
    assert_true(c.count > 10);
    const char *libc = sc_ldcache_lookup(&c, "libc.so.6", sc_ldcache_flags_for(2, 62));
    assert_non_null(libc);
    assert_non_null(strstr(libc, "libc.so.6"));
    sc_ldcache_free(&c);
    sc_root_close(&root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_format),     cmocka_unit_test(test_subdirectory_entries),
        cmocka_unit_test(test_legacy_formats), cmocka_unit_test(test_damaged),
        cmocka_unit_test(test_real_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
