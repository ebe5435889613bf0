/* Parsers for the Ascend driver's, firmware's and CANN's own text: Key=value info files, dotted
 * versions with rc/alpha parts, the driver's compatible_version_fw ranges, and the driver's
 * kernel-log errors. Buffers in, bounded copies out; nothing here reads a file. */
#include "sc_ascend.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sc_backend.h"
#include "sc_kmsg.h"

/* Copies [p, end) trimmed and unquoted into buf; false when empty, too long or not printable. */
static bool copy_value(const char *p, const char *end, char *buf, size_t size)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    if (end - p >= 2 && (*p == '"' || *p == '\'') && end[-1] == *p)
        p++, end--;
    size_t n = (size_t)(end - p);
    if (n == 0 || n >= size)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 || (unsigned char)p[i] >= 0x7f)
            return false;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return true;
}

bool sc_ascend_info_get(const char *text, const char *key, char *buf, size_t size)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n'), *end = eol ? eol : line + strlen(line);
        const char *p = line;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        const char *q = p + klen;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if ((size_t)(end - p) > klen && strncasecmp(p, key, klen) == 0 && q < end && *q == '=')
            return copy_value(q + 1, end, buf, size);
        line = eol ? eol + 1 : NULL;
    }
    return false;
}

/* One component: a number (-1 when it starts with a letter) and its pre-release part. */
typedef struct {
    long long num;
    int pre_rank; /* 0: a release; alpha -3, beta -2, rc -1, other letters -4 */
    long long pre_num;
} version_part;

static int pre_rank(const char *s, size_t n)
{
    if (n >= 5 && strncasecmp(s, "alpha", 5) == 0)
        return -3;
    if (n >= 4 && strncasecmp(s, "beta", 4) == 0)
        return -2;
    if (n >= 2 && strncasecmp(s, "rc", 2) == 0)
        return -1;
    return -4;
}

/* Reads up to 18 digits at *p; false when there are more. */
static bool read_digits(const char **p, const char *end, long long *v)
{
    int digits = 0;
    *v = 0;
    while (*p < end && isdigit((unsigned char)**p)) {
        if (++digits > 18)
            return false;
        *v = *v * 10 + (**p - '0');
        (*p)++;
    }
    return true;
}

static bool parse_part(const char *s, size_t n, version_part *out)
{
    const char *p = s, *end = s + n;
    *out = (version_part){.num = -1};
    if (n == 0 || (isdigit((unsigned char)*p) && !read_digits(&p, end, &out->num)))
        return false;
    if (p == end)
        return true;
    const char *letters = p;
    while (p < end && isalpha((unsigned char)*p))
        p++;
    if (p == letters)
        return false;
    out->pre_rank = pre_rank(letters, (size_t)(p - letters));
    return read_digits(&p, end, &out->pre_num) && p == end;
}

/* Splits v into parts; returns how many, 0 when it is not a version. */
static size_t parse_version(const char *v, version_part *parts)
{
    size_t count = 0;
    if (!v || !isdigit((unsigned char)*v))
        return 0; /* a version starts with a number: "x" or "rc1" alone is not one */
    for (const char *p = v;;) {
        size_t n = strcspn(p, ".-_");
        if (count == SC_ASCEND_MAX_COMPONENTS || !parse_part(p, n, &parts[count]))
            return 0;
        count++;
        if (!p[n])
            return count;
        p += n + 1;
    }
}

size_t sc_ascend_version_parts(const char *v)
{
    version_part parts[SC_ASCEND_MAX_COMPONENTS];
    return parse_version(v, parts);
}

static int cmp_ll(long long a, long long b)
{
    return a < b ? -1 : a > b;
}

static int cmp_part(const version_part *a, const version_part *b)
{
    int c = cmp_ll(a->num, b->num);
    if (!c)
        c = cmp_ll(a->pre_rank, b->pre_rank);
    return c ? c : cmp_ll(a->pre_num, b->pre_num);
}

int sc_ascend_version_cmp(const char *a, const char *b, size_t ncomp, int *cmp)
{
    version_part pa[SC_ASCEND_MAX_COMPONENTS], pb[SC_ASCEND_MAX_COMPONENTS];
    static const version_part zero = {0, 0, 0};
    size_t na = parse_version(a, pa), nb = parse_version(b, pb);
    if (!na || !nb)
        return -EINVAL;
    size_t n = ncomp ? ncomp : (na > nb ? na : nb);
    *cmp = 0;
    for (size_t i = 0; i < n && !*cmp; i++)
        *cmp = cmp_part(i < na ? &pa[i] : &zero, i < nb ? &pb[i] : &zero);
    return 0;
}

/* Whether fw lies in the bounds "min,max" or "v" of one bracket group. */
static int in_group(const char *group, const char *fw, char *ranges, size_t size)
{
    char lo[64], hi[64];
    const char *comma = strchr(group, ',');
    if (!copy_value(group, comma ? comma : group + strlen(group), lo, sizeof lo) ||
        !copy_value(comma ? comma + 1 : group, group + strlen(group), hi, sizeof hi))
        return -EINVAL;
    int c_lo, c_hi;
    if (sc_ascend_version_cmp(fw, lo, sc_ascend_version_parts(lo), &c_lo) < 0 ||
        sc_ascend_version_cmp(fw, hi, sc_ascend_version_parts(hi), &c_hi) < 0)
        return -EINVAL;
    size_t len = strlen(ranges);
    if (len + 1 < size)
        snprintf(ranges + len, size - len, "%s[%s,%s]", len ? ", " : "", lo, hi);
    return c_lo >= 0 && c_hi <= 0;
}

/* Calls fn on the inside of each "[...]" group of text; 1 when some group said 1, else 0 when
 * some group parsed, else -EINVAL. fn appends the group as read to out. */
