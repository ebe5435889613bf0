/* The text the NVIDIA kernel driver publishes, parsed from buffers (kept apart from I/O so fuzz
 * targets drive them): /proc/driver/nvidia/version, /proc/driver/nvidia/gpus/<pci>/information,
 * and the driver's kernel-log lines (Xid errors, a GPU fallen off the bus, API mismatches). */
#ifndef SC_NVIDIA_H
#define SC_NVIDIA_H

#include <stdbool.h>
#include <stddef.h>

#include "sc_kmsg.h"
#include "sc_sysroot.h"

/* Parses the "NVRM version:" line of /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX
 * x86_64 Kernel Module  550.127.05  Tue Oct  8 ..." or "... Open Kernel Module for x86_64
 * 550.127.05  Release Build ...") into the version "550.127.05" and, when open is not NULL,
 * whether it is the open kernel module. Returns 0, or -EINVAL when no such line or version. */
int sc_nvidia_parse_proc_version(const char *text, char *buf, size_t size, bool *open);

/* True when s is a driver version: digits and dots, at least one dot, at most 31 characters. */
bool sc_nvidia_is_version(const char *s);

/* What /proc/driver/nvidia/gpus/<pci>/information says about one GPU; "" when a line is absent. */
typedef struct {
    char model[128];       /* "NVIDIA H200" */
    char irq[16];          /* "151" */
    char uuid[64];         /* "GPU-2c1f3a5e-..." */
    char vbios[32];        /* "96.00.9F.00.04" */
    char bus_type[16];     /* "PCIe" */
    char bus_location[32]; /* "0000:18:00.0" */
    int minor;             /* Device Minor, -1 when absent or malformed */
    char excluded[8];      /* "No" */
    int lines;             /* "Key: value" lines read */
} sc_nvidia_gpu_info;

/* Parses an information file's "Key: value" lines (values trimmed, printable ASCII only); unknown
 * keys are ignored. Returns 0, or -EINVAL when not one line has the Key: value form. */
int sc_nvidia_parse_gpu_info(const char *text, sc_nvidia_gpu_info *out);

/* The NVRM lines that report a problem (sc_nvidia_kmsg_table), with the Xid numbers counted. */
typedef struct {
    sc_kmsg_result scan;   /* the matches, pinned to devices */
    int xid[SC_KMSG_KEEP]; /* the Xid number of scan.first[i], -1 for other kinds */
    size_t xids;           /* Xid lines */
    size_t off_bus;        /* "fallen off the bus" lines (Xid 79 or the plain message) */
    char xid_list[64];     /* distinct Xid numbers seen, "79,48" (cut to fit) */
} sc_nvidia_kmsg_result;

/* Scans len bytes of kernel-log text (kmsg records or syslog lines; NUL bytes allowed) for the
 * NVRM lines that report a problem. */
void sc_nvidia_kmsg_scan(const char *buf, size_t len, sc_nvidia_kmsg_result *out);
/* The Xid number of "NVRM: Xid (PCI:0000:18:00): 79, ..." in line[0..n), -1 when none. */
int sc_nvidia_xid_of_line(const char *line, size_t n);

/* Platform (Tegra/Jetson) GPUs under root: the platform devices named like a GPU, counted only
 * where an NVIDIA driver is there (/proc/driver/nvidia, /sys/module/nvgpu or /dev/nvhost-*); 0
 * when none, a negative errno with err filled when a directory cannot be listed (tegra.c). */
int sc_nvidia_platform_gpus(const sc_root *root, sc_error *err);

/* Known Xid numbers in words ("79" -> "GPU has fallen off the bus"), NULL when unknown
 * (nvidia_kmsg.c, beside the table). */
const char *sc_nvidia_xid_meaning(int xid);

#endif
