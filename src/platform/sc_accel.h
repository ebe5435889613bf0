/* The pieces the NVIDIA and AMD probes share: the y = 2x kernel and its check, bounded copies of
 * what a vendor library returns, the compiler log, visibility variables, the driver layer's device
 * list, the PCI census, device-node access and the kernel log. They build text and facts; the
 * vendor's probe emits the findings, so every finding id stays a literal in its own file. */
#ifndef SC_ACCEL_H
#define SC_ACCEL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "sc_facts.h"
#include "sc_json.h"
#include "sc_pci.h"
#include "sc_probe.h"
#include "sc_sysroot.h"
#include "sc_util.h"

#define SC_ACCEL_KERNEL_N 8               /* elements the kernel check doubles */
#define SC_ACCEL_PATTERN_BYTES (1u << 20) /* the copy check's pattern */
#define SC_ACCEL_MAX_LOG_BYTES (1u << 24) /* a longer compiler log is a garbage answer */

/* extern "C" sc_double(const float *x, float *y, int n): y = 2x; CUDA and HIP source alike. */
extern const char sc_accel_kernel_source[];

/* One sc_dl_symbol table entry: the names to try (newest first; the rest of the array is NULL),
 * whether it is required, and where the pointer goes in the vendor's struct type. */
#define SC_ACCEL_SYMBOL(type, field, req, ...)                                                     \
    {                                                                                              \
        {__VA_ARGS__}, req, offsetof(type, field)                                                  \
    }

/* One entry of a vendor's table of error names. */
typedef struct {
    int code;
    const char *name;
} sc_accel_code_name;
/* The name of code in table[0..n), or NULL. */
const char *sc_accel_code_lookup(const sc_accel_code_name *table, size_t n, int code);

/* A bounded, printable copy of a string a library returned (NULL or empty -> fallback). */
void sc_accel_copy_text(char *dst, size_t size, const char *src, size_t src_max,
                        const char *fallback);
/* "NAME (code): text" from the library's own name and text when it gave them (bounded, printable),
 * else fallback_name; the text is left out when empty or the same as the name. */
void sc_accel_describe(char *buf, size_t size, int code, const char *name,
                       const char *fallback_name, const char *text);
