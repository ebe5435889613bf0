/* A snapshot's stack as texts by role: the diff's platform (sc_diff_platform, one reading of every
 * backend's descriptor) written entry by entry (sc_diff_entry_text), and the install roots the
 * libraries layer resolved its files to. Texts are sorted, so the order devices or roots were
 * listed in does not make two equal stacks differ. */
#include "sc_stack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sc_diff.h"
#include "sc_text.h"
#include "sc_util.h"

const char *const sc_stack_roles[] = {"devices",    "driver", "firmware",  "runtime", "toolkit",
                                      "collective", "torch",  "libraries", NULL};

/* The paths of a libraries-layer probe's facts that name the roots its files come from. */
static const char *const library_roots[] = {"files[].root", "files[].libraries[].root", NULL};

typedef struct {
    char *texts[SC_STACK_ENTRIES_MAX];
    int count, more;
    bool oom;
} text_set;

static void set_add(text_set *s, const char *text)
{
    if (!text || !text[0])
        return;
    for (int i = 0; i < s->count; i++)
        if (strcmp(s->texts[i], text) == 0)
            return;
    if (s->count == SC_STACK_ENTRIES_MAX) {
        s->more++;
        return;
    }
    char cut[SC_STACK_TEXT_MAX + 1];
    sc_text_copy(cut, sizeof cut, text);
    if (!(s->texts[s->count] = strdup(cut)))
        s->oom = true;
    else
        s->count++;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The set as a sorted array (the texts freed); "+N more" last when some were left out. */
static cJSON *set_json(text_set *s)
{
    cJSON *arr = cJSON_CreateArray();
    qsort(s->texts, (size_t)s->count, sizeof s->texts[0], by_text);
    for (int i = 0; i < s->count; i++) {
        if (arr)
            cJSON_AddItemToArray(arr, cJSON_CreateString(s->texts[i]));
        free(s->texts[i]);
    }
    if (arr && s->more) {
        char more[32];
        snprintf(more, sizeof more, "+%d more", s->more);
        cJSON_AddItemToArray(arr, cJSON_CreateString(more));
    }
    if (s->oom) {
        cJSON_Delete(arr);
        return NULL;
    }
    return arr;
}

static void add_root(const cJSON *v, void *arg)
{
    set_add(arg, cJSON_GetStringValue(v));
}

static void library_probe(const cJSON *probe, void *arg)
{
    const char *id = cJSON_GetStringValue(sc_diff_get(probe, "id"));
    if (!id || strncmp(id, "libraries.", 10) != 0)
        return;
    for (const char *const *p = library_roots; *p; p++)
        sc_diff_path_each(sc_diff_get(probe, "facts"), *p, add_root, arg);
}

/* The texts of one role of platform (or of the snapshot, for the libraries' roots). */
static cJSON *role_texts(const cJSON *snapshot, const cJSON *platform, const char *role)
{
    text_set s = {0};
    char text[SC_STACK_TEXT_MAX + 1], key[64];
    const cJSON *e, *list = sc_diff_get(platform, role);
    if (strcmp(role, "libraries") == 0) {
        sc_diff_each_probe(snapshot, library_probe, &s);
    } else if (strcmp(role, "torch") == 0) {
        if (cJSON_GetStringValue(sc_diff_get(list, "version"))) {
            sc_diff_entry_text(role, list, text, sizeof text);
            set_add(&s, text);
        }
    } else {
        cJSON_ArrayForEach (e, (cJSON_IsArray(list) ? list : NULL)) {
            sc_diff_entry_text(role, e, text, sizeof text);
            set_add(&s, text);
        }
        snprintf(key, sizeof key, "%s_more", role);
        s.more += (int)cJSON_GetNumberValue(sc_diff_get(platform, key)) > 0
                      ? (int)cJSON_GetNumberValue(sc_diff_get(platform, key))
                      : 0;
    }
    return set_json(&s);
}

cJSON *sc_stack_of(const cJSON *snapshot, cJSON **platform_out)
{
    bool oom = false;
    sc_diff_side side;
    sc_diff_side_init(&side, snapshot, &oom);
    cJSON *platform = oom ? NULL : sc_diff_platform(&side, &oom);
    sc_diff_side_free(&side);
    cJSON *stack = platform && !oom ? cJSON_CreateObject() : NULL;
    for (const char *const *r = sc_stack_roles; stack && *r; r++) {
        cJSON *texts = role_texts(snapshot, platform, *r);
        if (!texts) {
            cJSON_Delete(stack);
            stack = NULL;
        } else {
            cJSON_AddItemToObject(stack, *r, texts);
        }
    }
    if (platform_out && stack)
        *platform_out = platform;
    else
        cJSON_Delete(platform);
    return stack;
}

char *sc_stack_key(const cJSON *stack)
{
    sc_buf b;
    sc_buf_init(&b);
    const cJSON *role, *t;
    cJSON_ArrayForEach (role, stack) {
        sc_buf_printf(&b, "%s\x1e", role->string ? role->string : "");
        cJSON_ArrayForEach (t, role)
            sc_buf_printf(&b, "%s\x1f", cJSON_GetStringValue(t) ? cJSON_GetStringValue(t) : "");
    }
    if (b.oom || !b.data) {
        sc_buf_free(&b);
        return b.oom ? NULL : strdup("");
    }
    return b.data;
}

/* The count of a devices text "8 x ...", and where its rest starts. */
static double device_count(const char *text, const char **rest)
{
    char *end;
    double n = strtod(text, &end);
    bool counted = end != text && strncmp(end, " x ", 3) == 0;
    *rest = counted ? end + 3 : text;
    return counted ? n : 0;
}

double sc_stack_device_count(const cJSON *stack)
{
    double n = 0;
    const char *rest;
    const cJSON *t;
    cJSON_ArrayForEach (t, sc_diff_get(stack, "devices"))
        n += device_count(cJSON_GetStringValue(t) ? cJSON_GetStringValue(t) : "", &rest);
    return n;
}

/* The devices texts of a and b name the same kinds of device (each list is sorted by text, and
 * the count leads the text, so kinds are compared as sets). */
static bool same_kinds(const cJSON *a, const cJSON *b)
{
    const cJSON *x, *y;
    const char *rx, *ry;
    if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
        return false;
    cJSON_ArrayForEach (x, a) {
        bool found = false;
        device_count(cJSON_GetStringValue(x) ? cJSON_GetStringValue(x) : "", &rx);
        cJSON_ArrayForEach (y, b) {
            device_count(cJSON_GetStringValue(y) ? cJSON_GetStringValue(y) : "", &ry);
            found |= strcmp(rx, ry) == 0;
        }
        if (!found)
            return false;
    }
    return true;
}

bool sc_stack_same_but_counts(const cJSON *a, const cJSON *b)
{
    for (const char *const *r = sc_stack_roles; *r; r++) {
        const cJSON *ra = sc_diff_get(a, *r), *rb = sc_diff_get(b, *r);
        if (strcmp(*r, "devices") == 0 ? !same_kinds(ra, rb) : !cJSON_Compare(ra, rb, true))
            return false;
    }
    return true;
}
