/* driver.amd: AMD GPUs and Hygon DCUs behind the KFD. Reads PCI, the kernel module, the KFD
 * topology, the device nodes, DRM and the kernel log, all through the root, so it runs the same on
 * the live system and on a --sysroot image. Passive: it never opens a compute device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "sc_accel.h"
#include "sc_amd_pciids.h"
#include "sc_backend.h"
#include "sc_drm.h"
#include "sc_host.h"
#include "sc_kfd.h"
#include "sc_kmsg.h"
#include "sc_pci.h"
#include "sc_util.h"

typedef struct {
    const sc_backend_desc *desc; /* its modules, kernel-log words and PCI vendors */
    const sc_ctx *ctx;
    sc_result *res;
    sc_pci_list pci;
    sc_kfd_topology kfd;
    sc_accel_census gpus; /* AMD/Hygon accelerators on PCI, bound to a KFD driver or not */
    size_t gpu_nodes;     /* KFD nodes with SIMDs */
    char others[256];     /* other vendors' accelerators, for the not-applicable reason */
    char module[64];      /* loaded module name, "" when none */
    const char *container;
} drv_state;

/* Counts one accelerator into the state: ours, or another vendor's for the skip reason. facts.pci
 * lists them all: the not-applicable verdict cites them. */
static bool note_accelerator(void *arg, const sc_pci_device *d)
{
    drv_state *st = arg;
    if (sc_pci_accelerator(d) != st->desc) {
        const char *label = sc_backend_vendor_label(d->vendor);
        size_t len = strlen(st->others);
        if (len + 48 < sizeof st->others)
            snprintf(st->others + len, sizeof st->others - len, "%s%s %s", len ? ", " : "",
                     label ? label : "?", d->address);
        return true;
    }
    sc_accel_census_add(&st->gpus, d, sc_backend_list_has(st->desc->kernel_modules, d->driver));
    return true;
}

static void scan_pci(drv_state *st)
{
    sc_accel_scan_pci(st->ctx->root, st->res->facts, &st->pci, note_accelerator, st);
}

/* facts.module: the first of the descriptor's modules (amdgpu, hydcu, hycu) in /sys/module. */
static void read_module(drv_state *st)
{
    const sc_root *root = st->ctx->root;
    const char *const *modules = st->desc->kernel_modules;
    char path[128], line[128];
    for (size_t i = 0; modules[i]; i++) {
        sc_fmt(path, sizeof path, "/sys/module/%s", modules[i]);
        if (!sc_root_exists(root, path))
            continue;
        snprintf(st->module, sizeof st->module, "%s", modules[i]);
        cJSON *m = cJSON_AddObjectToObject(st->res->facts, "module");
        cJSON_AddStringToObject(m, "name", st->module);
        sc_fmt(path, sizeof path, "/sys/module/%s/initstate", st->module);
        /* a built-in driver has /sys/module/NAME but no initstate */
        cJSON_AddStringToObject(m, "initstate",
                                sc_root_read_line(root, path, line, sizeof line) == 0 ? line
                                                                                      : "builtin");
        sc_fmt(path, sizeof path, "/sys/module/%s/version", st->module);
        if (sc_root_read_line(root, path, line, sizeof line) == 0 && line[0])
            cJSON_AddStringToObject(m, "version", line);
        else
            sc_fact_null(m, "version",
                         "%s absent: an in-kernel (upstream) driver has no version; "
                         "the DKMS driver has one",
                         path);
        return;
    }
    sc_buf names;
    sc_buf_init(&names);
    for (size_t i = 0; modules[i]; i++)
        sc_buf_printf(&names, "%s%s", i ? ", " : "", modules[i]);
    sc_fact_null(st->res->facts, "module", "none of %s in /sys/module",
                 names.data ? names.data : "");
    sc_buf_free(&names);
}