/* Appends one impossible answer (printf-style) to bad, "; "-joined. */
void sc_accel_note_bad(sc_buf *bad, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fills buf with the copy check's pattern (not all one byte, so an offset shows). */
void sc_accel_fill_pattern(unsigned char *buf, size_t n);

#define SC_ACCEL_MAX_MEMORY (1ULL << 50) /* 1 PiB: a larger device memory is a garbage answer */
/* What call (cuMemGetInfo, hipMemGetInfo) answered on device dev: mem.free_bytes and total_bytes,
 * true; or false with mem.free_bytes null (desc, which describes a failed rc, or "impossible
 * values", then noted in bad). */
bool sc_accel_memory_answer(cJSON *mem, sc_buf *bad, int dev, const char *call, int rc,
                            const char *desc, size_t free_b, size_t total_b);

/* A device pointer of either vendor (CUdeviceptr, or a HIP pointer as an integer). */
typedef unsigned long long sc_accel_dptr;
/* The vendor's calls for the copy check, each on run (the vendor's state) and device dev. alloc
 * and round_trip return the runtime's code (0: success) and report their own failure; differs
 * reports bytes that came back different (the vendor's wrong-result, SC_ACCEL_COPY_DIFFERS). */
typedef struct {
    int (*alloc)(void *run, int dev, sc_accel_dptr *d, size_t size);
    int (*round_trip)(void *run, int dev, sc_accel_dptr d, const void *src, void *back);
    void (*release)(void *run, sc_accel_dptr d);
    void (*differs)(void *run, int dev);
} sc_accel_copy_ops;
#define SC_ACCEL_COPY_DIFFERS "a 1 MiB pattern copied host -> device -> host came back different"
/* Host -> device -> host of a SC_ACCEL_PATTERN_BYTES pattern through ops, into o.copy_verified;
 * host memory running out is res's error. Returns true when every call succeeded (the bytes may
 * still differ: copy_verified is false then). */
bool sc_accel_copy_check(const sc_accel_copy_ops *ops, void *run, int dev, sc_result *res,
                         cJSON *o);
/* Records got[0..n) in o.kernel_result; true when got[k] == 2k, else why says what came back
 * ("the kernel x*2 on x=0..7 gave 0 1 2 ..."). */
bool sc_accel_check_doubled(const float *got, int n, cJSON *o, char *why, size_t size);
/* The runtime compiler's log of prog on one line, its last part when it does not fit ("" when
 * there is none). log_size and get_log are nvrtc's or hiprtc's calls. */
void sc_accel_rtc_log(int (*log_size)(void *, size_t *), int (*get_log)(void *, char *), void *prog,
                      char *buf, size_t size);

/* The visibility variables among names (NULL-terminated) set in env (getenv-like), scrubbed, as
 * "NAME=value, ..." (or NAME="value" when quoted) in buf; returns how many are set. */
int sc_accel_visibility_vars(char *(*env)(const char *), const char *const *names, bool quoted,
                             char *buf, size_t size);

/* The devices array of the driver probe's facts, or NULL when it has none. */
const cJSON *sc_accel_driver_devices(const sc_ctx *ctx, const char *probe_id);
/* The device of devices at PCI address pci (any case), or NULL. */
const cJSON *sc_accel_device_at(const cJSON *devices, const char *pci);
/* The PCI addresses of devices that driver_devices lacks, ", "-joined into out. */
void sc_accel_unmatched_devices(const cJSON *devices, const cJSON *driver_devices, sc_buf *out);
/* facts.driver_agrees: whether the driver layer has count devices and every PCI address of devices;
 * the addresses it lacks go to missing. Returns 1 or 0, or -1 with the fact null (none_reason)
 * when driver_devices is NULL. */
int sc_accel_driver_agrees(cJSON *facts, const cJSON *devices, int count,
                           const cJSON *driver_devices, const char *none_reason, sc_buf *missing);
/* The driver layer's evidence for a runtime's findings: "PROBE sees N NOUN (LABEL at PCI, ...)"
 * from the driver probe's devices (LABEL from label_key), or, when it has none, "PROBE: STATUS"
 * and the message of its first error finding (else its reason). */
void sc_accel_driver_evidence(const sc_ctx *ctx, const char *probe_id, const char *noun,
                              const char *label_key, char *buf, size_t size);
/* "LABEL at PCI, ..." for devices, LABEL from label_key ("?" when absent), into out. */
void sc_accel_list_devices(const cJSON *devices, const char *label_key, sc_buf *out);

/* A vendor's accelerators on PCI: how many, how many bound to its driver, the first, and the first
 * not bound. */
typedef struct {
    size_t ours, bound;
    const sc_pci_device *first, *unbound;
} sc_accel_census;
/* Counts d into c; bound says whether d is bound to the vendor's driver. */
void sc_accel_census_add(sc_accel_census *c, const sc_pci_device *d, bool bound);
/* Scans PCI under root into list and adds facts.pci: each accelerator keep() accepts (keep sees
 * every accelerator, so it can count them). facts.pci is null with the reason when the scan fails;
 * returns false then. */
bool sc_accel_scan_pci(const sc_root *root, cJSON *facts, sc_pci_list *list,
                       bool (*keep)(void *arg, const sc_pci_device *d), void *arg);

/* Owner, group and mode of a device node, and whether the effective user may read and write it. */
typedef struct {
    char path[64];
    bool exists, readable, writable;
    struct stat sb;
    char group[64];
} sc_accel_node;
/* Fills a for path (stat through root, access as the effective user). */
void sc_accel_node_check(const sc_root *root, const char *path, sc_accel_node *a);
/* {path, exists, readable, writable, [owner,] group, mode}, null with the reason when absent. */
cJSON *sc_accel_node_json(const sc_root *root, const sc_accel_node *a, bool with_owner);
/* True when a group-membership hint fits (the node is group read-write and we are not in the
 * group): hint then holds the usermod/--group-add advice. */
bool sc_accel_node_group_hint(const sc_accel_node *a, char *hint, size_t size);
/* "PATH(more) is not readable and writable by uid U: mode, owner, group; uid U is [not ]in ...". */
void sc_accel_node_denied(const sc_accel_node *a, const char *more, char *msg, size_t size);

/* Reads the kernel log into text and adds kl.source and kl.readable (and kl.errors null with the
 * reason when unreadable); returns 0, or a negative errno with err filled. */
int sc_accel_read_kmsg(const sc_root *root, cJSON *kl, sc_buf *text, char *source, size_t size,
                       sc_error *err);

#endif
