/* driver.nvidia: NVIDIA GPUs behind the nvidia kernel module. Reads PCI, /sys/module/nvidia,
 * /proc/driver/nvidia (version and per-GPU information), the device nodes and the kernel log,
 * all through the root, so it runs the same live and on a --sysroot image. Passive. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "sc_accel.h"
#include "sc_host.h"
#include "sc_nvidia.h"
#include "sc_nvidia_pciids.h"
#include "sc_pci.h"
#include "sc_util.h"

#define MAX_GPUS 64 /* device nodes checked; more GPUs are listed but not all checked */

typedef struct {
    const sc_ctx *ctx;
    sc_result *res;
    sc_pci_list pci;
    sc_accel_census gpus; /* NVIDIA accelerators on PCI, bound to nvidia or not */
    bool module_loaded;   /* /sys/module/nvidia exists */
    char module_version[128];
    char proc_version[64];
    int minors[MAX_GPUS]; /* per device, -1 unknown */
    bool bound[MAX_GPUS]; /* per device: bound to nvidia (an unbound one has no node to check) */
    size_t ndev;
    const char *container;
} nv_state;

static bool is_nvidia(const sc_pci_device *d)
{
    return sc_pci_accelerator(d) == sc_backend_get(SC_BACKEND_NVIDIA);
}

/* facts.pci lists NVIDIA's accelerators only: the others belong to their vendors' probes. */
static bool count_nvidia(void *arg, const sc_pci_device *d)
{
    if (!is_nvidia(d))
        return false;
    /* the GPU binds to the main module; nvidia_uvm, nvidia_drm... bind to none */
    const char *main_module = sc_backend_get(SC_BACKEND_NVIDIA)->kernel_modules[0];
    sc_accel_census_add(arg, d, strcmp(d->driver, main_module) == 0);
    return true;
}

static void scan_pci(nv_state *st)
{
    sc_accel_scan_pci(st->ctx->root, st->res->facts, &st->pci, count_nvidia, &st->gpus);
}

/* facts.module: /sys/module/nvidia with initstate and version, and whether nvidia_uvm is in. */
static void read_module(nv_state *st)
{
    const sc_root *root = st->ctx->root;
    char line[128];
    st->module_loaded = sc_root_exists(root, "/sys/module/nvidia");
    if (!st->module_loaded) {
        sc_fact_null(st->res->facts, "module",
                     "/sys/module/nvidia absent: the module is not loaded");
        return;
    }
    cJSON *m = cJSON_AddObjectToObject(st->res->facts, "module");
    cJSON_AddStringToObject(m, "name", "nvidia");
    cJSON_AddStringToObject(
        m, "initstate",
        sc_root_read_line(root, "/sys/module/nvidia/initstate", line, sizeof line) == 0
            ? line
            : "builtin");
    if (sc_root_read_line(root, "/sys/module/nvidia/version", line, sizeof line) == 0 &&
        sc_nvidia_is_version(line)) {
        snprintf(st->module_version, sizeof st->module_version, "%s", line);
        cJSON_AddStringToObject(m, "version", line);
    } else {
        sc_fact_null(m, "version", "/sys/module/nvidia/version absent or not a version");
    }
    cJSON_AddBoolToObject(m, "uvm_loaded", sc_root_exists(root, "/sys/module/nvidia_uvm"));
}

/* facts.proc_version and facts.driver_version: /proc wins, the module's version stands in. */
static void read_proc_version(nv_state *st)
{
    cJSON *facts = st->res->facts;
    char *text = NULL;
    bool open = false;
    long n = sc_root_read(st->ctx->root, "/proc/driver/nvidia/version", &text, 64 * 1024);
    if (n < 0)
        sc_fact_null(facts, "proc_version", "/proc/driver/nvidia/version: %s",
                     sc_root_strerror((int)n));
    else if (sc_nvidia_parse_proc_version(text, st->proc_version, sizeof st->proc_version, &open) <
             0)
        sc_fact_null(facts, "proc_version", "/proc/driver/nvidia/version has no NVRM version line");
    else {
        cJSON_AddStringToObject(facts, "proc_version", st->proc_version);
        cJSON_AddBoolToObject(facts, "open_kernel_module", open);
    }
    free(text);
    const char *v = st->proc_version[0] ? st->proc_version : st->module_version;
    sc_fact_str(facts, "driver_version", v[0] ? v : NULL,
                "neither /proc/driver/nvidia/version nor /sys/module/nvidia/version is readable");
}