/* Adds props[key] as a number, or null with the reason. */
static void add_prop(cJSON *o, const sc_kfd_props *props, const char *key, const char *name)
{
    uint64_t v;
    if (sc_kfd_get(props, key, &v))
        cJSON_AddNumberToObject(o, name, (double)v);
    else
        sc_fact_null(o, name, "no %s in the node's properties", key);
}

/* chip, family, products and apu from the PCI id table, when it knows the device. */
static void add_identity(cJSON *o, const sc_amd_pciid *id)
{
    if (!id)
        return;
    cJSON_AddStringToObject(o, "chip", id->chip);
    cJSON_AddStringToObject(o, "family", id->family);
    cJSON_AddStringToObject(o, "products", id->products);
    cJSON_AddBoolToObject(o, "apu", id->apu);
}

/* gfx_target from the KFD's gfx_target_version; kernels before about 5.6 have none, and then the
 * PCI id tells it (gfx_target_source says which). */
static void add_gfx(cJSON *o, const sc_kfd_props *p, const sc_amd_pciid *id)
{
    uint64_t v;
    char gfx[32];
    if (!sc_kfd_get(p, "gfx_target_version", &v)) {
        if (id) {
            cJSON_AddStringToObject(o, "gfx_target", id->gfx);
            cJSON_AddStringToObject(o, "gfx_target_source", "pci_id");
        } else {
            sc_fact_null(o, "gfx_target",
                         "no gfx_target_version in the node's properties and the PCI id is not in "
                         "stackcheck's table");
        }
        sc_fact_null(o, "gfx_target_version", "not in the node's properties");
        return;
    }
    cJSON_AddNumberToObject(o, "gfx_target_version", (double)v);
    if (sc_kfd_gfx_name(v, gfx, sizeof gfx))
        cJSON_AddStringToObject(o, "gfx_target", gfx);
    else
        sc_fact_null(o, "gfx_target", "gfx_target_version %llu names no target",
                     (unsigned long long)v);
}

static void add_compute_units(cJSON *o, const sc_kfd_props *p)
{
    uint64_t simd, per_cu;
    if (sc_kfd_get(p, "simd_count", &simd) && sc_kfd_get(p, "simd_per_cu", &per_cu) && per_cu > 0)
        cJSON_AddNumberToObject(o, "compute_units", (double)(simd / per_cu));
    else
        sc_fact_null(o, "compute_units", "simd_count or simd_per_cu missing or zero");
}

/* pci_address from domain + location_id; returns the PCI device there, if scanned. */
static const sc_pci_device *add_pci_address(const drv_state *st, cJSON *o, const sc_kfd_props *p)
{
    uint64_t domain = 0, loc;
    char addr[32];
    if (!sc_kfd_get(p, "location_id", &loc) ||
        !sc_kfd_pci_address(sc_kfd_get(p, "domain", &domain) ? domain : 0, loc, addr,
                            sizeof addr)) {
        sc_fact_null(o, "pci_address", "no usable location_id in the node's properties");
        return NULL;
    }
    cJSON_AddStringToObject(o, "pci_address", addr);
    return sc_pci_find(&st->pci, addr);
}

/* vendor, vendor_id, device_id: the PCI function's ids win over the KFD's copy. Returns the
 * device's row in the PCI id table, or NULL. */
static const sc_amd_pciid *add_vendor(cJSON *o, const sc_kfd_props *p, const sc_pci_device *pci)
{
    uint64_t vendor = 0, device = 0;
    bool have_vendor = sc_kfd_get(p, "vendor_id", &vendor);
    bool have_device = sc_kfd_get(p, "device_id", &device);
    if (pci && pci->has_ids) {
        vendor = pci->vendor, device = pci->device;
        have_vendor = have_device = true;
    }
    const char *name =
        have_vendor && vendor <= 0xffff ? sc_pci_vendor_name((unsigned)vendor) : NULL;
    sc_fact_str(o, "vendor", name, "vendor id unknown or not AMD/Hygon");
    if (have_vendor)
        sc_pci_add_hex_id(o, "vendor_id", vendor);
    else
        sc_fact_null(o, "vendor_id", "no vendor_id in the node's properties");
    if (have_device)
        sc_pci_add_hex_id(o, "device_id", device);
    else
        sc_fact_null(o, "device_id", "no device_id in the node's properties");
    bool ids = have_vendor && have_device && vendor <= 0xffff && device <= 0xffff;
    return ids ? sc_amd_pciid_lookup((unsigned)vendor, (unsigned)device) : NULL;
}