static int each_group(const char *text,
                      int (*fn)(const char *group, const void *arg, char *out, size_t size),
                      const void *arg, char *out, size_t size)
{
    int verdict = -EINVAL;
    for (const char *p = strchr(text, '['); p; p = strchr(p + 1, '[')) {
        const char *close = strchr(p, ']');
        char group[136];
        if (!close || (size_t)(close - p - 1) >= sizeof group)
            break;
        memcpy(group, p + 1, (size_t)(close - p - 1));
        group[close - p - 1] = '\0';
        int r = fn(group, arg, out, size);
        if (r >= 0 && verdict != 1)
            verdict = r;
    }
    return verdict;
}

static int fw_group(const char *group, const void *fw, char *ranges, size_t size)
{
    return in_group(group, fw, ranges, size);
}

int sc_ascend_fw_in_range(const char *range_text, const char *fw, char *ranges, size_t size)
{
    if (size)
        ranges[0] = '\0';
    if (!sc_ascend_version_parts(fw))
        return -EINVAL;
    return each_group(range_text, fw_group, fw, ranges, size);
}

/* Reads "<letter><digits>" at *p (letter in any case, up to 9 digits) into *v. */
static bool read_tagged(const char **p, const char *end, char letter, long long *v)
{
    if (*p >= end || toupper((unsigned char)**p) != letter || !isdigit((unsigned char)(*p)[1]))
        return false;
    (*p)++;
    const char *start = *p;
    return read_digits(p, end, v) && *p - start <= 9;
}

/* The release line at the start of [s, end): V, R and C numbers; false when it is not one. */
static bool parse_line(const char *s, const char *end, long long line[3])
{
    const char *p = s;
    return read_tagged(&p, end, 'V', &line[0]) && read_tagged(&p, end, 'R', &line[1]) &&
           read_tagged(&p, end, 'C', &line[2]);
}

bool sc_ascend_release_line(const char *innerversion, long long line[3])
{
    return parse_line(innerversion, innerversion + strlen(innerversion), line);
}

static int cmp_line(const long long a[3], const long long b[3])
{
    for (int i = 0; i < 3; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* Whether the line lies in one group "VxRyCz" or "lo,hi"; appends the group to groups. */
static int line_group(const char *group, const void *arg, char *groups, size_t size)
{
    const long long *line = arg;
    char lo_text[64], hi_text[64];
    const char *comma = strchr(group, ',');
    if (!copy_value(group, comma ? comma : group + strlen(group), lo_text, sizeof lo_text) ||
        !copy_value(comma ? comma + 1 : group, group + strlen(group), hi_text, sizeof hi_text))
        return -EINVAL;
    long long lo[3], hi[3];
    if (!sc_ascend_release_line(lo_text, lo) || !sc_ascend_release_line(hi_text, hi))
        return -EINVAL;
    size_t len = strlen(groups);
    if (len + 1 < size)
        snprintf(groups + len, size - len, "%s[%s%s%s]", len ? "," : "", lo_text, comma ? "," : "",
                 comma ? hi_text : "");
    return cmp_line(line, lo) >= 0 && cmp_line(line, hi) <= 0;
}

int sc_ascend_line_compatible(const char *list, const char *innerversion, char *groups, size_t size)
{
    long long line[3];
    if (size)
        groups[0] = '\0';
    if (!sc_ascend_release_line(innerversion, line))
        return -EINVAL;
    return each_group(list, line_group, line, groups, size);
}

/* Drops a "CANN-" prefix: HCCL's own comment shows "[1.83.T8.0.B128:CANN-1.83]". */
static const char *without_cann_prefix(const char *s)
{
    return strncasecmp(s, "CANN-", 5) == 0 ? s + 5 : s;
}

bool sc_ascend_cfg_running(const char *text, const char *key, char *component, size_t csize,
                           char *cann, size_t nsize)
{
    char value[256];
    if (!sc_ascend_info_get(text, key, value, sizeof value) || value[0] != '[')
        return false;
    const char *colon = strchr(value, ':'), *close = strchr(value, ']');
    if (!colon || !close || colon > close)
        return false;
    const char *name = without_cann_prefix(colon + 1);
    return copy_value(value + 1, colon, component, csize) && name < close &&
           copy_value(name, close, cann, nsize);
}

static bool contains_ci(const char *s, size_t n, const char *word)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w <= n; i++)
        if (strncasecmp(s + i, word, w) == 0)
            return true;
    return false;
}

static bool is_ascend_error(const char *line, size_t n)
{
    const char *const *drivers = sc_backend_get(SC_BACKEND_ASCEND)->kmsg_drivers;
    static const char *const words[] = {"error",    "fail",  "timeout",   "time out",
                                        "abnormal", "fault", "exception", "heartbeat lost",
                                        "panic",    NULL};
    bool ours = false, bad = false;
    for (size_t i = 0; drivers[i] && !ours; i++)
        ours = contains_ci(line, n, drivers[i]);
    for (size_t i = 0; words[i] && ours && !bad; i++)
        bad = contains_ci(line, n, words[i]);
    return ours && bad;
}

void sc_ascend_kmsg_scan(const char *buf, size_t len, sc_ascend_kmsg_result *out)
{
    memset(out, 0, sizeof *out);
    const char *line;
    size_t pos = 0, n;
    while (sc_kmsg_next_line(buf, len, &pos, &line, &n)) {
        out->lines++;
        if (!is_ascend_error(line, n))
            continue;
        if (out->total++ < SC_ASCEND_KMSG_KEEP)
            sc_kmsg_escape(line, n, out->first[out->kept++].line, SC_ASCEND_KMSG_LINE_MAX);
    }
}
