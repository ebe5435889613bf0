/* driver.ascend: Huawei Ascend NPUs behind the davinci driver. Reads PCI, the driver's and the
 * firmware's version.info (and checks the firmware against the driver's compatible_version_fw
 * range), the CANN toolkits, the driver's kernel modules (loaded, and built for the running
 * kernel: their vermagic), the device nodes and the kernel log, all through the root, so it runs
 * the same live and on a --sysroot image. Passive. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "sc_accel.h"
#include "sc_ascend.h"
#include "sc_ascend_install.h"
#include "sc_ascend_kernel.h"
#include "sc_ascend_lock.h"
#include "sc_census.h"
#include "sc_host.h"
#include "sc_pci.h"
#include "sc_util.h"

#define MAX_NPUS 64 /* /dev/davinci<N> nodes checked */

/* A value of version.info: one size for what is read and what is kept, so a long version is kept
 * whole (a cut one would be compared with the firmware ranges as if it were the version). */
#define INFO_VALUE_MAX 256

typedef struct {
    const sc_backend_desc *desc; /* its modules and device nodes */
    const sc_ctx *ctx;
    sc_result *res;
    sc_pci_list pci;
    sc_accel_census npus;
    char install[PATH_MAX];
    char driver_version[INFO_VALUE_MAX], fw_version[INFO_VALUE_MAX], fw_range[INFO_VALUE_MAX];
    char driver_inner[INFO_VALUE_MAX];  /* the driver's Innerversion: its release line */
    char driver_compat[INFO_VALUE_MAX]; /* its compatible_version: CANN release lines */
    bool driver_info, modules;
    size_t nodes_found; /* /dev/davinci<N> present */
    const char *container;
} asc_state;

/* A Huawei NPU: the descriptor's class 0x12 (processing accelerator); the BMC's Hi171x VGA (0x03)
 * is not one. */
static bool is_npu(const sc_pci_device *d)
{
    return sc_pci_accelerator(d) == sc_backend_get(SC_BACKEND_ASCEND);
}

/* facts.pci lists Huawei's NPUs only: the others belong to their vendors' probes. */
static bool count_huawei(void *arg, const sc_pci_device *d)
{
    if (!is_npu(d))
        return false;
    sc_accel_census_add(arg, d, d->driver[0] != '\0');
    return true;
}

/* How many /dev/davinci<N> nodes exist (davinci_manager is not one); 0 when /dev is unreadable. */
static size_t count_davinci_nodes(const asc_state *st)
{
    sc_error err = {0};
    int n = sc_census_numbered_nodes(st->ctx->root, st->desc->device_nodes, &err);
    return n > 0 ? (size_t)n : 0;
}

static void add_info_fact(cJSON *o, const char *text, const char *key, const char *name,
                          const char *path, char *keep, size_t keep_size)
{
    char v[INFO_VALUE_MAX];
    if (sc_ascend_info_get(text, key, v, sizeof v)) {
        cJSON_AddStringToObject(o, name, v);
        if (keep)
            snprintf(keep, keep_size, "%s", v);
    } else {
        sc_fact_null(o, name, "no %s= line in %s", key, path);
    }
}

/* facts.driver from <install>/driver/version.info. */
static void read_driver_info(asc_state *st)
{
    char path[PATH_MAX + 32], *text = NULL;
    sc_fmt(path, sizeof path, "%s/driver/version.info", st->install);
    long n = sc_root_read(st->ctx->root, path, &text, 64 * 1024);
    if (n < 0) {
        sc_fact_null(st->res->facts, "driver", "%s: %s", path, sc_root_strerror((int)n));
        return;
    }
    st->driver_info = true;
    cJSON *o = cJSON_AddObjectToObject(st->res->facts, "driver");
    cJSON_AddStringToObject(o, "path", path);
    add_info_fact(o, text, "Version", "version", path, st->driver_version,
                  sizeof st->driver_version);
    add_info_fact(o, text, "ascendhal_version", "ascendhal_version", path, NULL, 0);
    add_info_fact(o, text, "Innerversion", "innerversion", path, st->driver_inner,
                  sizeof st->driver_inner);
    add_info_fact(o, text, "package_version", "package_version", path, NULL, 0);
    add_info_fact(o, text, "compatible_version", "compatible_version", path, st->driver_compat,
                  sizeof st->driver_compat);
    add_info_fact(o, text, "compatible_version_fw", "compatible_version_fw", path, st->fw_range,
                  sizeof st->fw_range);
    free(text);
}