static void add_render_node(cJSON *o, const sc_kfd_props *p)
{
    uint64_t minor;
    char path[64];
    if (sc_kfd_get(p, "drm_render_minor", &minor) && minor > 0 && minor < 1u << 20) {
        snprintf(path, sizeof path, "/dev/dri/renderD%llu", (unsigned long long)minor);
        cJSON_AddStringToObject(o, "render_node", path);
    } else {
        sc_fact_null(o, "render_node", "no drm_render_minor in the node's properties");
    }
}

static cJSON *device_json(const drv_state *st, const sc_kfd_node *n)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    const sc_kfd_props *p = &n->props;
    cJSON_AddNumberToObject(o, "node", n->index);
    if (n->has_gpu_id)
        cJSON_AddNumberToObject(o, "gpu_id", (double)n->gpu_id);
    else
        sc_fact_null(o, "gpu_id", "gpu_id not readable");
    sc_fact_str(o, "name", n->name[0] ? n->name : NULL, "name not readable");
    const sc_pci_device *pci = add_pci_address(st, o, p);
    const sc_amd_pciid *id = add_vendor(o, p, pci);
    add_gfx(o, p, id);
    add_identity(o, id);
    add_compute_units(o, p);
    add_prop(o, p, "wave_front_size", "wavefront_size");
    if (n->vram_known)
        cJSON_AddNumberToObject(o, "vram_bytes", (double)n->vram_bytes);
    else
        sc_fact_null(o, "vram_bytes", "no readable mem_banks");
    add_render_node(o, p);
    add_prop(o, p, "fw_version", "fw_version");
    uint64_t xcc;
    if (sc_kfd_get(p, "num_xcc", &xcc))
        cJSON_AddNumberToObject(o, "num_xcc", (double)xcc);
    if (p->bad_lines)
        cJSON_AddNumberToObject(o, "malformed_property_lines", (double)p->bad_lines);
    return o;
}

/* Nodes with CPU cores: an APU's combined node (cores and SIMDs, from the CRAT) counts as a CPU
 * node and as a GPU node. */
static size_t cpu_nodes(const sc_kfd_topology *t)
{
    size_t n = 0;
    uint64_t cores;
    for (size_t i = 0; i < t->count; i++)
        n += !sc_kfd_node_is_gpu(&t->nodes[i]) ||
             (sc_kfd_get(&t->nodes[i].props, "cpu_cores_count", &cores) && cores > 0);
    return n;
}

static void read_kfd(drv_state *st)
{
    sc_error err = {0};
    cJSON *facts = st->res->facts;
    cJSON *kfd = cJSON_AddObjectToObject(facts, "kfd");
    cJSON *devices = cJSON_AddArrayToObject(facts, "devices");
    if (sc_kfd_read(st->ctx->root, &st->kfd, &err) < 0) {
        /* unreadable is not absent: no verdict on the driver can be drawn from it */
        sc_fact_null(facts, "kfd", "%s", err.message);
        sc_result_error(st->res, "cannot read the KFD topology: %s", err.message);
        return;
    }
    cJSON_AddBoolToObject(kfd, "present", st->kfd.present);
    for (size_t i = 0; i < st->kfd.count; i++) {
        if (!sc_kfd_node_is_gpu(&st->kfd.nodes[i]))
            continue;
        st->gpu_nodes++;
        cJSON_AddItemToArray(devices, device_json(st, &st->kfd.nodes[i]));
    }
    cJSON_AddNumberToObject(kfd, "nodes", (double)st->kfd.count);
    cJSON_AddNumberToObject(kfd, "gpu_nodes", (double)st->gpu_nodes);
    cJSON_AddNumberToObject(kfd, "cpu_nodes", (double)cpu_nodes(&st->kfd));
}

