/* The pieces driver.amd/driver.nvidia and runtime.hip/runtime.cuda share, where the logic is the
 * same whatever the vendor: strings from vendor libraries, the kernel check, visibility variables,
 * the driver layer's devices, the PCI census, device-node access and the kernel log. */
#include "sc_accel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sc_host.h"
#include "sc_kmsg.h"
#include "sc_redact.h"

const char sc_accel_kernel_source[] =
    "extern \"C\" __global__ void sc_double(const float *x, float *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = x[i] * 2.0f;\n"
    "}\n";

const char *sc_accel_code_lookup(const sc_accel_code_name *table, size_t n, int code)
{
    for (size_t i = 0; i < n; i++)
        if (table[i].code == code)
            return table[i].name;
    return NULL;
}

void sc_accel_copy_text(char *dst, size_t size, const char *src, size_t src_max,
                        const char *fallback)
{
    if (size == 0)
        return;
    size_t n = src ? strnlen(src, src_max) : 0;
    if (n == 0) {
        snprintf(dst, size, "%s", fallback ? fallback : "");
        return;
    }
    if (n > size - 1)
        n = size - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        dst[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
    }
    dst[n] = '\0';
    sc_rstrip(dst);
}

void sc_accel_describe(char *buf, size_t size, int code, const char *name,
                       const char *fallback_name, const char *text)
{
    char n[96], t[160];
    sc_accel_copy_text(n, sizeof n, name, sizeof n - 1, fallback_name);
    sc_accel_copy_text(t, sizeof t, text, sizeof t - 1, "");
    if (t[0] && strcmp(t, n) != 0)
        sc_fmt(buf, size, "%s (%d): %s", n, code, t);
    else
        sc_fmt(buf, size, "%s (%d)", n, code);
}

void sc_accel_note_bad(sc_buf *bad, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    sc_buf_printf(bad, "%s%s", bad->len ? "; " : "", what);
}

void sc_accel_fill_pattern(unsigned char *buf, size_t n)
{
    for (size_t k = 0; k < n; k++)
        buf[k] = (unsigned char)((k * 2654435761u) >> 13);
}

bool sc_accel_memory_answer(cJSON *mem, sc_buf *bad, int dev, const char *call, int rc,
                            const char *desc, size_t free_b, size_t total_b)
{
    if (rc == 0 && total_b != 0 && total_b <= SC_ACCEL_MAX_MEMORY && free_b <= total_b) {
        cJSON_AddNumberToObject(mem, "free_bytes", (double)free_b);
        cJSON_AddNumberToObject(mem, "total_bytes", (double)total_b);
        return true;
    }
    if (rc == 0)
        sc_accel_note_bad(bad, "device %d: %s free/total impossible", dev, call);
    sc_fact_null(mem, "free_bytes", "%s: %s", call, rc ? desc : "impossible values");
    return false;
}

/* The pattern's round trip; returns the failing call's code, or -ENOMEM without host memory. */
static int copy_round_trip(const sc_accel_copy_ops *ops, void *run, int dev, bool *same)
{
    unsigned char *src = malloc(SC_ACCEL_PATTERN_BYTES), *back = calloc(1, SC_ACCEL_PATTERN_BYTES);
    sc_accel_dptr d = 0;
    int rc = -ENOMEM;
    if (!src || !back || (rc = ops->alloc(run, dev, &d, SC_ACCEL_PATTERN_BYTES)) != 0)
        goto out;
    sc_accel_fill_pattern(src, SC_ACCEL_PATTERN_BYTES);
    if ((rc = ops->round_trip(run, dev, d, src, back)) == 0)
        *same = memcmp(src, back, SC_ACCEL_PATTERN_BYTES) == 0;
out:
    if (d)
        ops->release(run, d);
    free(src);
    free(back);
    return rc;
}

bool sc_accel_copy_check(const sc_accel_copy_ops *ops, void *run, int dev, sc_result *res, cJSON *o)
{
    bool same = false;
    int rc = copy_round_trip(ops, run, dev, &same);
    if (rc == -ENOMEM)
        sc_result_error(res, "out of host memory");
    else if (rc == 0 && !same)
        ops->differs(run, dev);
    cJSON_AddBoolToObject(o, "copy_verified", same);
    return rc == 0;
}

bool sc_accel_check_doubled(const float *got, int n, cJSON *o, char *why, size_t size)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "kernel_result");
    bool ok = true;
    for (int k = 0; k < n; k++) {
        cJSON_AddItemToArray(arr, cJSON_CreateNumber(got[k]));
        ok = ok && got[k] == 2.0f * (float)k;
    }
    why[0] = '\0';
    if (ok)
        return true;
    size_t len = (size_t)snprintf(why, size, "the kernel x*2 on x=0..%d gave", n - 1);
    for (int k = 0; k < n && len < size; k++)
        len += (size_t)snprintf(why + len, size - len, " %g", got[k]);
    return false;
}

