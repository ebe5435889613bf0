/* A role of one platform as one line of text, the cell of the platforms table:
 * "2 x NVIDIA H100 (sm_90, 80 GiB)", "amdgpu 6.3.6", "HIP 6.2.41133 (/opt/rocm-6.2.0)",
 * "2.3.0 hip 6.0.32830, 8 devices"; at most CELL_ITEMS entries written, the rest counted. */
#include <stdio.h>
#include <string.h>

#include "sc_diff_roles.h"
#include "sc_json.h"
#include "sc_text.h"

#define CELL_MAX 480
#define CELL_ITEMS 3 /* entries of a role written out; the rest as "+N more" */

typedef struct {
    char text[CELL_MAX];
    size_t len;
    int items, more;
} cell;

static void cell_put(cell *c, const char *s)
{
    size_t room = sizeof c->text - c->len, n = s ? strlen(s) : 0;
    if (room <= 1 || n == 0)
        return;
    n = sc_utf8_prefix(s, n, n < room - 1 ? n : room - 1);
    memcpy(c->text + c->len, s, n);
    c->len += n;
    c->text[c->len] = '\0';
}

/* Words joined by spaces, the last one in parentheses when it follows others: "HIP 6.2 (/opt)". */
static void cell_words(cell *c, const char *first, const char *second, const char *where)
{
    bool any = false;
    const char *const words[] = {first, second};
    for (size_t i = 0; i < 2; i++)
        if (words[i]) {
            cell_put(c, any ? " " : "");
            cell_put(c, words[i]);
            any = true;
        }
    if (where) {
        cell_put(c, any ? " (" : "");
        cell_put(c, where);
        cell_put(c, any ? ")" : "");
    }
}

/* Starts one more entry; false when CELL_ITEMS are written (it is then counted). */
static bool cell_next(cell *c)
{
    if (c->items == CELL_ITEMS) {
        c->more++;
        return false;
    }
    if (c->items++)
        cell_put(c, ", ");
    return true;
}

static cJSON *cell_json(cell *c, int more)
{
    char tail[32];
    if (c->items == 0)
        return cJSON_CreateNull();
    if (c->more + more > 0) {
        snprintf(tail, sizeof tail, " +%d more", c->more + more);
        cell_put(c, tail);
    }
    return cJSON_CreateString(c->text);
}

static int more_of(const cJSON *platform, const char *role)
{
    char key[64];
    snprintf(key, sizeof key, "%s_more", role);
    return (int)cJSON_GetNumberValue(sc_diff_get(platform, key)) > 0
               ? (int)cJSON_GetNumberValue(sc_diff_get(platform, key))
               : 0;
}

static cJSON *backend_cell(const cJSON *platform)
{
    cell c = {0};
    const cJSON *b;
    cJSON_ArrayForEach (b, sc_diff_get(platform, "backends")) {
        const char *ev = sc_json_str(b, "evidence");
        if (!cell_next(&c))
            continue;
        cell_put(&c, sc_json_str(b, "label"));
        if (ev && strcmp(ev, "devices") != 0) {
            cell_put(&c, " (");
            cell_put(&c, ev);
            cell_put(&c, ", no device)");
        }
    }
    return cell_json(&c, 0);
}

/* "64 GiB": memory in whole GiB (one decimal below 10). */
static void memory_text(double bytes, char *buf, size_t size)
{
    double gib = bytes / (double)(1ull << 30);
    snprintf(buf, size, gib < 10 ? "%.1f GiB" : "%.0f GiB", gib);
}

/* "8 x MI250X (gfx90a, 64 GiB)". */
static void device_text(cell *c, const cJSON *d)
{
    char count[32], mem[32];
    const char *arch = sc_json_str(d, "arch");
    const cJSON *bytes = sc_diff_get(d, "memory_bytes");
    snprintf(count, sizeof count, "%.0f x ", cJSON_GetNumberValue(sc_diff_get(d, "count")));
    cell_put(c, count);
    cell_put(c, sc_json_str(d, "name") ? sc_json_str(d, "name") : "device");
    mem[0] = '\0';
    if (cJSON_IsNumber(bytes))
        memory_text(bytes->valuedouble, mem, sizeof mem);
    if (arch || mem[0]) {
        cell_put(c, " (");
        cell_put(c, arch);
        cell_put(c, arch && mem[0] ? ", " : "");
        cell_put(c, mem);
        cell_put(c, ")");
    }
}

/* "2.3.0 hip 6.0.32830": version and build, without the devices torch sees. */
static void torch_text(cell *c, const cJSON *t)
{
    cell_words(c, sc_json_str(t, "version"), sc_json_str(t, "build"), NULL);
    cell_put(c, sc_json_str(t, "build_version") ? " " : "");
    cell_put(c, sc_json_str(t, "build_version"));
}

/* One entry of role written into c. */
static void entry_text(cell *c, const char *role, const cJSON *e)
{
    if (strcmp(role, "devices") == 0)
        device_text(c, e);
    else if (strcmp(role, "torch") == 0)
        torch_text(c, e);
    else
        cell_words(c, sc_json_str(e, "name"), sc_json_str(e, "version"), sc_json_str(e, "where"));
}

void sc_diff_entry_text(const char *role, const cJSON *entry, char *buf, size_t size)
{
    cell c = {0};
    entry_text(&c, role, entry);
    sc_text_copy(buf, size, c.text);
}

/* Every entry of a list role, "name version (where)" or a device each. */
static cJSON *entries_cell(const cJSON *platform, const char *role)
{
    cell c = {0};
    const cJSON *e;
    cJSON_ArrayForEach (e, sc_diff_get(platform, role)) {
        if (cell_next(&c))
            entry_text(&c, role, e);
    }
    return cell_json(&c, more_of(platform, role));
}

/* "2.3.0 hip 6.0.32830, 8 devices". */
static cJSON *torch_cell(const cJSON *platform)
{
    cell c = {0};
    const cJSON *t = sc_diff_get(platform, "torch"), *count = sc_diff_get(t, "device_count");
    if (!sc_json_str(t, "version"))
        return cJSON_CreateNull();
    cell_next(&c);
    torch_text(&c, t);
    if (cJSON_IsNumber(count)) {
        char n[48];
        snprintf(n, sizeof n, ", %.0f device%s", count->valuedouble,
                 count->valuedouble == 1 ? "" : "s");
        cell_put(&c, n);
    }
    return cell_json(&c, 0);
}

cJSON *sc_diff_cell(const cJSON *platform, const char *role)
{
    if (strcmp(role, "backend") == 0)
        return backend_cell(platform);
    if (strcmp(role, "torch") == 0)
        return torch_cell(platform);
    return entries_cell(platform, role);
}
