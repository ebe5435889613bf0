/* The target's loader model: the subdirectories each glibc version searches (legacy tls/platform/
 * hwcap before 2.37, glibc-hwcaps from 2.33 on this CPU), $LIB and $PLATFORM of each layout, the
 * layout found from where a root's libc.so.6 lies, and the search of subdirectories before their
 * directory at the cost of one check each, none where the directory does not exist. The layouts of
 * whole roots with their caches are in integration.test_loader. */
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

#include "sc_ldresolve.h"
#include "sc_ldtarget.h"

/* The subdirectories of a target of this machine and glibc version, joined with spaces. */
static const char *subdirs_of(uint16_t machine, int minor, bool cpu_known)
{
    static char out[512];
    sc_ld_target t = {.elf_class = ELFCLASS64,
                      .machine = machine,
                      .glibc_minor = minor,
                      .cpu_known = cpu_known,
                      .platform = machine == EM_AARCH64 ? "aarch64" : "x86_64"};
    sc_ld_target_subdirs(&t);
    out[0] = '\0';
    for (int i = 0; i < t.subdir_count; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? " " : "", t.subdirs[i]);
    return out;
}

static void test_subdirs_by_glibc_version(void **state)
{
    (void)state;
    /* CentOS 7: the platform and tls only (HWCAP_X86_64 came with 2.26) */
    assert_string_equal(subdirs_of(EM_X86_64, 17, false), "tls/x86_64 tls x86_64");
    /* Rocky 8, Debian 11: the x86_64 capability too, every combination, most specific first */
    assert_string_equal(subdirs_of(EM_X86_64, 28, false),
                        "tls/x86_64/x86_64 tls/x86_64 tls x86_64/x86_64 x86_64");
    /* glibc 2.37 dropped the legacy subdirectories; an unknown CPU has no glibc-hwcaps level */
    assert_string_equal(subdirs_of(EM_X86_64, 38, false), "");
    /* aarch64: the platform; the atomics capability only on a CPU known to have it */
    assert_string_equal(subdirs_of(EM_AARCH64, 28, false), "tls/aarch64 tls aarch64");
    assert_string_equal(subdirs_of(EM_AARCH64, 17, false), "tls/aarch64 tls aarch64");
    /* no glibc found: plain directories */
    assert_string_equal(subdirs_of(EM_X86_64, -1, true), "");
}

static void test_glibc_hwcaps_follow_this_cpu(void **state)
{
    (void)state;
    const sc_ld_cpu *cpu = sc_ld_cpu_this();
#if defined(__x86_64__)
    assert_in_range(cpu->x86_level, 1, 4);
    char want[256] = "";
    for (int level = cpu->x86_level; level >= 2; level--)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%sglibc-hwcaps/x86-64-v%d",
                 want[0] ? " " : "", level);
    assert_string_equal(subdirs_of(EM_X86_64, 38, true), want);
    /* before 2.33 no glibc-hwcaps subdirectory is searched, whatever the CPU */
    assert_null(strstr(subdirs_of(EM_X86_64, 32, true), "glibc-hwcaps"));
    assert_non_null(strstr(subdirs_of(EM_X86_64, 33, true), "x86_64/x86_64"));
#else
    (void)cpu;
#endif
    /* aarch64 has no glibc-hwcaps subdirectories */
    assert_null(strstr(subdirs_of(EM_AARCH64, 38, true), "glibc-hwcaps"));
}

static void test_expand_for_target(void **state)
{
    (void)state;
    char out[256];
    const char *e = "/opt/a/$LIB:/opt/a/${PLATFORM}";
    sc_ld_target rhel = *sc_ld_target_default();
    rhel.lib = "lib64";
    rhel.platform = "aarch64";
    assert_true(sc_ld_expand_for(&rhel, e, strlen(e), "/o", out, sizeof out));
    assert_string_equal(out, "/opt/a/lib64:/opt/a/aarch64");
}

static char dir[] = "/tmp/sc-ldt-XXXXXX";

/* A 64-byte ELF header of this class and machine at rel (directories made). */
static void fake_elf(const char *rel, uint8_t cls, uint16_t machine)
{
    char path[PATH_MAX], cmd[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    unsigned char h[64] = {0x7f, 'E', 'L', 'F', cls, ELFDATA2LSB, EV_CURRENT};
    uint16_t type = ET_DYN;
    memcpy(h + 16, &type, 2);
    memcpy(h + 18, &machine, 2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, h, sizeof h), (ssize_t)sizeof h);
    close(fd);
}

/* The layout sc_ld_target_detect finds in the root made so far, for class and machine. */
static const char *layout_of(uint8_t cls, uint16_t machine, sc_ld_target *t)
{
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, dir, &err), 0);
    sc_ld_target_detect(&root, cls, machine, t);
    sc_root_close(&root);
    return t->layout;
}

