/* Kernel-log scan for accelerator driver errors: ring timeouts, GPU resets, firmware load failures,
 * "not supported". Reads the live /dev/kmsg without blocking, or under --sysroot the root's
 * /var/log/kern.log or /var/log/dmesg; the scanner works on a buffer. */
#ifndef SC_KMSG_H
#define SC_KMSG_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "sc_sysroot.h"
#include "sc_types.h"
#include "sc_util.h"

#define SC_KMSG_KEEP 5
#define SC_KMSG_LINE_MAX 240
#define SC_KMSG_MAX_BYTES (4u << 20)
#define SC_KMSG_MAX_DEVICES 32 /* devices whose lines are kept apart */
#define SC_KMSG_DEVICE_KEEP 3  /* lines kept per device */
#define SC_KMSG_CONTEXT_LINES                                                                      \
    8 /* a line without an address belongs to the device named this close */

/* What kind of trouble a kernel-log line reports: the remedy follows the class. */
typedef enum {
    SC_KMSG_HANG,        /* a ring, queue or firmware RPC timed out: a hung job or a hung GPU */
    SC_KMSG_RESET,       /* the GPU was reset (and may have lost VRAM) */
    SC_KMSG_FIRMWARE,    /* a firmware file is missing or was refused */
    SC_KMSG_INIT,        /* the device failed to initialise: the driver does not drive it */
    SC_KMSG_UNSUPPORTED, /* the driver does not support this ASIC (or its platform) */
    SC_KMSG_HARDWARE,    /* the hardware is gone or faulty: fallen off the bus, ECC, link down */
    SC_KMSG_MISMATCH,    /* user space and kernel module disagree */
    SC_KMSG_FAULT        /* a job faulted (page fault, graphics exception): the program */
} sc_kmsg_class;

/* One row of a vendor's table: a line of one of its drivers that contains needle (and also, when
 * given; both case-insensitive) means what kind says. The first matching row wins. */
typedef struct {
    const char *needle;
    const char *also;     /* NULL: needle alone */
    const char *kind;     /* stable: "psp-firmware-load-failed" */
    sc_severity severity; /* what the line says about its device */
    sc_kmsg_class cls;
    const char *meaning; /* in words, for the finding */
} sc_kmsg_pattern;

/* A table row: SC_KMSG_ROW("GPU reset", "failed", "gpu-reset-failed", ERROR, HARDWARE, "..."). */
#define SC_KMSG_ROW(needle, also, kind, sev, cls, meaning)                                         \
    {                                                                                              \
        needle, also, kind, SC_SEV_##sev, SC_KMSG_##cls, meaning                                   \
    }

typedef struct {
    const char *const *drivers;      /* words that mark the vendor's lines (any one) */
    const sc_kmsg_pattern *patterns; /* rows, ended by one with needle NULL; kind NULL: ignore */
    /* NULL, or the row that says more than row about line[0..n) (an Xid by its number) */
    const sc_kmsg_pattern *(*refine)(const sc_kmsg_pattern *row, const char *line, size_t n);
} sc_kmsg_table;

typedef struct {
    const sc_kmsg_pattern *pattern;
    char pci[16];                /* the device it names ("0000:c7:00.0"), or the one named just
                                    before it; "" when none */
    bool pci_in_line;            /* the line itself names pci */
    char line[SC_KMSG_LINE_MAX]; /* the message, control bytes escaped as \xNN, cut to fit */
    const char *kind;            /* pattern->kind */
} sc_kmsg_match;

/* The lines pinned to one device, in log order. */
typedef struct {
    char pci[16];
    size_t total;
    sc_kmsg_match lines[SC_KMSG_DEVICE_KEEP];
    size_t kept;
    sc_kmsg_match cause; /* the first error line (kept even past SC_KMSG_DEVICE_KEEP) */
    bool has_cause;
} sc_kmsg_device;

typedef struct {
    sc_kmsg_match first[SC_KMSG_KEEP]; /* the first matches, in log order */
    size_t kept;
    size_t total;  /* all matching lines */
    size_t lines;  /* lines scanned */
    size_t errors; /* matching lines of severity error */
    sc_kmsg_device devices[SC_KMSG_MAX_DEVICES];
    size_t ndevices;
} sc_kmsg_result;

/* Called for every matching line (m filled, line[0..n) the raw message). */
typedef void (*sc_kmsg_hook)(void *arg, const sc_kmsg_match *m, const char *line, size_t n);

/* Scans len bytes of log text (kmsg records "pri,seq,ts,flags;msg" or syslog lines; NUL bytes
 * allowed) for lines of table's drivers that match one of its rows; each match is pinned to the
 * PCI address the line names (or, failing that, to the one a line of the same drivers named at
 * most SC_KMSG_CONTEXT_LINES lines before). hook (may be NULL) hears every match. */
void sc_kmsg_scan_table(const char *buf, size_t len, const sc_kmsg_table *table,
                        sc_kmsg_result *out, sc_kmsg_hook hook, void *arg);
/* The lines pinned to pci (any case), or NULL. */
const sc_kmsg_device *sc_kmsg_device_of(const sc_kmsg_result *r, const char *pci);
/* The first PCI address in s[0..n) ("0000:c7:00.0", or NVIDIA's "PCI:0000:2a:00", taken as function
 * 0) in lower case into out; false when there is none. */
bool sc_kmsg_find_pci(const char *s, size_t n, char *out, size_t size);
/* {kind, severity, line} of m for the snapshot. */
cJSON *sc_kmsg_match_json(const sc_kmsg_match *m);
/* The AMD table (src/backends/amd/amd_kmsg.c) and the NVIDIA one (src/backends/nvidia/). */
extern const sc_kmsg_table sc_amd_kmsg_table;
extern const sc_kmsg_table sc_nvidia_kmsg_table;

/* The next line of len bytes of log text from *pos (advanced past it), with a kmsg record's
 * "pri,seq,ts,flags;" prefix removed: *line and *n. Returns false at the end. */
bool sc_kmsg_next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n);
/* Copies n bytes of s into out (size bytes), control and non-ASCII bytes as \xNN, cut to fit. */
void sc_kmsg_escape(const char *s, size_t n, char *out, size_t size);
/* Reads the kernel log into text (at most SC_KMSG_MAX_BYTES, the newest part) and names where it
 * came from in source. Returns 0, or a negative errno with err saying why it is not readable. */
int sc_kmsg_read(const sc_root *root, sc_buf *text, char *source, size_t size, sc_error *err);

#endif