/* facts.firmware from <install>/firmware/version.info. */
static void read_firmware_info(asc_state *st)
{
    char path[PATH_MAX + 32], *text = NULL;
    sc_fmt(path, sizeof path, "%s/firmware/version.info", st->install);
    long n = sc_root_read(st->ctx->root, path, &text, 64 * 1024);
    if (n < 0) {
        sc_fact_null(st->res->facts, "firmware", "%s: %s", path, sc_root_strerror((int)n));
        return;
    }
    cJSON *o = cJSON_AddObjectToObject(st->res->facts, "firmware");
    cJSON_AddStringToObject(o, "path", path);
    add_info_fact(o, text, "Version", "version", path, st->fw_version, sizeof st->fw_version);
    free(text);
}

/* facts.modules: the driver's modules found under /sys/module, with initstate and version. */
static void read_modules(asc_state *st)
{
    const char *const *module_names = st->desc->kernel_modules;
    cJSON *arr = cJSON_AddArrayToObject(st->res->facts, "modules");
    for (size_t i = 0; module_names[i] && arr; i++) {
        char path[96], line[128];
        sc_fmt(path, sizeof path, "/sys/module/%s", module_names[i]);
        if (!sc_root_exists(st->ctx->root, path))
            continue;
        st->modules = true;
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", module_names[i]);
        sc_fmt(path, sizeof path, "/sys/module/%s/initstate", module_names[i]);
        cJSON_AddStringToObject(
            m, "initstate",
            sc_root_read_line(st->ctx->root, path, line, sizeof line) == 0 ? line : "builtin");
        sc_fmt(path, sizeof path, "/sys/module/%s/version", module_names[i]);
        if (sc_root_read_line(st->ctx->root, path, line, sizeof line) == 0)
            cJSON_AddStringToObject(m, "version", line);
        cJSON_AddItemToArray(arr, m);
    }
}

static const char *model_of(unsigned device)
{
    switch (device) {
    case 0xd100: return "Ascend 310";
    case 0xd500: return "Ascend 310P";
    case 0xd801: return "Ascend 910";
    case 0xd802: return "Ascend 910B";
    case 0xd803: return "Ascend 910C";
    default: return NULL;
    }
}

static void read_devices(asc_state *st)
{
    cJSON *arr = cJSON_AddArrayToObject(st->res->facts, "devices");
    for (size_t i = 0; i < st->pci.count && arr; i++) {
        const sc_pci_device *d = &st->pci.items[i];
        if (!is_npu(d))
            continue;
        cJSON *o = cJSON_CreateObject();
        char hex[16];
        cJSON_AddStringToObject(o, "pci_address", d->address);
        snprintf(hex, sizeof hex, "0x%04x", d->device);
        cJSON_AddStringToObject(o, "device_id", hex);
        sc_fact_str(o, "model", model_of(d->device), "device id not in stackcheck's table");
        sc_fact_str(o, "driver", d->driver[0] ? d->driver : NULL, "no driver bound");
        cJSON_AddItemToArray(arr, o);
    }
}

/* ascend.driver-not-installed: NPUs on PCI but no driver version.info or no driver module. */
static bool driver_verdict(asc_state *st)
{
    if (st->driver_info && (st->modules || st->npus.bound > 0))
        return true;
    const sc_pci_device *d = st->npus.first;
    char where[96] = "no Ascend NPU on PCI";
    if (d)
        sc_fmt(where, sizeof where, "%zu Ascend NPU(s) on PCI, e.g. %s (0x19e5:0x%04x)",
               st->npus.ours, d->address, d->device);
    sc_finding(st->res, "ascend.driver-not-installed", SC_SEV_ERROR,
               "install the Ascend driver and firmware packages (Ascend-hdk-*-npu-driver and "
               "-firmware .run) for this NPU and OS, then reboot; a container needs "
               "/usr/local/Ascend/driver mounted from the host",
               "%s, but %s%s%s", where, st->driver_info ? "" : "no driver version.info under ",
               st->driver_info ? "no Ascend driver module in /sys/module (drv_davinci_intf_host, "
                                 "drv_devdrv_host, ...)"
                               : st->install,
               st->driver_info || st->modules ? "" : " and no driver module loaded");
    return false;
}

