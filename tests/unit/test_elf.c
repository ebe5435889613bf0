/* ELF reading and the loader model: the dynamic section, symbol versions and symbols of a real
 * file parsed from a buffer; non-ELF and truncated buffers; $ORIGIN/$LIB/$PLATFORM expansion;
 * candidates of another machine and symlink loops passed over; RPATH ignored beside RUNPATH;
 * DF_1_NODEFLIB skipping the cache and default directories; the shared search state's file-system
 * checks (each directory once, absent ones never again, busy ones listed), its cut of long lists;
 * and the isolated analysis equal to the analysis in the process, or a timeout. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "sc_elf.h"
#include "sc_ldresolve.h"
#include "sc_libs.h"

static char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static void test_parse_self(void **state)
{
    (void)state;
    size_t size;
    char *buf = read_all("/proc/self/exe", &size);
    sc_elf_info info;
    sc_error err;
    assert_int_equal(sc_elf_parse(buf, size, SC_ELF_VERSIONS | SC_ELF_SYMBOLS, &info, &err), 0);
    assert_int_equal(info.elf_class, ELFCLASS64);
    bool libc = false, malloc_undef = false, glibc_version = false;
    for (int i = 0; i < info.needed_count; i++)
        libc |= strcmp(info.needed[i], "libc.so.6") == 0;
    for (size_t i = 0; i < info.undefined_count; i++)
        malloc_undef |= strcmp(info.undefined[i].name, "malloc") == 0;
    for (int i = 0; i < info.verneed_count; i++)
        if (strcmp(info.verneed[i].file, "libc.so.6") == 0)
            for (int j = 0; j < info.verneed[i].count; j++)
                glibc_version |= strncmp(info.verneed[i].names[j], "GLIBC_2.", 8) == 0;
    assert_true(libc);
    assert_true(malloc_undef);
    assert_true(glibc_version);
    sc_elf_free(&info);
    /* truncated copies: parse or refuse, never read past the end */
    size_t cuts[] = {16, 64, 1000, size / 2};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        char *part = malloc(cuts[i]);
        memcpy(part, buf, cuts[i]);
        if (sc_elf_parse(part, cuts[i], SC_ELF_VERSIONS | SC_ELF_SYMBOLS, &info, &err) == 0)
            sc_elf_free(&info);
        free(part);
    }
    char text[] = "#!/bin/sh\necho not elf\n";
    assert_int_equal(sc_elf_parse(text, sizeof text, 0, &info, &err), -ENOEXEC);
    free(buf);
}

static void test_expand(void **state)
{
    (void)state;
    char out[256];
    const char *e = "$ORIGIN/../lib";
    assert_true(sc_ld_expand(e, strlen(e), "/opt/x/bin", out, sizeof out));
    assert_string_equal(out, "/opt/x/bin/../lib");
    e = "${ORIGIN}/a:$LIB/$PLATFORM";
    assert_true(sc_ld_expand(e, strlen(e), "/o", out, sizeof out));
    assert_string_equal(out, "/o/a:lib/x86_64-linux-gnu/x86_64");
    e = "$ORIGINAL/x";
    assert_true(sc_ld_expand(e, strlen(e), "/o", out, sizeof out));
    assert_string_equal(out, "$ORIGINAL/x");
    e = "$ORIGIN";
    assert_false(sc_ld_expand(e, strlen(e), "/a/very/long/origin", out, 8));
}

static char dir[] = "/tmp/sc-elf-XXXXXX";

/* A 64-byte ELF header of the given machine. */
static void fake_elf(const char *rel, uint16_t machine)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    unsigned char h[64] = {0x7f, 'E', 'L', 'F', ELFCLASS64, ELFDATA2LSB, 1};
    h[16] = ET_DYN;
    memcpy(h + 18, &machine, 2);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(h, 1, sizeof h, f);
    fclose(f);
}

static void test_resolve(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(dir));
    char p[PATH_MAX], rp[PATH_MAX], runp[PATH_MAX];
    const char *subs[] = {"arm", "x86", "loop", "rp"};
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, subs[i]);
        mkdir(p, 0755);
    }
    fake_elf("arm/libx.so", EM_AARCH64);
    fake_elf("x86/libx.so", EM_X86_64);
    fake_elf("rp/libx.so", EM_X86_64);
    snprintf(p, sizeof p, "%s/loop/libx.so", dir);
    assert_int_equal(symlink("libx.so", p), 0); /* a link to itself */
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, NULL, &err), 0);
    snprintf(runp, sizeof runp, "%s/loop:%s/arm:/nonexistent:$ORIGIN", dir, dir);
    snprintf(rp, sizeof rp, "%s/rp", dir);
    char origin[PATH_MAX];
    snprintf(origin, sizeof origin, "%s/x86", dir);
    sc_ld_object main_obj = {.runpath = runp, .rpath = rp, .origin = origin, .name = "main"};
    const char *const no_defaults[] = {NULL};
    sc_ldresolver r = {.root = &root,
                       .main = &main_obj,
                       .elf_class = ELFCLASS64,
                       .machine = EM_X86_64,
                       .default_dirs = no_defaults};
    sc_ld_hit hit;
    /* RUNPATH wins over the RPATH beside it, which is ignored; loop and arm are passed over */
    assert_int_equal(sc_ldresolve(&r, &main_obj, "libx.so", &hit), 0);
    assert_int_equal(hit.via, SC_VIA_RUNPATH);
    snprintf(p, sizeof p, "%s/x86/libx.so", dir);
    assert_string_equal(hit.path, p);
    assert_string_equal(hit.entry, origin);
    close(hit.fd);
    /* without RUNPATH, the RPATH is used */
    main_obj.runpath = NULL;
    assert_int_equal(sc_ldresolve(&r, &main_obj, "libx.so", &hit), 0);
    assert_int_equal(hit.via, SC_VIA_RPATH);
    close(hit.fd);
    /* a child without paths inherits the RPATH of its loader */
    sc_ld_object child = {.origin = "/", .name = "child", .loader = &main_obj};
    assert_int_equal(sc_ldresolve(&r, &child, "libx.so", &hit), 0);
    assert_int_equal(hit.via, SC_VIA_RPATH);
    close(hit.fd);
    /* DF_1_NODEFLIB: no cache, no default directories */
    const char *const defaults[] = {origin, NULL};
    r.default_dirs = defaults;
    sc_ld_object nodeflib = {.origin = "/", .name = "n", .flags_1 = DF_1_NODEFLIB};
    r.main = &nodeflib;
    assert_int_equal(sc_ldresolve(&r, &nodeflib, "libx.so", &hit), -ENOENT);
    assert_int_equal(hit.via, SC_VIA_NOT_FOUND);
    nodeflib.flags_1 = 0;
    assert_int_equal(sc_ldresolve(&r, &nodeflib, "libx.so", &hit), 0);
    assert_int_equal(hit.via, SC_VIA_DEFAULT);
    close(hit.fd);
    sc_root_close(&root);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* A lookup through a shared search of an object whose RPATH is list; returns sc_ldresolve's. */