/* No AMD/Hygon accelerator at all: not applicable, naming another vendor's accelerators when there
 * are some. Nothing at all is driver.devices' verdict (driver.no-accelerator), not this one's. */
static void no_device_verdict(drv_state *st)
{
    char vendors[128];
    sc_backend_vendor_labels(st->desc, " or ", vendors, sizeof vendors);
    if (st->others[0])
        sc_result_skip(st->res, true, "no %s accelerator (found: %s)", vendors, st->others);
    else
        sc_result_skip(st->res, true,
                       "no %s accelerator on PCI and no GPU in the KFD topology (%s)", vendors,
                       st->kfd.present ? "it has only CPU nodes" : "there is none");
}

/* True when the KFD said it skipped a device because the PCIe path rejects atomics. */
static bool kfd_skipped(const sc_kmsg_result *log)
{
    for (size_t i = 0; log && i < log->kept; i++)
        if (strcmp(log->first[i].kind, "device-skipped") == 0)
            return true;
    return false;
}

/* The device is on PCI but the KFD has no GPU for it: which part of the driver is missing. */
static void driver_verdict(drv_state *st, const sc_kmsg_result *log)
{
    const sc_pci_device *d = st->gpus.unbound ? st->gpus.unbound : st->gpus.first;
    char dev[160];
    snprintf(dev, sizeof dev, "%s (0x%04x:0x%04x, driver %s)", d->address, d->vendor, d->device,
             d->driver[0] ? d->driver : "none");
    if (!st->module[0] || st->gpus.bound == 0)
        sc_finding(
            st->res, "amd.driver-not-loaded", SC_SEV_ERROR,
            st->module[0]
                ? "the driver is loaded but took no GPU: read its probe in the kernel log (dmesg "
                  "| grep -iE 'amdgpu|kfd'); if another driver (radeon, vfio-pci) holds the GPU, "
                  "unbind it or blacklist radeon"
                : "load the kernel driver: sudo modprobe amdgpu (ROCm: install amdgpu-dkms; "
                  "Hygon: the hydcu driver package), then check dmesg for amdgpu errors",
            "%zu AMD/Hygon accelerator(s) on PCI, e.g. %s, but %s", st->gpus.ours, dev,
            st->module[0] ? "none is bound to it" : "no amdgpu/hydcu module is loaded");
    else if (!st->kfd.present)
        sc_finding(
            st->res, "amd.driver-not-loaded", SC_SEV_ERROR,
            "use a kernel with CONFIG_HSA_AMD (KFD) or the ROCm DKMS driver, and check dmesg for "
            "kfd errors",
            "%s is loaded and bound to %s, but there is no KFD topology "
            "(/sys/class/kfd/kfd/topology)",
            st->module, dev);
    else
        sc_finding(st->res, "amd.kfd-no-gpu", SC_SEV_ERROR,
                   kfd_skipped(log)
                       ? "the KFD skipped the GPU because the PCIe path to it does not pass "
                         "atomic operations: move it to a slot wired to the CPU (no switch "
                         "without atomics between), or enable PCIe atomics in the firmware setup"
                       : "the GPU is not supported for compute by this driver, or its "
                         "initialisation failed: check dmesg for amdgpu/kfd errors and the "
                         "ROCm/DTK support list",
                   "KFD topology has %zu node(s), none with SIMDs (CPU only), while PCI shows %s",
                   st->kfd.count, dev);
}

/* GPUs present in the KFD: more bound accelerators than KFD GPUs is a warning when no device
 * verdict named the missing ones. */
