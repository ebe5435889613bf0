/* One compressed bundle's stream, inflated step by step: the reader asks for the bytes its entry
 * table needs (usually under a kilobyte), not for the megabyte the bundle declares, and the zlib
 * and zstd contexts and the output buffer serve every bundle of the file, so a file of 100,000
 * tiny bundles costs no allocation per bundle. Every byte out is charged to the file's budget. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "offload_internal.h"

#define FIRST_STEP 1024 /* the first step's size: a bundle's entry table fits, as a rule */
#define STEP 4096       /* the later steps' granularity */

struct sc_inflater {
    int method; /* 0 zlib, 1 zstd */
    ZSTD_DCtx *zstd;
    z_stream zlib;
    bool zlib_ready;
    const uint8_t *src;
    size_t len, in_pos; /* zstd's input position (zlib keeps its own) */
    uint8_t *buf;
    size_t buf_cap;  /* allocated */
    size_t cap, out; /* this stream's limit, and the bytes out so far */
    bool ended;      /* the stream ended or failed: nothing more comes out */
    bool failed;
};

static int contexts(struct sc_inflater *in, int method)
{
    if (method == 1 && !in->zstd && !(in->zstd = ZSTD_createDCtx()))
        return -ENOMEM;
    if (method == 1)
        return ZSTD_isError(ZSTD_DCtx_reset(in->zstd, ZSTD_reset_session_only)) ? -ENOMEM : 0;
    if (in->zlib_ready)
        return inflateReset(&in->zlib) == Z_OK ? 0 : -ENOMEM;
    memset(&in->zlib, 0, sizeof in->zlib);
    if (inflateInit(&in->zlib) != Z_OK)
        return -ENOMEM;
    in->zlib_ready = true;
    return 0;
}

int sc_inflate_begin(sc_offload_list *list, int method, const uint8_t *src, size_t len, size_t cap)
{
    struct sc_inflater *in = list->inflater;
    if (!in && !(in = list->inflater = calloc(1, sizeof *in)))
        return -ENOMEM;
    int rc = contexts(in, method);
    if (rc < 0)
        return rc;
    in->method = method;
    in->src = src;
    in->len = len;
    in->in_pos = in->out = 0;
    in->cap = cap;
    in->ended = in->failed = false;
    if (method == 0) {
        in->zlib.next_in = (Bytef *)src;
        in->zlib.avail_in = len > UINT32_MAX ? UINT32_MAX : (uInt)len;
    }
    return 0;
}

/* Makes room for `to` bytes of output. */
static bool room(struct sc_inflater *in, size_t to)
{
    if (to <= in->buf_cap)
        return true;
    uint8_t *b = realloc(in->buf, to);
    if (!b)
        return false;
    in->buf = b;
    in->buf_cap = to;
    return true;
}

/* One step: inflates into buf[out, to). */
static void step(struct sc_inflater *in, size_t to)
{
    if (in->method == 1) {
        ZSTD_inBuffer src = {in->src, in->len, in->in_pos};
        ZSTD_outBuffer dst = {in->buf, to, in->out};
        size_t rc;
        do { /* at least once: output left over from the last step may be waiting */
            size_t before = dst.pos + src.pos;
            rc = ZSTD_decompressStream(in->zstd, &dst, &src);
            if (ZSTD_isError(rc) || dst.pos + src.pos == before)
                break;
        } while (dst.pos < to && rc != 0);
        in->failed = ZSTD_isError(rc);
        in->ended = in->failed || rc == 0 || dst.pos < to;
        in->in_pos = src.pos;
        in->out = dst.pos;
        return;
    }
    in->zlib.next_out = in->buf + in->out;
    in->zlib.avail_out = (uInt)(to - in->out);
    int rc = inflate(&in->zlib, Z_SYNC_FLUSH);
    in->out = to - in->zlib.avail_out;
    in->failed = rc != Z_OK && rc != Z_STREAM_END;
    in->ended = in->failed || rc == Z_STREAM_END || in->out < to;
}

long sc_inflate_upto(sc_offload_list *list, size_t want)
{
    struct sc_inflater *in = list->inflater;
    if (want > in->cap)
        want = in->cap;
    while (in->out < want && !in->ended) {
        /* steps of a few kilobytes: the budget is charged for little more than the table */
        size_t to = in->out ? (want + STEP - 1) / STEP * STEP : FIRST_STEP;
        to = to < want ? want : to > in->cap ? in->cap : to;
        if (list->inflated + (to - in->out) > SC_OFFLOAD_MAX_INFLATED) {
            list->budget = list->budget ? list->budget : "decompressed bytes";
            return -EDQUOT;
        }
        if (!room(in, to))
            return -ENOMEM;
        size_t before = in->out;
        step(in, to);
        list->inflated += in->out - before;
    }
    return in->failed && in->out == 0 ? -EINVAL : (long)in->out;
}

const uint8_t *sc_inflate_data(const sc_offload_list *list)
{
    return list->inflater->buf;
}

void sc_inflate_free(sc_offload_list *list)
{
    struct sc_inflater *in = list->inflater;
    if (!in)
        return;
    ZSTD_freeDCtx(in->zstd);
    if (in->zlib_ready)
        inflateEnd(&in->zlib);
    free(in->buf);
    free(in);
    list->inflater = NULL;
}
