/* Reads a capture's archive from a byte source: gzip (told by its magic bytes) through zlib's
 * inflate, else plain tar. Every header is checked (checksum, magic, numeric fields, names) and
 * every quantity bounded before anything is read or written, so a hostile archive costs at most
 * the bounds: entries, bytes per entry, bytes in all, pax header size, name length and depth. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tar_internal.h"

struct sc_tar_reader {
    sc_tar_source src;
    void *arg;
    bool gzip, src_end, stream_end;
    z_stream z;
    unsigned char in[65536];
    size_t in_pos, in_len;
    uint64_t data_left, pad_left; /* of the current file */
    size_t entries;
    uint64_t total;
};

/* What the extended headers before an entry said. */
typedef struct {
    char path[PATH_MAX], link[PATH_MAX];
    bool has_path, has_link, has_size;
    uint64_t size;
} ext_names;

static int fill_input(sc_tar_reader *r)
{
    if (r->src_end)
        return 0;
    long n = r->src(r->arg, r->in, sizeof r->in);
    if (n < 0)
        return (int)n;
    r->src_end = n == 0;
    r->in_pos = 0;
    r->in_len = (size_t)n;
    return 0;
}

long sc_tar_mem_read(void *mem, void *buf, size_t n)
{
    sc_tar_mem *m = mem;
    size_t k = m->size - m->pos < n ? m->size - m->pos : n;
    memcpy(buf, (const char *)m->data + m->pos, k);
    m->pos += k;
    return (long)k;
}

sc_tar_reader *sc_tar_reader_new(sc_tar_source src, void *arg)
{
    sc_tar_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->src = src;
    r->arg = arg;
    if (fill_input(r) < 0)
        r->src_end = true;
    r->gzip = r->in_len >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b;
    if (r->gzip && inflateInit2(&r->z, 15 + 16) != Z_OK) { /* gzip wrapper only */
        free(r);
        return NULL;
    }
    return r;
}

void sc_tar_reader_free(sc_tar_reader *r)
{
    if (r && r->gzip)
        inflateEnd(&r->z);
    free(r);
}

/* Inflates up to n bytes into buf: how many (at least one), 0 at the stream's end, -EINVAL for
 * corrupt or truncated data. */
static long inflate_some(sc_tar_reader *r, unsigned char *buf, size_t n)
{
    for (;;) {
        if (r->stream_end)
            return 0;
        if (r->in_pos == r->in_len && !r->src_end) {
            int rc = fill_input(r);
            if (rc < 0)
                return rc;
            continue;
        }
        r->z.next_in = r->in + r->in_pos;
        r->z.avail_in = (unsigned)(r->in_len - r->in_pos);
        r->z.next_out = buf;
        r->z.avail_out = (unsigned)n;
        int zrc = inflate(&r->z, Z_NO_FLUSH);
        r->in_pos = r->in_len - r->z.avail_in;
        r->stream_end = zrc == Z_STREAM_END;
        if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
            return -EINVAL;
        if (r->z.avail_out < n)
            return (long)(n - r->z.avail_out);
        if (!r->stream_end && r->src_end && r->in_pos == r->in_len)
            return -EINVAL; /* the compressed stream stops short */
    }
}

/* Up to n uncompressed bytes into buf: how many, 0 at the end, or -errno. */
static long raw_read(sc_tar_reader *r, unsigned char *buf, size_t n)
{
    if (r->gzip)
        return inflate_some(r, buf, n > (1u << 30) ? 1u << 30 : n);
    while (r->in_pos == r->in_len && !r->src_end) {
        int rc = fill_input(r);
        if (rc < 0)
            return rc;
    }
    size_t k = r->in_len - r->in_pos < n ? r->in_len - r->in_pos : n;
    memcpy(buf, r->in + r->in_pos, k);
    r->in_pos += k;
    return (long)k;
}

/* Exactly n bytes into buf: 0, 1 when the stream ended before any, or -errno (-EINVAL when it
 * ended within them). */
static int read_exact(sc_tar_reader *r, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        long k = raw_read(r, (unsigned char *)buf + got, n - got);
        if (k < 0)
            return (int)k;
        if (k == 0)
            return got == 0 ? 1 : -EINVAL;
        got += (size_t)k;
    }
    return 0;
}

