/* Kernel-log reading and scanning. /dev/kmsg hands out one record per read(2) and would block at
 * the end, so it is opened non-blocking; files are read from their tail, bounded, since kern.log
 * can be large. The scanner keeps only a few escaped lines as evidence. */
#include "sc_kmsg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KMSG_MAX_RECORDS 200000

static const struct {
    const char *needle;
    const char *kind;
} patterns[] = {
    {"timeout", "ring-timeout"}, /* "ring gfx_0.0.0 timeout, signaled seq=..." */
    {"gpu reset", "gpu-reset"},  /* "GPU reset begin!", "GPU reset(2) succeeded!" */
    {"gpu recovery", "gpu-reset"},
    {"failed to load firmware", "firmware-load-failed"},
    {"firmware load", "firmware-load-failed"}, /* "Direct firmware load for ... failed" */
    {"not supported", "not-supported"},
    {"page fault", "page-fault"},         /* "[gfxhub] page fault (src_id:0 ring:24 ...)" */
    {"skipped device", "device-skipped"}, /* "kfd kfd: amdgpu: skipped device 1002:67df, PCI
                                             rejects atomics" */
};

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

static const char *match_kind(const char *line, size_t n, const char *const *drivers)
{
    bool ours = false;
    for (size_t d = 0; drivers && drivers[d] && !ours; d++)
        ours = contains(line, n, drivers[d]);
    if (!ours)
        return NULL;
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++) {
        if (!contains(line, n, patterns[p].needle))
            continue;
        if (strcmp(patterns[p].kind, "ring-timeout") == 0 && !contains(line, n, "ring "))
            continue; /* only ring timeouts, not every message that says timeout */
        if (strcmp(patterns[p].kind, "firmware-load-failed") == 0 && !contains(line, n, "fail"))
            continue;
        return patterns[p].kind;
    }
    return NULL;
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

void sc_kmsg_scan(const char *buf, size_t len, const char *const *drivers, sc_kmsg_result *out)
{
    memset(out, 0, sizeof *out);
    const char *line;
    size_t pos = 0, n;
    while (sc_kmsg_next_line(buf, len, &pos, &line, &n)) {
        out->lines++;
        const char *kind = match_kind(line, n, drivers);
        if (!kind)
            continue;
        if (out->kept < SC_KMSG_KEEP) {
            out->first[out->kept].kind = kind;
            sc_kmsg_escape(line, n, out->first[out->kept].line, SC_KMSG_LINE_MAX);
            out->kept++;
        }
        out->total++;
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
