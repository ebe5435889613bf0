/* The stage-marker parser: splits an app's output into stages at `::stackcheck stage NAME` lines,
 * collects `::stackcheck metric NAME VALUE` lines, and keeps bounded tails of each stream and each
 * stage, whatever the app writes (megabytes, no newline, NUL bytes). Parses buffers; no I/O. */
#include "sc_app.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sc_text.h"

#define PREFIX "::stackcheck "
#define PREFIX_LEN (sizeof PREFIX - 1)
#define IMPLICIT_NAME "(start)"

enum { LS_START, LS_MAYBE, LS_PLAIN };

void sc_tail_init(sc_tail *t, char *storage, size_t cap)
{
    t->buf = storage;
    t->cap = cap;
    t->total = 0;
}

void sc_tail_append(sc_tail *t, const char *p, size_t n)
{
    if (n >= t->cap) {
        p += n - t->cap;
        t->total += n - t->cap;
        n = t->cap;
    }
    size_t pos = (size_t)(t->total % t->cap);
    size_t first = t->cap - pos < n ? t->cap - pos : n;
    memcpy(t->buf + pos, p, first);
    memcpy(t->buf, p + first, n - first);
    t->total += n;
}

size_t sc_tail_copy(const sc_tail *t, char *out)
{
    if (t->total <= t->cap) {
        memcpy(out, t->buf, (size_t)t->total);
        return (size_t)t->total;
    }
    size_t pos = (size_t)(t->total % t->cap);
    memcpy(out, t->buf + pos, t->cap - pos);
    memcpy(out + (t->cap - pos), t->buf, pos);
    return t->cap;
}

int sc_app_current_stage(const sc_app_parse *p)
{
    return p->stage_count - 1;
}

static void open_stage(sc_app_parse *p, const char *name, size_t len, double now_ms, bool implicit)
{
    if (p->stage_count > 0)
        p->stages[p->stage_count - 1].end_ms = now_ms;
    if (p->stage_count >= SC_APP_STAGE_MAX) {
        p->stages_dropped++; /* later output stays with the last recorded stage */
        return;
    }
    sc_app_stage *s = &p->stages[p->stage_count++];
    len = sc_utf8_prefix(name, len, sizeof s->name - 1);
    memcpy(s->name, name, len);
    s->name[len] = '\0';
    s->start_ms = s->end_ms = now_ms;
    s->implicit = implicit;
    sc_tail_init(&s->slice, s->slice_buf, sizeof s->slice_buf);
}

void sc_app_parse_init(sc_app_parse *p, double now_ms)
{
    p->stage_count = p->stages_dropped = 0;
    p->metric_count = p->metrics_dropped = p->malformed = 0;
    p->line_len = 0;
    p->line_state = LS_START;
    p->finish_ms = 0;
    sc_tail_init(&p->out, p->out_buf, sizeof p->out_buf);
    sc_tail_init(&p->err, p->err_buf, sizeof p->err_buf);
    open_stage(p, IMPLICIT_NAME, strlen(IMPLICIT_NAME), now_ms, true);
}

