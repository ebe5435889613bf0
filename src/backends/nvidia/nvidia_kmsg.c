/* What the NVIDIA kernel driver's NVRM lines mean: its own message strings (Xid reports, "GPU has
 * fallen off the bus", RmInitAdapter, the API mismatch, GSP RPC timeouts and heartbeat) and the Xid
 * numbers of NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors). */
#include <ctype.h>
#include <string.h>

#include "sc_kmsg.h"
#include "sc_nvidia.h"

#define ROW SC_KMSG_ROW

static const char *const nv_drivers[] = {"NVRM:", NULL};

static const sc_kmsg_pattern nv_rows[] = {
    ROW("Xid", NULL, "xid", WARN, FAULT, NULL), /* refined by its number below */
    ROW("fallen off the bus", NULL, "fallen-off-bus", ERROR, HARDWARE,
        "the GPU stopped answering on PCIe: power, thermal, riser or the GPU itself"),
    ROW("API mismatch", NULL, "api-mismatch", ERROR, MISMATCH,
        "the user-space driver and the kernel module are of different releases"),
    ROW("RmInitAdapter failed", NULL, "init-failed", ERROR, INIT,
        "the driver could not initialise the GPU (RmInitAdapter)"),
    ROW("rm_init_adapter failed", NULL, "init-failed", ERROR, INIT,
        "the driver could not initialise the GPU"),
    ROW("probe routine failed", NULL, "probe-failed", ERROR, INIT,
        "the driver's probe failed for a device: it does not drive it"),
    ROW("failed to initialize", NULL, "init-failed", ERROR, INIT,
        "the driver could not initialise the GPU"),
    ROW("heartbeat timed out", NULL, "gsp-heartbeat-timeout", WARN, HANG,
        "the GPU System Processor (GSP) firmware stopped sending its heartbeat"),
    ROW("Timeout", "GSP", "gsp-rpc-timeout", WARN, HANG,
        "a call into the GPU System Processor (GSP) firmware timed out"),
    {NULL, NULL, NULL, SC_SEV_INFO, SC_KMSG_FAULT, NULL},
};

/* Xids by number: what the catalogue says they mean, and how bad they are for the GPU. The NVLink
 * Xids above 100 (144-150) are the link's own units (SAW, RLW, TLW, TREX, NVLPW, NETIR, MSE). */
static const struct {
    int lo, hi;
    sc_kmsg_pattern row;
} xids[] = {
    {13, 13, ROW("Xid", NULL, "xid", WARN, FAULT, "graphics engine exception")},
    {31, 31, ROW("Xid", NULL, "xid", WARN, FAULT, "GPU memory page fault")},
    {43, 43, ROW("Xid", NULL, "xid", WARN, FAULT, "GPU stopped processing")},
    {45, 45, ROW("Xid", NULL, "xid", WARN, FAULT, "preemptive cleanup after earlier errors")},
    {48, 48, ROW("Xid", NULL, "xid", ERROR, HARDWARE, "double-bit ECC error")},
    {61, 61, ROW("Xid", NULL, "xid", WARN, HANG, "internal micro-controller breakpoint")},
    {62, 62, ROW("Xid", NULL, "xid", WARN, HANG, "internal micro-controller halt")},
    {63, 63, ROW("Xid", NULL, "xid", WARN, HARDWARE, "ECC page retirement or row remapping event")},
    {64, 64,
     ROW("Xid", NULL, "xid", ERROR, HARDWARE, "ECC page retirement or row remapping failure")},
    {74, 74, ROW("Xid", NULL, "xid", ERROR, HARDWARE, "NVLink error")},
    {79, 79, ROW("Xid", NULL, "xid", ERROR, HARDWARE, "GPU has fallen off the bus")},
    {92, 92, ROW("Xid", NULL, "xid", WARN, HARDWARE, "high single-bit ECC error rate")},
    {94, 94, ROW("Xid", NULL, "xid", WARN, HARDWARE, "contained ECC error")},
    {95, 95, ROW("Xid", NULL, "xid", ERROR, HARDWARE, "uncontained ECC error")},
    {109, 109, ROW("Xid", NULL, "xid", WARN, HANG, "context switch timeout")},
    {119, 119, ROW("Xid", NULL, "xid", WARN, HANG, "GSP RPC timeout")},
    {120, 120, ROW("Xid", NULL, "xid", WARN, HANG, "GSP error")},
    {140, 140, ROW("Xid", NULL, "xid", ERROR, HARDWARE, "unrecovered ECC error")},
    {144, 150, ROW("Xid", NULL, "xid", ERROR, HARDWARE, "NVLink error (link unit fault)")},
    {154, 154,
     ROW("Xid", NULL, "xid", ERROR, RESET, "GPU recovery action changed: reset or reboot needed")},
};

static const sc_kmsg_pattern *refine_xid(const sc_kmsg_pattern *row, const char *line, size_t n)
{
    if (strcmp(row->kind, "xid") != 0)
        return row;
    int xid = sc_nvidia_xid_of_line(line, n);
    for (size_t i = 0; i < sizeof xids / sizeof xids[0]; i++)
        if (xid >= xids[i].lo && xid <= xids[i].hi)
            return &xids[i].row;
    return row;
}

const sc_kmsg_table sc_nvidia_kmsg_table = {nv_drivers, nv_rows, refine_xid};

const char *sc_nvidia_xid_meaning(int xid)
{
    for (size_t i = 0; i < sizeof xids / sizeof xids[0]; i++)
        if (xid >= xids[i].lo && xid <= xids[i].hi)
            return xids[i].row.meaning;
    return NULL;
}