static int skip(sc_tar_reader *r, uint64_t n)
{
    unsigned char scratch[8192];
    while (n > 0) {
        size_t k = n < sizeof scratch ? (size_t)n : sizeof scratch;
        int rc = read_exact(r, scratch, k);
        if (rc != 0)
            return rc < 0 ? rc : -EINVAL;
        n -= k;
    }
    return 0;
}

long sc_tar_read(sc_tar_reader *r, void *buf, size_t n)
{
    if (r->data_left == 0)
        return 0;
    size_t k = n < r->data_left ? n : (size_t)r->data_left;
    int rc = read_exact(r, buf, k);
    if (rc != 0)
        return rc < 0 ? rc : -EINVAL;
    r->data_left -= k;
    return (long)k;
}

/* A numeric field: octal digits (leading spaces, ending at NUL or space), or GNU base-256 (first
 * byte 0x80) for large values. */
static bool parse_number(const char *field, size_t size, uint64_t *out)
{
    const unsigned char *f = (const unsigned char *)field;
    uint64_t v = 0;
    if (f[0] == 0x80) {
        for (size_t i = 1; i < size; i++) {
            if (v >> 56)
                return false;
            v = v << 8 | f[i];
        }
        *out = v;
        return true;
    }
    size_t i = 0;
    while (i < size && f[i] == ' ')
        i++;
    size_t digits = 0;
    for (; i < size && f[i] >= '0' && f[i] <= '7'; i++, digits++) {
        if (v >> 60)
            return false;
        v = v * 8 + (uint64_t)(f[i] - '0');
    }
    for (; i < size; i++)
        if (f[i] != '\0' && f[i] != ' ')
            return false;
    *out = v;
    return digits > 0;
}

static bool all_zero(const void *block)
{
    const unsigned char *b = block;
    for (size_t i = 0; i < SC_TAR_BLOCK; i++)
        if (b[i])
            return false;
    return true;
}

static int check_header(const sc_ustar_header *h, sc_error *err)
{
    uint64_t stored;
    if (!parse_number(h->chksum, sizeof h->chksum, &stored) ||
        (stored != sc_ustar_checksum(h, false) && stored != sc_ustar_checksum(h, true)))
        return sc_error_set(err, -EINVAL,
                            "a header's checksum is wrong (not a tar archive, or a "
                            "corrupt one)");
    bool posix = memcmp(h->magic, "ustar\0", 6) == 0 && memcmp(h->version, "00", 2) == 0;
    bool gnu = memcmp(h->magic, "ustar ", 6) == 0 && memcmp(h->version, " \0", 2) == 0;
    if (!posix && !gnu)
        return sc_error_set(err, -EINVAL, "a header without the ustar magic (an old tar format)");
    return 0;
}

/* The bytes of a field up to its first NUL, as a string. */
static void field_string(char *out, size_t size, const char *field, size_t len)
{
    size_t n = strnlen(field, len);
    n = n < size - 1 ? n : size - 1;
    memcpy(out, field, n);
    out[n] = '\0';
}

/* One pax record's value, when its key is one we take. */
static int take_pax(ext_names *x, const char *key, size_t klen, const char *value, size_t vlen)
{
    bool path = klen == 4 && memcmp(key, "path", 4) == 0;
    bool link = klen == 8 && memcmp(key, "linkpath", 8) == 0;
    if (path || link) {
        if (vlen >= PATH_MAX || memchr(value, '\0', vlen))
            return -ENAMETOOLONG;
        char *dst = path ? x->path : x->link;
        memcpy(dst, value, vlen);
        dst[vlen] = '\0';
        *(path ? &x->has_path : &x->has_link) = true;
    } else if (klen == 4 && memcmp(key, "size", 4) == 0) {
        char num[32];
        if (vlen == 0 || vlen >= sizeof num || memchr(value, '\0', vlen))
            return -EINVAL;
        memcpy(num, value, vlen);
        num[vlen] = '\0';
        if (strspn(num, "0123456789") != vlen || sc_parse_u64(num, &x->size) < 0)
            return -EINVAL;
        x->has_size = true;
    }
    return 0;
}

