/* The target's loader model. glibc's built-in directories and $LIB are how the distribution
 * configured it (Debian and Ubuntu: /lib/<triplet> and /usr/lib/<triplet> before /lib and
 * /usr/lib; the RHEL family, SUSE and upstream's 64-bit default: /lib64 and /usr/lib64), found
 * here from where the root's libc.so.6 lies; the subdirectories follow the root's glibc version
 * (read from the versions its libc.so.6 defines) and, for a target of this machine, this CPU. */
#include "sc_ldtarget.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sc_elf.h"
#include "sc_util.h"

#if defined(__aarch64__)
#define BUILD_MACHINE EM_AARCH64
#else
#define BUILD_MACHINE EM_X86_64
#endif

typedef struct {
    uint16_t machine;
    uint8_t elf_class;
    const char *lib;      /* $LIB in the multiarch layout */
    const char *platform; /* AT_PLATFORM */
    const char *const *multiarch_dirs;
} machine_info;

static const char *const x86_64_dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
                                          "/lib", "/usr/lib", NULL};
static const char *const aarch64_dirs[] = {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                                           "/lib", "/usr/lib", NULL};
static const char *const i386_dirs[] = {"/lib/i386-linux-gnu", "/usr/lib/i386-linux-gnu", "/lib",
                                        "/usr/lib", NULL};
static const char *const lib64_dirs[] = {"/lib64", "/usr/lib64", NULL};
static const char *const lib_dirs[] = {"/lib", "/usr/lib", NULL};

static const machine_info machines[] = {
    {EM_X86_64, ELFCLASS64, "lib/x86_64-linux-gnu", "x86_64", x86_64_dirs},
    {EM_AARCH64, ELFCLASS64, "lib/aarch64-linux-gnu", "aarch64", aarch64_dirs},
    {EM_386, ELFCLASS32, "lib/i386-linux-gnu", "i686", i386_dirs},
};

static const machine_info *machine_of(uint8_t elf_class, uint16_t machine)
{
    for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
        if (machines[i].machine == machine && machines[i].elf_class == elf_class)
            return &machines[i];
    return NULL;
}

static void set_layout(sc_ld_target *t, const char *layout, const char *const *dirs,
                       const char *lib)
{
    t->layout = layout;
    t->default_dirs = dirs;
    t->lib = lib;
}

const sc_ld_target *sc_ld_target_default(void)
{
    static sc_ld_target t;
    if (!t.layout) {
        const machine_info *m = machine_of(ELFCLASS64, BUILD_MACHINE);
        t.elf_class = ELFCLASS64;
        t.machine = BUILD_MACHINE;
        t.platform = m->platform;
        t.glibc_minor = -1;
        set_layout(&t, "multiarch", m->multiarch_dirs, m->lib);
    }
    return &t;
}

static bool is_dir(const sc_root *root, const char *path)
{
    struct stat st;
    return sc_root_stat(root, path, &st, true) == 0 && S_ISDIR(st.st_mode);
}

/* The first of the first n dirs holding a libc.so.6 of the target's class and machine, into
 * found; false when none does. */
static bool find_libc(const sc_root *root, const sc_ld_target *t, const char *const *dirs, int n,
                      char *found, size_t size)
{
    for (int i = 0; i < n && dirs[i]; i++) {
        if (!sc_fmt(found, size, "%s/libc.so.6", dirs[i]))
            continue;
        int fd = sc_root_open_file(root, found, NULL);
        uint8_t cls = 0;
        uint16_t mach = 0;
        bool ok = fd >= 0 && sc_elf_ident(fd, &cls, &mach) == 0 && cls == t->elf_class &&
                  mach == t->machine;
        if (fd >= 0)
            close(fd);
        if (ok)
            return true;
    }
    found[0] = '\0';
    return false;
}

/* The layout from where libc.so.6 lies: multiarch, then lib64 (64-bit only), then lib. Without a
 * libc (a partial image), lib64 when /usr/lib64 or /lib64 is a directory and the multiarch one
 * is not, else multiarch: what the model was before it knew targets. */