static int lookup(sc_ldresolver *r, sc_ld_object *o, const char *name)
{
    sc_ld_hit hit;
    int rc = sc_ldresolve(r, o, name, &hit);
    if (hit.fd >= 0)
        close(hit.fd);
    return rc;
}

static void test_search_checks(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/sc-lds-XXXXXX", list[PATH_MAX * 2], path[PATH_MAX];
    const char *d = mkdtemp(tmpl);
    assert_non_null(d);
    snprintf(path, sizeof path, "%s/x86", d);
    mkdir(path, 0755);
    snprintf(dir, sizeof dir, "%s", d);
    fake_elf("x86/libhit.so", EM_X86_64);
    /* the same absent directory three times, then one that exists */
    snprintf(list, sizeof list, "%s/no:%s/no:%s/no:%s/x86", d, d, d, d);
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, NULL, &err), 0);
    sc_ld_search *s = sc_ld_search_new(&root);
    sc_ld_object obj = {.rpath = list, .origin = d, .name = "obj"};
    assert_int_equal(sc_ld_search_prepare(s, &obj), 0);
    const char *const no_defaults[] = {NULL};
    /* a loader without hardware-capability subdirectories: the checks are the directories' own */
    sc_ldresolver r = {.root = &root,
                       .main = &obj,
                       .default_dirs = no_defaults,
                       .search = s,
                       .target = sc_ld_target_default()};
    char name[32];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "libmiss%d.so", i);
        assert_int_equal(lookup(&r, &obj, name), -ENOENT);
    }
    /* two directory checks, four opens in x86, then its listing: nothing more for six misses */
    assert_int_equal(sc_ld_search_budget(s)->checks, 2 + 4 + 1);
    assert_int_equal(lookup(&r, &obj, "libhit.so"), 0); /* listed: one open */
    assert_int_equal(sc_ld_search_budget(s)->checks, 2 + 4 + 1 + 1);
    assert_int_equal(sc_ld_search_budget(s)->steps, 11 * 2);
    assert_int_equal(sc_ld_search_budget(s)->lists_cut, 0);
    assert_null(sc_ld_search_budget(s)->spent);
    /* a list of more distinct directories than the budget is cut, and says so */
    size_t n = 0;
    static char wide[(SC_LD_MAX_ENTRIES + 500) * 8];
    for (int i = 0; i < SC_LD_MAX_ENTRIES + 500; i++)
        n += (size_t)snprintf(wide + n, sizeof wide - n, "%s/w%d", i ? ":" : "", i);
    sc_ld_object w = {.rpath = wide, .origin = d, .name = "wide"};
    assert_int_equal(sc_ld_search_prepare(s, &w), 0);
    assert_int_equal(sc_ld_search_budget(s)->lists_cut, 1);
    assert_non_null(strstr(sc_ld_search_budget(s)->first_cut, "RPATH of wide (1524 entries)"));
    sc_ld_search_free(s);
    sc_root_close(&root);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    assert_int_equal(system(cmd), 0);
}

static void test_isolated_analysis(void **state)
{
    (void)state;
    const char *lib = "/usr/lib/x86_64-linux-gnu/libz.so.1";
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, NULL, &err), 0);
    sc_libs_config cfg = {.ld_library_path = NULL};
    cJSON *here = NULL, *there = NULL;
    assert_int_equal(sc_libs_analyze(&root, lib, &cfg, &here, &err), 0);
    assert_int_equal(sc_libs_analyze_isolated(&root, lib, &cfg, 60, &there, &err), 0);
    assert_true(cJSON_Compare(here, there, true));
    cJSON_Delete(there);
    assert_int_equal(sc_libs_analyze_isolated(&root, "/nonexistent.so", &cfg, 60, &there, &err),
                     -ENOENT);
    assert_null(there);
    assert_int_equal(sc_libs_analyze_isolated(&root, lib, &cfg, 1e-9, &there, &err), -ETIMEDOUT);
    assert_non_null(strstr(err.message, "timed out"));
    cJSON_Delete(here);
    sc_root_close(&root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_self),        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_resolve),           cmocka_unit_test(test_search_checks),
        cmocka_unit_test(test_isolated_analysis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
