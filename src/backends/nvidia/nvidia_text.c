/* Parsers for the NVIDIA kernel driver's text: the /proc version line, the per-GPU information
 * file and the NVRM kernel-log lines. Each works on a buffer and bounds every copy, since the
 * text may come from a damaged image or a hostile fixture. */
#include "sc_nvidia.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_kmsg.h"

bool sc_nvidia_is_version(const char *s)
{
    size_t n = 0, dots = 0;
    for (; s[n]; n++) {
        if (s[n] == '.')
            dots++;
        else if (!isdigit((unsigned char)s[n]))
            return false;
    }
    return n > 0 && n < 32 && dots > 0 && s[0] != '.' && s[n - 1] != '.';
}

/* The line of text starting with prefix into line (cut to fit); false when there is none. */
static bool find_line(const char *text, const char *prefix, char *line, size_t size)
{
    size_t plen = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, prefix, plen) != 0)
            continue;
        size_t n = strcspn(p, "\n");
        if (n >= size)
            n = size - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        return true;
    }
    return false;
}

int sc_nvidia_parse_proc_version(const char *text, char *buf, size_t size, bool *open)
{
    char line[512];
    if (!text || size == 0 || !find_line(text, "NVRM version:", line, sizeof line))
        return -EINVAL;
    if (open)
        *open = strstr(line, "Open Kernel Module") != NULL;
    /* the version is the first token after "Module" that looks like one ("for x86_64" may sit
     * between them in the open module's line) */
    char *m = strstr(line, "Module");
    char *save = NULL;
    for (char *tok = strtok_r(m ? m : line, " \t", &save); tok;
         tok = strtok_r(NULL, " \t", &save)) {
        if (!sc_nvidia_is_version(tok))
            continue;
        if (strlen(tok) >= size)
            return -EINVAL;
        memcpy(buf, tok, strlen(tok) + 1);
        return 0;
    }
    return -EINVAL;
}

/* Copies the value (trimmed, printable ASCII only) into dst; false when it does not fit or is
 * not printable. */
static bool copy_value(char *dst, size_t size, const char *v, size_t n)
{
    while (n && isspace((unsigned char)*v))
        v++, n--;
    while (n && isspace((unsigned char)v[n - 1]))
        n--;
    if (n >= size)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] >= 0x7f)
            return false;
    memcpy(dst, v, n);
    dst[n] = '\0';
    return true;
}

static int parse_minor(const char *v)
{
    char *end;
    long m = strtol(v, &end, 10);
    return end != v && *end == '\0' && m >= 0 && m < 256 ? (int)m : -1;
}

/* Stores one "Key: value" pair in out when the key is one we keep. */
static void store_info(sc_nvidia_gpu_info *out, const char *key, size_t klen, const char *v,
                       size_t vlen)
{
    static const struct {
        const char *key;
        size_t off, size;
    } keys[] = {
        {"Model", offsetof(sc_nvidia_gpu_info, model), sizeof out->model},
        {"IRQ", offsetof(sc_nvidia_gpu_info, irq), sizeof out->irq},
        {"GPU UUID", offsetof(sc_nvidia_gpu_info, uuid), sizeof out->uuid},
        {"Video BIOS", offsetof(sc_nvidia_gpu_info, vbios), sizeof out->vbios},
        {"Bus Type", offsetof(sc_nvidia_gpu_info, bus_type), sizeof out->bus_type},
        {"Bus Location", offsetof(sc_nvidia_gpu_info, bus_location), sizeof out->bus_location},
        {"GPU Excluded", offsetof(sc_nvidia_gpu_info, excluded), sizeof out->excluded},
    };
    char minor[16];
    if (klen == 12 && strncmp(key, "Device Minor", 12) == 0) {
        out->minor = copy_value(minor, sizeof minor, v, vlen) ? parse_minor(minor) : -1;
        return;
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strlen(keys[i].key) == klen && strncmp(key, keys[i].key, klen) == 0 &&
            !copy_value((char *)out + keys[i].off, keys[i].size, v, vlen))
            ((char *)out + keys[i].off)[0] = '\0';
}

int sc_nvidia_parse_gpu_info(const char *text, sc_nvidia_gpu_info *out)
{
    memset(out, 0, sizeof *out);
    out->minor = -1;
    for (const char *p = text; p && *p;) {
        size_t n = strcspn(p, "\n");
        const char *colon = memchr(p, ':', n);
        if (colon && colon > p) {
            size_t klen = (size_t)(colon - p);
            out->lines++;
            store_info(out, p, klen, colon + 1, n - klen - 1);
        }
        p += n + (p[n] == '\n');
    }
    return out->lines > 0 ? 0 : -EINVAL;
}

/* Case-insensitive search for needle in s[0..n), NUL bytes included. */
static const char *find_ci(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (strncasecmp(s + i, needle, m) == 0)
            return s + i;
    return NULL;
}

/* The number after the "): " that follows "Xid". */
int sc_nvidia_xid_of_line(const char *line, size_t n)
{
    const char *xid = find_ci(line, n, "Xid");
    if (!xid)
        return -1;
    const char *end = line + n, *p = xid + 3;
    const char *close = memchr(p, ')', (size_t)(end - p));
    p = close ? close + 1 : p;
    while (p < end && (*p == ':' || *p == ' '))
        p++;
    int v = 0, digits = 0;
    while (p < end && isdigit((unsigned char)*p) && digits < 6)
        v = v * 10 + (*p++ - '0'), digits++;
    return digits ? v : -1;
}

static void note_xid(sc_nvidia_kmsg_result *out, int xid)
{
    char num[16], padded[72];
    if (xid < 0)
        return;
    snprintf(num, sizeof num, "%d", xid);
    snprintf(padded, sizeof padded, ",%s,", out->xid_list);
    char want[20];
    snprintf(want, sizeof want, ",%s,", num);
    size_t len = strlen(out->xid_list);
    if (strstr(padded, want) || len + strlen(num) + 2 > sizeof out->xid_list)
        return;
    snprintf(out->xid_list + len, sizeof out->xid_list - len, "%s%s", len ? "," : "", num);
}

/* Counts the Xids and the lost GPUs of each match as the scan goes. */
static void count_match(void *arg, const sc_kmsg_match *m, const char *line, size_t n)
{
    sc_nvidia_kmsg_result *out = arg;
    bool is_xid = strcmp(m->kind, "xid") == 0;
    int xid = is_xid ? sc_nvidia_xid_of_line(line, n) : -1;
    out->xids += is_xid;
    out->off_bus += strcmp(m->kind, "fallen-off-bus") == 0 || xid == 79 ||
                    (is_xid && find_ci(line, n, "fallen off the bus"));
    note_xid(out, xid);
    if (out->scan.total <= SC_KMSG_KEEP) /* scan.first[total - 1] is this match */
        out->xid[out->scan.total - 1] = xid;
}

void sc_nvidia_kmsg_scan(const char *buf, size_t len, sc_nvidia_kmsg_result *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < SC_KMSG_KEEP; i++)
        out->xid[i] = -1;
    sc_kmsg_scan_table(buf, len, &sc_nvidia_kmsg_table, &out->scan, count_match, out);
}