static void add_info_str(cJSON *o, const char *key, const char *v, const char *path)
{
    if (v[0])
        cJSON_AddStringToObject(o, key, v);
    else
        sc_fact_null(o, key, "no such line in %s", path);
}

/* pci_name, compute_capability and architecture from the PCI id, when the table knows it: they
 * name a GPU whose information file is missing (not bound, probe failed). */
static void add_pci_identity(cJSON *o, const sc_pci_device *d)
{
    const sc_nvidia_pciid *id = sc_nvidia_pciid_lookup(d->device);
    if (!id)
        return;
    cJSON_AddStringToObject(o, "pci_name", id->name);
    cJSON_AddStringToObject(o, "compute_capability", id->compute_cap);
    cJSON_AddStringToObject(o, "architecture", id->architecture);
}

/* One device: PCI identity plus what /proc/driver/nvidia/gpus/<addr>/information says. */
static cJSON *device_json(nv_state *st, const sc_pci_device *d, size_t index)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    char hex[16], path[160];
    cJSON_AddStringToObject(o, "pci_address", d->address);
    snprintf(hex, sizeof hex, "0x%04x", d->device);
    cJSON_AddStringToObject(o, "device_id", hex);
    sc_fact_str(o, "driver", d->driver[0] ? d->driver : NULL, "no driver bound");
    add_pci_identity(o, d);
    sc_fmt(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", d->address);
    char *text = NULL;
    long n = sc_root_read(st->ctx->root, path, &text, 64 * 1024);
    sc_nvidia_gpu_info info;
    int minor = -1;
    if (n < 0 || sc_nvidia_parse_gpu_info(text, &info) < 0) {
        static const char *const keys[] = {"model", "uuid", "vbios", "minor", "irq"};
        for (size_t i = 0; i < 5; i++)
            sc_fact_null(o, keys[i], "%s %s", path,
                         n < 0 ? sc_root_strerror((int)n) : "has no Key: value lines");
    } else {
        add_info_str(o, "model", info.model, path);
        add_info_str(o, "uuid", info.uuid, path);
        add_info_str(o, "vbios", info.vbios, path);
        add_info_str(o, "irq", info.irq, path);
        if (info.bus_type[0])
            cJSON_AddStringToObject(o, "bus_type", info.bus_type);
        if (info.excluded[0])
            cJSON_AddBoolToObject(o, "excluded", strcmp(info.excluded, "Yes") == 0);
        if ((minor = info.minor) >= 0)
            cJSON_AddNumberToObject(o, "minor", minor);
        else
            sc_fact_null(o, "minor", "no valid Device Minor line in %s", path);
    }
    free(text);
    if (index < MAX_GPUS) {
        st->minors[index] = minor;
        st->bound[index] =
            strcmp(d->driver, sc_backend_get(SC_BACKEND_NVIDIA)->kernel_modules[0]) == 0;
    }
    return o;
}

static void read_devices(nv_state *st)
{
    cJSON *arr = cJSON_AddArrayToObject(st->res->facts, "devices");
    for (size_t i = 0; i < st->pci.count && arr; i++) {
        const sc_pci_device *d = &st->pci.items[i];
        if (!is_nvidia(d))
            continue;
        cJSON_AddItemToArray(arr, device_json(st, d, st->ndev));
        st->ndev++;
    }
}

/* nvidia.driver-not-loaded: GPUs on PCI, but no module or no GPU bound to it. The remedy follows
 * the facts: a module that is not loaded is installed and loaded; a loaded module that took no GPU
 * lost it to another driver or failed its probe. When the kernel log already named why a GPU
 * failed (failed > 0, nvidia.device-failed), that is the verdict and this one stays silent. */
