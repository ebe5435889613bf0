/* The output side of the stage-marker parser: a parsed app run as JSON (stages, metrics, stream
 * tails as valid UTF-8 whatever bytes the app wrote) and as one-line evidence for findings. */
#include "sc_app.h"

#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 when it is not one. */
static size_t utf8_valid(const unsigned char *s, size_t n)
{
    size_t len;
    unsigned min;
    if (s[0] > 0 && s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        len = 2, min = 0x80;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        len = 3, min = 0x800;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    unsigned cp = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

cJSON *sc_app_text_json(const char *data, size_t n)
{
    char *out = malloc(n * 3 + 1);
    if (!out)
        return cJSON_CreateNull();
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)data;
    for (size_t i = 0; i < n;) {
        size_t len = utf8_valid(s + i, n - i);
        if (len == 0) {
            memcpy(out + o, "\xef\xbf\xbd", 3); /* U+FFFD */
            o += 3;
            i++;
            continue;
        }
        memcpy(out + o, s + i, len);
        o += len;
        i += len;
    }
    out[o] = '\0';
    cJSON *json = cJSON_CreateString(out);
    free(out);
    return json;
}

static cJSON *tail_json(const sc_tail *t)
{
    char *copy = malloc(t->cap);
    if (!copy)
        return cJSON_CreateNull();
    cJSON *json = sc_app_text_json(copy, sc_tail_copy(t, copy));
    free(copy);
    return json;
}

static cJSON *stage_metrics_json(const sc_app_parse *p, int stage)
{
    cJSON *obj = cJSON_CreateObject();
    for (int i = 0; obj && i < p->metric_count; i++) {
        if (stage >= 0 && p->metrics[i].stage != stage)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(obj, p->metrics[i].name);
        cJSON_AddNumberToObject(obj, p->metrics[i].name, p->metrics[i].value);
    }
    return obj;
}

cJSON *sc_app_metrics_json(const sc_app_parse *p)
{
    return stage_metrics_json(p, -1);
}

cJSON *sc_app_stages_json(const sc_app_parse *p, bool run_ok)
{
    cJSON *arr = cJSON_CreateArray();
    int last = p->stage_count - 1;
    for (int i = 0; arr && i <= last; i++) {
        if (!sc_app_stage_reported(p, i))
            continue;
        const sc_app_stage *s = &p->stages[i];
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "name", s->name);
        cJSON_AddStringToObject(o, "status", i == last && !run_ok ? "fail" : "pass");
        cJSON_AddNumberToObject(o, "duration_ms",
                                (double)(long long)((s->end_ms - s->start_ms) * 1000) / 1000);
        cJSON_AddNumberToObject(o, "output_bytes", (double)s->slice.total);
        cJSON_AddItemToObject(o, "output_tail", tail_json(&s->slice));
        cJSON_AddItemToObject(o, "metrics", stage_metrics_json(p, i));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

cJSON *sc_app_stream_json(const sc_app_parse *p, int stream)
{
    const sc_tail *t = stream == SC_APP_STDOUT ? &p->out : &p->err;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddNumberToObject(o, "bytes", (double)t->total);
    cJSON_AddBoolToObject(o, "truncated", t->total > t->cap);
    cJSON_AddItemToObject(o, "tail", tail_json(t));
    return o;
}

void sc_app_one_line(const char *data, size_t n, char *out, size_t size)
{
    if (size == 0)
        return;
    while (n > 0 && (data[n - 1] == '\n' || data[n - 1] == '\r' || data[n - 1] == ' '))
        n--;
    size_t keep = (size - 1) / 3, o = 0; /* each byte may become " | " */
    if (n > keep)
        data += n - keep, n = keep;
    while (n > 0 && ((unsigned char)data[0] & 0xc0) == 0x80)
        data++, n--; /* the cut fell inside a character */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)data[i];
        if (c == '\n') {
            memcpy(out + o, " | ", 3);
            o += 3;
        } else {
            out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    out[o] = '\0';
    /* a cut may split a UTF-8 sequence: the message must stay valid text */
    for (size_t i = 0; i < o;) {
        size_t len = utf8_valid((const unsigned char *)out + i, o - i);
        if (len == 0)
            out[i++] = '?';
        else
            i += len;
    }
}

void sc_app_stage_tail_line(const sc_app_parse *p, int stage, char *out, size_t size)
{
    char buf[SC_APP_SLICE_MAX];
    const sc_tail *t = &p->stages[stage].slice;
    sc_app_one_line(buf, sc_tail_copy(t, buf), out, size);
}