/* THE check: the firmware must lie in the driver's compatible_version_fw range. */
static void check_firmware(asc_state *st)
{
    cJSON *facts = st->res->facts;
    if (!st->fw_version[0]) {
        sc_fact_null(facts, "firmware_compatible", "the firmware version is unknown");
        sc_finding(st->res, "ascend.firmware-unknown", SC_SEV_WARN,
                   "install the firmware package (Ascend-hdk-*-npu-firmware) that the driver's "
                   "compatible_version_fw range names, or check /usr/local/Ascend/firmware",
                   "no firmware version in %s/firmware/version.info; the driver %s accepts "
                   "firmware %s",
                   st->install, st->driver_version[0] ? st->driver_version : "(version unknown)",
                   st->fw_range[0] ? st->fw_range : "(range unknown)");
        return;
    }
    char ranges[256];
    int in = st->fw_range[0]
                 ? sc_ascend_fw_in_range(st->fw_range, st->fw_version, ranges, sizeof ranges)
                 : -1;
    if (in < 0) {
        sc_fact_null(facts, "firmware_compatible",
                     "the driver's compatible_version_fw is missing or not a [min,max] range");
        return;
    }
    cJSON_AddBoolToObject(facts, "firmware_compatible", in == 1);
    if (in == 0)
        sc_finding(st->res, "ascend.firmware-incompatible", SC_SEV_ERROR,
                   "upgrade (or downgrade) the firmware package (Ascend-hdk-*-npu-firmware) to a "
                   "version in the driver's range, or install the driver that matches this "
                   "firmware; then reboot (or reload the driver) so the NPUs run the new firmware",
                   "firmware %s is outside the driver %s's compatible_version_fw %s",
                   st->fw_version, st->driver_version[0] ? st->driver_version : "(version unknown)",
                   ranges);
}

static void read_toolkits(asc_state *st)
{
    sc_ascend_toolkits *tks = calloc(1, sizeof *tks);
    if (!tks) {
        sc_fact_null(st->res->facts, "toolkit", "out of memory");
        return;
    }
    sc_ascend_toolkits_collect(st->ctx->root, st->install, tks);
    sc_ascend_toolkits_facts(st->res->facts, tks);
    if (tks->count == 0)
        sc_finding(st->res, "ascend.toolkit-missing", SC_SEV_WARN,
                   "install the CANN toolkit (Ascend-cann-toolkit) matching the driver and "
                   "source its set_env.sh; without it nothing above the driver runs",
                   "no CANN toolkit under %s (ascend-toolkit/latest/<arch>-linux/"
                   "ascend_toolkit_install.info or cann*/)",
                   st->install);
    sc_ascend_driver_words drv = {st->driver_version, st->driver_inner, st->driver_compat};
    sc_ascend_lock_check(st->res, tks, &drv);
    free(tks);
}

/* ---- device nodes ---- */

typedef struct {
    sc_accel_node first_missing, first_denied;
    size_t missing, denied, npu_present, total;
} node_tally;

static void add_node(asc_state *st, cJSON *arr, node_tally *t, const char *path, bool npu)
{
    sc_accel_node a;
    sc_accel_node_check(st->ctx->root, path, &a);
    t->total++;
    t->npu_present += npu && a.exists;
    if (!a.exists && t->missing++ == 0)
        t->first_missing = a;
    if (a.exists && !(a.readable && a.writable) && t->denied++ == 0)
        t->first_denied = a;
    cJSON_AddItemToArray(arr, sc_accel_node_json(st->ctx->root, &a, false));
}

#define CONTAINER_FLAGS                                                                            \
    "--device=/dev/davinci0 --device=/dev/davinci_manager --device=/dev/devmm_svm "                \
    "--device=/dev/hisi_hdc -v /usr/local/Ascend/driver:/usr/local/Ascend/driver"

static void permission_finding(asc_state *st, const node_tally *t)
{
    const sc_accel_node *a = &t->first_denied;
    char hint[256], msg[1024];
    if (!sc_accel_node_group_hint(a, hint, sizeof hint))
        snprintf(hint, sizeof hint,
                 "the driver installs the nodes for its run user's group (HwHiAiUser by "
                 "default): add your user to group %s, or reinstall the driver with "
                 "--install-for-all",
                 a->group);
    sc_accel_node_denied(a, t->denied > 1 ? " (and more)" : "", msg, sizeof msg);
    sc_finding(st->res, "ascend.device-permission", SC_SEV_ERROR, hint, "%s", msg);
}

static void node_findings(asc_state *st, const node_tally *t, size_t npus)
{
    if (st->container && t->npu_present == 0) {
        sc_finding(st->res, "ascend.container-devices-not-mapped", SC_SEV_ERROR,
                   "start the container with " CONTAINER_FLAGS
                   " (one --device per NPU), or use Ascend Docker Runtime "
                   "(ASCEND_VISIBLE_DEVICES)",
                   "%zu Ascend NPU(s) in the host's sysfs but no /dev/davinci<N> in this %s "
                   "container",
                   npus, st->container);
        return;
    }
    if (t->missing && !(st->container && t->npu_present > 0 && t->missing <= npus))
        sc_finding(st->res, "ascend.device-node-missing", SC_SEV_ERROR,
                   st->container ? "map the nodes into the container: " CONTAINER_FLAGS
                                 : "the driver creates the nodes when it loads: check that its "
                                   "modules are loaded (lsmod | grep drv_) and dmesg, reinstall "
                                   "the driver or reboot",
                   "%s does not exist (%zu of %zu Ascend device node(s) missing)",
                   t->first_missing.path, t->missing, t->total);
    if (t->denied)
        permission_finding(st, t);
}