static void detect_layout(const sc_root *root, const machine_info *m, sc_ld_target *t, char *libc,
                          size_t size)
{
    bool is64 = t->elf_class == ELFCLASS64;
    if (m && find_libc(root, t, m->multiarch_dirs, 2, libc, size))
        set_layout(t, "multiarch", m->multiarch_dirs, m->lib);
    else if (is64 && find_libc(root, t, lib64_dirs, 2, libc, size))
        set_layout(t, "lib64", lib64_dirs, "lib64");
    else if (find_libc(root, t, lib_dirs, 2, libc, size))
        set_layout(t, "lib", lib_dirs, "lib");
    else if (is64 && (is_dir(root, "/usr/lib64") || is_dir(root, "/lib64")) &&
             !(m && is_dir(root, m->multiarch_dirs[1])))
        set_layout(t, "lib64", lib64_dirs, "lib64");
    else if (m)
        set_layout(t, "multiarch", m->multiarch_dirs, m->lib);
    else
        set_layout(t, "lib", lib_dirs, "lib");
}

/* The N of the "release version 2.N" banner every libc.so.6 carries (what it prints when run),
 * or -1. A release that adds no symbol has no version node of its own (2.31 defines GLIBC_2.30 at
 * most): the banner is exact. */
static int banner_minor(int fd, uint64_t size)
{
    static const char banner[] = "release version 2.";
    if (size == 0 || size > (64u << 20))
        return -1;
    const char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return -1;
    const char *at = memmem(map, size, banner, sizeof banner - 1);
    int minor = -1;
    if (at) {
        const char *p = at + sizeof banner - 1, *end = map + size;
        for (minor = 0; p < end && *p >= '0' && *p <= '9' && minor < 1000; p++)
            minor = minor * 10 + (*p - '0');
        if (p == at + sizeof banner - 1)
            minor = -1;
    }
    munmap((void *)map, size);
    return minor;
}

/* The newest GLIBC_2.N version libc.so.6 defines: N, or -1. */
static int verdef_minor(int fd, uint64_t size)
{
    sc_elf_info info;
    sc_error err;
    int best = -1;
    if (sc_elf_parse_fd(fd, size, SC_ELF_VERSIONS, &info, &err) < 0)
        return -1;
    for (int i = 0; i < info.verdef_count; i++) {
        int minor;
        char end;
        if (sscanf(info.verdef[i], "GLIBC_2.%d%c", &minor, &end) == 1 && minor > best)
            best = minor;
    }
    sc_elf_free(&info);
    return best;
}

/* The glibc of libc.so.6 at path: 2.<N>, from its banner, else its newest symbol version. The
 * answer is kept for the file (device, inode, size, time): an analysis of each of many files
 * would scan the same 2 MB again. */
static int glibc_minor_of(const sc_root *root, const char *libc)
{
    static struct {
        struct stat st;
        int minor;
    } known[4];
    static unsigned next;
    struct stat st;
    int fd = sc_root_open_file(root, libc, &st), minor = -1;
    if (fd < 0)
        return -1;
    for (unsigned i = 0; i < next && i < 4; i++) {
        const struct stat *k = &known[i].st;
        if (k->st_dev == st.st_dev && k->st_ino == st.st_ino && k->st_size == st.st_size &&
            k->st_mtim.tv_sec == st.st_mtim.tv_sec && k->st_mtim.tv_nsec == st.st_mtim.tv_nsec) {
            close(fd);
            return known[i].minor;
        }
    }
    minor = banner_minor(fd, (uint64_t)st.st_size);
    if (minor < 0)
        minor = verdef_minor(fd, (uint64_t)st.st_size);
    close(fd);
    known[next % 4].st = st;
    known[next % 4].minor = minor;
    next++;
    return minor;
}

/* The class and machine of the root's own programs: its /bin/sh, else this build's. */
static void native_of(const sc_root *root, uint8_t *elf_class, uint16_t *machine)
{
    int fd = sc_root_open_file(root, "/bin/sh", NULL);
    if (fd < 0 || sc_elf_ident(fd, elf_class, machine) < 0) {
        *elf_class = ELFCLASS64;
        *machine = BUILD_MACHINE;
    }
    if (fd >= 0)
        close(fd);
}

