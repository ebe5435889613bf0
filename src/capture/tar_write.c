/* Writes a capture's archive: ustar headers (a pax extended header first when a name or a link's
 * target does not fit its field), data padded to 512-byte blocks, two zero blocks at the end,
 * all through zlib's deflate with a gzip wrapper into a growing buffer. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tar_internal.h"

#define NAME_FIELD 100

unsigned sc_ustar_checksum(const sc_ustar_header *h, bool as_signed)
{
    const unsigned char *b = (const unsigned char *)h;
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof *h; i++) {
        bool in_field = i >= offsetof(sc_ustar_header, chksum) &&
                        i < offsetof(sc_ustar_header, chksum) + sizeof h->chksum;
        int c = in_field ? ' ' : as_signed ? (int)(signed char)b[i] : b[i];
        sum += (unsigned)c;
    }
    return sum;
}

int sc_tar_writer_init(sc_tar_writer *w, int level, long long mtime)
{
    memset(w, 0, sizeof *w);
    sc_buf_init(&w->out);
    w->mtime = mtime;
    /* 15 + 16: the largest window, with a gzip header and trailer */
    if (deflateInit2(&w->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    return 0;
}

/* Compresses n bytes (flush: Z_NO_FLUSH or Z_FINISH) onto the output, as zlib's example does:
 * deflate again while it fills the whole output chunk. */
static int deflate_bytes(sc_tar_writer *w, const void *data, size_t n, int flush)
{
    unsigned char chunk[65536];
    const unsigned char *p = data;
    size_t left = n;
    do {
        unsigned take = left > (1u << 30) ? 1u << 30 : (unsigned)left;
        w->z.next_in = (unsigned char *)p;
        w->z.avail_in = take;
        do {
            w->z.next_out = chunk;
            w->z.avail_out = sizeof chunk;
            if (deflate(&w->z, take == left ? flush : Z_NO_FLUSH) == Z_STREAM_ERROR)
                return -EINVAL;
            sc_buf_append(&w->out, chunk, sizeof chunk - w->z.avail_out);
        } while (w->z.avail_out == 0);
        p += take;
        left -= take;
    } while (left > 0);
    return w->out.oom ? -ENOMEM : 0;
}

static int write_padded(sc_tar_writer *w, const void *data, size_t n)
{
    static const char zeros[SC_TAR_BLOCK];
    int rc = n ? deflate_bytes(w, data, n, Z_NO_FLUSH) : 0;
    size_t pad = (SC_TAR_BLOCK - n % SC_TAR_BLOCK) % SC_TAR_BLOCK;
    return rc == 0 && pad ? deflate_bytes(w, zeros, pad, Z_NO_FLUSH) : rc;
}

/* v in octal, zero-filled to the field's width less its NUL (callers keep v within it). */
static void octal(char *field, size_t size, unsigned long long v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%0*llo", (int)size - 1, v);
    size_t len = n > 0 && (size_t)n < size ? (size_t)n : size - 1;
    memcpy(field, digits + (n > 0 && (size_t)n > len ? (size_t)n - len : 0), len);
    field[len] = '\0';
}

static int write_header(sc_tar_writer *w, char type, const char *name, unsigned mode,
                        const char *link, unsigned long long size)
{
    sc_ustar_header h;
    memset(&h, 0, sizeof h);
    size_t nlen = strlen(name);
    /* a name that does not fit is in the pax header before; this one keeps its end */
    memcpy(h.name, nlen < NAME_FIELD ? name : name + nlen - (NAME_FIELD - 1),
           nlen < NAME_FIELD ? nlen : NAME_FIELD - 1);
    if (link)
        memcpy(h.linkname, link, strnlen(link, NAME_FIELD - 1));
    octal(h.mode, sizeof h.mode, mode & 07777);
    octal(h.uid, sizeof h.uid, 0);
    octal(h.gid, sizeof h.gid, 0);
    octal(h.size, sizeof h.size, size);
    octal(h.mtime, sizeof h.mtime, w->mtime > 0 ? (unsigned long long)w->mtime : 0);
    h.typeflag = type;
    memcpy(h.magic, "ustar", 6);
    memcpy(h.version, "00", 2);
    snprintf(h.chksum, sizeof h.chksum, "%06o", sc_ustar_checksum(&h, false));
    return deflate_bytes(w, &h, sizeof h, Z_NO_FLUSH);
}

/* Appends the pax record "LEN key=value\n" (LEN counts the whole record, itself included). */
static void pax_record(sc_buf *b, const char *key, const char *value)
{
    size_t body = strlen(key) + strlen(value) + 3; /* ' ', '=', '\n' */
    size_t len = body + 1;
    while (len != body + (size_t)snprintf(NULL, 0, "%zu", len))
        len = body + (size_t)snprintf(NULL, 0, "%zu", len);
    sc_buf_printf(b, "%zu %s=%s\n", len, key, value);
}

/* A pax extended header carrying the names that do not fit their ustar fields. */
static int write_pax(sc_tar_writer *w, const char *path, const char *target)
{
    sc_buf b;
    sc_buf_init(&b);
    if (strlen(path) >= NAME_FIELD)
        pax_record(&b, "path", path);
    if (target && strlen(target) >= NAME_FIELD)
        pax_record(&b, "linkpath", target);
    int rc = b.oom ? -ENOMEM : 0;
    if (rc == 0 && b.len)
        rc = write_header(w, 'x', "PaxHeader", 0644, NULL, b.len);
    if (rc == 0 && b.len)
        rc = write_padded(w, b.data, b.len);
    sc_buf_free(&b);
    return rc;
}

int sc_tar_add(sc_tar_writer *w, sc_tar_type type, const char *path, unsigned mode,
               const char *target, const void *data, size_t size)
{
    if (w->failed)
        return -ENOMEM;
    if (strlen(path) >= PATH_MAX || (target && strlen(target) >= PATH_MAX))
        return -ENAMETOOLONG;
    char name[PATH_MAX + 1];
    snprintf(name, sizeof name, "%s%s", path, type == SC_TAR_DIR ? "/" : "");
    static const char flags[] = {[SC_TAR_FILE] = '0', [SC_TAR_DIR] = '5', [SC_TAR_LINK] = '2'};
    size_t n = type == SC_TAR_FILE ? size : 0;
    int rc = write_pax(w, name, type == SC_TAR_LINK ? target : NULL);
    if (rc == 0)
        rc = write_header(w, flags[type], name, mode, type == SC_TAR_LINK ? target : NULL, n);
    if (rc == 0)
        rc = write_padded(w, data, n);
    w->failed = rc < 0;
    return rc;
}

int sc_tar_finish(sc_tar_writer *w, sc_buf *out)
{
    static const char end[2 * SC_TAR_BLOCK];
    int rc = w->failed ? -ENOMEM : deflate_bytes(w, end, sizeof end, Z_FINISH);
    if (rc == 0) {
        *out = w->out;
        sc_buf_init(&w->out);
    }
    return rc;
}

void sc_tar_writer_free(sc_tar_writer *w)
{
    deflateEnd(&w->z);
    sc_buf_free(&w->out);
}
