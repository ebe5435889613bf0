/* Kernel-log reading and scanning. /dev/kmsg hands out one record per read(2) and would block at
 * the end, so it is opened non-blocking; files are read from their tail, bounded, since kern.log
 * can be large. The scanner matches a vendor's table of message patterns, pins each line to the
 * device it names, and keeps only a few escaped lines as evidence. */
#include "sc_kmsg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define KMSG_MAX_RECORDS 200000

void sc_kmsg_escape(const char *s, size_t n, char *out, size_t size)
{
    size_t o = 0;
    if (size == 0)
        return;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        bool plain = c >= 0x20 && c < 0x7f && c != '\\';
        size_t need = plain ? 1 : (c == '\\' ? 2 : 4);
        if (o + need >= size)
            break;
        if (plain)
            out[o++] = (char)c;
        else if (c == '\\')
            o += (size_t)snprintf(out + o, size - o, "\\\\");
        else
            o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

/* Case-insensitive search for needle in s[0..n), NUL bytes included. */
static bool contains(const char *s, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    int first = tolower((unsigned char)needle[0]);
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (tolower((unsigned char)s[i]) == first && strncasecmp(s + i, needle, m) == 0)
            return true;
    return false;
}

/* The message of a kmsg record ("6,1234,5678,-;text"): skips the prefix when it is there. */
static void strip_record_prefix(const char **line, size_t *n)
{
    size_t i = 0, commas = 0;
    while (i < *n && (((*line)[i] >= '0' && (*line)[i] <= '9') || (*line)[i] == ','))
        commas += (*line)[i++] == ',';
    if (commas < 2 || i == 0)
        return;
    const char *semi = memchr(*line + i, ';', *n - i);
    if (semi) {
        *n -= (size_t)(semi + 1 - *line);
        *line = semi + 1;
    }
}

static bool has_driver_word(const char *line, size_t n, const sc_kmsg_table *t)
{
    for (size_t d = 0; t->drivers && t->drivers[d]; d++)
        if (contains(line, n, t->drivers[d]))
            return true;
    return false;
}

/* The first row of table whose words are on the line, when the line is one of its drivers' (ours:
 * has_driver_word, found once per line by the caller). */
static const sc_kmsg_pattern *match_row(const char *line, size_t n, const sc_kmsg_table *t,
                                        bool ours)
{
    if (!ours)
        return NULL;
    for (const sc_kmsg_pattern *p = t->patterns; p && p->needle; p++)
        if (contains(line, n, p->needle) && (!p->also || contains(line, n, p->also)))
            return p;
    return NULL;
}

static bool is_hex(char c)
{
    return isxdigit((unsigned char)c) != 0;
}

/* True when s[0..n) holds hex digits at the positions of "dddd:bb:dd" from s. */
static bool bus_triplet(const char *s, size_t n)
{
    static const char shape[] = "hhhh:hh:hh";
    if (n < sizeof shape - 1)
        return false;
    for (size_t i = 0; i < sizeof shape - 1; i++)
        if (shape[i] == 'h' ? !is_hex(s[i]) : s[i] != ':')
            return false;
    return true;
}

bool sc_kmsg_find_pci(const char *s, size_t n, char *out, size_t size)
{
    for (size_t i = 0; i + 10 <= n; i++) {
        if ((i > 0 && is_hex(s[i - 1])) || !bus_triplet(s + i, n - i))
            continue;
        bool fn = i + 12 <= n && s[i + 10] == '.' && s[i + 11] >= '0' && s[i + 11] <= '7';
        if (!fn && i + 10 < n && (is_hex(s[i + 10]) || s[i + 10] == ':'))
            continue; /* part of something longer (an IPv6 address, a hash) */
        if (size < 13)
            return false;
        for (size_t k = 0; k < 10; k++)
            out[k] = (char)tolower((unsigned char)s[i + k]);
        out[10] = '.';
        out[11] = fn ? s[i + 11] : '0';
        out[12] = '\0';
        return true;
    }
    return false;
}

const sc_kmsg_device *sc_kmsg_device_of(const sc_kmsg_result *r, const char *pci)
{
    for (size_t i = 0; pci && i < r->ndevices; i++)
        if (strcasecmp(r->devices[i].pci, pci) == 0)
            return &r->devices[i];
    return NULL;
}

/* Pins m to its device's entry (made when there is room). */
static void pin_to_device(sc_kmsg_result *out, const sc_kmsg_match *m)
{
    sc_kmsg_device *d = (sc_kmsg_device *)sc_kmsg_device_of(out, m->pci);
    if (!d && out->ndevices < SC_KMSG_MAX_DEVICES) {
        d = &out->devices[out->ndevices++];
        snprintf(d->pci, sizeof d->pci, "%s", m->pci);
    }
    if (!d)
        return;
    d->total++;
    if (d->kept < SC_KMSG_DEVICE_KEEP)
        d->lines[d->kept++] = *m;
    if (!d->has_cause && m->pattern->severity == SC_SEV_ERROR) {
        d->cause = *m;
        d->has_cause = true;
    }
}

cJSON *sc_kmsg_match_json(const sc_kmsg_match *m)
{
    cJSON *e = cJSON_CreateObject();
    if (!e)
        return NULL;
    cJSON_AddStringToObject(e, "kind", m->kind);
    cJSON_AddStringToObject(e, "severity", sc_severity_name(m->pattern->severity));
    cJSON_AddStringToObject(e, "line", m->line);
    return e;
}

bool sc_kmsg_next_line(const char *buf, size_t len, size_t *pos, const char **line, size_t *n)
{
    if (!buf || *pos >= len)
        return false;
    const char *nl = memchr(buf + *pos, '\n', len - *pos);
    *line = buf + *pos;
    *n = nl ? (size_t)(nl - *line) : len - *pos;
    *pos += *n + (nl ? 1 : 0);
    strip_record_prefix(line, n);
    return true;
}

/* Where the scan stands: the last device a line of the drivers named, and how long ago. */
typedef struct {
    char pci[16];
    size_t age;
} pci_context;

/* The device line[0..n) belongs to: the one it names, or the recent one; "" when none. */
static void line_device(const char *line, size_t n, bool ours, pci_context *c, sc_kmsg_match *m)
{
    c->age++;
    m->pci_in_line = sc_kmsg_find_pci(line, n, m->pci, sizeof m->pci);
    if (m->pci_in_line && ours) {
        snprintf(c->pci, sizeof c->pci, "%s", m->pci);
        c->age = 0;
    } else if (!m->pci_in_line) {
        snprintf(m->pci, sizeof m->pci, "%s", c->age <= SC_KMSG_CONTEXT_LINES ? c->pci : "");
    }
}

void sc_kmsg_scan_table(const char *buf, size_t len, const sc_kmsg_table *table,
                        sc_kmsg_result *out, sc_kmsg_hook hook, void *arg)
{
    memset(out, 0, sizeof *out);
    pci_context ctx = {"", SC_KMSG_CONTEXT_LINES + 1};
    const char *line;
    size_t pos = 0, n;
    while (sc_kmsg_next_line(buf, len, &pos, &line, &n)) {
        out->lines++;
        sc_kmsg_match m = {0};
        bool ours = has_driver_word(line, n, table);
        line_device(line, n, ours, &ctx, &m);
        m.pattern = match_row(line, n, table, ours);
        if (m.pattern && table->refine)
            m.pattern = table->refine(m.pattern, line, n);
        if (!m.pattern || !m.pattern->kind)
            continue;
        m.kind = m.pattern->kind;
        if (m.pattern->cls == SC_KMSG_MISMATCH && !m.pci_in_line)
            m.pci[0] = '\0'; /* about the driver, not the device named before it */
        sc_kmsg_escape(line, n, m.line, SC_KMSG_LINE_MAX);
        if (out->kept < SC_KMSG_KEEP)
            out->first[out->kept++] = m;
        out->total++;
        out->errors += m.pattern->severity == SC_SEV_ERROR;
        if (m.pci[0])
            pin_to_device(out, &m);
        if (hook)
            hook(arg, &m, line, n);
    }
}

/* Drains the live /dev/kmsg ring: one record per read, EPIPE when a record was overwritten. */
static int read_live(sc_buf *text, sc_error *err)
{
    int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return sc_error_set(err, -errno, "/dev/kmsg: %s", strerror(errno));
    char rec[8192];
    int rc = 0;
    for (int i = 0; i < KMSG_MAX_RECORDS && text->len < SC_KMSG_MAX_BYTES; i++) {
        ssize_t n = read(fd, rec, sizeof rec);
        if (n < 0 && (errno == EPIPE || errno == EINTR))
            continue;
        if (n < 0) {
            if (errno != EAGAIN)
                rc = sc_error_set(err, -errno, "/dev/kmsg: %s", strerror(errno));
            break;
        }
        if (n == 0)
            break;
        sc_buf_append(text, rec, (size_t)n);
    }
    close(fd);
    if (rc == 0 && text->oom)
        rc = sc_error_set(err, -ENOMEM, "out of memory reading /dev/kmsg");
    return rc;
}

/* Reads the last SC_KMSG_MAX_BYTES of a log file inside the root. */
static int read_tail(const sc_root *root, const char *path, sc_buf *text, sc_error *err)
{
    struct stat st;
    int fd = sc_root_open_file(root, path, &st);
    if (fd < 0)
        return sc_error_set(err, fd, "%s: %s", path, sc_root_strerror(fd));
    off_t start = 0;
    if (st.st_size > (off_t)SC_KMSG_MAX_BYTES)
        start = st.st_size - (off_t)SC_KMSG_MAX_BYTES;
    char chunk[65536];
    ssize_t n;
    int rc = 0;
    while (text->len < SC_KMSG_MAX_BYTES && (n = pread(fd, chunk, sizeof chunk, start)) != 0) {
        if (n < 0) {
            rc = sc_error_set(err, -errno, "%s: %s", path, strerror(errno));
            break;
        }
        sc_buf_append(text, chunk, (size_t)n);
        start += n;
    }
    close(fd);
    if (rc == 0 && text->oom)
        rc = sc_error_set(err, -ENOMEM, "out of memory reading %s", path);
    return rc;
}

int sc_kmsg_read(const sc_root *root, sc_buf *text, char *source, size_t size, sc_error *err)
{
    if (root->is_host) {
        snprintf(source, size, "/dev/kmsg");
        int rc = read_live(text, err);
        sc_root_note_live(root, "/dev/kmsg", text->data, text->len, rc); /* for a capture */
        return rc;
    }
    if (sc_root_live(root)) { /* a live capture's replay: what /dev/kmsg gave, kept as a file */
        snprintf(source, size, "/dev/kmsg");
        return read_tail(root, "/dev/kmsg", text, err);
    }
    static const char *const files[] = {"/var/log/kern.log", "/var/log/dmesg"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (!sc_root_exists(root, files[i]))
            continue;
        snprintf(source, size, "%s", files[i]);
        return read_tail(root, files[i], text, err);
    }
    snprintf(source, size, "%s", files[0]);
    return sc_error_set(err, -ENOENT, "neither /var/log/kern.log nor /var/log/dmesg in the root");
}