void sc_accel_rtc_log(int (*log_size)(void *, size_t *), int (*get_log)(void *, char *), void *prog,
                      char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    if (log_size(prog, &n) != 0 || n == 0 || n > SC_ACCEL_MAX_LOG_BYTES)
        return;
    char *log = calloc(1, n + 1);
    if (log && get_log(prog, log) == 0) {
        for (char *p = log; *p; p++)
            if (*p == '\n' || *p == '\r' || *p == '\t')
                *p = ' ';
        size_t len = strnlen(log, n);
        const char *tail = len > size - 1 ? log + len - (size - 1) : log;
        sc_accel_copy_text(buf, size, tail, size - 1, "");
    }
    free(log);
}

int sc_accel_visibility_vars(char *(*env)(const char *), const char *const *names, bool quoted,
                             char *buf, size_t size)
{
    const char *q = quoted ? "\"" : "";
    int count = 0;
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; names[i]; i++) {
        const char *v = env(names[i]);
        if (!v)
            continue;
        count++;
        char *clean = sc_redact_value(v); /* values land in findings: scrub them like the env */
        if (len < size)
            len += (size_t)snprintf(buf + len, size - len, "%s%s=%s%s%s", len ? ", " : "", names[i],
                                    q, clean ? clean : "[unreadable]", q);
        free(clean);
    }
    return count;
}

const cJSON *sc_accel_driver_devices(const sc_ctx *ctx, const char *probe_id)
{
    const cJSON *d = sc_json_member(sc_ctx_facts(ctx, probe_id), SC_FACT_DEVICES);
    return cJSON_IsArray(d) && cJSON_GetArraySize(d) > 0 ? d : NULL;
}

const cJSON *sc_accel_device_at(const cJSON *devices, const char *pci)
{
    const cJSON *d;
    cJSON_ArrayForEach (d, devices) {
        const char *kp = sc_json_str(d, SC_FACT_PCI_ADDRESS);
        if (pci && kp && strcasecmp(pci, kp) == 0)
            return d;
    }
    return NULL;
}

void sc_accel_unmatched_devices(const cJSON *devices, const cJSON *driver_devices, sc_buf *out)
{
    const cJSON *d;
    cJSON_ArrayForEach (d, devices) {
        const char *pci = sc_json_str(d, SC_FACT_PCI_ADDRESS);
        if (pci && !sc_accel_device_at(driver_devices, pci))
            sc_buf_printf(out, "%s%s", out->len ? ", " : "", pci);
    }
}

int sc_accel_driver_agrees(cJSON *facts, const cJSON *devices, int count,
                           const cJSON *driver_devices, const char *none_reason, sc_buf *missing)
{
    if (!driver_devices) {
        sc_fact_null(facts, "driver_agrees", "%s", none_reason);
        return -1;
    }
    sc_accel_unmatched_devices(devices, driver_devices, missing);
    bool agree = cJSON_GetArraySize(driver_devices) == count && !missing->len;
    cJSON_AddBoolToObject(facts, "driver_agrees", agree);
    return agree;
}

void sc_accel_list_devices(const cJSON *devices, const char *label_key, sc_buf *out)
{
    const cJSON *d;
    cJSON_ArrayForEach (d, devices) {
        const char *label = sc_json_str(d, label_key);
        const char *pci = sc_json_str(d, SC_FACT_PCI_ADDRESS);
        sc_buf_printf(out, "%s%s at %s", out->len ? ", " : "", label ? label : "?",
                      pci ? pci : "?");
    }
}

void sc_accel_census_add(sc_accel_census *c, const sc_pci_device *d, bool bound)
{
    c->ours++;
    if (!c->first)
        c->first = d;
    if (bound)
        c->bound++;
    else if (!c->unbound)
        c->unbound = d;
}

bool sc_accel_scan_pci(const sc_root *root, cJSON *facts, sc_pci_list *list,
                       bool (*keep)(void *arg, const sc_pci_device *d), void *arg)
{
    sc_error err = {0};
    cJSON *arr = cJSON_AddArrayToObject(facts, "pci");
    if (sc_pci_scan(root, list, &err) < 0) {
        sc_fact_null(facts, "pci", "%s", err.message);
        return false;
    }
    for (size_t i = 0; i < list->count; i++) {
        const sc_pci_device *d = &list->items[i];
        if (sc_pci_is_accelerator(d) && keep(arg, d))
            cJSON_AddItemToArray(arr, sc_pci_device_json(d));
    }
    return true;
}

