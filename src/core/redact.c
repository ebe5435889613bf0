/* The one door out: environment capture (an allowlist, secret names blanked, values scrubbed), the
 * scrubbing of whole JSON trees and of output windows. Every text is made valid UTF-8 and redacted
 * before it is cut, so a cut can never separate a secret from its name. */
#include "sc_redact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_text.h"

#define REDACTED "[redacted]"

char *sc_redact_value(const char *value)
{
    size_t n = strlen(value);
    if (sc_utf8_valid(value, n))
        return sc_redact_text(value, n);
    char *clean = sc_utf8_clean(value, n);
    char *out = clean ? sc_redact_text(clean, strlen(clean)) : NULL;
    free(clean);
    return out;
}

/* The whole text formatted, made valid UTF-8 and redacted; malloc'd, NULL on failure. */
__attribute__((format(printf, 1, 0))) static char *format_redacted(const char *fmt, va_list ap)
{
    char *raw = NULL;
    if (vasprintf(&raw, fmt, ap) < 0)
        return NULL;
    char *clean = sc_redact_value(raw);
    free(raw);
    return clean;
}

void sc_redact_vformat(char *dst, size_t size, const char *fmt, va_list ap)
{
    char *clean = format_redacted(fmt, ap);
    sc_text_copy(dst, size, clean ? clean : REDACTED);
    free(clean);
}

void sc_redact_format(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sc_redact_vformat(dst, size, fmt, ap);
    va_end(ap);
}

void sc_print_vline(FILE *out, const char *prefix, const char *fmt, va_list ap)
{
    char *clean = format_redacted(fmt, ap);
    fputs(prefix, out);
    sc_term_print(out, clean ? clean : "(out of memory)", (size_t)-1);
    fputc('\n', out);
    free(clean);
}

void sc_print_line(FILE *out, const char *prefix, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sc_print_vline(out, prefix, fmt, ap);
    va_end(ap);
}

/* Where the whole lines of a window that lost its beginning start. */
static size_t first_whole_line(const char *raw, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (raw[i] == '\n' || raw[i] == '\r')
            return i + 1;
    for (size_t i = 0; i < n; i++)
        if (raw[i] == ' ' || raw[i] == '\t')
            return i + 1;
    return n;
}

char *sc_redact_tail(const char *raw, size_t n, bool cut_front, size_t keep)
{
    size_t start = cut_front ? first_whole_line(raw, n) : 0;
    char *clean = sc_utf8_clean(raw + start, n - start);
    char *red = clean ? sc_redact_text(clean, strlen(clean)) : NULL;
    free(clean);
    if (!red)
        return NULL;
    size_t len = strlen(red), from = sc_utf8_suffix_start(red, len, keep);
    memmove(red, red + from, len - from + 1);
    return red;
}

/* The variables of envp that keep() accepts, values scrubbed, secret names blanked. */
static cJSON *env_capture_if(char *const *envp, bool (*keep)(const char *name))
{
    cJSON *env = cJSON_CreateObject();
    for (int i = 0; env && envp && envp[i]; i++) {
        const char *eq = strchr(envp[i], '=');
        char name[256];
        if (!eq || (size_t)(eq - envp[i]) >= sizeof name)
            continue;
        memcpy(name, envp[i], (size_t)(eq - envp[i]));
        name[eq - envp[i]] = '\0';
        if (!keep(name))
            continue;
        cJSON_DeleteItemFromObject(env, name);
        if (sc_env_name_secret(name)) {
            cJSON_AddStringToObject(env, name, REDACTED);
            continue;
        }
        char *clean = sc_redact_value(eq + 1);
        cJSON_AddStringToObject(env, name, clean ? clean : REDACTED);
        free(clean);
    }
    sc_redact_json(env); /* the names too: an allowed prefix may be followed by any bytes */
    return env;
}

cJSON *sc_env_capture(char *const *envp)
{
    return env_capture_if(envp, sc_env_allowed);
}

cJSON *sc_env_capture_replayed(char *const *envp)
{
    return env_capture_if(envp, sc_env_replayed);
}

/* The key of an object member made clean; the key is owned by cJSON unless marked constant. */
static void clean_key(cJSON *item)
{
    char *clean = sc_redact_value(item->string);
    if (!clean || strcmp(clean, item->string) == 0) {
        free(clean);
        return;
    }
    char *copy = cJSON_malloc(strlen(clean) + 1);
    if (copy) {
        strcpy(copy, clean);
        if (!(item->type & cJSON_StringIsConst))
            cJSON_free(item->string);
        item->string = copy;
        item->type &= ~cJSON_StringIsConst;
    }
    free(clean);
}

void sc_redact_json(cJSON *node)
{
    if (!node)
        return;
    if (node->string)
        clean_key(node);
    if (cJSON_IsString(node) && node->valuestring) {
        char *clean = sc_redact_value(node->valuestring);
        if (!clean)
            cJSON_SetValuestring(node, REDACTED); /* out of memory: hide rather than leak */
        else if (strcmp(clean, node->valuestring) != 0)
            cJSON_SetValuestring(node, clean);
        free(clean);
    }
    for (cJSON *c = node->child; c; c = c->next)
        sc_redact_json(c);
}