/* The records "LEN key=value\n" of a pax extended header. */
static int parse_pax(ext_names *x, const char *data, size_t n)
{
    size_t pos = 0;
    while (pos < n) {
        size_t len = 0, i = pos;
        while (i < n && data[i] >= '0' && data[i] <= '9' && len < n)
            len = len * 10 + (size_t)(data[i++] - '0');
        if (i == pos || i >= n || data[i] != ' ' || len > n - pos || len < i - pos + 4 ||
            data[pos + len - 1] != '\n')
            return -EINVAL;
        const char *key = data + i + 1, *end = data + pos + len - 1;
        const char *eq = memchr(key, '=', (size_t)(end - key));
        if (!eq || eq == key)
            return -EINVAL;
        int rc = take_pax(x, key, (size_t)(eq - key), eq + 1, (size_t)(end - eq - 1));
        if (rc < 0)
            return rc;
        pos += len;
    }
    return 0;
}

/* An extended header's data (pax 'x', global 'g', GNU long names 'L' and 'K'), read whole. */
static int read_extension(sc_tar_reader *r, char type, uint64_t size, ext_names *x, sc_error *err)
{
    if (size > SC_TAR_MAX_PAX)
        return sc_error_set(err, -EFBIG, "an extended header of %llu bytes (at most %u)",
                            (unsigned long long)size, SC_TAR_MAX_PAX);
    /* counted with the files' contents, so that many of them cannot inflate without bound */
    if (size > SC_TAR_MAX_TOTAL - r->total)
        return sc_error_set(err, -EFBIG, "more than %llu bytes in all",
                            (unsigned long long)SC_TAR_MAX_TOTAL);
    r->total += size;
    char *data = malloc((size_t)size + 1);
    if (!data)
        return sc_error_set(err, -ENOMEM, "out of memory");
    int rc = read_exact(r, data, (size_t)size);
    if (rc == 0)
        rc = skip(r, (SC_TAR_BLOCK - size % SC_TAR_BLOCK) % SC_TAR_BLOCK);
    if (rc == 0 && type == 'x')
        rc = parse_pax(x, data, (size_t)size);
    if (rc == 0 && (type == 'L' || type == 'K')) {
        data[size] = '\0';
        if (strlen(data) >= PATH_MAX)
            rc = -ENAMETOOLONG;
        else
            snprintf(type == 'L' ? x->path : x->link, PATH_MAX, "%s", data);
        *(type == 'L' ? &x->has_path : &x->has_link) = true;
    }
    free(data);
    return rc == 0 ? 0 : sc_error_set(err, rc < 0 ? rc : -EINVAL, "a malformed extended header");
}

static const char *type_word(char t)
{
    switch (t) {
    case '1': return "a hard link";
    case '3': return "a character device";
    case '4': return "a block device";
    case '6': return "a FIFO";
    case '7': return "a contiguous file";
    case 'S': return "a sparse file";
    default: return "an entry of an unknown type";
    }
}

/* The entry's type, size and mode from its header and extended names. */
static int entry_kind(const sc_ustar_header *h, const ext_names *x, sc_tar_entry *e, sc_error *err)
{
    char t = h->typeflag;
    if (t == '0' || t == '\0')
        e->type = SC_TAR_FILE;
    else if (t == '5')
        e->type = SC_TAR_DIR;
    else if (t == '2')
        e->type = SC_TAR_LINK;
    else
        return sc_error_set(err, -EINVAL,
                            "%s (type '%c'): a capture holds only files, directories and "
                            "symbolic links",
                            type_word(t), t >= 0x20 && t < 0x7f ? t : '?');
    uint64_t mode;
    if (!parse_number(h->mode, sizeof h->mode, &mode))
        return sc_error_set(err, -EINVAL, "a header with a malformed mode");
    e->mode = (unsigned)(mode & 07777);
    if (!x->has_size && !parse_number(h->size, sizeof h->size, &e->size))
        return sc_error_set(err, -EINVAL, "a header with a malformed size");
    if (x->has_size)
        e->size = x->size;
    return 0;
}

/* The entry's clean name and, for a link, its target. */
static int entry_names(const sc_ustar_header *h, const ext_names *x, sc_tar_entry *e, sc_error *err)
{
    char raw[PATH_MAX + 300], name[101], prefix[156];
    field_string(name, sizeof name, h->name, sizeof h->name);
    field_string(prefix, sizeof prefix, h->prefix, sizeof h->prefix);
    bool posix = h->magic[5] == '\0';
    if (x->has_path)
        snprintf(raw, sizeof raw, "%s", x->path);
    else
        snprintf(raw, sizeof raw, "%s%s%s", posix ? prefix : "", posix && prefix[0] ? "/" : "",
                 name);
    int rc = sc_tar_clean_path(raw, e->path);
    if (rc < 0)
        return sc_error_set(err, rc, "an unsafe or too long name in the archive: %.200s%s", raw,
                            rc == -EINVAL ? " (absolute, \"..\" or too deep)" : "");
    e->target[0] = '\0';
    if (e->type == SC_TAR_LINK) {
        if (x->has_link)
            snprintf(e->target, sizeof e->target, "%s", x->link);
        else
            field_string(e->target, sizeof e->target, h->linkname, sizeof h->linkname);
        if (!e->target[0])
            return sc_error_set(err, -EINVAL, "a symbolic link without a target: %s", e->path);
    }
    return 0;
}