static bool driver_verdict(nv_state *st, size_t failed)
{
    if (st->module_loaded && st->gpus.bound > 0)
        return true;
    if (failed > 0)
        return false;
    const sc_pci_device *d = st->gpus.unbound ? st->gpus.unbound : st->gpus.first;
    const char *hint =
        !st->module_loaded
            ? "install the NVIDIA driver for this GPU and load it (sudo modprobe nvidia); if "
              "nouveau or vfio-pci holds the GPU, blacklist or unbind it; read dmesg for NVRM "
              "errors"
        : d->driver[0]
            ? "the nvidia module is loaded but another driver holds the GPU: unbind it from that "
              "driver (or blacklist nouveau; leave vfio-pci if the GPU is passed to a VM on "
              "purpose) and bind it to nvidia"
            : "the nvidia module is loaded but did not take the GPU: read dmesg | grep NVRM for "
              "its probe (an unsupported GPU for this driver release, or a failed init)";
    sc_finding(st->res, "nvidia.driver-not-loaded", SC_SEV_ERROR, hint,
               "%zu NVIDIA GPU(s) on PCI, e.g. %s (0x10de:0x%04x, driver %s), but %s",
               st->gpus.ours, d->address, d->device, d->driver[0] ? d->driver : "none",
               st->module_loaded ? "none is bound to the nvidia module"
                                 : "the nvidia module is not loaded (/sys/module/nvidia absent)");
    return false;
}

static void check_versions(nv_state *st)
{
    if (st->module_version[0] && st->proc_version[0] &&
        strcmp(st->module_version, st->proc_version) != 0)
        sc_finding(st->res, "nvidia.module-version-mismatch", SC_SEV_ERROR,
                   "reboot (or unload and reload the nvidia modules) so the loaded module is the "
                   "installed driver; then user space and kernel agree",
                   "/sys/module/nvidia/version says %s but /proc/driver/nvidia/version says %s",
                   st->module_version, st->proc_version);
}

/* ---- device nodes ---- */

typedef struct {
    sc_accel_node first_missing, first_denied;
    size_t missing, denied, gpu_present, gpu_total;
    bool ctl, uvm;
} node_tally;

static void tally_node(node_tally *t, const sc_accel_node *a, bool gpu)
{
    if (gpu) {
        t->gpu_total++;
        t->gpu_present += a->exists;
    }
    if (!a->exists && t->missing++ == 0)
        t->first_missing = *a;
    if (a->exists && !(a->readable && a->writable) && t->denied++ == 0)
        t->first_denied = *a;
}

static void permission_finding(nv_state *st, const node_tally *t)
{
    const sc_accel_node *a = &t->first_denied;
    char hint[256], msg[1024];
    if (!sc_accel_node_group_hint(a, hint, sizeof hint))
        snprintf(hint, sizeof hint,
                 "the NVIDIA nodes are normally 0666: check the driver's NVreg_DeviceFileMode/"
                 "NVreg_DeviceFileGID options and udev rules, or give group %s read-write access",
                 a->group);
    sc_accel_node_denied(a, t->denied > 1 ? " (and more)" : "", msg, sizeof msg);
    sc_finding(st->res, "nvidia.device-permission", SC_SEV_ERROR, hint, "%s", msg);
}

static void missing_finding(nv_state *st, const node_tally *t)
{
    bool uvm_only = t->missing == 1 && !t->uvm;
    sc_finding(st->res, "nvidia.device-node-missing", SC_SEV_ERROR,
               uvm_only ? "load the unified-memory module and create its node: sudo modprobe "
                          "nvidia-uvm, or run nvidia-modprobe -u -c=0 (CUDA needs /dev/nvidia-uvm)"
                        : "run nvidia-modprobe (or nvidia-smi once as root) to create the nodes, "
                          "and check that udev or the driver's device-file options create them",
               "%s does not exist (%zu of %zu NVIDIA device node(s) missing)",
               t->first_missing.path, t->missing, t->gpu_total + 2);
}

/* Checks one node into the tally and facts.device_nodes; returns whether it exists. */
static bool add_node(nv_state *st, cJSON *arr, node_tally *t, const char *path, bool gpu)
{
    sc_accel_node a;
    sc_accel_node_check(st->ctx->root, path, &a);
    tally_node(t, &a, gpu);
    cJSON_AddItemToArray(arr, sc_accel_node_json(st->ctx->root, &a, false));
    return a.exists;
}

