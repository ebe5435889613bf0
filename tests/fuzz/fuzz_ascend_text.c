/* Fuzz target for the Ascend text stackcheck reads from outside: version.info and install.info
 * Key=value files, dotted versions, the driver's compatible_version_fw ranges, CANN's version.cfg
 * lines, release lines and compatible_version lists, the installer's file list and the words of a
 * module's vermagic, and the Ascend drivers' kernel-log lines. The input's first line is also tried
 * as a version, a range, a release line, a list and a vermagic. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sc_ascend.h"

static void check_printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
            __builtin_trap();
}

/* version.cfg, release lines and compatible_version lists: printable bounded output. */
static void try_lock_text(const char *text, const char *first)
{
    char comp[64], cann[64], groups[256];
    if (sc_ascend_cfg_running(text, "runtime_running_version", comp, sizeof comp, cann,
                              sizeof cann)) {
        check_printable(comp);
        check_printable(cann);
    }
    long long line[3];
    if (sc_ascend_release_line(first, line) && (line[0] < 0 || line[1] < 0 || line[2] < 0))
        __builtin_trap();
    int r = sc_ascend_line_compatible(first, "V100R001C19SPC002B225", groups, sizeof groups);
    if (r >= 0)
        check_printable(groups);
    if (r > 1 || (r < 0 && r != -EINVAL))
        __builtin_trap();
}

/* The installer's [driver_ko] lines and vermagic words: absolute, printable, bounded. */
static void try_kernel_text(const char *text, const char *first)
{
    char path[128], release[64], base[64];
    size_t lines = 0;
    for (const char *at = text; sc_ascend_filelist_next(&at, "driver_ko", path, sizeof path);) {
        check_printable(path);
        if (path[0] != '/' || strchr(path, ' ') || ++lines > strlen(text))
            __builtin_trap(); /* each path is a line of its own */
    }
    if (sc_kernel_vermagic_release(first, release, sizeof release)) {
        check_printable(release);
        if (sc_kernel_release_base(release, base, sizeof base) && strlen(base) > strlen(release))
            __builtin_trap();
    }
    (void)sc_kernel_vermagic_modversions(first);
}

static void try_versions(const char *text)
{
    char v[64] = "", fw[64], ranges[256];
    if (sc_ascend_info_get(text, "Version", v, sizeof v))
        check_printable(v);
    else
        v[0] = '\0';
    if (sc_ascend_info_get(text, "compatible_version_fw", fw, sizeof fw) &&
        sc_ascend_fw_in_range(fw, v[0] ? v : "7.0.0", ranges, sizeof ranges) >= 0)
        check_printable(ranges);
    const char *nl = strchr(text, '\n');
    size_t n = nl ? (size_t)(nl - text) : strlen(text);
    char first[128];
    if (n >= sizeof first)
        n = sizeof first - 1;
    memcpy(first, text, n);
    first[n] = '\0';
    int c, d;
    if (sc_ascend_version_cmp(first, first, 0, &c) == 0 && c != 0)
        __builtin_trap(); /* a version equals itself */
    if (sc_ascend_version_cmp(first, "7.7.0", 0, &c) == 0 &&
        (sc_ascend_version_cmp("7.7.0", first, 0, &d) != 0 || c != -d))
        __builtin_trap(); /* and the order is antisymmetric */
    sc_ascend_fw_in_range(first, "7.1.0", ranges, sizeof ranges);
    try_lock_text(text, first);
    try_kernel_text(text, first);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    try_versions(text);
    sc_ascend_kmsg_result r;
    sc_ascend_kmsg_scan((const char *)data, size, &r);
    if (r.kept > SC_ASCEND_KMSG_KEEP || r.kept > r.total || r.total > r.lines)
        __builtin_trap();
    for (size_t i = 0; i < r.kept; i++)
        check_printable(r.first[i].line);
    free(text);
    return 0;
}