static void coverage_checks(drv_state *st, size_t failed)
{
    if (st->gpus.bound > st->gpu_nodes && failed == 0)
        sc_finding(
            st->res, "amd.kfd-fewer-gpus", SC_SEV_WARN,
            "check dmesg for amdgpu/kfd errors on the missing devices and the ROCm/DTK support "
            "list",
            "%zu accelerator(s) bound to the driver on PCI but only %zu GPU node(s) in the KFD "
            "topology",
            st->gpus.bound, st->gpu_nodes);
}

/* The hint and message for a node the effective user cannot open read-write: who owns it, and the
 * way in. */
static void permission_text(const sc_accel_node *a, size_t count, char *hint, size_t hint_size,
                            char *msg, size_t msg_size)
{
    char more[48] = "";
    if (!sc_accel_node_group_hint(a, hint, hint_size))
        snprintf(hint, hint_size,
                 "give group %s read-write access to the node (a udev rule with "
                 "GROUP=\"%s\", MODE=\"0660\"), or ask an administrator",
                 a->group, a->group);
    if (count > 1)
        snprintf(more, sizeof more, " (and %zu more)", count - 1);
    sc_accel_node_denied(a, more, msg, msg_size);
}

static void missing_node_findings(drv_state *st, const sc_accel_node *kfd,
                                  const sc_accel_node *render, size_t render_missing)
{
    bool in_container = st->container != NULL;
    char hint[256];
    snprintf(hint, sizeof hint, "%s",
             in_container ? "start the container with --device=/dev/kfd --device=/dev/dri "
                            "--group-add video --group-add render"
                          : "check that amdgpu initialised (dmesg) and that udev created the node");
    if (!kfd->exists)
        sc_finding(st->res, "amd.kfd-missing", SC_SEV_ERROR, hint,
                   "%zu GPU node(s) in the KFD topology but /dev/kfd does not exist%s",
                   st->gpu_nodes, in_container ? " in this container" : "");
    if (render_missing && in_container && render_missing < st->gpu_nodes)
        sc_finding(
            st->res, "amd.container-gpu-subset", SC_SEV_INFO,
            "pass more --device=/dev/dri/renderD<N> options if this container should use more GPUs",
            "this %s container has the render nodes of %zu of the %zu GPU(s) in the host's "
            "sysfs (first absent: %s)",
            st->container, st->gpu_nodes - render_missing, st->gpu_nodes, render->path);
    else if (render_missing)
        sc_finding(st->res, "amd.render-node-missing", SC_SEV_ERROR, hint,
                   "%s does not exist (%zu of %zu render node(s) missing)", render->path,
                   render_missing, st->gpu_nodes);
}

/* The render nodes of the KFD GPUs: how many exist, are missing or are denied, and the first
 * missing and denied one as evidence. */
typedef struct {
    sc_accel_node missing, denied;
    size_t n_missing, n_denied, n_present;
} render_survey;

static void survey_render_nodes(drv_state *st, cJSON *arr, render_survey *s)
{
    sc_accel_node render;
    const cJSON *dev;
    cJSON_ArrayForEach (dev, cJSON_GetObjectItem(st->res->facts, "devices")) {
        const char *path = cJSON_GetStringValue(cJSON_GetObjectItem(dev, "render_node"));
        if (!path)
            continue;
        sc_accel_node_check(st->ctx->root, path, &render);
        cJSON_AddItemToArray(arr, sc_accel_node_json(st->ctx->root, &render, true));
        s->n_present += render.exists;
        if (!render.exists && s->n_missing++ == 0)
            s->missing = render;
        if (render.exists && !(render.readable && render.writable) && s->n_denied++ == 0)
            s->denied = render;
    }
}