/* /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidia<minor> of each GPU: facts and findings. */
static void check_device_nodes(nv_state *st)
{
    cJSON *arr = cJSON_AddArrayToObject(st->res->facts, "device_nodes");
    node_tally t = {0};
    t.ctl = add_node(st, arr, &t, "/dev/nvidiactl", false);
    t.uvm = add_node(st, arr, &t, "/dev/nvidia-uvm", false);
    for (size_t i = 0; i < st->ndev && i < MAX_GPUS; i++) {
        if (!st->bound[i])
            continue; /* its node is not made; driver_verdict or device-failed speak for it */
        char path[32];
        snprintf(path, sizeof path, "/dev/nvidia%d", st->minors[i] >= 0 ? st->minors[i] : (int)i);
        add_node(st, arr, &t, path, true);
    }
    if (st->container && !t.ctl && t.gpu_present == 0) {
        sc_finding(st->res, "nvidia.container-devices-not-mapped", SC_SEV_ERROR,
                   "start the container with --gpus all (docker, with nvidia-container-toolkit "
                   "installed) or --device nvidia.com/gpu=all (CDI); Kubernetes: the NVIDIA "
                   "device plugin",
                   "%zu NVIDIA GPU(s) in the host's sysfs but no /dev/nvidiactl and no "
                   "/dev/nvidia<N> in this %s container",
                   st->ndev, st->container);
        return;
    }
    bool subset = st->container && t.ctl && t.uvm && t.gpu_present > 0;
    cJSON_AddNumberToObject(st->res->facts, "mapped_gpus", (double)t.gpu_present);
    if (t.missing && !subset)
        missing_finding(st, &t);
    if (t.denied)
        permission_finding(st, &t);
}

/* ---- kernel log ---- */

static void kernel_log_finding(nv_state *st, const sc_nvidia_kmsg_result *r, const char *source)
{
    const sc_kmsg_match *m = &r->scan.first[0];
    const char *meaning = m->pattern->meaning;
    sc_finding(st->res, "nvidia.kernel-log-errors", SC_SEV_WARN,
               "read the driver's messages (dmesg | grep NVRM) and look the Xid up in NVIDIA's "
               "Xid catalogue; Xid 79 (fallen off the bus) and ECC Xids point at hardware, "
               "power or PCIe trouble: drain the node and reset or replace the GPU",
               "%zu NVRM error line(s) in %s (%zu Xid%s%s%s), first (%s%s%s): %s", r->scan.total,
               source, r->xids, r->xid_list[0] ? ": " : "", r->xid_list,
               r->off_bus ? ", GPU fallen off the bus" : "", m->kind, meaning ? ", " : "",
               meaning ? meaning : "", m->line);
    for (size_t i = 0; i < r->scan.kept; i++)
        if (strcmp(r->scan.first[i].kind, "api-mismatch") == 0) {
            sc_finding(st->res, "nvidia.module-version-mismatch", SC_SEV_ERROR,
                       "reboot, or reinstall so the user-space driver (libcuda, nvidia-smi) and "
                       "the kernel module come from the same driver release",
                       "the kernel log reports a user-space/kernel mismatch: %s",
                       r->scan.first[i].line);
            break;
        }
}

static void add_log_facts(cJSON *kl, const sc_nvidia_kmsg_result *r)
{
    sc_accel_kmsg_facts(kl, &r->scan);
    cJSON_AddNumberToObject(kl, "xid_lines", (double)r->xids);
    cJSON *xids = cJSON_AddArrayToObject(kl, "xids");
    char list[sizeof r->xid_list];
    snprintf(list, sizeof list, "%s", r->xid_list);
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t && xids; t = strtok_r(NULL, ",", &save))
        cJSON_AddItemToArray(xids, cJSON_CreateNumber(atoi(t)));
    cJSON *e;
    size_t i = 0;
    cJSON_ArrayForEach (e, cJSON_GetObjectItem(kl, "errors")) {
        if (i < SC_KMSG_KEEP && r->xid[i] >= 0)
            cJSON_AddNumberToObject(e, "xid", r->xid[i]);
        i++;
    }
}

/* What to do about a GPU the kernel says failed, by what kind of failure it was: a GPU that fell
 * off the bus needs hands on the hardware, never a driver reinstall. */
static const char *device_remedy(sc_kmsg_class cls)
{
    switch (cls) {
    case SC_KMSG_HARDWARE:
        return "a hardware fault, not a driver problem: drain the node, reset the GPU "
               "(nvidia-smi -r) or reboot; if it happens again, reseat the GPU and its power "
               "cables, check the riser or slot and the PSU, or replace the GPU";
    case SC_KMSG_RESET:
        return "the GPU needs a reset: drain it, then nvidia-smi -r -i <index> or reboot the node";
    case SC_KMSG_INIT:
        return "the driver could not bring the GPU up: read the NVRM lines before this one (GSP "
               "firmware, PCIe), use a driver release that supports this GPU (the open kernel "
               "module for GSP-only GPUs), reboot; if only this GPU fails, reseat or replace it";
    default: return "read the NVRM lines around this one (dmesg | grep NVRM)";
    }
}

