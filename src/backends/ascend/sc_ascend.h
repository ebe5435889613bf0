/* The text the Ascend driver, firmware and CANN packages install, parsed from buffers (kept apart
 * from I/O so fuzz targets drive them): the Key=value version.info and *_install.info files, the
 * driver's compatible_version_fw range, dotted version comparison, and the kernel-log lines of the
 * davinci/devdrv/hdc drivers that report a problem. */
#ifndef SC_ASCEND_H
#define SC_ASCEND_H

#include <stdbool.h>
#include <stddef.h>

#define SC_ASCEND_KMSG_KEEP 5
#define SC_ASCEND_KMSG_LINE_MAX 240
#define SC_ASCEND_MAX_COMPONENTS 16 /* a version with more dotted parts is not a version */

/* Looks up key (case-insensitive) in "key=value" lines; copies the value, trimmed and unquoted,
 * into buf. Returns true only for a non-empty value of printable ASCII that fits. */
bool sc_ascend_info_get(const char *text, const char *key, char *buf, size_t size);

/* Compares the dotted versions a and b ("25.0.rc1.1", "7.7.0.1.231", "8.0.RC3") component by
 * component, numbers as numbers; a pre-release part (alpha < beta < rc, any case, "rc1" or "0rc1")
 * sorts before the plain release. When ncomp > 0 only the first ncomp components count (so a
 * range bound "7.7.99" covers 7.7.99.x). Sets *cmp to -1, 0 or 1; returns 0, or -EINVAL when
 * either is not a version. */
int sc_ascend_version_cmp(const char *a, const char *b, size_t ncomp, int *cmp);
/* The number of components of version v, 0 when it is not a version. */
size_t sc_ascend_version_parts(const char *v);

/* Whether firmware version fw lies in one of the driver's compatible_version_fw ranges:
 * "[7.0.0,7.7.99]" or several "[a,b],[c,d]" ("[a]" alone means a). Each bound counts to its own
 * number of components. The ranges, as read, go to ranges ("7.0.0-7.7.99, ..."). Returns 1 inside,
 * 0 outside, -EINVAL when the text holds no well-formed range or fw is not a version. */
int sc_ascend_fw_in_range(const char *range_text, const char *fw, char *ranges, size_t size);

/* The release line of an Innerversion ("V100R001C19SPC002B225" -> 100, 1, 19); false when the text
 * does not start with V<n>R<n>C<n>. */
bool sc_ascend_release_line(const char *innerversion, long long line[3]);
/* Whether innerversion's release line lies in a compatible_version list: "[V100R001C15],
 * [V100R001C18]" or ranges "[V100R001C13,V100R001C19]". The groups, as read, go to groups.
 * Returns 1 inside, 0 outside, -EINVAL when no group is well formed or innerversion is no line. */
int sc_ascend_line_compatible(const char *list, const char *innerversion, char *groups,
                              size_t size);
/* A version.cfg line "key=[7.6.0.1.220:8.0.0]" (the first group when there are several): the
 * component version and the CANN version ("CANN-" dropped). False when the key has no [a:b]. */
bool sc_ascend_cfg_running(const char *text, const char *key, char *component, size_t csize,
                           char *cann, size_t nsize);

/* The next "[tag] /absolute/path" line of the driver installer's /etc/ascend_filelist.info at or
 * after *cursor (its kernel modules are "[driver_ko] /lib/modules/<release>/updates/<name>.ko"):
 * copies the path (printable, no spaces) into path and moves *cursor past the line. False when no
 * such line is left. */
bool sc_ascend_filelist_next(const char **cursor, const char *tag, char *path, size_t size);
/* The kernel release a module's vermagic names: its first word ("5.10.0-60.18.0.50.oe2203.aarch64
 * SMP mod_unload modversions aarch64" -> "5.10.0-60.18.0.50.oe2203.aarch64"). */
bool sc_kernel_vermagic_release(const char *vermagic, char *release, size_t size);
/* The base version of a kernel release, up to its first '-' or '+' ("5.10.0-60.18..." ->
 * "5.10.0"): what the Ascend driver installer calls the primary version. */
bool sc_kernel_release_base(const char *release, char *base, size_t size);
/* True when the vermagic has the word "modversions": the module carries symbol CRCs, and a kernel
 * with CONFIG_MODVERSIONS compares those instead of the release. */
bool sc_kernel_vermagic_modversions(const char *vermagic);

/* One kernel-log line of the Ascend drivers that reports a problem. */
typedef struct {
    char line[SC_ASCEND_KMSG_LINE_MAX]; /* the message, escaped, cut to fit */
} sc_ascend_kmsg_match;

typedef struct {
    sc_ascend_kmsg_match first[SC_ASCEND_KMSG_KEEP];
    size_t kept;
    size_t total; /* all matching lines */
    size_t lines; /* lines scanned */
} sc_ascend_kmsg_result;

/* Scans len bytes of kernel-log text (kmsg records or syslog lines; NUL bytes allowed) for lines
 * that mention one of the Ascend descriptor's kernel-log words (davinci, ascend, devdrv, devmm,
 * hdcdrv, hisi_hdc) and an error word (error, fail, timeout, abnormal, fault, exception,
 * heartbeat lost, panic). */
void sc_ascend_kmsg_scan(const char *buf, size_t len, sc_ascend_kmsg_result *out);

#endif