/* Checks /dev/kfd and the render node of every KFD GPU; facts.device_nodes and the findings. */
static void check_device_nodes(drv_state *st)
{
    cJSON *arr = cJSON_AddArrayToObject(st->res->facts, "device_nodes");
    sc_accel_node kfd;
    render_survey s = {0};
    sc_accel_node_check(st->ctx->root, "/dev/kfd", &kfd);
    cJSON_AddItemToArray(arr, sc_accel_node_json(st->ctx->root, &kfd, true));
    survey_render_nodes(st, arr, &s);
    if (st->container && !kfd.exists && s.n_present == 0) {
        sc_finding(
            st->res, "amd.container-devices-not-mapped", SC_SEV_ERROR,
            "start the container with --device=/dev/kfd --device=/dev/dri --group-add video "
            "--group-add render (Kubernetes: the AMD GPU device plugin)",
            "%zu GPU(s) in the host's sysfs but neither /dev/kfd nor any render node in this %s "
            "container",
            st->gpu_nodes, st->container);
        return;
    }
    missing_node_findings(st, &kfd, &s.missing, s.n_missing);
    char hint[256], msg[1024];
    if (kfd.exists && !(kfd.readable && kfd.writable)) {
        permission_text(&kfd, 1, hint, sizeof hint, msg, sizeof msg);
        sc_finding(st->res, "amd.kfd-permission", SC_SEV_ERROR, hint, "%s", msg);
    }
    if (s.n_denied) {
        permission_text(&s.denied, s.n_denied, hint, sizeof hint, msg, sizeof msg);
        sc_finding(st->res, "amd.render-permission", SC_SEV_ERROR, hint, "%s", msg);
    }
}

/* Reads and scans the kernel log; the scan (the caller frees it), or NULL when the log is not
 * readable (said) or memory ran out. Its lines are pinned to facts.devices and facts.pci. */
static sc_kmsg_result *scan_kernel_log(drv_state *st)
{
    cJSON *kl = cJSON_AddObjectToObject(st->res->facts, "kernel_log");
    char source[64];
    sc_buf text;
    sc_buf_init(&text);
    sc_error err = {0};
    sc_kmsg_result *r = NULL;
    if (sc_accel_read_kmsg(st->ctx->root, kl, &text, source, sizeof source, &err) < 0)
        sc_finding(st->res, "amd.kernel-log-unreadable", SC_SEV_INFO,
                   "run as root (or with CAP_SYSLOG) to let stackcheck scan the kernel log",
                   "kernel log not readable: %s", err.message);
    else if ((r = calloc(1, sizeof *r)) != NULL)
        sc_kmsg_scan_table(text.data, text.len, &sc_amd_kmsg_table, r, NULL, NULL);
    sc_buf_free(&text);
    if (!r)
        return NULL;
    sc_accel_kmsg_facts(kl, r);
    sc_accel_pin_kernel_log(cJSON_GetObjectItem(st->res->facts, "devices"), "pci_address", r);
    sc_accel_pin_kernel_log(cJSON_GetObjectItem(st->res->facts, "pci"), "address", r);
    if (r->total)
        sc_finding(
            st->res, "amd.kernel-log-errors", SC_SEV_WARN,
            "read the driver's messages (dmesg | grep -iE 'amdgpu|kfd|hydcu'): ring timeouts and "
            "resets point at a hung kernel, firmware or hardware; firmware failures at a missing "
            "firmware package",
            "%zu driver error line(s) in %s (%s), first: %s", r->total, source, r->first[0].kind,
            r->first[0].line);
    return r;
}

/* What to do about a GPU the kernel says failed, by the kind of failure. */
static const char *device_remedy(sc_kmsg_class cls)
{
    switch (cls) {
    case SC_KMSG_FIRMWARE:
        return "install the firmware the line names (the linux-firmware package, or the "
               "amdgpu-dkms-firmware of the same ROCm/DTK release as the driver), rebuild the "
               "initramfs (update-initramfs -u / dracut -f) and reboot";
    case SC_KMSG_INIT:
        return "the driver could not bring the GPU up: update the driver and its firmware "
               "together (one ROCm/DTK release), reboot; if only this GPU fails, reseat or "
               "replace it, or its bridge and riser";
    case SC_KMSG_HARDWARE:
        return "a hardware fault: drain the node and reboot; if it happens again, reseat the "
               "GPU and its power, check the riser or slot, or replace the GPU";
    default: return "read the kernel's messages around this line (dmesg | grep -iE 'amdgpu|kfd')";
    }
}

