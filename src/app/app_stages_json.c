/* The output side of the stage-marker parser: a parsed app run as JSON (stages, metrics, stream
 * tails as valid UTF-8 whatever bytes the app wrote, redacted before they are cut) and as
 * one-line evidence for findings. */
#include "sc_app.h"

#include <stdlib.h>
#include <string.h>

#include "sc_redact.h"
#include "sc_text.h"

cJSON *sc_app_text_json(const char *data, size_t n)
{
    char *text = sc_utf8_clean(data, n);
    cJSON *json = text ? cJSON_CreateString(text) : cJSON_CreateNull();
    free(text);
    return json;
}

/* The kept bytes of a tail through the door: redacted before the cut (see sc_redact_tail), at
 * most the ring's size. Malloc'd, NULL on failure. */
static char *tail_text(const sc_tail *t)
{
    char *copy = malloc(t->cap);
    if (!copy)
        return NULL;
    size_t n = sc_tail_copy(t, copy);
    char *text = sc_redact_tail(copy, n, t->total > t->cap, t->cap);
    free(copy);
    return text;
}

static cJSON *tail_json(const sc_tail *t)
{
    char *text = tail_text(t);
    cJSON *json = text ? cJSON_CreateString(text) : cJSON_CreateNull();
    free(text);
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
    char *text = sc_redact_tail(data, n, false, (size_t)-1); /* redacted before any cut */
    const char *p = text ? text : "";
    n = strlen(p);
    while (n > 0 && (p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == ' '))
        n--;
    size_t keep = (size - 1) / 3, o = 0; /* each byte may become " | " */
    size_t from = sc_utf8_suffix_start(p, n, keep);
    for (size_t i = from; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\n') {
            memcpy(out + o, " | ", 3);
            o += 3;
        } else {
            out[o++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    out[o] = '\0';
    free(text);
}

void sc_app_stage_tail_line(const sc_app_parse *p, int stage, char *out, size_t size)
{
    char *text = tail_text(&p->stages[stage].slice);
    sc_app_one_line(text ? text : "", text ? strlen(text) : 0, out, size);
    free(text);
}