/* The descriptor's device nodes: a numbered one per NPU (/dev/davinci<N>), then the shared ones
 * (/dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc). */
static void check_device_nodes(asc_state *st)
{
    cJSON *arr = cJSON_AddArrayToObject(st->res->facts, "device_nodes");
    node_tally t = {0};
    size_t npus = st->npus.ours > st->nodes_found ? st->npus.ours : st->nodes_found;
    const char *const *nodes = st->desc->device_nodes;
    for (size_t k = 0; nodes[k]; k++) {
        size_t star = strcspn(nodes[k], "*");
        for (size_t i = 0; nodes[k][star] && i < npus && i < MAX_NPUS; i++) {
            char path[64];
            snprintf(path, sizeof path, "%.*s%zu", (int)star, nodes[k], i);
            add_node(st, arr, &t, path, true);
        }
    }
    for (size_t k = 0; nodes[k]; k++)
        if (!strchr(nodes[k], '*'))
            add_node(st, arr, &t, nodes[k], false);
    cJSON_AddNumberToObject(st->res->facts, "mapped_npus", (double)t.npu_present);
    node_findings(st, &t, npus);
}

/* ---- kernel log ---- */

static void scan_kernel_log(asc_state *st)
{
    cJSON *kl = cJSON_AddObjectToObject(st->res->facts, "kernel_log");
    sc_buf text;
    sc_buf_init(&text);
    char source[64] = "";
    sc_error err = {0};
    sc_ascend_kmsg_result *r = NULL;
    if (sc_accel_read_kmsg(st->ctx->root, kl, &text, source, sizeof source, &err) < 0 ||
        !(r = calloc(1, sizeof *r)))
        goto out;
    sc_ascend_kmsg_scan(text.data, text.len, r);
    cJSON_AddNumberToObject(kl, "lines", (double)r->lines);
    cJSON_AddNumberToObject(kl, "error_lines", (double)r->total);
    cJSON *errors = cJSON_AddArrayToObject(kl, "errors");
    for (size_t i = 0; i < r->kept && errors; i++)
        cJSON_AddItemToArray(errors, cJSON_CreateString(r->first[i].line));
    if (r->total)
        sc_finding(st->res, "ascend.kernel-log-errors", SC_SEV_WARN,
                   "read the driver's messages (dmesg | grep -i -E 'ascend|davinci|devdrv'): "
                   "firmware load failures and PCIe link errors show there first; collect "
                   "npu-smi info and the log before rebooting",
                   "%zu Ascend driver error line(s) in %s, first: %s", r->total, source,
                   r->first[0].line);
out:
    free(r);
    sc_buf_free(&text);
}

static void run(const sc_ctx *ctx, sc_result *res)
{
    asc_state st = {.desc = sc_backend_get(SC_BACKEND_ASCEND), .ctx = ctx, .res = res};
    sc_accel_scan_pci(ctx->root, res->facts, &st.pci, count_huawei, &st.npus);
    st.nodes_found = count_davinci_nodes(&st);
    if (st.npus.ours == 0 && st.nodes_found == 0) {
        /* driver.devices owns driver.no-accelerator: one verdict for "nothing here" */
        sc_result_skip(res, true, "no Huawei Ascend NPU on PCI and no /dev/davinci*");
        sc_pci_list_free(&st.pci);
        return;
    }
    st.container = sc_container_kind(ctx->root);
    sc_fact_str(res->facts, "container", st.container, "no container detected");
    bool said = sc_ascend_install_dir(ctx->root, st.install, sizeof st.install);
    cJSON_AddStringToObject(res->facts, "install_path", st.install);
    cJSON_AddBoolToObject(res->facts, "install_path_from_install_info", said);
    read_driver_info(&st);
    read_firmware_info(&st);
    read_modules(&st);
    sc_ascend_kernel_check(ctx->root, res);
    read_devices(&st);
    read_toolkits(&st);
    if (driver_verdict(&st)) {
        check_firmware(&st);
        check_device_nodes(&st);
    } else {
        sc_fact_null(res->facts, "device_nodes", "the Ascend driver is not installed or loaded");
    }
    scan_kernel_log(&st);
    sc_pci_list_free(&st.pci);
}

const sc_probe sc_probe_driver_ascend = {
    .id = "driver.ascend",
    .layer = SC_LAYER_DRIVER,
    .backend = SC_BACKEND_ASCEND,
    .isolated = false,
    .active = false,
    .summary = "Huawei Ascend NPUs: PCI, driver and firmware versions (firmware inside the "
               "driver's compatible range), CANN toolkit, modules (built for the running "
               "kernel), device nodes, kernel log",
    .run = run,
};