/* True when the KFD has a GPU node at address. */
static bool in_kfd(const drv_state *st, const char *address)
{
    const cJSON *dev;
    cJSON_ArrayForEach (dev, cJSON_GetObjectItem(st->res->facts, "devices"))
        if (strcmp(sc_json_str(dev, "pci_address") ?: "", address) == 0)
            return true;
    return false;
}

/* "0000:c7:00.0 (0x1002:0x740f, Aldebaran gfx90a, driver none)" into buf. */
static const char *device_text(const sc_pci_device *d, const sc_amd_pciid *id, char *buf,
                               size_t size)
{
    snprintf(buf, size, "%s (0x%04x:0x%04x%s%s%s%s, driver %s)", d->address, d->vendor, d->device,
             id ? ", " : "", id ? id->chip : "", id ? " " : "", id ? id->gfx : "",
             d->driver[0] ? d->driver : "none");
    return buf;
}

/* amd.asic-unsupported: a GPU ROCm never computes on (SI, CIK), or one the KFD says it does not
 * support. */
static void unsupported_finding(drv_state *st, const sc_pci_device *d, const sc_amd_pciid *id,
                                const sc_kmsg_match *line)
{
    char dev[192];
    bool kfd_says = line && line->pattern->cls == SC_KMSG_UNSUPPORTED;
    bool never = id && id->rocm == SC_AMD_ROCM_NEVER;
    sc_finding(st->res, "amd.asic-unsupported", SC_SEV_ERROR, sc_amd_rocm_supported_text,
               "%s is not supported for compute: %s%s%s%s", device_text(d, id, dev, sizeof dev),
               never ? "ROCm and HIP never supported " : "", never ? id->family : "",
               never && kfd_says ? "; " : "", kfd_says ? line->line : "");
}

/* The KFD names a device it refuses by its id, not its address ("kfd kfd: DID 15d8 is missing in
 * supported_devices"): the first such line kept for device d, or NULL. */
static const sc_kmsg_match *kfd_refusal(const sc_kmsg_result *log, const sc_pci_device *d)
{
    char did[16];
    snprintf(did, sizeof did, "DID %04x ", d->device);
    for (size_t i = 0; log && i < log->kept; i++)
        if (log->first[i].pattern->cls == SC_KMSG_UNSUPPORTED &&
            log->first[i].pattern->severity == SC_SEV_ERROR && strcasestr(log->first[i].line, did))
            return &log->first[i];
    return NULL;
}

/* The verdict on one AMD/Hygon accelerator the KFD does not show. Returns true when it named a
 * failure (an error finding). */