void sc_ld_target_detect(const sc_root *root, uint8_t elf_class, uint16_t machine, sc_ld_target *t)
{
    memset(t, 0, sizeof *t);
    if (elf_class == 0)
        native_of(root, &elf_class, &machine);
    t->elf_class = elf_class;
    t->machine = machine;
    const machine_info *m = machine_of(elf_class, machine);
    char libc[64];
    detect_layout(root, m, t, libc, sizeof libc);
    t->platform = m ? m->platform : "";
    t->glibc_minor = libc[0] ? glibc_minor_of(root, libc) : -1;
    t->cpu_known = machine == BUILD_MACHINE;
    sc_ld_target_subdirs(t);
}

static void add_subdir(sc_ld_target *t, const char *a, const char *b, const char *c)
{
    if (t->subdir_count == SC_LD_MAX_SUBDIRS)
        return;
    char *out = t->subdirs[t->subdir_count];
    size_t size = sizeof t->subdirs[0];
    snprintf(out, size, "%s", a);
    if (b)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", *out ? "/" : "", b);
    if (c)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", *out ? "/" : "", c);
    for (int i = 0; i < t->subdir_count; i++)
        if (strcmp(t->subdirs[i], out) == 0)
            return; /* the loader tries a repeated one again; it finds nothing new there */
    if (*out)
        t->subdir_count++;
}

/* Legacy subdirectories (glibc before 2.37): every combination of "tls", the platform and the
 * machine's one important capability, most specific first: tls/P/H, tls/P, tls/H, tls, P/H, P,
 * H. Intel's avx512_1 of glibc 2.26-2.36 is not modelled. */
static void add_legacy(sc_ld_target *t, const char *platform, const char *hwcap)
{
    static const char *const tls[] = {"tls", ""};
    for (int i = 0; i < 2; i++) {
        add_subdir(t, tls[i], platform, hwcap);
        add_subdir(t, tls[i], platform, NULL);
        add_subdir(t, tls[i], hwcap, NULL);
        add_subdir(t, tls[i], NULL, NULL);
    }
}

void sc_ld_target_subdirs(sc_ld_target *t)
{
    const sc_ld_cpu *cpu = sc_ld_cpu_this();
    int v = t->glibc_minor;
    bool x86 = t->machine == EM_X86_64, arm = t->machine == EM_AARCH64;
    t->subdir_count = t->hwcaps_count = 0;
    if (v < 0)
        return; /* no glibc found: plain directories only */
    for (int level = 4; x86 && t->cpu_known && v >= 33 && level >= 2; level--) {
        if (cpu->x86_level >= level) {
            snprintf(t->subdirs[t->subdir_count++], sizeof t->subdirs[0], "glibc-hwcaps/x86-64-v%d",
                     level);
            t->hwcaps_count++;
        }
    }
    if (x86 && t->cpu_known && cpu->haswell && v >= 26 && v < 37)
        t->platform = "haswell";
    const char *hwcap = NULL;
    if (v >= 26 && x86)
        hwcap = "x86_64";
    else if (v >= 26 && arm && t->cpu_known && cpu->atomics)
        hwcap = "atomics";
    if (v < 37)
        add_legacy(t, t->platform[0] ? t->platform : NULL, hwcap);
}

void sc_ld_target_describe(const sc_ld_target *t, char *buf, size_t size)
{
    sc_buf b;
    sc_buf_init(&b);
    sc_buf_printf(&b, "%s, $LIB=%s, $PLATFORM=%s", t->layout, t->lib, t->platform);
    if (t->glibc_minor >= 0)
        sc_buf_printf(&b, ", glibc 2.%d", t->glibc_minor);
    for (int i = 0; i < t->subdir_count; i++)
        sc_buf_printf(&b, "%s%s", i == 0 ? ", subdirectories " : " ", t->subdirs[i]);
    snprintf(buf, size, "%s", b.data ? b.data : "");
    sc_buf_free(&b);
}
