/* Kernel-log scan for accelerator driver errors: ring timeouts, GPU resets, firmware load failures,
 * "not supported". Reads the live /dev/kmsg without blocking, or under --sysroot the root's
 * /var/log/kern.log or /var/log/dmesg; the scanner works on a buffer. */
#ifndef SC_KMSG_H
#define SC_KMSG_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_sysroot.h"
#include "sc_types.h"
#include "sc_util.h"

#define SC_KMSG_KEEP 5
#define SC_KMSG_LINE_MAX 240
#define SC_KMSG_MAX_BYTES (4u << 20)

typedef struct {
    const char *kind;            /* "ring-timeout", "gpu-reset", "firmware-load-failed", ... */
    char line[SC_KMSG_LINE_MAX]; /* the message, control bytes escaped as \xNN, cut to fit */
} sc_kmsg_match;

typedef struct {
    sc_kmsg_match first[SC_KMSG_KEEP]; /* the first matches, in log order */
    size_t kept;
    size_t total; /* all matching lines */
    size_t lines; /* lines scanned */
} sc_kmsg_result;

/* Scans len bytes of log text (kmsg records "pri,seq,ts,flags;msg" or syslog lines; NUL bytes
 * allowed) for lines of the drivers named in drivers (NULL-terminated, matched case-insensitively)
 * that report an error. */
void sc_kmsg_scan(const char *buf, size_t len, const char *const *drivers, sc_kmsg_result *out);
/* The next line of len bytes of log text from *pos (advanced past it), with a kmsg record's
 * "pri,seq,ts,flags;" prefix removed: *line and *n. Returns false at the end. */
bool sc_kmsg_next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n);
/* Copies n bytes of s into out (size bytes), control and non-ASCII bytes as \xNN, cut to fit. */
void sc_kmsg_escape(const char *s, size_t n, char *out, size_t size);
/* Reads the kernel log into text (at most SC_KMSG_MAX_BYTES, the newest part) and names where it
 * came from in source. Returns 0, or a negative errno with err saying why it is not readable. */
int sc_kmsg_read(const sc_root *root, sc_buf *text, char *source, size_t size, sc_error *err);

#endif