static bool judge_missing_device(drv_state *st, const sc_pci_device *d, const sc_kmsg_result *log)
{
    const sc_amd_pciid *id = sc_amd_pciid_lookup(d->vendor, d->device);
    const sc_kmsg_device *lines = log ? sc_kmsg_device_of(log, d->address) : NULL;
    const sc_kmsg_pattern *why = lines && lines->has_cause ? lines->cause.pattern : NULL;
    const sc_kmsg_match *refused = why ? NULL : kfd_refusal(log, d);
    bool ours = sc_backend_list_has(st->desc->kernel_modules, d->driver);
    char dev[192];
    if ((id && id->rocm == SC_AMD_ROCM_NEVER) || (why && why->cls == SC_KMSG_UNSUPPORTED) ||
        refused) {
        unsupported_finding(st, d, id, refused ? refused : lines ? &lines->cause : NULL);
        return true;
    }
    if (why) {
        sc_finding(st->res, "amd.device-failed", SC_SEV_ERROR, device_remedy(why->cls),
                   "%s failed: %s (%s): %s", device_text(d, id, dev, sizeof dev),
                   why->meaning ? why->meaning : why->kind, why->kind, lines->cause.line);
        return true;
    }
    if (!d->driver[0] && st->module[0] && st->gpus.bound > 0) {
        sc_finding(st->res, "amd.device-failed", SC_SEV_ERROR, device_remedy(SC_KMSG_INIT),
                   "%s is bound to no driver while %s is loaded and %zu sibling(s) are bound: "
                   "its probe failed (the kernel log holds no reason stackcheck recognises)",
                   device_text(d, id, dev, sizeof dev), st->module, st->gpus.bound);
        return true;
    }
    if (d->driver[0] && !ours && st->gpus.bound > 0) /* none bound: driver_verdict's case */
        sc_finding(st->res, "amd.device-no-driver", SC_SEV_WARN,
                   "bind the device to amdgpu (or hydcu), unless it is passed through to a VM on "
                   "purpose (vfio-pci)",
                   "%s", device_text(d, id, dev, sizeof dev));
    return false;
}

/* Judges every AMD/Hygon accelerator on PCI that has no GPU node in the KFD or is held by another
 * driver; returns how many failed. */
static size_t judge_missing_devices(drv_state *st, const sc_kmsg_result *log)
{
    size_t failed = 0;
    for (size_t i = 0; i < st->pci.count; i++) {
        const sc_pci_device *d = &st->pci.items[i];
        bool ours = sc_backend_list_has(st->desc->kernel_modules, d->driver);
        if (sc_pci_accelerator(d) == st->desc && (!in_kfd(st, d->address) || !ours))
            failed += judge_missing_device(st, d, log);
    }
    return failed;
}

static void collect_drm(drv_state *st)
{
    cJSON *arr = cJSON_AddArrayToObject(st->res->facts, "drm");
    sc_error err = {0};
    if (sc_drm_collect(st->ctx->root, arr, &err) < 0)
        sc_fact_null(st->res->facts, "drm", "%s", err.message);
}

/* Facts that only make sense with a device: null with the reason otherwise. */
static void skip_device_facts(drv_state *st, const char *why)
{
    static const char *const keys[] = {"device_nodes", "drm", "kernel_log"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!cJSON_HasObjectItem(st->res->facts, keys[i]))
            sc_fact_null(st->res->facts, keys[i], "%s", why);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    drv_state st = {.desc = sc_backend_get(SC_BACKEND_AMD), .ctx = ctx, .res = res};
    st.container = sc_container_kind(ctx->root);
    scan_pci(&st);
    read_module(&st);
    read_kfd(&st);
    sc_fact_str(res->facts, "container", st.container, "no container detected");
    if (res->status == SC_STATUS_ERROR) {
        skip_device_facts(&st, "the KFD topology could not be read");
    } else if (st.gpus.ours == 0 && st.gpu_nodes == 0) {
        no_device_verdict(&st);
        skip_device_facts(&st, "no AMD or Hygon accelerator");
    } else {
        sc_kmsg_result *log = scan_kernel_log(&st);
        size_t failed = judge_missing_devices(&st, log);
        if (st.gpu_nodes == 0 && failed == 0)
            driver_verdict(&st, log);
        else if (st.gpu_nodes > 0)
            coverage_checks(&st, failed), check_device_nodes(&st);
        collect_drm(&st);
        skip_device_facts(&st, "no GPU in the KFD topology");
        free(log);
    }
    sc_pci_list_free(&st.pci);
    sc_kfd_free(&st.kfd);
}

const sc_probe sc_probe_driver_amd = {
    .id = "driver.amd",
    .layer = SC_LAYER_DRIVER,
    .backend = SC_BACKEND_AMD,
    .isolated = false,
    .active = false,
    .summary =
        "AMD GPUs and Hygon DCUs: PCI, kernel module, KFD topology, device nodes, kernel log",
    .run = run,
};