static void emit(sc_app_parse *p, const char *data, size_t n)
{
    sc_tail_append(&p->stages[p->stage_count - 1].slice, data, n);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Splits off the next space-separated token of s[0..n); returns its length, *next after it. */
static size_t token(const char *s, size_t n, size_t *start, size_t *next)
{
    size_t i = 0;
    while (i < n && is_space(s[i]))
        i++;
    size_t j = i;
    while (j < n && !is_space(s[j]))
        j++;
    *start = i;
    *next = j;
    return j - i;
}

static bool add_metric(sc_app_parse *p, const char *rest, size_t n)
{
    size_t s1, e1, s2, e2, s3, e3;
    size_t name_len = token(rest, n, &s1, &e1);
    size_t value_len = token(rest + e1, n - e1, &s2, &e2);
    if (name_len == 0 || value_len == 0 || value_len >= 64 ||
        token(rest + e1 + e2, n - e1 - e2, &s3, &e3) != 0)
        return false;
    char number[64], *end;
    memcpy(number, rest + e1 + s2, value_len);
    number[value_len] = '\0';
    double v = strtod(number, &end);
    if (*end || !isfinite(v))
        return false;
    if (p->metric_count >= SC_APP_METRIC_MAX) {
        p->metrics_dropped++;
        return true;
    }
    sc_app_metric *m = &p->metrics[p->metric_count++];
    name_len = sc_utf8_prefix(rest + s1, name_len, sizeof m->name - 1);
    memcpy(m->name, rest + s1, name_len);
    m->name[name_len] = '\0';
    m->value = v;
    m->stage = p->stage_count - 1;
    return true;
}

/* A marker line (without its newline) after the prefix; false when it is not a valid marker. */
static bool handle_marker(sc_app_parse *p, const char *rest, size_t n, double now_ms)
{
    size_t start, next;
    size_t len = token(rest, n, &start, &next);
    if (len == 5 && memcmp(rest + start, "stage", 5) == 0) {
        const char *name = rest + next;
        size_t name_len = n - next;
        while (name_len > 0 && is_space(name[0]))
            name++, name_len--;
        while (name_len > 0 && is_space(name[name_len - 1]))
            name_len--;
        if (name_len == 0)
            return false;
        open_stage(p, name, name_len, now_ms, false);
        return true;
    }
    if (len == 6 && memcmp(rest + start, "metric", 6) == 0)
        return add_metric(p, rest + next, n - next);
    return false;
}

static void end_buffered_line(sc_app_parse *p, double now_ms, bool newline)
{
    bool marker = p->line_len >= PREFIX_LEN &&
                  handle_marker(p, p->line + PREFIX_LEN, p->line_len - PREFIX_LEN, now_ms);
    if (!marker) {
        if (p->line_len >= PREFIX_LEN)
            p->malformed++;
        emit(p, p->line, p->line_len);
        if (newline)
            emit(p, "\n", 1);
    }
    p->line_len = 0;
}

/* Collects the start of a line while it may still be a marker; returns the bytes consumed. */
static size_t feed_maybe(sc_app_parse *p, const char *data, size_t n, double now_ms)
{
    for (size_t i = 0; i < n; i++) {
        char c = data[i];
        if (c == '\n') {
            end_buffered_line(p, now_ms, true);
            p->line_state = LS_START;
            return i + 1;
        }
        bool mismatch =
            p->line_len < PREFIX_LEN ? c != PREFIX[p->line_len] : p->line_len >= sizeof p->line;
        if (mismatch) {
            emit(p, p->line, p->line_len);
            p->line_len = 0;
            p->line_state = LS_PLAIN;
            return i;
        }
        p->line[p->line_len++] = c;
    }
    return n;
}

static void feed_stdout(sc_app_parse *p, const char *data, size_t n, double now_ms)
{
    size_t i = 0;
    while (i < n) {
        if (p->line_state == LS_START)
            p->line_state = data[i] == PREFIX[0] ? LS_MAYBE : LS_PLAIN;
        if (p->line_state == LS_MAYBE) {
            i += feed_maybe(p, data + i, n - i, now_ms);
            continue;
        }
        const char *nl = memchr(data + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - data) + 1 : n;
        emit(p, data + i, end - i);
        if (nl)
            p->line_state = LS_START;
        i = end;
    }
}

void sc_app_parse_feed(sc_app_parse *p, int stream, const char *data, size_t n, double now_ms)
{
    if (stream == SC_APP_STDOUT) {
        sc_tail_append(&p->out, data, n);
        feed_stdout(p, data, n, now_ms);
    } else {
        sc_tail_append(&p->err, data, n);
        emit(p, data, n);
    }
}

void sc_app_parse_finish(sc_app_parse *p, double now_ms)
{
    if (p->line_state == LS_MAYBE)
        end_buffered_line(p, now_ms, false);
    p->line_state = LS_START;
    p->stages[p->stage_count - 1].end_ms = now_ms;
    p->finish_ms = now_ms;
}

bool sc_app_stage_reported(const sc_app_parse *p, int i)
{
    const sc_app_stage *s = &p->stages[i];
    return !s->implicit || p->stage_count == 1 || s->slice.total > 0;
}

const char *sc_app_failed_stage(const sc_app_parse *p)
{
    int last = p->stage_count - 1;
    return sc_app_stage_reported(p, last) ? p->stages[last].name : NULL;
}