void sc_accel_node_check(const sc_root *root, const char *path, sc_accel_node *a)
{
    memset(a, 0, sizeof *a);
    snprintf(a->path, sizeof a->path, "%s", path);
    a->exists = sc_root_stat(root, path, &a->sb, true) == 0;
    if (!a->exists)
        return;
    a->readable = sc_root_access(root, path, R_OK) == 0;
    a->writable = sc_root_access(root, path, W_OK) == 0;
    if (!sc_group_name(root, a->sb.st_gid, a->group, sizeof a->group))
        snprintf(a->group, sizeof a->group, "%u", (unsigned)a->sb.st_gid);
}

cJSON *sc_accel_node_json(const sc_root *root, const sc_accel_node *a, bool with_owner)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "path", a->path);
    cJSON_AddBoolToObject(o, "exists", a->exists);
    if (!a->exists) {
        static const char *const keys[] = {"readable", "writable", "owner", "group", "mode"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (with_owner || strcmp(keys[i], "owner") != 0)
                sc_fact_null(o, keys[i], "%s does not exist", a->path);
        return o;
    }
    char owner[64], mode[8];
    if (with_owner && !sc_user_name(root, a->sb.st_uid, owner, sizeof owner))
        snprintf(owner, sizeof owner, "%u", (unsigned)a->sb.st_uid);
    snprintf(mode, sizeof mode, "%04o", (unsigned)(a->sb.st_mode & 07777));
    cJSON_AddBoolToObject(o, "readable", a->readable);
    cJSON_AddBoolToObject(o, "writable", a->writable);
    if (with_owner)
        cJSON_AddStringToObject(o, "owner", owner);
    cJSON_AddStringToObject(o, "group", a->group);
    cJSON_AddStringToObject(o, "mode", mode);
    return o;
}

bool sc_accel_node_group_hint(const sc_accel_node *a, char *hint, size_t size)
{
    if (sc_process_in_group(a->sb.st_gid) || (a->sb.st_mode & 060) != 060)
        return false;
    snprintf(hint, size,
             "sudo usermod -aG %s $USER, then log in again (in a container: --group-add %s)",
             a->group, a->group);
    return true;
}

void sc_accel_node_denied(const sc_accel_node *a, const char *more, char *msg, size_t size)
{
    bool in_group = sc_process_in_group(a->sb.st_gid);
    snprintf(msg, size,
             "%s%s is not readable and writable by uid %u: mode %04o, owner uid %u, group %s "
             "(gid %u); uid %u is %sin group %s",
             a->path, more, (unsigned)geteuid(), (unsigned)(a->sb.st_mode & 07777),
             (unsigned)a->sb.st_uid, a->group, (unsigned)a->sb.st_gid, (unsigned)geteuid(),
             in_group ? "" : "not ", a->group);
}

int sc_accel_read_kmsg(const sc_root *root, cJSON *kl, sc_buf *text, char *source, size_t size,
                       sc_error *err)
{
    int rc = sc_kmsg_read(root, text, source, size, err);
    cJSON_AddStringToObject(kl, "source", source);
    cJSON_AddBoolToObject(kl, "readable", rc == 0);
    if (rc < 0)
        sc_fact_null(kl, "errors", "not readable: %s", err->message);
    return rc;
}

void sc_accel_driver_evidence(const sc_ctx *ctx, const char *probe_id, const char *noun,
                              const char *label_key, char *buf, size_t size)
{
    const cJSON *devs = sc_accel_driver_devices(ctx, probe_id);
    if (devs) {
        sc_buf b;
        sc_buf_init(&b);
        sc_accel_list_devices(devs, label_key, &b);
        sc_fmt(buf, size, "%s sees %d %s (%s)", probe_id, cJSON_GetArraySize(devs), noun,
               b.data ? b.data : "");
        sc_buf_free(&b);
        return;
    }
    const sc_outcome *o = sc_ctx_outcome(ctx, probe_id);
    sc_status st = o ? o->status : SC_STATUS_UNSET;
    sc_finding_view v = {0};
    const cJSON *err = o ? sc_outcome_first_finding(o, SC_SEV_ERROR) : NULL;
    const char *why = err && sc_finding_read(err, &v) ? v.message : NULL;
    if (!why && o) /* a skipped driver probe says why in its reason */
        why = o->reason;
    sc_fmt(buf, size, "%s: %s%s%s", probe_id,
           st == SC_STATUS_UNSET ? "did not run" : sc_status_name(st), why ? ", " : "",
           why ? why : "");
}