/* Checks the entry against the bounds and sets up the reading of its data. */
static int admit(sc_tar_reader *r, sc_tar_entry *e, sc_error *err)
{
    if (e->type != SC_TAR_FILE && e->size != 0)
        return sc_error_set(err, -EINVAL, "a directory or link with data: %s", e->path);
    if (e->size > SC_TAR_MAX_ENTRY_SIZE)
        return sc_error_set(err, -EFBIG,
                            "%s declares %llu bytes (a capture's file has at most "
                            "%llu)",
                            e->path, (unsigned long long)e->size, SC_TAR_MAX_ENTRY_SIZE);
    if (e->size > SC_TAR_MAX_TOTAL - r->total)
        return sc_error_set(err, -EFBIG, "the archive holds over %llu bytes", SC_TAR_MAX_TOTAL);
    r->total += e->size;
    r->data_left = e->size;
    r->pad_left = (SC_TAR_BLOCK - e->size % SC_TAR_BLOCK) % SC_TAR_BLOCK;
    return 0;
}

/* Reads the next header block: 0, 1 at the end-of-archive block, or -errno. */
static int next_block(sc_tar_reader *r, sc_ustar_header *h, sc_error *err)
{
    int rc = read_exact(r, h, sizeof *h);
    if (rc != 0)
        return sc_error_set(err, rc < 0 ? rc : -EINVAL,
                            rc == -EINVAL ? "the archive's compressed data is corrupt"
                                          : "the archive is truncated (no end-of-archive blocks)");
    if (all_zero(h))
        return 1;
    if (++r->entries > SC_TAR_MAX_ENTRIES)
        return sc_error_set(err, -E2BIG, "the archive has over %d entries", SC_TAR_MAX_ENTRIES);
    return check_header(h, err);
}

int sc_tar_next(sc_tar_reader *r, sc_tar_entry *e, sc_error *err)
{
    int rc = skip(r, r->data_left + r->pad_left);
    r->data_left = r->pad_left = 0;
    if (rc < 0)
        return sc_error_set(err, rc, "the archive is truncated");
    ext_names *x = calloc(1, sizeof *x);
    if (!x)
        return sc_error_set(err, -ENOMEM, "out of memory");
    sc_ustar_header h;
    for (;;) {
        rc = next_block(r, &h, err);
        if (rc != 0)
            break;
        uint64_t size;
        char t = h.typeflag;
        if (t != 'x' && t != 'g' && t != 'L' && t != 'K')
            break;
        rc = parse_number(h.size, sizeof h.size, &size) ? read_extension(r, t, size, x, err)
                                                        : sc_error_set(err, -EINVAL, "bad size");
        if (rc < 0)
            break;
    }
    if (rc == 0)
        rc = entry_kind(&h, x, e, err);
    if (rc == 0)
        rc = entry_names(&h, x, e, err);
    if (rc == 0)
        rc = admit(r, e, err);
    free(x);
    return rc == 1 ? 0 : rc < 0 ? rc : 1;
}

int sc_tar_clean_path(const char *name, char *out)
{
    if (name[0] == '/')
        return -EINVAL;
    size_t len = 0, depth = 0;
    out[0] = '\0';
    for (const char *p = name; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return -EINVAL;
        if (n > NAME_MAX)
            return -ENAMETOOLONG;
        if (n > 0 && !(n == 1 && p[0] == '.')) {
            if (len + n + 2 > PATH_MAX)
                return -ENAMETOOLONG;
            if (++depth > SC_TAR_MAX_DEPTH)
                return -EINVAL;
            if (len)
                out[len++] = '/';
            memcpy(out + len, p, n);
            len += n;
            out[len] = '\0';
        }
        p += n + (p[n] == '/');
    }
    return 0;
}