/* nvidia.device-failed: each GPU the kernel log pins an error to, with the kernel's reason. A GPU
 * gone from PCI counts too (it fell off the bus); another vendor's address does not. */
static size_t device_verdicts(nv_state *st, const sc_nvidia_kmsg_result *r)
{
    size_t failed = 0;
    for (size_t i = 0; i < r->scan.ndevices; i++) {
        const sc_kmsg_device *d = &r->scan.devices[i];
        const sc_pci_device *p = sc_pci_find(&st->pci, d->pci);
        if (!d->has_cause || d->cause.pattern->cls == SC_KMSG_MISMATCH || (p && !is_nvidia(p)))
            continue;
        const sc_kmsg_pattern *why = d->cause.pattern;
        sc_finding(st->res, "nvidia.device-failed", SC_SEV_ERROR, device_remedy(why->cls),
                   "GPU %s%s: %s (%s): %s", d->pci, p ? "" : " (no longer on PCI)",
                   why->meaning ? why->meaning : why->kind, why->kind, d->cause.line);
        failed++;
    }
    return failed;
}

/* Scans the kernel log into *out (the caller frees it); NULL when it is not readable. */
static sc_nvidia_kmsg_result *scan_kernel_log(nv_state *st)
{
    cJSON *kl = cJSON_AddObjectToObject(st->res->facts, "kernel_log");
    sc_buf text;
    sc_buf_init(&text);
    char source[64] = "";
    sc_error err = {0};
    sc_nvidia_kmsg_result *r = NULL;
    if (sc_accel_read_kmsg(st->ctx->root, kl, &text, source, sizeof source, &err) < 0) {
        sc_finding(st->res, "nvidia.kernel-log-unreadable", SC_SEV_INFO,
                   "run as root (or with CAP_SYSLOG) to let stackcheck scan for Xid errors",
                   "kernel log not readable: %s", err.message);
    } else if ((r = calloc(1, sizeof *r)) != NULL) {
        sc_nvidia_kmsg_scan(text.data, text.len, r);
        add_log_facts(kl, r);
        sc_accel_pin_kernel_log(cJSON_GetObjectItem(st->res->facts, "devices"), "pci_address",
                                &r->scan);
        if (r->scan.total)
            kernel_log_finding(st, r, source);
    }
    sc_buf_free(&text);
    return r;
}

/* A Tegra/Jetson GPU (no PCI function): its count, the module and the driver's version; the
 * PCI-based checks (per-GPU files, nodes by minor) do not apply to it. */
static void platform_gpu_facts(nv_state *st, int gpus)
{
    cJSON_AddNumberToObject(st->res->facts, "platform_gpus", gpus);
    read_module(st);
    read_proc_version(st);
    sc_fact_null(st->res->facts, "devices", "a platform (Tegra) GPU is not on PCI");
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    nv_state st = {.ctx = ctx, .res = res};
    scan_pci(&st);
    if (st.gpus.ours == 0) {
        sc_error err = {0};
        int platform = sc_nvidia_platform_gpus(ctx->root, &err);
        if (platform > 0)
            platform_gpu_facts(&st, platform);
        else /* driver.devices owns driver.no-accelerator: one verdict for "nothing here" */
            sc_result_skip(res, true, "no NVIDIA GPU on PCI");
        sc_pci_list_free(&st.pci);
        return;
    }
    st.container = sc_container_kind(ctx->root);
    sc_fact_str(res->facts, "container", st.container, "no container detected");
    read_module(&st);
    read_proc_version(&st);
    read_devices(&st);
    check_versions(&st);
    sc_nvidia_kmsg_result *log = scan_kernel_log(&st);
    size_t failed = log ? device_verdicts(&st, log) : 0;
    if (driver_verdict(&st, failed))
        check_device_nodes(&st);
    else
        sc_fact_null(res->facts, "device_nodes", "the nvidia module is not loaded or not bound");
    free(log);
    sc_pci_list_free(&st.pci);
}

const sc_probe sc_probe_driver_nvidia = {
    .id = "driver.nvidia",
    .layer = SC_LAYER_DRIVER,
    .backend = SC_BACKEND_NVIDIA,
    .isolated = false,
    .active = false,
    .summary = "NVIDIA GPUs: PCI, nvidia kernel module and version, per-GPU information, device "
               "nodes, Xid errors in the kernel log",
    .run = run,
};