static void test_layout_from_libc(void **state)
{
    (void)state;
    assert_non_null(mkdtemp(dir));
    sc_ld_target t;
    /* nothing there: the multiarch model, as before targets were known */
    assert_string_equal(layout_of(ELFCLASS64, EM_X86_64, &t), "multiarch");
    assert_string_equal(t.lib, "lib/x86_64-linux-gnu");
    assert_int_equal(t.glibc_minor, -1);
    /* a 32-bit libc in /usr/lib and the 64-bit one in /usr/lib64: RHEL's multilib */
    fake_elf("usr/lib/libc.so.6", ELFCLASS32, EM_386);
    fake_elf("usr/lib64/libc.so.6", ELFCLASS64, EM_X86_64);
    assert_string_equal(layout_of(ELFCLASS64, EM_X86_64, &t), "lib64");
    assert_string_equal(t.default_dirs[0], "/lib64");
    assert_string_equal(t.default_dirs[1], "/usr/lib64");
    assert_null(t.default_dirs[2]);
    assert_string_equal(t.lib, "lib64");
    assert_string_equal(layout_of(ELFCLASS32, EM_386, &t), "lib");
    /* an aarch64 object in the same root: no aarch64 libc, /usr/lib64 is there */
    assert_string_equal(layout_of(ELFCLASS64, EM_AARCH64, &t), "lib64");
    assert_string_equal(t.platform, "aarch64");
    /* an aarch64 multiarch libc: Debian and Ubuntu on arm64 */
    fake_elf("usr/lib/aarch64-linux-gnu/libc.so.6", ELFCLASS64, EM_AARCH64);
    assert_string_equal(layout_of(ELFCLASS64, EM_AARCH64, &t), "multiarch");
    assert_string_equal(t.default_dirs[1], "/usr/lib/aarch64-linux-gnu");
    assert_string_equal(t.lib, "lib/aarch64-linux-gnu");
    /* class 0: the root's own programs, here an aarch64 /bin/sh */
    fake_elf("bin/sh", ELFCLASS64, EM_AARCH64);
    layout_of(0, 0, &t);
    assert_int_equal(t.machine, EM_AARCH64);
    assert_int_equal(t.cpu_known, sc_ld_target_default()->machine == EM_AARCH64);
}

/* The resolver searches a directory's subdirectories first; an absent directory's subdirectories
 * are never checked, a present one's once each. */
static void test_subdirectories_searched_first(void **state)
{
    (void)state;
    fake_elf("lib/sub2/libx.so", ELFCLASS64, EM_X86_64);
    fake_elf("lib/libx.so", ELFCLASS64, EM_X86_64);
    sc_ld_target t = *sc_ld_target_default();
    snprintf(t.subdirs[0], sizeof t.subdirs[0], "sub1");
    snprintf(t.subdirs[1], sizeof t.subdirs[1], "sub2");
    t.subdir_count = 2;
    char list[PATH_MAX * 2], want[PATH_MAX];
    snprintf(list, sizeof list, "%s/absent:%s/lib", dir, dir);
    sc_root root;
    sc_error err;
    assert_int_equal(sc_root_open(&root, NULL, &err), 0);
    sc_ld_search *s = sc_ld_search_new(&root);
    sc_ld_search_set_target(s, &t);
    sc_ld_object obj = {.rpath = list, .origin = dir, .name = "obj"};
    assert_int_equal(sc_ld_search_prepare(s, &obj), 0);
    const char *const no_defaults[] = {NULL};
    sc_ldresolver r = {.root = &root, .main = &obj, .default_dirs = no_defaults, .search = s};
    sc_ld_hit hit;
    assert_int_equal(sc_ldresolve(&r, &obj, "libx.so", &hit), 0);
    snprintf(want, sizeof want, "%s/lib/sub2/libx.so", dir);
    assert_string_equal(hit.path, want);
    assert_int_equal(hit.via, SC_VIA_RPATH);
    snprintf(want, sizeof want, "%s/lib/sub2", dir);
    assert_string_equal(hit.entry, want);
    close(hit.fd);
    /* absent: 1 check; lib: 1; sub1 (absent): 1; sub2: 1, and one open */
    assert_int_equal(sc_ld_search_budget(s)->checks, 5);
    assert_int_equal(sc_ld_search_budget(s)->steps, 3);
    /* again: the absent ones cost nothing, sub2 and lib one open each for a missing name */
    assert_int_equal(sc_ldresolve(&r, &obj, "libmissing.so", &hit), -ENOENT);
    assert_int_equal(sc_ld_search_budget(s)->checks, 7);
    sc_ld_search_free(s);
    sc_root_close(&root);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subdirs_by_glibc_version),
        cmocka_unit_test(test_glibc_hwcaps_follow_this_cpu),
        cmocka_unit_test(test_expand_for_target),
        cmocka_unit_test(test_layout_from_libc),
        cmocka_unit_test(test_subdirectories_searched_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
